"""The curators' admin: the proposal queue, researchers and their direct edits,
the curation history with undo, claims, and the stored matcher models. Every
change calls one service."""

from curation.admin import claims, events, matcher, proposals, researchers

__all__ = ["claims", "events", "matcher", "proposals", "researchers"]

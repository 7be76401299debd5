"""The curators' admin: the proposal queue, researchers and their direct edits,
the curation history with undo, and claims. Every change calls one service."""

from curation.admin import claims, events, proposals, researchers

__all__ = ["claims", "events", "proposals", "researchers"]

"""The scholarly core models, one module per domain."""

from .institution import Institution
from .paper import Authorship, Paper
from .researcher import Follow, Notification, Researcher

__all__ = ["Authorship", "Follow", "Institution", "Notification", "Paper", "Researcher"]

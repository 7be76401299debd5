"""The scholarly core models, one module per domain."""

from .institution import Institution
from .paper import Authorship, Paper
from .researcher import Follow, Researcher

__all__ = ["Authorship", "Follow", "Institution", "Paper", "Researcher"]

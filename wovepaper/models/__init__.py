"""The scholarly core models, one module per domain."""

from .account import EmailConfirmation
from .embedding import PaperEmbedding
from .institution import Institution
from .outbox import OutboxMessage
from .paper import Authorship, Paper
from .researcher import CategoryFollow, DigestDelivery, Follow, Notification, Researcher
from .stats import ResearcherStats

__all__ = [
    "Authorship",
    "CategoryFollow",
    "DigestDelivery",
    "EmailConfirmation",
    "Follow",
    "Institution",
    "Notification",
    "OutboxMessage",
    "Paper",
    "PaperEmbedding",
    "Researcher",
    "ResearcherStats",
]

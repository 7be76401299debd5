"""A reader's e-mail address and whether its owner confirmed it."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class EmailConfirmation(models.Model):
    """The address a reader signed up with, and when they confirmed it.

    Written at sign-up (:func:`wovepaper.accounts.email_confirmation_start`);
    until ``confirmed_at`` is set, and while ``email`` is the account's address,
    no digest or notification e-mail goes to it
    (:func:`wovepaper.accounts.emailable`). Accounts made by staff (the admin,
    ``createsuperuser``, ``manage.py demo``) have no row and are e-mailed as
    they are.

    Attributes:
        user: the account.
        email: the address the link was sent to.
        sent_at: when the last link went out (aware UTC).
        confirmed_at: when its link was followed, or None.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="email_confirmation",
    )
    email = models.EmailField()
    sent_at = models.DateTimeField()
    confirmed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        state = "confirmed" if self.confirmed_at else "waiting"
        return f"{self.email} ({state})"

"""Reader accounts: confirming the e-mail address a reader signed up with.

A sign-up sends a link; digests and notifications go to the address only once
it is followed (issue 48: an address typed at sign-up, anyone's, got mail).
The link carries a signed token (Django's ``signing``, salted, valid
:data:`CONFIRM_DAYS` days) naming the account and the address, so no token is
stored.
"""

from __future__ import annotations

import datetime as dt

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core import signing
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.urls import reverse
from django.utils import timezone

from wovepaper.models import EmailConfirmation

SALT = "wovepaper.email-confirmation"
# Days a confirmation link stays valid.
CONFIRM_DAYS = 3

BAD_LINK = "This confirmation link is broken or was not made by this site."
OLD_LINK = f"This confirmation link is older than {CONFIRM_DAYS} days."
OTHER_ADDRESS = "The address of this account changed since the link was sent."


class ConfirmationRefused(Exception):
    """A confirmation link that confirms nothing; the message says why."""


def email_confirmation_start(*, user, site: str = "") -> EmailConfirmation:
    """Send ``user`` a link that confirms their address, and hold their mail
    until they follow it.

    Args:
        user: an account with an e-mail address.
        site: the site's address the link starts with (``https://host:port``,
            the request's own); "" for ``settings.SITE_URL``.

    Returns:
        Its confirmation row (``confirmed_at`` None), written even when the
        e-mail could not be sent.

    Raises:
        ValueError: the account has no address.
        OSError, smtplib.SMTPException: the mail server refused the e-mail
            (the reader may ask for the link again).
    """
    if not user.email:
        raise ValueError(f"user {user.pk} has no e-mail address to confirm")
    with transaction.atomic():
        confirmation, _ = EmailConfirmation.objects.update_or_create(
            user=user,
            defaults={
                "email": user.email,
                "sent_at": timezone.now(),
                "confirmed_at": None,
            },
        )
    token = signing.dumps({"user": user.pk, "email": user.email}, salt=SALT)
    link = (site or settings.SITE_URL).rstrip("/") + reverse(
        "email-confirm", args=[token]
    )
    send_mail(
        "Confirm your e-mail address for wovepaper",
        f"Hello {user.get_username()},\n\n"
        "follow this link to confirm that this address is yours; your daily "
        "digest and alerts start then:\n\n"
        f"{link}\n\n"
        f"It works for {CONFIRM_DAYS} days. If you did not sign up, ignore this "
        "message: nothing will be sent to you.\n",
        settings.DEFAULT_FROM_EMAIL,
        [user.email],
        fail_silently=False,
    )
    return confirmation


def email_confirm(*, token: str):
    """Confirm the address a link was sent to.

    Args:
        token: the link's signed token.

    Returns:
        The account, its address confirmed (again, harmlessly, when it was).

    Raises:
        ConfirmationRefused: the token is not this site's (:data:`BAD_LINK`),
            is too old (:data:`OLD_LINK`), or names an address the account no
            longer has (:data:`OTHER_ADDRESS`).
    """
    try:
        claim = signing.loads(token, salt=SALT, max_age=dt.timedelta(days=CONFIRM_DAYS))
    except signing.SignatureExpired:
        raise ConfirmationRefused(OLD_LINK) from None
    except signing.BadSignature:
        raise ConfirmationRefused(BAD_LINK) from None
    if not (
        isinstance(claim, dict)
        and type(claim.get("user")) is int
        and isinstance(claim.get("email"), str)
    ):
        raise ConfirmationRefused(BAD_LINK)
    user = get_user_model().objects.filter(pk=claim["user"]).first()
    if user is None or user.email.lower() != str(claim.get("email", "")).lower():
        raise ConfirmationRefused(OTHER_ADDRESS)
    EmailConfirmation.objects.update_or_create(
        user=user,
        defaults={"email": user.email, "confirmed_at": timezone.now()},
        create_defaults={
            "email": user.email,
            "sent_at": timezone.now(),
            "confirmed_at": timezone.now(),
        },
    )
    return user


def emailable(users: QuerySet) -> QuerySet:
    """The accounts of ``users`` whose address may be e-mailed: confirmed by
    its owner, or made by staff (no confirmation row)."""
    return users.filter(
        Q(email_confirmation__isnull=True)
        | Q(
            email_confirmation__confirmed_at__isnull=False,
            email_confirmation__email__iexact=F("email"),
        )
    )


def may_email(user) -> bool:
    """Whether ``user``'s address may be e-mailed (:func:`emailable`)."""
    if not user.email:
        return False
    return emailable(get_user_model().objects.filter(pk=user.pk)).exists()

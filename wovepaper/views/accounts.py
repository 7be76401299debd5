"""Reader accounts: sign up, confirm the address, reset a password (within
limits); sign in and out are django.contrib.auth's views."""

from __future__ import annotations

import logging
import smtplib

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model, login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.debug import sensitive_post_parameters
from django.views.decorators.http import require_POST

from wovepaper.accounts import (
    ConfirmationRefused,
    email_confirm,
    email_confirmation_start,
    may_email,
)
from wovepaper.throttle import Rate, client_of, window_hit

logger = logging.getLogger(__name__)

CONFIRM_SENT = (
    "We sent a link to {email}: follow it to confirm the address, and your "
    "daily digest and alerts start."
)
CONFIRM_NOT_SENT = (
    "Your account is made, but the confirmation e-mail could not be sent just "
    "now; ask for it again from your Following page."
)
CONFIRM_DONE = "Your address {email} is confirmed: digests and alerts go to it."
CONFIRM_ALREADY = "Your address is confirmed already."
CONFIRM_NO_ADDRESS = "Your account has no e-mail address to confirm."
CONFIRM_WAIT = "A link went out a moment ago; please try again in {minutes} minutes."


class SignupForm(UserCreationForm):
    """Username, e-mail (for the daily digest) and a password typed twice.

    Passwords go through AUTH_PASSWORD_VALIDATORS (UserCreationForm's checks).
    """

    email = forms.EmailField(
        required=True, help_text="Where your daily digest of new papers goes."
    )

    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "email")

    def clean_email(self) -> str:
        """The address, lower-cased; one account per address.

        Raises:
            ValidationError: another account uses it.
        """
        email = self.cleaned_data["email"].strip().lower()
        if get_user_model().objects.filter(email__iexact=email).exists():
            raise forms.ValidationError("An account with this e-mail already exists.")
        return email


@sensitive_post_parameters("password1", "password2")
def signup(request: HttpRequest) -> HttpResponse:
    """GET the sign-up form; POST creates the account, signs in, goes to ``next``.

    ``next`` is followed only when it is on this site; otherwise the home page.
    A signed-in user is sent on at once.
    """
    target = request.POST.get("next") or request.GET.get("next") or "/"
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        target = "/"
    if request.user.is_authenticated:
        return redirect(target)
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user, backend="django.contrib.auth.backends.ModelBackend")
        _send_link(request, user)
        return redirect(target)
    status = 400 if request.method == "POST" else 200
    return render(
        request,
        "registration/signup.html",
        {"form": form, "next": target},
        status=status,
    )


def locked_out(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict | None = None,
) -> HttpResponse:
    """The answer to a sign-in refused by django-axes (``AXES_LOCKOUT_CALLABLE``).

    Args:
        request: the refused sign-in (site or admin login form).
        original_response: the view's own answer, unused.
        credentials: what was typed, unused (never echoed).

    Returns:
        HTTP 429 with ``Retry-After`` (seconds, RFC 9110 10.2.3) and a page that
        says how long to wait.
    """
    seconds = int(settings.AXES_COOLOFF_TIME.total_seconds())
    response = render(
        request,
        "registration/locked_out.html",
        {"minutes": max(1, seconds // 60)},
        status=429,
    )
    response["Retry-After"] = str(seconds)
    return response


def _send_link(request: HttpRequest, user) -> None:
    """E-mail ``user`` a confirmation link on this request's own site address
    and say so; a mail server that refuses it is said too, and the account
    stands (the reader asks again from the Following page)."""
    try:
        email_confirmation_start(user=user, site=request.build_absolute_uri("/"))
    except (OSError, smtplib.SMTPException):
        logger.exception("confirmation e-mail to user %s not sent", user.pk)
        messages.warning(request, CONFIRM_NOT_SENT)
        return
    messages.info(request, CONFIRM_SENT.format(email=user.email))


def email_confirm_view(request: HttpRequest, token: str) -> HttpResponse:
    """``GET /accounts/confirm/<token>/``: the link in the confirmation e-mail.

    Answers 200 with the address confirmed, or 400 saying why the link
    confirms nothing (:class:`wovepaper.accounts.ConfirmationRefused`).
    """
    try:
        user = email_confirm(token=token)
    except ConfirmationRefused as exc:
        return render(
            request,
            "registration/email_confirmed.html",
            {"problem": str(exc)},
            status=400,
        )
    return render(
        request,
        "registration/email_confirmed.html",
        {"done": CONFIRM_DONE.format(email=user.email)},
    )


@login_required
@require_POST
def email_confirm_resend(request: HttpRequest) -> HttpResponse:
    """``POST /accounts/confirm/``: send the signed-in reader a new link, at
    most ``EMAIL_CONFIRM_RATE`` times (a form that mails on demand must not
    mail without end), then back to their Following page."""
    user = request.user
    if not user.email:
        messages.warning(request, CONFIRM_NO_ADDRESS)
        return redirect("following")
    if may_email(user):
        messages.info(request, CONFIRM_ALREADY)
        return redirect("following")
    allowed, wait = window_hit(
        key=f"confirm:{user.pk}", rate=Rate.parse(settings.EMAIL_CONFIRM_RATE)
    )
    if allowed:
        _send_link(request, user)
    else:
        messages.warning(request, CONFIRM_WAIT.format(minutes=max(1, round(wait / 60))))
    return redirect("following")


RESET_TOO_MANY = (
    "Your network address has asked for more password resets than we send an hour."
)


class PasswordResetView(auth_views.PasswordResetView):
    """django.contrib.auth's password reset, sending at most
    ``PASSWORD_RESET_ADDRESS_RATE`` e-mails to one address and taking at most
    ``PASSWORD_RESET_CLIENT_RATE`` requests from one client (a hostile trial
    had 22 requests send 22 e-mails; issue 48).

    Past the address's limit nothing is sent and the usual "check your inbox"
    page is shown, as for an unknown address, so the form tells no one which
    addresses have accounts; past the client's, 429 with ``Retry-After``.
    """

    def form_valid(self, form):
        """Send the e-mail within the limits (Django's contract)."""
        allowed, wait = window_hit(
            key=f"reset-client:{client_of(self.request)}",
            rate=Rate.parse(settings.PASSWORD_RESET_CLIENT_RATE),
        )
        if not allowed:
            seconds = max(1, int(wait) + 1)
            response = render(
                self.request,
                "pages/too_many_requests.html",
                {"seconds": seconds, "what": RESET_TOO_MANY},
                status=429,
            )
            response["Retry-After"] = str(seconds)
            return response
        # Counted by the account the address reaches, as Django's form finds
        # it (case-insensitively, so "kiſs@" reaches "kiss@"): counted by the
        # address typed, each spelling had a limit of its own.
        accounts = sorted(u.pk for u in form.get_users(form.cleaned_data["email"]))
        for pk in accounts:
            allowed, _ = window_hit(
                key=f"reset-account:{pk}",
                rate=Rate.parse(settings.PASSWORD_RESET_ADDRESS_RATE),
            )
            if not allowed:
                return redirect(self.get_success_url())
        return super().form_valid(form)

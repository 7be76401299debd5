"""Reader accounts: sign up (sign in and out are django.contrib.auth's views)."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model, login
from django.contrib.auth.forms import UserCreationForm
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.debug import sensitive_post_parameters


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

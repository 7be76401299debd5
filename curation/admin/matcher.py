"""The stored matcher models in the admin: which one matching uses, what each
learned, and a switch to another (a rollback) or to the shipped model.

Curators see them (``view_matchermodel``: the version every proposal records
is one of these); switching needs ``change_matchermodel``, an operator's
permission (``manage.py matcher_models --activate`` does the same).
"""

from __future__ import annotations

from django.contrib import admin, messages
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join

from curation.admin.common import SafeActionsMixin
from curation.models import MatcherModel
from curation.selectors import fallback_description
from curation.services import matcher_activate
from wovepaper.admin import ReadOnlyAdmin
from wovepaper.text import count_shown


@admin.register(MatcherModel)
class MatcherModelAdmin(SafeActionsMixin, ReadOnlyAdmin):
    """Read-only rows; two actions switch the model matching uses."""

    list_display = (
        "version",
        "active",
        "trained_at",
        "threshold",
        "pairs",
        "sets",
        "unusable",
    )
    list_filter = ("active",)
    search_fields = ("version",)
    fields = (
        "version",
        "active",
        "unusable",
        "trained_at",
        "threshold",
        "bias",
        "weighed",
        "training_read",
    )
    readonly_fields = fields
    actions = ("activate_selected", "use_default_weights")

    @admin.display(description="pairs")
    def pairs(self, obj: MatcherModel) -> str:
        return count_shown(obj.learned_from["pairs"])

    @admin.display(description="labelled sets")
    def sets(self, obj: MatcherModel) -> str:
        return ", ".join(obj.learned_from["datasets"]) or "-"

    @admin.display(description="cannot be scored with")
    def unusable(self, obj: MatcherModel) -> str:
        # A row edited by hand: matching uses the shipped model instead.
        problem = obj.problem
        if not problem:
            return "-"
        if obj.active:
            return f"{problem} (active: matching uses {fallback_description()})"
        return problem

    @admin.display(description="weights")
    def weighed(self, obj: MatcherModel) -> str:
        if obj.problem:
            return repr(obj.weights)[:2000]
        rows = sorted(obj.weights.items(), key=lambda kv: -abs(kv[1]))
        return format_html(
            "<table>{}</table>",
            format_html_join(
                "",
                "<tr><td>{}</td><td>{}</td></tr>",
                ((k, f"{v:+.3f}") for k, v in rows),
            ),
        )

    @admin.display(description="learned from")
    def training_read(self, obj: MatcherModel) -> str:
        learned = obj.learned_from
        lines = [
            (
                name,
                f"{count_shown(d['pairs'])} pairs, "
                f"{count_shown(d['positives'])} one person",
            )
            for name, d in learned["datasets"].items()
        ]
        lines.append(
            ("curator decisions", f"{count_shown(learned['curator_decisions'])} pairs")
        )
        return format_html_join("", "<div>{}: {}</div>", lines)

    def get_actions(self, request: HttpRequest):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def has_activate_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("curation.change_matchermodel")

    @admin.action(
        description="Make the selected model the one matching uses",
        permissions=["activate"],
    )
    def activate_selected(self, request: HttpRequest, queryset) -> None:
        chosen = list(queryset[:2])
        if len(chosen) != 1:
            self.message_user(
                request, "select exactly one model to activate", messages.ERROR
            )
            return
        try:
            model = matcher_activate(version=chosen[0].version)
        except ValueError as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return
        self.message_user(
            request,
            f"matching now uses {model.version}: proposals already made keep the "
            "version they were scored with",
            messages.SUCCESS,
        )

    @admin.action(
        description="Use the shipped model (deactivate every trained model)",
        permissions=["activate"],
    )
    def use_default_weights(self, request: HttpRequest, queryset) -> None:
        matcher_activate(version=None)
        self.message_user(
            request, f"matching now uses {fallback_description()}", messages.SUCCESS
        )

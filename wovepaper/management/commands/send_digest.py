"""``manage.py send_digest [--day YYYY-MM-DD]``: send a day's digest now."""

from __future__ import annotations

import datetime as dt

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from wovepaper.digest import digest_send


class Command(BaseCommand):
    """Send the daily digest of one UTC day, as beat does at 06:00 UTC for
    the day before (``wovepaper.digest_send``): for an operator catching up
    a day, and for the embedded demo, which runs no beat. Idempotent: a
    user's digest for a day goes out at most once
    (:func:`wovepaper.digest.digest_send`), so a day not over yet is refused
    unless ``--unfinished`` says to send it anyway: papers harvested later
    that day would never be sent (hostile trial).
    """

    help = "Send the daily digest e-mails of one UTC day (default: yesterday)"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--day",
            help="the UTC day whose new papers are sent, YYYY-MM-DD (default: "
            "yesterday, as beat sends it)",
        )
        parser.add_argument(
            "--unfinished",
            action="store_true",
            help="send a day that is not over yet (today): its papers so far "
            "go out, and those harvested later that day never do",
        )

    def handle(self, *args, **options) -> None:
        today = timezone.now().astimezone(dt.UTC).date()
        try:
            day = (
                dt.date.fromisoformat(options["day"])
                if options["day"]
                else today - dt.timedelta(days=1)
            )
        except ValueError:
            raise CommandError(
                f"--day {options['day']!r} is not a date (YYYY-MM-DD)"
            ) from None
        if day >= today and not options["unfinished"]:
            raise CommandError(
                f"{day.isoformat()} is not over yet (UTC): a user's digest of a "
                "day goes out once, so papers harvested later that day would "
                "never be sent; beat sends each day the morning after it. "
                "--unfinished sends it now anyway"
            )
        counts = digest_send(day=day)
        self.stdout.write(
            f"digest of {day.isoformat()}: {counts['sent']} sent to "
            f"{counts['users']} followers with new papers "
            f"({counts['papers']} papers in all); {counts['already_sent']} sent "
            f"before, {counts['skipped_no_email']} without an e-mail address, "
            f"{counts['failed']} refused by the mail server"
        )

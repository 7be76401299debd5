"""``manage.py send_digest [--day YYYY-MM-DD]``: send a day's digest now."""

from __future__ import annotations

import datetime as dt

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from wovepaper.digest import digest_send


class Command(BaseCommand):
    """Send the daily digest of one UTC day, as beat does at 06:00 UTC
    (``wovepaper.digest_send``), for the embedded demo, which runs no beat,
    and for an operator catching up a day. Idempotent: a user's digest for a
    day goes out at most once (:func:`wovepaper.digest.digest_send`)."""

    help = "Send the daily digest e-mails of one UTC day (default: today)"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--day",
            help="the UTC day whose new papers are sent, YYYY-MM-DD (default: "
            "today, so the papers a demo just harvested go out; beat sends "
            "yesterday's)",
        )

    def handle(self, *args, **options) -> None:
        try:
            day = (
                dt.date.fromisoformat(options["day"])
                if options["day"]
                else timezone.now().astimezone(dt.UTC).date()
            )
        except ValueError:
            raise CommandError(
                f"--day {options['day']!r} is not a date (YYYY-MM-DD)"
            ) from None
        counts = digest_send(day=day)
        self.stdout.write(
            f"digest of {day.isoformat()}: {counts['sent']} sent to "
            f"{counts['users']} followers with new papers "
            f"({counts['papers']} papers in all); {counts['already_sent']} sent "
            f"before, {counts['skipped_no_email']} without an e-mail address, "
            f"{counts['failed']} refused by the mail server"
        )

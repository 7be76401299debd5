"""``manage.py create_curator USERNAME [--email E]``: a staff login in ``curators``."""

from __future__ import annotations

import getpass
import os
import sys

from django.core.management.base import BaseCommand, CommandError, CommandParser

from curation.services import curator_ensure


class Command(BaseCommand):
    """Create (or refresh) a curator: staff, in the curators group, may decide."""

    help = "Create a curator login (password from CURATOR_PASSWORD or a prompt)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--email", default="")

    def handle(self, *args, **options) -> None:
        password = os.environ.get("CURATOR_PASSWORD")
        if not password:
            if not sys.stdin.isatty():
                raise CommandError("no terminal to ask on: set CURATOR_PASSWORD")
            password = getpass.getpass("Password: ")
        if len(password) < 8:
            raise CommandError("the password needs at least 8 characters")
        user = curator_ensure(
            username=options["username"], password=password, email=options["email"]
        )
        self.stdout.write(f"curator {user.username} is ready: sign in at /admin/")

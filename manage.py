#!/usr/bin/env python
"""Django's command-line utility for wovepaper."""

from __future__ import annotations

import os
import sys


def main() -> None:
    """Run a management command with the embedded settings unless told otherwise."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wovepaper.settings.base")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()

"""A Redis server of a test's own, on a loopback port, crashed and restarted at will."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import redis


class OwnRedis:
    """A Redis server on ``127.0.0.1:port`` that a test starts, kills and restarts.

    With the append-only file on and fsynced on every write, as a production
    broker must be: a Redis that keeps nothing on disk (the machine's own here)
    loses every queued task when it restarts (Redis docs, "Redis persistence"),
    and a cache that comes back with its entries is the case where a missed
    invalidation shows.

    Args:
        folder: where it keeps its append-only file.
        port: its port (each test module that runs one takes its own).
    """

    def __init__(self, folder, *, port: int) -> None:
        self.folder, self.port = folder, port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        """Start it and wait (at most 20 s) until it answers PING."""
        self.proc = subprocess.Popen(  # noqa: S603 - fixed argv
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.folder),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
            ],
            stdout=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url)
        deadline = time.monotonic() + 20
        while True:
            try:
                if client.ping():
                    return
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def crash(self) -> None:
        """Kill it with SIGKILL (no shutdown, no last write)."""
        if self.proc is not None and self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)

    def restart(self) -> None:
        """Kill it and start it again on the same files."""
        self.crash()
        self.start()

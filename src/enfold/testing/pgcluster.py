"""A throwaway PostgreSQL cluster for tests and benchmarks — a real server, no Docker.

``initdb`` a fresh data directory in a temporary folder, start ``postgres`` on a free
loopback port with its unix socket inside that folder, and hand out ``postgresql://`` URLs::

    from enfold.testing.pgcluster import PGCluster

    with PGCluster() as pg:
        url = pg.create_database("enfold_test")
        m = Memory.open(url)

The binaries come from ``$ENFOLD_PG_BIN``, else the Debian package's
``/usr/lib/postgresql/15/bin`` (``apt-get install postgresql-15``), else ``PATH``.
``initdb`` refuses to run as root, so under root the cluster runs as the ``postgres``
system user (created by the Debian package) or, failing that, ``nobody``; the data
directory is handed to that user. Authentication is ``trust`` on loopback only: the
cluster is for throwaway data and is deleted on :meth:`stop`.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self
from urllib.parse import urlsplit, urlunsplit

DEBIAN_BIN = Path("/usr/lib/postgresql/15/bin")


class ClusterUnavailable(RuntimeError):
    """The PostgreSQL server binaries are not installed here."""


def find_bin_dir() -> Path:
    """The directory holding ``initdb``, ``pg_ctl`` and ``postgres``."""
    candidates = [os.environ.get("ENFOLD_PG_BIN"), str(DEBIAN_BIN)]
    found = shutil.which("initdb")
    if found:
        candidates.append(str(Path(found).resolve().parent))
    for c in candidates:
        if c and all((Path(c) / b).exists() for b in ("initdb", "pg_ctl", "postgres")):
            return Path(c)
    raise ClusterUnavailable(
        "PostgreSQL server binaries not found (apt-get install postgresql-15, or set "
        "ENFOLD_PG_BIN)")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run_as() -> str | None:
    """The unprivileged user to run the server as when we are root (None: ourselves)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return name
    raise ClusterUnavailable("running as root and no 'postgres' or 'nobody' user to run "
                             "PostgreSQL as")


class PGCluster:
    """One temporary PostgreSQL cluster; a context manager that stops and deletes it."""

    def __init__(self, *, bin_dir: Path | None = None, port: int | None = None,
                 base_dir: Path | None = None) -> None:
        self.bin_dir = bin_dir or find_bin_dir()
        self.port = port or _free_port()
        self.dir = Path(tempfile.mkdtemp(prefix="enfold-pg-", dir=base_dir))
        self.data = self.dir / "data"
        self.sockets = self.dir / "sock"
        self.user = _run_as()
        self.superuser = "postgres"
        self._started = False

    # ------------------------------------------------------------ plumbing
    def _cmd(self, *args: str) -> list[str]:
        if self.user is None:
            return list(args)
        return ["runuser", "-u", self.user, "--", *args]

    def _run(self, *args: str, timeout: float = 120) -> None:
        proc = subprocess.run(self._cmd(*args), capture_output=True, text=True,
                              timeout=timeout, cwd=self.dir, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:2])} failed ({proc.returncode}): "
                               f"{(proc.stderr or proc.stdout)[-2000:]}")

    def start(self) -> Self:
        """initdb and start the server; returns self once it accepts connections."""
        self.sockets.mkdir()
        if self.user is not None:
            entry = pwd.getpwnam(self.user)
            for p in (self.dir, self.sockets):
                os.chown(p, entry.pw_uid, entry.pw_gid)
        self._run(str(self.bin_dir / "initdb"), "-D", str(self.data), "-U", self.superuser,
                  "--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "--no-sync")
        opts = (f"-c listen_addresses=127.0.0.1 -p {self.port} "
                f"-c unix_socket_directories={self.sockets} -c fsync=off "
                f"-c synchronous_commit=on -c full_page_writes=off -c max_connections=200 "
                f"-c shared_buffers=64MB")
        self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-l",
                  str(self.dir / "server.log"), "-o", opts, "-w", "-t", "60", "start")
        self._started = True
        self._wait_ready()
        return self

    def _wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def stop(self) -> None:
        """Stop the server (fast shutdown) and delete the cluster's directory."""
        if self._started:
            try:
                self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "fast",
                          "-w", "stop", timeout=60)
            finally:
                self._started = False
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()

    # ------------------------------------------------------------ databases
    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{self.superuser}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        """Create an empty database (dropping one of that name) and return its URL."""
        return create_database(self.url(), name)


def _admin(url: str, sql: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(sql.encode())


def drop_database(admin_url: str, name: str) -> None:
    """Drop a database (its open connections are ended first)."""
    _admin(admin_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def create_database(admin_url: str, name: str) -> str:
    """Create a fresh database on ``admin_url``'s server and return its URL (also for
    clusters that someone else runs, e.g. ``ENFOLD_TEST_PG_URL``)."""
    drop_database(admin_url, name)
    _admin(admin_url, f'CREATE DATABASE "{name}"')
    parts = urlsplit(admin_url)
    return urlunsplit(parts._replace(path="/" + name))

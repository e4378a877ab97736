"""Shared fixtures: a real PostgreSQL server for the store tests.

``pg_server`` starts one throwaway PostgreSQL 15 cluster per test session (initdb + pg_ctl
from /usr/lib/postgresql/15/bin, a temporary directory, a loopback port) unless
``ENFOLD_TEST_PG_URL`` names a server to use instead (e.g. the one ``.ci/run`` started).
Each test that asks for ``pg_url`` gets a fresh database on it, dropped afterwards.
``store_url`` runs a test once per backend: a SQLite file and a PostgreSQL database.
PostgreSQL tests are skipped only when the server binaries are not installed.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_counter = itertools.count()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """An admin URL of a PostgreSQL server for this session."""
    url = os.environ.get("ENFOLD_TEST_PG_URL")
    if url:
        yield url
        return
    from enfold.testing.pgcluster import ClusterUnavailable, PGCluster

    try:
        cluster = PGCluster()
    except ClusterUnavailable as exc:
        pytest.skip(f"PostgreSQL tests skipped: {exc}")
    with cluster:
        yield cluster.url()


@pytest.fixture
def pg_url(pg_server: str) -> Iterator[str]:
    """A fresh, empty database (dropped after the test)."""
    from enfold.testing.pgcluster import create_database, drop_database

    name = f"enfold_t{os.getpid()}_{next(_counter)}"
    yield create_database(pg_server, name)
    drop_database(pg_server, name)


def make_store_url(kind: str, request: pytest.FixtureRequest, tmp_path: Path, name: str) -> str:
    """A fresh store of ``kind`` (``sqlite`` or ``postgres``)."""
    if kind == "sqlite":
        return str(tmp_path / f"{name}.db")
    return str(request.getfixturevalue("pg_url")) if name == "store" else _extra_db(request)


def _extra_db(request: pytest.FixtureRequest) -> str:
    from enfold.testing.pgcluster import create_database, drop_database

    server = str(request.getfixturevalue("pg_server"))
    name = f"enfold_t{os.getpid()}_{next(_counter)}"
    url = create_database(server, name)
    request.addfinalizer(lambda: drop_database(server, name))
    return url


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The URL of a fresh store, once per backend."""
    return make_store_url(request.param, request, tmp_path, "store")


@pytest.fixture
def other_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A second fresh store of the *other* backend than ``store_url`` (cross-backend copies)."""
    kind = request.node.callspec.params.get("store_url", "sqlite")
    return make_store_url("postgres" if kind == "sqlite" else "sqlite", request, tmp_path,
                          "other")


@pytest.fixture(scope="session")
def minilm() -> Any:
    """The packaged MiniLM embedder, loaded once for the session (skips without it)."""
    from enfold.embed import make_embedder

    try:
        emb = make_embedder("minilm")
        emb.embed(["warm up"])
    except Exception as exc:  # noqa: BLE001 - the extra is not installed here
        pytest.skip(f"MiniLM is not available: {exc}")
    return emb

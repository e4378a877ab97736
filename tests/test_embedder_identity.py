"""A store remembers which embedder made its vectors and refuses another (issue 25, item 10).

Vectors of two embedders cannot be compared: a store built with MiniLM (384 dims) opened
with the hashing embedder (256) used to fail deep inside recall ("size 256 is different
from 384"). Now a namespace's first vectors record the embedder's name and size (meta
``embedder``), and opening the store with another embedder raises a ConfigError that
names the one to use — in the library, the CLI and ``enfold serve`` alike. The two
embedders here are the hashing one at two sizes (and two seeds), so no model is needed.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from enfold import ConfigError
from enfold.embed import HashingEmbedder, MiniLMEmbedder, check_vector_space
from enfold.memory import Memory
from enfold.store.base import EMBEDDER_KEY

TS = 1_700_000_000


def build(url: str, embedder: str = "hash:384") -> None:
    with Memory.open(url, embedder=embedder, planner="local") as m:
        m.add("ran ten kilometres by the river", ts=TS, source="Maya")
        m.add("booked a hotel in Vienna", ts=TS + 60, namespace="trips")


def test_first_vectors_record_the_embedder(store_url: str) -> None:
    build(store_url)
    with Memory.open(store_url, planner=None, embedder=None) as m:
        assert m.store.get_meta("default", EMBEDDER_KEY) == {"name": "hash:384", "dim": 384}
        assert m.store.vector_spaces() == {"default": ("hash:384", 384),
                                           "trips": ("hash:384", 384)}


@pytest.mark.parametrize("other", ["hash", "hash:384:seed=1"])
def test_another_embedder_is_refused_at_open(store_url: str, other: str) -> None:
    """Another size, and the same size from another vector space (a different seed)."""
    build(store_url)
    with pytest.raises(ConfigError) as info:
        Memory.open(store_url, embedder=other, planner="local")
    msg = str(info.value)
    assert "built with hash:384 (384 dims" in msg and "embedder='hash:384'" in msg
    with Memory.open(store_url, embedder="hash:384", planner="local") as m:  # the control
        assert m.recall("river").evidence[0].text.startswith("ran ten")


def test_a_store_without_vectors_takes_any_embedder(tmp_path: Path) -> None:
    """Opening (and reading) does not bind a store; its first vectors do, and a wipe of
    every namespace that held them frees it again."""
    db = str(tmp_path / "m.db")
    with Memory.open(db, embedder="hash", planner="local") as m:
        assert m.recall("anything").evidence == []
    build(db, "hash:384")
    with Memory.open(db, embedder="hash:384", planner=None) as m:
        m.wipe("default")
        m.wipe("trips")
    with Memory.open(db, embedder="hash", planner="local") as m:
        m.add("a fresh start", ts=TS)
        assert m.store.get_meta("default", EMBEDDER_KEY) == {"name": "hash:256", "dim": 256}


def test_vectors_from_before_the_record_are_checked_by_size(tmp_path: Path) -> None:
    db = tmp_path / "old.db"
    build(str(db))
    with sqlite3.connect(db) as con:  # as a store written before names were recorded
        con.execute("DELETE FROM meta WHERE key = ?", (EMBEDDER_KEY,))
    with pytest.raises(ConfigError, match="384-dim vectors"):
        Memory.open(db, embedder="hash", planner="local")
    with Memory.open(db, embedder="hash:384", planner="local") as m:  # same size: adopted
        m.add("and one more run", ts=TS + 120)
        assert m.store.get_meta("default", EMBEDDER_KEY) == {"name": "hash:384", "dim": 384}


def test_the_message_names_the_cli_flag_when_there_is_one() -> None:
    minilm = {"default": (MiniLMEmbedder.name, 384)}
    with pytest.raises(ConfigError) as info:
        check_vector_space(minilm, HashingEmbedder())
    assert str(info.value) == (f"this store was built with {MiniLMEmbedder.name} (384 dims, "
                               "namespace 'default'), not hash:256; open it with "
                               "--embedder minilm")
    with pytest.raises(ConfigError, match="open it with --embedder hash$"):
        check_vector_space({"n": ("hash:256", 256)}, HashingEmbedder(384))
    with pytest.raises(ConfigError, match=r"--embedder minilm makes 384\)$"):
        check_vector_space({"n": (None, 384)}, HashingEmbedder())
    check_vector_space(minilm, MiniLMEmbedder())  # constructing it loads nothing
    check_vector_space({"n": (None, 256)}, HashingEmbedder())


def _enfold(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "enfold", "--db", str(db), *args],
                          capture_output=True, text=True, timeout=120, check=False)


def test_cli_and_serve_refuse_with_one_line(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    build(str(db))
    for args in (["--embedder", "hash", "recall", "river"],
                 ["--embedder", "hash", "add", "one more"],
                 ["--embedder", "hash", "serve", "--no-auth", "--port", "0"]):
        r = _enfold(db, *args)
        assert r.returncode == 1, (args, r.stderr)
        assert "Traceback" not in r.stderr
        lines = r.stderr.splitlines()
        assert len(lines) == 1 and "built with hash:384" in lines[0], r.stderr
    r = _enfold(db, "--embedder", "hash", "stats")  # needs no embedder: still works
    assert r.returncode == 0, r.stderr


def test_the_server_app_refuses_to_start(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    from enfold.server import ServerSettings, create_app

    db = str(tmp_path / "m.db")
    build(db)
    with pytest.raises(ConfigError, match="built with hash:384"):
        create_app(db, ServerSettings(auth=False), embedder="hash")

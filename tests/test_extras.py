"""Configured parts are checked at start: a missing extra is one line naming it, for
``Memory.open`` and ``enfold serve`` alike; ``Memory.open``'s defaults are the CLI's (MiniLM
and the local planner), or the store's own embedder, or a warning when MiniLM is missing."""

from __future__ import annotations

import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

from enfold import extras
from enfold.embed import HashingEmbedder, MiniLMEmbedder
from enfold.errors import ConfigError, MissingExtra
from enfold.memory import Memory

# Runs the CLI with sentence-transformers unimportable, as in an install without the extra.
BLOCKED = ("import sys; sys.modules['sentence_transformers'] = None; "
           "from enfold.cli import main; sys.argv = ['enfold', *sys.argv[1:]]; main()")


def _enfold_without_minilm(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", BLOCKED, *args], cwd=cwd, check=False,
                          capture_output=True, text=True, timeout=60)


def test_serve_without_the_minilm_extra_refuses_at_once_in_one_line(tmp_path: Path) -> None:
    started = time.monotonic()
    r = _enfold_without_minilm("--db", str(tmp_path / "m.db"), "--create", "serve",
                               "--port", "0", cwd=tmp_path)
    elapsed = time.monotonic() - started
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        ("enfold serve: the minilm embedder needs the 'minilm' extra: pip install "
         "'enfold[minilm]' (not installed: sentence_transformers)")]
    assert r.stdout == ""
    assert elapsed < 20  # no listening, no drain: it stops before it starts


def test_serve_with_the_hash_embedder_needs_no_minilm(tmp_path: Path) -> None:
    """The check is of what is configured: --embedder hash starts (and is stopped here by
    a port that cannot be bound, after the warm-up)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = _enfold_without_minilm("--db", str(tmp_path / "m.db"), "--create", "--embedder",
                                   "hash", "serve", "--port", str(port), cwd=tmp_path)
    assert "minilm" not in r.stderr
    assert f"serving sqlite:///{tmp_path / 'm.db'}" in r.stderr  # it got as far as listening
    assert r.returncode == 3  # uvicorn could not bind the port


def test_open_refuses_minilm_without_the_extra(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(MissingExtra, match=r"pip install 'enfold\[minilm\]'") as caught:
        Memory.open(tmp_path / "m.db", embedder="minilm")
    assert caught.value.extra == "minilm" and isinstance(caught.value, ConfigError)
    assert "\n" not in str(caught.value)


def test_open_refuses_the_llm_planner_without_its_extra(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from enfold.llm import LLMConfig

    monkeypatch.setitem(sys.modules, "openai", None)
    with pytest.raises(MissingExtra, match=r"the llm planner needs the 'llm' extra"):
        Memory.open(tmp_path / "m.db", embedder="hash", planner="llm",
                    llm=LLMConfig(base_url="http://127.0.0.1:9/v1", api_key=None, model="m"))


def test_open_defaults_are_minilm_and_the_local_planner(tmp_path: Path) -> None:
    if not extras.installed("minilm"):
        pytest.skip("the minilm extra is not installed here")
    with Memory.open(tmp_path / "m.db") as m:
        assert isinstance(m.embedder, MiniLMEmbedder)
        assert not m.embedder.loaded  # opening is cheap: the model loads on first use
        assert [p.name for p in m.planners] == ["local"]


def test_open_without_minilm_warns_and_folds_without_embeddings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.warns(UserWarning, match=r"pip install 'enfold\[minilm\]'"):
        m = Memory.open(tmp_path / "m.db")
    with m:
        assert m.embedder is None and [p.name for p in m.planners] == ["local"]
        m.add("I need to renew the passport by Friday", source="Maya")
        assert m.stats()["nodes"].get("intent") == 1  # it still folds


def test_open_by_default_uses_the_embedder_the_store_was_built_with(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with Memory.open(db, embedder="hash:64") as m:
        m.add("Easy 5 miles along the river", source="Maya")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with Memory.open(db) as m:
            assert isinstance(m.embedder, HashingEmbedder) and m.embedder.dim == 64
            assert m.recall("river run").evidence


def test_warm_up_embeds_once_so_the_first_request_does_not_load(tmp_path: Path) -> None:
    class Counting(HashingEmbedder):
        calls = 0

        def embed(self, texts):  # type: ignore[no-untyped-def]
            Counting.calls += 1
            return super().embed(texts)

    with Memory.open(tmp_path / "m.db", embedder=Counting()) as m:
        assert Counting.calls == 0
        m.warm_up()
        assert Counting.calls == 1


def test_missing_lists_what_is_not_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    assert extras.missing("minilm") == [] or "sentence_transformers" in extras.missing("minilm")
    monkeypatch.setitem(sys.modules, "fastapi", None)
    assert "fastapi" in extras.missing("server")
    with pytest.raises(MissingExtra, match=r"enfold serve needs the 'server' extra"):
        extras.require("server")

"""The command line's contracts: a missing --db needs --create, ``show`` prints the words a
node rests on, ``feedback modify`` needs a label, and the model-loading bar stays off the
terminal's way (``keys create``'s stdout is tested with the server commands)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from enfold.cli import cli
from enfold.errors import InputError
from enfold.memory import Memory

PASSPORT = "I need to renew the passport by Friday"


def _run(db: Path, *args: str) -> Any:
    return CliRunner().invoke(cli, ["--db", str(db), "--embedder", "hash", *args])


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "m.db"
    r = _run(path, "--create", "add", PASSPORT, "--source", "Maya", "--ts",
             "2026-10-01T09:30:00Z")
    assert r.exit_code == 0, r.output
    return path


def _intent(db: Path) -> dict[str, Any]:
    r = _run(db, "--json", "intents")
    intents: list[dict[str, Any]] = json.loads(r.stdout)
    return intents[0]


def test_commands_on_a_missing_db_ask_for_create(tmp_path: Path) -> None:
    """A typo in --db is an error, not a new empty store; --create makes one."""
    db = tmp_path / "typo.db"
    for args in (["stats"], ["add", "hello"], ["recall", "hello"], ["keys", "list"],
                 ["keys", "create"], ["serve", "--port", "0"]):
        r = CliRunner().invoke(cli, ["--db", str(db), "--embedder", "hash", *args])
        assert r.exit_code == 1, (args, r.output)
        assert "--create" in r.stderr and str(db) in r.stderr, args
        assert len(r.stderr.splitlines()) == 1, r.stderr
        assert not db.exists(), args
    r = CliRunner().invoke(cli, ["--db", str(db), "--create", "--embedder", "hash", "add",
                                 "hello"])
    assert r.exit_code == 0 and db.exists()
    r = CliRunner().invoke(cli, ["--db", str(db), "--embedder", "hash", "--json", "stats"])
    assert r.exit_code == 0 and json.loads(r.stdout)["events"] == 1


def test_show_prints_the_grounding_events_with_time_and_speaker(db: Path) -> None:
    intent = _intent(db)
    r = _run(db, "show", intent["id"])
    assert r.exit_code == 0, r.output
    assert f"[2026-10-01 09:30] Maya: {PASSPORT}" in r.stdout
    data = json.loads(_run(db, "--json", "show", intent["id"]).stdout)
    assert [(e["text"], e["attrs"]["source"]) for e in data["grounding"]] == [(PASSPORT, "Maya")]


def test_feedback_modify_without_a_label_is_an_error(db: Path) -> None:
    intent = _intent(db)
    r = _run(db, "feedback", intent["id"], "modify")
    assert r.exit_code == 2 and "--label" in r.stderr
    assert _intent(db)["attrs"].get("confirmed") is None  # nothing was recorded
    r = _run(db, "feedback", intent["id"], "modify", "--label", "Renew the passport")
    assert r.exit_code == 0, r.output
    assert _intent(db)["text"] == "Renew the passport"
    with Memory.open(db, embedder="hash") as m, pytest.raises(InputError, match="label"):
        m.feedback(intent["id"], "modify")  # the library refuses it too (REST, MCP)


@pytest.mark.parametrize("terminal, options, bar", [
    (True, [], True), (True, ["--json"], False), (True, ["--no-progress"], False),
    (False, [], False)])
def test_the_model_loading_bar_only_on_a_terminal_without_json_or_no_progress(
        tmp_path: Path, terminal: bool, options: list[str], bar: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """What the CLI asks of the embedder (that it then loads with or without the bar:
    test_embed)."""
    import enfold.cli
    from enfold.embed import MiniLMEmbedder

    if not terminal:  # CliRunner's stderr is no terminal; the real check must say so
        assert not enfold.cli.stderr_is_terminal()
    monkeypatch.setattr(enfold.cli, "stderr_is_terminal", lambda: terminal)

    opened: list[Memory] = []
    real = Memory.open.__func__  # type: ignore[attr-defined]

    def spy(cls: type[Memory], *args: Any, **kwargs: Any) -> Memory:
        mem = real(cls, *args, **kwargs)
        opened.append(mem)
        return mem

    monkeypatch.setattr(Memory, "open", classmethod(spy))
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    json_flag = [o for o in options if o == "--json"]
    rest = [o for o in options if o != "--json"]
    r = CliRunner().invoke(cli, ["--db", str(tmp_path / "m.db"), "--create", "--embedder",
                                 "minilm", *json_flag, "ingest", *rest, str(empty)])
    assert r.exit_code == 0, r.output
    [mem] = opened
    assert isinstance(mem.embedder, MiniLMEmbedder) and mem.embedder.progress is bar
    assert not mem.embedder.loaded

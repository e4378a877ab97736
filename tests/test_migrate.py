"""``enfold migrate``: a SQLite store copied into PostgreSQL and back, row for row.

The round trip SQLite → PostgreSQL → SQLite must give back the same export, byte for byte,
and the same per-table checksums; the copy in PostgreSQL must work as a memory (fold,
recall, history). Non-empty targets are refused; a copy that lost a row is caught.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from enfold import AddNode, MergeNodes, NodeKind, UpdatePlan
from enfold.cli import cli
from enfold.errors import InputError, StoreError
from enfold.memory import Memory
from enfold.store import open_store
from enfold.store.base import TABLES, ApiKey
from enfold.store.migrate import checksum, migrate

TS = 1_700_000_000
TEXTS = [("Maya", "Went running in the park with Sam this morning"),
         ("Sam", "I think the new running shoes are too expensive"),
         ("Maya", "Booked a hotel in Vienna for the concert on May 12"),
         ("Maya", "I need to renew my passport by Friday"),
         ("Sam", "Ran 10k along the river, felt great"),
         ("Maya", "Went running again in the park before work")]


def build(path: str) -> dict[str, str]:
    """Two namespaces folded by the local planner, a merge (alias), a forgotten event, a
    pending event, an embedding cache, the op log and an API key."""
    with Memory.open(path, embedder="hash", planner="local") as m:
        for ns in ("alice", "bob"):
            ids = [m.add(t, ts=TS + 3600 * i, source=s, namespace=ns, id=f"{ns}-{i}")
                   for i, (s, t) in enumerate(TEXTS)]
            r = m.apply(UpdatePlan(operations=[
                AddNode(ref="a", kind=NodeKind.CONCEPT, text="Jogging habit",
                        grounded_in=[ids[0]]),
                AddNode(ref="b", kind=NodeKind.CONCEPT, text="Vienna trip",
                        grounded_in=[ids[2]])]), namespace=ns)
            m.apply(UpdatePlan(operations=[MergeNodes(keep=r.created["a"],
                                                      absorb=r.created["b"])]), namespace=ns)
            m.forget(ids[1], namespace=ns)
            m.add("Dentist on Tuesday", ts=TS + 99_999, namespace=ns, fold=False)
        m.store.create_api_key(ApiKey("key_1", "alice", "ab" * 32, "agent", TS))  # type: ignore[attr-defined]
        # ids of namespace bob, built last
        return {"merged": r.created["b"], "kept": r.created["a"], "event": ids[0]}


def exports(url: str) -> dict[str, str]:
    with Memory.open(url, embedder="hash", planner=None) as m:
        out = {}
        for ns in ("alice", "bob"):
            buf = io.StringIO()
            m.export(buf, namespace=ns)
            out[ns] = buf.getvalue()
        return out


def checksums(url: str) -> dict[tuple[str, str], tuple[int, str]]:
    s: Any = open_store(url)
    try:
        return {(ns, t): (len(rows := s.dump_rows(t, ns)), checksum(t, rows))
                for ns in ("alice", "bob") for t in TABLES}
    finally:
        s.close()


def test_sqlite_to_postgres_and_back(tmp_path: Path, pg_url: str) -> None:
    lite = str(tmp_path / "a.db")
    ids = build(lite)
    before, sums = exports(lite), checksums(lite)
    runner = CliRunner()
    res = runner.invoke(cli, ["--db", lite, "--json", "migrate", "--to", pg_url])
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    assert report["rows"] == sum(n for n, _ in sums.values())
    assert {(t["namespace"], t["table"]): (t["rows"], t["checksum"])
            for t in report["tables"]} == sums
    assert checksums(pg_url) == sums
    assert exports(pg_url) == before
    # The copy is a working memory: alias, history, search, and the pending event folds.
    with Memory.open(pg_url, embedder="hash", planner="local") as m:
        assert m.get(ids["merged"], namespace="bob").id == ids["kept"]
        assert any(h.op == "MERGE_NODES" for h in m.history(ids["kept"], namespace="bob"))
        assert m.stats("bob")["pending"] == 1
        pack = m.recall("running in the park", namespace="bob", touch=False)
        assert ids["event"] in {e.id for e in pack.evidence}
        assert m.store.get_api_key("key_1").namespace == "alice"  # type: ignore[attr-defined]
    # ... and back into a new SQLite file (after PostgreSQL folded and recalled): the same
    # tables and the same export again.
    sums, before = checksums(pg_url), exports(pg_url)
    assert exports(pg_url)["bob"] != exports(lite)["bob"], "the copy was used"
    back = str(tmp_path / "back.db")
    res = runner.invoke(cli, ["--db", pg_url, "migrate", "--to", back])
    assert res.exit_code == 0, res.output
    assert "copied and verified" in res.output
    assert checksums(back) == sums
    assert exports(back) == before


def test_only_some_namespaces(tmp_path: Path, pg_url: str) -> None:
    lite = str(tmp_path / "a.db")
    build(lite)
    src, dst = open_store(lite), open_store(pg_url)
    try:
        report = migrate(src, dst, namespaces=["bob"])  # type: ignore[arg-type]
        assert {t.namespace for t in report.tables} == {"bob"}
        assert dst.namespaces() == ["bob"]
    finally:
        src.close()
        dst.close()


def test_non_empty_target_is_refused(tmp_path: Path, pg_url: str) -> None:
    lite = str(tmp_path / "a.db")
    build(lite)
    with Memory.open(pg_url, embedder="hash", planner=None) as m:
        m.add("already here", namespace="bob")
    res = CliRunner().invoke(cli, ["--db", lite, "migrate", "--to", pg_url])
    assert res.exit_code == 1
    assert "already has data in namespace(s) bob" in res.output
    with Memory.open(pg_url, embedder="hash", planner=None) as m:
        assert m.namespaces() == ["bob"], "nothing was copied"


def test_a_lost_row_is_caught(tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
                              ) -> None:
    lite = str(tmp_path / "a.db")
    build(lite)
    src, dst = open_store(lite), open_store(pg_url)
    real = dst.load_rows  # type: ignore[attr-defined]

    def lossy(table: str, rows: Any) -> None:
        real(table, rows[:-1] if table == "edges" else rows)

    monkeypatch.setattr(dst, "load_rows", lossy)
    try:
        with pytest.raises(StoreError, match="copy of 'edges' in namespace 'alice'"):
            migrate(src, dst)  # type: ignore[arg-type]
        with pytest.raises(InputError, match="same store"):
            migrate(src, src)  # type: ignore[arg-type]
    finally:
        src.close()
        dst.close()

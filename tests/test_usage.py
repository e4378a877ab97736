"""The usage ledger: what a namespace has spent is counted, kept in its graph meta, and
added back once when a later process loads the namespace."""

from __future__ import annotations

from pathlib import Path

from enfold.memory import Memory
from enfold.usage import USAGE_KEY


def _open(db: Path) -> Memory:
    return Memory.open(db, embedder="hash", planner="local")


def test_counters_are_saved_and_restored_once(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with _open(db) as m:
        m.add("Ran 10k this morning", source="Maya")
        m.usage.count_pass_failure("default")
        m.usage.count_unplanned("default", 2)
        g = m.graph()
        m.usage.save("default", g, m.store)
        assert g.meta[USAGE_KEY]["pass_failures"] == 1
        assert m.unplanned_events() == m.unplanned_events("default") == 2
    with _open(db) as m:
        stats = m.stats()
        assert stats["pass_failures"] == 1 and stats["unplanned_events"] == 2
        m.usage.restore("default", m.graph())  # a second restore adds nothing
        assert m.stats()["pass_failures"] == 1
        m.add("Ran 5k along the river", source="Maya")  # a fold saves: still the same
    with _open(db) as m:
        assert m.stats()["pass_failures"] == 1 and m.unplanned_events("default") == 2


def test_saved_llm_counters_outlive_a_run_without_an_llm(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    with _open(db) as m:
        m.add("Ran 10k this morning", source="Maya")
        g = m.graph()
        g.begin()
        g.set_meta(USAGE_KEY, {"llm": {"calls": 3, "tokens": 120}})
        m.store.commit("default", g.changes())
        g.commit()
    with _open(db) as m:
        assert m.usage.llm_planner is None
        assert m.stats()["llm"] == {"calls": 3, "tokens": 120}
        m.add("Ran 5k along the river", source="Maya")
    with _open(db) as m:
        assert m.stats()["llm"] == {"calls": 3, "tokens": 120}

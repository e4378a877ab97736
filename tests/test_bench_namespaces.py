"""bench namespaces at a tiny size: the budget evicts, and evicted namespaces recall the same."""

from __future__ import annotations

from enfold.bench.namespaces import render_namespaces, run_namespaces


def test_a_tiny_run_evicts_and_recalls_the_same() -> None:
    m = run_namespaces(4, 30, budget_mb=0.01, check=2)
    assert m["events"] == 120 and m["sessions"]["evictions"] >= 3
    assert m["sessions"]["resident"] == 1
    same = m["same_recall"]
    assert same["checked"] >= 1 and same["evicted_before_reopen"] == same["checked"]
    assert same["same_top_k"] == same["checked"] and not same["differing"]
    assert m["recall_ms"]["reopened"] is not None
    assert "same top-k" in render_namespaces(m)

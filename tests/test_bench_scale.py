"""``enfold bench perf --scale`` (issue 23): one run reports recall at each size beside the
exact scan, the direct build past the fold limit, the other-wording stream, contention."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from enfold.bench.perf import synthetic_events
from enfold.bench.scale import other_events, render_scale, run_scale
from enfold.cli import cli
from enfold.model import NodeKind


def test_a_small_scale_run_reports_every_part(tmp_path: Path) -> None:
    out = tmp_path / "scale.json"
    run = run_scale([300, 900], other_size=300, contention=False, queries=10,
                    fold_limit=300, out=out)
    folded, direct = run.sizes
    assert (folded.built, direct.built) == ("folded", "direct")
    assert direct.events == 900
    # the direct build gave the new events the templates' derived structure
    assert direct.nodes_by_kind["claim"] > folded.nodes_by_kind["claim"]
    assert direct.edges > 2 * folded.edges
    for r in (folded, direct, run.other):
        assert r is not None
        assert set(r.recall_ms) == {"p50", "p95", "p99"} == set(r.exact_scan_ms)
    data = json.loads(out.read_text())
    system = data["systems"]["enfold"]
    assert set(system["recall_ms"]) == {"300", "900"}
    assert system["other_stream"]["events"] == 300
    assert any("built directly" in n for n in data["notes"])
    assert data["config"]["load_average_before"] is not None
    assert "other wording" in render_scale(run)


def test_a_direct_build_keeps_the_memory_s_graph(tmp_path: Path) -> None:
    from enfold import Memory
    from enfold.bench.scale import grow_directly

    events = list(synthetic_events(400))
    with Memory.open(tmp_path / "d.db", embedder="hash", planner="local") as mem:
        mem.add_many(events[:200])
        g = mem.graph()
        assert grow_directly(mem, events[200:], 200) == 200
        mem.recall("How is the garden going?")
        assert mem.graph() is g  # not taken for stale and reloaded
        assert mem.stats()["pending"] == 0 and g.count(NodeKind.EVENT) == 400


def test_the_hnsw_path_is_measured_against_the_exact_scan(tmp_path: Path) -> None:
    from enfold.settings import Settings

    run = run_scale([400], other_size=0, contention=False, queries=10,
                    settings=Settings().with_(ann_threshold=100))
    (r,) = run.sizes
    assert r.vector_search == "hnsw"
    assert r.ann_recall_at_10 is not None and r.ann_recall_at_10 >= 0.9


def test_the_other_stream_has_its_own_wording() -> None:
    ours = {w for e in synthetic_events(2000) for w in e["text"].lower().split()}
    theirs = [e["text"] for e in other_events(2000)]
    assert len(theirs) == len({e["id"] for e in other_events(2000)})
    words = {w for t in theirs for w in t.lower().split()}
    assert len(words - ours) > 0.6 * len(words)
    people = {p for t in theirs for p in ("Ingrid", "Kwame", "Sofia", "Yusuf", "Beatriz",
                                          "Henrik", "Ama", "Tariq") if p in t}
    assert len(people) == 8


def test_cli_runs_the_scale_benchmark(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    res = CliRunner().invoke(cli, ["bench", "perf", "--scale", "--sizes", "200",
                                    "--other-size", "0", "--no-contention", "--queries", "5",
                                    "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "exact scan p50 ms" in res.output and out.exists()
    bad = CliRunner().invoke(cli, ["bench", "perf", "--scale", "--embedder", "minilm"])
    assert bad.exit_code != 0 and "--scale" in bad.output


@pytest.mark.slow
def test_contention_measures_add_and_recall_idle_and_loaded() -> None:
    run = run_scale([200], other_size=0, contention=True, queries=5)
    c = run.contention
    assert c is not None
    for what in ("add", "recall"):
        assert c[f"{what}_ms_loaded"]["p50"] > 0 and c[f"{what}_ratio_p50"] is not None

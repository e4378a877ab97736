"""CogEval-Bench and ToMi harnesses: smoke runs through the real CLI, and the ToMi records
read back from the graph."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from enfold.bench.cogeval import METRICS, concept_partition
from enfold.bench.tomi import parse_tomi, story_events
from enfold.bench.tomi_graph import ingest_story, rebuild_events
from enfold.cli import cli
from enfold.embed import make_embedder
from enfold.errors import InputError
from enfold.memory import Memory
from enfold.model import EdgeType, NodeKind
from enfold.store import open_store
from enfold.write.planner_local import LocalPlanner

# Sally leaves before Anne moves the ball; Tom is elsewhere; Sally comes back at line 8.
STORY = """\
1 Anne entered the kitchen.
2 Sally entered the kitchen.
3 Tom entered the garden.
4 The ball is in the basket.
5 Sally exited the kitchen.
6 Tom likes the ball
7 Anne moved the ball to the box.
8 Anne exited the kitchen.
9 Where will Sally look for the ball?\tbasket\t4
1 Anne entered the kitchen.
2 Sally entered the kitchen.
3 Tom entered the garden.
4 The ball is in the basket.
5 Sally exited the kitchen.
6 Tom likes the ball
7 Anne moved the ball to the box.
8 Anne exited the kitchen.
9 Where does Anne think that Sally searches for the ball?\tbasket\t4
1 Anne entered the kitchen.
2 Sally entered the kitchen.
3 The ball is in the basket.
4 Anne moved the ball to the box.
5 Where is the ball really?\tbox\t4
"""
TRACE = """\
enter,enter,exit,move,first_order_0_tom,false_belief
enter,enter,exit,move,second_order_0_tom,false_belief
enter,enter,move,reality,true_belief
"""


def _run(*args: str, settings: tuple[str, ...] = ()) -> dict[str, Any]:
    sets = [a for name in settings for a in ("--set", name)]
    proc = subprocess.run([sys.executable, "-m", "enfold", "--json", *sets, "bench", *args],
                          check=False, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def _toy(tmp_path: Path) -> Path:
    txt = tmp_path / "toy.txt"
    txt.write_text(STORY, encoding="utf-8")
    (tmp_path / "toy.trace").write_text(TRACE, encoding="utf-8")
    return txt


# ------------------------------------------------------------------ ToMi
def test_graph_rebuilt_records_equal_story_events(tmp_path: Path) -> None:
    stories = parse_tomi(_toy(tmp_path))
    emb = make_embedder("hash")
    with Memory(open_store("memory:"), embedder=emb, planners=[LocalPlanner(None, emb)]) as mem:
        for i, story in enumerate(stories):
            ns = f"s{i}"
            ingest_story(mem, story, namespace=ns)
            g = mem.graph(ns)
            # the participation lives in the graph as PARTICIPATES edges from people
            edges = [e for e in g.all_edges() if e.type is EdgeType.PARTICIPATES]
            assert edges and all(g.nodes[e.src].kind is NodeKind.PERSON for e in edges)
            assert rebuild_events(g, story.source) == story_events(story)


def test_rebuilt_witnesses_come_from_the_graph(tmp_path: Path) -> None:
    story = parse_tomi(_toy(tmp_path))[0]
    emb = make_embedder("hash")
    with Memory(open_store("memory:"), embedder=emb, planners=[LocalPlanner(None, emb)]) as mem:
        ingest_story(mem, story)
        g = mem.graph()
        move = next(n for n in g.of_kind(NodeKind.EVENT) if "moved" in g.nodes[n].text)
        anne = next(e for e in g.in_edges(move) if g.nodes[e.src].text == "Anne")
        assert anne.type is EdgeType.PARTICIPATES
        # take Anne's presence at the move out of the graph: the record follows the graph
        g.begin()
        g.remove_edge(anne.key)
        g.commit()
        rebuilt = rebuild_events(g, story.source)
        assert "Anne" not in next(r for r in rebuilt if r.action == "move").witnesses
        assert rebuilt != story_events(story)


def test_tomi_cli_smoke(tmp_path: Path) -> None:
    out = tmp_path / "tomi.json"
    result = _run("tomi", "--data", str(_toy(tmp_path)), "--out", str(out))
    assert result["benchmark"] == "tomi"
    assert set(result["systems"]) == {"enfold", "enfold_strict"}
    for system in result["systems"].values():
        assert system["n"] == 3
        assert system["accuracy"] == 1.0
        assert set(system["by_type"]) == {"first_order_0_tom", "second_order_0_tom", "reality"}
        assert set(system["by_kind"]) == {"first_order", "second_order", "reality"}
    assert result["records_mismatched"] == 0
    assert result["stories"] == 2  # the two copies of the first story are ingested once
    assert set(result["splits"]) == {"toy"}
    assert "inferred" in result["note"]
    assert json.loads(out.read_text())["benchmark"] == "tomi"
    assert out.with_suffix(".md").exists()


def test_tomi_cli_directory_takes_every_split(tmp_path: Path) -> None:
    _toy(tmp_path)
    shutil.copy(tmp_path / "toy.txt", tmp_path / "other.txt")
    shutil.copy(tmp_path / "toy.trace", tmp_path / "other.trace")
    result = _run("tomi", "--data", str(tmp_path), "--stories", "1")
    assert set(result["splits"]) == {"toy", "other"}
    assert result["systems"]["enfold"]["n"] == 2


# ------------------------------------------------------------------ CogEval
def test_cogeval_cli_smoke(tmp_path: Path) -> None:
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    bundled = resources.files("enfold").joinpath("bench", "data", "cogeval", "softeng.json")
    (scenarios / "softeng.json").write_text(bundled.read_text("utf-8"), encoding="utf-8")
    out = tmp_path / "cogeval.json"
    result = _run("cogeval", "--scenarios", str(scenarios), "--embedder", "hash",
                  "--out", str(out))
    assert result["benchmark"] == "cogeval"
    enfold = result["systems"]["enfold"]
    assert set(METRICS) <= set(enfold)
    assert set(enfold["per_scenario"]) == {"softeng"}
    one = enfold["per_scenario"]["softeng"]
    assert one["events"] == 44 and one["concepts"] >= 1
    for key in ("gold_f1", "purity", "chain_discovery", "proactivity"):
        assert 0.0 <= one[key] <= 1.0
    assert -0.5 <= one["modularity"] <= 1.0
    assert one["compression"] == pytest.approx(one["events"] / one["concepts"], abs=1e-3)
    assert set(enfold["gold_f1_sensitivity"]) >= {"0.5", "0.75", "0.9"}
    f1s = list(enfold["gold_f1_sensitivity"].values())
    assert f1s == sorted(f1s, reverse=True)  # a stricter threshold never matches more
    assert result["published"]["purity"] == 0.361
    assert result["published"]["gold_f1"] == 0.358
    for key in ("event_f1", "event_precision", "event_recall", "bcubed_f1",
                "gold_f1_described"):
        assert 0.0 <= one[key] <= 1.0
    d = list(enfold["gold_f1_described_sensitivity"].values())
    assert d == sorted(d, reverse=True)
    assert one["unfolded_events"] <= one["events"]
    assert len(one["labels"]) == one["concepts"]
    assert out.with_suffix(".md").exists()


def test_cogeval_measures_the_settings_given(tmp_path: Path) -> None:
    """``enfold --set NAME=VALUE bench cogeval`` measures the memory under that setting (the
    benchmark built its planner from the defaults, so a setting tried on it was not)."""
    scenarios = tmp_path / "scenarios"
    scenarios.mkdir()
    bundled = resources.files("enfold").joinpath("bench", "data", "cogeval", "softeng.json")
    scenario = json.loads(bundled.read_text("utf-8"))
    scenario["events"] = scenario["events"][:24]  # enough to fold; each run costs seconds
    kept = {e["id"] for e in scenario["events"]}
    for concept in scenario["gold"]["concepts"]:
        concept["expected_events"] = [e for e in concept["expected_events"] if e in kept]
    scenario["gold"]["chains"] = [c for c in scenario["gold"]["chains"]
                                  if set(c["events"]) <= kept]
    (scenarios / "softeng.json").write_text(json.dumps(scenario), encoding="utf-8")
    args = ["--json", "bench", "cogeval", "--scenarios", str(scenarios), "--embedder", "hash"]

    def run(*settings: str) -> dict[str, Any]:  # in this process: MiniLM loads once
        res = CliRunner().invoke(cli, [*(a for s in settings for a in ("--set", s)), *args])
        assert res.exit_code == 0, res.output
        out: dict[str, Any] = json.loads(res.stdout)
        return out

    default = run()["systems"]["enfold"]["per_scenario"]["softeng"]
    strict = run("cluster_min_events=100")["systems"]["enfold"]
    assert default["concepts"] >= 1
    assert strict["per_scenario"]["softeng"]["concepts"] == 0
    assert strict["per_scenario"]["softeng"]["unfolded_events"] == 24


def test_cogeval_development_sets_are_packaged_apart() -> None:
    from enfold.bench.datasets import load_cogeval

    tune = {s.id for s in load_cogeval(None, part="tune")}
    measure = {s.id for s in load_cogeval(None, part="measure")}
    bundled = {s.id for s in load_cogeval(None)}
    train = load_cogeval(None, part="train")
    fit = {s.id for s in train}
    assert len(tune) == 4 and len(measure) == 4 and len(fit) == 8
    assert not (tune & measure) and not ((tune | measure) & bundled)
    assert not (fit & (tune | measure | bundled))
    for sc in train:  # every theme has its events, and some events are noise
        assert all(len(c.expected_events) >= 4 for c in sc.gold.concepts)
        assert any(e.gold_concept is None for e in sc.events)
    with pytest.raises(InputError, match="unknown cogeval set"):
        load_cogeval(None, part="heldout")


def test_concept_partition_is_a_partition() -> None:
    emb = make_embedder("hash")
    with Memory(open_store("memory:"), embedder=emb, planners=[LocalPlanner(None, emb)]) as mem:
        mem.add_many([{"text": f"Ran {k} km along the river before work.", "ts": 1_700_000_000
                       + 3600 * k, "source": "Maya"} for k in range(1, 7)])
        g = mem.graph()
        parts = concept_partition(g)
        members = [x for p in parts for x in p]
        assert len(members) == len(set(members))
        covered = set(g.of_kind(NodeKind.EVENT)) | set(g.of_kind(NodeKind.CONCEPT))
        assert set(members) == covered

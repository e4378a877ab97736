"""``enfold bench perf`` (a smoke run through the CLI) and the result-file writer."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from enfold import __version__
from enfold.bench.perf import synthetic_events
from enfold.bench.report import flatten_metrics, markdown_table, write_result

PER_SIZE = ("ingest_events_per_s", "embed_only_texts_per_s", "ingest_to_embed_ratio",
            "ms_per_event", "ms_per_event_last_1k", "rss_mb", "nodes", "edges")


def test_perf_smoke_run_through_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "perf.json"
    proc = subprocess.run(
        [sys.executable, "-m", "enfold", "bench", "perf", "--sizes", "200",
         "--embedder", "hash", "--out", str(out), "--seed", "3"],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "ms/event" in proc.stdout  # the readable summary

    result = json.loads(out.read_text())
    assert result["benchmark"] == "perf"
    assert result["version"] == __version__
    assert result["elapsed_s"] > 0
    assert result["config"]["embedder"] == "hash"
    assert result["config"]["planner"] == "local"
    assert result["config"]["sizes"] == [200]
    assert result["config"]["seed"] == 3
    assert list(result["systems"]) == ["enfold"]
    metrics = result["systems"]["enfold"]
    for name in PER_SIZE:
        assert metrics[name]["200"] > 0, name
    assert 0 < metrics["folding_share"]["200"] < 1
    # The stage split accounts for the last events' wall time, stage by stage.
    stages = metrics["stage_ms_per_event_last_1k"]["200"]
    assert set(stages) == {"embed", "parse", "plan", "apply", "intents", "consolidate",
                           "commit", "other"}
    assert all(stages[k] > 0 for k in ("plan", "apply", "intents", "commit"))
    assert sum(stages.values()) == pytest.approx(metrics["ms_per_event_last_1k"]["200"],
                                                 abs=0.02)
    assert metrics["fold_ms_per_event_last_1k"]["200"] == pytest.approx(
        metrics["ms_per_event_last_1k"]["200"] - stages["embed"], abs=0.01)
    assert metrics["fold_to_embed_cost"]["200"] > 0
    # Events added one add() call each after the ingest, folding split from the embedder.
    assert metrics["live_ms_per_event"]["200"] > metrics["live_fold_ms_per_event"]["200"] > 0
    assert metrics["live_embed_only_ms_per_text"]["200"] > 0
    assert metrics["live_fold_to_embed_cost"]["200"] > 0
    live = metrics["live_stage_ms_per_event"]["200"]
    assert set(live) == set(stages) and all(live[k] > 0 for k in ("plan", "commit", "other"))
    assert sum(live.values()) == pytest.approx(metrics["live_ms_per_event"]["200"], abs=0.02)
    assert metrics["nodes_by_kind"]["200"]["event"] == 200
    # The planner did real work: concepts, people, times and claims appeared.
    for kind in ("concept", "person", "time", "claim"):
        assert metrics["nodes_by_kind"]["200"].get(kind, 0) > 0, kind
    recall = metrics["recall_ms"]["200"]
    assert 0 < recall["p50"] <= recall["p95"] <= recall["p99"]
    md = out.with_suffix(".md").read_text()
    assert md.startswith("# perf")
    assert "| ms_per_event[200] |" in md


def test_perf_rejects_bad_sizes() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "enfold", "bench", "perf", "--sizes", "10,-1"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 2
    assert "positive" in proc.stderr


def test_synthetic_stream_is_deterministic_and_a_prefix() -> None:
    short = list(synthetic_events(300, seed=7))
    long = list(synthetic_events(1000, seed=7))
    assert short == long[:300]
    assert short != list(synthetic_events(300, seed=8))
    texts = [e["text"] for e in long]
    assert len(set(texts)) > 0.9 * len(texts)  # varied, not a handful of repeated lines
    ts = [e["ts"] for e in long]
    assert ts == sorted(ts)
    assert any(" thinks " in t for t in texts)  # opinions
    assert sum(t.startswith(("Saw a", "Random thought", "Someone left", "Dreamt", "The radio",
                             "Found an old")) for t in texts) > 50  # ~10% distractors


def test_write_result_writes_json_and_markdown(tmp_path: Path) -> None:
    out = tmp_path / "sub" / "res.json"
    systems = {"enfold": {"recall@5": {"overall": 0.5, "temporal": 0.25}, "n": 3},
               "bm25": {"recall@5": {"overall": 0.4, "temporal": None}, "n": 3}}
    result = write_result("locomo", {"embedder": "hash", "k": [5, 10]}, systems, 1.23456, out,
                          extra={"mean_fact_claim_cosine": 0.8})
    assert result == json.loads(out.read_text())
    assert result["benchmark"] == "locomo"
    assert result["version"] == __version__
    assert result["systems"] == systems
    assert result["elapsed_s"] == 1.235
    assert result["mean_fact_claim_cosine"] == 0.8
    md = out.with_suffix(".md").read_text()
    assert "# locomo" in md and "embedder=hash" in md and "k=5,10" in md
    assert "| enfold | 0.500 | 0.250 | 3 |" in md
    assert "| bm25 | 0.400 |  | 3 |" in md
    assert "mean_fact_claim_cosine: 0.800" in md


def test_write_result_without_out_and_with_a_clashing_extra(tmp_path: Path) -> None:
    result = write_result("perf", {}, {}, 0.0, None)
    assert set(result) == {"benchmark", "version", "config", "systems", "elapsed_s"}
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="version"):
        write_result("perf", {}, {}, 0.0, None, extra={"version": "x"})


def test_markdown_table() -> None:
    rows = [{"name": "a|b", "x": 1234.5678, "y": 0.12345, "ok": True},
            {"name": "c", "x": 2, "y": None, "ok": False}]
    assert markdown_table(rows, ["name", "x", "y", "ok"]).splitlines() == [
        "| name | x | y | ok |",
        "|---|---:|---:|---|",
        "| a\\|b | 1,235 | 0.123 | yes |",
        "| c | 2 |  | no |",
    ]
    assert markdown_table([], ["a"]) == "| a |\n|---|"
    with pytest.raises(ValueError):
        markdown_table(rows, [])


def test_flatten_metrics() -> None:
    assert flatten_metrics({"a": 1, "b": {"1000": 2.5, "x": {"p50": 3}}, "c": [1, 2]}) == {
        "a": 1, "b[1000]": 2.5, "b[x][p50]": 3}


def test_embed_only_runs_on_the_ingests_texts_and_the_one_at_a_time_texts(monkeypatch) -> None:
    """The embedder-alone baseline covers exactly what the ingest embedded (in its batches)
    and, separately, the events added one at a time: not the recall queries or the pass's
    batch, which go through the same embedder after the ingest and would make the
    embedder look slower per ingested text than it is."""
    from enfold.bench import perf
    from enfold.embed import make_embedder as real_make

    made: list[Any] = []

    class Counting:
        def __init__(self) -> None:
            self.inner = real_make("hash")
            self.name, self.dim = self.inner.name, self.inner.dim
            self.calls: list[int] = []
            made.append(self)

        def embed(self, texts: Any) -> Any:
            self.calls.append(len(texts))
            return self.inner.embed(texts)

    monkeypatch.setattr(perf, "make_embedder", lambda name: Counting())
    result = perf.measure_size(120, "hash", 5)
    ingest, alone = made[0], made[-1]
    # the ingest embedded the 120 events' texts and the phrases concepts are named from
    assert result.embedded_texts >= 120
    assert result.live is not None and result.live.events == perf.LIVE_EVENTS
    # each live event embeds its own text alone (a rename adds a batch of phrases)
    live = [len(b) for b in result.live.batches]
    assert live.count(1) >= perf.LIVE_EVENTS
    # ingest, recall queries, the pass's batch and the live events all went to one embedder
    assert sum(ingest.calls) > result.embedded_texts + sum(live)
    # the baseline: the ingest's batches, then the live events' calls, no more
    assert sum(alone.calls) == result.embedded_texts + sum(live)
    assert alone.calls[-len(live):] == live


def _locomo_file(path: Path, turns_per_session: int) -> Path:
    """Two LoCoMo samples of two sessions each; the second sample's dates lie before the
    first's end (as the real file's conversations overlap in time)."""
    samples = []
    for n, (a, b, dates) in enumerate((
            ("Ana", "Ben", ("1:56 pm on 8 May, 2023", "10:00 am on 20 May, 2023")),
            ("Cy", "Dee", ("9:00 am on 1 May, 2023", "6:30 pm on 2 June, 2023")))):
        conv: dict[str, Any] = {"speaker_a": a, "speaker_b": b}
        for s, when in enumerate(dates, start=1):
            conv[f"session_{s}_date_time"] = when
            conv[f"session_{s}"] = [
                {"dia_id": f"D{s}:{i + 1}", "speaker": (a, b)[i % 2],
                 "text": f"{(a, b)[i % 2]} says thing {i} of session {s} in talk {n}"}
                for i in range(turns_per_session)]
        conv["session_1"][0]["blip_caption"] = "a photo of a dog"
        samples.append({"sample_id": f"conv-{n}", "conversation": conv, "qa": [
            {"question": f"What did {a} say in talk {n}?", "answer": "things", "category": 4,
             "evidence": ["D1:1"]},
            {"question": "Adversarial?", "adversarial_answer": "no", "category": 5,
             "evidence": []}]})
    path.write_text(json.dumps(samples))
    return path


def test_locomo_stream_is_one_memory_moving_forward_in_time(tmp_path: Path) -> None:
    from enfold.bench.perf import CONVERSATION_GAP, locomo_stream

    stream = locomo_stream(_locomo_file(tmp_path / "lc.json", 5), seed=1)
    assert stream.available == 20 and stream.config["turns"] == 20
    events = stream.events(20)
    assert stream.events(7) == events[:7]
    assert [e["id"] for e in events[:6]] == [
        "conv-0:D1:1", "conv-0:D1:2", "conv-0:D1:3", "conv-0:D1:4", "conv-0:D1:5",
        "conv-0:D2:1"]
    assert events[0]["text"].endswith("[shares: a photo of a dog]")
    assert events[0]["source"] == "Ana" and events[1]["source"] == "Ben"
    ts = [datetime.fromisoformat(e["ts"]) for e in events]
    assert all(a < b for a, b in itertools.pairwise(ts))  # strictly forward
    # The second talk starts a day after the first ended, though its own dates are earlier.
    assert ts[10] - ts[9] == CONVERSATION_GAP
    assert ts[1] - ts[0] == ts[2] - ts[1]  # turns of a session evenly spaced
    # Recall queries are the file's questions, never the adversarial category.
    queries = stream.queries(30)
    assert len(queries) == 30
    assert set(queries) == {"What did Ana say in talk 0?", "What did Cy say in talk 1?"}
    assert stream.queries(30) == queries  # seeded


def test_perf_on_locomo_turns_cuts_sizes_to_what_the_file_holds(tmp_path: Path) -> None:
    from enfold.bench import perf
    from enfold.errors import InputError

    data = _locomo_file(tmp_path / "lc.json", 120)  # 480 turns: 400 held back, 80 left
    out = tmp_path / "perf.json"
    proc = subprocess.run(
        [sys.executable, "-m", "enfold", "bench", "perf", "--sizes", "50,1000",
         "--embedder", "hash", "--data", str(data), "--out", str(out)],
        capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(out.read_text())
    assert result["config"]["sizes"] == [50, 80]
    assert result["config"]["stream"]["source"] == "locomo"
    assert result["config"]["stream"]["turns"] == 480
    assert any("hash 1,000 cut to 80 events" in n for n in result["notes"])
    metrics = result["systems"]["enfold"]
    assert metrics["nodes_by_kind"]["80"]["event"] == 80
    assert metrics["mean_words_per_text"]["50"] == pytest.approx(
        sum(len(e["text"].split()) for e in perf.locomo_stream(data).events(50)) / 50,
        abs=0.05)
    assert metrics["live_fold_ms_per_event"]["80"] > 0

    tiny = _locomo_file(tmp_path / "tiny.json", 50)  # 200 turns: nothing left to ingest
    with pytest.raises(InputError, match="200 turns; perf needs more than 400"):
        perf.run_perf([1000], ["hash"], data=tiny)  # the CLI prints InputErrors as one line


def test_perf_history_puts_the_turns_after_a_synthetic_past(tmp_path: Path) -> None:
    from enfold.bench import perf
    from enfold.errors import InputError

    data = _locomo_file(tmp_path / "lc.json", 110)  # 440 turns: 40 to ingest
    run = perf.run_perf([30], ["hash"], data=data, history=250)
    assert run.result["config"]["history"] == 250
    (r,) = run.sizes["hash"]
    assert r.events == 30 and r.completed
    # the past is neither timed nor replayed: the 30 events' texts and the phrases their
    # concepts were named from, not the past's 250
    assert 30 <= r.embedded_texts < 30 + 250
    assert r.nodes_by_kind["event"] == 280
    assert sum(p["ms_per_event"] for p in r.curve) > 0

    events = perf.locomo_stream(data).events(3)
    start = datetime.fromisoformat(events[0]["ts"]) + timedelta(days=400)
    moved = perf._after(events, start)
    assert datetime.fromisoformat(moved[0]["ts"]) == start
    assert all(datetime.fromisoformat(m["ts"]) - datetime.fromisoformat(e["ts"])
               == timedelta(days=400) for m, e in zip(moved, events, strict=True))
    assert perf._after(events, start - timedelta(days=800)) == events  # never moved back

    with pytest.raises(InputError, match="history needs data"):
        perf.run_perf([30], ["hash"], history=10)


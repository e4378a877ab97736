"""Smoke runs of the quality benchmarks through the real CLI (seconds, hashing embedder)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo10-dev.json"


def _run(*args: str) -> dict:
    proc = subprocess.run([sys.executable, "-m", "enfold", "--json", "bench", *args], check=False,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.mark.skipif(not LOCOMO.exists(), reason="LoCoMo dev copy not present")
def test_locomo_smoke(tmp_path: Path) -> None:
    out = tmp_path / "locomo.json"
    result = _run("locomo", "--data", str(LOCOMO), "--embedder", "hash", "--conversations", "1",
                  "--questions", "8", "--out", str(out))
    assert result["benchmark"] == "locomo"
    assert set(result["systems"]) == {"enfold", "bm25", "dense", "hybrid", "hybrid+nb2"}
    for system in result["systems"].values():
        for k in (5, 10, 20):
            row = system[f"recall@{k}"]
            assert set(row) == {"overall", "multi-hop", "temporal", "open-domain", "single-hop"}
            assert 0.0 <= row["overall"] <= 1.0
        assert system["recall@5"]["overall"] <= system["recall@20"]["overall"]
    assert result["systems"]["enfold"]["latency_ms"]["p50"] > 0
    assert json.loads(out.read_text())["benchmark"] == "locomo"
    assert out.with_suffix(".md").exists()


def test_collapse_smoke() -> None:
    result = _run("collapse", "--embedder", "hash")
    systems = result["systems"]
    assert systems["enfold"]["queries"] == systems["dense"]["queries"] >= 40
    assert 0.0 <= systems["enfold"]["misattribution_rate"] <= 1.0
    # the graph's attribution must do better than flat retrieval over the same utterances
    assert systems["enfold"]["misattributed"] < systems["dense"]["misattributed"]
    assert -1.0 <= result["mean_fact_claim_cosine"] <= 1.0

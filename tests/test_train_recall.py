"""The labelled questions ``enfold bench train-recall`` fits the ranking on: the collapse
probe's items as streams, each query's answer the fact or its holder's utterances."""

from __future__ import annotations

import json
from pathlib import Path

from enfold.bench.train_recall import collapse_streams


def test_a_collapse_item_is_a_stream_whose_answers_are_the_fact_or_the_holders_view(
        tmp_path: Path) -> None:
    item = {"id": "x1",
            "fact": {"speaker": "Gwyn", "text": "Top field had 38mm of rain since Sunday."},
            "claim": {"speaker": "Gwyn", "holder": "Gwyn", "text": "We'll lose the barley.",
                      "reported": False},
            "counter_claim": {"speaker": "Gwyn", "holder": "Dai",
                              "text": "Dai reckons the barley will be grand.",
                              "reported": True},
            "queries": [{"q": "How much rain fell on the top field?", "expects": "fact"},
                        {"q": "What does Dai think about the barley?", "expects": "claim",
                         "holder": "Dai"},
                        {"q": "What does Gwyn fear?", "expects": "claim", "holder": "Gwyn"}]}
    path = tmp_path / "probe.jsonl"
    path.write_text(json.dumps(item) + "\n", encoding="utf-8")
    (stream,) = collapse_streams(path)
    assert [e["id"] for e in stream.events] == ["fact", "claim0", "claim1"]
    assert [e["source"] for e in stream.events] == ["Gwyn"] * 3
    assert [q.gold for q in stream.questions] == [
        frozenset({"fact"}), frozenset({"claim1"}), frozenset({"claim0"})]
    assert {q.group for q in stream.questions} == {"collapse"}
    assert all(q.at.timestamp() > max(e["ts"] for e in stream.events)
               for q in stream.questions)

"""Hi-ToM: the loader, the records, and nested beliefs on hand-checked toy stories.

Every toy story starts with one chapter: Anna, Ben and Cara see the apple put in the
red_box; Anna moves it to the blue_box and leaves; Ben moves it to the green_box and leaves;
Cara leaves last, having seen everything. The exit order is Anna, Ben, Cara.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from enfold.bench.hitom import (
    SEMANTICS,
    BeliefTracker,
    Item,
    duplicate_conflicts,
    is_hitom,
    load_hitom,
    parse_question,
    story_lines,
    story_records,
)
from enfold.bench.hitom_graph import ingest_story, rebuild_records
from enfold.embed import make_embedder
from enfold.errors import InputError
from enfold.memory import Memory
from enfold.model import EdgeType, NodeKind
from enfold.store import open_store
from enfold.write.planner_local import LocalPlanner

CHAPTER = """\
1 Anna, Ben and Cara entered the kitchen.
2 The apple is in the red_box.
3 Anna moved the apple to the blue_box.
4 Anna exited the kitchen.
5 Ben moved the apple to the green_box.
6 Ben exited the kitchen.
7 Cara made no movements and stayed in the kitchen for 1 minute.
8 Cara exited the kitchen.
9 Anna, Ben and Cara entered the waiting_room.
"""
# Cara, who left last, lies to everyone: Anna and Ben left earlier and trust her.
PUBLIC_LATE = CHAPTER + "10 Cara publicly claimed that apple is in the yellow_box.\n"
# Anna, who left first, lies to everyone: nobody trusts her.
PUBLIC_EARLY = CHAPTER + "10 Anna publicly claimed that apple is in the yellow_box.\n"
# Ben tells Anna (who trusts him); Anna tells Cara (who does not trust her).
PRIVATE = CHAPTER + (
    "10 Ben privately told Anna that the apple is in the yellow_box.\n"
    "11 Anna privately told Cara that the apple is in the red_box.\n")


def ask(story: str, question: str, semantics: str = "strict") -> str:
    tracker = BeliefTracker(SEMANTICS[semantics]).run(story_records(story_lines(story)))
    return tracker.answer(*parse_question(question)).container


# ------------------------------------------------------------------ grammar and records
def test_questions_of_every_order() -> None:
    assert parse_question("Where is the apple really?") == ((), "apple")
    assert parse_question("Where does Anna really think the apple is?") == (("Anna",), "apple")
    assert parse_question("Where does Anna think Ben thinks Cara thinks Anna thinks the "
                          "sweet_potato is?") == (("Anna", "Ben", "Cara", "Anna"), "sweet_potato")
    with pytest.raises(InputError, match="not a Hi-ToM question"):
        parse_question("Where will Anna look for the apple?")


def test_records_carry_who_perceived_each_line() -> None:
    records = story_records(story_lines(PRIVATE))
    by_line = {r.line: r for r in records}
    assert by_line[1].agents == ("Anna", "Ben", "Cara") and by_line[1].room == "kitchen"
    assert by_line[3].witnesses == {"Anna", "Ben", "Cara"}
    assert by_line[5].witnesses == {"Ben", "Cara"}  # Anna has left
    assert (by_line[5].obj, by_line[5].container, by_line[5].room) == (
        "apple", "green_box", "kitchen")
    assert by_line[7].action == "stay"
    told = by_line[11]
    assert (told.action, told.actor, told.addressee, told.audience) == (
        "claim", "Anna", "Cara", "private")
    assert told.witnesses == {"Anna", "Cara"}  # heard by the addressee only
    shout = story_records(story_lines(PUBLIC_LATE))[-1]
    assert shout.audience == "public" and shout.witnesses == {"Anna", "Ben", "Cara"}
    with pytest.raises(InputError, match="line 2: not a Hi-ToM sentence"):
        story_records(story_lines("1 Anna entered the kitchen.\n2 Anna juggled the apple.\n"))


# ------------------------------------------------------------------ rules
def test_late_exit_an_agent_witnesses_everything_before_it_leaves() -> None:
    assert ask(CHAPTER, "Where is the apple really?") == "green_box"
    assert ask(CHAPTER, "Where does Anna really think the apple is?") == "blue_box"
    assert ask(CHAPTER, "Where does Cara really think the apple is?") == "green_box"
    # Anna left before Ben's move, and both know it.
    assert ask(CHAPTER, "Where does Ben think Anna thinks the apple is?") == "blue_box"
    assert ask(CHAPTER, "Where does Anna think Ben thinks the apple is?") == "blue_box"
    # Ben and Cara both saw Ben's move, and saw each other see it.
    assert ask(CHAPTER, "Where does Ben think Cara thinks the apple is?") == "green_box"
    assert ask(CHAPTER, "Where does Cara think Ben thinks Anna thinks the apple is?") == (
        "blue_box")
    assert ask(CHAPTER, "Where does Anna think Cara thinks Ben thinks Anna thinks the apple "
               "is?") == "blue_box"


def test_generator_rules_update_a_move_only_in_list_order() -> None:
    # The generator's combinations over [Cara, Ben]: "Cara thinks Ben" is set by Ben's
    # move, "Ben thinks Cara" is not (it keeps Anna's move), nor "Cara > Ben > Anna".
    assert ask(CHAPTER, "Where does Cara think Ben thinks the apple is?", "generator") == (
        "green_box")
    assert ask(CHAPTER, "Where does Ben think Cara thinks the apple is?", "generator") == (
        "blue_box")
    assert ask(CHAPTER, "Where does Cara think Ben thinks Anna thinks the apple is?",
               "generator") == "red_box"


def test_public_claim_by_a_later_leaver_is_believed() -> None:
    story = PUBLIC_LATE
    assert ask(story, "Where does Anna really think the apple is?") == "yellow_box"
    assert ask(story, "Where does Ben really think the apple is?") == "yellow_box"
    # what an agent says does not change its own belief
    assert ask(story, "Where does Cara really think the apple is?") == "green_box"
    assert ask(story, "Where does Anna think Cara thinks the apple is?") == "yellow_box"
    assert ask(story, "Where does Cara think Anna thinks the apple is?") == "yellow_box"
    # everyone heard it and knows who trusts whom
    assert ask(story, "Where does Ben think Anna thinks the apple is?") == "yellow_box"
    assert ask(story, "Where does Cara think Ben thinks Anna thinks the apple is?") == (
        "yellow_box")
    assert ask(story, "Where does Anna think Ben thinks Cara thinks Ben thinks the apple "
               "is?") == "yellow_box"
    # the generator changes no third party's view of a listener
    assert ask(story, "Where does Ben think Anna thinks the apple is?", "generator") == (
        "blue_box")
    assert ask(story, "Where does Anna really think the apple is?", "generator") == (
        "yellow_box")


def test_distrust_of_an_earlier_leaver() -> None:
    story = PUBLIC_EARLY
    assert ask(story, "Where does Ben really think the apple is?") == "green_box"
    assert ask(story, "Where does Cara really think the apple is?") == "green_box"
    assert ask(story, "Where does Anna really think the apple is?") == "blue_box"
    # Ben does not take Anna's words for her belief, and Anna knows Ben will not believe her
    assert ask(story, "Where does Ben think Anna thinks the apple is?") == "blue_box"
    assert ask(story, "Where does Anna think Ben thinks the apple is?") == "blue_box"
    # the generator's speaker takes every listener to believe it
    assert ask(story, "Where does Anna think Ben thinks the apple is?", "generator") == (
        "yellow_box")


def test_private_claims_are_heard_by_the_addressee_only() -> None:
    story = PRIVATE
    assert ask(story, "Where does Anna really think the apple is?") == "yellow_box"
    assert ask(story, "Where does Anna think Ben thinks the apple is?") == "yellow_box"
    assert ask(story, "Where does Ben think Anna thinks the apple is?") == "yellow_box"
    assert ask(story, "Where does Ben really think the apple is?") == "green_box"
    # Cara did not hear Ben, and does not trust Anna, who left before her
    assert ask(story, "Where does Cara think Anna thinks the apple is?") == "blue_box"
    assert ask(story, "Where does Cara really think the apple is?") == "green_box"
    assert ask(story, "Where does Anna think Cara thinks the apple is?") == "blue_box"
    # Ben heard neither claim to Cara
    assert ask(story, "Where does Ben think Cara thinks the apple is?") == "green_box"
    assert ask(story, "Where does Anna think Cara thinks the apple is?", "generator") == (
        "red_box")


def test_answer_carries_its_operator_path() -> None:
    tracker = BeliefTracker(SEMANTICS["strict"]).run(story_records(story_lines(PUBLIC_LATE)))
    answer = tracker.answer(("Ben", "Anna"), "apple")
    assert answer.container == "yellow_box"
    assert answer.path[0].startswith("L2 saw (Anna, Ben, Cara): The apple is in the red_box")
    assert any(p.startswith("L10 heard (public)") and "Anna trusts Cara" in p
               for p in answer.path)
    assert answer.path[-1] == "belief of Ben > Anna: yellow_box"
    assert tracker.answer((), "apple").path[-1] == "reality: green_box"
    with pytest.raises(InputError, match="no record places the pear"):
        tracker.answer(("Anna",), "pear")


# ------------------------------------------------------------------ loader
def _item(story: str, question: str, answer: str, **extra: Any) -> dict[str, Any]:
    return {"prompting_type": "VP", "deception": "deception" in extra, "story_length": 1,
            "question_order": len(parse_question(question)[0]), "sample_id": extra.get("id", 0),
            "story": story, "question": question,
            "choices": "A. red_box, B. blue_box, C. green_box, D. yellow_box",
            "answer": answer}


def _write(tmp_path: Path, items: list[dict[str, Any]]) -> Path:
    path = tmp_path / "toy.json"
    path.write_text(json.dumps({"data": items}), encoding="utf-8")
    return path


def test_loader_parses_the_hitom_format(tmp_path: Path) -> None:
    header = ("Read the following story and answer the multiple-choice question. Please "
              "provide answer without explanations.\n")
    path = _write(tmp_path, [
        _item(header + CHAPTER + "\n", "Where is the apple really?", "green_box"),
        _item(PUBLIC_LATE + "\n***", "Where does Ben think Anna thinks the apple is?",
              "yellow_box", deception=True, id=7),
    ])
    assert is_hitom(path)
    items = load_hitom(path)
    assert [(i.sample_id, i.order, i.deception, i.length, i.prompting) for i in items] == [
        (0, 0, False, 1, "VP"), (7, 2, True, 1, "VP")]
    assert items[0].choices == ("red_box", "blue_box", "green_box", "yellow_box")
    assert story_lines(items[0].story)[0] == (1, "Anna, Ben and Cara entered the kitchen.")
    assert story_lines(items[1].story)[-1][0] == 10  # the "***" separator is not a line
    toy_txt = tmp_path / "toy.txt"
    toy_txt.write_text("1 Anna entered the kitchen.\n", encoding="utf-8")
    assert not is_hitom(toy_txt) and not is_hitom(tmp_path)


@pytest.mark.parametrize(("data", "fragment"), [
    ([{"story": "1 Anna entered the kitchen.", "question": "Where is the apple really?"}],
     "missing answer"),
    ([{"story": "", "question": "q", "answer": "a", "question_order": 7, "deception": False,
       "story_length": 1}], "question_order 7"),
    ({"items": []}, "expected"),
])
def test_loader_rejects_malformed_items(tmp_path: Path, data: Any, fragment: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data if isinstance(data, dict) else {"data": data}), "utf-8")
    with pytest.raises(InputError, match=fragment):
        load_hitom(path)


def test_duplicate_conflicts_bound_the_accuracy() -> None:
    def item(sample: int, answer: str) -> Item:
        return Item(sample, CHAPTER, "Where does Ben think Cara thinks the apple is?", answer,
                    (), 2, False, 1, "VP" if sample else "CoTP")

    found = duplicate_conflicts([item(0, "green_box"), item(1, "blue_box")])
    assert found["pairs"] == 1 and found["ceiling"] == 0.5
    assert duplicate_conflicts([item(0, "green_box"), item(1, "green_box")])["pairs"] == 0


# ------------------------------------------------------------------ through the graph
def test_records_read_back_from_the_graph() -> None:
    embedder = make_embedder("hash")
    memory = Memory(open_store("memory:"), embedder=embedder,
                    planners=[LocalPlanner(None, embedder)])
    try:
        lines = story_lines(PRIVATE)
        ingest_story(memory, lines, namespace="toy")
        graph = memory.graph("toy")
        claims = [n for n in graph.nodes.values() if n.kind is NodeKind.CLAIM
                  and n.attrs.get("audience") == "private"]
        assert sorted((str(c.attrs["holder"]), str(c.attrs["addressee"])) for c in claims) == [
            ("Anna", "Cara"), ("Ben", "Anna")]
        assert all(any(e.type is EdgeType.HOLDS for e in graph.in_edges(c.id)) for c in claims)
        rebuilt = rebuild_records(graph)
        assert rebuilt == story_records(lines)
        tracker = BeliefTracker(SEMANTICS["strict"]).run(rebuilt)
        assert tracker.answer(("Cara", "Anna"), "apple").container == "blue_box"
        assert tracker.answer(("Anna",), "apple").container == "yellow_box"
    finally:
        memory.close()


def test_hitom_cli_smoke(tmp_path: Path) -> None:
    path = _write(tmp_path, [
        _item(PUBLIC_LATE, "Where is the apple really?", "green_box"),
        _item(PUBLIC_LATE, "Where does Ben think Anna thinks the apple is?", "yellow_box",
              deception=True, id=1),
    ])
    out = tmp_path / "hitom.json"
    proc = subprocess.run([sys.executable, "-m", "enfold", "--json", "bench", "tomi", "--data",
                           str(path), "--out", str(out)],
                          check=False, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["benchmark"] == "hitom" and result["config"]["format"] == "hitom"
    assert set(result["systems"]) == {"enfold", "enfold_generator"}
    strict = result["systems"]["enfold"]
    assert strict["accuracy"] == 1.0 and strict["n"] == 2
    assert strict["by_order"] == {"0": 1.0, "2": 1.0}
    assert set(strict) >= {"by_deception", "by_length", "by_prompting"}
    assert result["systems"]["enfold_generator"]["by_order"] == {"0": 1.0, "2": 0.0}
    assert result["records_mismatched"] == 0 and result["stories"] == 1
    assert "GPT-4" in result["published"]
    assert out.with_suffix(".md").exists()

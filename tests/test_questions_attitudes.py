"""Questions about how someone feels toward something, phrased without a stance word of
the claim lexicon: a verb of liking or judging ("Who admires ...", "Does Ayo resent ..."),
a reaction ("How did Mehmet react to ..."), a side taken as a noun ("Is Lior a fan of
..."), a feeling with its object ("Is Hyun happy with ...", "Which of them is relaxed about
..."), and who among a group holds a view ("Which of them prefers ..."). A question about
who holds a view is answered by the view's utterance: its holder is the person asked for.
"""

from __future__ import annotations

from typing import Any

import pytest

from enfold import Memory
from enfold.recall.analyze import analyze
from enfold.text.stance import asks_whose_view, view_holder


@pytest.mark.parametrize(("question", "holder"), [
    ("How did Mehmet react to the new parking rules?", "Mehmet"),
    ("How did Aroha respond to the budget cuts?", "Aroha"),
    ("Is Lior a fan of the open-plan office?", "Lior"),
    ("Is Tamsin a critic of the merger?", "Tamsin"),
    ("Does Ayo resent the extra weekend shifts?", "Ayo"),
    ("Does Grete appreciate the new scheduling tool?", "Grete"),
    ("Is Hyun happy with the replacement boiler?", "Hyun"),
    ("Is Sven happy with his rota day?", "Sven"),  # (the tagger reads "Sven" as an adverb)
])
def test_the_holder_of_a_feeling_toward_something(question: str, holder: str) -> None:
    assert view_holder(question) == holder
    analysis = analyze(question)
    assert analysis.holder == holder and analysis.asks_opinion


@pytest.mark.parametrize("question", [
    "How did Mehmet get to the airport?",
    "Is Lior a member of the rowing club?",
    "Did Aroha respond to the landlord's email?",
    "When did Ayo start the weekend shifts?",
    "Did Ayo respect the deadline?",
    "Does Ayo tolerate lactose?",
    "Is Lior the champion of the league?",
])
def test_the_same_people_asked_for_what_happened(question: str) -> None:
    assert view_holder(question) is None
    assert not analyze(question).asks_opinion


@pytest.mark.parametrize(("question", "asks"), [
    ("Who resents the longer opening hours?", True),
    ("Who admires the new mayor's transport plan?", True),
    ("Who is opposed to the ring road?", True),
    ("Which of them prefers the morning slot?", True),
    ("Which of them is relaxed about the rent going up?", True),
    ("Who is a supporter of the four-day week?", True),
    ("Which of them drove to Leeds?", False),
    ("Who is a fan of jazz?", True),
    ("Which one of them is happy with the rota?", True),
    ("Who was charged with the burglary?", False),
    ("Who welcomed the guests at the door?", False),
    ("Who was told about the meeting?", False),
    ("Who has written about the merger?", False),
    ("Who is familiar with the area?", False),
    ("Who is busy with the move?", False),
    ("Who is sick with the flu?", False),
])
def test_who_among_them_holds_a_view(question: str, asks: bool) -> None:
    assert asks_whose_view(question) is asks
    analysis = analyze(question)
    assert analysis.asks_opinion is asks and analysis.asks_holder is asks


def test_who_holds_a_view_is_answered_by_the_view_not_by_a_fact_naming_someone(
        minilm: Any) -> None:
    """The fact names a person (the defendant), so "who" would find its answer there; but
    the question asks who holds a view, and the view's utterance answers it."""
    mem = Memory.open("memory:", embedder=minilm, planner="local")
    mem.add("The jury in the Hollis trial retired at 2pm on Wednesday and returned a "
            "unanimous verdict on Thursday morning.", source="Abena", ts=1_700_000_000)
    mem.add("That verdict is rock solid. Any appeal is going nowhere.",
            source="Olusegun", ts=1_700_003_600)
    mem.add("Pryce reckons the verdict won't survive an appeal.", source="Abena",
            ts=1_700_007_200)
    pack = mem.recall("Who believes the Hollis verdict will stand?", k=3, touch=False)
    assert pack.evidence[0].source == "Olusegun"

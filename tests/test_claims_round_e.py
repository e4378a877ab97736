"""Regression tests for the claim and question families of collapse round e (sentences of
our own, not the probes'): perceiving verbs that locate rather than judge, raising
passives, view nouns held as an object, predicates the parser hangs on a name, handles and
titles as the holders a question names."""

from __future__ import annotations

import pytest

from enfold.recall.analyze import analyze
from enfold.text.claims import extract_claims
from enfold.text.stance import reports_another, view_holder


@pytest.mark.parametrize("text", [
    "Gutted. The pier survived a century of storms and they couldn't find the money to fix it?",
    "Marek found the spare key under the doormat.",
])
def test_finding_something_reports_no_view(text: str) -> None:
    assert not reports_another(text)


@pytest.mark.parametrize(("text", "holder"), [
    ("Marek finds the new timetable baffling.", "Marek"),
    ("Marek feels that the fares went up too fast.", "Marek"),
])
def test_finding_something_so_is_a_view(text: str, holder: str) -> None:
    assert reports_another(text)
    claims = extract_claims(text, "Noor")
    assert claims and claims[0].holder == holder


@pytest.mark.parametrize("text", [
    "Tomasz is supposed to stretch every morning before his run.",
    "The ferry is expected to sail at noon.",
    "The landlord is said to be selling up.",
])
def test_a_raising_passive_holds_no_view(text: str) -> None:
    assert not reports_another(text)
    assert extract_claims(text, "Noor") == []


@pytest.mark.parametrize(("text", "holder", "predicate"), [
    ("I have my doubts the courier ever rang the bell.", "Noor", "doubt"),
    ("Marek voiced his concerns about the new rota.", "Marek", "worry"),
    ("I have a feeling the match will be called off.", "Noor", "think"),
])
def test_a_view_noun_held_as_an_object(text: str, holder: str, predicate: str) -> None:
    claims = extract_claims(text, "Noor")
    assert claims and (claims[0].holder, claims[0].predicate) == (holder, predicate)


def test_a_view_noun_for_a_thing_is_no_view() -> None:
    assert extract_claims("We have a view of the harbour from the kitchen.", "Noor") == []


@pytest.mark.parametrize(("question", "holder"), [
    ("Is Tomasz optimistic about the new coach?", "Tomasz"),
    ("Is kai.runs proud of the half marathon?", "Kai.runs"),
    ("How often is Tomasz supposed to stretch?", None),
    ("When is the ferry expected to sail?", None),
])
def test_view_questions_read_from_the_parse(question: str, holder: str | None) -> None:
    assert view_holder(question) == holder


def test_a_title_of_a_known_person_names_the_holder() -> None:
    known = {"vicar", "okafor", "vicar okafor"}
    assert view_holder("When does the vicar expect the roof to be fixed?", known) == "Vicar"
    assert (view_holder("Does the vicar foresee the hall closing?", known) or "").lower() \
        == "vicar"
    assert view_holder("When does the vicar expect the roof to be fixed?") is None
    assert view_holder("Is the vicar in on Sunday?", known) is None


def test_what_a_thing_looks_like_asks_for_no_view() -> None:
    a = analyze("When was the fence painted and what does it look like now?")
    assert a.holder is None and not a.asks_opinion
    assert analyze("What does Marek think of the fence?").holder == "Marek"


@pytest.mark.parametrize(("question", "holder"), [
    ("Would Tomasz stay at that hostel again?", "Tomasz"),
    ("When would Tomasz arrive?", None),
])
def test_would_a_person_do_something_asks_for_their_disposition(
        question: str, holder: str | None) -> None:
    assert view_holder(question) == holder

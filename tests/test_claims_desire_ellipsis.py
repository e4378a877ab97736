"""Regression tests for wanting, dropped subjects and view questions (sentences of our own,
not from the probe's data files):

* "X wants NP / NP done" is X's preference; an infinitive of the holder's own act ("hoping
  to catch", "wants to drive", "keen to try") is a plan, not a view;
* the -ing and -s forms of the stance verbs are spelt by rule ("being" is not "bet");
* a stance word opening a sentence with its subject dropped ("Pretty sure ...", "Doubt
  ...", "Must be the ...") is the writer's view; an imperative is not;
* the holder a question asks about is the one who takes a side on another's view ("Does
  A share B's worry?"); a coordinated wh-question is not a proposition held; "who" as the
  subject of a judging verb asks for a view.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from enfold.recall.analyze import analyze
from enfold.text.annotate import annotate
from enfold.text.claims import extract_claims
from enfold.text.stance import asks_whose_view, view_holder

_AT = datetime(2026, 3, 14, 12, 0)


@pytest.mark.parametrize(("text", "holder"), [
    ("Ingrid wants the blue tiles in the bathroom rather than the grey ones.", "Ingrid"),
    ("Bartek wants the fence repainted before the buyers come round.", "Bartek"),
])
def test_wanting_a_state_of_affairs_is_a_preference(text: str, holder: str) -> None:
    claims = extract_claims(text, "Noor")
    assert claims and claims[0].holder == holder and claims[0].predicate == "prefer"


@pytest.mark.parametrize("text", [
    "Kofi wants to drive up to Inverness on Friday.",
    "I'm hoping to catch the 7:40 ferry tomorrow.",
    "Sunniva is keen to try the bouldering wall on Saturday.",
    "We're eager to get the kitchen finished before Easter.",
])
def test_wanting_ones_own_next_act_is_a_plan_not_a_view(text: str) -> None:
    assert not annotate(text, ts=_AT, speaker="Noor").claims


def test_hoping_about_how_things_go_is_still_a_view() -> None:
    claims = extract_claims("I'm hoping the rain holds off for the street party.", "Noor")
    assert claims and claims[0].predicate == "hope" and claims[0].holder == "Noor"


def test_being_is_not_a_form_of_bet() -> None:
    from enfold.text.stance import _ING_FORMS, _THIRD_FORMS

    assert "being" not in _ING_FORMS
    assert _ING_FORMS["betting"] == "bet" and _ING_FORMS["hoping"] == "hope"
    assert _ING_FORMS["preferring"] == "prefer" and _THIRD_FORMS["worries"] == "worry"
    assert not extract_claims("I'm so much calmer being out of that flat.", "Noor")


@pytest.mark.parametrize("text", [
    "The fridge is humming again. Pretty sure it's the compressor going.",
    "Not convinced the new bus timetable will last the year.",
    "Doubt the landlord will fix the damp before winter.",
    "Must be the fuse again, the whole landing went dark.",
])
def test_a_dropped_subject_is_the_writer(text: str) -> None:
    claims = annotate(text, ts=_AT, speaker="Noor").claims
    assert claims and all(c.holder == "Noor" for c in claims)


@pytest.mark.parametrize("text", [
    "Be sure to water the tomatoes twice a day.",
    "Has to be handed in by Friday.",
])
def test_imperatives_and_duties_with_no_subject_are_not_views(text: str) -> None:
    assert not extract_claims(text, "Noor")


@pytest.mark.parametrize(("question", "holder"), [
    ("Does Farida share Tomas's worry about the mortgage?", "Farida"),
    ("Does Hana buy Theo's excuse for missing the rehearsal?", "Hana"),
    ("What is Rob's concern about the lease?", "Rob"),
    ("Did Ravi mention Kim's worry?", "Kim"),
])
def test_the_holder_is_who_takes_a_side_on_anothers_view(question: str, holder: str) -> None:
    assert view_holder(question) == holder


def test_a_coordinated_wh_question_is_not_a_held_proposition() -> None:
    q = "Which flat did Kemi rent, how big is it, and what does it cost?"
    assert view_holder(q) is None
    assert not analyze(q).asks_opinion


@pytest.mark.parametrize(("question", "asks"), [
    ("Who considers the harbour mural the best thing in town?", True),
    ("Who blames the council for the potholes?", True),
    ("Who is worried about the roof?", True),
    ("Who fixed the boiler?", False),
    ("Who did Sam meet in Leeds?", False),
])
def test_who_with_a_judging_verb_asks_for_a_view(question: str, asks: bool) -> None:
    assert asks_whose_view(question) is asks
    assert analyze(question).asks_opinion is asks


def test_an_amount_in_a_clause_of_staying_or_becoming_is_a_stated_particular() -> None:
    # "stayed dry" states what happened, it does not judge it (only a copula's adjective
    # does: "is far too long"): the count in that clause is a particular told beside the view
    ann = annotate("I think the roof repair was a bargain. The loft stayed dry through 3 "
                   "storms.", ts=_AT, speaker="Noor")
    assert ann.claims and ann.states_facts


def test_hoping_for_the_listeners_wellbeing_is_a_wish_not_a_view() -> None:
    assert not extract_claims("Hope your knee is on the mend!", "Noor")


@pytest.mark.parametrize(("text", "holder"), [
    ("Piotr would rather we postponed the launch until the audit is done.", "Piotr"),
    ("Elif would sooner sell the van than pay for another MOT.", "Elif"),
    ("Priya is of the opinion that the lease is a trap.", "Priya"),
])
def test_preferences_and_held_opinions_by_construction(text: str, holder: str) -> None:
    claims = extract_claims(text, "Marta")
    assert claims and claims[0].holder == holder


def test_a_role_of_the_view_is_not_the_speakers_view() -> None:
    from enfold.text.stance import reports_another

    assert reports_another("The GP was of the view that the rash is viral.")
    assert not reports_another("I am of the view that the rash is viral.")


@pytest.mark.parametrize(("text", "holder"), [
    ("In Kemi's view, the landlord is bluffing about the repairs.", "Kemi"),
    ("In my experience, the night bus is quicker than a cab.", "Marta"),
])
def test_a_framing_phrase_names_the_holder(text: str, holder: str) -> None:
    claims = extract_claims(text, "Marta")
    assert claims and claims[0].holder == holder


def test_a_place_phrase_is_no_framing() -> None:
    assert not extract_claims("I left the keys in my bag by the door.", "Marta")

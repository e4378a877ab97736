"""annotate(): one event's times, people, claims, obligations and cues together."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from enfold.text.annotate import (
    Annotation,
    annotate,
    find_obligations,
    has_causal_cue,
    has_resolution_cue,
)

TS = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # a Monday


def test_everything_at_once() -> None:
    a = annotate(
        "Gina thinks the grant is a long shot, so I need to submit it by the 15th.",
        ts=TS,
        speaker="Maya",
        known_people=["Gina"],
    )
    assert isinstance(a, Annotation)
    assert [(t.expression, t.value, t.is_deadline) for t in a.times] == [
        ("by the 15th", "2023-05-15", True)
    ]
    assert [(p.name, p.role) for p in a.people] == [("Maya", "speaker"), ("Gina", "mentioned")]
    assert [(c.holder, c.predicate, c.target) for c in a.claims] == [
        ("Gina", "think", "the grant")
    ]
    assert len(a.obligations) == 1
    ob = a.obligations[0]
    assert ob.text == "I need to submit it by the 15th"
    assert ob.due is not None and ob.due.value == "2023-05-15"
    assert a.causal is True
    assert a.resolution is False


def test_plain_text_has_nothing() -> None:
    a = annotate("The weather was lovely and we walked along the river.", ts=TS, speaker="Maya")
    assert a == Annotation(
        times=(), people=a.people, claims=(), obligations=(), causal=False, resolution=False
    )
    assert [p.role for p in a.people] == ["speaker"]


@pytest.mark.parametrize(
    ("text", "obligation", "due"),
    [
        ("I need to submit the grant application by the 15th.",
         "I need to submit the grant application by the 15th", "2023-05-15"),
        ("Remind me to call mom tomorrow at 3pm", "Remind me to call mom tomorrow at 3pm",
         "2023-05-09T15:00"),
        ("Don't forget to water the plants!", "Don't forget to water the plants", None),
        ("I have to renew my passport before June.", "I have to renew my passport before June",
         "2023-06"),
        ("We've got to fix the roof", "We've got to fix the roof", None),
        ("I really need to call Gina next week", "I really need to call Gina next week",
         "2023-05-15/2023-05-21"),
        ("I'm supposed to present on Friday.", "I'm supposed to present on Friday",
         "2023-05-12"),
        ("The deadline is next Friday, sadly.", "The deadline is next Friday, sadly",
         "2023-05-12"),
        ("The report is due tomorrow.", "The report is due tomorrow", "2023-05-09"),
        ("Send the invoices by Friday.", "Send the invoices by Friday", "2023-05-12"),
        ("Submit 3 reports by Friday.", "Submit 3 reports by Friday", "2023-05-12"),
        ("I must call the bank.", "I must call the bank", None),
        ("Please remind me to book the hotel.", "remind me to book the hotel", None),
        ("Can you remind me to book the hotel?", "remind me to book the hotel", None),
        # a deadline-flagged time bounding a verb still to be done, or "due"
        ("My boss expects the quarterly report by Friday.",
         "My boss expects the quarterly report by Friday", "2023-05-12"),
        ("Consent forms: both due Monday.", "Consent forms: both due Monday", "2023-05-15"),
        ("We'll have the flat painted by Saturday.", "We'll have the flat painted by Saturday",
         "2023-05-13"),
    ],
)
def test_obligations(text: str, obligation: str, due: str | None) -> None:
    a = annotate(text, ts=TS, speaker="Maya")
    assert [o.text for o in a.obligations] == [obligation]
    ob = a.obligations[0]
    assert text[ob.start : ob.end].strip() == ob.text
    assert (ob.due.value if ob.due else None) == due


@pytest.mark.parametrize(
    "text",
    [
        "I don't need to go.",
        "I had to leave early yesterday.",
        "You must be tired!",
        "I must have left it at home.",
        "Do you need to borrow it?  No thanks.",
        "The train was late due to snow.",
        "I gotta say, I really like your recipe.",
        "I got to teach people vegan recipes on my own show.",
        "These moments remind me to slow down.",
        "It's what we still have to do.",
        # a deadline-flagged time already past when stated reports, it does not commit
        "We launched! 1,200 downloads by 9am, 4.7 stars, and one furious review.",
        "Good week: we hit 300 signups by Friday.",
        # a time in a verbless note, or bounding a verb told in the past, reports a state
        "Nine degrees in the greenhouse by midnight, frost on the cold frames.",
        "Four fire engines at the depot by 6pm.",
        "The movers had the sofa out of the flat by 11am.",
        # a time inside someone else's belief is their prediction, not a task
        "The plumber swears the boiler will be working again by Thursday.",
    ],
)
def test_not_obligations(text: str) -> None:
    assert annotate(text, ts=TS, speaker="Maya").obligations == ()


def test_past_times_are_not_due_dates_unless_deadlines() -> None:
    obs = find_obligations(
        "I need to follow up on what we discussed yesterday",
        annotate("I need to follow up on what we discussed yesterday", ts=TS, speaker=None).times,
        after=TS,
    )
    assert len(obs) == 1 and obs[0].due is None


def test_one_obligation_per_clause() -> None:
    a = annotate("I need to pay rent by Friday, the deadline.", ts=TS, speaker="Maya")
    assert len(a.obligations) == 1


@pytest.mark.parametrize(
    ("text", "causal"),
    [
        ("The launch slipped because of QA.", True),
        ("It rained, so we stayed in.", True),
        ("So I decided to quit.", True),
        ("As a result, the launch moved.", True),
        ("The delay was due to QA.", True),
        ("That led to a long argument.", True),
        ("That's why I left.", True),
        ("The storm caused an outage.", True),
        ("I was so happy today!", False),
        ("So cool, congrats!", False),
        ("We walked and talked.", False),
    ],
)
def test_causal_cues(text: str, causal: bool) -> None:
    assert has_causal_cue(text) is causal


@pytest.mark.parametrize(
    ("text", "resolution"),
    [
        ("I finally submitted the report!", True),
        ("Finished the slides last night.", True),
        ("I'm done with the slides.", True),
        ("Sent it off to the editor this morning.", True),
        ("I booked the hotel for Vienna.", True),
        ("The application is done!", True),
        ("I haven't finished it yet.", False),
        ("I didn't submit it.", False),
        ("Did you finish the book?", False),
        ("I need to submit the report.", False),
        ("I love painting.", False),
        ("Let me know what you think when you're finished!", False),
    ],
)
def test_resolution_cues(text: str, resolution: bool) -> None:
    assert has_resolution_cue(text) is resolution


def test_naive_ts_is_utc_and_annotation_is_frozen() -> None:
    a = annotate("see you tomorrow", ts=datetime(2023, 5, 8, 23, 0), speaker=None)
    assert a.times[0].value == "2023-05-09"
    with pytest.raises(AttributeError):
        a.causal = True  # type: ignore[misc]

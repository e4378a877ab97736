"""Day and month names that stand alone: "Wed" and "Sat" without "on", a month's name as a
noun's modifier ("the October payroll"), "since march" in lower case; and the words they
can also be ("to wed", "Sat in traffic", "the Sun", "this may be")."""

from __future__ import annotations

from datetime import datetime

import pytest

from enfold.text.times import extract_times


@pytest.mark.parametrize("text, ts, expression, value", [
    ("Fridge was delivered Wed and it's already humming", "2027-03-27T13:30", "Wed",
     "2027-03-24"),
    ("Wed's meeting ran long, sorry I missed your call", "2026-03-05T10:30", "Wed",
     "2026-03-04"),
    ("back to school wed, kids are not ready", "2026-01-04T08:45", "wed", "2026-01-07"),
    ("bbq at ours Sat?", "2026-01-06T08:45", "Sat", "2026-01-10"),
    ("been on early shifts since march and i'm done in", "2027-07-24T14:00", "march",
     "2027-03"),
    ("in may we fly to Rome", "2027-01-10T14:00", "may", "2027-05"),
    # a month's name alone: the nearest such month, unless the clause points one way
    ("The October payroll error affects 38 employees.", "2026-11-02T14:00", "October",
     "2026-10"),
    ("November was brutal at work.", "2027-01-10T14:00", "November", "2026-11"),
    ("We'll do the December party at ours.", "2027-01-10T14:00", "December", "2027-12"),
    ("The December payment is due.", "2026-01-14T09:00", "December", "2026-12"),
    # a bare day number after "on the", a holiday's full name, a letter's own date
    ("I picked the parcel up on the 25, and it was fine.", "2025-04-28T09:00", "the 25",
     "2025-04-25"),
    ("All US offices will be closed for Martin Luther King Jr. Day.", "2026-01-16T15:40",
     "Martin Luther King Jr. Day", "2026-01-19"),
    ("Please reply within 14 days from the date of this letter.", "2026-10-27T09:30",
     "14 days from the date of this letter", "2026-11-10"),
])
def test_a_name_alone_is_a_time(text: str, ts: str, expression: str, value: str) -> None:
    found = [(m.expression, m.value) for m in extract_times(text, datetime.fromisoformat(ts))]
    assert (expression, value) in found


@pytest.mark.parametrize("text", [
    "they plan to wed.",
    "Sat in traffic for an hour.",
    "I read it in the Sun.",
    "this may be late",
    "April and June came round for tea",
    "we will march on the town hall",
    "we waited on the 25 bus for an hour",
    "I'm on the 3.30 train home.",
    "We got wed.",
    "The next may be better.",
    "The money coming in may not be enough.",
    "I lost 10kg in three months.",
    "The October Revolution changed everything.",
    "I met January Jones at the premiere.",
])
def test_the_same_words_as_words_are_no_time(text: str) -> None:
    assert extract_times(text, datetime(2026, 1, 4, 8, 45)) == []

"""Time expressions resolved against a fixed event time: Monday 2023-05-08 13:56 UTC."""

from __future__ import annotations

import math
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from enfold.errors import InputError
from enfold.text import times as timex
from enfold.text.times import TimeMention, extract_times, parse_timestamp

REF = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # a Monday


def one(text: str, ref: datetime = REF) -> TimeMention:
    found = extract_times(text, ref)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    ("text", "expression", "value", "granularity"),
    [
        ("I went to a support group yesterday.", "yesterday", "2023-05-07", "day"),
        ("See you today", "today", "2023-05-08", "day"),
        ("It opens tomorrow!", "tomorrow", "2023-05-09", "day"),
        ("I saw him last Friday", "last Friday", "2023-05-05", "day"),
        ("Let's meet next Friday", "next Friday", "2023-05-12", "day"),
        ("Let's meet this Friday", "this Friday", "2023-05-12", "day"),
        ("Any plans this weekend?", "this weekend", "2023-05-13/2023-05-14", "week"),
        ("Next month will be busy", "Next month", "2023-06", "month"),
        ("Last year was rough", "Last year", "2022", "year"),
        ("I moved here two weeks ago", "two weeks ago", "2023-04-24", "day"),
        ("a couple of weeks ago we met", "a couple of weeks ago", "2023-04-24/2023-04-30", "week"),
        ("I'll know in 3 days", "in 3 days", "2023-05-11", "day"),
        ("in a month I'll be done", "in a month", "2023-06-08", "day"),
        ("in three months", "in three months", "2023-08-08", "day"),
        ("six months ago", "six months ago", "2022-11-08", "day"),
        ("in a couple of months", "in a couple of months", "2023-07", "month"),
        ("three days from now", "three days from now", "2023-05-11", "day"),
        ("5 days ago I fell", "5 days ago", "2023-05-03", "day"),
        ("We met on May 8, 2023 in Rome", "May 8, 2023", "2023-05-08", "day"),
        ("It was 8 May 2023.", "8 May 2023", "2023-05-08", "day"),
        ("Logged 2023-05-08.", "2023-05-08", "2023-05-08", "day"),
        ("Logged 2023-05-08T14:30.", "2023-05-08T14:30", "2023-05-08T14:30", "datetime"),
        ("the 15th of May", "the 15th of May", "2023-05-15", "day"),
        ("Sept. 5 works", "Sept. 5", "2023-09-05", "day"),
        ("We married in June 2019", "June 2019", "2019-06", "month"),
        ("Call me at 3pm tomorrow", "at 3pm tomorrow", "2023-05-09T15:00", "datetime"),
        ("tomorrow at 3pm works", "tomorrow at 3pm", "2023-05-09T15:00", "datetime"),
        ("Friday at 10am?", "Friday at 10am", "2023-05-12T10:00", "datetime"),
        ("next Tuesday at 5:30 p.m. is fine", "next Tuesday at 5:30 p.m.", "2023-05-09T17:30",
         "datetime"),
        ("the day before yesterday", "the day before yesterday", "2023-05-06", "day"),
        ("last night was fun", "last night", "2023-05-07", "day"),
        ("I got here in 2019 I think", "2019", "2019", "year"),
        ("Last June I visited Rome", "Last June", "2022-06", "month"),
        ("We go to Rome in June", "June", "2023-06", "month"),
    ],
)
def test_resolves_against_ref(text: str, expression: str, value: str, granularity: str) -> None:
    m = one(text)
    assert (m.expression, m.value, m.granularity) == (expression, value, granularity)
    assert text[m.start : m.end] == m.expression
    assert not m.is_deadline


def test_intervals_are_aware_utc_and_end_exclusive() -> None:
    day = one("yesterday")
    assert (day.start_ts, day.end_ts) == (
        datetime(2023, 5, 7, tzinfo=UTC), datetime(2023, 5, 8, tzinfo=UTC))
    week = one("last week")
    assert week.value == "2023-05-01/2023-05-07"
    assert (week.start_ts, week.end_ts) == (
        datetime(2023, 5, 1, tzinfo=UTC), datetime(2023, 5, 8, tzinfo=UTC))
    month = one("next month")
    assert (month.start_ts, month.end_ts) == (
        datetime(2023, 6, 1, tzinfo=UTC), datetime(2023, 7, 1, tzinfo=UTC))
    year = one("last year")
    assert (year.start_ts, year.end_ts) == (
        datetime(2022, 1, 1, tzinfo=UTC), datetime(2023, 1, 1, tzinfo=UTC))
    at = one("at 3pm tomorrow")
    assert (at.start_ts, at.end_ts) == (
        datetime(2023, 5, 9, 15, tzinfo=UTC), datetime(2023, 5, 9, 15, 1, tzinfo=UTC))
    december = one("in December", datetime(2023, 11, 2, tzinfo=UTC))
    assert december.end_ts == datetime(2024, 1, 1, tzinfo=UTC)


def test_calendar_arithmetic_uses_the_ref_time_zone() -> None:
    # 23:30 on Monday in UTC+2 is still Monday locally, though already 21:30 UTC.
    ref = datetime(2023, 5, 8, 23, 30, tzinfo=timezone(timedelta(hours=2)))
    m = one("see you tomorrow", ref)
    assert m.value == "2023-05-09"
    assert m.start_ts == datetime(2023, 5, 8, 22, 0, tzinfo=UTC)
    naive = one("tomorrow", datetime(2023, 5, 8, 23, 30))
    assert naive.value == "2023-05-09" and naive.start_ts.tzinfo == UTC


@pytest.mark.parametrize(
    ("text", "expression", "value"),
    [
        ("Please send it by the 15th", "by the 15th", "2023-05-15"),
        ("The report is due Friday", "due Friday", "2023-05-12"),
        ("The deadline is next Friday", "deadline is next Friday", "2023-05-12"),
        ("Pay before March 3", "before March 3", "2024-03-03"),
        ("no later than June 1st", "no later than June 1st", "2023-06-01"),
        ("renew it by March", "by March", "2024-03"),
        ("Friday is the deadline", "Friday", "2023-05-12"),
    ],
)
def test_deadlines(text: str, expression: str, value: str) -> None:
    m = one(text)
    assert (m.expression, m.value, m.is_deadline) == (expression, value, True)


def test_by_the_nth_is_the_next_such_day_on_or_after_ref() -> None:
    assert one("by the 8th").value == "2023-05-08"  # today counts
    assert one("by the 15th", datetime(2023, 5, 20, tzinfo=UTC)).value == "2023-06-15"
    # June has no 31st: the next 31st after 5 June is in July.
    assert one("by the 31st", datetime(2023, 6, 5, tzinfo=UTC)).value == "2023-07-31"
    assert one("by the 2nd", datetime(2023, 12, 20, tzinfo=UTC)).value == "2024-01-02"
    # Past tense looks back.
    assert one("I paid on the 20th", datetime(2023, 5, 8, tzinfo=UTC)).value == "2023-04-20"


def test_bare_weekday_follows_tense() -> None:
    assert one("I'll see her on Monday").value == "2023-05-15"  # strictly after a Monday ref
    assert one("Meeting on Wednesday").value == "2023-05-10"  # neutral → upcoming
    assert one("I hiked on Monday").value == "2023-05-01"  # past → strictly before
    assert one("We went out on Saturday").value == "2023-05-06"


@pytest.mark.parametrize("ref_day", range(7))
@pytest.mark.parametrize("weekday", timex._WEEKDAYS)
def test_modified_weekdays_match_plain_arithmetic(ref_day: int, weekday: str) -> None:
    """The library's last/next conventions against a reference implementation."""
    ref = datetime(2023, 5, 8 + ref_day, 9, 0, tzinfo=UTC)
    target = timex._WEEKDAYS.index(weekday)
    ahead = (target - ref.weekday()) % 7 or 7
    behind = (ref.weekday() - target) % 7 or 7
    assert one(f"last {weekday}", ref).value == (ref.date() - timedelta(behind)).isoformat()
    assert one(f"next {weekday}", ref).value == (ref.date() + timedelta(ahead)).isoformat()
    assert one(f"on {weekday} I will go", ref).value == (ref.date() + timedelta(ahead)).isoformat()
    assert one(f"on {weekday} I went", ref).value == (ref.date() - timedelta(behind)).isoformat()


def test_year_less_dates_follow_tense() -> None:
    assert one("on March 3rd I was there").value == "2023-03-03"
    assert one("March 3rd").value == "2023-03-03"  # neutral: ref's year
    assert one("I will fly on March 3rd").value == "2024-03-03"
    assert one("I flew on December 3rd").value == "2022-12-03"
    assert one("in January we went skiing").value == "2023-01"
    assert one("in January we will go skiing").value == "2024-01"


def test_weekends() -> None:
    assert one("last weekend").value == "2023-05-06/2023-05-07"
    assert one("next weekend").value == "2023-05-20/2023-05-21"
    assert one("the weekend was nice").value == "2023-05-06/2023-05-07"
    assert one("I will rest on the weekend").value == "2023-05-13/2023-05-14"
    sunday = datetime(2023, 5, 14, 12, tzinfo=UTC)
    assert one("this weekend", sunday).value == "2023-05-13/2023-05-14"


def test_clock_times_without_a_day() -> None:
    assert one("at noon").value == "2023-05-08T12:00"
    assert one("at 15:00").value == "2023-05-08T15:00"
    assert one("I'll call at 11am").value == "2023-05-09T11:00"  # already past today
    assert one("I woke up at 11pm").value == "2023-05-07T23:00"


@pytest.mark.parametrize(
    "text",
    [
        "You may go now.",
        "May I ask you something?",
        "We march on, second to none.",
        "I have 3 kids and 2 dogs.",
        "It was my 5th birthday party",
        "the 15th century was wild",
        "3 days later he called",  # anchored to the story, not the event: left out on purpose
        "June said hi",  # a bare month name without a preposition may be a person
        "I was second in line",
        "the sunny Saturdays of my youth",
        "a few days ago",
        "The score was 10 to 2",
        "we were down 10 in the 4th and I hit the buzzer-beater",
        "trailing big time in the 4th quarter",
    ],
)
def test_no_false_positives(text: str) -> None:
    assert extract_times(text, REF) == []


def test_text_without_candidates_never_reaches_the_library(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object) -> None:
        raise AssertionError("dateparser called")

    monkeypatch.setattr(timex, "_library", boom)
    assert extract_times("I went to a support group and it was so powerful.", REF) == []
    assert extract_times("You may go. We march on.", REF) == []


def test_several_mentions_in_order() -> None:
    found = extract_times("Yesterday was hard, but by Friday at 5pm it ships; next year too.", REF)
    assert [(m.expression, m.value) for m in found] == [
        ("Yesterday", "2023-05-07"),
        ("by Friday at 5pm", "2023-05-12T17:00"),
        ("next year", "2024"),
    ]
    assert [m.is_deadline for m in found] == [False, True, False]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["yesterday", "next Friday", "by the 15th", "May 8, 2023", "in 3 days", "at 3pm",
             "I", "went", "may", "March", "the", "2nd", "weekend", "this", "last", "on",
             "12", "week", "ago", ",", ".", "Monday", "tomorrow", "in", "June", "2019", "due"]
        ),
        max_size=14,
    ),
    st.integers(min_value=0, max_value=3000),
)
def test_invariants_on_random_text(words: list[str], day_offset: int) -> None:
    text = " ".join(words)
    ref = datetime(2021, 1, 1, 8, tzinfo=UTC) + timedelta(days=day_offset)
    found = extract_times(text, ref)
    previous_end = 0
    for m in found:
        assert text[m.start : m.end] == m.expression
        assert m.start >= previous_end
        previous_end = m.end
        assert m.start_ts < m.end_ts
        assert m.start_ts.tzinfo == UTC and m.end_ts.tzinfo == UTC
        assert m.granularity in {"datetime", "day", "week", "month", "year"}


# ------------------------------------------------------------------ parse_timestamp


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1:56 pm on 8 May, 2023", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("10:04 am on 12 January, 2024", datetime(2024, 1, 12, 10, 4, tzinfo=UTC)),
        ("12:30 am on 1 June, 2023", datetime(2023, 6, 1, 0, 30, tzinfo=UTC)),
        ("2023-05-08T13:56:00+02:00", datetime(2023, 5, 8, 11, 56, tzinfo=UTC)),
        ("2023-05-08T13:56:00Z", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("2023-05-08 13:56", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        ("2023-05-08", datetime(2023, 5, 8, tzinfo=UTC)),
        (1683554160, datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        (1683554160.5, datetime(2023, 5, 8, 13, 56, 0, 500000, tzinfo=UTC)),
        ("1683554160", datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        (datetime(2023, 5, 8, 13, 56), datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        (datetime(2023, 5, 8, 15, 56, tzinfo=timezone(timedelta(hours=2))),
         datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
    ],
)
def test_parse_timestamp(value: str | datetime | float, expected: datetime) -> None:
    got = parse_timestamp(value)
    assert got == expected
    assert got.utcoffset() == timedelta(0)


@pytest.mark.parametrize(
    "value",
    ["", "   ", "yesterday", "8 May 2023 at dawn", "13:56 pm on 8 May, 2023",
     "1:56 pm on 31 February, 2023", True, None, math.nan, math.inf, 1e20, [2023]],
)
def test_parse_timestamp_rejects_garbage(value: object) -> None:
    with pytest.raises(InputError):
        parse_timestamp(value)  # type: ignore[arg-type]


def test_parse_timestamp_error_names_the_formats() -> None:
    with pytest.raises(InputError, match="ISO 8601"):
        parse_timestamp("sometime last spring")


def test_mentions_are_frozen() -> None:
    m = one("tomorrow")
    with pytest.raises(AttributeError):
        m.value = "x"  # type: ignore[misc]
    assert date.fromisoformat(m.value) == date(2023, 5, 9)


def test_phrases_in_days_and_weeks_resolve_as_dateparser_does_on_any_day() -> None:
    """A phrase counted in days and weeks is resolved once per weekday and shifted to the
    reference day: the answer equals dateparser's own for that day (month and year ends,
    a leap day, both tenses)."""
    import random

    phrases = ["next friday", "last tuesday", "this sunday", "coming monday", "thursday",
               "saturday", "in 3 days", "2 weeks ago", "in 10 weeks", "17 days ago",
               "next week", "last week", "this week", "yesterday", "today", "tomorrow",
               "tonight", "last night", "this morning", "this evening",
               "the day before yesterday", "the day after tomorrow"]
    rng = random.Random(7)
    days = [date(2024, 2, 29), date(2023, 12, 31), date(2024, 1, 1), date(2023, 3, 31)]
    days += [date(2019, 1, 1) + timedelta(days=rng.randrange(3000)) for _ in range(4)]
    for phrase in phrases:
        for day in days:
            prefer = rng.choice(["future", "past", "current_period"])
            assert timex._library(phrase, day, prefer) == timex._parse(phrase, day, prefer), \
                (phrase, day, prefer)
    # Months, years and bare numbers are not shifted: they go to the library for their own
    # day ("in 2025" is a year, not a count of days).
    for phrase in ("in 2 months", "in 2025", "2025", "15", "next year"):
        for day in (date(2024, 1, 31), date(2026, 7, 14)):
            assert timex._library(phrase, day, "current_period") == \
                timex._parse(phrase, day, "current_period"), (phrase, day)


@pytest.mark.parametrize("text,ts,expression,value", [
    # issue 19: a past-tense sentence about an arrangement points forward
    ("Booked flights to Lisbon for May 14 to May 21", "2026-03-14T10:00:00", "May 14",
     "2026-05-14"),
    ("Booked flights to Lisbon for May 14 to May 21", "2026-03-14T10:00:00", "May 21",
     "2026-05-21"),
    ("Called the dentist: the appointment is April 2 at 3pm", "2026-03-20T09:00:00",
     "April 2 at 3pm", "2026-04-02T15:00"),
    ("We pushed the launch from October 20 to November 10", "2026-09-01T09:00:00",
     "November 10", "2026-11-10"),
    # a report of something done points back, across the new year
    ("picked up the keys on dec 15, moving in properly soon", "2027-01-09T12:00:00",
     "dec 15", "2026-12-15"),
    # an explicit year always wins
    ("the lease started on 1 June 2024", "2026-03-01T09:00:00", "1 June 2024", "2024-06-01"),
    # no tense to read: the nearest occurrence
    ("race day: March 22", "2025-12-05T09:00:00", "March 22", "2026-03-22"),
    ("dinner tomorrow at 7:30?", "2025-06-30T16:00:00", "tomorrow at 7:30",
     "2025-07-01T19:30"),
])
def test_tense_and_arrangement_decide_the_year(text: str, ts: str, expression: str,
                                               value: str) -> None:
    found = {m.expression: m.value for m in timex.extract_times(text, datetime.fromisoformat(ts))}
    assert found.get(expression) == value, found


# ---------------------------------------------------------------- issue 19, session i19

SAT = datetime(2026, 3, 14, 10, 0)  # a Saturday


def value_of(text: str, expression: str, ref: datetime = SAT) -> str | None:
    """The value of the mention covering ``expression`` (as the bench reads it)."""
    start = text.index(expression)
    end = start + len(expression)
    return next((m.value for m in extract_times(text, ref) if m.start < end and start < m.end),
                None)


@pytest.mark.parametrize(
    ("text", "expression", "value"),
    [
        ("Can we push the retro to next Thurs?", "next Thurs", "2026-03-19"),
        ("Match is on Sun, kick-off at 2.", "Sun", "2026-03-15"),
        ("The fair opens Friday 27 March.", "Friday 27 March", "2026-03-27"),
        ("Piano exam is on Wed the 18th.", "Wed the 18th", "2026-03-18"),
        ("Let's regroup Thursday week.", "Thursday week", "2026-03-26"),
        ("The audit lands a week on Monday.", "a week on Monday", "2026-03-23"),
        ("Renovation starts the week after next.", "the week after next",
         "2026-03-23/2026-03-29"),
        ("Results in a fortnight.", "in a fortnight", "2026-03-28"),
        ("The courier rang forty minutes ago.", "forty minutes ago", "2026-03-14T09:20"),
        ("Keynote is April the 9th.", "April the 9th", "2026-04-09"),
        ("Doors at 7.45pm.", "7.45pm", "2026-03-14T19:45"),
        ("Rent goes out on 28th.", "28th", "2026-03-28"),
        ("Receipt dated 11/27 is missing.", "11/27", "2025-11-27"),
        ("Returned the forms on 19/2.", "19/2", "2026-02-19"),
        ("Six months ago today I quit smoking.", "Six months ago today", "2025-09-14"),
        ("tmrw is the big interview", "tmrw", "2026-03-15"),
    ],
)
def test_more_ways_of_writing_a_time(text: str, expression: str, value: str) -> None:
    assert value_of(text, expression) == value


def test_a_slashed_date_in_doubt_is_not_read() -> None:
    assert value_of("Ship it 5/6 if we can.", "5/6") is None  # 5 June or 6 May
    assert extract_times("Rated it 7/10, would go again.", SAT) == []
    assert extract_times("The bill came to 23.10 each.", SAT) == []


@pytest.mark.parametrize(
    ("text", "expression", "ref", "value"),
    [
        ("Good Friday we drive to the coast.", "Good Friday", SAT, "2026-04-03"),
        ("Easter Monday is a bank holiday.", "Easter Monday", SAT, "2026-04-06"),
        ("We hosted Thanksgiving for twelve.", "Thanksgiving", SAT, "2025-11-27"),
        ("Father's Day brunch is booked.", "Father's Day", SAT, "2026-06-21"),
        ("Labor Day we'll close early.", "Labor Day", SAT, "2026-09-07"),
        ("Lunar New Year banquet at my aunt's.", "Lunar New Year", datetime(2027, 1, 20),
         "2027-02-06"),
        ("Mother's Day is coming up, any ideas?", "Mother's Day", datetime(2026, 3, 2),
         "2026-03-15"),
        ("I last heard from him at Halloween.", "Halloween", SAT, "2025-10-31"),
    ],
)
def test_holidays_by_their_rule(text: str, expression: str, ref: datetime, value: str) -> None:
    assert value_of(text, expression, ref) == value


@pytest.mark.parametrize(
    ("text", "expression", "value"),
    [
        # a thing got or asked for a time lies ahead of a past verb
        ("grabbed us seats for friday, row C", "friday", "2026-03-20"),
        ("Put in a request for April 2 off.", "April 2", "2026-04-02"),
        # arranging verbs, also ones the lemmatiser does not know
        ("They bumped my MOT to Wednesday.", "Wednesday", "2026-03-18"),
        ("My train got re-booked for Tuesday.", "Tuesday", "2026-03-17"),
        ("Booked 30/3 for the boiler service.", "30/3", "2026-03-30"),
        # an imperative points forward
        ("Meet me outside the library on Monday.", "Monday", "2026-03-16"),
        # a present the tagger reads as a base form, and "have got"
        ("Heard the grades come out on March 20.", "March 20", "2026-03-20"),
        ("I've got a blood test on Thursday.", "Thursday", "2026-03-19"),
        # a report of something done still points back, an explicit year still wins
        ("The boiler packed in on Thursday.", "Thursday", "2026-03-12"),
        ("We moved the launch to June 3, 2025.", "June 3, 2025", "2025-06-03"),
    ],
)
def test_direction_from_the_governing_verb(text: str, expression: str, value: str) -> None:
    assert value_of(text, expression) == value

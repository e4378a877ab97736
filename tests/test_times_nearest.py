"""Time expressions read as a careful reader would (session 23; sentences of our own, not
from the bench's data files):

* a year-less date or holiday whose occurrence in the tense's direction is most of a year
  away, while the other way's is a few weeks off, is the near one;
* a holiday with a year said is that year's;
* "the first Monday of next month", "the last Friday in March", "last day of the month";
* a bare hour before a part of the day ("by 4 this afternoon") is a clock time;
* "tonight", said in the small hours of a report, is the evening just gone.
"""

from __future__ import annotations

from datetime import datetime

import pytest

from enfold.text.times import extract_times


def _value(text: str, at: datetime, expression: str) -> str | None:
    start = text.index(expression)
    end = start + len(expression)
    return next((m.value for m in extract_times(text, at)
                 if m.start < end and start < m.end), None)


@pytest.mark.parametrize(("text", "at", "expression", "value"), [
    # past-tense verbs about an occasion days ahead
    ("Mother's Day: I've ordered the flowers already.", datetime(2026, 3, 3, 9), "Mother's Day",
     "2026-03-15"),
    ("Bins went out early for Christmas Eve collection, as the council said.",
     datetime(2026, 12, 20, 18), "Christmas Eve", "2026-12-24"),
    # present tense about a date a few weeks back
    ("The parking fine from October 2 is still sitting on the fridge.",
     datetime(2026, 10, 20, 8), "October 2", "2026-10-02"),
    # and neither when both are far
    ("We painted the shed on June 3.", datetime(2026, 2, 10, 8), "June 3", "2025-06-03"),
])
def test_the_near_occurrence_beats_a_far_one(text: str, at: datetime, expression: str,
                                             value: str) -> None:
    assert _value(text, at, expression) == value


def test_a_holiday_with_its_year_is_that_years() -> None:
    text = "Our first dance was on New Year's Eve 2024, in the old town hall."
    assert _value(text, datetime(2026, 12, 10), "New Year's Eve 2024") == "2024-12-31"


@pytest.mark.parametrize(("text", "expression", "value"), [
    ("Choir practice moves to the first Monday of next month.",
     "the first Monday of next month", "2026-11-02"),
    ("The allotment AGM is the last Friday in March.", "the last Friday in March",
     "2027-03-26"),
    ("Timesheets close on the last day of the month.", "the last day of the month",
     "2026-10-31"),
])
def test_a_weekday_or_day_counted_within_a_month(text: str, expression: str,
                                                 value: str) -> None:
    assert _value(text, datetime(2026, 10, 14, 10), expression) == value


def test_a_bare_hour_before_a_part_of_the_day_is_a_clock_time() -> None:
    text = "The garage says the car will be ready by 5 this afternoon."
    assert _value(text, datetime(2026, 5, 6, 9), "5 this afternoon") == "2026-05-06T17:00"


def test_tonight_in_the_small_hours_of_a_report_is_the_evening_gone() -> None:
    text = "Back home at last, tonight was the quiz final and we came second."
    assert _value(text, datetime(2026, 5, 9, 1, 10), "tonight") == "2026-05-08"


@pytest.mark.parametrize(("text", "at", "expression", "value"), [
    # a diary's subjectless past, which the tagger reads as a present or an imperative
    ("Found the spare key on the 4th, under the mat all along.", datetime(2026, 5, 20, 9),
     "the 4th", "2026-05-04"),
    ("Broke my toe on Saturday at the climbing wall.", datetime(2026, 5, 20, 9),
     "Saturday", "2026-05-16"),
    # a base form that is also its past ("put") stays as the tense reads it
    ("Put the bins out on Thursday, please.", datetime(2026, 5, 20, 9), "Thursday",
     "2026-05-21"),
])
def test_a_subjectless_past_points_back(text: str, at: datetime,
                                        expression: str, value: str) -> None:
    assert _value(text, at, expression) == value


@pytest.mark.parametrize(("text", "at", "expression", "value"), [
    # a day something was set for, whatever the verb's tense
    ("Got the electrician in for Thursday, fingers crossed.", datetime(2026, 5, 18, 9),
     "Thursday", "2026-05-21"),
    ("The tribunal listed the hearing for 9 June.", datetime(2026, 5, 18, 9), "9 June",
     "2026-06-09"),
    # but not a thanks, a stay, or a holiday spent
    ("Thanks for Saturday, the kids loved it.", datetime(2026, 5, 18, 9), "Saturday",
     "2026-05-16"),
    ("Went back to Cork for Easter and ate far too much.", datetime(2026, 5, 18, 9),
     "Easter", "2026-04-05"),
    # a weekday's possessive is that day; "day after tomorrow" needs no "the"
    ("Sunday's match is off if the pitch floods.", datetime(2026, 5, 18, 9), "Sunday",
     "2026-05-24"),
    ("Parcel arrives day after tomorrow, apparently.", datetime(2026, 5, 18, 9),
     "day after tomorrow", "2026-05-20"),
])
def test_a_day_set_for_and_a_weekdays_possessive(text: str, at: datetime, expression: str,
                                                 value: str) -> None:
    assert _value(text, at, expression) == value


@pytest.mark.parametrize(("text", "at", "expression", "value"), [
    ("The confirmation is on Pentecost Sunday at St Brigid's.", datetime(2026, 4, 20, 9),
     "Pentecost Sunday", "2026-05-24"),
    ("We fly out the day after Boxing Day.", datetime(2026, 6, 1, 9),
     "the day after Boxing Day", "2026-12-27"),
    ("Palm Sunday service starts at ten.", datetime(2026, 6, 1, 9), "Palm Sunday",
     "2027-03-21"),
])
def test_moveable_feasts_and_a_day_either_side_of_a_holiday(text: str, at: datetime,
                                                            expression: str,
                                                            value: str) -> None:
    assert _value(text, at, expression) == value


def test_a_far_date_said_to_be_ahead_in_so_many_words_stays_ahead() -> None:
    text = "We'll host Christmas at ours this time, Mum's decided."
    assert _value(text, datetime(2026, 1, 9, 9), "Christmas") == "2026-12-25"


@pytest.mark.parametrize(("text", "expression", "value"), [
    ("Boiler service is booked for the fifteenth.", "the fifteenth", "2026-03-15"),
    ("Bloods on the twentieth at 9, fasting from midnight.", "the twentieth at 9",
     "2026-03-20T09:00"),
    ("Quiz night Thursday 7:45, table for six.", "Thursday 7:45", "2026-03-05T19:45"),
])
def test_a_spelled_ordinal_day_and_a_clock_time_after_a_days_name(text: str, expression: str,
                                                                  value: str) -> None:
    assert _value(text, datetime(2026, 3, 1, 10), expression) == value


@pytest.mark.parametrize("text", [
    "The first time I went climbing I was terrified.",
    "That was the third and final round of interviews.",
])
def test_a_spelled_ordinal_that_counts_something_is_no_day(text: str) -> None:
    assert not extract_times(text, datetime(2026, 3, 1, 10))


@pytest.mark.parametrize(("text", "at", "expression", "value"), [
    ("the surgery reopens on January fifth after the break", datetime(2026, 12, 18, 16),
     "January fifth", "2027-01-05"),
    ("Coach leaves Fri 06:40 from the depot", datetime(2025, 11, 20, 21), "Fri 06:40",
     "2025-11-21T06:40"),
    ("remind me at eleven thirty tonite to take the tablets", datetime(2027, 11, 28, 20),
     "at eleven thirty tonite", "2027-11-28T23:30"),
    ("wake me tomorrow at six a m please", datetime(2025, 8, 29, 22), "tomorrow at six",
     "2025-08-30T06:00"),
])
def test_spelled_and_spoken_dates_and_clock_times(text: str, at: datetime, expression: str,
                                                  value: str) -> None:
    assert _value(text, at, expression) == value


@pytest.mark.parametrize("text", [
    "I have two this afternoon and one tomorrow, then I'm free.",
    "We march first, then the speeches.",
])
def test_a_spoken_number_or_a_verb_is_no_clock_time_or_month(text: str) -> None:
    assert all(":" not in m.value and "-03-01" not in m.value
               for m in extract_times(text, datetime(2026, 2, 10, 9)))


@pytest.mark.parametrize("text", ["See you at Easter, then!", "Let's do Easter at Gran's."])
def test_a_leave_taking_or_a_proposal_puts_a_far_holiday_ahead(text: str) -> None:
    assert _value(text, datetime(2026, 4, 10, 9), "Easter") == "2027-03-28"


def test_the_near_occurrence_wins_whether_or_not_the_year_moved() -> None:
    # the tense points ahead (December 20 of this year, 344 days off) and the library's
    # year needs no shift: the occurrence 21 days back is still the one meant
    text = "The plumber's invoice from December 20 is still unpaid."
    assert _value(text, datetime(2026, 1, 10, 9), "December 20") == "2025-12-20"


@pytest.mark.parametrize(("text", "expression", "value"), [
    ("The boiler was put in around 2011 by the previous owners.", "2011", "2011"),
    ("Our lease runs through 2028, so no rush.", "2028", "2028"),
    ("She coached the team till 2019 and then retired.", "2019", "2019"),
    ("Photos from the autumn of 2016 are on the old drive.", "2016", "2016"),
])
def test_a_year_after_a_preposition_is_a_year(text: str, expression: str, value: str) -> None:
    assert _value(text, datetime(2026, 5, 4, 12), expression) == value


@pytest.mark.parametrize("text", ["The essay has a limit of 2000 words.",
                                  "We printed a run of 2000 leaflets for the fair."])
def test_a_number_that_counts_a_noun_is_no_year(text: str) -> None:
    assert not [m for m in extract_times(text, datetime(2026, 5, 4, 12)) if len(m.value) == 4]


# Session 30: the day a thing dates from, where the tense says nothing about that day, is the
# nearest such day (sentences of our own, not from the bench's data files).
@pytest.mark.parametrize(("text", "at", "expression", "value"), [
    # a thing from a day: the 26th is 8 days back, 23 ahead
    ("Is this the parking ticket from the 26th?", datetime(2026, 4, 3, 9), "the 26th",
     "2026-03-26"),
    ("The scan from the 9th shows a hairline crack.", datetime(2026, 4, 14, 9),
     "the 9th", "2026-04-09"),
    # and a period that starts on a day ahead: 5 days ahead, 26 back
    ("Gran is at ours from the 19th, so the spare room's taken.", datetime(2026, 4, 14, 9),
     "the 19th", "2026-04-19"),
    # a dated thing whose effect a simple present tells
    ("The power cut on Sunday explains the defrosted freezer.", datetime(2026, 4, 14, 9),
     "Sunday", "2026-04-12"),
    # a participle of a thing done
    ("The invoice sent on the 2nd lists the wrong address.", datetime(2026, 4, 14, 9),
     "the 2nd", "2026-04-02"),
])
def test_the_day_a_thing_dates_from_is_the_nearest(text: str, at: datetime, expression: str,
                                                   value: str) -> None:
    assert _value(text, at, expression) == value


@pytest.mark.parametrize(("text", "at", "value"), [
    # the day booked (4 days ahead) and the day of booking (3 days back): the nearer
    ("Booked the car in on the 20th for its MOT.", datetime(2026, 5, 16, 9), "2026-05-20"),
    ("Booked the car in on the 13th for its MOT.", datetime(2026, 5, 16, 9), "2026-05-13"),
])
def test_an_arranging_verb_with_on_takes_the_nearer_day(text: str, at: datetime,
                                                        value: str) -> None:
    expression = "the 20th" if "20th" in text else "the 13th"
    assert _value(text, at, expression) == value


@pytest.mark.parametrize(("text", "at", "expression", "value"), [
    # day/month or month/day: the reading nearer the day of writing
    ("The deposit was paid on 05/09, receipt in the folder.", datetime(2026, 9, 20, 9),
     "05/09", "2026-09-05"),
    ("The deposit was paid on 09/05, receipt in the folder.", datetime(2026, 9, 20, 9),
     "09/05", "2026-09-05"),
    ("The meter reader comes on 10/11 between 8 and 12.", datetime(2026, 10, 28, 9),
     "10/11", "2026-11-10"),
])
def test_a_numeric_date_in_doubt_is_the_reading_near_the_day_of_writing(
        text: str, at: datetime, expression: str, value: str) -> None:
    assert _value(text, at, expression) == value


def test_a_fraction_stays_no_date() -> None:
    assert not extract_times("We ate 3/4 of the cake before lunch.", datetime(2026, 3, 5, 9))


@pytest.mark.parametrize(("text", "expression", "value"), [
    ("can u do the school run fri? im stuck at work", "fri", "2026-04-17"),
    ("dentist moved to thurs, sorry", "thurs", "2026-04-16"),
    ("last sat was the best day of the holiday", "last sat", "2026-04-11"),
])
def test_short_weekdays_in_lower_case(text: str, expression: str, value: str) -> None:
    assert _value(text, datetime(2026, 4, 14, 9), expression) == value


@pytest.mark.parametrize("text", ["we sat in the garden all afternoon",
                                  "the sun was out for once"])
def test_a_lower_case_word_that_is_also_a_short_weekday_is_no_day(text: str) -> None:
    assert not extract_times(text, datetime(2026, 4, 14, 9))


@pytest.mark.parametrize(("text", "at", "expression", "value"), [
    ("The hosepipe ban in force since March is lifted.", datetime(2026, 2, 20, 9),
     "since March", "2025-03"),
    ("Prices have been frozen since the 25th.", datetime(2026, 2, 20, 9), "the 25th",
     "2026-01-25"),
    ("Refunds reach your account within 5 business days.", datetime(2026, 2, 20, 9),
     "within 5 business days", "2026-02-27"),
    ("The warranty claim closes ten days from today.", datetime(2026, 2, 20, 9),
     "ten days from today", "2026-03-02"),
    ("We hand back the keys at the end of June.", datetime(2026, 2, 20, 9), "the end of June",
     "2026-06-30"),
    ("Swimming finishes at 4.45 on Thursdays.", datetime(2026, 2, 20, 9), "at 4.45",
     "2026-02-20T16:45"),
    ("The room is booked for November.", datetime(2026, 2, 20, 9), "November", "2026-11"),
])
def test_since_business_days_from_today_end_of_a_month_and_a_dotted_clock(
        text: str, at: datetime, expression: str, value: str) -> None:
    assert _value(text, at, expression) == value


def test_a_price_with_a_dot_is_no_clock_time() -> None:
    found = extract_times("Diesel was at 1.45 a litre.", datetime(2026, 2, 20, 9))
    assert all(":" not in m.value for m in found)


@pytest.mark.parametrize(("text", "at", "expression", "value"), [
    ("Easter's at my sister's this year.", datetime(2026, 3, 20, 9), "Easter", "2026-04-05"),
    ("The move is a fortnight on Tuesday.", datetime(2026, 3, 20, 9), "a fortnight on Tuesday",
     "2026-04-07"),
    # a thing from the weekend, said on a Monday: the one just gone
    ("The mud from the weekend is still all over the hall.", datetime(2026, 3, 23, 9),
     "the weekend", "2026-03-21/2026-03-22"),
    ("Your letter says 03/05 at 9:15 for the scan.", datetime(2026, 4, 20, 9), "03/05",
     "2026-05-03"),
])
def test_a_holidays_s_a_fortnight_on_a_day_the_weekend_a_thing_is_from_and_a_dated_clock(
        text: str, at: datetime, expression: str, value: str) -> None:
    got = _value(text, at, expression)
    assert got is not None and got.startswith(value)


@pytest.mark.parametrize(("text", "expression", "value"), [
    ("The plumber assigned a fitter for Thursday afternoon.", "Thursday", "2026-04-16"),
    ("The viewing booked for Saturday has been cancelled by the agent.", "Saturday",
     "2026-04-18"),
])
def test_a_day_something_was_set_for_lies_ahead(text: str, expression: str, value: str) -> None:
    got = _value(text, datetime(2026, 4, 14, 9), expression)
    assert got is not None and got.startswith(value)


def test_a_verbless_note_with_an_arranging_word_looks_ahead() -> None:
    got = _value("Rescheduled standup → Thu.", datetime(2026, 4, 14, 9), "Thu")
    assert got == "2026-04-16"


@pytest.mark.parametrize(("text", "at", "expression", "value"), [
    # just gone, at night: the small hours, not the afternoon before
    ("only fell asleep at 3, feel awful", datetime(2026, 5, 6, 7, 30), "at 3",
     "2026-05-06T03:00"),
    ("the gig ended at 11 and the last bus had gone", datetime(2026, 5, 6, 0, 40), "at 11",
     "2026-05-05T23:00"),
    ("dropped the kids off at 8, now the washing", datetime(2026, 5, 6, 11, 0), "at 8",
     "2026-05-06T08:00"),
    # ahead: the nearest, but not at night ("meet at 3" late at night is the afternoon)
    ("pick me up at 7? car's in the garage", datetime(2026, 5, 6, 22, 30), "at 7",
     "2026-05-07T07:00"),
    ("can we meet at 3 instead?", datetime(2026, 5, 6, 23, 0), "at 3", "2026-05-07T15:00"),
])
def test_a_clock_time_alone_is_the_nearest_reading_in_its_direction(
        text: str, at: datetime, expression: str, value: str) -> None:
    assert _value(text, at, expression) == value


@pytest.mark.parametrize(("text", "at", "expression", "value"), [
    ("the dog barked from half eleven till one", datetime(2026, 5, 6, 8, 0), "half eleven",
     "2026-05-05T23:30"),
    ("Ferry's at quarter past seven, don't be late", datetime(2026, 5, 6, 21, 0),
     "quarter past seven", "2026-05-07T07:15"),
    ("Dinner's at half past six", datetime(2026, 5, 6, 9, 0), "half past six",
     "2026-05-06T18:30"),
    ("The 7:42 is running late again", datetime(2026, 5, 6, 7, 30), "7:42", "2026-05-06T07:42"),
    ("please have the bins out by 7", datetime(2026, 5, 6, 21, 40), "by 7", "2026-05-07T07:00"),
])
def test_british_half_and_quarter_hours_a_trains_time_and_a_bare_by(
        text: str, at: datetime, expression: str, value: str) -> None:
    assert _value(text, at, expression) == value


@pytest.mark.parametrize("text", ["We won by 10 points.", "half the team left early",
                                  "Helen won by 1,406 votes.", "Fares rise by 2.5% in May."])
def test_a_count_after_by_or_a_half_is_no_clock_time(text: str) -> None:
    assert all(":" not in m.value for m in extract_times(text, datetime(2026, 5, 6, 9)))


@pytest.mark.parametrize(("text", "at", "value"), [
    ("Monday's minutes are in the shared drive.", datetime(2026, 5, 6, 9), "2026-05-04"),
    ("Friday's quiz night is off, the hall flooded.", datetime(2026, 5, 7, 9), "2026-05-08"),
])
def test_a_days_possessive_thing_is_of_the_nearest_such_day(text: str, at: datetime,
                                                            value: str) -> None:
    day = text.split("'")[0]
    assert _value(text, at, day) == value


def test_a_weekday_gone_by_said_on_its_own_evening_is_that_day() -> None:
    text = "Thursday was chaos from start to finish."
    assert _value(text, datetime(2026, 5, 7, 22, 30), "Thursday") == "2026-05-07"
    assert _value(text, datetime(2026, 5, 7, 9, 0), "Thursday") == "2026-04-30"


@pytest.mark.parametrize(("text", "at", "expression", "value"), [
    # the evening word is in the sentence, 41 characters before the clock time
    ("Supper at the Okonkwos' new place moved to Thursday 7:30 sharp.",
     datetime(2026, 5, 4, 10), "Thursday 7:30", "2026-05-07T19:30"),
    # and a goodnight is a sentence of its own
    ("Night! Can you wake me at 7? Two alarms please.", datetime(2026, 5, 4, 23, 50), "at 7",
     "2026-05-05T07:00"),
])
def test_a_word_for_the_part_of_the_day_counts_within_its_sentence(
        text: str, at: datetime, expression: str, value: str) -> None:
    assert _value(text, at, expression) == value


def test_until_a_day_in_a_present_clause_is_ahead() -> None:
    text = "Your parcel is being kept at the depot until Monday."
    assert _value(text, datetime(2026, 5, 6, 9), "Monday") == "2026-05-11"
    assert _value("We waited until Monday for the part.", datetime(2026, 5, 6, 9),
                  "Monday") == "2026-05-04"


def test_what_i_will_arrange_on_a_day_is_ahead() -> None:
    # "booked the vet on the 3rd" may name the day of booking; "I'll bring it on Tuesday"
    # names the day it will be done (said on a Friday: the Tuesday after, not the one gone)
    friday = datetime.fromisoformat("2026-09-11T12:00:00+00:00")
    text = "Who's bringing cake for Sue's leaving do? ...ok fine, I'll bring it on Tuesday."
    assert _value(text, friday, "Tuesday") == "2026-09-15"


@pytest.mark.parametrize(("text", "at", "value"), [
    # a weekday and the week it falls in, either order (Thursday 2026-09-10)
    ("Can you cover the Monday of next week?", datetime(2026, 9, 10, 9), "2026-09-14"),
    ("Book the hall for the Friday of the week after next.", datetime(2026, 9, 10, 9),
     "2026-09-25"),
    ("The plasterer comes Wednesday next week.", datetime(2026, 9, 10, 9), "2026-09-16"),
    ("my cousin lands next week on Saturday", datetime(2026, 9, 10, 9), "2026-09-19"),
    ("We last spoke the Tuesday of last week.", datetime(2026, 9, 10, 9), "2026-09-01"),
    # a weekday counted from a holiday
    ("The carol service is the Sunday before Christmas.", datetime(2026, 11, 2, 9),
     "2026-12-20"),
    ("School goes back the Wednesday after Easter.", datetime(2027, 3, 1, 9), "2027-03-31"),
])
def test_a_weekday_of_a_week_or_a_holiday_is_one_day(text: str, at: datetime,
                                                     value: str) -> None:
    """(Session 42.) Read apart, the weekday was the nearest one and the week or holiday a
    second mention; together they name one day."""
    found = [m.value for m in extract_times(text, at)]
    assert found == [value]


@pytest.mark.parametrize(("text", "at", "value"), [
    ("This time next year the loan is paid off.", datetime(2026, 6, 3, 9), "2027-06-03"),
    ("this time last week we were still in Crete", datetime(2026, 6, 3, 9), "2026-05-27"),
    ("This time next month I'll have the keys.", datetime(2026, 1, 31, 9), "2026-02-28"),
])
def test_this_time_next_year_is_the_same_day(text: str, at: datetime, value: str) -> None:
    """(Session 42.) "This time next year" is a day a year on, not the whole year."""
    assert [m.value for m in extract_times(text, at)] == [value]

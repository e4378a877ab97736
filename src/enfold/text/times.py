"""Time expressions in event text, normalized against the event's own time.

An event says "next Friday" or "by the 15th"; the graph needs absolute dates. This module finds
such expressions and resolves them against ``ref`` (the event's ``ts``), and it turns event
timestamps of the accepted input formats into aware UTC datetimes.

How it works, and why:

* **Prefilter, then grammar.** One cheap compiled regex (:data:`_PREFILTER`) looks for anything
  that could start a time expression (a digit, a weekday or month stem, a relative word). Text
  without such a token costs a single regex scan — microseconds. Only then does the grammar
  (:data:`_GRAMMAR`, one compiled alternation) pick out candidate spans. ``dateparser``'s
  ``search_dates`` is never run over whole texts: it is orders of magnitude slower.
* **The library normalizes the spans it gets right.** Relative offsets ("two weeks ago",
  "in 3 days"), day words ("yesterday", "last night"), "this/next/last week|month|year",
  modified weekdays ("last Friday", "next Friday") and explicit dates go through
  ``dateparser`` (ISO 8601 through ``datetime.fromisoformat``). Checked conventions (ref
  Monday 2023-05-08): "last Friday" is the most recent Friday strictly before ref (05-05),
  "next Friday" the first Friday strictly after ref (05-12), "this Friday" the Friday of this
  week (or the next one once it has passed); a test checks all 49 weekday pairs against
  plain arithmetic.
* **Hand-written code where the library is wrong or silent**: "the 15th" (dateparser reads
  "the 1st"/"the 8th" as months), weekends (unsupported), bare month names and years (need the
  tense rule below), times of day without a date (the library moves them to tomorrow), and the
  year of year-less dates (the library's "future" is strict, so "by May 8" said on May 8 would
  land a year later).

Conventions (documented choices, all tested):

* **Direction.** The clause around a mention decides whether an ambiguous expression points
  forward or back: future markers ("will", "'ll", "going to", "need to", "tomorrow", ...) win,
  then past markers ("was", "did", "went", "-ed" verbs, "ago", ...); otherwise it is neutral.
  A deadline cue with a neutral clause counts as future.
* **Bare weekday** ("on Monday", "Monday"): past → the latest such day strictly before ref
  (ref's own day once it is evening: "Wednesday was a write-off", written that night);
  otherwise (future or neutral) → the first such day strictly after ref.
* **Ordinal day** ("the 15th"): past → latest 15th on/before ref; otherwise → next 15th on/after
  ref (months without that day are skipped).
* **Year-less date** ("March 3rd") and **bare month** ("in June"): future → next occurrence
  on/after ref; past → latest on/before; neutral → the nearest occurrence. "last June" / "next June"
  are the Junes strictly before / after ref's month.
* **Time of day without a date** ("at 3pm"): ref's day; past → moved back a day if later than
  ref, future → moved forward a day if earlier than ref. A time next to a day mention ("at 3pm
  tomorrow", "Friday at 10am") merges into one ``datetime`` mention.
* **Weeks are ISO weeks** (Monday–Sunday). "this/next/last weekend" are the Saturday–Sunday of
  ref's ISO week / the following / the preceding one; "the weekend" follows the direction rule.
  Weekend mentions carry granularity ``"week"`` (an interval) with a two-day value.
* **Granularity follows the unit the speaker used**: "3 months ago" is a month, "in 3 days" a
  day; a counted number of weeks is a day ("two weeks ago" is ref − 14 days, "in two weeks"
  ref + 14: what a calendar would hold), a vague one a week ("a couple of weeks ago").
* **The parse decides the direction first** (:func:`_parsed_direction`): the tense of the verb
  the expression hangs from, where a verb that arranges something ("booked", "moved ... to",
  "pushed ... to") points forward whatever its tense. The clause words below decide when
  there is no parse or no verb. A year-less date with no direction at all is the nearest
  occurrence ("March 22" said on 5 December is next March).
* **Clock times without am/pm** ("at 7:30", "at 9", "8:15 tonight"): evening words in
  their sentence ("tonight", "dinner") make them pm, morning words am; otherwise, next to a
  day ("Friday at 4") 1–6 o'clock is pm, and alone ("woke at 4", "be in by 10") the reading
  nearest ref in the clause's direction wins, a night hour counting as further off
  (:func:`_clock_alone`).
* **The day a thing dates from** ("the bill from the 28th", "Tuesday's match report",
  "the order made on the 8th"), where the tense says nothing about that day, is the nearest
  such day either way (:func:`_parsed_direction`); so is a numeric date in doubt ("04/08":
  of its two readings, the nearer).
* **Holidays with a fixed date** (Christmas Eve, New Year's Day, Halloween, ...) follow the
  year-less date rule; "the end of the month" and "the end of April" are their last day,
  "mid-May" the 15th.
* **Calendar arithmetic happens in ref's own time zone** (a naive ref is UTC); ``value`` is a
  local calendar value, ``start_ts``/``end_ts`` are converted to UTC. ``datetime`` mentions
  cover the minute named.
* **Hours and minutes** ("in 2 hours", "forty minutes ago") are a minute from ref; "in 2
  hours" in a past clause is a duration and is not read.
* **Numeric day/month dates** ("12/19", "31/3", "on 23.10") are read only when one number
  is above 12, so which is the day is not in doubt; with a dot only after a word that
  introduces a date.
* **Holidays by rule**: fixed ones, Easter and the days it moves, nth-weekday ones
  (Thanksgiving, Memorial Day, Father's Day), Lunar New Year from a table; where two
  countries keep a day apart (Mother's Day) the direction picks the nearer.
* **Not resolved on purpose**: "3 days later" (its anchor is the story, not the event),
  vague phrases ("the other day", "a few days ago", "recently"), durations ("for 3 weeks"),
  "now", seasons, numeric dates in doubt ("3/4": 3 April or 4 March).
"""

from __future__ import annotations

import calendar
import functools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any, TypeVar

from dateparser.date import DateDataParser

from enfold.errors import InputError
from enfold.model import time_in_range

__all__ = ["TimeMention", "extract_times", "parse_timestamp"]


D = TypeVar("D", date, datetime)


def _words(block: str) -> frozenset[str]:
    """A word list written as a whitespace-separated block (easier to read and edit)."""
    return frozenset(block.split())



@dataclass(frozen=True)
class TimeMention:
    """One time expression found in a text, resolved to an absolute interval.

    ``value`` is the normalized calendar value in the event's local calendar ("2023-05-12",
    "2023-05-12T14:00", "2023-06", "2023", or "2023-05-08/2023-05-14" for intervals);
    ``start_ts``/``end_ts`` are the covered interval in UTC, end exclusive. ``is_deadline`` is
    set when a cue ("by", "due", "deadline", "before", "no later than") makes the time a limit;
    the cue is then part of ``expression``.
    """

    expression: str
    start: int
    end: int
    value: str
    granularity: str
    start_ts: datetime
    end_ts: datetime
    is_deadline: bool


# --------------------------------------------------------------------------- timestamps

_LOCOMO_TS = re.compile(
    r"^\s*(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+)\.?,?\s+(\d{4})\s*$",
    re.IGNORECASE,
)
_NUMERIC = re.compile(r"^\s*[-+]?\d+(?:\.\d+)?\s*$")


def parse_timestamp(value: str | datetime | float) -> datetime:
    """Turn an event timestamp into an aware UTC datetime.

    Accepts a ``datetime`` (naive means UTC), epoch seconds (number or numeric string), ISO 8601
    text with or without offset (naive means UTC), and LoCoMo session dates such as
    ``"1:56 pm on 8 May, 2023"``. Anything else raises :class:`~enfold.errors.InputError`; no
    fuzzy guessing, because a wrong event time silently corrupts every relative date.
    """
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise InputError(f"unsupported timestamp type {type(value).__name__}: {value!r}")
    if isinstance(value, str) and _NUMERIC.match(value):
        value = float(value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            raise InputError(f"timestamp is not a finite number: {value!r}")
        try:
            return datetime.fromtimestamp(value, tz=UTC)
        except (OverflowError, OSError, ValueError) as exc:
            raise InputError(f"epoch timestamp out of range: {value!r}") from exc
    text = value.strip()
    if not text:
        raise InputError("empty timestamp")
    parsed: datetime | None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        parsed = _parse_locomo(text)
    if parsed is None:
        raise InputError(
            f"unrecognized timestamp {value!r}: expected ISO 8601, epoch seconds "
            "or a LoCoMo date like '1:56 pm on 8 May, 2023'"
        )
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed.astimezone(UTC)


def _parse_locomo(text: str) -> datetime | None:
    m = _LOCOMO_TS.match(text)
    if not m:
        return None
    hour, minute, ampm, day, month_name, year = m.groups()
    month = _MONTHS.get(month_name.lower())
    h = int(hour)
    if month is None or not 1 <= h <= 12:
        return None
    h = h % 12 + (12 if ampm.lower() == "p" else 0)
    try:
        return datetime(int(year), month, int(day), h, int(minute))
    except ValueError:
        return None


# --------------------------------------------------------------------------- vocabulary

_MONTHS = {
    name: i
    for i, names in enumerate(
        [
            ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
            ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
            ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15,
    "twenty": 20, "thirty": 30, "forty": 40, "forty-five": 45, "fifty": 50,
}
#: The hours of a clock in words ("one" … "twelve"), as a pattern.
_HOUR_WORDS = "(?:" + "|".join(w for w, n in _NUMBER_WORDS.items()
                               if w not in ("a", "an") and n <= 12) + ")"

# "May" and "March" are verbs too: they only count capitalized. Other months are unambiguous.
_MONTH_ANY = (
    r"(?:(?i:jan(?:uary)?|feb(?:ruary)?|apr(?:il)?|june?|july?|aug(?:ust)?"
    r"|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
    r"|(?-i:May|MAY|Mar(?:ch)?|MAR(?:CH)?)"
    # lower case "may 14", "march 8th": a day number after it makes it a month
    r"|(?-i:may|mar(?:ch)?)(?=\.?\s+\d{1,2}(?:st|nd|rd|th)?\b(?![:.]\d)))"
)
_MONTH_FULL = (
    r"(?:(?i:january|february|april|june|july|august|september|october|november|december)"
    r"|(?-i:May|March)|(?-i:may|march)(?=\s+(?:of\s+)?(?:19|20)\d\d\b)"
    r"|(?<=mid-)(?-i:may|march)|(?<=mid )(?-i:may|march))"
)
_WEEKDAY = (r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday"
            # the short forms capitalised, or in lower case as chat writes them ("thurs",
            # "fri"); those that are also words ("sat next to", "the sun") are guarded below
            r"|(?-i:Mon|Tues?|Wed|Thu(?:rs?)?|Fri|Sat|Sun|mon|tues?|wed|thu(?:rs?)?|fri|sat|sun))")
# Short weekday names that are also words: they count only after a word that introduces a
# day ("on Sat") or before a date ("Wed the 18th").
_SHORT_WEEKDAYS = {"mon": "monday", "tue": "tuesday", "tues": "tuesday", "wed": "wednesday",
                   "thu": "thursday", "thur": "thursday", "thurs": "thursday",
                   "fri": "friday", "sat": "saturday", "sun": "sunday"}
_DAY_INTRO = re.compile(r"\b(?:on|by|until|till|from|every|before|after|this|next|last"
                        r"|coming)\s+$", re.IGNORECASE)
_DATE_AFTER = re.compile(r"\.?,?\s*(?:the\s+)?\d|\.?\s+(?:at|@|morning|afternoon|evening|night"
                         r"|am|pm)\b", re.IGNORECASE)
_NUM = (
    r"(?:\d{1,3}|a\s+couple\s+of|a\s+couple|couple\s+of|an?|one|two|three|four|five|six|seven"
    r"|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty(?:-five)?|fifty)"
)
_UNIT = r"(?:day|week|fortnight|month|year|hour|minute)"
# Nouns that make "the 5th" an ordinal of something other than a day of the month; "in the
# 4th" (a quarter, an inning) is excluded by a lookbehind in the grammar.
_ORDINAL_NOUNS = (
    r"(?:century|centuries|time|times|birthday|anniversary|floor|place|grade|street|st|avenue"
    r"|row|round|edition|year|person|game|inning|minute|lap|level|chapter|amendment|percentile"
    r"|generation|try|attempt|day|week|month|one|book|album|season|episode|child|kid|son"
    r"|quarter|period|half|set|hole|inning|stage|leg|race|spot|seed|pick"
    r"|daughter|wedding|date)\b"
)

#: The days of a month spelled out ("fifth", "twenty-third"), and a pattern of them.
_SPELLED_ORDINALS = {w: n for n, w in enumerate((
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth",
    "tenth", "eleventh", "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth",
    "seventeenth", "eighteenth", "nineteenth", "twentieth"), 1)}
_SPELLED_ORDINALS |= {f"twenty-{w}": 20 + n for w, n in list(_SPELLED_ORDINALS.items())[:9]}
_SPELLED_ORDINALS |= {"thirtieth": 30, "thirty-first": 31}
_SPELLED_DAY = "(?:" + "|".join(
    re.escape(w) for w in sorted(_SPELLED_ORDINALS, key=len, reverse=True)) + ")"
_PREFILTER = re.compile(
    r"\d|\b(?:mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec"
    r"|yesterday|today|tonight|tomorrow|day|week|month|year|ago|noon|midnight|night|morning"
    r"|afternoon|evening|fortnight|hour|minute|xmas|christmas|halloween|valentine|new\s+year"
    r"|boxing|bonfire|guy|patrick|paddy|independence|fourth|canada|anzac|australia|burns"
    r"|juneteenth|cinco|remembrance|veteran|andrew|david|george|easter|good\s+friday|maundy"
    r"|shrove|pancake|ash|mother|father|thanksgiving|pentecost|whit|palm|ascension|holy"
    r"|black|memorial|labou?r|luther|mlk"
    r"|president|lunar|chinese|hogmanay|tmrw|tmr|tmw|tomoz|2moro|2mor|2day|2nite|tonite|yday"
    r"|yest|o['’]clock|half|quarter|" + _HOUR_WORDS
    + r"(?:\s+[a-z'-]+)?\s+[ap]\.?\s?m\b)|\b" + _SPELLED_DAY + r"\b",
    re.IGNORECASE,
)

# One alternative per kind of expression; the order matters where two start at the same place
# ("the 15th of May" before "the 15th", "May 2023" after "May 8").
_ISO = r"(?P<iso>\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?(?![\d:])|\b\d{4}/\d{2}/\d{2}\b)"
_DMY = (
    rf"(?P<dmy>\b(?:the\s+)?(?P<dmy_d>\d{{1,2}}(?=st|nd|rd|th|\s)(?:st|nd|rd|th)?"
    rf"|(?<=the\s){_SPELLED_DAY}(?=\s+of\s))\s+(?:of\s+)?"
    rf"(?P<dmy_m>{_MONTH_ANY})\b\.?(?:,?\s+(?P<dmy_y>\d{{4}})\b)?)"
)
_MDY = (
    rf"(?P<mdy>\b(?P<mdy_m>{_MONTH_ANY})\.?\s+(?:the\s+)?(?P<mdy_d>\d{{1,2}}(?:st|nd|rd|th)?"
    rf"|{_SPELLED_DAY})\b"
    rf"(?!:)(?:,?\s+(?P<mdy_y>\d{{4}})\b)?)"
)
_MY = rf"(?P<my>\b(?P<my_m>{_MONTH_FULL})\s+(?:of\s+)?(?P<my_y>\d{{4}})\b)"
_AGO = (rf"(?P<ago>\b(?P<ago_n>{_NUM})\s+(?P<ago_u>{_UNIT})s?\s+(?P<ago_dir>ago|from\s+now|from\s+today"
        # a letter's "14 days from the date of this letter": from the day it is written
        r"|from\s+the\s+date\s+of\s+this\s+(?:letter|notice|e-?mail|message|invoice|order)s?)\b"
        r"(?P<ago_today>\s+today\b)?)")
_IN = rf"(?P<inn>\bin\s+(?P<in_n>{_NUM})\s+(?P<in_u>{_UNIT})s?\b)"
# "within 10 business days", "in three working days": counted on weekdays only
_WORKDAYS = (rf"(?P<workdays>\b(?:in|within)\s+(?P<wd_n>{_NUM})\s+(?:business|working)"
             r"\s+days?\b)")
_DAYWORD = (
    r"(?P<dayword>\b(?:(?:the\s+)?day\s+before\s+yesterday|(?:the\s+)?day\s+after\s+tomorrow"
    r"|yesterday|today|tonight|tomorrow|last\s+night|this\s+(?:morning|afternoon|evening)"
    r"|tmrw|tmr|tmw|tomoz|2moro(?:w|rrow)?|2morrow|tomorow|2day|2nite|tonite|yday|yest)\b"
    r"(?:\s+(?:morning|afternoon|evening|night)\b)?)"
)
# How chat spells the day words.
_CHAT_DAYWORDS = {"tmrw": "tomorrow", "tmr": "tomorrow", "tmw": "tomorrow", "tomoz": "tomorrow",
                  "2moro": "tomorrow", "2morow": "tomorrow", "2morrow": "tomorrow",
                  "2mororrow": "tomorrow", "tomorow": "tomorrow", "2day": "today",
                  "2nite": "tonight", "tonite": "tonight", "yday": "yesterday",
                  "yest": "yesterday"}
# A day and a month written with numbers ("12/19", "31/3", "on 23.10"): read only when one
# of the two numbers is above 12, so which is the day is not in doubt ("3/4" is not read);
# with a dot only after a word that introduces a date (a price is "23.10" too).
_SLASH = (r"(?P<slash>(?<![\d/.])(?:(?<=\bon\s)|(?<=\bby\s)|(?<=\bdated\s)|(?<=\bfrom\s)"
          r"|(?<=\buntil\s)|(?<=\btill\s)|(?<=\bdue\s))?(?P<sl_a>\d{1,2})(?P<sl_sep>[/.])"
          r"(?P<sl_b>\d{1,2})(?:(?P=sl_sep)(?P<sl_y>\d{4}|\d{2}))?(?![\d/.]\d)(?!\s*%))")
_WEEKEND = (r"(?P<weekend>\b(?P<we_mod>this\s+coming|this|next|last|coming|the)\s+weekend\b"
            r"(?P<we_after>\s+after\s+next\b)?)")
_MODUNIT = (r"(?P<modunit>\b(?:(?P<mu_same>this\s+time\s+)?(?P<mu_mod>this|next|last|coming)"
            r"\s+(?P<mu_u>week|month|year)"
            r"|(?P<mu_after>the\s+(?P<mu_u2>week|month|year)\s+after\s+next))\b)")
_WEEKDAY_RE = (
    rf"(?P<weekday>\b(?P<wd_pre>a\s+(?:week|fortnight)\s+(?:on|from|after)\s+)?"
    rf"(?:(?P<wd_mod>this\s+coming|this|next|last|coming)\s+)?"
    rf"(?P<wd>{_WEEKDAY})\b(?(wd_mod)|(?!s\b))(?P<wd_post>\s+week\b|\s+after\s+next\b)?)"
)
def _after_one_of(words: Sequence[str]) -> str:
    """A pattern that matches where one of ``words`` and a space come right before (one
    fixed-width lookbehind per word: Python's lookbehinds cannot alternate widths)."""
    return "(?:" + "|".join(f"(?<=\\b{w}\\s)" for w in words) + ")"


# "since march", "in may": the two month names that are also words count in lower case too
# after a word that introduces a month ("this may be", "a march on the capital" do not)
_LOWER_MONTH_INTRO = _after_one_of(("in", "since", "until", "till", "during", "early", "late"))
#: ... and not where "may" is the modal ("coming in may not be enough", "in may be")
_NOT_MODAL = r"(?!\s+(?:be|not|have|well|also|just|still|never|need|want|get|take|seem)\b)"
_MONTH_BARE = (
    r"(?P<mbare>\b(?P<mb_mod>in|since|until|till|by|before|after|during|last|next|this|early"
    r"|late|mid-?|end\s+of|beginning\s+of|start\s+of|of|from|through|for)(?:(?<=-)|\s+)"
    rf"(?P<mb_m>{_MONTH_FULL}|{_LOWER_MONTH_INTRO}(?-i:may|march){_NOT_MODAL})\b(?!\s*\d))"
)
# A month's name alone, as a noun or a noun's modifier ("the October payroll error",
# "November was brutal"): only the names that are no common word or first name, capitalized
_MONTH_ALONE = (
    r"(?P<malone>\b(?P<ma_m>(?-i:January|February|July|September|October|November|December))"
    r"\b(?!,?\s*\d)(?!['’]s\b))"
)
_YEAR = (
    r"(?P<year>\b(?P<yr_mod>in|since|during|until|till|by|from|back\s+in|early|late|of|through"
    r"|throughout|before|after|around|circa|into)\s+"
    r"(?P<yr>(?:19|20)\d\d)\b(?![-/:]\d))"
)
# "on 28th", "Fri 20th": an ordinal without "the" after a word that introduces a day.
_ORD_INTRO = _after_one_of((
    "on", "by", "is", "until", "till", "from", "before", "after", "day", "day,", "Mon", "Tue",
    "Tues", "Wed", "Thu", "Thur", "Thurs", "Fri", "Sat", "Sun")).replace("\\bday", "day")
_ORDINAL = (
    rf"(?P<ordinal>(?<!\bin\s)(?:\bthe\s+|{_ORD_INTRO})(?:(?P<od>\d{{1,2}})(?:st|nd|rd|th)\b"
    rf"(?!\s+{_ORDINAL_NOUNS})"
    # "booked for the fifteenth": a spelled ordinal only where nothing it could count follows
    rf"|(?P<odw>{_SPELLED_DAY})"
    rf"(?=\s*(?:$|[.,;:!?)]|[-–—]\s|(?:at|by|for|then|please)\b))"
    # "I got it on the 25, but …": a bare number after "on the" / "by the", where nothing
    # it could count follows
    r"|(?<=\b(?:on|by)\sthe\s)(?P<odn>[1-9]|[12]\d|3[01])(?![\d.,:]\d)"
    r"(?=\s*(?:$|[.,;:!?)]|[-–—]\s))))"
)
_CLOCK = (
    r"(?P<clock>\b(?:at\s+)?(?:(?P<ck_h>\d{1,2})(?:[:.](?P<ck_m>[0-5]\d))?\s*"
    r"(?P<ck_ap>[ap])\.?m\b\.?|(?<=at\s)(?P<ck_h24>[01]?\d|2[0-3])(?::|\.(?=[0-5]\d\b(?![.,]\d)"
    r"(?!\s*(?:%|percent|a|an|per|each)\b)))(?P<ck_m24>[0-5]\d)\b"
    r"|(?P<ck_word>noon|midnight)\b"
    # "8:15 tonight": a clock time next to a day word needs no "at"
    r"|(?P<ck_hm>[01]?\d|2[0-3]):(?P<ck_mm>[0-5]\d)(?=\s+(?:tonight|today|tomorrow"
    r"|last\s+night|this\s+(?:morning|afternoon|evening)))"
    # "Sunday 8:10", "Fri 7:30": a clock time right after a day's name needs no "at"
    r"|(?=\d)(?:(?<=day\s)|(?<=\b(?-i:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\s))"
    r"(?P<ck_hw>[01]?\d|2[0-3]):(?P<ck_mw>[0-5]\d)\b"
    # "at six a m", "seven thirty this morning", "eleven thirty tonite": spoken clock times
    # (after at / for / by … unless am or pm follows: checked by _clock, _CLOCK_INTRO)
    r"|(?P<ck_sp>\b" + _HOUR_WORDS + ")"
    r"(?:\s+(?P<ck_spm>o['’]clock|oh\s+five|(?:twenty|thirty|forty|fifty)(?:[-\s]five)?"
    r"|fifteen|ten))?(?:(?=\s+(?:(?P<ck_spap>[ap])\.?\s?m\b|(?:this\s+)?(?:morning|afternoon"
    r"|evening)|tonight|tonite|tomorrow))|(?<=clock))"
    # "by 4 this afternoon": a bare hour after a word of time, before a part of the day
    r"|(?=\d)(?:" + "|".join(rf"(?<=\b{w}\s)" for w in ("by", "until", "till", "before", "after",
                                                    "from", "around", "for", "about"))
    + r")(?P<ck_hd>1[0-2]|[1-9])(?=\s+(?:tonight|this\s+(?:morning|afternoon|evening)"
    r"|tomorrow\s+(?:morning|afternoon|evening|night)))"
    # "at half eleven", "till half past nine", "is at quarter to nine": a British half or
    # quarter hour after a word that introduces a time
    r"|(?:" + "|".join(rf"(?<=\b{w}\s)" for w in ("at", "by", "till", "until", "from",
                                                  "before", "after", "around", "about",
                                                  "for")) + ")"
    r"(?:(?P<ck_q>half|quarter)\s+(?P<ck_qrel>past|to|after)\s+(?P<ck_qh>" + _HOUR_WORDS
    + r"|1[0-2]|[1-9])\b|half\s+(?P<ck_hh>" + _HOUR_WORDS + r"|1[0-2]|[1-9])\b"
    r"(?!\s*(?:hours?|an?\b|the\b|of\b|dozen\b|price\b)))"
    # "the 8:12", "from 3:05 to 3:40", "set for 5:45": hours and minutes after such a word
    r"|(?:" + "|".join(rf"(?<=\b{w}\s)" for w in ("the", "from", "to", "for", "by", "till",
                                                  "until", "before", "after", "around",
                                                  "about")) + ")"
    r"(?P<ck_hi>[01]?\d|2[0-3]):(?P<ck_mi>[0-5]\d)\b(?!:\d)"
    # "be in by 10", "out by 7, they came early": a bare hour closing a clause after "by"
    r"|(?:(?<=\bby\s)|(?<=\btill\s)|(?<=\buntil\s))(?P<ck_hx>1[0-2]|[1-9])"
    r"(?=\s*(?:$|[,.;!?)](?!\d)|[-–—]\s|(?:and|so|but|or|then|please|latest)\b))"
    # "at 9", "at about 10": a bare hour after "at", not a count of something
    r"|(?:(?<=\bat\s)|(?<=\bat\sabout\s)|(?<=\bat\saround\s))(?P<ck_hb>1[0-2]|[1-9])\b(?![:.,]\d)(?!\s*(?:%|percent|[ap]\.?m\b"
    r"|years?|months?|weeks?|days?|hours?|h\b|minutes?|mins?|km|miles?|kg|lbs?|people"
    r"|of\b|out\b|points?|-|/))))"
)
def _easter(year: int) -> date:
    """Western Easter Sunday (the anonymous Gregorian computus)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    ll = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * ll) // 451
    month, day = divmod(h + ll - 7 * m + 114, 31)
    return date(year, month, day + 1)


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> date:
    """The n-th ``weekday`` (0 = Monday) of a month; n = -1 is the last one."""
    if n > 0:
        first = date(year, month, 1)
        return first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
    last = date(year, month, calendar.monthrange(year, month)[1])
    return last - timedelta(days=(last.weekday() - weekday) % 7)


# Lunar New Year's first day (from published calendars); outside these years it is not read.
_LUNAR_NEW_YEAR = {2020: (1, 25), 2021: (2, 12), 2022: (2, 1), 2023: (1, 22), 2024: (2, 10),
                   2025: (1, 29), 2026: (2, 17), 2027: (2, 6), 2028: (1, 26), 2029: (2, 13),
                   2030: (2, 3), 2031: (1, 23), 2032: (2, 11), 2033: (1, 31), 2034: (2, 19),
                   2035: (2, 8)}
HolidayRule = tuple[int, int] | Callable[[int], "date | list[date] | None"]
# Holidays by name: a fixed (month, day) or a rule giving the day(s) of a year (where two
# countries keep a day apart, both: the direction rule picks the nearer one). The year
# follows the direction rule, as for any year-less date.
_HOLIDAYS: dict[str, HolidayRule] = {
    "christmas eve": (12, 24), "christmas day": (12, 25), "christmas": (12, 25), "xmas": (12, 25),
    "boxing day": (12, 26), "new year's eve": (12, 31), "new years eve": (12, 31),
    "hogmanay": (12, 31), "new year's day": (1, 1), "new years day": (1, 1),
    "valentine's day": (2, 14), "valentines day": (2, 14), "valentine's": (2, 14),
    "halloween": (10, 31), "bonfire night": (11, 5), "guy fawkes night": (11, 5),
    "st patrick's day": (3, 17), "st. patrick's day": (3, 17), "st paddy's day": (3, 17),
    "st paddy's": (3, 17), "paddy's day": (3, 17), "independence day": (7, 4),
    "the fourth of july": (7, 4), "fourth of july": (7, 4), "4th of july": (7, 4),
    "canada day": (7, 1), "anzac day": (4, 25), "australia day": (1, 26),
    "burns night": (1, 25), "juneteenth": (6, 19), "cinco de mayo": (5, 5),
    "remembrance day": (11, 11), "veterans day": (11, 11), "veterans' day": (11, 11),
    "st andrew's day": (11, 30), "st david's day": (3, 1), "st george's day": (4, 23),
    "easter sunday": _easter, "easter": _easter,
    "easter monday": lambda y: _easter(y) + timedelta(days=1),
    "good friday": lambda y: _easter(y) - timedelta(days=2),
    "maundy thursday": lambda y: _easter(y) - timedelta(days=3),
    "shrove tuesday": lambda y: _easter(y) - timedelta(days=47),
    "pancake day": lambda y: _easter(y) - timedelta(days=47),
    "ash wednesday": lambda y: _easter(y) - timedelta(days=46),
    "palm sunday": lambda y: _easter(y) - timedelta(days=7),
    "holy saturday": lambda y: _easter(y) - timedelta(days=1),
    "ascension day": lambda y: _easter(y) + timedelta(days=39),
    "pentecost sunday": lambda y: _easter(y) + timedelta(days=49),
    "pentecost": lambda y: _easter(y) + timedelta(days=49),
    "whit sunday": lambda y: _easter(y) + timedelta(days=49),
    "whitsunday": lambda y: _easter(y) + timedelta(days=49),
    "whit monday": lambda y: _easter(y) + timedelta(days=50),
    "mothering sunday": lambda y: _easter(y) - timedelta(days=21),
    "mother's day": lambda y: [_easter(y) - timedelta(days=21), _nth_weekday(y, 5, 6, 2)],
    "father's day": lambda y: _nth_weekday(y, 6, 6, 3),
    "thanksgiving": lambda y: _nth_weekday(y, 11, 3, 4),
    "black friday": lambda y: _nth_weekday(y, 11, 3, 4) + timedelta(days=1),
    "memorial day": lambda y: _nth_weekday(y, 5, 0, -1),
    "labor day": lambda y: _nth_weekday(y, 9, 0, 1),
    "labour day": lambda y: _nth_weekday(y, 9, 0, 1),
    "martin luther king day": lambda y: _nth_weekday(y, 1, 0, 3),
    "martin luther king jr. day": lambda y: _nth_weekday(y, 1, 0, 3),
    "mlk day": lambda y: _nth_weekday(y, 1, 0, 3),
    "presidents' day": lambda y: _nth_weekday(y, 2, 0, 3),
    "presidents day": lambda y: _nth_weekday(y, 2, 0, 3),
    "lunar new year": lambda y: date(y, *_LUNAR_NEW_YEAR[y]) if y in _LUNAR_NEW_YEAR else None,
    "chinese new year": lambda y: date(y, *_LUNAR_NEW_YEAR[y]) if y in _LUNAR_NEW_YEAR
    else None,
}
_HOLIDAY = (r"(?P<holiday>(?P<hol_rel>\b(?:the\s+)?day\s+(?:after|before)\s+)?\b(?P<hol_name>"
    + "|".join(
    re.escape(h).replace("'", "['’]?").replace(r"\ ", r"\s+").replace(r"\.", r"\.?")
    for h in sorted(_HOLIDAYS, key=len, reverse=True)) + r")(?!\w|['’](?!s\b))"
    r"(?:,?\s+(?P<hol_y>(?:19|20)\d\d)(?![\d:]))?)")


def _holiday_key(phrase: str) -> str | None:
    key = re.sub(r"\s+", " ", phrase.lower().replace("’", "'"))
    for k in (key, key.replace("'", ""), key.replace("st ", "st. ", 1)):
        if k in _HOLIDAYS:
            return k
    return next((k for k in _HOLIDAYS if k.replace("'", "").replace(".", "")
                 == key.replace("'", "").replace(".", "")), None)


def _holiday(phrase: str, ref: date, direction: str, firm: bool = False) -> date | None:
    """The day a holiday's name means: its occurrence the direction asks for (the next one
    ahead, the last one back, or the nearest), among last year's, this year's and next's."""
    key = _holiday_key(phrase)
    if key is None:
        return None
    rule = _HOLIDAYS[key]
    days: list[date] = []
    for y in (ref.year - 1, ref.year, ref.year + 1):
        if isinstance(rule, tuple):
            days.append(date(y, *rule))
            continue
        got = rule(y)
        days += got if isinstance(got, list) else [got] if got is not None else []
    if not days:
        return None
    ahead = [d for d in days if d >= ref]
    back = [d for d in days if d <= ref]
    if direction == "future" and ahead:
        return _nearer(min(ahead), max(back) if back else None, ref, firm)
    if direction == "past" and back:
        return _nearer(max(back), min(ahead) if ahead else None, ref)
    if direction in ("future", "past"):
        return None
    return min(days, key=lambda d: (abs((d - ref).days), d < ref))


_ENDOF = (r"(?P<endof>\b(?:(?:the\s+)?end|(?:the\s+)?last\s+day)\s+of\s+"
          r"(?P<eo_mod>the|this|next)\s+(?P<eo_u>month|year)\b)")
_NTH_ORDINALS = {w: n for w, n in _SPELLED_ORDINALS.items() if n <= 4} | {
    "1st": 1, "2nd": 2, "3rd": 3, "4th": 4, "last": -1}
#: "the first Monday of next month", "the last Friday in March", "second Tuesday of the month"
_NTHWD = (r"(?P<nthwd>\b(?:the\s+)?(?P<nw_n>" + "|".join(_NTH_ORDINALS) + ")"
          rf"\s+(?P<nw_d>{_WEEKDAY})\s+(?:of|in)\s+(?:(?P<nw_mod>the|this|next|last)\s+month"
          rf"|(?P<nw_m>{_MONTH_FULL}))\b)")
_GRAMMAR = re.compile(
    f"{_HOLIDAY}|{_ENDOF}|{_NTHWD}|{_ISO}|{_DMY}|{_MDY}|{_MY}|{_AGO}|{_WORKDAYS}|{_IN}|{_DAYWORD}|{_WEEKEND}|{_MODUNIT}|{_WEEKDAY_RE}"
    f"|{_MONTH_BARE}|{_YEAR}|{_ORDINAL}|{_CLOCK}|{_SLASH}|{_MONTH_ALONE}",
    re.IGNORECASE,
)

_DEADLINE_BEFORE = re.compile(
    r"(?:\bby|\bbefore|\bdue(?:\s+(?:on|by|date\s+is))?|\bno\s+later\s+than|\bnot\s+later\s+than"
    r"|\bdeadline(?:\s+(?:is|was|of))?(?:\s+(?:on|by))?|\bdeadline\s*:)\s+$",
    re.IGNORECASE,
)
_DEADLINE_AFTER = re.compile(r"\s+(?:is|was)\s+(?:the|my|our|a)\s+deadline\b", re.IGNORECASE)

_FUTURE = re.compile(
    r"\b(?:will|shall|gonna|wanna|going\s+to|plan(?:ning)?\s+to|want\s+to|need\s+to|have\s+to"
    r"|has\s+to|hope\s+to|hoping\s+to|about\s+to|can't\s+wait|cannot\s+wait|looking\s+forward"
    r"|upcoming|tomorrow|tonight|soon|next|due|deadline|remind|let's|should|intend|scheduled"
    r"|won't)\b|['’]ll\b",
    re.IGNORECASE,
)
_PAST = re.compile(
    r"\b(?:was|were|did|didn't|wasn't|weren't|had|went|got|came|saw|made|took|told|said|met"
    r"|ran|gave|left|bought|found|felt|thought|heard|ate|spent|wrote|won|lost|began|drove"
    r"|flew|sent|brought|taught|caught|kept|slept|sat|stood|became|paid|woke|wore|broke|chose"
    r"|drank|fell|forgot|grew|knew|meant|rode|sold|spoke|swam|threw|understood|ago|yesterday|last|"
    r"[a-z]+ed)\b",
    re.IGNORECASE,
)
# "-ed" words that are usually adjectives or not past tense at all.
_NOT_PAST = _words(
    """
    need needed bed red shed seed speed feed weed indeed hundred excited interested tired bored
    scared worried married supposed used based pleased thrilled stressed concerned amazed
    overwhelmed relieved prepared planned scheduled wed
    """
)
_CLAUSE_BREAK = re.compile(
    r"[.!?;\n]|,\s*(?:but|and|so|because|though|although|while|whereas|yet)\b", re.IGNORECASE
)


# --------------------------------------------------------------------------- extraction


def extract_times(text: str, ref: datetime) -> list[TimeMention]:
    """Find the time expressions in ``text`` and resolve them against ``ref``.

    ``ref`` is the event's own time (naive means UTC). Mentions come back in text order and do
    not overlap. A text without any candidate token returns ``[]`` after one regex scan.
    """
    if not _PREFILTER.search(text):
        return []
    if ref.tzinfo is None:
        ref = ref.replace(tzinfo=UTC)
    local_ref = ref.replace(tzinfo=None)
    tz = ref.tzinfo
    assert tz is not None
    raw: list[_Raw] = []
    for m in _GRAMMAR.finditer(text):
        kind = next(k for k in _KINDS if m.group(k) is not None)
        start, end = m.start(kind), m.end(kind)
        if kind == "weekday" and m.group("wd") in ("Sat", "Sun", "Wed", "sat", "sun", "wed", "mon") \
                and not m.group("wd_mod") and not _DAY_INTRO.search(text, 0, start) \
                and not _DATE_AFTER.match(text, end) and not _short_day_alone(text, m):
            continue  # "Sat next to her", "Sun was out": words, not days
        if kind == "malone" and not _month_alone(text, m):
            continue  # "Red October", "the October Revolution", "January Jones": names
        if kind == "year" and _counts_a_noun(text, m.start("yr"), m.end("yr")):
            continue  # "a total of 2000 words": a number of things, not a year
        if kind in ("mbare", "year"):
            # "in June" is about June; "last June" / "early 2022" keep their modifier.
            mod_group, core_group = ("mb_mod", "mb_m") if kind == "mbare" else ("yr_mod", "yr")
            if m.group(mod_group).lower() not in _KEEP_MODIFIER:
                start = m.start(core_group)
        deadline = False
        before = _DEADLINE_BEFORE.search(text, max(0, start - 40), start)
        if before:
            start, deadline = before.start(), True
        elif _DEADLINE_AFTER.match(text, end):
            deadline = True
        clause = _clause(text, start, end)
        direction = _direction(text, start, end, deadline, clause)
        since = kind == "mbare" and m.group("mb_mod").lower() == "since" \
            or kind == "year" and m.group("yr_mod").lower() == "since"
        if since or _SINCE.search(text, 0, m.start(kind)) \
                and kind not in ("ago", "inn", "workdays"):
            direction = "past"  # "since January", "since the 3rd": a day gone by
        try:
            firm = bool(_FIRM.search(clause)) or kind == "malone" and (
                deadline or _DUE.search(clause) is not None)
            resolved = _resolve(kind, m, local_ref, direction, firm=firm)
        except (OverflowError, ValueError):  # past the calendar's ends: "9999-12-31"
            resolved = None
        if resolved is not None:
            raw.append(_Raw(kind, start, end, deadline, *resolved, alone=_clock_alone(
                m, local_ref, direction) if kind == "clock" else None))
    out: list[TimeMention] = []
    for r in _merge_clock(_merge_weekday(raw, text), text):
        if r.kind == "clock" and r.alone is not None:
            r = _Raw(r.kind, r.start, r.end, r.deadline, *_minute(r.alone))
        try:
            mention = _to_mention(r, text, tz)
        except (OverflowError, ValueError):
            continue
        if time_in_range(mention.start_ts.timestamp()) \
                and time_in_range(mention.end_ts.timestamp()):
            out.append(mention)  # a time enfold accepts, like any event's
    return out


#: What may follow a short weekday name that is also a word, for it to be a day by itself:
#: "'s", a punctuation mark, the end, "and" / "or" ("delivered Wed and …", "Wed's
#: delivery", "back to school wed, …").
_SHORT_DAY_AFTER = re.compile(r"['’]s\b|\s*(?:[,.;:!?)/]|[-–—]\s|$)|\s+(?:and|or)\b")
#: Words before "wed" that make it the verb ("will wed", "to wed") or "we'd" ("and wed").
_WED_VERB_BEFORE = re.compile(r"\b(?:to|will|shall|would|could|should|can|must|might|gonna"
                              r"|wanna|get|gets|got|getting|gotten|finally|just|newly|they|we"
                              r"|[a-z]+['’](?:ll|d|re))\s+$", re.IGNORECASE)
#: What ends the text before a sentence's first word (quotes and brackets included).
_SENTENCE_END = frozenset(".!?:;-–—\"“”'‘’([")


def _short_day_alone(text: str, m: re.Match[str]) -> bool:
    """Whether a short weekday name that is also a word ("Wed", "Sat", "Sun", "wed") is a
    day although no word introduces it (:data:`_DAY_INTRO`) and no date or time follows:
    "Wed" anywhere and "Sat" / "Sun" inside a sentence (not after "the": "the Sun"), with
    :data:`_SHORT_DAY_AFTER` after them; "wed" in lower case the same, unless it reads as
    the verb or as "we'd". "sat", "sun" and "mon" in lower case stay words."""
    name, start, end = m.group("wd"), m.start("wd"), m.end("wd")
    if not _SHORT_DAY_AFTER.match(text, end):
        return False
    if name == "Wed":
        return True
    before = text[max(0, start - 40):start]
    if name == "wed":
        return not _WED_VERB_BEFORE.search(before)
    if name in ("Sat", "Sun"):
        return _inside_sentence(before) and not re.search(r"\bthe\s+$", before[-8:],
                                                          re.IGNORECASE)
    return False


def _inside_sentence(before: str) -> bool:
    """Whether a word whose text before is ``before`` stands inside a sentence: something
    comes before it, and its last character is no sentence end (the last character only:
    no scan of a long text)."""
    last = before.rstrip()[-1:]
    return bool(last) and last not in _SENTENCE_END


#: Words that put a month's name alone ahead ("the December payment is due").
_DUE = re.compile(r"\b(?:due|coming\s+up|deadline)\b", re.IGNORECASE)
_CAPITAL_WORD = re.compile(r"[A-Z][\w'’.-]*")


def _month_alone(text: str, m: re.Match[str]) -> bool:
    """Whether a month's name alone is no part of a longer name: no capitalized word right
    after it, nor right before it inside a sentence."""
    after = text[m.end("ma_m"):m.end("ma_m") + 40].lstrip(" ")
    if _CAPITAL_WORD.match(after) and not after.startswith("I "):
        return False
    before = text[max(0, m.start("ma_m") - 40):m.start("ma_m")]
    words = before.rstrip().split()
    if not words or before[-1:] not in (" ", "\t"):
        return True
    prev = words[-1]
    return not (_CAPITAL_WORD.fullmatch(prev) and prev != "I"
                and _inside_sentence(before.rstrip()[:-len(prev)]))


def _counts_a_noun(text: str, start: int, end: int) -> bool:
    """Whether the number at text[start:end] counts the noun after it ("of 2000 words")."""
    from enfold.text.nlp import parse

    doc = parse(text)
    span = None if doc is None else doc.char_span(start, end)
    if span is None or len(span) != 1:
        return False
    tok = span[0]
    return tok.dep_ == "nummod" and tok.head.pos_ == "NOUN" and tok.head.i > tok.i


_SINCE = re.compile(r"\bsince\s+(?:the\s+)?$", re.IGNORECASE)
_KEEP_MODIFIER = frozenset({"last", "next", "this", "early", "late", "mid", "mid-"})
_KINDS = (
    "holiday", "endof", "nthwd", "iso", "dmy", "mdy", "my", "ago", "workdays", "inn", "dayword", "weekend", "modunit", "weekday",
    "mbare", "year", "ordinal", "clock", "slash", "malone",
)


@dataclass
class _Raw:
    kind: str
    start: int
    end: int
    deadline: bool
    granularity: str
    first: datetime  # local wall-clock start
    last: datetime  # local wall-clock end (exclusive)
    value: str
    alone: datetime | None = None  # a clock time's reading when no day goes with it


# Verbs whose object is an arrangement in time: the time they carry lies ahead, whatever
# the verb's tense ("booked flights for May 14", "pushed the launch to November 10").
_ARRANGE = _words("""
    book reserve schedule reschedule move push postpone delay bring plan arrange set fix
    confirm order register enrol enroll sign invite pencil slot organise organize rebook
    bump shift lock defer adjourn extend rearrange secure
""")


def _arranges(tok: Any) -> bool:
    """An arranging verb, also with "re-" ("rebooked", "re-scheduled")."""
    word = tok.lower_
    forms = {tok.lemma_.lower(), word}
    for ending in ("ed", "d", "ing", "s"):
        if word.endswith(ending):
            stem = word[: -len(ending)]
            forms |= {stem, stem[:-1]} if stem[-2:-1] == stem[-1:] else {stem}
    # the lemmatiser guesses at words it does not know ("rebooked" -> "rebooke")
    return any(f in _ARRANGE or f.removeprefix("re").lstrip("-") in _ARRANGE for f in forms)
_EVENT_NOUNS_AHEAD = _words("appointment deadline delivery due booking reservation")


def _past_form(word: str) -> bool:
    """Whether ``word`` is only a past form of a verb ("got", "lost", "went"), not also its
    base ("put", "set", "read")."""
    from lemminflect import getAllLemmas, getInflection

    lemmas = getAllLemmas(word).get("VERB", ())
    return bool(lemmas) and all(
        lemma != word and word in getInflection(lemma, "VBD") for lemma in lemmas)


def _parsed_direction(text: str, start: int, end: int) -> str | None:
    """The direction from the parse (:func:`_tense_direction`), or "near" for the day of a
    thing that exists by now, where the tense says nothing about that day: "is that the bill
    from the 28th?", "the outage on Sunday affects all invoices", "Thursday's delivery is
    short", "the order made on the 8th remains in force". The day the thing dates from (or
    starts on: "on nights from the 20th") is then the nearest such day, either way, unless
    the clause looks ahead in so many words (a modal, "going to", an arranging verb)."""
    from enfold.text.nlp import parse

    tense = _tense_direction(text, start, end)
    if tense == "past":
        return tense
    doc = parse(text)
    span = None if doc is None else doc.char_span(start, end, alignment_mode="expand")
    if span is None or len(span) == 0:
        return tense
    root = span.root
    if root.dep_ == "poss":  # "Thursday's delivery"
        owner, prep = root.head, "'s"
    elif root.dep_ == "pobj" and root.head.lower_ in ("from", "on", "of"):
        owner, prep = root.head.head, root.head.lower_
    elif root.dep_ == "npadvmod" and root.head.tag_ == "VBN":  # "the refund issued Monday"
        owner, prep = root.head, "on"
    else:
        return tense
    if owner.tag_ == "VBN" and owner.dep_ == "acl" and not _arranges(owner) and not any(
            c.dep_ in ("aux", "auxpass") for c in owner.children):
        return "near"  # a participle of a thing done: "the order made on the 8th"
    if prep == "'s":  # "Tuesday's match report is up", "Friday's figures are off"
        thing = owner.pos_ in ("NOUN", "PROPN")
    elif prep == "from":
        # a thing (a noun, or a verb form in a noun's place: "jake's filling from the 2nd"),
        # or "be" that says what a thing is ("are these the pics from the 13th?"); not "be"
        # with a state ("the kids are off from friday": from then on)
        thing = (owner.pos_ in ("NOUN", "PROPN")
                 or owner.lemma_ == "be" and any(c.dep_ == "attr" for c in owner.children)
                 or owner.lemma_ != "be" and owner.dep_ in ("nsubj", "nsubjpass", "dobj",
                                                            "attr", "pobj"))
    else:
        # "on": a dated thing whose effect a simple present tells ("the outage on Sunday
        # affects …"); not what one has or what is where ("I have a meeting on Friday",
        # "the party on Saturday is at Tom's": ahead)
        thing = (owner.pos_ in ("NOUN", "PROPN") and owner.dep_ in ("nsubj", "nsubjpass")
                 and owner.head.tag_ in ("VBZ", "VBP") and owner.head.lemma_ != "be")
    if not thing:
        return tense
    verb = next((t for t in [owner, *owner.ancestors] if t.pos_ in ("VERB", "AUX")), None)
    if verb is not None:
        around = [verb, *verb.children, *(verb.ancestors if verb.dep_ in ("xcomp", "aux")
                                          else ())]
        if any(t.tag_ == "MD" or t.lower_ in ("to", "going", "gonna") or _arranges(t)
               for t in around if t.dep_ in ("aux", "auxpass", "ROOT", "xcomp") or t is verb):
            return tense
        if any(c.dep_ == "advcl" and any(g.dep_ == "mark" and g.lower_ in ("if", "unless")
                                         for g in c.children) for c in verb.children):
            return tense  # "Sunday's match is off if the pitch floods": a condition ahead
    return "near"


def _tense_direction(text: str, start: int, end: int) -> str | None:
    """The direction from the parse: the tense of the verb the expression hangs from.

    A past verb points back ("picked up the keys on Dec 15"), unless it arranges something
    (:data:`_ARRANGE`: "booked the tattoo for Jan 4"); a present or future verb, a modal or an
    infinitive points forward ("the concert is March 8", "race day is March 22", "want to go
    on Friday"). None without a parse or a verb to read."""
    from enfold.text.nlp import parse

    doc = parse(text)
    if doc is None:
        return None
    span = doc.char_span(start, end, alignment_mode="expand")
    if span is None or len(span) == 0:
        return None
    tok = span.root
    seen = 0
    via_noun = False  # the time belongs to a thing ("flights for May 14"), not to the verb
    slot = False  # "got us tickets for saturday": a thing got or made for a time ahead
    prep = None
    while tok.pos_ not in ("VERB", "AUX") and tok.head is not tok and seen < 12:
        if tok.dep_ == "pobj" and prep is None:
            prep = tok.head.lower_
        tok = tok.head
        seen += 1
        if tok.lemma_.lower() in _EVENT_NOUNS_AHEAD:
            return "future"
        slot = slot or (prep == "for" and tok.pos_ == "NOUN" and not via_noun
                        and tok.lemma_.lower() not in ("thank", "thanks"))
        via_noun = via_noun or tok.pos_ in ("NOUN", "PROPN")
    if slot:
        return "future"
    if tok.pos_ not in ("VERB", "AUX"):
        # A verbless note ("Booked flights for May 14"): an arranging word still says ahead.
        if any(_arranges(t) and (t.tag_.startswith("VB") or t.lower_.endswith("ed"))
               for t in span.sent):  # "Rescheduled standup → Thu", tagged a noun
            return "future"
        return None
    verb = tok
    # A participle that modifies a noun has no tense of its own ("we'll have the flat painted
    # by Saturday", "the report signed by Friday"): the verb over the noun tells the time.
    while verb.tag_ == "VBN" and verb.dep_ in ("acl", "amod") and not any(
            c.dep_ in ("aux", "auxpass") for c in verb.children):
        over = next((a for a in verb.ancestors if a.pos_ in ("VERB", "AUX")), None)
        if over is None:
            break
        verb = over
    # A verb chain: "want to go", "is going to be", "have been planning": read its top.
    chain = [verb]
    while verb.dep_ in ("xcomp", "aux", "auxpass") and verb.head is not verb:
        verb = verb.head
        chain.append(verb)
    aux = [c for t in chain for c in t.children if c.dep_ in ("aux", "auxpass")]
    preps = {t.lower_ for t in span.root.ancestors if t.dep_ == "prep"} | {
        t.lower_ for t in span if t.dep_ == "prep"}
    if any(_arranges(t) for t in chain) and (
            preps & {"for", "to", "until", "till", "from"} or via_noun
            or span.root.head in chain and span.root.dep_ in ("npadvmod", "dobj", "attr",
                                                              "nummod")):
        return "future"  # "booked 20/8", "pushed it to Friday", "flights for May 14"
    willed = any(a.tag_ == "MD" and a.lower_ not in ("would", "could", "might") for a in aux)
    if "on" in preps and not willed and any(_arranges(t) and (t.dep_ == "acl" or any(
            c.dep_ == "dobj" or c.dep_ == "prep" and c.lower_ == "for" for c in t.children))
            for t in chain):
        return "near"  # "booked the vet on the 3rd": the day booked, or the day of booking
    named = span.root  # the day's noun: "Monday" in "for Monday morning" is its compound
    while named.dep_ == "compound" and named.head is not named:
        named = named.head
    setter = named.head.head if named.dep_ == "pobj" and named.head.lower_ == "for" else None
    if setter is not None and _holiday_key(span.text) is None and (
            setter in chain and not any(t.lemma_.lower() in ("thank", "be") for t in chain)
            or setter.pos_ == "VERB" and setter.lemma_.lower() not in ("thank", "be")):
        return "future"  # "got the plumber in for Thursday", "assigned a technician for
        # Monday morning", "the hearing listed for Friday has been vacated": a day set for
    if named.dep_ == "pobj" and named.head.lower_ in ("until", "till") and not any(
            t.tag_ == "VBD" for t in [*chain, *aux]):
        return "future"  # "held for you until Friday": until a day not yet gone
    if verb.tag_ in ("VB", "VBP") and not aux and _past_form(verb.lower_):
        return "past"  # a diary's subjectless past the tagger took for a present or an
        # imperative: "Got back on the 2nd", "Lost my keys on Friday night"
    if verb.tag_ == "VB" and verb.dep_ == "ROOT" and not any(
            c.dep_ in ("nsubj", "aux") for c in verb.children):
        return "future"  # an imperative: "see you at Christmas", "send it Friday"
    if willed:
        return "future"
    if any(a.lower_ == "to" for a in aux) or any(
            c.lower_ in ("going", "gonna") for c in chain):
        return "future"
    if any(c.tag_ == "VB" and c.dep_ != "xcomp" and any(d.dep_ == "nsubj" for d in c.children)
           for c in chain) and not aux:
        return "future"  # a present the tagger read as a base form ("the results come out")
    if verb.lower_ == "got" and any(a.lemma_ == "have" for a in aux):
        return "future"  # "I've got a scan on Thursday": have, in the present
    tenses = [t for c in [*chain, *aux] for t in c.morph.get("Tense", [])]
    if "Past" in tenses:
        return "past"
    if "Pres" in tenses or any(c.tag_ in ("VBZ", "VBP") for c in chain):
        return "future"
    return None


#: Words that put a time ahead in so many words (:func:`_nearer` keeps a far date ahead).
_FIRM = re.compile(r"\b(?:will|shall|gonna|going\s+to|can't\s+wait|cannot\s+wait"
                   r"|looking\s+forward|upcoming|see\s+you|let['’]s|remind\s+me)\b|['’]ll\b",
                   re.IGNORECASE)


def _clause(text: str, start: int, end: int) -> str:
    """The words of the clause around text[start:end], less the expression itself."""
    left = max((m.end() for m in _CLAUSE_BREAK.finditer(text, 0, start)), default=0)
    right_m = _CLAUSE_BREAK.search(text, end)
    right = right_m.start() if right_m else len(text)
    return text[left:start] + " " + text[end:right]


def _direction(text: str, start: int, end: int, deadline: bool, clause: str) -> str:
    """Which way the clause around text[start:end] points: "future", "past" or "neutral"
    (``clause``: its words, :func:`_clause`)."""
    # A past verb wins over a deadline cue: "Filed three updates before noon" reports work
    # done, it sets no deadline (the clause rules below had the same order).
    parsed = _parsed_direction(text, start, end)
    if parsed is not None:
        return parsed
    if _FUTURE.search(clause):
        return "future"
    if any(w.group().lower() not in _NOT_PAST for w in _PAST.finditer(clause)):
        return "past"
    return "future" if deadline else "neutral"


def _resolve(
    kind: str, m: re.Match[str], ref: datetime, direction: str, *, firm: bool = False
) -> tuple[str, datetime, datetime, str] | None:
    """Resolve one grammar match to (granularity, start, end, value) in ref's wall clock
    (``firm``: the clause says in so many words that the time is ahead, see
    :func:`_nearer`)."""
    g = m.group
    if direction == "near" and kind not in ("ordinal", "weekday", "weekend"):
        direction = "neutral"  # the nearest occurrence already
    if kind == "iso":
        try:  # the standard library is exact for ISO 8601
            stamp = datetime.fromisoformat(g("iso").replace("/", "-"))
        except ValueError:
            return None
        return _minute(stamp) if len(g("iso")) > 10 else _day(stamp.date())
    if kind in ("dmy", "mdy"):
        p = kind + "_"
        said = g(p + "d").lower()
        month, year = _MONTHS[g(p + "m").lower().rstrip(".")], g(p + "y")
        day = _SPELLED_ORDINALS[said] if said in _SPELLED_ORDINALS else int(
            re.sub(r"\D", "", said))
        phrase = f"{calendar.month_name[month]} {day}" + (f", {year}" if year else "")
        d = _library(phrase, ref.date(), "current_period")
        if d is None:
            return None
        when = d.date()
        if not year:
            when = _shift_year(when, ref.date(), direction, firm)
        return _day(when)
    if kind == "my":
        return _month(int(g("my_y")), _MONTHS[g("my_m").lower()])
    if kind in ("ago", "inn"):
        n_text, unit = (g("ago_n"), g("ago_u")) if kind == "ago" else (g("in_n"), g("in_u"))
        n = _count(n_text)
        unit = unit.lower()
        future = kind == "inn" or g("ago_dir").lower() != "ago"
        if unit in ("hour", "minute"):  # "in 2 hours", "20 minutes ago": a clock time
            if kind == "inn" and direction == "past":
                return None  # "finished in 2 hours": a duration
            step = timedelta(hours=n) if unit == "hour" else timedelta(minutes=n)
            return _minute(ref + step if future else ref - step)
        if unit == "fortnight":
            n, unit = 2 * n, "week"
        if kind == "ago" and g("ago_today"):  # "three months ago today": that very day
            return _day(_months_back(ref.date(), n * {"year": 12, "month": 1}.get(unit, 0))
                        if unit in ("month", "year") else ref.date()
                        - timedelta(days=n * (7 if unit == "week" else 1)))
        counted = "couple" not in n_text.lower()
        if unit == "month" and counted:  # "in three months", "a month ago": a day, as
            # "in two weeks" is, the same day of the month counted on the calendar; not
            # "lost 10kg in three months" (a duration, as with hours)
            if kind == "inn" and direction == "past":
                return None
            return _day(_months_back(ref.date(), -n if future else n))
        phrase = f"in {n} {unit}s" if future else f"{n} {unit}s ago"
        d = _library(phrase, ref.date(), "current_period")
        return None if d is None else _by_unit(unit, d.date(), counted=counted)
    if kind == "workdays":
        when, left = ref.date(), _count(g("wd_n"))
        while left > 0:
            when += timedelta(days=1)
            left -= when.weekday() < 5
        return _day(when)
    if kind == "dayword":
        phrase = re.sub(r"\s+", " ", g("dayword").lower())
        phrase = " ".join(_CHAT_DAYWORDS.get(w, w) for w in phrase.split())
        if phrase.startswith("day "):  # "parcel arrives day after tomorrow"
            phrase = "the " + phrase
        if phrase in ("tonight", "tonite", "2nite", "this evening") and ref.hour < 5 \
                and direction == "past":
            # "just got home, tonight was the leaving do" at 00:45: the evening just gone
            return _day(ref.date() - timedelta(days=1))
        d = _library(phrase, ref.date(), "current_period")
        return None if d is None else _day(d.date())
    if kind == "holiday":
        found = _holiday_named(m, ref, direction, firm)
        if found is None or not g("hol_rel"):
            return found
        # "the day after Thanksgiving": the holiday's occurrence, then a day on
        shift = 1 if "after" in g("hol_rel").lower() else -1
        return _day(found[1].date() + timedelta(days=shift))
    if kind == "nthwd":
        return _nth_weekday_of(m, ref.date(), direction)
    if kind == "endof":
        today = ref.date()
        if g("eo_u").lower() == "year":
            return _day(date(today.year + (g("eo_mod").lower() == "next"), 12, 31))
        y, mo = (today.year, today.month) if g("eo_mod").lower() != "next" else (
            today.year + today.month // 12, today.month % 12 + 1)
        return _day(date(y, mo, calendar.monthrange(y, mo)[1]))
    if kind == "weekend":
        if g("we_after"):  # "the weekend after next"
            _, first, _, _ = _weekend("next", ref.date(), direction)
            return _weekend("this", first.date() + timedelta(days=2), direction)
        return _weekend(g("we_mod").lower(), ref.date(), direction)
    if kind == "modunit":
        if g("mu_after"):  # "the week after next": two of them on
            unit = g("mu_u2").lower()
            d = _library(f"in 2 {unit}s", ref.date(), "current_period")
            return None if d is None else _by_unit(unit, d.date())
        mod = "next" if g("mu_mod").lower() == "coming" else g("mu_mod").lower()
        if g("mu_same"):  # "this time next year": the same day, a year on
            count = {"next": 1, "last": -1}.get(mod, 0)
            return _day(_same_day(ref.date(), g("mu_u").lower(), count))
        d = _library(f"{mod} {g('mu_u').lower()}", ref.date(), "current_period")
        return None if d is None else _by_unit(g("mu_u").lower(), d.date())
    if kind == "weekday":
        mod = re.sub(r"\s+", " ", (g("wd_mod") or "").lower())
        wd = g("wd").lower()
        wd = _SHORT_WEEKDAYS.get(wd, wd)
        # "Tuesday week", "a week on Friday": that day a week later; "Monday after next"
        post = re.sub(r"\s+", " ", (g("wd_post") or "").strip().lower())
        if g("wd_pre") or post:
            base = _library(f"next {wd}" if post == "after next" or mod == "next" else wd,
                            ref.date(), "future")
            weeks = 2 if "fortnight" in (g("wd_pre") or "").lower() else 1
            return None if base is None else _day(base.date() + timedelta(days=7 * weeks))
        if mod in ("coming", "this coming"):
            mod = "next"
        if mod:
            d = _library(f"{mod} {wd}", ref.date(), "future")
        elif direction in ("near", "past") and ref.hour >= 17 \
                and _WEEKDAYS.index(wd) == ref.weekday():
            # "Wednesday was a write-off", written on Wednesday evening: the day ending
            d = datetime.combine(ref.date(), time())
        elif direction == "near":  # whichever of the last and the next is closer
            d = _closest([_library(wd, ref.date(), "past"),
                          _library(wd, ref.date(), "future")], ref)
        else:
            d = _library(wd, ref.date(), "past" if direction == "past" else "future")
        return None if d is None else _day(d.date())
    if kind == "mbare":
        mod, month = g("mb_mod").lower(), _MONTHS[g("mb_m").lower()]
        found = _bare_month(mod, month, ref.date(), direction)
        if mod.startswith("mid"):  # "mid-May": the 15th, as a calendar would put it
            return _day(found[1].date().replace(day=15))
        if mod.startswith("end"):  # "end of April": its last day, as "the end of the month"
            return _day(found[2].date() - timedelta(days=1))
        return found
    if kind == "malone":  # the nearest such month, unless the clause points one way
        month = _MONTHS[g("ma_m").lower()]
        if direction == "past" or direction == "future" and firm:
            return _bare_month("", month, ref.date(), direction)
        back = _bare_month("", month, ref.date(), "past")
        ahead = _bare_month("", month, ref.date(), "future")
        now = ref.year * 12 + ref.month
        return min((back, ahead), key=lambda f: abs(f[1].year * 12 + f[1].month - now))
    if kind == "year":
        return _year(int(g("yr")))
    if kind == "ordinal":
        day = int(g("od") or g("odn") or 0) or _SPELLED_ORDINALS[g("odw").lower()]
        nth = _ordinal_day(day, ref.date(), direction)
        return None if nth is None else _day(nth)
    if kind == "clock":
        return _clock(m, ref, direction)
    if kind == "slash":
        return _slashed(m, ref.date(), direction, firm)
    raise AssertionError(kind)


def _same_day(day: date, unit: str, step: int) -> date:
    """``day`` moved ``step`` weeks, months or years, on the same day of the month (the
    month's last when it has fewer days: a year on from 29 February is 28 February)."""
    if unit == "week":
        return day + timedelta(days=7 * step)
    months = day.year * 12 + day.month - 1 + step * (12 if unit == "year" else 1)
    year, month = divmod(months, 12)
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def _slashed(m: re.Match[str], ref: date, direction: str, firm: bool = False
             ) -> tuple[str, datetime, datetime, str] | None:
    """A numeric day and month (see :data:`_SLASH`): the larger number is the day."""
    a, b, sep = int(m.group("sl_a")), int(m.group("sl_b")), m.group("sl_sep")
    if sep == "." and m.start("slash") == m.start("sl_a") and not re.search(
            r"\b(?:on|by|dated|from|until|till|due)\s+$", m.string[:m.start("slash")]):
        return None
    year_text = m.group("sl_y")
    if a > 12 >= b >= 1 and a <= 31:
        readings = [(a, b)]
    elif b > 12 >= a >= 1 and b <= 31:
        readings = [(b, a)]
    elif 1 <= a <= 12 and 1 <= b <= 12 and (year_text or re.search(
            r"\b(?:on|by|dated|from|until|till|due)\s+$", m.string[:m.start("slash")])
            or re.match(r"\s+at\s+\d", m.string[m.end("slash"):])):
        # "received on 04/08", "attend on 02/04": day/month or month/day, as the writer's
        # country has it; of the two readings, the one nearer the day of writing (in the
        # clause's direction) — a numeric date is written for a day close at hand
        readings = [(a, b), (b, a)] if a != b else [(a, b)]
    else:
        return None  # "3/4", "7/10": a fraction, a score or a date in doubt
    days = []
    for day, month in readings:
        try:
            if year_text:
                year = int(year_text) + (2000 if len(year_text) == 2 else 0)
                days.append(date(year, month, day))
            else:
                days.append(_shift_year(date(ref.year, month, day), ref, direction, firm))
        except ValueError:
            continue
    nearest = _closest(days, ref)
    return None if nearest is None else _day(nearest)


# ----------------------------------------------------------------- library and arithmetic


# A phrase that moves with its reference day: counted in days and weeks only (at least one
# of _DAY_UNITS, the rest modifiers or small counts), so "next friday" from any Monday is
# that Monday plus 4 days.
_DAY_UNITS = _words("""
    day days week weeks weekend monday tuesday wednesday thursday friday saturday sunday
    today tomorrow yesterday tonight night morning afternoon evening
""")
_DAY_MODIFIERS = _words("next last this coming in ago a an the before after")
_A_MONDAY = date(2001, 1, 1)


def _library(phrase: str, day: date, prefer: str) -> datetime | None:
    """dateparser on one short, pre-cleaned span, relative to ``day``.

    Every phrase sent here resolves to a date, so the result depends on ref's date only. A
    phrase counted in days and weeks ("next friday", "3 days ago", "last night") depends
    only on the day's weekday: it is resolved once per weekday, from a day with that
    weekday, and shifted. Others (months, years, dates) are cached by day. A library call
    costs ~1 ms; a cache hit ~1 µs.
    """
    words = phrase.split()
    if any(w in _DAY_UNITS for w in words) and all(
            w in _DAY_UNITS or w in _DAY_MODIFIERS or (w.isdigit() and len(w) <= 3)
            for w in words):
        anchor = _A_MONDAY + timedelta(days=day.weekday())
        found = _parse(phrase, anchor, prefer)
        return None if found is None else found + (day - anchor)
    return _parse(phrase, day, prefer)


@functools.lru_cache(maxsize=4096)
def _parse(phrase: str, day: date, prefer: str) -> datetime | None:
    parser = DateDataParser(
        languages=["en"],
        settings={
            "RELATIVE_BASE": datetime.combine(day, time(12)),
            "PREFER_DATES_FROM": prefer,
            "RETURN_TIME_AS_PERIOD": True,
            "PREFER_DAY_OF_MONTH": "first",
        },
    )
    found: datetime | None = parser.get_date_data(phrase).date_obj
    return None if found is None else found.replace(tzinfo=None)


def _count(text: str) -> int:
    t = re.sub(r"\s+", " ", text.lower())
    if "couple" in t:
        return 2
    return int(t) if t.isdigit() else _NUMBER_WORDS[t]


def _months_back(d: date, n: int) -> date:
    """The same day of the month ``n`` months before (the month's last day where it has none)."""
    y, m = divmod(d.month - 1 - n, 12)
    y, m = d.year + y, m + 1
    return date(y, m, min(d.day, calendar.monthrange(y, m)[1]))


def _midnight(d: date) -> datetime:
    return datetime.combine(d, time())


def _day(d: date) -> tuple[str, datetime, datetime, str]:
    return "day", _midnight(d), _midnight(d + timedelta(days=1)), d.isoformat()


def _minute(dt: datetime) -> tuple[str, datetime, datetime, str]:
    dt = dt.replace(second=0, microsecond=0)
    return "datetime", dt, dt + timedelta(minutes=1), dt.strftime("%Y-%m-%dT%H:%M")


def _week(d: date) -> tuple[str, datetime, datetime, str]:
    monday = d - timedelta(days=d.weekday())
    sunday = monday + timedelta(days=6)
    return "week", _midnight(monday), _midnight(monday + timedelta(days=7)), f"{monday}/{sunday}"


def _month(y: int, m: int) -> tuple[str, datetime, datetime, str]:
    nxt = date(y + (m == 12), m % 12 + 1, 1)
    return "month", _midnight(date(y, m, 1)), _midnight(nxt), f"{y:04d}-{m:02d}"


def _year(y: int) -> tuple[str, datetime, datetime, str]:
    return "year", _midnight(date(y, 1, 1)), _midnight(date(y + 1, 1, 1)), f"{y:04d}"


def _by_unit(unit: str, d: date, counted: bool = False) -> tuple[str, datetime, datetime, str]:
    if unit == "week":  # "two weeks ago" is a day, 14 days back; "next week" a week
        return _day(d) if counted else _week(d)
    if unit == "month":
        return _month(d.year, d.month)
    if unit == "year":
        return _year(d.year)
    return _day(d)


#: A year-less date whose occurrence in the tense's direction is more than ``_FAR`` days
#: away, while the other way one is within ``_NEAR`` days, means the near one: nobody names
#: last Christmas Eve by its bare name three days before this one ("shops shut early on
#: Christmas Eve", the tagger reading "shut" as a past), nor next year's invoice date
#: ("the invoice from March 28 is still unpaid", written on 15 April).
_FAR, _NEAR = 240, 45


def _closest(days: Sequence[D | None], ref: date | datetime) -> D | None:
    """Of ``days`` (None for a reading that has none), the one nearest ``ref`` in whole
    days; the first of them on a tie."""
    return min((d for d in days if d is not None), default=None,
               key=lambda d: abs((_as_date(d) - _as_date(ref)).days))


def _as_date(d: date | datetime) -> date:
    return d.date() if isinstance(d, datetime) else d


def _nearer(chosen: date, other: date | None, ref: date, firm: bool = False) -> date:
    """``other`` when it is near and ``chosen`` far (see :data:`_FAR`), else ``chosen``;
    ``firm``: the text says the time is ahead in so many words ("we'll do Christmas at
    ours", written in January), so a far ``chosen`` ahead stays."""
    if firm and chosen > ref:
        return chosen
    if other is not None and abs((chosen - ref).days) > _FAR \
            and abs((other - ref).days) <= _NEAR:
        return other
    return chosen


def _shift_year(when: date, ref: date, direction: str, firm: bool = False) -> date:
    """Move a year-less date to the occurrence the direction asks for (see module doc),
    unless that one is far and the other way's near (:func:`_nearer`)."""
    year = when.year
    if direction in ("future", "past"):
        step = 1 if direction == "future" else -1
        try:
            chosen = when if (when - ref).days * step >= 0 else when.replace(year=year + step)
            # the occurrence a year the other way, whether or not the year moved: "the
            # invoice from December 20 is still unpaid", written on 10 January
            return _nearer(chosen, chosen.replace(year=chosen.year - step), ref, firm)
        except ValueError:  # 29 February in a non-leap year: keep the library's year
            return when
    if direction == "neutral":  # the nearest occurrence
        options = []
        for y in (ref.year - 1, ref.year, ref.year + 1):
            try:
                options.append(when.replace(year=y))
            except ValueError:
                continue
        if options:
            return min(options, key=lambda d: (abs((d - ref).days), d < ref))
    try:
        return when.replace(year=year)
    except ValueError:  # 29 February in a non-leap year: keep the library's year
        return when


def _weekend(mod: str, ref: date, direction: str) -> tuple[str, datetime, datetime, str]:
    saturday = ref - timedelta(days=ref.weekday()) + timedelta(days=5)
    mod = re.sub(r"\s+", " ", mod)
    if mod == "the" and direction == "near":  # the nearer: last one until Wednesday
        mod = "last" if ref.weekday() <= 2 else "this"
    elif mod == "the":
        mod = "last" if direction == "past" and ref < saturday else "this"
    if mod in ("next", "coming", "this coming"):
        saturday += timedelta(days=7 if mod == "next" else 0)
    elif mod == "last":
        saturday -= timedelta(days=7)
    sunday = saturday + timedelta(days=1)
    end = _midnight(sunday + timedelta(days=1))
    return "week", _midnight(saturday), end, f"{saturday}/{sunday}"


def _bare_month(
    mod: str, month: int, ref: date, direction: str
) -> tuple[str, datetime, datetime, str]:
    year = ref.year
    if mod == "last":
        year -= month >= ref.month
    elif mod == "next":
        year += month <= ref.month
    elif mod != "this":
        if direction == "future" and month < ref.month:
            year += 1
        elif direction == "past" and month > ref.month:
            year -= 1
    return _month(year, month)


def _ordinal_day(day: int, ref: date, direction: str) -> date | None:
    if not 1 <= day <= 31:
        return None
    if direction == "near":  # the closer of the last and the next, the last on a tie
        return _closest([_ordinal_day(day, ref, "past"), _ordinal_day(day, ref, "future")],
                        ref)
    step = -1 if direction == "past" else 1
    y, m = ref.year, ref.month
    for _ in range(13):
        if day <= calendar.monthrange(y, m)[1]:
            cand = date(y, m, day)
            if (step == 1 and cand >= ref) or (step == -1 and cand <= ref):
                return cand
        m += step
        if m == 0:
            y, m = y - 1, 12
        elif m == 13:
            y, m = y + 1, 1
    return None


def _holiday_named(m: re.Match[str], ref: datetime, direction: str, firm: bool = False
                   ) -> tuple[str, datetime, datetime, str] | None:
    """The day of a holiday's name ("Easter", "Christmas Day 2025": the year said wins)."""
    name, year = m.group("hol_name"), m.group("hol_y")
    if year:
        holiday = _holiday(name, date(int(year), 7, 2), "neutral")  # mid-year
        return None if holiday is None or holiday.year != int(year) else _day(holiday)
    holiday = _holiday(name, ref.date(), direction, firm)
    return None if holiday is None else _day(holiday)


def _nth_weekday_of(m: re.Match[str], today: date, direction: str
                    ) -> tuple[str, datetime, datetime, str] | None:
    """"The first Monday of next month", "the last Friday in March"."""
    nth = _NTH_ORDINALS[m.group("nw_n").lower()]
    name = m.group("nw_d").lower()
    weekday = _WEEKDAYS.index(_SHORT_WEEKDAYS.get(name, name))
    if m.group("nw_m"):
        month = _MONTHS[m.group("nw_m").lower()]
        year = _bare_month("", month, today, direction)[1].year
    else:
        step = {"next": 1, "last": -1}.get(m.group("nw_mod").lower(), 0)
        year, month = divmod(today.year * 12 + today.month - 1 + step, 12)
        month += 1
    return _day(_nth_weekday(year, month, weekday, nth))


_CLOCK_INTRO = re.compile(r"\b(?:at|for|by|around|about|until|till|from|before|after)\s+$",
                          re.IGNORECASE)
_MINUTE_WORDS = {"o'clock": 0, "oh five": 5, "ten": 10, "fifteen": 15, "twenty": 20,
                 "twenty five": 25, "thirty": 30, "thirty five": 35, "forty": 40,
                 "forty five": 45, "fifty": 50, "fifty five": 55}


def _clock(
    m: re.Match[str], ref: datetime, direction: str
) -> tuple[str, datetime, datetime, str] | None:
    parts = _clock_parts(m)
    if parts is None:
        return None
    hour, minute, _ = parts
    when = datetime.combine(ref.date(), time(hour, minute))
    if direction == "future" and when < ref:
        when += timedelta(days=1)
    elif direction == "past" and when > ref:
        when -= timedelta(days=1)
    return _minute(when)


def _clock_alone(m: re.Match[str], ref: datetime, direction: str) -> datetime | None:
    """A clock time no day goes with, written without am/pm and without a word for the part
    of the day ("woke at 4", "by 10", "half seven"): of its two readings on the day before,
    of or after ``ref``, the one nearest ``ref`` in the clause's direction, a night hour
    counting as further off. None when the clock time says its half of the day."""
    parts = _clock_parts(m)
    if parts is None or not parts[2]:
        return None
    hour, minute, _ = parts
    best: tuple[float, datetime] | None = None
    for hh in sorted({hour % 12, hour % 12 + 12}):
        for offset in (-1, 0, 1):
            when = datetime.combine(ref.date() + timedelta(days=offset), time(hh, minute))
            if direction == "future" and when < ref or direction == "past" and when > ref:
                continue
            cost = abs((when - ref).total_seconds()) / 3600
            if hh in _NIGHT:
                cost += _NIGHT_BACK_H if direction == "past" else _NIGHT_AHEAD_H
            if best is None or cost < best[0]:
                best = (cost, when)
    return None if best is None else best[1]


#: Hours of the night (0–5 o'clock), and how much nearer (in hours) such a reading of a
#: clock time must be than the other half of the day's to win: a time ahead is rarely set
#: at night ("meet at 3" is the afternoon), a time just gone often was ("woke at 4", "got
#: in at 3", said that morning).
_NIGHT = range(6)
_NIGHT_AHEAD_H, _NIGHT_BACK_H = 12.5, 6.0


def _clock_parts(m: re.Match[str]) -> tuple[int, int, bool] | None:
    """The hour (0–23) and minute of a clock match, and whether its half of the day was a
    guess (no am/pm, no 24-hour form, no word for the part of the day nearby)."""
    guessed = False
    word = (m.group("ck_word") or "").lower()
    if word:
        hour, minute = (12, 0) if word == "noon" else (0, 0)
    elif m.group("ck_sp") is not None:
        ap = (m.group("ck_spap") or "").lower()
        if not ap and not _CLOCK_INTRO.search(m.string, 0, m.start("ck_sp")):
            return None  # "I have two this afternoon": a count, not a time
        hour = _NUMBER_WORDS[m.group("ck_sp").lower()]
        said = re.sub(r"[-\s]+", " ", (m.group("ck_spm") or "").lower().replace("’", "'"))
        minute = _MINUTE_WORDS.get(said, 0)
        if ap:
            hour = hour % 12 + (12 if ap == "p" else 0)
        else:
            hour, guessed = _half_day(hour, m.string, m.start("clock"), m.end("clock"))
    elif m.group("ck_qh") is not None or m.group("ck_hh") is not None:
        said = (m.group("ck_qh") or m.group("ck_hh")).lower()
        hour = _NUMBER_WORDS[said] if said in _NUMBER_WORDS else int(said)
        if m.group("ck_hh") is not None or m.group("ck_q").lower() == "half":
            minute = 30  # "half seven" is half past seven
        elif m.group("ck_qrel").lower() == "to":  # "quarter to nine": 8:45
            hour, minute = (hour - 1) or 12, 45
        else:
            minute = 15
        hour, guessed = _half_day(hour, m.string, m.start("clock"), m.end("clock"))
    elif m.group("ck_h24") is not None or m.group("ck_hm") is not None \
            or m.group("ck_hb") is not None or m.group("ck_hd") is not None \
            or m.group("ck_hw") is not None or m.group("ck_hi") is not None \
            or m.group("ck_hx") is not None:
        if m.group("ck_hb") is not None or m.group("ck_hd") is not None \
                or m.group("ck_hx") is not None:
            hour, minute = int(m.group("ck_hb") or m.group("ck_hd") or m.group("ck_hx")), 0
        elif m.group("ck_hi") is not None:
            hour, minute = int(m.group("ck_hi")), int(m.group("ck_mi"))
        elif m.group("ck_hw") is not None:
            hour, minute = int(m.group("ck_hw")), int(m.group("ck_mw"))
        elif m.group("ck_hm") is not None:
            hour, minute = int(m.group("ck_hm")), int(m.group("ck_mm"))
        else:
            hour, minute = int(m.group("ck_h24")), int(m.group("ck_m24"))
        if not (m.group("ck_hw") or m.group("ck_hm") or m.group("ck_hi") or "").startswith(
                "0"):  # "06:40": 24h
            hour, guessed = _half_day(hour, m.string, m.start("clock"), m.end("clock"))
    else:
        hour, minute = int(m.group("ck_h")), int(m.group("ck_m") or 0)
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if m.group("ck_ap").lower() == "p" else 0)
    return hour, minute, guessed


_EVENING = re.compile(r"\b(?:tonight|tonite|night|evening|dinner|supper|drinks|pub|pm)\b",
                      re.IGNORECASE)
_MORNING = re.compile(r"\b(?:morning|breakfast|am|dawn)\b", re.IGNORECASE)


_SENTENCE_BREAK = re.compile(r"[.!?;]\s|[.!?;]$|\n")


def _sentence_around(text: str, start: int, end: int, most: int = 80) -> str:
    """The sentence around text[start:end], at most ``most`` characters either side: where
    a word for the part of the day counts ("Dinner with the Patels moved to Thursday 7:30";
    not "Night! Can you wake me at 7?")."""
    left = max((m.end() for m in _SENTENCE_BREAK.finditer(text, max(0, start - most), start)),
               default=max(0, start - most))
    right_m = _SENTENCE_BREAK.search(text, end, min(len(text), end + most))
    right = right_m.start() if right_m else min(len(text), end + most)
    return text[left:right]


def _half_day(hour: int, text: str, start: int, end: int) -> tuple[int, bool]:
    """The hour of a clock time written without am/pm, and whether its half of the day was a
    guess: evening words in its sentence make it pm, morning words am; without either the
    guess is that 1 to 6 o'clock is afternoon (nobody books 3 a.m.) and 12 is noon, which
    :func:`_clock_alone` may overrule for a clock time no day goes with."""
    if not 1 <= hour <= 12:
        return hour, False
    near = _sentence_around(text, start, end)
    if _EVENING.search(near):
        return (hour + 12 if hour <= 11 else hour), False
    if _MORNING.search(near):
        return hour, False
    return (hour + 12 if hour <= 6 else hour), True


_WEEKDAY_JOIN = re.compile(r"\.?,?\s*")
# a weekday and the week it falls in: "Wednesday of next week", "the saturday of the week
# after next", "Friday next week"; "next week Tuesday", "next week on Tuesday"
_DAY_OF_WEEK = re.compile(r"\s+(?:(?:of|in)\s+)?")
_WEEK_ON_DAY = re.compile(r"\s+(?:on\s+(?:the\s+)?|the\s+)?")
# a weekday counted from a holiday: "the Tuesday after Easter", "the Friday before Christmas"
# (the word is the holiday's own when "before Christmas" was read whole, as a deadline)
_DAY_FROM_HOLIDAY = re.compile(r"\s+(after|before)\s", re.IGNORECASE)


def _is_week(r: _Raw) -> bool:
    """A calendar week, Monday to Sunday, read alone ("next week", "the week after next")."""
    return r.kind == "modunit" and r.granularity == "week"


def _merge_weekday(raw: list[_Raw], text: str) -> list[_Raw]:
    """Fold a weekday into the date it names ("Sunday 22 March", "Wed the 18th"): one
    mention, the date with that day of the month that falls on that weekday, nearest to the
    date as read alone (a date with its year keeps it). Likewise a weekday and the week it
    falls in ("Wednesday of next week", "next week Tuesday": that day of that week) and a
    weekday counted from a holiday ("the Tuesday after Easter": the first such day after
    it)."""
    out: list[_Raw] = []
    i = 0
    while i < len(raw):
        cur = raw[i]
        nxt = raw[i + 1] if i + 1 < len(raw) else None
        pair = None if nxt is None else (cur, nxt) if cur.kind == "weekday" else \
            (nxt, cur) if nxt.kind == "weekday" else None
        if nxt is not None and pair is not None:
            day, other = pair
            join = text[cur.end:nxt.start]
            at: date | None = None
            if _is_week(other) and (_DAY_OF_WEEK.fullmatch(join) if day is cur
                                    else _WEEK_ON_DAY.fullmatch(join)):
                at = other.first.date() + timedelta(days=day.first.weekday())
            elif day is cur and other.kind == "holiday" and other.granularity == "day":
                side = _DAY_FROM_HOLIDAY.match(text, cur.end)
                if side and (side.start(1) == nxt.start  # the holiday's own "before"
                             or text[side.end(1):nxt.start].isspace()):
                    step = 1 if side.group(1).lower() == "after" else -1
                    at = other.first.date() + timedelta(days=step)
                    while at.weekday() != day.first.weekday():
                        at += timedelta(days=step)
            if at is not None:
                gran, first, last, value = _day(at)
                deadline = day.deadline or other.deadline and other.kind != "holiday"
                out.append(_Raw("weekday", cur.start, nxt.end, deadline,
                                gran, first, last, value))
                i += 2
                continue
        if cur.kind == "weekday" and nxt is not None and nxt.granularity == "day" \
                and nxt.kind in ("dmy", "mdy", "ordinal") \
                and _WEEKDAY_JOIN.fullmatch(text, cur.end, nxt.start):
            when = nxt.first.date()
            explicit = re.search(r"\d{4}", text[nxt.start:nxt.end]) is not None
            if not explicit and when.weekday() != cur.first.weekday():
                found = _nearest_on_weekday(when, cur.first.weekday(),
                                            by_month=nxt.kind == "ordinal")
                when = found or when
            gran, first, last, value = _day(when)
            out.append(_Raw(nxt.kind, cur.start, nxt.end, cur.deadline or nxt.deadline,
                            gran, first, last, value))
            i += 2
            continue
        out.append(cur)
        i += 1
    return out


def _nearest_on_weekday(when: date, weekday: int, *, by_month: bool) -> date | None:
    """The date nearest ``when`` with its day of the month that falls on ``weekday``: in
    the months around it (``by_month``, "the 18th") or in the years around it ("22 March")."""
    options = []
    for k in range(-12, 13) if by_month else range(-1, 2):
        if by_month:
            y, m = divmod(when.month - 1 + k, 12)
            y, m = when.year + y, m + 1
        else:
            y, m = when.year + k, when.month
        try:
            cand = date(y, m, when.day)
        except ValueError:
            continue
        if cand.weekday() == weekday:
            options.append(cand)
    return min(options, key=lambda d: (abs((d - when).days), d < when), default=None)


_JOIN = re.compile(r"\s*,?\s*(?:on\s+|at\s+)?", re.IGNORECASE)


def _merge_clock(raw: list[_Raw], text: str) -> list[_Raw]:
    """Fold a time of day into an adjacent day mention ("at 3pm tomorrow", "Friday at 10am")."""
    out: list[_Raw] = []
    i = 0
    while i < len(raw):
        cur = raw[i]
        nxt = raw[i + 1] if i + 1 < len(raw) else None
        if nxt is not None and _JOIN.fullmatch(text, cur.end, nxt.start):
            pair = (cur, nxt) if cur.kind == "clock" else (nxt, cur)
            clock, day = pair
            if clock.kind == "clock" and day.kind != "clock" and day.granularity == "day":
                dt = datetime.combine(day.first.date(), clock.first.time())
                gran, first, last, value = _minute(dt)
                out.append(
                    _Raw("datetime", cur.start, nxt.end, cur.deadline or nxt.deadline,
                         gran, first, last, value)
                )
                i += 2
                continue
        out.append(cur)
        i += 1
    return out


def _to_mention(r: _Raw, text: str, tz: tzinfo) -> TimeMention:
    return TimeMention(
        expression=text[r.start : r.end],
        start=r.start,
        end=r.end,
        value=r.value,
        granularity=r.granularity,
        start_ts=r.first.replace(tzinfo=tz).astimezone(UTC),
        end_ts=r.last.replace(tzinfo=tz).astimezone(UTC),
        is_deadline=r.deadline,
    )

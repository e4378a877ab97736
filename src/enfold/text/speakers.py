"""Who an event's ``source`` names, and whether that is a person.

Integrations write the source the way their channel shows it: ``"sms:Teta"``, ``"email:Nadia
Kovac (TD Insurance)"``, ``"slack:DM Josh"``, ``"whatsapp:Kältewelle Tour 🚐"``,
``"receipt:Canadian Tire"``, ``"calendar"``. The speaker is the name inside it: a channel
before a colon (any case: "SMS:", "iMessage:"), an affiliation in brackets or after a dash,
an e-mail address, "DM", and the brackets, symbols and full stop around a name are the
channel's decoration, not the name ("sms:Teta" and a mention of "Teta" are one person). A
source that leaves no letters ("sms:+447700900123"), only an address, or a channel
("#kelp-lab", "email:") names nobody. Whether the name is a person's is read from its form,
without a list of names:

* a kinship word used as a name ("Mama", "Mãe"), a name after an honorific ("Dr Ota",
  "Prof. Lee"), and a first-person source ("me") are people; after a title that is also an
  English word ("Pastor", "Captain", "Lady") the rest of the name decides ("Captain Cook
  Cruises" is a business);
* an acronym ("IRCC"), a digit, "&", a word written in camel case ("CommBank"), a
  possessive ("Baird's Motors"), a leading "The", a lower-case word inside the name ("Surf
  crew"), three words or more ending in an English noun ("Winnipeg Public Library") or
  an English word followed by an English noun or plural ("Keystone Property Management",
  "Borders Beekeepers") make it an organisation or a group, unless the last word names
  a person ("Tom Baker");
* a single lower-case word with no channel ("calendar", "bank", "todo") is a channel or a
  system; after a channel a name in lower case is a contact saved so ("sms:josh") and is
  read as if capitalised;
* any other name is taken for a person's: "Tomás Reyes", "Kelsey", "Joost van Dijk".

A name that is not a person's still speaks for its events' views (a claim's holder); it is
only not made a participant. Known limits: a one-word brand or common word ("Strava",
"Family", "Support") and a two-word business named by a place or a coined word ("Westend
Physio", "Bytefix Repairs") read as a person; a person whose given name and surname are both
English words ("Grace Wood") or who is written with initials or a rank in capitals ("AJ",
"DC Amy Shand") as an organisation; "Last, First" and a group's direct message ("Josh, Mei")
are read whole; a kinship word said in a group's chat still makes the group's relation
("Surf crew's mom") where the claims reader names a holder.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from enfold.text.people import HONORIFICS as _PEOPLE_TITLES

__all__ = ["Sender", "looks_like_a_person", "read_source", "speaker_name", "speaker_of"]

_CHANNEL = re.compile(r"^([A-Za-z][A-Za-z0-9_.+-]{0,30}):(?:\s+|(?=\S)|$)")
_BRACKETS = re.compile(r"\s*[(\[]([^()\[\]]*)[)\]]\s*$")
_DASH = re.compile(r"\s+[-–—|]\s+\S.*$")
_ADDRESS = re.compile(r"\s*<[^<>@\s]+@[^<>\s]+>\s*")
_DIRECT = re.compile(r"^(?:dm|direct message|pm)\s+(?:with\s+|from\s+)?", re.IGNORECASE)
# emoji, brackets, arrows and a full stop around a name (an initial's stop stays: "R.")
_EDGE = re.compile(r"^[^\w#@]+|[^\w.]+$|(?<=\w{2})\.$")
_FIRST_PERSON = frozenset({"me", "i", "myself", "self", "user"})
# Words before a name that make it a person's however the rest reads ("Dr Ota", "Prof Lee");
# honorifics that are also English words ("Sister", "Captain", "Coach", "Lady") only when
# the rest of the name is a person's ("Captain Cook Cruises" is a business).
_HONORIFICS = frozenset({*_PEOPLE_TITLES, "rev", "revd", "fr", "sr", "sra", "dra", "herr",
                         "frau", "mme", "mlle"})
_TITLE_WORDS = frozenset({"miss", "pastor", "father", "sister", "brother", "sir", "dame",
                          "lady", "lord", "auntie", "uncle", "aunt", "coach", "judge",
                          "officer", "captain", "capt", "deacon", "bishop", "imam", "rabbi"})
_PARTICLES = frozenset({"van", "von", "de", "da", "di", "du", "del", "della", "der", "den",
                        "la", "le", "bin", "bint", "al", "el", "ibn", "ter", "ten", "y", "e"})
_CAMEL = re.compile(r"[a-z]{3,}[A-Z]")


@dataclass(frozen=True)
class Sender:
    """What a source says: ``name`` is the speaker's name without the channel's decoration
    (None when the source names nobody: "#kelp-lab", an address); ``person`` whether that
    name is a person's."""

    name: str | None
    person: bool


def _english(word: str, pos: str | None = None) -> bool:
    from enfold.text.people import dictionary_word

    return dictionary_word(word.lower(), pos)


def _plural_noun(word: str) -> bool:
    from lemminflect import getLemma

    low = word.lower()
    if not low.endswith("s") or len(low) < 4:
        return False
    lemmas = getLemma(low, upos="NOUN")
    return bool(lemmas) and lemmas[0] != low and len(lemmas[0]) >= 4 \
        and _english(lemmas[0], "NOUN")


@functools.lru_cache(maxsize=8192)
def looks_like_a_person(name: str) -> bool:
    """Whether a name has the form of a person's (see the module's text)."""
    from enfold.text.people import bare_kin, names_a_person

    words = name.split()
    if not words:
        return False
    low = [w.lower().rstrip(".") for w in words]
    if len(words) == 1:
        if low[0] in _FIRST_PERSON or bare_kin(low[0]) is not None:
            return True
        if name.islower():
            return False  # "calendar", "bank": a channel, not a sender
    elif low[0] in _HONORIFICS:
        return True  # "Dr Ota", "Mrs. Oyelaran"
    elif low[0] in _TITLE_WORDS:
        return looks_like_a_person(" ".join(words[1:]))  # "Pastor Eugene Whitfield"
    if any(c.isdigit() for c in name) or "&" in name or "'s " in f"{name} " \
            or "’s " in f"{name} " or low[0] == "the":
        return False
    for w in words:
        letters = [c for c in w if c.isalpha()]
        if len(letters) >= 2 and all(c.isupper() for c in letters):
            return False  # an acronym: "IRCC", "AGH P&T Committee", "Buckeye Capital CU"
        if _CAMEL.search(w):
            return False  # "CommBank", "StrideCoach"
    if len(words) == 1:
        return True
    inner = [w for w, lw in zip(words, low, strict=True) if lw not in _PARTICLES]
    if any(w[:1].islower() for w in inner):
        return False  # "Surf crew", "Flat 2/1"
    if names_a_person(inner[-1]):
        return True  # a surname that is a trade: "Tom Baker", "Jean Fisher"
    if len(inner) >= 3 and _english(inner[-1], "NOUN"):
        return False  # "Winnipeg Public Library", "Lochee Health Centre"
    # "Keystone Property Management", "Borders Beekeepers"; a given name is seldom an
    # English word, so "Ava Brooks" and "Victor Hale" stay people
    return not (_english(inner[0]) and (_english(inner[-1], "NOUN")
                                        or _plural_noun(inner[-1])))


@functools.lru_cache(maxsize=4096)
def read_source(source: str | None) -> Sender:
    """The speaker a source names, and whether it is a person (see the module's text)."""
    if not source or not source.strip():
        return Sender(None, False)
    text = source.strip()
    m = _CHANNEL.match(text)
    if m:
        text = text[m.end():]
    text = _ADDRESS.sub(" ", text).strip()
    while True:  # "Nadia Kovac (TD Insurance)", "Gus - Ohio Valley Meats"
        cut = _BRACKETS.sub("", text)
        cut = _DASH.sub("", cut)
        if cut == text or not cut.strip():
            break
        text = cut
    text = _DIRECT.sub("", text.strip())
    text = _EDGE.sub("", text).strip()
    text = " ".join(text.split())
    if not text or text[0] in "#@" or "@" in text or not any(c.isalpha() for c in text):
        return Sender(None, False)  # a channel ("#kelp-lab"), an address, a number
    if m and text.islower():  # "sms:josh smith": a contact saved in lower case
        return Sender(text, looks_like_a_person(text.title()))
    return Sender(text, looks_like_a_person(text))


def speaker_name(source: str | None) -> str | None:
    """The name a source speaks as (a person's or not), or None: what claims are held by."""
    return read_source(source).name


def speaker_of(source: str | None) -> str | None:
    """The person a source names, or None when it names none (a channel, an organisation, a
    group): the event's participant."""
    sender = read_source(source)
    return sender.name if sender.person else None

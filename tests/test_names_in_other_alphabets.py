"""Names written with letters outside A–Z ("Seán", "Zoë", "Łukasz", "Đorđe", "Иван") are
names to the readers of views and people, as "Sean" is."""

from __future__ import annotations

import re

import pytest

from enfold.text.claims import extract_claims
from enfold.text.letters import LOWER, UPPER
from enfold.text.people import extract_people


@pytest.mark.parametrize("word", ["Seán", "Zoë", "Łukasz", "Nguyễn", "Đorđe", "Σοφία",
                                  "Иван", "Ólafur", "Aɗamu", "Ɔkɔ", "Ἀλέξανδρος",
                                  "Zoe\u0308"])  # (the last with a separate accent)
def test_a_capitalised_word_in_any_alphabet(word: str) -> None:
    assert re.fullmatch(f"[{UPPER}][{LOWER}]+", word)


@pytest.mark.parametrize("word", ["seán", "ÉCOLE", "×ab", "Nº", "\u0308Zoe"])
def test_not_a_capitalised_word(word: str) -> None:
    assert not re.fullmatch(f"[{UPPER}][{LOWER}]+", word)


@pytest.mark.parametrize("name", ["Seán", "Zoë", "Łukasz", "Đorđe", "Иван", "Sea\u0301n"])
def test_a_reported_view_is_held_by_a_name_with_diacritics(name: str) -> None:
    claims = extract_claims(f"{name} says the turbines will wreck the view.", "Mairead",
                            view=True)
    assert [c.holder for c in claims] == [name]


def test_people_named_with_diacritics_are_found() -> None:
    found = [m.name for m in extract_people("I met Zoë and Łukasz for lunch with Đorđe.",
                                            "Mairead") if m.role == "mentioned"]
    assert found == ["Zoë", "Łukasz", "Đorđe"]

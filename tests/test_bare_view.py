"""A view no cue reads (the view classifier's) is about what its clause acts on, not about
the text's first words: a change of mind is matched to the earlier view by its target."""

from __future__ import annotations

import pytest

from enfold.text.claims import target_key
from enfold.text.stance import bare_view


@pytest.mark.parametrize("text, target", [
    ("Swapped my road bike for a gravel bike and it is pure joy on the canal path.",
     "road bike"),
    ("Honestly gone right off the whole barbecue idea.", "whole barbecue idea"),
    ("That sunscreen is useless.", "sunscreen"),
    ("Ugh. The landlord still hasn't fixed the boiler and frankly the flat is a dump.",
     "boiler"),
])
def test_the_target_is_what_the_clause_acts_on(text: str, target: str) -> None:
    view = bare_view(text, "Sam", "Sam")
    assert view is not None
    assert view.holder == "Sam" and view.holder_is_speaker and not view.reported
    assert target_key(view.target) == target
    assert view.content == text


def test_a_text_whose_clauses_name_no_thing_is_left_to_the_caller() -> None:
    assert bare_view("It is what it is.", "Sam", "Sam") is None

"""Changes of mind said outright in more ways (session 29): taking back one's own
suggestion, objection, complaint or "what I said", an attitude that moved ("warmed to",
"gone off", "softened on"), being talked round or persuaded; and the words of change used
of something else (a refused, asked or possible change, a visit, a returned parcel, a change
in the world) read as no change."""

from __future__ import annotations

import pytest

from enfold.text.stance import revision


@pytest.mark.parametrize("text", [
    "Please ignore my earlier suggestion about the caterer; the second quote is better.",
    "I'm withdrawing my objection to the loft conversion.",
    "Forget what I said yesterday, the blue car is the one.",
    "Rowing back on my complaint about the landlord, he fixed the boiler within a day.",
    "Walking back what I wrote in the group chat: the referee got it right.",
    "I've come round to the idea of a shared garden after talking to the neighbours.",
    "Went back on my decision to skip the reunion. Booked the train this morning.",
    "I've warmed to the open-plan kitchen, it makes dinners much more sociable.",
    "Honestly I've gone off the idea of a camper van.",
    "I've softened on the screen-time rules since the summer.",
    "Fine, you talked me round, we'll take the early ferry.",
    "I've been persuaded that the cheaper mattress is good enough.",
])
def test_taking_back_ones_own_saying_is_a_change_of_mind(text: str) -> None:
    found = revision(text, "Ana", "Ana")
    assert found is not None and found.holder == "Ana"


@pytest.mark.parametrize("text", [
    "The library no longer opens on Sundays.",
    "Took the kettle back to the shop, the lid wouldn't close.",
    "Jo came round for coffee this morning.",
    "I won't be changing my mind about the wallpaper.",
    "Maybe I'll reconsider the trip if the weather improves.",
    "We converted the garage into a studio over the winter.",
    "After all the rain, the lawn is a swamp.",
    "Should I change my mind about the laptop?",
    "I'm not taking back a word of what I said.",
    "Dropped the kids at the pool and went for a coffee.",
    "The smoke alarm went off at six again.",
    "It warmed up nicely after lunch so we ate outside.",
    "I warmed up the car before work.",
    "She persuaded me to join the book club.",
    "We talked around the problem for an hour and got nowhere.",
])
def test_the_words_of_change_used_of_something_else_are_no_change(text: str) -> None:
    assert revision(text, "Ana", "Ana") is None

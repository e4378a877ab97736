"""Intent labels written as goals (issue 20): the action and its due time, or "Keep <doing>"."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from enfold.memory import Memory
from enfold.model import NodeKind
from enfold.text.annotate import annotate
from enfold.text.goals import habit_label, obligation_label

AT = datetime(2026, 3, 2, 9, tzinfo=UTC)


def goal(text: str) -> str:
    (ob,) = annotate(text, ts=AT, speaker="Maya").obligations
    return obligation_label(ob.text, ob.due.expression if ob.due else None)


@pytest.mark.parametrize(("text", "label"), [
    ("I need to renew my passport by June.", "Renew my passport by June"),
    ("Don't forget to call the plumber tomorrow about the leak.",
     "Call the plumber tomorrow about the leak"),
    ("Remind me to book the dentist for next week", "Book the dentist for next week"),
    ("We have to finalize the venue contract before April 3, and then send invites.",
     "Finalize the venue contract before April 3"),
    ("Must pay the electricity bill by the 20th", "Pay the electricity bill by the 20th"),
    ("I should send Omar the budget by Friday", "Send Omar the budget by Friday"),
    ("Submit the grant report by July 15 please", "Submit the grant report by July 15"),
    ("The quarterly report is due Friday.", "Quarterly report due Friday"),
    (("Hi Maya, confirming that your NSF SBIR Phase I proposal is due November 13 at 5pm "
     "Eastern."), "NSF SBIR Phase I proposal due November 13 at 5pm"),
    ("Still need to hand back the keys: the landlord wants everything out by March 15.",
     "Hand back the keys by March 15"),
    ("The internal nomination deadline is October 20", "Internal nomination deadline October 20"),
    ("she wants the research statement draft by Friday", "Research statement draft by Friday"),
    ("Can you get me 2 oven quotes by the 22nd?", "Get me 2 oven quotes by the 22nd"),
    ("Backpack folder: photo release form and trip slip, both due Monday",
     "Backpack folder due Monday"),
    # a task someone set the writer: the cue's object is the writer ("told me to")
    ("Prof. Lee told me to fix the guidelines first.", "Fix the guidelines first"),
    ("Mark asked me to call the vet by Friday.", "Call the vet by Friday"),
    ("They asked us to submit the forms before June 5.", "Submit the forms before June 5"),
    # a decimal point ends no clause
    ("Need to pay the $1.5k deposit by Monday.", "Pay the $1.5k deposit by Monday"),
    # what the writer says they will do, by its action
    ("We'll send the signed lease back by Friday.", "Send the signed lease back by Friday"),
    ("I'll clean the garage and fix the fence by Sunday.", "Clean the garage by Sunday"),
    # "get" is a cue only with a verb under it ("get to go"); else it is the action
    ("Need to get the forms signed by Monday.", "Get the forms signed by Monday"),
    ("Need to get new tyres before the MOT on the 12th.",
     "Get new tyres before the MOT on the 12th"),
    # what is had done by someone: "get" or "have" with the thing and its participle
    ("Have to get the car serviced before Friday.", "Get the car serviced before Friday"),
    ("Need to have the boiler checked by the 20th.", "Have the boiler checked by the 20th"),
])
def test_an_obligation_is_labelled_by_its_action_and_due_time(text: str, label: str) -> None:
    assert goal(text) == label


@pytest.mark.parametrize(("clause", "due", "label"), [
    ("year-two progress report due 15 July, template attached.", "due 15 July",
     "Year-two progress report due 15 July"),
    ("Notice from the club: under-twelve registration forms due 4 May.", "due 4 May",
     "Under-twelve registration forms due 4 May"),
])
def test_a_label_never_splits_a_hyphenated_word(clause: str, due: str, label: str) -> None:
    """A word the hyphen joins stays whole ("year-two", not "Two progress report")."""
    assert obligation_label(clause, due) == label


def test_a_habit_is_labelled_by_the_activity_its_occurrences_report() -> None:
    runs = ["Long run: 14 miles at 9:10 pace.", "Recovery run, 4 slow miles.",
            "Ran the Halloween 10K in a costume.", "Tempo: 6 miles, 3 fast."]
    assert habit_label("Miles / pace", runs) == "Keep running"
    assert habit_label("Piano", ["Practiced scales.", "Piano practice: a nocturne.",
                                 "practiced the nocturne again"]) == "Keep practicing"
    # no activity most of them share: the concept's label
    assert habit_label("Standup", ["Standup notes posted", "Standup moved to 10",
                                   "Skipped standup today"]) == "Keep up: Standup"
    # none shared, but the concept is named as an activity (a gerund heading its label)
    assert habit_label("Hiring engineers", ["Posted the backend role on two boards",
                                            "Phone screen with a candidate from Lyon",
                                            "Offer call went well"]) == "Keep hiring engineers"
    assert habit_label("Building permits", ["Permit office closed again",
                                            "Drawings resubmitted to the council",
                                            "Inspector visit moved"]) == "Keep up: Building permits"


def test_the_planner_writes_the_goal_and_keeps_the_clause() -> None:
    with Memory.open("memory:", embedder="hash", planner="local") as m:
        m.add("I need to renew my passport by June.", source="Maya", ts=AT.isoformat())
        (iid,) = m.graph().of_kind(NodeKind.INTENT)
        node = m.get(iid)
        assert node.text == "Renew my passport by June"
        assert node.attrs["clause"] == "I need to renew my passport by June"


@pytest.mark.parametrize(("text", "label"), [
    # the action follows its cue; a duty stated of a thing is named by what is done to it
    (("Insurance renewal letter came this morning — the car cover has to be renewed by "
      "March 31 or we lose the no-claims discount."), "Renew the car cover by March 31"),
    ("Timesheets for the physio clinic have to be in by 5pm Friday.",
     "Get timesheets for the physio clinic in by 5pm Friday"),
    ("Objections to the planning application must be lodged by 22 May.",
     "Lodge objections to the planning application by 22 May"),
])
def test_a_duty_stated_of_a_thing_is_named_by_what_is_done_to_it(text: str, label: str
                                                                 ) -> None:
    ann = annotate(text, ts=AT, speaker="Maya")
    (ob,) = ann.obligations
    assert obligation_label(ob.text, ob.due.expression if ob.due else None) == label


@pytest.mark.parametrize("text", [
    "note to self: call the vet about Biscuit's stitches tmrw morning",
    "gotta pick up the dry cleaning before sat, my suit's in there",
    "ugh my library books are overdue, need to take them back before the fines get worse",
    "Promised Coach Danny I'd wash the under-11s kits this week.",
    "Vet nurse wants me to bring in a stool sample from Pip on Friday morning.",
    "Lucia, can you pick Mateo up from swimming at 5:30 today? I'm stuck at work!",
    "Right, it's on me to sort the minibus for the away game on the 8th.",
    "My job this week: count the tuck shop float and get it banked by Thursday.",
    "Dr Moss has asked that you book a follow-up within the next fortnight.",
    "I'd be grateful if you could forward your last three payslips by Monday.",
])
def test_a_to_do_is_read_in_the_ways_people_write_one(text: str) -> None:
    assert annotate(text, ts=AT, speaker="Maya").obligations, text


@pytest.mark.parametrize("text", [
    "Sorry, I have to go — the pasta's boiling over. Talk later!",
    "The old ewe in the back paddock is due to lamb next week.",
    "Exam results are due out on 20 August.",
    "The swallows are due back any day now.",
    "Ollie has to finish his science project by Monday and he hasn't even started.",
    "Can you believe it? The dog ate the whole cake.",
    # what must be so, and a chance that came (LoCoMo's chat)
    "Wow, it looks great! Must've taken you ages to design it.",
    "Congrats, Nate! Must feel great to turn your passion into a career.",
    "I went to Woodhaven. Got to see some lovely scenery and historic buildings.",
])
def test_what_sets_the_writer_nothing_to_do_is_no_to_do(text: str) -> None:
    assert not annotate(text, ts=AT, speaker="Maya").obligations, text


def test_a_verb_conjoined_to_another_persons_is_their_task_too() -> None:
    """The subject of "fix" is that of the verb it is conjoined to: "she" sets the writer
    no task, though the deadline hangs from the second verb."""
    for text in ("She will clean the garage and fix the fence by Sunday.",
                 ("Good call with Dev. He'll back off the limiter and give the drums room, "
                  "v5 by the 16th.")):
        assert not annotate(text, ts=AT, speaker="Maya").obligations, text
    assert goal("I need to clean the garage and fix the fence by Sunday.") \
        == "Clean the garage by Sunday"


def test_a_vague_action_gives_way_to_the_one_that_says_what() -> None:
    text = ("It's on me to book the village hall for the spring fair, and it has to be "
            "done before Friday.")
    (ob,) = annotate(text, ts=AT, speaker="Maya").obligations
    label = obligation_label(ob.text, ob.due.expression if ob.due else None)
    assert label.startswith("Book the village hall for the spring fair"), label


def test_a_pronoun_the_action_acts_on_is_named_by_its_thing() -> None:
    text = ("ugh my library books are 2 weeks overdue, need to take them back before the "
            "fines get any worse")
    (ob,) = annotate(text, ts=AT, speaker="Maya").obligations
    label = obligation_label(ob.text, None, text[:ob.start])
    assert label == "Take my library books back", label
    # no thing of its number before it: the pronoun stays
    assert obligation_label("Need to send it back.", None, "Grandad rang. ") \
        == "Send it back"


def test_a_duty_stated_of_it_is_named_by_its_thing_before() -> None:
    """A duty whose subject is "it" is stated of the thing before it: the last sentence's
    subject first, else the last noun phrase of its number."""
    for text, label in [
            (("Don't let me forget Grandad's birthday card!! It needs to be in the post by "
              "Tuesday or it won't get to Aberdeen in time."),
             "Get Grandad's birthday card in the post by Tuesday"),
            ("The boiler is making that noise again. It has to be serviced before the 20th.",
             "Service the boiler before the 20th")]:
        (ob,) = annotate(text, ts=AT, speaker="Maya").obligations
        assert obligation_label(ob.text, ob.due.expression if ob.due else None,
                                text[:ob.start]) == label


def test_a_thing_due_is_the_subject_when_the_parse_hangs_due_on_the_time() -> None:
    text = "Heritage Lottery grant report is due end of next month – and that one's mine."
    (ob,) = annotate(text, ts=AT, speaker="Maya").obligations
    label = obligation_label(ob.text, ob.due.expression if ob.due else None)
    assert label == "Heritage Lottery grant report due end of next month", label

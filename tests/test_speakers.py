"""Who an event's source names (enfold.text.speakers), and what the graph makes of it: the
channel is not part of a speaker's name, and a shop, an agency or a channel is no person."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from enfold import Memory
from enfold.model import EdgeType, NodeKind
from enfold.text.speakers import read_source, speaker_name, speaker_of


@pytest.mark.parametrize("source, name, person", [
    ("sms:Teta", "Teta", True),
    ("whatsapp:Mãe", "Mãe", True),
    ("email:Nadia Kovac (TD Insurance)", "Nadia Kovac", True),
    ("sms:Gus - Ohio Valley Meats", "Gus", True),
    ("slack:DM Willem Bakker", "Willem Bakker", True),
    ("Ana Ruiz <ana@example.org>", "Ana Ruiz", True),
    ("whatsapp:Kältewelle Tour 🚐", "Kältewelle Tour", True),  # a band: the form says a name
    ("email:Pastor Eugene Whitfield", "Pastor Eugene Whitfield", True),
    ("email:Joost van Dijk", "Joost van Dijk", True),
    ("Tom Baker", "Tom Baker", True),  # a surname that is a trade
    ("Victor Hale", "Victor Hale", True),
    ("me", "me", True),
    ("Caroline", "Caroline", True),
    ("slack:#kelp-lab", None, False),
    ("calendar", "calendar", False),
    ("email:IRCC", "IRCC", False),
    ("email:AGH P&T Committee", "AGH P&T Committee", False),
    ("email:Keystone Property Management", "Keystone Property Management", False),
    ("receipt:Fort Garry Auto & Tire", "Fort Garry Auto & Tire", False),
    ("bank:CommBank", "CommBank", False),
    ("email:Winnipeg Public Library", "Winnipeg Public Library", False),
    ("whatsapp:Surf crew", "Surf crew", False),
    ("email:Borders Beekeepers", "Borders Beekeepers", False),
    ("sms:Baird's Motors", "Baird's Motors", False),
    # what a review found (session 43): any channel's case, brackets and stops around a
    # name, an address before an affiliation, numbers, contacts saved in lower case, and
    # honorifics that are English words before a business's name
    ("email:Professor Lee", "Professor Lee", True),
    ("SMS:Teta", "Teta", True),
    ("iMessage:Teta", "Teta", True),
    ("email:", None, False),
    ("sms:(Teta)", "Teta", True),
    ("sms:Teta.", "Teta", True),
    ("email:Nadia Kovac <nadia@td.example> (TD Insurance)", "Nadia Kovac", True),
    ("sms:+447700900123", None, False),
    ("sms:(555) 123-4567", None, False),
    ("sms:josh", "josh", True),
    ("sms:josh smith", "josh smith", True),
    ("Captain Cook Cruises", "Captain Cook Cruises", False),
    ("whatsapp:Lady Hornets Parents", "Lady Hornets Parents", False),
    ("sms:Dr Ota", "Dr Ota", True),
])
def test_a_source_is_read_for_its_speaker(source: str, name: str | None, person: bool) -> None:
    sender = read_source(source)
    assert (sender.name, sender.person) == (name, person)
    assert speaker_name(source) == name
    assert speaker_of(source) == (name if person else None)


def test_the_graph_has_one_person_per_speaker_and_no_shop_or_channel() -> None:
    m = Memory.open("memory:", embedder="hash", planner="local")
    try:
        m.add_many([
            {"text": "Mariam habibti come for lunch tomorrow, I make kibbeh", "source": "sms:Teta",
             "ts": "2030-01-05T10:00:00Z"},
            {"text": "Lunch at Teta's was lovely, she sent me home with kibbeh", "source": "me",
             "ts": "2030-01-06T15:00:00Z"},
            {"text": "Battery MTP-51R $219.00, labour $45.00, total $264.00",
             "source": "receipt:Fort Garry Auto & Tire", "ts": "2030-01-07T09:00:00Z"},
            {"text": "Dentist check-up 3:40pm", "source": "calendar",
             "ts": "2030-01-08T09:00:00Z"},
        ])
        with m.reading() as g:
            people = {g.nodes[p].text: p for p in g.of_kind(NodeKind.PERSON)}
            assert "Teta" in people and "sms:Teta" not in people
            assert not {"receipt:Fort Garry Auto & Tire", "Fort Garry Auto & Tire",
                        "calendar"} & set(people)
            spoke = {g.nodes[e.dst].text for e in g.out_edges(people["Teta"])
                     if e.type is EdgeType.PARTICIPATES}
            mentioned = {g.nodes[e.src].text for e in g.in_edges(people["Teta"])
                         if e.type is EdgeType.MENTIONS}
            assert any("I make kibbeh" in t for t in spoke)
            assert any(t.startswith("Lunch at Teta's") for t in mentioned)  # one node: both
    finally:
        m.close()


def test_bench_people_graph_scores_the_nodes_against_the_gold(tmp_path: Path) -> None:
    from enfold.bench.people_graph import load_gold, score_stream
    from enfold.embed import make_embedder

    stream = tmp_path / "tiny.json"
    stream.write_text(json.dumps({"events": [
        {"id": "a1", "ts": "2030-01-05T10:00:00Z", "source": "sms:Teta",
         "text": "Come for lunch tomorrow, Karim is coming too"},
        {"id": "a2", "ts": "2030-01-06T10:00:00Z", "source": "me",
         "text": "Karim drove me to Teta's and we talked about Dana Fehr"},
        {"id": "a3", "ts": "2030-01-07T10:00:00Z", "source": "calendar",
         "text": "Dentist 3:40pm"},
    ]}), encoding="utf-8")
    gold_path = tmp_path / "gold.json"
    gold_path.write_text(json.dumps({
        "stream": "tiny", "user": {"name": "Mariam", "aliases": ["me"]},
        "people": [{"name": "Teta", "aliases": ["Teta", "sms:Teta"]},
                   {"name": "Karim", "aliases": ["Karim"]},
                   {"name": "Dana Fehr", "aliases": ["Dana Fehr"]},
                   {"name": "Rima", "aliases": ["Rima"]}],
        "not_people": [{"name": "calendar", "kind": "channel"}]}), encoding="utf-8")
    s = score_stream(stream, load_gold(gold_path), make_embedder("hash"))
    # the author, Teta (one node for "sms:Teta" and "Teta"), Karim and Dana Fehr; no node for
    # the calendar; Rima never appears
    assert s.pop("errors") == {"not_people": [], "unlisted": [], "missed": ["Rima"]}
    assert s == {"precision": 1.0, "recall": 0.8, "f1": 0.8889, "nodes": 4, "people_nodes": 4,
                 "gold_people": 5, "found": 4, "duplicates": 0, "not_people": 0,
                 "unlisted": 0}

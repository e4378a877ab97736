"""Concept labels: one short noun phrase from the cluster's own words, no name alone, renamed
as the concept grows (enfold.text.labels, enfold.write.naming)."""

from __future__ import annotations

import numpy as np
import pytest

from enfold import Memory
from enfold.embed import make_embedder
from enfold.model import Node, NodeKind
from enfold.settings import Settings
from enfold.text import nlp
from enfold.text.labels import PhraseVectors, gerund, theme_name
from enfold.text.phrases import TermStats
from enfold.write.naming import due_rename

pytestmark = pytest.mark.skipif(not nlp.available(), reason="no spaCy model")

BUDGET = ["The renovation budget is blown: the electrician quoted $6,400.",
          "Went over the renovation budget again with Tom tonight.",
          "Cut the tile upgrade so the renovation budget holds."]
PRIYA = ["Priya called about the lease renewal.",
         "Priya says the lease renewal needs a signature.",
         "Priya sent the lease renewal form back."]


def stats(texts: list[str]) -> TermStats:
    st = TermStats()
    for t in [*texts, "Ran five miles along the river.", "Bought milk and bread."]:
        st.add(t)
    return st


def test_a_label_is_one_noun_phrase_not_a_keyword_bag() -> None:
    emb = make_embedder("hash")
    vecs = np.asarray(emb.embed(BUDGET))
    name = theme_name(BUDGET, stats(BUDGET), k=3, centroid=vecs.mean(axis=0),
                      vectors=PhraseVectors(emb.embed, emb.name))
    assert name is not None
    assert " / " not in name.label and len(name.label.split()) <= 3
    assert name.label == "Renovation budget"
    assert name.keywords[0].lower() == name.label.lower() and len(name.keywords) <= 3
    # without phrase vectors the same phrase wins by coverage and rarity (c-TF-IDF)
    bare = theme_name(BUDGET, stats(BUDGET), k=3)
    assert bare is not None and bare.label == "Renovation budget"


def test_a_name_alone_does_not_lead_while_a_theme_phrase_exists() -> None:
    name = theme_name(PRIYA, stats(PRIYA), k=3)
    assert name is not None
    assert "priya" not in name.label.lower() and "lease" in name.label.lower()
    # a name is a label only when nothing else is there
    alone = theme_name(["Priya.", "Priya!"], stats(["Priya."]), k=2)
    assert alone is None or alone.label == "Priya"


def test_the_label_weights_are_settings() -> None:
    emb = make_embedder("hash")
    centroid, vectors = np.asarray(emb.embed(BUDGET)).mean(axis=0), PhraseVectors(emb.embed,
                                                                                   emb.name)

    def named(with_vectors: bool = False, **over: float) -> list[str]:
        found = theme_name(BUDGET, stats(BUDGET), k=3, settings=Settings().with_(**over),
                           **({"centroid": centroid, "vectors": vectors} if with_vectors
                              else {}))
        assert found is not None
        return found.keywords

    assert named()[0] == named(True)[0] == "renovation budget"
    assert named(label_specialize=0.0)[0] == "budget"  # the lone head is not specialized
    assert named(True, label_short_bonus=2.0)[0] == "budget"  # a word alone wins
    assert named(label_min_distinct=1.0) == ["renovation budget"]  # the rest is background
    assert named(True)[1] == "budget" != named(True, label_mmr_lambda=0.0)[1]  # no repeat


def test_gerunds() -> None:
    assert [gerund(v) for v in ("run", "write", "hire", "plan", "review", "tie")] == [
        "running", "writing", "hiring", "planning", "reviewing", "tying"]


def test_renames_are_due_geometrically() -> None:
    node = Node(id="co_x", namespace="default", kind=NodeKind.CONCEPT, text="Budget",
                attrs={"named_at": 4}, grounded_in=("a", "b", "c", "d"))
    assert not due_rename(node, 5, 1.5)
    assert due_rename(node, 6, 1.5)
    assert not due_rename(node, 6, 2.0) and due_rename(node, 8, 2.0)


def test_the_label_is_renamed_as_the_concept_grows() -> None:
    first = ["Kitchen cabinets arrived today, the cabinets look great in the kitchen.",
             "Hung the kitchen cabinets this morning, two cabinets left for the kitchen.",
             "The kitchen cabinets need new handles, kitchen looks almost done."]
    later = [f"The kitchen countertop quote came in, kitchen countertop install on day {i}."
             for i in range(1, 7)]
    s = Settings(relabel_growth=1.5)
    with Memory.open("memory:", embedder="hash", planner="local", settings=s) as m:
        m.add_many([{"text": t, "ts": f"2026-03-0{i + 1}T09:00:00Z", "source": "Ana"}
                    for i, t in enumerate(first)])
        g = m.graph()
        (cid,) = g.of_kind(NodeKind.CONCEPT)
        label, named_at = g.nodes[cid].text, g.nodes[cid].attrs["named_at"]
        assert named_at == 3 and " / " not in label
        m.add_many([{"text": t, "ts": f"2026-03-1{i}T09:00:00Z", "source": "Ana"}
                    for i, t in enumerate(later)])
        g = m.graph()
        node = g.nodes[g.resolve(cid)]
        assert len(node.grounded_in) > named_at
        assert node.attrs["named_at"] > named_at  # named anew as it grew
        assert " / " not in node.text and len(node.text.split()) <= 3
        if node.text != label:
            assert label in node.attrs["aliases"]

"""``enfold bench train-people``: fit the person screen (:mod:`enfold.text.person_screen`).

Every mention the rules of :func:`enfold.text.people.extract_people` find (unscreened) in the
bundled people tune sets is an example, labelled 1 when it is one of the message's people
(the matching of ``enfold bench understand``) and 0 when not. A logistic regression (the
L-BFGS fit of :mod:`enfold.bench.train_subjectivity`) is fitted on them. Each tune set is
left out in turn and the screen's precision and recall on it printed beside the rules' own;
the threshold was chosen so (0.3: every left-out set's precision rises and its F1 holds).
The measure sets are never read here.

``--stream-gold`` adds whole personal streams with their gold people lists (see
:mod:`enfold.bench.people_graph`): every mention in every event is an example. The packaged
screen is fitted on the three tune sets and the tuning streams q, r, s and u (session 43; at
0.3 the left-out F1 summed over the seven parts is the highest of 0.2–0.6); the measured
streams t, v, w and x are never read here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from enfold.bench.train_subjectivity import fit
from enfold.bench.understand import _rows, bundled, found_people

PARTS = ("tune", "tune-h", "tune-k")
L2 = 0.3
THRESHOLD = 0.3


def examples(part: str) -> tuple[list[np.ndarray | None], list[int], int]:
    """Each mention's features (None: not screened, so always kept: the speaker, a name
    without offsets) and label, and the people the rules missed, for one people set,
    counted as ``enfold bench understand`` counts them."""
    from enfold.text.nlp import parse
    from enfold.text.person_screen import features

    xs: list[np.ndarray | None] = []
    ys: list[int] = []
    missed = 0
    for row in _rows(bundled("people", part)):
        text, speaker = str(row["text"]), row.get("speaker")
        gold = [str(g) for g in row.get("people", [])]
        doc = parse(text)
        found = found_people(text, speaker, gold, screen=False)
        for m, _, hit in found:
            screened = doc is not None and m.start >= 0 and m.role != "speaker"
            xs.append(features(doc, m.start, m.end, m.relation) if screened else None)
            ys.append(int(hit is not None))
        missed += len(gold) - sum(hit is not None for _, _, hit in found)
    return xs, ys, missed


def stream_examples(stream: Path, gold_path: Path
                    ) -> tuple[list[np.ndarray | None], list[int], int]:
    """The same for a whole personal stream and its gold people list
    (:mod:`enfold.bench.people_graph`): every mention the rules find in each event,
    labelled 1 when its words or name are one of the stream's people (the author
    included). People the rules never find are not counted (``missed`` 0): a stream's
    people are named many times, and the graph's recall is what ``bench people-graph``
    measures."""
    from enfold.bench.people_graph import load_gold, match
    from enfold.text.nlp import parse
    from enfold.text.people import extract_people
    from enfold.text.person_screen import features
    from enfold.text.speakers import speaker_name

    gold = load_gold(gold_path)
    events = json.loads(stream.read_text(encoding="utf-8"))["events"]
    xs: list[np.ndarray | None] = []
    ys: list[int] = []
    for ev in events:
        text, speaker = str(ev["text"]), speaker_name(ev.get("source"))
        doc = parse(text)
        if doc is None:
            continue
        for m in extract_people(text, speaker, screen=False):
            if m.start < 0 or m.role == "speaker":
                continue
            xs.append(features(doc, m.start, m.end, m.relation))
            ys.append(int(match([text[m.start:m.end], m.name], gold) is not None))
    return xs, ys, 0


def _prf(xs: list[np.ndarray | None], ys: list[int], missed: int,
         w: np.ndarray | None, b: float, t: float) -> dict[str, float]:
    tp = fp = fn = 0
    for x, y in zip(xs, ys, strict=True):
        keep = w is None or x is None or 1.0 / (1.0 + np.exp(-(float(x @ w) + b))) >= t
        tp += y if keep else 0
        fp += (1 - y) if keep else 0
        fn += 0 if keep else y
    fn += missed
    p = tp / (tp + fp) if tp + fp else 1.0
    r = tp / (tp + fn) if tp + fn else 1.0
    return {"precision": round(p, 4), "recall": round(r, 4),
            "f1": round(2 * p * r / (p + r), 4) if p + r else 0.0}


def _fit(data: list[tuple[list[np.ndarray | None], list[int], int]]) -> tuple[np.ndarray, float]:
    x = np.array([v for xs, _, _ in data for v in xs if v is not None])
    y = np.array([lab for xs, ys, _ in data for v, lab in zip(xs, ys, strict=True)
                  if v is not None], dtype=float)
    return fit(x, y, L2)


def train(streams: dict[str, tuple[Path, Path]] | None = None) -> dict[str, Any]:
    """The screen fitted on every tune set (and the personal ``streams``: name -> (stream,
    gold list)), with each set's left-out numbers."""
    data = {part: examples(part) for part in PARTS}
    for name, (stream, gold) in (streams or {}).items():
        data[name] = stream_examples(stream, gold)
    held_out = {}
    for part, examples_of in data.items():
        w, b = _fit([data[p] for p in data if p != part])
        held_out[part] = {"rules": _prf(*examples_of, None, 0.0, THRESHOLD),
                          "screened": _prf(*examples_of, w, b, THRESHOLD)}
    from enfold.text.nlp import pipeline_id

    w, b = _fit(list(data.values()))
    return {"pipeline": pipeline_id(),
            "weights": [round(float(v), 6) for v in w], "bias": round(b, 6),
            "threshold": THRESHOLD, "l2": L2, "parts": list(data),
            "examples": sum(len(ys) for _, ys, _ in data.values()),
            "left_out": held_out}


def save(model: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(model) + "\n", encoding="utf-8")

"""The /ui page in a real headless Chromium against a real ``enfold serve`` process.

Seeds a SQLite file with the bundled demo (hash embedder), starts ``enfold serve --no-auth``,
then drives Debian's Chromium with Playwright: the graph renders with its legend beside it,
labels do not overlap (events named by day and speaker), clicking a node shows its
provenance and a concept its events, facts and claims, the search goes through recall and
shows its evidence, the timeline shows every event and the intents' deadlines, a ``?ns=``
link opens a namespace (and a node) directly, accept/reject change an intent's status
(checked again through the API).

Screenshots (graph, labels, concept, search, timeline, deep link, ui) are saved as PNG files
in ``out/ui-screenshots/`` at the top of the repository, or in the directory that the
environment variable ``ENFOLD_UI_ARTIFACTS`` names.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the 'server' extra is not installed")
try:
    import enfold.server.app  # noqa: F401
except ImportError as exc:  # the HTTP server is not importable (yet)
    pytest.skip(f"enfold.server.app is not importable: {exc}", allow_module_level=True)
playwright_api = pytest.importorskip("playwright.sync_api",
                                     reason="playwright (dev extra) is not installed")

from enfold.demo import demo_events
from enfold.memory import Memory

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = Path(os.environ.get("ENFOLD_UI_ARTIFACTS") or ROOT / "out" / "ui-screenshots")
NS = "demo"
TIME_RE = r"\d{4}-\d\d-\d\d \d\d:\d\d"
PAGE_ERRORS: list[str] = []  # uncaught exceptions in the page, over the whole module


def _chromium() -> str | None:
    for name in (os.environ.get("ENFOLD_CHROMIUM"), "chromium", "chromium-browser"):
        if name and (path := shutil.which(name)):
            return path
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _enfold() -> list[str]:
    exe = shutil.which("enfold", path=str(Path(sys.executable).parent))
    return [exe] if exe else [sys.executable, "-m", "enfold"]


def _get(base: str, path: str) -> Any:
    with urllib.request.urlopen(f"{base}/v1/namespaces/{NS}{path}", timeout=10) as resp:
        return json.loads(resp.read())


def _when(ts: float) -> str:
    """A time as the page writes it: ``YYYY-MM-DD HH:MM`` in UTC."""
    return datetime.fromtimestamp(ts, tz=UTC).strftime("%Y-%m-%d %H:%M")


def _shot(page: Any, name: str) -> Path:
    """Save a screenshot of the page as a test artifact (see the module docstring)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path))
    assert path.stat().st_size > 10_000
    return path


def _labels_settled(page: Any, timeout: float = 10.0) -> None:
    """Wait until the page has placed the labels for the current view (polled with
    evaluate: the page's CSP forbids the eval that wait_for_function would need)."""
    deadline = time.monotonic() + timeout
    while page.evaluate("window.enfoldUI.cy.scratch('labelsPending')"):
        assert time.monotonic() < deadline, "the labels were not placed"
        time.sleep(0.03)


def _click_node(page: Any, node_id: str) -> None:
    """Zoom in on a drawn node and click it with the mouse, moving there across the graph
    as a hand would (cytoscape tracks the pointer from one move to the next)."""
    page.evaluate("""(id) => {
        const cy = window.enfoldUI.cy;
        cy.zoom(1.6); cy.center(cy.getElementById(id));
    }""", node_id)
    _labels_settled(page)
    target = page.evaluate("""(id) => {
        const p = window.enfoldUI.cy.getElementById(id).renderedPosition();
        const r = document.querySelector('#graph').getBoundingClientRect();
        return {x: r.left + p.x, y: r.top + p.y};
    }""", node_id)
    page.mouse.move(target["x"] - 30, target["y"] - 30)
    page.mouse.move(target["x"], target["y"], steps=3)
    page.mouse.click(target["x"], target["y"])


def _concept_view(base: str, concept_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """What the concept view should list: the facts and claims joined to the concept by an
    edge or SUPPORTED_BY one of its events, by id (node records from the API)."""
    truth = _get(base, f"/nodes/{concept_id}")
    ids = {e["dst"] if e["src"] == concept_id else e["src"] for e in truth["edges"]}
    for event in truth["provenance"]:
        ids |= {e["src"] for e in _get(base, f"/nodes/{event['id']}")["edges"]
                if e["type"] == "SUPPORTED_BY"}
    nodes = [_get(base, f"/nodes/{i}")["node"] for i in sorted(ids)]
    return ({n["id"]: n for n in nodes if n["kind"] == "fact"},
            {n["id"]: n for n in nodes if n["kind"] == "claim"})


def _seed(db: Path) -> None:
    with Memory.open(db, namespace=NS, embedder="hash", planner="local") as mem:
        mem.add_many(demo_events())


@contextmanager
def _serving(db: Path, *options: str) -> Iterator[str]:
    """Run ``enfold serve`` on ``db`` (hash embedder) until the block ends; yields its URL."""
    port = _free_port()
    log_path = db.with_suffix(".serve.log")
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [*_enfold(), "--db", str(db), "--embedder", "hash", "--namespace", NS, "serve",
             *options, "--host", "127.0.0.1", "--port", str(port)],
            cwd=db.parent, stdout=log, stderr=subprocess.STDOUT)
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                if proc.poll() is not None:
                    raise AssertionError("enfold serve exited:\n"
                                         + log_path.read_text(errors="replace")[-3000:])
                try:
                    with urllib.request.urlopen(f"{base}/readyz", timeout=2) as resp:
                        if resp.status == 200:
                            break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise AssertionError("enfold serve did not become ready in 60 s")
                time.sleep(0.2)
            yield base
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The base URL of ``enfold serve --no-auth`` over a demo-seeded SQLite file."""
    db = tmp_path_factory.mktemp("ui") / "demo.db"
    _seed(db)
    with _serving(db, "--no-auth") as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium = _chromium()
    if chromium is None:
        pytest.skip("no Chromium: apt-get install chromium (.ci/run does)")
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, headless=True,
                              args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


def _open(browser: Any, base: str, key: str = "") -> Any:
    """A fresh tab (its own sessionStorage) at /ui with the namespace and key submitted."""
    pg = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    pg.on("pageerror", lambda e: PAGE_ERRORS.append(str(e)))
    pg.goto(f"{base}/ui")
    pg.fill("#ns", NS)
    pg.fill("#key", key)
    pg.click("#connect button[type=submit]")
    return pg


@pytest.fixture(scope="module")
def page(browser: Any, server: str) -> Any:
    pg = _open(browser, server)
    pg.wait_for_selector("body[data-ready=true]", timeout=30_000)
    return pg


def test_page_and_assets_are_served(server: str) -> None:
    with urllib.request.urlopen(f"{server}/ui", timeout=10) as resp:
        html = resp.read().decode()
        assert resp.headers["Content-Type"].startswith("text/html")
        assert "default-src 'self'" in resp.headers["Content-Security-Policy"]
    assert "/ui/assets/app.js" in html and "/ui/assets/app.css" in html
    with urllib.request.urlopen(f"{server}/ui/assets/app.js", timeout=10) as resp:
        assert resp.headers["Content-Type"].startswith("text/javascript")
        assert b"cytoscape" in resp.read()
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(f"{server}/ui/assets/..%2Fui.py", timeout=10)
    assert err.value.code == 404


def test_graph_renders_with_legend(page: Any, server: str) -> None:
    graph = _get(server, "/graph?limit=400")
    drawn = page.evaluate("""() => {
        const cy = window.enfoldUI.cy;
        let painted = 0;
        for (const c of document.querySelectorAll('#graph canvas')) {
            const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            for (let i = 3; i < d.length; i += 16) if (d[i] > 0) painted++;
        }
        return {nodes: cy.nodes().length, edges: cy.edges().length, painted,
                kinds: [...new Set(cy.nodes().map(n => n.data('kind')))]};
    }""")
    assert drawn["nodes"] == len(graph["nodes"]) > 50
    assert drawn["edges"] > 50
    assert drawn["painted"] > 2000  # the canvas really has something drawn on it
    assert {"event", "concept", "intent", "person"} <= set(drawn["kinds"])
    legend = page.inner_text("#legend")
    for word in ("concept", "intent", "GROUNDS", "PARTICIPATES"):
        assert word in legend
    # The legend is beside the graph, never over it, and folds away to give it the room.
    pane, graph_box = page.locator("#legend-pane").bounding_box(), page.locator("#graph").bounding_box()
    assert pane["x"] + pane["width"] <= graph_box["x"] + 0.5 and pane["width"] > 150
    page.click("#legend-toggle")
    playwright_api.expect(page.locator("#legend")).to_be_hidden()
    wider = page.locator("#graph").bounding_box()
    assert wider["width"] > graph_box["width"] + 100
    assert page.get_attribute("#legend-toggle", "aria-expanded") == "false"
    page.click("#legend-toggle")
    playwright_api.expect(page.locator("#legend")).to_be_visible()
    assert page.locator("#graph").bounding_box()["width"] == graph_box["width"]
    _shot(page, "graph")
    assert not PAGE_ERRORS


def _overlapping_labels(page: Any) -> list[str]:
    """The pairs of shown labels whose boxes on screen overlap (cytoscape's own label bounds,
    which reach a little beyond the drawn background), described for a failure message."""
    drawn = page.evaluate("""() => {
        const cy = window.enfoldUI.cy, z = cy.zoom(), pan = cy.pan();
        const box = (n) => {
            const b = n.boundingBox({includeNodes: false, includeEdges: false, includeLabels: true});
            return [b.x1 * z + pan.x, b.y1 * z + pan.y, b.x2 * z + pan.x, b.y2 * z + pan.y];
        };
        return {zoom: z, shown: cy.nodes('.labelled').map(n => ({id: n.id(), label: n.data('label'), box: box(n)}))};
    }""")
    shown, found = drawn["shown"], []
    for i, a in enumerate(shown):
        for b in shown[i + 1:]:
            dx = min(a["box"][2], b["box"][2]) - max(a["box"][0], b["box"][0])
            dy = min(a["box"][3], b["box"][3]) - max(a["box"][1], b["box"][1])
            if dx > 0.5 and dy > 0.5:
                found.append(f"at zoom {drawn['zoom']:.2f}: {a['label']!r} {a['box']} "
                             f"and {b['label']!r} {b['box']}")
    return found


def test_labels_do_not_overlap_and_events_are_named_by_day_and_speaker(
        page: Any, server: str) -> None:
    graph = _get(server, "/graph?limit=400")
    page.evaluate("void window.enfoldUI.cy.fit(undefined, 30)")
    _labels_settled(page)
    drawn = page.evaluate("""() => {
        const cy = window.enfoldUI.cy;
        return {
            shown: cy.nodes('.labelled').map(n => n.id()),
            labels: Object.fromEntries(cy.nodes().map(n => [n.id(), [n.data('label'), n.data('full')]])),
            hub: cy.nodes().max(n => n.degree()).ele.id(),
            fontPx: parseFloat(cy.nodes('.labelled')[0].renderedStyle('font-size')),
        };
    }""")
    shown = drawn["shown"]
    assert len(shown) >= 15, "too few labels at the whole-graph view"
    assert drawn["hub"] in shown, "the best-connected node has no label"
    assert drawn["fontPx"] == pytest.approx(11, abs=0.5)  # one size on screen at any zoom
    assert not _overlapping_labels(page)
    months = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    for n in graph["nodes"]:
        label, full = drawn["labels"][n["id"]]
        if n["kind"] == "event":  # "Oct 3 · Maya"
            d = datetime.fromtimestamp(n["ts"], tz=UTC)
            assert label == f"{months[d.month - 1]} {d.day} · {n['source']}"
            assert n["text"][:40] in full
        elif len(n["label"]) > 28:  # cut, with the whole label (or text) on hover
            assert label.endswith("…") and len(label) <= 28
            assert full.startswith(label[:-1]) and len(full) > len(label)
            if n["text"].startswith(n["label"]):  # the label was the text cut at 80
                text = " ".join(n["text"].split())
                assert full == (text if len(text) <= 240 else text[:239] + "…")
    # Hovering a node whose label was cut shows its full label, and names it in a tooltip.
    long_id = next(n["id"] for n in graph["nodes"] if n["kind"] == "intent" and len(n["label"]) > 28)
    at = page.evaluate("""(id) => {
        const cy = window.enfoldUI.cy, n = cy.getElementById(id);
        cy.center(n);
        const p = n.renderedPosition(), r = document.querySelector('#graph').getBoundingClientRect();
        return {x: r.left + p.x, y: r.top + p.y};
    }""", long_id)
    _labels_settled(page)
    full = drawn["labels"][long_id][1]
    page.mouse.move(at["x"] - 40, at["y"] - 40)
    for attempt in range(20):  # cytoscape hit-tests moves in its own time: nudge until it has
        page.mouse.move(at["x"] + attempt % 2, at["y"], steps=2)
        if page.get_attribute("#graph", "title") == full:
            break
        time.sleep(0.1)
    assert page.get_attribute("#graph", "title") == full
    _labels_settled(page)
    assert page.evaluate(f"window.enfoldUI.cy.getElementById('{long_id}').hasClass('full')")
    _shot(page, "labels")
    page.mouse.move(5, 5)
    # Zoomed far out only the biggest nodes keep a label.
    page.evaluate("void window.enfoldUI.cy.zoom({level: 0.12, renderedPosition: {x: 400, y: 400}})")
    _labels_settled(page)
    assert len(page.evaluate("window.enfoldUI.labelled()")) <= 5
    page.evaluate("void window.enfoldUI.cy.fit(undefined, 30)")
    _labels_settled(page)
    assert not PAGE_ERRORS


def test_labels_do_not_overlap_when_zoomed_in(page: Any) -> None:
    # Zoomed in, a label's bounds reach further beyond its drawn background (they grow with
    # the zoom): around the busiest nodes, at three zooms, no two shown labels may overlap.
    hubs = page.evaluate("""() => window.enfoldUI.cy.nodes().sort((a, b) => b.degree() - a.degree()
        || (a.id() < b.id() ? -1 : 1)).slice(0, 6).map(n => n.id())""")
    found, shown = [], 0
    for hub in hubs:
        for zoom in (1.6, 2.5, 3.5):
            page.evaluate("""([id, z]) => {
                const cy = window.enfoldUI.cy; cy.zoom(z); cy.center(cy.getElementById(id));
            }""", [hub, zoom])
            _labels_settled(page)
            shown += len(page.evaluate("window.enfoldUI.labelled()"))
            found += _overlapping_labels(page)
    assert shown >= 6 * 3 * 5, "too few labels in the zoomed-in views"
    assert not found, found[:5]
    page.evaluate("void window.enfoldUI.cy.fit(undefined, 30)")
    _labels_settled(page)
    assert not PAGE_ERRORS


def test_clicking_a_node_shows_its_provenance_and_history(page: Any, server: str) -> None:
    target = page.evaluate(
        "window.enfoldUI.cy.nodes('[kind = \"concept\"]').max(x => x.degree()).ele.id()")
    _click_node(page, target)
    page.wait_for_selector(f"#details[data-node='{target}']", timeout=10_000)
    truth = _get(server, f"/nodes/{target}")
    grounding = {e["id"]: e for e in truth["provenance"]}
    assert grounding, "the chosen concept should be grounded in events"
    items = page.locator("#details .provenance-list li")
    assert items.count() == len(grounding)
    first = items.first
    event_id = first.locator("[data-node]").get_attribute("data-node")
    event = grounding[event_id]
    assert first.locator(".who").inner_text() == event["attrs"]["source"]
    assert event["text"] in first.inner_text()
    playwright_api.expect(first.locator(".when")).to_have_text(re.compile(TIME_RE))
    assert page.locator("#details .node-text").inner_text() == truth["node"]["text"]
    assert page.locator("#details .history li").count() == len(
        _get(server, f"/nodes/{target}/history")) > 0
    assert page.locator("#details .neighbours li").count() == len(truth["edges"])
    # a provenance entry is a link: it opens that event
    first.locator("[data-node]").click()
    page.wait_for_selector(f"#details[data-node='{event_id}']", timeout=10_000)


def test_clicking_a_concept_shows_its_events_facts_and_claims(page: Any, server: str) -> None:
    concepts = [n for n in _get(server, "/graph?limit=400")["nodes"] if n["kind"] == "concept"]
    views = {c["id"]: _concept_view(server, c["id"]) for c in concepts}
    target = max(views, key=lambda c: len(views[c][1]))  # the concept with the most claims
    facts, claims = views[target]
    assert len(claims) >= 2, "the demo should give a concept several claims"
    _click_node(page, target)
    details = page.locator(f"#details[data-node='{target}'][data-concept='ready']")
    details.wait_for(timeout=10_000)
    truth = _get(server, f"/nodes/{target}")
    # Its events: every grounding event, oldest first, verbatim with time and speaker.
    events = sorted(truth["provenance"], key=lambda e: e["attrs"]["ts"])
    rows = details.locator(".provenance-list li")
    assert rows.count() == len(events) > 0
    for i, ev in enumerate(events):
        row = rows.nth(i)
        assert row.locator("[data-node]").inner_text() == ev["text"]
        assert row.locator(".when").inner_text() == _when(ev["attrs"]["ts"])
        assert row.locator(".who").inner_text() == ev["attrs"]["source"]
    # Its claims, each with its holder; its facts.
    shown = details.locator(".concept-claims li")
    assert sorted(shown.evaluate_all("els => els.map(e => e.dataset.node)")) == sorted(claims)
    for i in range(shown.count()):
        li = shown.nth(i)
        claim = claims[li.get_attribute("data-node")]
        assert li.locator(".holder").inner_text() == claim["attrs"]["holder"]
        assert li.locator(".claim-text").inner_text() == claim["text"]
    assert sorted(details.locator(".concept-facts li").evaluate_all(
        "els => els.map(e => e.dataset.node)")) == sorted(facts)
    assert f"Claims ({len(claims)})" in details.inner_text()
    shown.last.scroll_into_view_if_needed()
    _shot(page, "concept")
    # A fact or claim opens in turn.
    claim_id = shown.first.get_attribute("data-node")
    shown.first.locator(".claim-text").click()
    page.wait_for_selector(f"#details[data-node='{claim_id}']", timeout=10_000)
    assert not PAGE_ERRORS


def test_search_goes_through_recall_and_shows_its_evidence(page: Any, server: str) -> None:
    question = "half-marathon tempo"
    with page.expect_response(lambda r: "/recall?" in r.url) as answer:
        page.fill("#q", question)
    response = answer.value
    assert response.ok
    sent = urllib.parse.parse_qs(urllib.parse.urlparse(response.url).query)
    assert sent["q"] == [question] and sent["k"] == ["10"]
    pack = response.json()
    evidence = pack["evidence"]
    assert evidence and evidence[0]["text"].startswith("Tempo before standup")
    # The same question to the API recalls the same events (the page shows recall's answer).
    assert {e["id"] for e in _get(server, "/recall?q=half-marathon%20tempo&k=10")["evidence"]} \
        == {e["id"] for e in evidence}
    items = page.locator("#results .evidence-list li[data-event]")
    playwright_api.expect(items).to_have_count(len(evidence))
    assert page.locator("#results h2 .count").inner_text() == f"({len(evidence)})"
    for i, ev in enumerate(evidence):  # verbatim, in recall's order, with time and speaker
        row = items.nth(i)
        assert row.get_attribute("data-event") == ev["id"]
        assert row.locator(".text").inner_text() == ev["text"]
        assert row.locator(".who").inner_text() == ev["source"]
        assert row.locator(".when").inner_text() == _when(ev["ts"])
    recalled = [x["id"] for key in ("concepts", "facts", "claims", "intents") for x in pack[key]]
    assert page.locator("#results .recalled-list li").count() == len(recalled)
    # Everything recalled is highlighted in the graph, the evidence as evidence.
    drawn = set(page.evaluate("window.enfoldUI.cy.nodes().map(n => n.id())"))
    matched = page.evaluate("window.enfoldUI.cy.nodes('.match').map(n => n.id())")
    marked = page.evaluate("window.enfoldUI.cy.nodes('.evidence').map(n => n.id())")
    assert set(matched) == ({e["id"] for e in evidence} | set(recalled)) & drawn
    assert set(marked) == {e["id"] for e in evidence} & drawn != set()
    faded = page.evaluate("window.enfoldUI.cy.nodes('.faded').length")
    assert faded == len(drawn) - len(matched)
    _labels_settled(page)
    _shot(page, "search")
    # An evidence entry opens its event.
    items.first.locator(".text").click()
    page.wait_for_selector(f"#details[data-node='{evidence[0]['id']}']", timeout=10_000)
    page.fill("#q", "")
    page.wait_for_selector("#results[hidden]", state="attached", timeout=10_000)
    assert page.evaluate("window.enfoldUI.cy.nodes('.match').length") == 0
    assert not PAGE_ERRORS


def test_timeline_shows_every_event_and_the_deadlines(page: Any, server: str) -> None:
    events, cursor = [], ""
    while True:  # the API's pages, as the page reads them (a small page: several requests)
        body = _get(server, f"/events?limit=7{cursor}")
        events += body["events"]
        if body["next_cursor"] is None:
            break
        cursor = f"&cursor={body['next_cursor']}"
    assert len(events) == 50
    deadlines = {i["id"]: i for i in _get(server, "/intents?status=all")
                 if isinstance(i["attrs"].get("due"), (int, float))}
    assert deadlines, "the demo has intents with deadlines"
    page.click("#views [data-view=timeline]")
    page.wait_for_selector("#timeline[data-ready=true]", timeout=10_000)
    assert "view=timeline" in page.url
    assert page.get_attribute("#views [data-view=timeline]", "aria-selected") == "true"
    marks = page.evaluate("""() => ({
        events: [...document.querySelectorAll('#timeline .tl-event')].map(c => ({
            id: c.dataset.node, ts: Number(c.dataset.ts), x: Number(c.getAttribute('cx'))})),
        deadlines: [...document.querySelectorAll('#timeline .tl-deadline')].map(g => ({
            id: g.dataset.node, ts: Number(g.dataset.ts),
            x: Number(g.querySelector('line').getAttribute('x1'))})),
    })""")
    assert sorted(m["id"] for m in marks["events"]) == sorted(e["id"] for e in events)
    assert {m["id"]: m["ts"] for m in marks["deadlines"]} == {
        i: d["attrs"]["due"] for i, d in deadlines.items()}
    # One time axis for both: positions grow with time.
    everything = sorted(marks["events"] + marks["deadlines"], key=lambda m: m["ts"])
    xs = [m["x"] for m in everything]
    assert xs == sorted(xs) and xs[-1] - xs[0] > 400
    by_id = {e["id"]: e for e in events}
    for m in marks["events"]:
        assert m["ts"] == by_id[m["id"]]["attrs"]["ts"]
    # The list below: events and deadlines in time order, deadlines marked as such.
    rows = page.evaluate("""() => [...document.querySelectorAll('#timeline-list .tl-row')]
        .map(li => [li.dataset.node, li.classList.contains('deadline')])""")
    expected = sorted([(e["attrs"]["ts"], 0, e["id"]) for e in events]
                      + [(d["attrs"]["due"], 1, i) for i, d in deadlines.items()])
    assert [r[0] for r in rows] == [x[2] for x in expected]
    assert {r[0] for r in rows if r[1]} == set(deadlines)
    first_due = page.locator("#timeline-list .tl-row.deadline").first
    assert first_due.locator(".text").inner_text() in {d["text"] for d in deadlines.values()}
    _shot(page, "timeline")
    # Clicking a mark opens its event; the list marks it too.
    chosen = marks["events"][len(marks["events"]) // 2]["id"]
    page.locator(f"#timeline .tl-event[data-node='{chosen}']").click()
    page.wait_for_selector(f"#details[data-node='{chosen}']", timeout=10_000)
    playwright_api.expect(page.locator(f"#timeline-list [data-node='{chosen}']")).to_have_class(
        re.compile(r"\bselected\b"))
    page.click("#views [data-view=graph]")
    playwright_api.expect(page.locator("#timeline")).to_be_hidden()
    assert not PAGE_ERRORS


def test_accept_and_reject_change_intent_status(page: Any, server: str) -> None:
    rows = page.locator("#intents li[data-intent]")
    assert rows.count() == len(_get(server, "/intents?status=pending")) >= 2
    first, second = (rows.nth(i).get_attribute("data-intent") for i in (0, 1))
    assert page.locator(f"li[data-intent='{first}'] .status").inner_text() == "pending"

    page.locator(f"li[data-intent='{first}'] button.accept").click()
    playwright_api.expect(page.locator(f"li[data-intent='{first}'] .status")).to_have_text(
        "accepted")
    assert _get(server, f"/nodes/{first}")["node"]["attrs"]["confirmed"] is True

    page.locator(f"li[data-intent='{second}'] button.reject").click()
    playwright_api.expect(page.locator(f"li[data-intent='{second}'] .status")).to_have_text(
        "rejected")
    assert _get(server, f"/nodes/{second}")["node"]["attrs"]["status"] == "rejected"
    assert page.locator(f"li[data-intent='{second}'] button.reject").is_disabled()

    page.locator(f"li[data-intent='{first}'] [data-node]").click()  # show the intent too
    page.wait_for_selector(f"#details[data-node='{first}']", timeout=10_000)
    _shot(page, "ui")
    assert not PAGE_ERRORS


def test_a_link_with_ns_opens_the_namespace_and_node(browser: Any, server: str) -> None:
    concept = next(n["id"] for n in _get(server, "/graph?limit=400")["nodes"]
                   if n["kind"] == "concept")
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    try:
        pg = context.new_page()  # a fresh tab: nothing in its sessionStorage
        pg.on("pageerror", lambda e: PAGE_ERRORS.append(str(e)))
        pg.goto(f"{server}/ui?ns={NS}&node={concept}&key=never-kept")
        pg.wait_for_selector("body[data-ready=true]", timeout=30_000)  # no form submitted
        assert pg.input_value("#ns") == NS
        assert pg.evaluate("window.enfoldUI.cy.nodes().length") > 50
        pg.wait_for_selector(f"#details[data-node='{concept}']", timeout=10_000)
        query = urllib.parse.parse_qs(urllib.parse.urlparse(pg.url).query)
        assert query == {"ns": [NS], "node": [concept]}  # a key never stays in the address
        _shot(pg, "deep-link")
        pg.goto(f"{server}/ui?ns={NS}&view=timeline")
        pg.wait_for_selector("#timeline[data-ready=true]", timeout=30_000)
        assert pg.locator("#timeline .tl-event").count() == 50
        # A namespace that does not exist says so.
        pg.goto(f"{server}/ui?ns=nobody-here")
        playwright_api.expect(pg.locator("#status")).to_contain_text("nobody-here")
    finally:
        context.close()
    assert not PAGE_ERRORS


def test_page_sends_the_key_and_keeps_it_for_the_tab(browser: Any,
                                                    tmp_path: Path) -> None:
    from enfold.server.auth import create_key

    db = tmp_path / "auth.db"
    _seed(db)
    with Memory.open(db) as mem:
        own = create_key(mem.store, NS)[1]
        other = create_key(mem.store, "someone-else")[1]
    with _serving(db) as base:
        wrong = _open(browser, base, key=other)  # another namespace's key sees nothing
        playwright_api.expect(wrong.locator("#status.error")).to_contain_text(
            "check the namespace and its API key")
        assert wrong.evaluate("window.enfoldUI.cy") is None
        assert wrong.locator("#intents li[data-intent]").count() == 0

        linked = browser.new_context().new_page()  # a link, in a tab that has no key yet
        linked.goto(f"{base}/ui?ns={NS}")
        playwright_api.expect(linked.locator("#status.error")).to_contain_text(
            "check the namespace and its API key")
        playwright_api.expect(linked.locator("#key")).to_be_focused()
        assert linked.input_value("#ns") == NS
        linked.fill("#key", own)
        linked.click("#connect button[type=submit]")
        linked.wait_for_selector("body[data-ready=true]", timeout=30_000)
        assert "key" not in linked.url

        right = _open(browser, base, key=own)
        right.wait_for_selector("body[data-ready=true]", timeout=30_000)
        assert right.evaluate("window.enfoldUI.cy.nodes().length") > 50
        assert right.evaluate("sessionStorage.getItem('enfold.key')") == own
        right.reload()  # the tab remembers the namespace and key: it reopens by itself
        right.wait_for_selector("body[data-ready=true]", timeout=30_000)
        assert right.input_value("#ns") == NS
    assert not PAGE_ERRORS


def test_built_assets_match_their_source() -> None:
    """static/ is the build of web/ (rebuild with `cd web && npm ci && npm run build`)."""
    from enfold.server.ui import ASSETS, STATIC_DIR

    web = ROOT / "web" / "src"
    assert (STATIC_DIR / "index.html").read_text() == (web / "index.html").read_text()
    bundle = (STATIC_DIR / "app.js").read_text()
    modules = sorted(web.glob("*.js"))
    assert len(modules) > 3
    found = 0
    for module in modules:
        code = re.sub(r"/\*.*?\*/", "", module.read_text(), flags=re.DOTALL)
        code = re.sub(r"(^|\s)//.*$", "", code, flags=re.MULTILINE)  # text survives
        literals = re.findall(r"'([A-Za-z][\w .:,()-]{11,})'", code)
        found += len(literals)
        for literal in literals:
            assert literal in bundle, f"static/app.js is older than {module.name} ({literal!r})"
    assert found > 10
    assert ".tl-event" in (STATIC_DIR / "app.css").read_text()
    lock = json.loads((ROOT / "web" / "package-lock.json").read_text())
    cytoscape = lock["packages"]["node_modules/cytoscape"]["version"]
    assert f"cytoscape {cytoscape}" in bundle.splitlines()[0]
    assert all((STATIC_DIR / name).is_file() for name in ASSETS)

"""The /ui page in a real headless Chromium against a real ``enfold serve`` process.

Seeds a SQLite file with the bundled demo (hash embedder), starts ``enfold serve --no-auth``,
then drives Debian's Chromium with Playwright: the graph renders, clicking a node shows its
provenance, search highlights matches, accept/reject change an intent's status (checked again
through the API). A screenshot is left in ``out/artifacts/ui.png``.
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
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
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
ARTIFACTS = ROOT / "out" / "artifacts"
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
    assert not PAGE_ERRORS


def test_clicking_a_node_shows_its_provenance_and_history(page: Any, server: str) -> None:
    target = page.evaluate("""() => {
        const cy = window.enfoldUI.cy;
        const n = cy.nodes('[kind = "concept"]').max(x => x.degree()).ele;
        cy.zoom(1.6); cy.center(n);
        const p = n.renderedPosition(), r = document.querySelector('#graph').getBoundingClientRect();
        return {id: n.id(), x: r.left + p.x, y: r.top + p.y};
    }""")
    page.mouse.click(target["x"], target["y"])
    page.wait_for_selector(f"#details[data-node='{target['id']}']", timeout=10_000)
    truth = _get(server, f"/nodes/{target['id']}")
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
        _get(server, f"/nodes/{target['id']}/history")) > 0
    assert page.locator("#details .neighbours li").count() == len(truth["edges"])
    # a provenance entry is a link: it opens that event
    first.locator("[data-node]").click()
    page.wait_for_selector(f"#details[data-node='{event_id}']", timeout=10_000)


def test_search_highlights_matches(page: Any, server: str) -> None:
    page.fill("#q", "half-marathon tempo")
    page.wait_for_selector("#results:not([hidden]) .list li", timeout=10_000)
    found = _get(server, "/search?q=half-marathon%20tempo&k=20")
    shown = page.locator("#results .list li [data-node]")
    assert shown.count() == len(found) > 0
    assert shown.first.get_attribute("data-node") == found[0]["id"]
    matched = page.evaluate("window.enfoldUI.cy.nodes('.match').map(n => n.id())")
    drawn = page.evaluate("window.enfoldUI.cy.nodes().map(n => n.id())")
    assert set(matched) == {f["id"] for f in found} & set(drawn)
    page.fill("#q", "")
    page.wait_for_selector("#results[hidden]", state="attached", timeout=10_000)


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
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "ui.png"))
    assert (ARTIFACTS / "ui.png").stat().st_size > 10_000
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
    source = (web / "app.js").read_text()
    literals = re.findall(r"'([A-Za-z][\w .:,()-]{11,})'", source)  # text survives minifying
    assert len(literals) > 10
    for literal in literals:
        assert literal in bundle, f"static/app.js is older than web/src/app.js ({literal!r})"
    lock = json.loads((ROOT / "web" / "package-lock.json").read_text())
    cytoscape = lock["packages"]["node_modules/cytoscape"]["version"]
    assert f"cytoscape {cytoscape}" in bundle.splitlines()[0]
    assert all((STATIC_DIR / name).is_file() for name in ASSETS)

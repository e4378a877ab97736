"""A pip user's first run, as the README tells it: a fresh virtualenv, torch's CPU build, then
``pip install '.[minilm,server]'``; ``enfold serve`` starts and a recall returns evidence.

Slow (minutes: it installs torch, sentence-transformers and the server into a new
environment), so it is left out of the default run: ``pytest -m slow tests/test_install.py``.
pip uses this machine's configuration (its index, ``--find-links``); set
``ENFOLD_TEST_TORCH_INDEX`` to take torch from another index, e.g. PyTorch's CPU one as the
README does.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _http(method: str, url: str, key: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={
        "Authorization": f"Bearer {key}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read() or b"null")


def test_a_fresh_virtualenv_following_the_readme_serves_and_recalls(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install = readme[readme.index("## Install"):readme.index("## Quickstart")]
    assert re.search(r"pip install torch==2\.13\.0 --index-url \S+/whl/cpu", install)
    assert "pip install '.[minilm,server]'" in install

    started = time.monotonic()
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    bin_ = venv / "bin"
    # Nothing of the environment running the tests leaks in: the venv's own enfold runs.
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = f"{bin_}{os.pathsep}{env.get('PATH', '')}"

    def run(*cmd: str, **kw: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(cmd), cwd=tmp_path, env=env, capture_output=True,
                              text=True, check=False, **kw)

    index = os.environ.get("ENFOLD_TEST_TORCH_INDEX")
    torch = run(str(bin_ / "pip"), "install", "--quiet", "torch==2.13.0",
                *(["--index-url", index] if index else []), timeout=1800)
    assert torch.returncode == 0, torch.stderr[-3000:]
    enfold = run(str(bin_ / "pip"), "install", "--quiet", f"{ROOT}[minilm,server]",
                 timeout=1800)
    assert enfold.returncode == 0, enfold.stderr[-3000:]
    installed_s = time.monotonic() - started
    located = run(str(bin_ / "python"), "-c", "import enfold; print(enfold.__file__)")
    assert str(venv) in located.stdout, located.stdout + located.stderr

    db = tmp_path / "memory.db"
    made = run(str(bin_ / "enfold"), "--db", str(db), "--create", "keys", "create",
               "--namespace", "maya", timeout=120)
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    assert key.startswith("enf_") and "\n" not in key

    port = _free_port()
    log = tmp_path / "serve.log"
    with log.open("w") as out:
        server = subprocess.Popen([str(bin_ / "enfold"), "--db", str(db), "serve", "--port",
                                   str(port), "--admin-key-file", str(_admin(tmp_path))],
                                  cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180  # the warm-up loads MiniLM before listening
        while True:
            assert server.poll() is None, log.read_text()
            try:
                with urllib.request.urlopen(f"{base}/readyz", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.5)
        ready_s = time.monotonic() - started - installed_s
        ns = f"{base}/v1/namespaces/maya"
        posted = _http("POST", f"{ns}/events", key,
                       {"text": "I need to pick up the dry cleaning before Friday",
                        "source": "Maya"})
        first = time.monotonic()
        while True:  # folded in the background
            pack = _http("GET", f"{ns}/recall?q=dry+cleaning&k=5", key)
            if pack["evidence"]:
                break
            assert time.monotonic() - first < 60, pack
            time.sleep(0.2)
        assert pack["evidence"][0]["id"] == posted["ids"][0]
        assert "dry cleaning" in pack["evidence"][0]["text"]
        assert _http("GET", f"{ns}/stats", key)["embedder"] == "minilm:all-MiniLM-L6-v2"
        with urllib.request.urlopen(f"{base}/docs-assets/swagger-ui.css", timeout=10) as r:
            assert r.status == 200  # the API docs' assets came with the install
    finally:
        server.terminate()
        code = server.wait(60)
    assert code == 0, log.read_text()
    print(f"\nfresh install: {installed_s:.0f} s to install, {ready_s:.0f} s to ready, "
          f"{time.monotonic() - started:.0f} s in all")


def _admin(tmp: Path) -> Path:
    path = tmp / "admin.key"
    path.write_text("admin-secret-for-the-install-test\n")
    return path

"""The README tells the truth: its first commands exist, every CLI command is documented, and
its Python quickstart runs as written."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import Any

import pytest

from enfold.cli import cli

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_opens_with_make_demo_and_make_test() -> None:
    first = [line.split("#")[0].strip() for line in README.splitlines()[2:4]]
    assert first == ["make demo", "make test"]
    targets = re.findall(r"^([a-z-]+):", (ROOT / "Makefile").read_text(), re.MULTILINE)
    assert {"demo", "test"} <= set(targets)
    opening = README[:README.index("## Install")]
    for word in ("Eq. 1", "PEC2F", "UpdatePlan"):  # no internal vocabulary before the install
        assert word not in opening


def test_every_cli_command_is_documented() -> None:
    """In the README; a benchmark's subcommand may be in docs/ instead."""
    docs = README + "".join(p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md"))
    for name, command in cli.commands.items():
        assert f"enfold {name}" in README or f" {name} " in README, name
        for sub in getattr(command, "commands", {}):
            assert f"{name} {sub}" in (docs if name == "bench" else README), f"{name} {sub}"


@pytest.mark.minilm
def test_the_readme_quickstart_runs(minilm: Any, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """As written, with the session's MiniLM (loaded once) standing in for a fresh load."""
    import enfold.embed

    code = re.search(r"## Quickstart\s+```python\n(.*?)```", README, re.DOTALL)
    assert code is not None
    assert len(code.group(1).strip().splitlines()) <= 12
    monkeypatch.setattr(enfold.embed, "make_embedder", lambda spec, **_: minilm)
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code.group(1), "README.md", "exec"), {})  # noqa: S102 - the README
    printed = out.getvalue()
    assert "Maya Gina thinks the launch should slip another week." in printed
    assert "Gina holds: the launch should slip another week" in printed
    assert "['Send the budget to Omar by Friday']" in printed  # the goal, not the words
    assert (tmp_path / "memory.db").exists()


def test_docs_settings_md_is_generated_from_the_table() -> None:
    """``docs/settings.md`` is what ``enfold settings --markdown`` prints now (regenerate it
    with ``enfold settings --markdown > docs/settings.md``)."""
    from enfold.settings import settings_markdown

    assert (ROOT / "docs" / "settings.md").read_text(encoding="utf-8") == settings_markdown()


def test_docs_attrs_md_is_generated_from_the_payload_models() -> None:
    """``docs/attrs.md`` is what ``enfold schema --markdown`` prints now (regenerate it with
    ``enfold schema --markdown > docs/attrs.md``)."""
    from enfold.payloads import payloads_markdown

    assert (ROOT / "docs" / "attrs.md").read_text(encoding="utf-8") == payloads_markdown()


def test_every_setting_has_a_reader() -> None:
    """A setting nobody reads is a knob that does nothing: remove it, or wire it."""
    from dataclasses import fields

    from enfold.settings import Settings

    src = "\n".join(p.read_text(encoding="utf-8")
                    for p in (ROOT / "src" / "enfold").rglob("*.py"))
    unread = [f.name for f in fields(Settings) if not re.search(rf"\.{f.name}\b", src)]
    assert unread == []


def test_no_reference_to_a_spec_the_repository_does_not_hold() -> None:
    """Docstrings and comments say what they mean; none cites "SPEC §…" (no such file)."""
    cited = [f"{p.relative_to(ROOT)}:{n}"
             for p in sorted((ROOT / "src").rglob("*.py"))
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if "SPEC §" in line]
    assert cited == []


def test_every_module_docs_architecture_cites_exists() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    cited = set(re.findall(r"`([a-z_/]+(?:\.py|/))`", text))
    assert len(cited) > 30
    missing = [c for c in sorted(cited)
               if not (ROOT / "src" / "enfold" / c).exists() and not (ROOT / c).exists()]
    assert missing == []

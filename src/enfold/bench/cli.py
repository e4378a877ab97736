"""``enfold bench …``: the benchmark commands (attached to the main CLI)."""

from __future__ import annotations

import click


@click.group()
def bench() -> None:
    """Reproduce the quality and speed tables (results as JSON + Markdown)."""

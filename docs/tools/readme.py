"""The repository's README: its measured sections are rewritten by the maintainer's tools
alone (`make solve`, `make train`, `make report`, `make bench`), never by the library."""

from __future__ import annotations

from pathlib import Path

from baselines.game_pages import replace_section

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


def replace_readme_section(name: str, text: str, readme: Path = README) -> bool:
    """Put `text` between the README's `<!-- name:start -->` and `<!-- name:end -->` markers;
    False if the README or the markers are absent."""
    return replace_section(name, text, readme)

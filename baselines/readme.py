"""Keep the README's measured sections equal to what the demo and the benchmarks last wrote."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"


def replace_section(name: str, text: str, readme: Path = README) -> bool:
    """Put `text` between `<!-- name:start -->` and `<!-- name:end -->`; False if absent."""
    if not readme.exists():
        return False
    content = readme.read_text()
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    if start not in content or end not in content:
        return False
    head, rest = content.split(start, 1)
    _, tail = rest.split(end, 1)
    readme.write_text(f"{head}{start}\n{text.strip()}\n{end}{tail}")
    return True

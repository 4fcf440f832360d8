"""The repository's README and the site's generated pages: their measured sections, each
between `<!-- name:start -->` and `<!-- name:end -->` markers, are rewritten by the
maintainer's tools alone (`make solve`, `make train`, `make report`, `make bench`), never by
the library."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

from dice_envs.registration import game_slug
from docs.tools.game_pages import replace_section

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
# The pages whose sections the tools write, and the sections each holds.
HOME = DOCS / "index.md"  # games (also in the README)
SOLUTIONS = DOCS / "results" / "solutions.md"  # solutions (make solve)
TRAINING_RESULTS = DOCS / "results" / "training.md"  # training, training-full, ... (make train)
BENCHMARKS = DOCS / "benchmarks.md"  # bench, training-bench (make bench)
MKDOCS = ROOT / "mkdocs.yml"  # the games' entries of the site's navigation (make solve)

# An inline Markdown link or image target: `](target)` or `](target "title")`.
_LINK_TARGET = re.compile(r"\]\(([^)\s]+)((?:\s+\"[^\"]*\")?)\)")


def check_markers(path: Path, name: str) -> str:
    """The text of the file at `path`, after checking that it has section `name`'s markers,
    start before end; a ValueError saying what is missing otherwise."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"path must be an existing file with section {name!r}; {path} is not")
    content = path.read_text()
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    missing = [marker for marker in (start, end) if marker not in content]
    if missing:
        raise ValueError(
            f"{path} has no {' and no '.join(missing)}: add both markers where section "
            f"{name!r} belongs, then rerun"
        )
    if content.index(end) < content.index(start):
        raise ValueError(f"{path}: {end} comes before {start}")
    return content


def replace_marked_section(path: Path, name: str, text: str) -> None:
    """Put `text` between section `name`'s markers in the file at `path`, refusing (a
    ValueError, nothing written) if the file or either marker is missing."""
    check_markers(path, name)
    replace_section(name, text, Path(path))


def rebase_links(text: str, source: Path, target: Path) -> str:
    """`text`'s relative Markdown links and images, written relative to the folder `source`,
    rewritten relative to the folder `target` (both relative to one folder, or both absolute);
    web links and same-page anchors are left as they are."""

    def rebase(match: re.Match) -> str:
        link, title = match.group(1), match.group(2)
        if link.startswith(("#", "/")) or re.match(r"[a-z][a-z0-9+.-]*:", link):
            return match.group(0)
        path, hash_, anchor = link.partition("#")
        moved = posixpath.relpath(
            posixpath.normpath(posixpath.join(Path(source).as_posix(), path)),
            Path(target).as_posix(),
        )
        return f"]({moved}{hash_}{anchor}{title})"

    return _LINK_TARGET.sub(rebase, text)


def games_nav(env_ids: list[str]) -> str:
    """The site navigation's entries of the games' pages (YAML lines of mkdocs.yml's nav), one
    per registered id, in the registry's order."""
    return "\n".join(
        f"      - {env_id.split('/')[-1].removesuffix('-v0')}: games/{game_slug(env_id)}.md"
        for env_id in env_ids
    )


def _yaml_section(content: str, path: Path, name: str) -> re.Match:
    found = re.search(rf"(?ms)^([ \t]*# {name}:start\b[^\n]*\n).*?^([ \t]*# {name}:end\n)", content)
    if found is None:
        raise ValueError(f"{path} has no '# {name}:start' ... '# {name}:end' lines: add them")
    return found


def check_yaml_markers(path: Path, name: str) -> None:
    """Refuse (ValueError) unless the YAML file at `path` has section `name`'s comment lines."""
    _yaml_section(Path(path).read_text(), path, name)


def replace_yaml_section(path: Path, name: str, lines: str) -> None:
    """Put `lines` between the `# name:start` and `# name:end` comment lines of the YAML file at
    `path` (both kept as they are); a ValueError, nothing written, if they are missing."""
    path = Path(path)
    content = path.read_text()
    found = _yaml_section(content, path, name)
    updated = content[: found.start()] + found.group(1) + lines.rstrip("\n") + "\n"
    path.write_text(updated + found.group(2) + content[found.end() :])

"""The README fits its line budget, and every relative link and image in it and in the site's
Markdown sources (docs/**/*.md) resolves: to an existing file and, for an #anchor into a
Markdown page, to one of its headings as MkDocs names them. Web links are not fetched."""

import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
LINE_BUDGET = 200
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md"))]

FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.M | re.S)
CODE_SPAN = re.compile(r"(`+)(?!`).*?(?<!`)\1(?!`)", re.S)
INLINE_LINK = re.compile(
    r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)"
)
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.M)
IMG_SRC = re.compile(r"<img\b[^>]*\bsrc=[\"']([^\"']+)[\"']", re.I)
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$", re.M)
ATTR_ID = re.compile(r"\s*\{[^}]*#([\w-]+)[^}]*\}\s*$")
AUTODOC = re.compile(r"^:::\s+([\w.]+)", re.M)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def without_code(text: str) -> str:
    """The Markdown with fenced code blocks and code spans blanked: links there are code."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def link_targets(text: str) -> list[str]:
    """Every link and image target of a Markdown text, outside code."""
    prose = without_code(text)
    found = INLINE_LINK.findall(prose) + REFERENCE.findall(prose) + IMG_SRC.findall(prose)
    return [target for target in found if target]


def slug(heading: str) -> str:
    """The anchor MkDocs (Python-Markdown's toc) gives a heading: its text without Markdown,
    ASCII, punctuation removed, lowercase, runs of spaces and hyphens to one hyphen."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text.replace("`", ""))
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(text: str) -> tuple[set[str], tuple[str, ...]]:
    """The page's heading anchors (a repeated one numbered `_1`, `_2`, as MkDocs does), and
    the objects its mkdocstrings `::: name` blocks document (anchors `name` and `name.*`)."""
    found: set[str] = set()
    for _, title in HEADING.findall(FENCE.sub("", text)):
        explicit = ATTR_ID.search(title)
        anchor = explicit.group(1) if explicit else slug(title)
        numbered, count = anchor, 0
        while numbered in found:
            count += 1
            numbered = f"{anchor}_{count}"
        found.add(numbered)
    return found, tuple(AUTODOC.findall(FENCE.sub("", text)))


def has_anchor(page: Path, anchor: str) -> bool:
    headings, documented = anchors(page.read_text())
    return anchor in headings or any(
        anchor == name or anchor.startswith(f"{name}.") for name in documented
    )


def broken_links(page: Path) -> list[str]:
    """The relative links and images of `page` that point at no file, or at no heading."""
    broken = []
    for target in link_targets(page.read_text()):
        if SCHEME.match(target):  # http(s), mailto: not fetched
            continue
        path, _, anchor = unquote(target).partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and not has_anchor(linked, anchor):
            broken.append(f"{target}: no heading with that anchor in {linked.name}")
    return broken


def test_the_readme_fits_its_line_budget():
    lines = README.read_text().splitlines()
    assert len(lines) <= LINE_BUDGET, f"README.md has {len(lines)} lines, over {LINE_BUDGET}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    assert broken_links(page) == []


def test_the_readme_links_into_the_site_and_its_results():
    targets = set(link_targets(README.read_text()))
    for page in ("index", "getting-started", "concepts", "architecture", "results/training"):
        assert f"docs/{page}.md" in targets
    assert "docs/games/pig.md" in targets  # the games table


def test_the_check_finds_missing_files_images_and_anchors(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub/other.md").write_text(
        "# Other\n\n## Two players: how exploitable?\n\n## Two players: how exploitable?\n\n"
        "## `dice_envs/Pig-v0` (Neller & Presser)\n\n## Named {#my-id}\n\n::: baselines.solve\n"
    )
    (tmp_path / "figure.png").write_bytes(b"")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n## Here and now\n\n"
        "[ok](sub/other.md) ![ok](figure.png) [ok](#here-and-now) [web](https://x.invalid/a)\n"
        "[ok](sub/other.md#two-players-how-exploitable)\n"
        "[ok](sub/other.md#two-players-how-exploitable_1) [ok](sub/other.md#my-id)\n"
        "[ok](sub/other.md#dice_envspig-v0-neller-presser) [ok](<sub/other.md>)\n"
        "[ok](sub/other.md#baselines.solve) [ok](sub/other.md#baselines.solve.method)\n"
        "`[code](gone.md)`\n\n```\n[code](gone.md)\n```\n\n"
        "[gone](gone.md) ![gone](images/gone.png) [bad](sub/other.md#nowhere)\n"
        "[bad](#elsewhere) [bad](sub/other.md#two-players-how-exploitable_2)\n"
        "[bad](sub/other.md#named)\n"
        '[gone]: sub/gone.md\n<img src="gone.svg">\n'
    )
    assert broken_links(page) == [
        "gone.md: no such file",
        "images/gone.png: no such file",
        "sub/other.md#nowhere: no heading with that anchor in other.md",
        "#elsewhere: no heading with that anchor in page.md",
        "sub/other.md#two-players-how-exploitable_2: no heading with that anchor in other.md",
        "sub/other.md#named: no heading with that anchor in other.md",  # its id is my-id
        "sub/gone.md: no such file",
        "gone.svg: no such file",
    ]


def test_the_slug_is_python_markdowns():
    markdown = pytest.importorskip("markdown")
    headings = [
        "Two players: how exploitable are the named policies?",
        "`dice_envs/Pig-v0` (goal=100)",
        "Chow–Robbins: the banded backward pass",
        "Pig at goal 100 against hold-at-20: tables, exact evaluation, the CLI",
        "The source documents' heuristics, evaluated exactly",
        "A [linked](x.md) heading -- with  spaces",
    ]
    html = markdown.markdown("\n\n".join(f"## {h}" for h in headings), extensions=["toc"])
    assert re.findall(r'id="([^"]+)"', html) == [slug(h) for h in headings]

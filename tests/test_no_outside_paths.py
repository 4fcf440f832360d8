"""Sources are cited by authors, title, venue and year, never as paths to files outside the
repository or as numbered source files ("seed 002"): every tracked text file is scanned.

"seed" in the random-seed sense (seed=0, seeds 0, 1 and 2, --seed 0) is not a citation and
passes.
"""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml"}
# This file spells the forbidden forms out in its examples, so it is the one file not scanned.
SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()

FORBIDDEN = {
    "a path to the shared folder beside the repository": re.compile(r"\.\./shared\b"),
    "an absolute path of the development machine": re.compile(r"/work/"),
    "a path into the source documents' folder": re.compile(r"\bseeds/"),
    "the design notes outside the repository": re.compile(r"\bDESIGN\.md\b"),
    "the style notes outside the repository": re.compile(r"\bSTYLE\.md\b"),
    # Source files were numbered 000-004; a random seed is never written with leading zeros.
    "a source cited by its file number": re.compile(r"(?<![a-z])seeds?[ _]0\d\d", re.I),
    "a source cited as a seed": re.compile(r"\bsource:\s*seeds?\b", re.I),
}


def offences(text: str) -> list[tuple[int, str, str]]:
    """(line number, what is forbidden, the line) for each forbidden form in `text`."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for what, pattern in FORBIDDEN.items():
            if pattern.search(line):
                found.append((number, what, line.strip()))
    return found


def tracked_text_files() -> list[str]:
    """The repository's tracked *.py, *.md, *.yaml, *.yml and *.toml files."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: no list of tracked files to scan")
    return sorted(
        name
        for name in listed.split("\0")
        if Path(name).suffix in SUFFIXES and name != SELF and (ROOT / name).is_file()
    )


@pytest.mark.parametrize(
    "text",
    [
        "Source: ../shared/seeds/002 (Tijms).",
        "the values f_N(0) quoted by ../shared/seeds/002",
        "see /work/shared/DESIGN.md",
        "the layers of DESIGN.md",
        "as STYLE.md asks",
        "read seeds/003",
        "Tijms's stopping games (seed 002)",
        "published numbers of seeds 002 and 003",
        "as in seeds 000-004",
        "Seed 002's solitaire numbers",
        "def test_seed_001_thresholds():",
        "source: seed",
    ],
)
def test_citations_by_path_or_file_number_are_caught(text):
    assert offences(text), text


@pytest.mark.parametrize(
    "text",
    [
        "env.reset(seed=0)",
        "seeds: [0, 1, 2]",
        "mean over seeds 0, 1 and 2",
        "python -m training.run configs/pig/ppo.yaml --seed 0",
        "Q-learning, 3 seeds",
        "the seed takes effect at the next reset",
        "each seed's evaluation episodes",
        "seed 0 came out at -1.9e-12; seed 42 too",
        "Tijms (2012) reports 0.7679",
        "[the report](../training/report.md)",
        "docs/architecture.md",
    ],
)
def test_random_seeds_and_links_inside_the_repository_pass(text):
    assert offences(text) == []


def test_no_tracked_file_cites_a_source_by_path_or_file_number():
    files = tracked_text_files()
    assert "README.md" in files and "dice_envs/games/pig.py" in files
    found = [
        f"{name}:{number}: {what}: {line}"
        for name in files
        for number, what, line in offences((ROOT / name).read_text(encoding="utf-8"))
    ]
    assert not found, "cite authors, title, venue and year instead:\n" + "\n".join(found)

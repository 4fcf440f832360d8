"""Solve every game and write the repository's docs from it (the maintainer's `make solve`).

Every registered game solved, the source documents' heuristics scored exactly, the optimal
policies drawn:

    python -m docs.tools.solve [--out docs]

Writes PNG plots in OUT/images/ and the "game" section of each page in OUT/games/; with the
repository's own docs folder (the default) also the "games" table of README.md and
docs/index.md and the "solutions" section of docs/results/solutions.md (the optimum of every
game, the heuristics scored, the list of pages, exploitability, where the gap is lost).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from dice_envs import env_ids as registry_ids
from docs.tools.analysis import exploitability_section, gap_decomposition_section
from docs.tools.common import D20, PIG, SIMULTANEOUS_HOG, SUM_AVOID, TEN_THOUSAND
from docs.tools.game_pages import game_page, write_page_section
from docs.tools.overview import README_DOCS, games_table, overview_sections, pages_section
from docs.tools.pig_family import pig_family_section, plot_pig
from docs.tools.readme import (
    DOCS,
    HOME,
    MKDOCS,
    README,
    SOLUTIONS,
    check_markers,
    check_yaml_markers,
    games_nav,
    rebase_links,
    replace_marked_section,
    replace_yaml_section,
)
from docs.tools.simultaneous_hog import simultaneous_hog_section
from docs.tools.single_agent import D20_IMAGES, plot_d20, plot_sum_avoid
from docs.tools.stopping import chow_robbins_section, die_and_cards_section
from docs.tools.ten_thousand import ten_thousand_section
from docs.tools.ten_thousand_race import game_page_section as race_section
from docs.tools.yahtzee import YAHTZEE, yahtzee_sections

PIG_FAMILY = (
    "dice_envs/PigSolitaire-v0", "dice_envs/TwoDicePig-v0", "dice_envs/TwoDicePigSolitaire-v0",
    "dice_envs/Hog-v0", "dice_envs/HogSolitaire-v0",
)  # fmt: skip


def per_game_sections(images: Path, docs: Path) -> list[tuple[str, str, list[str]]]:
    """(heading, text, the ids whose pages show it), drawing the figures into `images`."""
    plot_d20(images)
    return [
        ("Sum-avoid thresholds", plot_sum_avoid(images), [SUM_AVOID]),
        ("D20 rounds: the optimal policy", D20_IMAGES, [D20]),
        ("Pig: win probabilities", plot_pig(images), [PIG]),
        ("The Pig family: alone and raced", pig_family_section(images), [PIG, *PIG_FAMILY]),
        (
            "Ten Thousand: restricted games (the paper's Table 4)",
            ten_thousand_section(images, docs),
            [TEN_THOUSAND],
        ),
        (
            "Tijms's die and card games",
            die_and_cards_section(images),
            ["dice_envs/DieStopping-v0", "dice_envs/RedBlackCards-v0"],
        ),
        ("Chow–Robbins", chow_robbins_section(images), ["dice_envs/ChowRobbins-v0"]),
        (
            "Simultaneous Hog: the television game's equilibrium",
            simultaneous_hog_section(images),
            [SIMULTANEOUS_HOG],
        ),
        *[(heading, text, [YAHTZEE]) for heading, text in yahtzee_sections(images)],
        ("The race to 10,000, solved", race_section(), ["dice_envs/TenThousandDuel-v0"]),
    ]


def solutions_text(overview: list[str], closing: list[str]) -> str:
    """The solutions page's section: the overview and the closing sections, with the list of
    the games' pages between them (each game's own sections are on its page); its links are
    relative to the repository's root, as the README's are."""
    text = "\n\n".join([*overview, pages_section(), *closing])
    return text.replace("](images/", f"]({README_DOCS}/images/")


def check_repository_pages(
    readme: Path = README, home: Path = HOME, solutions_page: Path = SOLUTIONS
) -> None:
    """Refuse (ValueError) unless every page `write_repository_pages` writes has its markers."""
    for path, name in ((readme, "games"), (home, "games"), (solutions_page, "solutions")):
        check_markers(path, name)
    check_yaml_markers(MKDOCS, "games")


def write_repository_pages(
    games: str,
    solutions: str,
    readme: Path = README,
    home: Path = HOME,
    solutions_page: Path = SOLUTIONS,
) -> None:
    """The games table into the README and the home page, the solutions into their page;
    `games` and `solutions` link relative to the README's folder, and each page gets its
    links relative to its own folder. Nothing is written unless every page has its markers."""
    check_repository_pages(readme, home, solutions_page)
    replace_marked_section(readme, "games", games)
    replace_marked_section(home, "games", rebase_links(games, readme.parent, home.parent))
    replace_marked_section(
        solutions_page, "solutions", rebase_links(solutions, readme.parent, solutions_page.parent)
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DOCS, help="the docs folder (default: docs)")
    args = parser.parse_args(argv)
    to_repository = args.out.resolve() == DOCS
    if to_repository:
        check_repository_pages()  # before the solves, not after
    images = args.out / "images"
    images.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    overview = overview_sections()
    per_game = per_game_sections(images, args.out)
    closing = [
        "## Two players: how exploitable are the named policies?\n\n" + exploitability_section(),
        "## Where a policy loses its gap\n\n" + gap_decomposition_section(images),
    ]
    solutions = solutions_text(overview, closing)
    print(solutions)
    for env_id in registry_ids():
        shown = [f"## {h}\n\n{text}" for h, text, ids in per_game if env_id in ids]
        write_page_section(env_id, "game", game_page(env_id, shown), args.out)
    if to_repository:
        write_repository_pages(games_table(), solutions)
        replace_yaml_section(MKDOCS, "games", games_nav(registry_ids()))
        written = f"{README.name}, {HOME.name}, {SOLUTIONS.relative_to(DOCS)} and the site's nav"
    else:
        written = "no README or site page (--out is not the repository's docs)"
    print(
        f"plots in {images}/, pages in {args.out / 'games'}/, {written} "
        f"({time.perf_counter() - start:.1f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

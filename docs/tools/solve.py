"""Solve every game and write the repository's docs from it (the maintainer's `make solve`).

Every registered game solved, the source documents' heuristics scored exactly, the optimal
policies drawn:

    python -m docs.tools.solve [--out docs]

Writes OUT/demo_results.md, PNG plots in OUT/images/, and the "game" section of each page in
OUT/games/; with the repository's own docs folder (the default) also the README's "games" and
"demo" sections.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from baselines.game_pages import game_page, write_page_section
from dice_envs import env_ids as registry_ids
from docs.tools.analysis import exploitability_section, gap_decomposition_section
from docs.tools.common import D20, PIG, SIMULTANEOUS_HOG, SUM_AVOID, TEN_THOUSAND
from docs.tools.overview import README_DOCS, games_table, overview_sections, pages_section
from docs.tools.pig_family import pig_family_section, plot_pig
from docs.tools.readme import DOCS, replace_readme_section
from docs.tools.simultaneous_hog import simultaneous_hog_section
from docs.tools.single_agent import D20_IMAGES, plot_d20, plot_sum_avoid
from docs.tools.stopping import chow_robbins_section, die_and_cards_section
from docs.tools.ten_thousand import ten_thousand_section

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
    ]


def write_readme(overview: list[str], closing: list[str]) -> None:
    """The README keeps the overview and the closing sections; each game's own sections are
    on its page. Its image links point into docs/, one folder down."""
    replace_readme_section("games", games_table())
    readme = "\n\n".join([*overview, pages_section(), *closing])
    readme = readme.replace("](images/", f"]({README_DOCS}/images/")
    replace_readme_section("demo", readme.replace("\n## ", "\n### ").replace("## ", "### ", 1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DOCS, help="the docs folder (default: docs)")
    args = parser.parse_args(argv)
    images = args.out / "images"
    images.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    overview = overview_sections()
    per_game = per_game_sections(images, args.out)
    closing = [
        "## Two players: how exploitable are the named policies?\n\n" + exploitability_section(),
        "## Where a policy loses its gap\n\n" + gap_decomposition_section(images),
    ]
    sections = overview + [f"## {h}\n\n{text}" for h, text, _ in per_game] + closing
    report = "\n\n".join(sections) + "\n"
    print(report)
    (args.out / "demo_results.md").write_text(report)
    for env_id in registry_ids():
        shown = [f"## {h}\n\n{text}" for h, text, ids in per_game if env_id in ids]
        write_page_section(env_id, "game", game_page(env_id, shown), args.out)
    if args.out.resolve() == DOCS:
        write_readme(overview, closing)
    print(
        f"plots in {images}/, tables in {args.out / 'demo_results.md'} "
        f"({time.perf_counter() - start:.1f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

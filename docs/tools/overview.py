"""The overview: the games table (README and home page), the list of game pages and the
optimum and named policies of every game (the solutions page)."""

from __future__ import annotations

from pathlib import Path

import baselines
from dice_envs import GAMES
from dice_envs import env_ids as registry_ids
from docs.tools.game_pages import heuristic_table, markdown_table, optimum_table, page_path

# The docs folder as the README links it (relative to the repository's root); the writers
# rebase the links for each page they write.
README_DOCS = Path("docs")


def games_table() -> str:
    """The games table: every id (linking its page), what it is, its optimum at the
    defaults."""
    rows = [
        [
            f"[`{env_id}`]({page_path(env_id, README_DOCS)})",
            GAMES[env_id].summary,
            f"{baselines.solve(env_id).value:.6f}",
        ]
        for env_id in registry_ids()
    ]
    return markdown_table(["id", "game", "optimum at the defaults"], rows)


def overview_sections() -> list[str]:
    """The optimum of every id at its defaults, and the named policies scored exactly."""
    return [
        "## Optimal values at the default arguments\n\n"
        "Time: the solve (a generic solve's includes building the tables; a specialised one's"
        " does not, and its tables are built only to measure the residual, up to "
        f"{baselines.TABLE_ROWS_LIMIT:,} outcome rows; Simultaneous Hog's would have more, so"
        " it has neither the generic solve nor the residual here).\n\n" + optimum_table(),
        "## The named policies, evaluated exactly\n\n" + heuristic_table(),
    ]


def pages_section() -> str:
    """The list of the games' pages."""
    pages = "\n".join(
        f"- [{env_id.split('/')[-1]}]({page_path(env_id, README_DOCS)}): {GAMES[env_id].summary}"
        for env_id in registry_ids()
    )
    return (
        "## Each game's page\n\nRules, spaces, optimum, heuristics, pictures and "
        f"training results, one page per game:\n\n{pages}"
    )

"""One Markdown page per game, `<docs>/games/<game>.md` in a folder the caller names: its
rules, spaces, optimum, heuristics and pictures (the "game" section) and its training results
(written by the training report), each between markers that the command owning it rewrites.
The repository's own pages are written by the maintainer's tools (`make solve`, `make train`)."""

from __future__ import annotations

import functools
import json
import textwrap
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

import baselines
from dice_envs import GAMES, make_model
from dice_envs import env_ids as registry_ids
from dice_envs.policies import named_policy
from dice_envs.registration import game_slug

# The sections of a page, in order, each with the command that writes it.
SECTIONS = {
    "game": "`write_game_page(env_id, docs)` (`make solve` for the repository's pages)",
    "training-quick": "`python -m docs.tools.training_report --budget quick`",
    "training-full": "`python -m docs.tools.training_report --budget full`",
}


def replace_section(name: str, text: str, path: Path) -> bool:
    """Put `text` between `<!-- name:start -->` and `<!-- name:end -->` in the file at `path`;
    False (nothing written) if the file or the markers are absent."""
    path = Path(path)
    if not path.exists():
        return False
    content = path.read_text()
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    if start not in content or end not in content:
        return False
    head, rest = content.split(start, 1)
    _, tail = rest.split(end, 1)
    path.write_text(f"{head}{start}\n{text.strip()}\n{end}{tail}")
    return True


def page_path(env_id: str, docs: Path) -> Path:
    """The game's page under `docs` (the folder the caller names): `docs`/games/<game>.md."""
    return Path(docs) / "games" / f"{game_slug(env_id)}.md"


def write_page_section(env_id: str, name: str, text: str, docs: Path) -> Path:
    """Rewrite section `name` of the game's page, creating the page with all its sections'
    markers first if it does not exist."""
    if name not in SECTIONS:
        raise ValueError(f"name must be one of {list(SECTIONS)}, got {name!r}")
    path = page_path(env_id, docs)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        title = env_id.split("/")[-1]
        blocks = [
            f"<!-- {key}:start -->\nNot written yet: run {owner}.\n<!-- {key}:end -->"
            for key, owner in SECTIONS.items()
        ]
        path.write_text(
            f"# {title}\n\n<!-- Generated: each part below is rewritten by the command that "
            f"owns it; edit the code, not this page. -->\n\n" + "\n\n".join(blocks) + "\n"
        )
    replace_section(name, text, path)
    return path


def rules_text(env_id: str) -> str:
    """The env's own docstring (Gymnasium style: Description, spaces, rewards, ...), with its
    headings one level down, and the spaces of the env at its defaults."""
    env = gym.make(env_id).unwrapped
    doc = env.__doc__ or ""
    first, _, rest = doc.partition("\n")
    body = textwrap.dedent(rest).replace("\n## ", "\n### ").strip()
    return (
        f"{first.strip()}\n\n{body}\n\n"
        f"At the defaults: `gym.make({env_id!r})` has observation space "
        f"`{env.observation_space}` and action space `{env.action_space}`."
    )


def markdown_table(header: list[str], rows: list[list[object]]) -> str:
    def cell(value: object) -> str:
        return f"{value:.6g}" if isinstance(value, float) else str(value)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def optimum_table(env_ids=None, *, with_id: bool = True) -> str:
    """Every id at its defaults by each solver (not the generic one where a specialised solver
    says the tables would exceed `TABLE_ROWS_LIMIT` rows). "time" is the solve; a generic
    solve's includes building the tables, a specialised one's does not ("tables": built to
    measure its residual). `with_id=False` leaves out the id column (a game's own page)."""
    rows = []
    for env_id in registry_ids() if env_ids is None else env_ids:
        entry = GAMES[env_id]
        structured = entry.hook("structure_solver") is not None
        if not entry.tables or structured and entry.tables_refused({}) is not None:
            rows.append(_structure_row(env_id, {}))
            continue
        methods = ["generic"] + (["specialised"] if entry.solver is not None else [])
        rows_of = entry.hook("solver_rows")
        if rows_of is not None and rows_of(make_model(env_id)) > baselines.TABLE_ROWS_LIMIT:
            methods = ["specialised"]  # the generic solve's tables would not fit the demo
        for method in methods:
            solution = baselines.solve(env_id, method=method)
            residual = solution.bellman_residual
            measured = np.isfinite(residual)
            rows.append(
                [
                    f"`{env_id}`",
                    repr(make_model(env_id)),
                    solution.num_states,
                    f"{solution.value:.6f}",
                    solution.method,
                    f"{solution.seconds * 1000:.1f} ms",
                    f"{residual:.1e}" if measured else "not measured",
                    f"{solution.table_seconds * 1000:.1f} ms" if measured else "not built",
                ]
            )
    header = [
        "id",
        "game (defaults)",
        "states",
        "optimal value",
        "solver",
        "time",
        "residual",
        "tables",
    ]
    return markdown_table(*_without_id(header, rows, with_id))


def _structure_row(env_id: str, kwargs: dict) -> list[object]:
    """An `optimum_table` row of a game without tables: its structure-aware solve (states:
    the reachable turn-start states; no tables, so no residual)."""
    solution = baselines.solve(env_id, **kwargs)
    return [
        f"`{env_id}`",
        repr(make_model(env_id, **kwargs)),
        getattr(solution, "num_states", "not counted"),
        f"{solution.value:.6f}",
        "structure-aware",
        f"{solution.seconds * 1000:.1f} ms",
        "not measured",
        "none (too large)",
    ]


def structure_optimum_table(env_id: str) -> str:
    """The optima of a game without tables at its registered `page_variants` (its defaults if
    none), each solved by its structure-aware solver when the table is written."""
    rows = []
    for kwargs in GAMES[env_id].page_variants or [{}]:
        solution = baselines.solve(env_id, **kwargs)
        rows.append(
            [
                ", ".join(f"{k}={v!r}" for k, v in kwargs.items()) or "defaults",
                f"{solution.value:.6f}",
                f"{solution.num_states:,}",
                f"{solution.seconds:.1f} s",
            ]
        )
    header = ["arguments", "optimal expected score", "turn-start states", "solve time"]
    return markdown_table(header, rows)


def _without_id(header: list[str], rows: list[list[object]], with_id: bool):
    """The table as given, or without its first column (the id) for a game's own page."""
    if with_id:
        return header, rows
    return header[1:], [row[1:] for row in rows]


@functools.cache
def _evaluation(env_id: str, name: str, kwargs_json: str) -> Any:
    kwargs = json.loads(kwargs_json)
    return baselines.evaluate(named_policy(env_id, name, **kwargs), env_id, **kwargs)


def named_policy_evaluation(env_id: str, name: str, **kwargs: Any) -> Any:
    """`baselines.evaluate` of the game's named policy `name` at the env's keyword arguments,
    kept for the rest of the process: Yahtzee's full-game evaluation takes minutes, and its
    page and the solutions page both show it."""
    return _evaluation(env_id, name, json.dumps(kwargs, sort_keys=True))


def heuristic_table(env_ids=None, *, with_id: bool = True) -> str:
    """Every named policy of each id scored exactly at the id's defaults."""
    rows = []
    for env_id in registry_ids() if env_ids is None else env_ids:
        for name in GAMES[env_id].policies:
            try:
                score = named_policy_evaluation(env_id, name)
            except ValueError:  # tables refused and no structure-aware evaluator: say so
                shown = "not evaluated (no tables at the defaults, no evaluator without them)"
                rows.append([f"`{env_id}`", name, shown, "", "", "", ""])
                continue
            rows.append(
                [
                    f"`{env_id}`",
                    name,
                    f"{score.value:.4f}",
                    f"{score.optimal_value:.4f}",
                    f"{score.gap:.4f}",
                    f"{100 * score.relative_gap:.2f}%",
                    f"{100 * score.agreement:.1f}%",
                ]
            )
    header = ["id", "policy", "value", "optimum", "gap", "relative gap", "agreement"]
    return markdown_table(*_without_id(header, rows, with_id))


def references_text(env_id: str) -> str:
    """The game's references as a Markdown list (or a line saying it has none)."""
    references = GAMES[env_id].references
    if not references:
        return "No references registered."
    return "\n".join(f"- {reference}" for reference in references)


def summary_line(env_id: str) -> str:
    """The page's opening line: the id and the registry's one-line summary, as a sentence."""
    summary = GAMES[env_id].summary.strip().rstrip(".")
    return f"`{env_id}`: {summary[:1].upper()}{summary[1:]}." if summary else f"`{env_id}`."


def game_page(env_id: str, sections: list[str] | tuple[str, ...] = ()) -> str:
    """A game's page: what it is, its rules and spaces, its optimum, its named policies
    scored exactly, then `sections` (Markdown, image links relative to the docs folder,
    rewritten for the page one folder down), and its references last."""
    entry = GAMES[env_id]
    if not entry.tables:
        return _structure_page(env_id, sections)
    policies = (
        heuristic_table([env_id], with_id=False)
        if entry.policies
        else "No named policies registered."
    )
    parts = [
        summary_line(env_id),
        "## Rules and spaces\n\n" + rules_text(env_id),
        "## The optimum at the default arguments\n\n" + optimum_table([env_id], with_id=False),
        "## Named policies, evaluated exactly\n\n" + policies,
        *sections,
        "## References\n\n" + references_text(env_id),
    ]
    return "\n\n".join(parts).replace("](images/", "](../images/")


# What the structure-aware solver of a game without tables computes, in a phrase.
GENERIC_SOLVE = "gives the optimum"
STRUCTURE_SOLVES = {
    "dice_envs/Yahtzee-v0": "(backward induction over the turn-start states, each turn solved "
    "inside) gives the optimal expected final score",
    "dice_envs/TenThousandDuel-v0": "(the pairs of banked scores in decreasing order of their "
    "sum, each pair's two-cycle by policy iteration, each turn by backward induction over the "
    "turn total) gives the best response to the opponent",
}


def _structure_page(env_id: str, sections: list[str] | tuple[str, ...]) -> str:
    """The page of a game without tables: what it is, its rules and spaces, its optima (solved
    when the page is written), `sections`, its references; nothing read from tables."""
    parts = [
        summary_line(env_id),
        "## Rules and spaces\n\n" + rules_text(env_id),
        "## The optimum\n\n"
        "The game is too large for tables ([architecture](../architecture.md)): its "
        f"structure-aware solver {STRUCTURE_SOLVES.get(env_id, GENERIC_SOLVE)}, solved when "
        "this page was written; the time is that solve's, in the process that wrote the "
        "page.\n\n" + structure_optimum_table(env_id),
        "## Named policies, evaluated exactly\n\n" + _structure_policies_text(env_id),
        *sections,
        "## References\n\n" + references_text(env_id),
    ]
    return "\n\n".join(parts).replace("](images/", "](../images/")


def _structure_policies_text(env_id: str) -> str:
    """The named policies of a game without tables, scored by its exact evaluation at the
    defaults (on Yahtzee the full game: minutes per policy)."""
    if not GAMES[env_id].policies:
        return "No named policies registered."
    return (
        "Each scored exactly at the defaults by `baselines.evaluate` (the structure-aware "
        "evaluation: the policy asked for every decision state). Agreement: the share of "
        "the optimal policy's expected decisions where the policy plays an optimal action."
        "\n\n" + heuristic_table([env_id], with_id=False)
    )


def write_game_page(env_id: str, docs: Path, sections: list[str] | tuple[str, ...] = ()) -> Path:
    """Write the game's section of its page, `docs`/games/<game>.md (`docs`: the folder the
    caller names)."""
    return write_page_section(env_id, "game", game_page(env_id, sections), docs)

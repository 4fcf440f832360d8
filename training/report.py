"""The report of a budget's runs: one results table and one gap figure per game, from the run
store, for exactly the runs that the configs and the budget plan.

    dice-envs report [--budget quick] [--configs configs] [--runs runs]
                     [--out dice-envs-report/<budget>] [--games pig ...]

Ad-hoc runs (another seed, an edited config) live in the same store but never enter the
report: it looks up each planned run by its identity and refuses to build while one is
missing. Everything goes under `--out`: `report.md` and the figures `<game>.png`; nothing else
is written. The sweep writes this report when it ends (unless `--no-report`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, Protocol

import matplotlib.pyplot as plt
import numpy as np

from training.evaluation import game_arguments
from training.runs import (
    atomic_write_json,
    planned_runs,
    read_finished,
    read_json,
    run_dir,
    run_identity,
)

# The relative-gap axis is symlog, linear below this (in %), so that a gap of 0 is drawn at 0.
GAP_LINEAR_BELOW_PERCENT = 1e-2
RESULTS_HEADER = [
    "game", "agent", "optimal value", "agent value", "gap", "relative gap", "agreement", "steps",
]  # fmt: skip


class ReportError(RuntimeError):
    """The report can not be built from the store (a planned run is missing)."""


def default_out(budget: str) -> Path:
    """Where a report goes when no `--out` is given: a folder under the current directory."""
    return Path("dice-envs-report") / budget


def spread(values) -> str:
    """Mean ± standard deviation over seeds; the value alone for one seed."""
    values = np.asarray(values, dtype=float)
    if len(values) == 1:
        return f"{values[0]:.4g}"
    return f"{values.mean():.4g} ± {values.std(ddof=1):.2g}"


def kwargs_text(kwargs: dict) -> str:
    """A game's arguments as `goal=30, opponent=hold-at-20`, or `defaults`."""
    return ", ".join(f"{k}={v}" for k, v in kwargs.items()) or "defaults"


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def agent_label(path: Path, result: dict) -> str:
    """The agent's name; the config's name too when it is not just the algorithm."""
    name = result["agent"]
    return name if path.stem == result["algo"] else f"{name} ({path.stem})"


def game_title(config: dict[str, Any]) -> str:
    """The env id and every argument the agent trained with, as a figure title."""
    return f"{config['env_id'].split('/')[-1]} ({kwargs_text(config['env_kwargs'])})"


class RunSource(Protocol):
    """Runs kept elsewhere than in a run store, as the repository's archive of runs keeps them."""

    def find(
        self, config_path: Path, config: dict[str, Any], seed: int
    ) -> tuple[Path, dict[str, Any] | None]:
        """The folder of the run of `config` (read from `config_path`) with `seed`, and its
        result (None if the run is not there)."""
        ...


def collect(
    configs, budget: str, runs: str | os.PathLike | RunSource, games=None
) -> dict[Path, dict[str, Any]]:
    """Per config path: its resolved config and the results of its planned seeds, in order,
    each with its `curve` and its run's `directory`. `runs` is a run store (each run found by
    the hash of its identity, so made by this very code) or a `RunSource`."""
    groups: dict[Path, dict[str, Any]] = {}
    missing = []
    planned = planned_runs(configs, budget, games)
    if not planned:
        raise ReportError(
            f"no config in {configs} (of {games or 'any game'}) has a `{budget}` budget"
        )
    for path, config, seed in planned:
        group = groups.setdefault(path, {"config": config, "results": []})
        if isinstance(runs, str | os.PathLike):
            directory = run_dir(runs, config, seed)
            result = read_finished(directory, run_identity(config, seed))
        else:
            directory, result = runs.find(path, config, seed)
        if result is None:
            missing.append(f"{path} seed {seed}")
            continue
        result["curve"] = json.loads((directory / "curve.json").read_text())
        result["directory"] = str(directory)
        group["results"].append(result)
    if missing:
        raise ReportError(
            f"{len(missing)} planned runs are not finished in {runs} (first: {missing[0]}); "
            f"run `python -m training.sweep --budget {budget}` first"
        )
    return groups


def score_row(where: str, label: str, results: list[dict], prefix: str = "") -> list[str]:
    """A row of the results table from the seeds' `<prefix>value`, `<prefix>gap`, ..."""
    return [
        where,
        label,
        f"{results[0]['optimal_value']:.6g}",
        spread([r[f"{prefix}value"] for r in results]),
        spread([r[f"{prefix}gap"] for r in results]),
        spread([100 * r[f"{prefix}relative_gap"] for r in results]) + " %",
        spread([100 * r[f"{prefix}agreement"] for r in results]) + " %",
        f"{int(np.mean([r['steps'] for r in results])):,}",
    ]


def results_table(groups: dict[Path, dict[str, Any]]) -> str:
    """Per config the exact scores of its final greedy policy (and of the stochastic policy
    PPO plays, where scored), mean ± standard deviation over seeds."""
    rows = []
    for path, group in groups.items():
        config, results = group["config"], group["results"]
        where = f"{path.parent.name} ({kwargs_text(config['env_kwargs'])})"
        label = f"{agent_label(path, results[0])}, {len(results)} seeds"
        rows.append(score_row(where, label, results))
        if "stochastic_value" in results[0]:
            rows.append(score_row(where, f"{label}, stochastic policy", results, "stochastic_"))
    return markdown_table(RESULTS_HEADER, rows)


def figure_groups(groups: dict[Path, dict[str, Any]]) -> dict[str, dict[Path, list[dict]]]:
    """The configs drawn together, by figure name stem: one figure per game and env arguments
    (a gap compares only within one game); a game trained with one set of arguments keeps
    the plain name <game>."""
    settings: dict[str, set[str]] = defaultdict(set)
    for path, group in groups.items():
        settings[path.parent.name].add(json.dumps(group["config"]["env_kwargs"], sort_keys=True))
    by_game: dict[str, dict[Path, list[dict]]] = defaultdict(dict)
    for path, group in groups.items():
        kwargs = group["config"]["env_kwargs"]
        name = path.parent.name
        if len(settings[name]) > 1:
            # By the game's own arguments; by all of them (the opponent too) where two
            # settings of one game differ only in those.
            own = {json.dumps(game_arguments(json.loads(k)), sort_keys=True)
                   for k in settings[name]}  # fmt: skip
            short = len(own) == len(settings[name])
            name = slug(name, game_arguments(kwargs) if short else kwargs)
        by_game[name][path] = group["results"]
    return by_game


def slug(name: str, kwargs: dict[str, Any]) -> str:
    """A figure name stem: the game's name and its arguments, `pig_goal30`."""
    return "_".join([name, *(f"{k}{v}" for k, v in kwargs.items())])


def _relative_gap(point: dict[str, Any]) -> float:
    """A curve point's exact relative gap, or its sampled one where it has no exact one (a
    game without tables is evaluated exactly at the end of its run only)."""
    return point["relative_gap"] if "relative_gap" in point else point["sampled_relative_gap"]


def plot_gaps(title: str, budget: str, series: dict[str, list[dict]], path: Path) -> None:
    """The relative gap against steps, per agent the median over seeds with a min..max band."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, results in series.items():
        length = min(len(r["curve"]) for r in results)
        steps = np.array([p["steps"] for p in results[0]["curve"][:length]])
        gaps = 100 * np.array([[_relative_gap(p) for p in r["curve"][:length]] for r in results])
        median = f"{label}: median of {len(results)} seeds"
        line = ax.plot(steps, np.median(gaps, axis=0), marker="o", ms=3, label=median)[0]
        ax.fill_between(
            steps, gaps.min(axis=0), gaps.max(axis=0), alpha=0.2, color=line.get_color()
        )
    sampled = any("relative_gap" not in p for rs in series.values() for r in rs for p in r["curve"])
    ax.set_yscale("symlog", linthresh=GAP_LINEAR_BELOW_PERCENT)
    ax.set(xlabel="environment steps", ylabel="relative gap to the optimum (%)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    note = "; sampled between exact evaluations" if sampled else ", exact"
    ax.set_title(f"{title}, {budget} budget (band: min..max over seeds{note})", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def record_sweep(out: str | Path, record: dict[str, Any]) -> None:
    """Keep the wall time of a sweep that trained every one of its runs, by budget and games."""
    path = Path(out) / "sweep.json"
    records = read_json(path, {})
    records[f"{record['budget']}: {', '.join(record['games'])}"] = record
    atomic_write_json(path, dict(sorted(records.items())))


def build_report(configs="configs", budget="quick", runs="runs", out=None, games=None) -> str:
    """Write `out`/report.md and one gap figure per game, `out`/<game>.png; return the
    results table. Nothing is written outside `out` (default: `default_out(budget)`)."""
    out = default_out(budget) if out is None else Path(out)
    groups = collect(configs, budget, runs, games)
    out.mkdir(parents=True, exist_ok=True)
    figures = []
    for stem, paths in figure_groups(groups).items():
        title = game_title(groups[next(iter(paths))]["config"])
        series = {agent_label(path, results[0]): results for path, results in paths.items()}
        plot_gaps(title, budget, series, out / f"{stem}.png")
        figures.append(f"![{title}: relative gap against steps]({stem}.png)")
    table = results_table(groups)
    (out / "report.md").write_text(
        f"# Training report (`{budget}` budget)\n\nThe exact scores of each config's final "
        "greedy policy (and of the stochastic policy PPO plays, where scored), mean ± standard "
        f"deviation over seeds, from the run store `{runs}`.\n\n{table}\n\n"
        + "\n".join(figures)
        + "\n"
    )
    return table


def main(argv: list[str] | None = None, prog: str = "python -m training.report") -> int:
    parser = argparse.ArgumentParser(
        prog=prog,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--configs", default="configs")
    parser.add_argument("--runs", default="runs", help="the run store (default: runs)")
    parser.add_argument("--budget", default="quick", choices=("quick", "full"))
    parser.add_argument(
        "--out", default=None, help="where the report goes (default: dice-envs-report/<budget>)"
    )
    parser.add_argument("--games", nargs="+", default=None)
    args = parser.parse_args(argv)
    out = default_out(args.budget) if args.out is None else Path(args.out)
    try:  # what was asked for: the configs and games (their errors are the user's)
        planned_runs(args.configs, args.budget, args.games)
    except ValueError as error:  # a ConfigError too
        parser.error(str(error))
    try:
        print(build_report(args.configs, args.budget, args.runs, out, args.games))
    except ReportError as error:
        parser.error(str(error))
    print(f"report in {out}/", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

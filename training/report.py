"""The report: a Markdown table and PNG plots of exact gap against training steps, rebuilt
from saved runs.

    python -m training.report [--runs runs] [--budget quick] [--out docs/training]
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import baselines
from baselines.heuristics import HEURISTICS, heuristic
from baselines.readme import replace_section
from training.config import game_name

AGENT_NAMES = {"qlearning": "Q-learning", "ppo": "PPO"}


def _load_runs(root: Path, budget: str) -> dict[tuple[str, str], list[dict]]:
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for path in sorted((root / budget).glob("*/*/seed_*/result.json")):
        result = json.loads(path.read_text())
        result["curve"] = json.loads((path.parent / "curve.json").read_text())
        groups[(game_name(result["env_id"]), result["algo"])].append(result)
    return groups


def _spread(values) -> str:
    values = np.asarray(values, dtype=float)
    if len(values) == 1:
        return f"{values[0]:.4g}"
    return f"{values.mean():.4g} ± {values.std(ddof=1):.2g}"


def _kwargs_text(kwargs: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in kwargs.items()) or "defaults"


def build_report(runs: str | Path, budget: str = "quick", out: str | Path = "docs/training") -> str:
    """Write `out`/report.md and `out`/<game>.png from the runs of `budget`; return the table."""
    root, out = Path(runs), Path(out)
    out.mkdir(parents=True, exist_ok=True)
    groups = _load_runs(root, budget)
    games = sorted({game for game, _ in groups})
    header = [
        "game", "agent", "optimal value", "agent value", "gap", "relative gap", "agreement",
        "steps", "train time (s)", "steps/s", "Monte Carlo mean ± s.e.",
    ]  # fmt: skip
    rows = []
    for game in games:
        algos = sorted(algo for g, algo in groups if g == game)
        first = groups[(game, algos[0])][0]
        env_id, kwargs = first["env_id"], first["env_kwargs"]
        for algo in algos:
            results = groups[(game, algo)]
            name = results[0].get("agent", AGENT_NAMES.get(algo, algo))
            rows.append(
                [
                    f"{game} ({_kwargs_text(kwargs)})",
                    f"{name}, {len(results)} seeds",
                    f"{first['optimal_value']:.6g}",
                    _spread([r["value"] for r in results]),
                    _spread([r["gap"] for r in results]),
                    _spread([100 * r["relative_gap"] for r in results]) + " %",
                    _spread([100 * r["agreement"] for r in results]) + " %",
                    f"{int(np.mean([r['steps'] for r in results])):,}",
                    f"{np.mean([r['seconds'] for r in results]):.1f}",
                    f"{np.mean([r['steps_per_second'] for r in results]):,.0f}",
                    "; ".join(f"{r['mc_mean']:.4g} ± {r['mc_stderr']:.2g}" for r in results),
                ]
            )
        for policy_name in HEURISTICS.get(env_id, (None, None, []))[2]:
            score = baselines.evaluate(heuristic(env_id, policy_name, **kwargs), env_id, **kwargs)
            rows.append(
                [
                    f"{game} ({_kwargs_text(kwargs)})",
                    f"heuristic: {policy_name}",
                    f"{score.optimal_value:.6g}",
                    f"{score.value:.4g}",
                    f"{score.gap:.4g}",
                    f"{100 * score.relative_gap:.4g} %",
                    f"{100 * score.agreement:.4g} %",
                    "",
                    "",
                    "",
                    "",
                ]
            )
        _plot_game(game, {algo: groups[(game, algo)] for algo in algos}, out / f"{game}.png")
    table = "\n".join(
        ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        + ["| " + " | ".join(row) + " |" for row in rows]
    )
    plots = "\n".join(f"![{game}: relative gap against steps]({game}.png)" for game in games)
    (out / "report.md").write_text(
        f"# Training report ({budget} budget)\n\nValues are exact (every reachable observation's"
        " greedy action, evaluated by a sparse linear solve); mean ± standard deviation over"
        " seeds. The Monte Carlo column is each seed's mean return over its evaluation"
        " episodes, for comparison.\n\n" + table + "\n\n" + plots + "\n"
    )
    if out == Path("docs/training"):
        readme_plots = "\n".join(
            f"![{game}: relative gap against steps](docs/training/{game}.png)" for game in games
        )
        replace_section("training", table + "\n\n" + readme_plots)
    return table


def _plot_game(game: str, by_algo: dict[str, list[dict]], path: Path) -> None:
    fig, ax = plt.subplots(figsize=(7, 4))
    for algo, results in sorted(by_algo.items()):
        steps = np.array([p["steps"] for p in results[0]["curve"]])
        length = min(len(r["curve"]) for r in results)
        gaps = np.array([[p["relative_gap"] for p in r["curve"][:length]] for r in results])
        gaps = np.maximum(gaps, 1e-5)
        label = results[0].get("agent", AGENT_NAMES.get(algo, algo))
        line = ax.plot(steps[:length], np.median(gaps, axis=0), label=f"{label} (median)")[0]
        ax.fill_between(
            steps[:length], gaps.min(axis=0), gaps.max(axis=0), alpha=0.2, color=line.get_color()
        )
    ax.axhline(0.01, color="0.5", ls=":", lw=1, label="1 % gap")
    ax.set_yscale("log")
    ax.set(
        xlabel="environment steps",
        ylabel="relative gap to the optimum (exact)",
        title=f"{game}: band = min..max over seeds",
    )
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.report", description=__doc__)
    parser.add_argument("--runs", default="runs")
    parser.add_argument("--budget", default="quick", choices=("quick", "full"))
    parser.add_argument("--out", default="docs/training")
    args = parser.parse_args(argv)
    print(build_report(args.runs, args.budget, args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

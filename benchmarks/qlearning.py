"""Benchmark tabular Q-learning on one env copy against 512 copies of the native vector env.

    python -m benchmarks.qlearning [--games sum_avoid d20_rounds pig ten_thousand] [--out docs]

Each game's committed Q-learning config at the quick budget, seeds 0, 1 and 2, trained twice in
the same run into a temporary run store: `n_envs: 1` (the scalar learner, one env step and
one update at a time) and the config's own default (512 copies, one batched update per step
of the batch). Reported: training seconds (evaluations excluded), steps per second, and the
exact relative gap at the end, mean over the seeds. Writes OUT/bench_qlearning.json; with the
repository's own docs folder (the default) also the "training-bench" section of
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import copy
import json
import tempfile
from pathlib import Path

import numpy as np

from docs.tools.game_pages import markdown_table
from docs.tools.readme import BENCHMARKS, DOCS, ROOT, check_markers, replace_marked_section
from training.config import load_config
from training.train import run

CONFIGS = ROOT / "configs"
GAMES = ("sum_avoid", "d20_rounds", "pig", "ten_thousand")
SEEDS = (0, 1, 2)


def bench_qlearning(games: tuple[str, ...]) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as root:
        for game in games:
            config = load_config(CONFIGS / game / "qlearning.yaml")
            for n_envs in (1, config["hyperparams"]["n_envs"]):
                variant = copy.deepcopy(config)
                variant["hyperparams"]["n_envs"] = n_envs
                results = [run(variant, seed, root=root) for seed in SEEDS]
                seconds = [r["seconds"] for r in results]
                rows.append(
                    {
                        "game": game,
                        "n_envs": n_envs,
                        "steps": results[0]["steps"],
                        "seconds": float(np.mean(seconds)),
                        "steps_per_second": float(
                            np.mean([r["steps_per_second"] for r in results])
                        ),
                        "relative_gap": float(np.mean([r["relative_gap"] for r in results])),
                        "relative_gaps": [r["relative_gap"] for r in results],
                    }
                )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", nargs="+", default=list(GAMES))
    parser.add_argument("--out", type=Path, default=DOCS, help="the docs folder (default: docs)")
    args = parser.parse_args(argv)
    to_repository = args.out.resolve() == DOCS
    if to_repository:
        check_markers(BENCHMARKS, "training-bench")  # refused before the training, not after
    rows = bench_qlearning(tuple(args.games))
    scalar = {r["game"]: r for r in rows if r["n_envs"] == 1}
    table = [
        [
            r["game"],
            str(r["n_envs"]),
            f"{r['steps']:,}",
            f"{r['seconds']:.2f} s",
            f"{r['steps_per_second']:,.0f}",
            f"{scalar[r['game']]['seconds'] / r['seconds']:.1f}x",
            f"{r['relative_gap'] * 100:.3f} %",
            ", ".join(f"{g * 100:.3f}" for g in r["relative_gaps"]),
        ]
        for r in rows
    ]
    report = (
        "### Q-learning: one env copy against the native vector env (quick budget, seeds"
        f" {', '.join(map(str, SEEDS))}; training time without evaluations, mean over seeds)\n\n"
        + markdown_table(
            [
                "game",
                "copies",
                "steps",
                "training time",
                "steps/s",
                "speed-up",
                "relative gap (mean)",
                "per seed (%)",
            ],
            table,
        )
        + "\n"
    )
    print(report)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench_qlearning.json").write_text(json.dumps(rows, indent=1))
    if to_repository:
        replace_marked_section(BENCHMARKS, "training-bench", report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

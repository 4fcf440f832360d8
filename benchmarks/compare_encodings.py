"""Does PPO learn better from one-hot or normalised observations? Both, same budget and seeds.

    python -m benchmarks.compare_encodings [--budget quick] [--games pig ten_thousand] [--runs runs]

SB3 one-hot encodes a MultiDiscrete observation (one input per value of each component);
`obs_encoding: normalized` gives the network one number in [0, 1] per component instead. The
runs live in the run store like any other (the config's own encoding is the sweep's run, read
back if it is there); the table compares the exact final relative gaps.
"""

from __future__ import annotations

import argparse
import copy
import sys
from pathlib import Path

import numpy as np

from training.config import BUDGETS, ConfigError, load_config


def main(argv: list[str] | None = None) -> int:
    from training.backends import LocalBackend
    from training.sweep import sweep

    parser = argparse.ArgumentParser(prog="python -m benchmarks.compare_encodings")
    parser.add_argument("--budget", default="quick", choices=BUDGETS)
    parser.add_argument("--games", nargs="+", default=["pig", "ten_thousand"])
    parser.add_argument("--runs", default="runs")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    tasks = []
    try:
        for game in args.games:
            base = load_config(Path("configs") / game / "ppo.yaml", args.budget)
            for encoding in ("onehot", "normalized"):
                config = copy.deepcopy(base)
                config["hyperparams"]["obs_encoding"] = encoding
                label = Path(game) / f"ppo-{encoding}"
                tasks += [(label, config, seed) for seed in config["seeds"]]
    except ConfigError as error:
        parser.exit(2, f"error: {error}\n")
    try:
        results, failures, _ = sweep(tasks, args.runs, LocalBackend(args.workers))
    except KeyboardInterrupt:
        print("interrupted; run the same command again to resume", file=sys.stderr)
        return 130
    if failures:
        print("\n\n".join(failures), file=sys.stderr)
        return 1
    print("| game | encoding | relative gap, per seed | mean | steps/s |")
    print("|---|---|---|---|---|")
    for game in args.games:
        for encoding in ("onehot", "normalized"):
            label = f"ppo-{encoding}"
            chosen = [r for (path, _, _), r in zip(tasks, results, strict=True)
                      if path.parent.name == game and path.name == label]  # fmt: skip
            gaps = [100 * r["relative_gap"] for r in chosen]
            speed = np.mean([r["steps_per_second"] for r in chosen])
            per_seed = ", ".join(f"{gap:.2f} %" for gap in gaps)
            print(f"| {game} | {encoding} | {per_seed} | {np.mean(gaps):.2f} % | {speed:,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

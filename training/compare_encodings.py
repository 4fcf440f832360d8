"""Does PPO learn better from one-hot or normalised observations? Both, same budget and seeds.

    python -m training.compare_encodings [--budget quick] [--games pig ten_thousand] [--runs runs]

SB3 one-hot encodes a MultiDiscrete observation (one input per value of each component);
`obs_encoding: normalized` gives the network one number in [0, 1] per component instead. Runs
go to RUNS/encodings/<encoding>/...; the table compares the exact final relative gaps.
"""

from __future__ import annotations

import argparse
import copy
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from training.config import load_config


def _one(config: dict, seed: int, root: str) -> dict:
    from training.train import run

    return run(config, seed, root)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.compare_encodings")
    parser.add_argument("--budget", default="quick", choices=("quick", "full"))
    parser.add_argument("--games", nargs="+", default=["pig", "ten_thousand"])
    parser.add_argument("--runs", default="runs")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    jobs = []
    for game in args.games:
        base = load_config(Path("configs") / game / "ppo.yaml", args.budget)
        for encoding in ("onehot", "normalized"):
            config = copy.deepcopy(base)
            config["hyperparams"]["obs_encoding"] = encoding
            root = str(Path(args.runs) / "encodings" / encoding)
            jobs += [(game, encoding, config, seed, root) for seed in config["seeds"]]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(args.workers, mp_context=context) as pool:
        futures = [(g, e, pool.submit(_one, c, s, r)) for g, e, c, s, r in jobs]
        results = [(g, e, f.result()) for g, e, f in futures]
    print("| game | encoding | relative gap, per seed | mean | steps/s |")
    print("|---|---|---|---|---|")
    for game in args.games:
        for encoding in ("onehot", "normalized"):
            chosen = [r for g, e, r in results if g == game and e == encoding]
            gaps = [100 * r["relative_gap"] for r in chosen]
            speed = np.mean([r["steps_per_second"] for r in chosen])
            per_seed = ", ".join(f"{gap:.2f} %" for gap in gaps)
            print(f"| {game} | {encoding} | {per_seed} | {np.mean(gaps):.2f} % | {speed:,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

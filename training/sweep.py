"""The main job: every config in configs/, every seed of the budget, then the report.

    python -m training.sweep [--budget quick|full] [--workers 2] [--runs runs] [--out docs/training]

Runs go to `--runs`; a finished run is read back, a killed one resumes from its checkpoint, so
the sweep can be stopped and started again at any time. Two worker processes suit this
2-core machine (each trains with one torch thread).
"""

from __future__ import annotations

import argparse
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from tqdm import tqdm

from training.config import ConfigError, load_config
from training.report import build_report


def _work(path: str, budget: str, seed: int, runs: str) -> tuple[str, int, dict]:
    from training.train import run

    return path, seed, run(load_config(path, budget), seed, runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.sweep", description=__doc__)
    parser.add_argument("--budget", default="quick", choices=("quick", "full"))
    parser.add_argument("--configs", default="configs", help="folder of <game>/<algo>.yaml")
    parser.add_argument("--runs", default="runs")
    parser.add_argument("--out", default="docs/training", help="where the report goes")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    paths = sorted(Path(args.configs).glob("*/*.yaml"))
    tasks = []
    try:
        for path in paths:
            config = load_config(path, args.budget)
            tasks += [
                (str(path), seed, config["timesteps"], config["algo"]) for seed in config["seeds"]
            ]
    except ConfigError as error:
        parser.exit(2, f"error: {error}\n")
    # PPO runs first: they are the long ones, so the two workers finish together.
    tasks.sort(key=lambda task: (task[3] != "ppo", -task[2], task[0], task[1]))
    start = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(args.workers, mp_context=context) as pool:
        futures = [
            pool.submit(_work, path, args.budget, seed, args.runs) for path, seed, _, _ in tasks
        ]
        with tqdm(total=len(futures), desc=f"{args.budget} runs", unit="run") as bar:
            for future in as_completed(futures):
                path, seed, result = future.result()
                bar.set_postfix_str(f"{Path(path).parent.name}/{Path(path).stem} seed {seed}")
                bar.update()
    report = build_report(args.runs, args.budget, args.out)
    print(report)
    print(f"{len(tasks)} runs, {time.perf_counter() - start:.0f} s; report in {args.out}/")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

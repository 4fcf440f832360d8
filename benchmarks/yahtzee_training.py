"""Benchmark MaskablePPO's training throughput on Yahtzee: env steps per second of each PPO
config of configs/yahtzee/, in one run, against configs/yahtzee/ppo.yaml (the reference).

    python -m benchmarks.yahtzee_training [--steps 1000000] [--repeats 3] [--out docs]

Each config trains as its runs train (`training.ppo.PPOAgent`: the native vector env through
the SB3 adapter, the config's hyperparameters, its torch threads), seed 0, for at least
`--steps` env steps in whole rollouts after one untimed rollout (imports, first allocations);
the time is the training's own (`PPOAgent.training_seconds`: rollouts and updates, no
evaluation). Configs take turns over `--repeats`, the best rate of each kept. The target of
the Yahtzee agents issue: some config at least 4x the reference. `--out OUT` writes
OUT/bench_yahtzee_training.json and, for the repository's docs folder, the
"yahtzee-training-bench" section of docs/benchmarks.md (else OUT/bench_yahtzee_training.md).
Run it alone on the machine.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.output import write_results, writes_to_repository
from docs.tools.game_pages import markdown_table
from docs.tools.readme import BENCHMARKS, check_markers

CONFIGS = Path(__file__).resolve().parent.parent / "configs" / "yahtzee"
REFERENCE = "ppo.yaml"
THROUGHPUT_TARGET = 4.0  # times the reference config's steps per second


def ppo_configs(folder: Path = CONFIGS) -> list[Path]:
    """The PPO configs of Yahtzee, the reference first."""
    import yaml

    paths = sorted(
        p for p in folder.glob("*.yaml") if yaml.safe_load(p.read_text())["algo"] == "ppo"
    )
    return sorted(paths, key=lambda p: p.name != REFERENCE)


def training_rate(path: Path, steps: int) -> dict:
    """Steps per second of the config at `path` (its full budget's hyperparameters)."""
    from training.config import load_config
    from training.ppo import PPOAgent
    from training.streams import run_streams

    config = load_config(path, "full")
    params = config["hyperparams"]
    agent = PPOAgent(config, run_streams(0, params["n_envs"]), masked=True)
    rollout = params["n_envs"] * params["n_steps"]
    never = 1 << 62

    def nothing(*args) -> None:
        return None

    agent.learn(rollout, never, nothing)  # the first rollout, untimed
    start_steps, start_seconds = agent.step, agent.training_seconds
    agent.learn(start_steps + -(-steps // rollout) * rollout, never, nothing)
    seconds = agent.training_seconds - start_seconds
    return {
        "config": f"yahtzee/{path.name}",
        "n_envs": params["n_envs"],
        "n_steps": params["n_steps"],
        "batch_size": params["batch_size"],
        "n_epochs": params["n_epochs"],
        "net_arch": params.get("policy_kwargs", {}).get("net_arch"),
        "steps": agent.step - start_steps,
        "seconds": seconds,
        "steps_per_second": (agent.step - start_steps) / seconds,
    }


def measure(steps: int, repeats: int, paths: list[Path]) -> list[dict]:
    """Each config's best rate over `repeats` turns, with its ratio to the reference."""
    best: dict[Path, dict] = {}
    for _ in range(repeats):
        for path in paths:
            row = training_rate(path, steps)
            if path not in best or row["steps_per_second"] > best[path]["steps_per_second"]:
                best[path] = row
    reference = best[paths[0]]["steps_per_second"]
    return [{**row, "ratio": row["steps_per_second"] / reference} for row in best.values()]


def report_text(rows: list[dict], steps: int, repeats: int) -> str:
    """The "yahtzee-training-bench" section: a row per config, then the target."""
    table = markdown_table(
        ["config", "copies", "steps per rollout", "batch", "epochs", "network", "steps/s", "x"],
        [
            [
                f"`{r['config']}`",
                f"{r['n_envs']:,}",
                f"{r['n_steps']:,}",
                f"{r['batch_size']:,}",
                str(r["n_epochs"]),
                "x".join(map(str, r["net_arch"] or [])),
                f"{r['steps_per_second']:,.0f}",
                f"{r['ratio']:.2f}",
            ]
            for r in rows
        ],
    )
    best = max(rows, key=lambda r: r["ratio"])
    status = "met" if best["ratio"] >= THROUGHPUT_TARGET else "missed"
    return (
        f"### Yahtzee: MaskablePPO training throughput (each config as its runs train, at"
        f" least {steps:,} env steps after one untimed rollout, best of {repeats}, in one"
        " run)\n\n"
        + table
        + f"\n\nThe fastest, `{best['config']}`, trains {best['ratio']:.2f}x as many env steps"
        f" per second as `{rows[0]['config']}` (target: at least {THROUGHPUT_TARGET:.0f}x):"
        f" {status}.\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000, help="timed env steps per config")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=None, help="write the results here")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.repeats < 1:
        parser.error("--steps and --repeats must be at least 1")
    if writes_to_repository(args.out):
        check_markers(BENCHMARKS, "yahtzee-training-bench")  # refused before the measuring
    rows = measure(args.steps, args.repeats, ppo_configs())
    report = report_text(rows, args.steps, args.repeats)
    print(report)
    if args.out is not None:
        write_results(args.out, "bench_yahtzee_training", "yahtzee-training-bench", rows, report)
    return 0 if max(r["ratio"] for r in rows) >= THROUGHPUT_TARGET else 1


if __name__ == "__main__":
    raise SystemExit(main())

"""Hyperparameter search with Ray Tune, scored by the exact gap: a noise-free objective.

    python -m training.tune CONFIG [--samples 8] [--budget quick] [--seed 0] [--space FILE]
                                   [--workers 2] [--address ADDRESS] [--runs runs]

Each trial is one run of CONFIG with sampled hyperparameters, trained by `training.train.run`
into the same run store (so a trial that was run before is read back, not trained again), and
reports its exact relative gap at every evaluation point. ASHA stops the trials that trail at
each rung. The search space is a YAML mapping from a hyperparameter (dotted for nested keys,
such as `learning_rate.power`) to one of {uniform: [low, high]}, {loguniform: [low, high]},
{randint: [low, high]} (high excluded) or {choice: [a, b, ...]}; by default, DEFAULT_SPACES.
"""

from __future__ import annotations

import argparse
import copy
import importlib.util
import sys
from pathlib import Path
from typing import Any

import yaml

from training.config import BUDGETS, ConfigError, check_seed, resolve_config

DEFAULT_SPACES = {
    "qlearning": {
        "learning_rate.power": {"uniform": [0.55, 1.0]},
        "epsilon.end": {"uniform": [0.01, 0.3]},
    },
    "ppo": {
        "learning_rate": {"loguniform": [1.0e-4, 3.0e-3]},
        "ent_coef": {"loguniform": [1.0e-4, 5.0e-2]},
        "n_epochs": {"choice": [4, 10]},
        "gae_lambda": {"uniform": [0.8, 1.0]},
    },
}
SAMPLERS = ("uniform", "loguniform", "randint", "choice")


def read_raw(path: str | Path) -> dict[str, Any]:
    try:
        raw = yaml.safe_load(Path(path).read_text())
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a config must be a mapping")
    return raw


def with_params(raw: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    """`raw` with hyperparameters set at dotted paths (a number replaces a schedule)."""
    raw = copy.deepcopy(raw)
    for dotted, value in params.items():
        *parents, leaf = dotted.split(".")
        node = raw.setdefault("hyperparams", {})
        for key in parents:
            if not isinstance(node.get(key), dict):
                node[key] = {}
            node = node[key]
        node[leaf] = value
    return raw


def check_space(space: Any, raw: dict[str, Any], budget: str, source: str) -> dict[str, Any]:
    """Refuse a malformed space, and one whose corners make a config that does not resolve."""
    if not isinstance(space, dict) or not space:
        raise ConfigError(f"{source}: a search space must be a non-empty mapping")
    corners: list[dict[str, Any]] = [{}, {}]
    for key, spec in space.items():
        if not isinstance(spec, dict) or len(spec) != 1 or next(iter(spec)) not in SAMPLERS:
            raise ConfigError(f"{source}: {key} must be one of {{{', '.join(SAMPLERS)}: ...}}")
        kind, values = next(iter(spec.items()))
        if not isinstance(values, list) or not values:
            raise ConfigError(f"{source}: {key}.{kind} must be a non-empty list")
        if kind != "choice" and (len(values) != 2 or not values[0] < values[1]):
            raise ConfigError(f"{source}: {key}.{kind} must be [low, high] with low < high")
        low, high = (values[0], values[-1]) if kind != "randint" else (values[0], values[1] - 1)
        corners[0][key], corners[1][key] = low, high
    for corner in corners:
        resolve_config(with_params(raw, corner), budget, source=f"{source} (a corner)")
    return space


def tune_space(space: dict[str, Any]) -> dict[str, Any]:
    from ray import tune

    makers = {
        "uniform": lambda v: tune.uniform(*v),
        "loguniform": lambda v: tune.loguniform(*v),
        "randint": lambda v: tune.randint(*v),
        "choice": tune.choice,
    }
    return {
        key: makers[kind](values) for key, spec in space.items() for kind, values in spec.items()
    }


class TuneProgress:
    """Reports each exact evaluation to Tune (replaying the curve of a resumed run first)."""

    def __init__(self, directory: Path) -> None:
        self.directory, self.reported = directory, 0

    def start(self, steps: int, total: int) -> None:
        if steps > 0:
            from training.runs import read_json

            for point in read_json(self.directory / "curve.json", []):
                if point["steps"] <= steps:
                    self.evaluated(point)

    def steps(self, steps: int) -> None:
        pass

    def evaluated(self, point: dict[str, Any]) -> None:
        from ray import tune

        self.reported += 1
        tune.report({key: point[key] for key in ("relative_gap", "gap", "value", "steps")})


def trial(params: dict[str, Any], raw: dict[str, Any], budget: str, seed: int, root: str) -> None:
    """One Tune trial: the run of `raw` with `params`."""
    from training.runs import read_json, run_dir
    from training.train import run

    config = resolve_config(with_params(raw, params), budget, source="trial")
    directory = run_dir(root, config, seed)
    progress = TuneProgress(directory)
    run(config, seed, root, progress=progress)
    if progress.reported == 0:  # finished before: read back, so replay its curve
        for point in read_json(directory / "curve.json", []):
            progress.evaluated(point)


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        seed, raw, base, space = _checked_arguments(args)
    except ConfigError as error:
        parser.exit(2, f"error: {error}\n")
    grid = _fit(args, raw, base, space, seed)
    if grid is None:
        print("interrupted; finished trials stay in the run store: run again to reuse them",
              file=sys.stderr)  # fmt: skip
        return 130
    _print_trials(grid, space, base)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m training.tune",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("config", help="a YAML file such as configs/pig/qlearning.yaml")
    parser.add_argument("--samples", type=int, default=8, help="trials (default 8)")
    parser.add_argument("--budget", default="quick", choices=BUDGETS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--space", default=None, help="a YAML search space (default: built in)")
    parser.add_argument("--workers", type=int, default=2, help="CPUs of a local Ray")
    parser.add_argument("--address", default=None, help="a Ray cluster (default: start one)")
    parser.add_argument("--runs", default="runs", help="the run store (default: runs)")
    parser.add_argument("--grace", type=int, default=2, help="evaluations before ASHA may stop")
    return parser


def _checked_arguments(args: argparse.Namespace) -> tuple[int, dict, dict, dict]:
    """(seed, the raw config, its resolved budget, the checked search space), or ConfigError."""
    if args.samples < 1:
        raise ConfigError(f"--samples must be >= 1, got {args.samples}")
    if args.workers < 1:
        raise ConfigError(f"--workers must be >= 1, got {args.workers}")
    if args.grace < 1:
        raise ConfigError(f"--grace must be >= 1, got {args.grace}")
    if importlib.util.find_spec("ray") is None:
        raise ConfigError("training.tune needs Ray Tune: pip install -e '.[ray]'")
    seed = check_seed(args.seed)
    raw = read_raw(args.config)
    base = resolve_config(raw, args.budget, source=args.config)
    space = DEFAULT_SPACES[base["algo"]] if args.space is None else read_raw(args.space)
    space = check_space(space, raw, args.budget, args.space or "the default space")
    return seed, raw, base, space


def _fit(args: argparse.Namespace, raw: dict, base: dict, space: dict, seed: int):
    """Run the trials on Ray Tune under ASHA; their result grid, or None if interrupted."""
    import ray
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler

    evaluations = base["timesteps"] // base["eval_every"] + 1
    root = str(Path(args.runs).resolve())
    try:
        if args.address is None:
            ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=args.address, log_to_driver=False)
        trainable = tune.with_parameters(trial, raw=raw, budget=args.budget, seed=seed, root=root)
        tuner = tune.Tuner(
            tune.with_resources(trainable, {"cpu": 1}),
            param_space=tune_space(space),
            tune_config=tune.TuneConfig(
                metric="relative_gap",
                mode="min",
                num_samples=args.samples,
                scheduler=ASHAScheduler(max_t=evaluations + 1, grace_period=args.grace),
            ),
            run_config=tune.RunConfig(
                name=f"tune-{Path(args.config).parent.name}-{Path(args.config).stem}",
                storage_path=str(Path(root) / "tune"),
                verbose=0,
            ),
        )
        return tuner.fit()
    except KeyboardInterrupt:
        return None
    finally:
        if ray.is_initialized():
            ray.shutdown()


def _print_trials(grid, space: dict, base: dict) -> None:
    """The trials' table (those that trained longest first) and the best hyperparameters."""
    rows = []
    for result in grid:
        if result.metrics:
            rows.append((result.metrics["relative_gap"], result.metrics["steps"], result.config))
    rows.sort(key=lambda row: (-row[1], row[0]))  # trials that ran to the end first
    print("| relative gap | steps | " + " | ".join(space) + " |")
    print("|---|---|" + "---|" * len(space))
    for gap, steps, params in rows:
        values = " | ".join(f"{params[key]:.4g}" for key in space)
        gap = 0.0 if abs(gap) < 1e-12 else gap  # rounding in the solve, not a gap
        print(f"| {100 * gap:.4g} % | {steps:,} | {values} |")
    if rows:
        best = with_params({"hyperparams": base["hyperparams"]}, rows[0][2])["hyperparams"]
        print("\nbest hyperparams (of the trials that trained longest; exact values, so the")
        print("config below is the same run, read back from the store):")
        print(yaml.safe_dump({"hyperparams": best}, sort_keys=False).strip())


if __name__ == "__main__":
    raise SystemExit(main())

"""Hyperparameter search with Ray Tune, scored by the exact gap: a noise-free objective.

    python -m training.tune CONFIG [--samples 8] [--budget quick] [--seed 1000] [--seeds 1]
                                   [--timesteps N] [--eval-every N] [--space FILE]
                                   [--workers 2] [--address ADDRESS] [--runs runs] [--grace 2]
                                   [--baseline] [--record FILE] [--write-config FILE]
                                   [--allow-report-seed]

Each trial is one run of CONFIG with sampled hyperparameters, trained by `training.train.run`
into the same run store (so a trial that was run before is read back, not trained again), and
reports its exact relative gap at every evaluation point (a self-play config: its
exploitability; a game too large for tables: its sampled relative gap, the trials that reach
the budget then ranked by the exact one their runs end with). ASHA stops the trials that trail
at each rung. The search space is a YAML
mapping from a hyperparameter (dotted for nested keys, such as `learning_rate.power`) to one of
{uniform: [low, high]}, {loguniform: [low, high]}, {randint: [low, high]} (high excluded) or
{choice: [a, b, ...]}; by default, DEFAULT_SPACES.

The search's seed (default 1000) seeds every trial's run and the sampler; a seed that the
config's own report runs use is refused unless `--allow-report-seed`, so a tuned setting is
never chosen on the runs that then report it. With `--seeds K` every trial is K runs (seeds
SEED..SEED+K-1), trained side by side one evaluation interval at a time, and reports the mean
over its runs at each evaluation point: a winner picked on one seed's run can be that seed's
luck. `--baseline` runs the unmodified config too, at the same budget and seeds, to measure
whether tuning helped. `--timesteps N` (with `--eval-every`, by default as many evaluation
points as the budget has) shortens the budget for the search: a config whose budget is too long
to search at (hundreds of millions of steps) is tuned on shorter runs, and the record says so;
the baseline runs shortened too, and a written config keeps the budget it had. `--record FILE`
writes the search (space, every trial, the winner and the runner-up, the baseline) as JSON, and
`--write-config FILE` the winner as a config; nothing is written unless asked.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import importlib.util
import json
import math
import os
import re
import sys
import time
from contextlib import contextmanager
from importlib.metadata import version
from pathlib import Path
from typing import Any

import yaml

from training.config import BUDGETS, ConfigError, check_seed, resolve_config

DEFAULT_SPACES = {
    "qlearning": {
        "learning_rate.power": {"uniform": [0.55, 1.0]},
        # The generalized harmonic step size's offset (1: plain 1 / n**power); the solitaire
        # Pig games needed 30 to stop their estimates trailing their targets.
        "learning_rate.offset": {"choice": [1, 10, 30, 100]},
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
# The report's runs use seeds 0-4; a search on a seed no config lists keeps tuning apart from
# the runs it is judged on.
TUNE_SEED = 1000
# Evaluations every trial runs before ASHA may stop it (`--grace`).
DEFAULT_GRACE = 2
# ASHA keeps the best 1/REDUCTION_FACTOR of the trials at each rung (Ray's default, stated so
# the record says it).
REDUCTION_FACTOR = 4
# Below this a gap is float round-off in the exact solve, not a difference between trials.
ROUND_OFF = 1e-12
RECORD_FORMAT = 1
# Ray Tune's switch for its own SIGINT handler (see `_ctrl_c_raises`).
TUNE_SIGINT_SWITCH = "TUNE_DISABLE_SIGINT_HANDLER"


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


def shortened(
    raw: dict[str, Any], budget: str, timesteps: int | None, eval_every: int | None, source: str
) -> dict[str, Any]:
    """`raw` with its `budget` shortened to `timesteps` steps, evaluated every `eval_every`
    (None: as many evaluation points as the budget has); `raw` itself when `timesteps` is
    None. A ConfigError names a bad value."""
    if timesteps is None:
        if eval_every is not None:
            raise ConfigError("--eval-every needs --timesteps")
        return raw
    base = resolve_config(raw, budget, source=source)
    if timesteps < 1 or timesteps > base["timesteps"]:
        raise ConfigError(
            f"--timesteps must be in 1..{base['timesteps']:,} (the {budget} budget's), "
            f"got {timesteps}"
        )
    if eval_every is None:
        eval_every = max(1, timesteps * base["eval_every"] // base["timesteps"])
    raw = copy.deepcopy(raw)
    raw.setdefault("budgets", {}).setdefault(budget, {})
    raw["budgets"][budget].update(timesteps=timesteps, eval_every=eval_every)
    resolve_config(raw, budget, source=f"{source}, shortened by --timesteps/--eval-every")
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


def report_seeds(raw: dict[str, Any], source: str) -> list[int]:
    """Every seed the config's runs use, at any of its budgets (its `seeds`, each budget's)."""
    seeds = set(raw.get("seeds") or [])
    for budget in raw.get("budgets") or {}:
        seeds.update(resolve_config(raw, budget, source=source)["seeds"])
    return sorted(seeds)


def check_search_seed(seed: Any, raw: dict[str, Any], source: str, allow: bool = False) -> int:
    """The search's seed: an integer >= 0 that none of the config's report runs uses (unless
    `allow`); ConfigError otherwise."""
    seed = check_seed(seed)
    used = report_seeds(raw, source)
    if seed in used and not allow:
        raise ConfigError(
            f"--seed {seed} is one of {source}'s report seeds {used}: a search must not pick "
            f"its setting on the runs that report it; use a seed outside them (default "
            f"{TUNE_SEED}) or pass --allow-report-seed"
        )
    return seed


SAMPLED = "sampled_relative_gap"
RELATIVE = ("relative_gap", SAMPLED)  # the objectives written in %


def objective(config: dict[str, Any]) -> str:
    """What a search minimises: a self-play agent's exploitability; else the relative gap,
    sampled (the exact regrets summed along sampled episodes, unbiased) in a game too large for
    tables (Yahtzee), whose runs are evaluated exactly only at their end."""
    from training.evaluation import has_tables

    if config.get("selfplay") is not None:
        return "exploitability"
    return "relative_gap" if has_tables(config["env_id"]) else SAMPLED


def final_score(entry: dict[str, Any], metric: str) -> float | None:
    """The final score a trial (or the baseline) is ranked and judged by: its metric at its
    last evaluation point; for the sampled relative gap, the exact relative gap where the run
    ended with one (every run that reaches its budget does), which has no sampling noise."""
    if metric == SAMPLED and entry.get("final_relative_gap") is not None:
        return entry["final_relative_gap"]
    return entry.get(f"final_{metric}")


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


# What a trial reports at each evaluation point, and a record keeps of it.
REPORTED = ("steps", "relative_gap", "gap", "value", "exploitability", SAMPLED, "sampled_gap")


def curve_point(point: dict[str, Any]) -> dict[str, Any]:
    """The reported keys of one evaluation point (exploitability only where scored)."""
    return {key: point[key] for key in REPORTED if key in point}


class TuneProgress:
    """Reports each exact evaluation to Tune (replaying the curve of a resumed run first).
    With `hold_last` (a game too large for tables) the last point waits for `report_held`:
    the run adds its exact evaluation to that point only after reporting it."""

    def __init__(self, directory: Path, report=None, hold_last: bool = False) -> None:
        self.directory, self.reported = directory, 0
        self.report = report or _tune_report
        self.hold_last, self.total, self.held = hold_last, None, False

    def start(self, steps: int, total: int) -> None:
        self.total = total
        if steps > 0:
            from training.runs import read_json

            for point in read_json(self.directory / "curve.json", []):
                if point["steps"] <= steps:
                    self.evaluated(point)

    def steps(self, steps: int) -> None:
        pass

    def evaluated(self, point: dict[str, Any]) -> None:
        self.reported += 1
        if self.hold_last and self.total is not None and point["steps"] >= self.total:
            self.held = True
            return
        self.report(curve_point(point))

    def report_held(self) -> None:
        """The held last point, as the run's curve holds it now (its exact scores added)."""
        from training.runs import read_json

        if self.held:
            self.report(curve_point(read_json(self.directory / "curve.json")[-1]))
            self.held = False


def _tune_report(point: dict[str, Any]) -> None:
    from ray import tune

    tune.report(point)


def mean_point(points: list[dict[str, Any]]) -> dict[str, Any]:
    """The reported keys of one evaluation point of several runs (one per seed): the mean
    over the runs of each score, at the furthest of their steps."""
    shown = [curve_point(point) for point in points]
    mean = {"steps": max(point["steps"] for point in shown)}
    for key in REPORTED[1:]:
        if key in shown[0]:
            mean[key] = sum(point[key] for point in shown) / len(shown)
    return mean


def mean_curve(curves: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The point-by-point mean (`mean_point`) of several runs' curves, as long as the
    shortest."""
    return [mean_point(list(points)) for points in zip(*curves, strict=False)]


def trial(
    params: dict[str, Any],
    raw: dict[str, Any],
    budget: str,
    seeds: list[int],
    root: str,
    report=None,
) -> None:
    """One Tune trial: the runs of `raw` with `params`, one per seed, each evaluation point
    reported to `report` (default: Tune's): one seed's own point, or the mean of several."""
    from training.runs import read_json, run_dir
    from training.train import run

    config = resolve_config(with_params(raw, params), budget, source="trial")
    if len(seeds) == 1:
        directory = run_dir(root, config, seeds[0])
        progress = TuneProgress(directory, report, hold_last=objective(config) == SAMPLED)
        run(config, seeds[0], root, progress=progress)
        progress.report_held()
        if progress.reported == 0:  # finished before: read back, so replay its curve
            for point in read_json(directory / "curve.json", []):
                progress.evaluated(point)
        return
    report = report or _tune_report
    # Every run up to the next evaluation point, then their mean: ASHA sees the mean at each
    # rung. A run stopped after a checkpoint resumes exactly as if it had never stopped; a run
    # already past the point (an earlier search's, read back) trains no further for it.
    point = 0
    while True:
        curves = []
        for seed in seeds:
            directory = run_dir(root, config, seed)
            curve = read_json(directory / "curve.json", [])
            if len(curve) <= point:
                stop_after = point * config["eval_every"]
                _when_free(lambda seed=seed, stop=stop_after: run(config, seed, root, stop))
                curve = read_json(directory / "curve.json", [])
            curves.append(curve)
        if any(len(curve) <= point for curve in curves):
            return
        report(mean_point([curve[point] for curve in curves]))
        point += 1


def _when_free(call):
    """`call()` (a run), waited for while another process trains the same run: a trial
    releases its runs between evaluation points, where the baseline or a trial of the same
    setting can take one."""
    from training.runs import RunStoreError

    while True:
        try:
            return call()
        except RunStoreError as error:
            if "being trained by another process" not in str(error):
                raise
            time.sleep(2)


def baseline_curve(raw: dict[str, Any], budget: str, seeds: list[int], root: str) -> list[dict]:
    """The unmodified config's runs (trained, or read back from the store): their whole
    curve, the mean over the seeds where there are several."""
    from training.runs import read_json, run_dir
    from training.train import run

    config = resolve_config(raw, budget, source="baseline")
    curves = []
    for seed in seeds:
        run(config, seed, root)
        curves.append(read_json(run_dir(root, config, seed) / "curve.json"))
    return mean_curve(curves)


def main(argv: list[str] | None = None, prog: str = "python -m training.tune") -> int:
    parser = _parser(prog)
    args = parser.parse_args(argv)
    try:
        search = _checked_arguments(args)
    except ConfigError as error:
        parser.error(str(error))
    start = time.perf_counter()
    fitted = _fit(args, search)
    if fitted is None:
        print("interrupted; finished trials stay in the run store: run again to reuse them",
              file=sys.stderr)  # fmt: skip
        return 130
    grid, baseline = fitted
    record = search_record(args, search, trial_records(grid), baseline)
    record["wall_seconds"] = round(time.perf_counter() - start, 1)
    print_search(record)
    return _write_outputs(args, search, record)


def _parser(prog: str = "python -m training.tune") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("config", help="a YAML file such as configs/pig/qlearning.yaml")
    parser.add_argument("--samples", type=int, default=8, help="trials (default 8)")
    parser.add_argument("--budget", default="quick", choices=BUDGETS)
    parser.add_argument(
        "--seed", type=int, default=TUNE_SEED, help=f"the trials' seed (default {TUNE_SEED})"
    )
    parser.add_argument(
        "--seeds",
        type=int,
        default=1,
        help="runs per trial, seeds SEED..SEED+K-1, scored by their mean (default 1)",
    )
    parser.add_argument(
        "--allow-report-seed",
        action="store_true",
        help="allow a --seed that the config's own runs use",
    )
    parser.add_argument(
        "--timesteps",
        type=int,
        default=None,
        help="search on runs of this many steps (default: the budget's)",
    )
    parser.add_argument(
        "--eval-every",
        type=int,
        default=None,
        help="with --timesteps: steps between evaluations (default: as many as the budget's)",
    )
    parser.add_argument("--space", default=None, help="a YAML search space (default: built in)")
    parser.add_argument("--workers", type=int, default=2, help="CPUs of a local Ray")
    parser.add_argument("--address", default=None, help="a Ray cluster (default: start one)")
    parser.add_argument("--runs", default="runs", help="the run store (default: runs)")
    parser.add_argument(
        "--grace", type=int, default=DEFAULT_GRACE, help="evaluations before ASHA may stop"
    )
    parser.add_argument(
        "--baseline",
        action="store_true",
        help="also run the unmodified config (same budget and seeds), to measure what tuning won",
    )
    parser.add_argument("--record", default=None, help="write the search as JSON to this file")
    parser.add_argument(
        "--write-config", default=None, help="write the winner as a config YAML (needs --record)"
    )
    return parser


class Search:
    """A search's checked inputs: the raw config as its file holds it (`file_raw`) and as the
    search runs it (`raw`: shortened if asked), its hash, the resolved base config, the
    budget's own length, the seed, the space and where it came from."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.file_raw = read_raw(args.config)
        self.config_sha256 = hashlib.sha256(Path(args.config).read_bytes()).hexdigest()
        own = resolve_config(self.file_raw, args.budget, source=args.config)
        self.raw = shortened(
            self.file_raw, args.budget, args.timesteps, args.eval_every, args.config
        )
        self.base = resolve_config(self.raw, args.budget, source=args.config)
        self.shortened_from = (
            None
            if args.timesteps is None
            else {"timesteps": own["timesteps"], "eval_every": own["eval_every"]}
        )
        self.seed = check_search_seed(args.seed, self.raw, args.config, args.allow_report_seed)
        used = report_seeds(self.raw, args.config)
        self.seeds = [self.seed + k for k in range(args.seeds)]
        clash = sorted(set(self.seeds) & set(used))
        if clash and not args.allow_report_seed:
            raise ConfigError(
                f"--seed {self.seed} with --seeds {args.seeds} runs seeds {clash}, report seeds "
                f"of {args.config} ({used}): a search must not pick its setting on the runs "
                "that report it; choose another --seed or pass --allow-report-seed"
            )
        most = asha_settings(self.base, 1, "relative_gap")["max_t"]
        if args.grace > most:
            raise ConfigError(
                f"--grace must be at most {most} at this budget (its evaluation points + 1, "
                f"where ASHA stops no trial), got {args.grace}"
            )
        algo = self.base["algo"]
        source = f"built in ({algo})" if args.space is None else args.space
        space = DEFAULT_SPACES[algo] if args.space is None else read_raw(args.space)
        self.space = check_space(space, self.raw, args.budget, source)
        self.space_source = source
        self.metric = objective(self.base)


def _checked_arguments(args: argparse.Namespace) -> Search:
    """The search's checked inputs, or ConfigError."""
    if args.samples < 1:
        raise ConfigError(f"--samples must be >= 1, got {args.samples}")
    if args.workers < 1:
        raise ConfigError(f"--workers must be >= 1, got {args.workers}")
    if args.seeds < 1:
        raise ConfigError(f"--seeds must be >= 1, got {args.seeds}")
    if args.grace < 1:
        raise ConfigError(f"--grace must be >= 1, got {args.grace}")
    if args.write_config is not None and args.record is None:
        raise ConfigError("--write-config needs --record: a tuned config names its search")
    if importlib.util.find_spec("ray") is None:
        raise ConfigError("training.tune needs Ray Tune: pip install -e '.[ray]'")
    return Search(args)


def asha_settings(base: dict[str, Any], grace: int, metric: str) -> dict[str, Any]:
    """ASHA's settings for a config: one time unit per evaluation point; max_t lies past the
    last point, so a trial that ASHA keeps always runs to the end of the budget."""
    evaluations = base["timesteps"] // base["eval_every"] + 1
    return {
        "time_attr": "training_iteration",
        "metric": metric,
        "mode": "min",
        "max_t": evaluations + 1,
        "grace_period": grace,
        "reduction_factor": REDUCTION_FACTOR,
    }


def _fit(args: argparse.Namespace, search: Search):
    """The trials on Ray Tune under ASHA, and the baseline's curve if asked for (beside them,
    in a Ray task of its own); None if interrupted."""
    import ray
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler
    from ray.tune.search.basic_variant import BasicVariantGenerator

    asha = asha_settings(search.base, args.grace, search.metric)
    root = str(Path(args.runs).resolve())
    context = {"raw": search.raw, "budget": args.budget, "seeds": search.seeds, "root": root}
    try:
        if args.address is None:
            ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False)
        else:
            ray.init(address=args.address, log_to_driver=False)
        baseline = None
        if args.baseline:
            baseline = ray.remote(num_cpus=1)(_waiting_baseline_curve).remote(**context)
        tuner = tune.Tuner(
            tune.with_resources(tune.with_parameters(trial, **context), {"cpu": 1}),
            param_space=tune_space(search.space),
            tune_config=tune.TuneConfig(
                num_samples=args.samples,
                search_alg=BasicVariantGenerator(random_state=search.seed),
                scheduler=ASHAScheduler(**asha),
            ),
            run_config=tune.RunConfig(
                name=f"tune-{Path(args.config).parent.name}-{Path(args.config).stem}",
                storage_path=str(Path(root) / "tune"),
                verbose=0,
            ),
        )
        with _ctrl_c_raises():
            grid = tuner.fit()
        return grid, (None if baseline is None else ray.get(baseline))
    except KeyboardInterrupt:
        return None
    finally:
        if ray.is_initialized():
            ray.shutdown()


@contextmanager
def _ctrl_c_raises():
    """Tune's own Ctrl-C handler ends a search early and returns its trials as if it were
    done; without it, Ctrl-C raises KeyboardInterrupt, so a cut search is never recorded."""
    previous = os.environ.get(TUNE_SIGINT_SWITCH)
    os.environ[TUNE_SIGINT_SWITCH] = "1"
    try:
        yield
    finally:
        if previous is None:
            del os.environ[TUNE_SIGINT_SWITCH]
        else:
            os.environ[TUNE_SIGINT_SWITCH] = previous


def _waiting_baseline_curve(raw: dict, budget: str, seeds: list[int], root: str) -> list[dict]:
    """`baseline_curve`, waiting while a trial with the same setting trains the same run."""
    return _when_free(lambda: baseline_curve(raw, budget, seeds, root))


def _number(value: Any) -> Any:
    """A numpy scalar as a plain int or float (JSON's)."""
    return value.item() if hasattr(value, "item") else value


def trial_records(grid) -> list[dict[str, Any]]:
    """Each trial of a result grid: its index, params, the points it reported, error if any."""
    trials = []
    for result in grid:
        frame = result.metrics_dataframe
        curve = []
        if frame is not None:
            for row in frame.to_dict("records"):
                point = {k: row[k] for k in REPORTED if k in row and not _is_nan(row[k])}
                curve.append({k: _number(v) for k, v in point.items()})
        trial_id = str((result.metrics or {}).get("trial_id") or Path(result.path).name)
        index = re.search(r"_(\d+)(?:_|$)", trial_id)  # Tune's ids end in the sample's number
        trials.append(
            {
                "trial": int(index.group(1)) if index else len(trials),
                "params": {k: _number(v) for k, v in result.config.items()},
                "curve": curve,
                "error": None if result.error is None else str(result.error).splitlines()[0],
            }
        )
    return sorted(trials, key=lambda t: t["trial"])


def _is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def settle(value: float) -> float:
    """A gap with float round-off (|x| < ROUND_OFF) taken as 0."""
    return 0.0 if abs(value) < ROUND_OFF else value


def finish_trial(trial: dict[str, Any], timesteps: int) -> dict[str, Any]:
    """A trial's record completed from its curve: steps reached, whether it ran the whole
    budget, whether ASHA stopped it, and its final scores."""
    curve = trial["curve"]
    last = curve[-1] if curve else {}
    trial["steps"] = last.get("steps", 0)
    trial["finished"] = trial["error"] is None and trial["steps"] >= timesteps
    trial["stopped_by_asha"] = trial["error"] is None and trial["steps"] < timesteps
    for key in ("relative_gap", "gap", "exploitability", SAMPLED, "sampled_gap"):
        if key in last:
            trial[f"final_{key}"] = last[key]
    return trial


def ranking_key(trial: dict[str, Any], metric: str) -> tuple:
    """Lower is better: the final score, then the mean score over the evaluation points (the
    faster learner), then the params as sorted JSON, so that ties always break the same way."""
    mean = sum(point[metric] for point in trial["curve"]) / len(trial["curve"])
    return (
        settle(final_score(trial, metric)),
        settle(mean),
        json.dumps(trial["params"], sort_keys=True),
    )


def ranked(trials: list[dict[str, Any]], metric: str) -> list[dict[str, Any]]:
    """The trials that ran the whole budget, best first (see `ranking_key`)."""
    return sorted((t for t in trials if t["finished"]), key=lambda t: ranking_key(t, metric))


def _summary(trial: dict[str, Any], raw: dict[str, Any], budget: str) -> dict[str, Any]:
    """A ranked trial as the record names it: its params, whole hyperparams and final scores."""
    config = resolve_config(with_params(raw, trial["params"]), budget, source="trial")
    finals = {k: v for k, v in trial.items() if k.startswith("final_")}
    return {
        "trial": trial["trial"],
        "params": trial["params"],
        "hyperparams": config["hyperparams"],
        **finals,
    }


def baseline_record(
    search: Search, trials: list[dict], curve: list[dict] | None, root: str
) -> dict[str, Any] | None:
    """The committed setting's score at the search's budget and seeds: the `--baseline`
    runs, else a trial that ran it to the end, else the runs if the store has them all
    finished (their mean curve); None if none of them is there."""
    from training.runs import read_json, run_dir

    source, trial_index = "run", None
    if curve is None:
        for trial in trials:
            config = resolve_config(with_params(search.raw, trial["params"]), search.base["budget"])
            if trial["finished"] and config["hyperparams"] == search.base["hyperparams"]:
                source, trial_index, curve = "trial", trial["trial"], trial["curve"]
                break
    if curve is None:
        directories = [run_dir(root, search.base, seed) for seed in search.seeds]
        if any(read_json(directory / "result.json") is None for directory in directories):
            return None
        source = "store"
        curve = mean_curve([read_json(directory / "curve.json") for directory in directories])
    record = {"source": source, "trial": trial_index, "curve": curve, "error": None}
    record = finish_trial(record, search.base["timesteps"])
    for key in ("error", "stopped_by_asha"):
        del record[key]
    return record


def search_record(
    args: argparse.Namespace, search: Search, trials: list[dict], baseline: list[dict] | None
) -> dict[str, Any]:
    """What a search did and found, as `--record` writes it."""
    from training.runs import PACKAGE, code_stamp, library_versions, stamp_digest

    base, metric = search.base, search.metric
    trials = [finish_trial(t, base["timesteps"]) for t in trials]
    best = ranked(trials, metric)
    root = str(Path(args.runs).resolve())
    return {
        "format": RECORD_FORMAT,
        "config": {"path": _shown_path(args.config), "sha256": search.config_sha256},
        "env_id": base["env_id"],
        "env_kwargs": base["env_kwargs"],
        "algo": base["algo"],
        "budget": args.budget,
        "timesteps": base["timesteps"],
        "eval_every": base["eval_every"],
        "shortened_from": search.shortened_from,
        "seed": search.seed,
        "seeds": search.seeds,
        "samples": args.samples,
        "grace": args.grace,
        "objective": metric,
        "asha": asha_settings(base, args.grace, metric),
        "space": search.space,
        "space_source": search.space_source,
        "base_hyperparams": base["hyperparams"],
        "trials": trials,
        "winner": _summary(best[0], search.raw, args.budget) if best else None,
        "runner_up": _summary(best[1], search.raw, args.budget) if len(best) > 1 else None,
        "baseline": baseline_record(search, trials, baseline, root),
        "package": {
            "name": PACKAGE,
            "version": version(PACKAGE),
            "code": stamp_digest(code_stamp([base["env_id"]])),
        },
        "libraries": {**library_versions(), "ray": version("ray")},
    }


def _shown_path(path: str) -> str:
    """A path relative to the working folder where it lies inside it (the repository's root)."""
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return resolved.as_posix()


def percent(value: float) -> str:
    """A relative gap as a percentage (round-off shown as 0)."""
    return f"{100 * settle(value):.4g} %"


def print_search(record: dict[str, Any]) -> None:
    """The trials' table (those that ran the whole budget first, best first), the winner's
    hyperparameters and the baseline."""
    space, metric = list(record["space"]), record["objective"]
    best = ranked(record["trials"], metric)
    rest = [t for t in record["trials"] if not t["finished"]]
    heading = "relative gap (exact; sampled where stopped early)" if metric == SAMPLED else metric
    print(f"| {heading.replace('_', ' ')} | steps | stopped by ASHA | " + " | ".join(space) + " |")
    print("|---|---|---|" + "---|" * len(space))
    for trial in best + sorted(rest, key=lambda t: -t["steps"]):
        values = " | ".join(f"{trial['params'][key]:.4g}" for key in space)
        score = "error" if trial["error"] else _score(final_score(trial, metric), metric)
        stopped = "yes" if trial["stopped_by_asha"] else "no"
        print(f"| {score} | {trial['steps']:,} | {stopped} | {values} |")
    winner, baseline = record["winner"], record["baseline"]
    if winner is not None:
        print(f"\nbest hyperparams (trial {winner['trial']}; exact values, so a config with them")
        print("is the same run, read back from the store):")
        print(yaml.safe_dump({"hyperparams": winner["hyperparams"]}, sort_keys=False).strip())
    if baseline is not None:
        final = final_score(baseline, metric)
        print(f"\nthe committed setting ({baseline['source']}): {_score(final, metric)}")


def _score(value: float | None, metric: str) -> str:
    if value is None:
        return "none"
    return percent(value) if metric in RELATIVE else f"{settle(value):.6g}"


def record_seeds(record: dict[str, Any]) -> list[int]:
    """The seeds of each trial of a search record (one, for a record from before `--seeds`)."""
    return record.get("seeds") or [record["seed"]]


def seeds_text(record: dict[str, Any]) -> str:
    """ "seed 1000", or "seeds 1000-1002 (their mean)" for a search of several seeds per trial
    (a record written before `--seeds` holds one seed)."""
    seeds = record_seeds(record)
    if len(seeds) == 1:
        return f"seed {seeds[0]}"
    return f"seeds {seeds[0]}-{seeds[-1]} (their mean)"


def budget_text(record: dict[str, Any]) -> str:
    """ "quick budget", or "full budget shortened to 100,000,000 steps" for a search run on
    shorter runs than its budget's (`--timesteps`)."""
    text = f"{record['budget']} budget"
    if record.get("shortened_from"):
        text += f" shortened to {record['timesteps']:,} steps"
    return text


def tuned_config_text(raw: dict[str, Any], config_path: str, record: dict, record_path: str) -> str:
    """The base config with the winner's hyperparameters, as YAML: a header saying it was
    tuned and by which record, then the base config's own header comments."""
    winner = record["winner"]
    header = [
        f"# Tuned by training.tune (search record: {_shown_path(record_path)}): the best of "
        f"{len(record['trials'])} trials",
        f"# at the {budget_text(record)}, {seeds_text(record)}, on its exact "
        f"{record['objective'].replace('_', ' ')}; the rest as in {record['config']['path']}.",
    ]
    own = []
    for line in Path(config_path).read_text().splitlines():
        if not line.startswith("#"):
            break
        own.append(line)
    body = yaml.safe_dump(
        with_params(raw, winner["params"]), sort_keys=False, default_flow_style=None
    )
    return "\n".join(header + own) + "\n" + body


def _write_outputs(args: argparse.Namespace, search: Search, record: dict[str, Any]) -> int:
    """Write the record and the tuned config where asked; 1 if a config was asked for but no
    trial ran the whole budget."""
    from dice_envs.files import atomic_write_bytes
    from training.runs import atomic_write_json, ctrl_c_deferred

    if args.record is not None:
        with ctrl_c_deferred():
            atomic_write_json(Path(args.record), record)
        print(f"\nrecord: {args.record}")
    if args.write_config is None:
        return 0
    if record["winner"] is None:
        print("no trial ran the whole budget: no config written", file=sys.stderr)
        return 1
    text = tuned_config_text(search.file_raw, args.config, record, args.record)
    with ctrl_c_deferred():
        atomic_write_bytes(Path(args.write_config), text.encode())
    print(f"tuned config: {args.write_config}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

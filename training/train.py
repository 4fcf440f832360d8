"""One training run: `python -m training.train CONFIG [--budget quick|full] [--seed N] [--json]`.

The run evaluates its greedy policy exactly at the start and every `eval_every` steps, and
checkpoints there; on a game too large for tables (Yahtzee) it estimates the policy's gap
from sampled episodes there instead (`sampled_gap` and its interval) and evaluates it exactly
once, at the end (training.evaluation.SampledScorer). Started again after a kill or Ctrl-C,
it resumes from the last checkpoint and ends exactly as an uninterrupted run would
(Q-learning and PPO alike); started again after it finished, it only reads its result back.
It says which of the three it did ("trained", "resumed at step N", "read back from FOLDER")
and where the run's folder is.
The folder is named by a hash of the resolved config, the seed and the package version, so an
edited config is a new run; the run records the code it was made by (training/runs.py), so an
edited learner is never a stale read-back: the run is moved aside and trained afresh.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import pickle
import sys
import time
from pathlib import Path
from typing import Any, TextIO

import gymnasium as gym
import numpy as np

from dice_envs.files import atomic_write_bytes, remove_partial_files
from training.config import ConfigError, check_seed, load_config
from training.evaluation import ExactScorer, SampledScorer, make_scorer
from training.runs import (
    atomic_write_json,
    atomic_write_yaml,
    check_identity,
    ctrl_c_deferred,
    library_versions,
    locked,
    machine_description,
    move_stale_aside,
    read_finished,
    read_json,
    record_code,
    run_dir,
    run_identity,
)
from training.streams import run_streams

RESULT_KEYS = ("value", "optimal_value", "gap", "relative_gap", "agreement", "steps", "seconds")
# What `run` did, in its result's "status": trained from step 0, resumed from a checkpoint, or
# only read a finished run back.
TRAINED, RESUMED, READ_BACK = "trained", "resumed", "read back"
# Q-learning trains in chunks of this many steps between progress reports (about 0.1 s).
QLEARNING_CHUNK = 20_000


class Progress:
    """What a run reports as it goes; the default reports nothing."""

    def start(self, steps: int, total: int) -> None:
        """A session starts (at 0, or at the checkpoint it resumes from)."""

    def steps(self, steps: int) -> None:
        """Training has reached `steps` environment steps."""

    def evaluated(self, point: dict[str, Any]) -> None:
        """An exact evaluation at `point["steps"]`, checkpointed."""

    def checkpointed(self, directory: Path) -> None:
        """The run folder `directory` holds a new checkpoint (with its curve and timing)."""


class StopRun(Exception):
    """Raised inside training to stop after a checkpoint (`stop_after`)."""


def agent_name(config: dict[str, Any], masked: bool) -> str:
    if config["algo"] == "qlearning":
        return "Q-learning"
    return "MaskablePPO" if masked else "PPO"


def _make_agent(config: dict[str, Any], streams, scorer: ExactScorer | SampledScorer):
    if config["algo"] == "qlearning":
        from training.qlearning import (
            QLearning,
            SelfPlayQLearning,
            SparseQLearning,
            VectorQLearning,
        )

        n_envs = config["hyperparams"].get("n_envs", 1)
        if scorer.sampled:  # no dense table fits the game: rows for the observations met
            env = gym.make_vec(
                config["env_id"],
                num_envs=n_envs,
                vectorization_mode="vector_entry_point",
                autoreset_mode="SameStep",
                **config["env_kwargs"],
            )
            learner = SparseQLearning
        elif config.get("selfplay") is not None:
            from dice_envs.envs.vector import DiceVectorEnv
            from dice_envs.games.views import MoverView

            env = DiceVectorEnv(
                MoverView(scorer.game, _selfplay_starts(scorer.game, config["selfplay"])),
                num_envs=n_envs,
                autoreset_mode="SameStep",
            )
            learner = SelfPlayQLearning
        elif n_envs > 1:
            env = gym.make_vec(
                config["env_id"],
                num_envs=n_envs,
                vectorization_mode="vector_entry_point",
                autoreset_mode="SameStep",
                **config["env_kwargs"],
            )
            learner = VectorQLearning
        else:
            env = gym.make(config["env_id"], **config["env_kwargs"]).unwrapped
            learner = QLearning
        return learner(env, config["hyperparams"], streams, config["timesteps"]), False
    from training.ppo import PPOAgent, SelfPlayPPOAgent

    masked = config["hyperparams"]["masked"]
    if masked == "auto":
        masked = scorer.masks_actions
    if config.get("selfplay") is not None:
        return SelfPlayPPOAgent(config, streams, masked, scorer), masked
    return PPOAgent(config, streams, masked), masked


def _played_policy(agent):
    """The agent's greedy policy in a form every policy argument takes (an SB3 predictor, or
    the sparse learner's batched policy)."""
    return agent.policy() if hasattr(agent, "policy") else agent.predictor()


def _greedy(agent, scorer: ExactScorer) -> np.ndarray:
    if hasattr(agent, "greedy_actions"):
        return agent.greedy_actions(scorer.tables.observations, scorer.tables.legal)
    import baselines

    return baselines.policy_actions(agent.predictor(), scorer.tables)


def _selfplay_starts(game, selfplay: dict[str, Any]):
    """Self-play's start distribution: the game's, or every position it can reach from there
    (by any play of either seat), uniformly."""
    if selfplay["starts"] == "start":
        return None
    from dice_envs.games.views import MoverView
    from dice_envs.tables import build_tables

    states = build_tables(MoverView(game)).states
    return [(1.0 / len(states), state) for state in states]


def _grid_policy(agent, scorer: ExactScorer):
    """The agent's greedy policy over the whole observation grid of a two-player game (its
    play in either seat), as an action table, or the model itself for SB3."""
    if hasattr(agent, "greedy_actions"):
        grid, legal = scorer.grid
        return agent.greedy_actions(grid, legal).reshape(scorer.game.observation_nvec)
    if hasattr(agent, "greedy_table"):
        return agent.greedy_table()
    return agent.predictor()


def load_run(directory: Path) -> dict[str, Any] | None:
    """A finished run's result with its timing merged in (`seconds`, `steps_per_second`)."""
    result = read_json(directory / "result.json")
    if result is None:
        return None
    timing = read_json(directory / "timing.json", {})
    return {**result, **timing.get("final", {})}


def run(
    config: dict[str, Any],
    seed: int,
    root: str | Path = "runs",
    stop_after: int | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Train (or resume, or just read back) the run of `config` with `seed`; return its result.

    The result says what happened: "status" (TRAINED, RESUMED or READ_BACK), "resumed_at"
    (the checkpoint's step, or None), "run_dir" (the run's folder) and, where the folder held
    a run made by code that has changed since, "stale_moved_to" (where it went). `stop_after` stops
    after the first checkpoint at or past that many steps, as a kill would, and returns
    {"stopped_at": step, "run_dir": folder}.
    """
    seed = check_seed(seed)
    progress = progress or Progress()
    identity = run_identity(config, seed)
    directory = run_dir(root, config, seed)
    aside = move_stale_aside(directory)
    if read_finished(directory, identity) is not None:
        return _read_back(directory)
    with locked(directory):
        if read_finished(directory, identity) is not None:
            return _read_back(directory)
        remove_partial_files(directory)
        check_identity(directory, identity)
        if not (directory / "config.yaml").exists():
            atomic_write_yaml(directory / "config.yaml", identity)
        result = _train(config, seed, directory, stop_after, progress)
    return result if aside is None else {**result, "stale_moved_to": str(aside)}


def _read_back(directory: Path) -> dict[str, Any]:
    return {
        **load_run(directory),
        "status": READ_BACK,
        "resumed_at": None,
        "run_dir": str(directory),
    }


def _train(config, seed, directory: Path, stop_after, progress: Progress) -> dict[str, Any]:
    n_envs = config["hyperparams"].get("n_envs", 1)
    streams = run_streams(seed, n_envs)
    scorer = make_scorer(
        config["env_id"], config["env_kwargs"], config["evaluation"]["episodes"], streams
    )
    agent, masked = _make_agent(config, streams, scorer)
    session = _Session(config, agent, scorer, directory, progress, stop_after)
    try:
        session.train()
    except StopRun:
        return {"stopped_at": agent.step, "run_dir": str(directory)}
    return session.finish(seed, agent_name(config, masked))


class _Session:
    """One training session of a run: resumed from its checkpoint if there is one, evaluated
    and checkpointed every `eval_every` steps, and saved whole at the end. `stop_after`:
    StopRun after the first checkpoint at or past that many steps (see `run`)."""

    def __init__(
        self, config, agent, scorer: ExactScorer, directory: Path, progress, stop_after
    ) -> None:
        self.config, self.agent, self.scorer = config, agent, scorer
        self.directory, self.progress, self.stop_after = directory, progress, stop_after
        self.checkpoint_path = directory / "checkpoint.pkl"
        self.curve_path, self.timing_path = directory / "curve.json", directory / "timing.json"
        self.resumed_at = None
        if self.checkpoint_path.exists():
            agent.restore(pickle.loads(self.checkpoint_path.read_bytes()))
            self.resumed_at = agent.step
        # A kill between writing the curve and the checkpoint leaves a point past the checkpoint.
        self.curve = [p for p in read_json(self.curve_path, []) if p["steps"] <= agent.step]
        timing = read_json(self.timing_path, {"evaluations": [], "sessions": []})
        timing["evaluations"] = [p for p in timing["evaluations"] if p["steps"] <= agent.step]
        self.session = {"start_step": agent.step, "wall_seconds": 0.0}
        timing["sessions"].append(self.session)
        self.timing = timing
        self.wall_start = time.perf_counter()
        self.total = config["timesteps"]
        progress.start(agent.step, self.total)

    def train(self) -> None:
        """Train to the budget, evaluating at step 0 (unless resumed) and every `eval_every`."""
        agent, progress, total = self.agent, self.progress, self.total
        if not self.curve:
            self.evaluate()
        if self.config["algo"] == "qlearning":
            every = self.config["eval_every"]
            while agent.step < total:
                boundary = min(total, (agent.step // every + 1) * every)
                while agent.step < boundary:
                    agent.learn(min(boundary, agent.step + QLEARNING_CHUNK))
                    progress.steps(agent.step)
                self.evaluate()
        else:
            agent.learn(total, self.config["eval_every"], self.evaluate, progress.steps)
            progress.steps(agent.step)
            if self.curve[-1]["steps"] != agent.step:
                self.evaluate()

    def evaluate(self) -> None:
        """Score the agent (exactly; on a game without tables by its sampled gap), add the
        point to the curve and checkpoint."""
        agent, scorer = self.agent, self.scorer
        start = time.perf_counter()
        point = (
            scorer.sampled_point(_played_policy(agent))
            if scorer.sampled
            else self._exact_point(agent, scorer)
        )
        point["steps"] = agent.step
        self.curve.append(point)
        self.timing["evaluations"].append(
            {
                "steps": agent.step,
                "training_seconds": agent.training_seconds,
                "evaluation_seconds": time.perf_counter() - start,
            }
        )
        self._checkpoint()
        self.progress.evaluated(point)
        if self.stop_after is not None and self.stop_after <= agent.step < self.total:
            raise StopRun

    def _exact_point(self, agent, scorer: ExactScorer) -> dict[str, Any]:
        """The exact evaluation of the agent on the game's tables."""
        config = self.config
        point = scorer.score(_greedy(agent, scorer))
        plays = agent.probabilities(scorer.tables) if hasattr(agent, "probabilities") else None
        if plays is not None:
            point.update(scorer.score_stochastic(plays))
        if config.get("selfplay") is None:  # the agent's values are those of the env's game
            gamma = config["hyperparams"].get("gamma", 1.0)
            point.update(scorer.value_errors(agent, gamma, plays))
        if config["evaluation"].get("exploitability"):
            point["exploitability"] = scorer.exploitability(_grid_policy(agent, scorer))
            if hasattr(agent, "grid_probabilities") and getattr(scorer.game, "simultaneous", 0):
                # A game whose optimum mixes: what the agent plays, not only its greedy play.
                played = agent.grid_probabilities(scorer.game)
                point["stochastic_exploitability"] = scorer.exploitability(played)
        return point

    def _checkpoint(self) -> None:
        """Write the curve, the timing and the agent's checkpoint."""
        agent = self.agent
        self.session["wall_seconds"] = time.perf_counter() - self.wall_start
        self.session["end_step"] = agent.step
        # The curve first: a kill before the checkpoint only leaves a point to recompute.
        with ctrl_c_deferred():
            record_code(self.directory, [self.config["env_id"]])
            atomic_write_json(self.curve_path, self.curve)
            atomic_write_json(self.timing_path, self.timing)
            atomic_write_bytes(self.checkpoint_path, pickle.dumps(agent.checkpoint_state()))
        # Optional: a progress object of its own kind (not a Progress) may lack it.
        checkpointed = getattr(self.progress, "checkpointed", None)
        if checkpointed is not None:
            checkpointed(self.directory)

    def finish(self, seed: int, name: str) -> dict[str, Any]:
        """Save the policy, its action table, its value errors, the timing and the result; drop
        the checkpoint. On a game without tables: the exact evaluation first (added to the
        last curve point), and no per-state arrays (the game has too many states for them)."""
        agent, config, directory, timing = self.agent, self.config, self.directory, self.timing
        if self.scorer.sampled:
            self._exact_final()
        result = {
            **self.curve[-1],
            "agent": name,
            "env_id": config["env_id"],
            "env_kwargs": config["env_kwargs"],
            "algo": config["algo"],
            "seed": seed,
            "run": directory.name,
            "libraries": library_versions(),
            "machine": machine_description(uses_torch=config["algo"] == "ppo"),
        }
        timing["final"] = {
            "seconds": agent.training_seconds,
            "steps_per_second": agent.step / max(agent.training_seconds, 1e-9),
            "wall_seconds": sum(s["wall_seconds"] for s in timing["sessions"]),
        }
        agent.save_policy(directory / _policy_file(config, self.scorer))
        if not self.scorer.sampled:
            self._save_arrays()
        atomic_write_json(self.timing_path, timing)
        record_code(directory, [config["env_id"]])
        atomic_write_json(directory / "result.json", result)
        self.checkpoint_path.unlink(missing_ok=True)  # the policy and result say everything now
        status = TRAINED if self.resumed_at is None else RESUMED
        done = {"status": status, "resumed_at": self.resumed_at, "run_dir": str(directory)}
        return {**result, **timing["final"], **done}

    def _save_arrays(self) -> None:
        """actions.npy and value_errors.npy: the report rebuilds where the agent loses its gap
        from them, without SB3 or torch, and every policy argument takes the actions (see
        training.runs)."""
        agent, config, directory = self.agent, self.config, self.directory
        table = action_table(agent, self.scorer, bool(config["evaluation"].get("exploitability")))
        atomic_write_bytes(directory / "actions.npy", _npy(table, np.int16))
        errors = final_value_errors(agent, self.scorer, config)
        if errors is not None:
            atomic_write_bytes(directory / "value_errors.npy", _npy(errors, np.float32))

    def _exact_final(self) -> None:
        """The exact evaluation of the final policy, into the last curve point (exact keys
        beside its sampled ones) and the timing; for PPO also of the policy it plays, its
        action distribution (keys prefixed `stochastic_`). Each is written when done, and a
        resumed run does not repeat what is written. Torch runs on every core of the
        machine meanwhile (training keeps one)."""
        agent, point = self.agent, self.curve[-1]
        timing = self.timing.setdefault("exact_evaluation", {"steps": agent.step})
        stochastic = getattr(agent, "stochastic_policy", None)
        with getattr(agent, "inference_threads", contextlib.nullcontext)():
            if "value" not in point:
                exact, timing["seconds"] = self.scorer.exact(_played_policy(agent))
                self._add_final(point, exact)
            if stochastic is not None and "stochastic_value" not in point:
                exact, timing["stochastic_seconds"] = self.scorer.exact(**stochastic())
                self._add_final(point, {f"stochastic_{k}": v for k, v in exact.items()})

    def _add_final(self, point: dict[str, Any], exact: dict[str, Any]) -> None:
        point.update(exact)
        self.session["wall_seconds"] = time.perf_counter() - self.wall_start
        with ctrl_c_deferred():
            record_code(self.directory, [self.config["env_id"]])
            atomic_write_json(self.curve_path, self.curve)
            atomic_write_json(self.timing_path, self.timing)


def _policy_file(config: dict[str, Any], scorer) -> str:
    """The final policy's file name: the Q table (a dense .npy, or the sparse learner's
    keys and rows in an .npz) or the SB3 model."""
    if config["algo"] != "qlearning":
        return "policy.zip"
    return "policy_q.npz" if scorer.sampled else "policy_q.npy"


def action_table(agent, scorer: ExactScorer, whole_grid: bool) -> np.ndarray:
    """The agent's final greedy policy over the observation grid (shape `observation_nvec` of
    the env's model), as `actions.npy` keeps it.

    Each observation of a reachable state holds the greedy action the run's value scores; with
    `whole_grid` (a two-player run scored by its exploitability) every other observation holds
    the mover's greedy action there, as the exploitability asks it, so the table also plays
    as an opponent; otherwise the other observations hold -1.
    """
    tables = scorer.tables
    shape = tuple(int(n) for n in tables.model.observation_nvec)
    table = np.full(shape, -1, dtype=np.int64)
    if whole_grid:
        policy = _grid_policy(agent, scorer)
        if not isinstance(policy, np.ndarray):  # an SB3 model: asked on the whole grid
            import baselines
            from baselines.exploitability import observation_grid

            policy = baselines.policy_actions(policy, observation_grid(scorer.game))
        table[...] = np.asarray(policy).reshape(shape)
    table[tuple(tables.observation_array.T)] = _greedy(agent, scorer)
    return table


def final_value_errors(agent, scorer: ExactScorer, config: dict[str, Any]) -> np.ndarray | None:
    """The final error of the agent's own value estimate per observation, as
    `value_errors.npy` keeps it: shape `observation_nvec`, Q(s, greedy a) - Q*(s, a) for a
    Q table, V(s) - v_pi(s) for a PPO critic (in the game's units, under the run's gamma),
    NaN at observations of no reachable state. None for a self-play run, whose estimates are
    of the two-player game from the mover's seat, not of the env's game against its
    opponent (the values `baselines.value_errors` holds them against)."""
    if config.get("selfplay") is not None:
        return None
    errors = scorer.errors_of(agent, config["hyperparams"].get("gamma", 1.0))
    return None if errors is None else errors.grid("errors")


def _npy(array: np.ndarray, dtype) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, np.asarray(array, dtype=dtype), allow_pickle=False)
    return buffer.getvalue()


class BarProgress(Progress):
    """A tqdm bar: steps, steps/s, time left, and the exact gap at the last evaluation.

    A run that ends past its budget (PPO collects whole rollouts) raises the bar's total to
    the steps it reached: tqdm drops a total that `n` exceeds, and the bar with it.
    """

    def __init__(self, label: str, file: TextIO | None = None) -> None:
        self.label, self.bar, self.checkpoint = label, None, None
        self.file = file

    def start(self, steps: int, total: int) -> None:
        from tqdm import tqdm

        self.bar = tqdm(
            total=total, initial=steps, desc=self.label, unit="step", unit_scale=True,
            dynamic_ncols=True, file=self.file or sys.stderr,
        )  # fmt: skip

    def steps(self, steps: int) -> None:
        if steps > self.bar.total:
            self.bar.total = steps
        self.bar.update(steps - self.bar.n)

    def evaluated(self, point: dict[str, Any]) -> None:
        self.checkpoint = point["steps"]
        if "relative_gap" in point:
            postfix = f"gap {100 * point['relative_gap']:.3g} %"
        else:
            postfix = f"sampled gap {100 * point['sampled_relative_gap']:.3g} %"
        self.bar.set_postfix_str(postfix, refresh=False)
        self.steps(point["steps"])

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def main(argv: list[str] | None = None, prog: str = "python -m training.train") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__)
    parser.add_argument("config", help="a YAML file such as configs/sum_avoid/qlearning.yaml")
    parser.add_argument("--budget", default="quick", choices=("quick", "full"))
    parser.add_argument("--seed", type=int, default=None, help="default: the budget's first")
    parser.add_argument("--runs", default="runs", help="the run store (default: runs)")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    parser.add_argument("--stop-after", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        config = load_config(args.config, args.budget)
        seed = config["seeds"][0] if args.seed is None else check_seed(args.seed, "--seed")
    except ConfigError as error:
        parser.error(str(error))
    bar = BarProgress(f"{Path(args.config).parent.name}/{Path(args.config).stem} seed {seed}")
    try:
        result = run(config, seed, args.runs, stop_after=args.stop_after, progress=bar)
    except KeyboardInterrupt:
        bar.close()
        where = run_dir(args.runs, config, seed)
        if bar.checkpoint is None:
            print(f"interrupted; nothing checkpointed yet in {where}", file=sys.stderr)
        else:
            print(
                f"interrupted; {where} keeps the checkpoint at step {bar.checkpoint:,}: "
                "run the same command again to resume",
                file=sys.stderr,
            )
        return 130
    finally:
        bar.close()
    if "stopped_at" in result:
        print(
            f"stopped at step {result['stopped_at']:,} in {result['run_dir']} "
            "(resume by running again)"
        )
        return 0
    print(what_happened(result))
    for key in RESULT_KEYS:
        shown = f"{int(result[key]):,}" if key == "steps" else f"{result[key]:.6g}"
        print(f"{key:>14}: {shown}")
    if "sampled_gap" in result:
        print(
            f"{'sampled gap':>14}: {result['sampled_gap']:.6g} ± {result['sampled_gap_stderr']:.2g}"
            f" (s.e., {int(result['sampled_gap_episodes']):,} episodes)"
        )
    if args.json:
        keys = (*RESULT_KEYS, "seed", "env_id", "algo", "run", "run_dir", "status", "resumed_at")
        print(json.dumps({key: result[key] for key in keys}))
    return 0


def what_happened(result: dict[str, Any]) -> str:
    """One line: trained, resumed at step N, or read back, and the run's folder (and where a
    run of older code in it went)."""
    if "stale_moved_to" in result:
        moved = f"; its run by code changed since moved to {result['stale_moved_to']}"
        return what_happened({k: v for k, v in result.items() if k != "stale_moved_to"}) + moved
    if result["status"] == READ_BACK:
        return f"read back from {result['run_dir']} (finished before; nothing trained)"
    if result["status"] == RESUMED:
        return (
            f"resumed at step {result['resumed_at']:,} and trained to {result['steps']:,} "
            f"steps in {result['run_dir']}"
        )
    return f"trained {result['steps']:,} steps in {result['run_dir']}"


if __name__ == "__main__":
    sys.exit(main())

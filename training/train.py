"""One training run: `python -m training.train CONFIG [--budget quick|full] [--seed N] [--json]`.

The run evaluates its greedy policy exactly every `eval_every` steps (and at the start),
checkpoints there, and writes its result last. Started again after a kill, it resumes from
the last checkpoint; started again after it finished, it only reprints its result.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from training.config import ConfigError, load_config
from training.evaluation import ExactScorer
from training.runs import (
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_yaml,
    read_json,
    run_dir,
)

RESULT_KEYS = ("value", "optimal_value", "gap", "relative_gap", "agreement", "steps", "seconds")


def _make_agent(config: dict[str, Any], seed: int, scorer: ExactScorer):
    if config["algo"] == "qlearning":
        from training.qlearning import QLearning

        env = gym.make(config["env_id"], **config["env_kwargs"]).unwrapped
        return QLearning(env, config["hyperparams"], seed, config["timesteps"]), "checkpoint.npz"
    from training.ppo import PPOAgent

    masked = config["hyperparams"]["masked"]
    if masked == "auto":
        masked = not bool(scorer.mdp.legal.all())
    return PPOAgent(config, seed, masked), "checkpoint.zip"


def _greedy(agent, scorer: ExactScorer) -> np.ndarray:
    if hasattr(agent, "greedy_actions"):
        return agent.greedy_actions(scorer.mdp.observations, scorer.mdp.legal)
    import baselines

    return baselines.policy_actions(agent.predictor(), scorer.mdp)


def run(
    config: dict[str, Any],
    seed: int,
    root: str | Path = "runs",
    stop_after: int | None = None,
    progress=None,
) -> dict[str, Any]:
    """Train (or resume, or just read) the run of `config` with `seed`; return its result.

    `stop_after` stops after the first checkpoint at or past that many steps, as a kill
    would (for tests). `progress(steps)` is called at each evaluation point.
    """
    directory = run_dir(root, config, seed)
    finished = read_json(directory / "result.json")
    if finished is not None:
        return finished
    directory.mkdir(parents=True, exist_ok=True)
    atomic_write_yaml(directory / "config.yaml", {**config, "seed": seed})
    scorer = ExactScorer(
        config["env_id"], config["env_kwargs"], config["evaluation"]["episodes"], seed
    )
    agent, checkpoint_name = _make_agent(config, seed, scorer)
    checkpoint = directory / checkpoint_name
    curve_path = directory / "curve.json"
    if checkpoint.exists():
        agent.load(checkpoint)
        curve = [p for p in read_json(curve_path, []) if p["steps"] <= agent.step]
    else:
        curve = []
    wall_start = time.perf_counter()

    def evaluate(current) -> None:
        point = scorer.score(_greedy(current, scorer))
        point.update(steps=current.step, training_seconds=current.training_seconds)
        curve.append(point)
        atomic_write_json(curve_path, curve)
        current.save(checkpoint)
        if progress is not None:
            progress(current.step)

    if not curve:
        evaluate(agent)
    total, every = config["timesteps"], config["eval_every"]
    if config["algo"] == "qlearning":
        while agent.step < total:
            agent.learn(min(total, (agent.step // every + 1) * every))
            evaluate(agent)
            if stop_after is not None and agent.step >= stop_after and agent.step < total:
                return {"stopped_at": agent.step}
    else:

        class Stop(Exception):
            pass

        def on_eval(current) -> None:
            evaluate(current)
            if stop_after is not None and current.step >= stop_after:
                raise Stop

        try:
            agent.learn(total, every, on_eval)
        except Stop:
            return {"stopped_at": agent.step}
        if curve[-1]["steps"] != agent.step:
            evaluate(agent)
    final = dict(curve[-1])
    final.update(
        agent="Q-learning" if config["algo"] == "qlearning" else agent.cls.__name__,
        env_id=config["env_id"],
        env_kwargs=config["env_kwargs"],
        algo=config["algo"],
        budget=config["budget"],
        seed=seed,
        steps=agent.step,
        seconds=agent.training_seconds,
        steps_per_second=agent.step / max(agent.training_seconds, 1e-9),
        wall_seconds_last_session=time.perf_counter() - wall_start,
    )
    _save_policy(agent, directory)
    atomic_write_json(directory / "result.json", final)
    return final


def _save_policy(agent, directory: Path) -> None:
    if hasattr(agent, "q_table"):
        import io

        buffer = io.BytesIO()
        np.save(buffer, agent.q_table())
        atomic_write_bytes(directory / "policy_q.npy", buffer.getvalue())
    else:
        agent.save(directory / "policy.zip")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.train", description=__doc__)
    parser.add_argument("config", help="a YAML file such as configs/sum_avoid/qlearning.yaml")
    parser.add_argument("--budget", default="quick", choices=("quick", "full"))
    parser.add_argument("--seed", type=int, default=None, help="default: the budget's first")
    parser.add_argument("--runs", default="runs", help="where runs are written")
    parser.add_argument("--json", action="store_true", help="end with one JSON line")
    parser.add_argument("--stop-after", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    try:
        config = load_config(args.config, args.budget)
    except ConfigError as error:
        parser.exit(2, f"error: {error}\n")
    seed = config["seeds"][0] if args.seed is None else args.seed

    def progress(steps: int) -> None:
        print(f"{steps} / {config['timesteps']} steps", file=sys.stderr, flush=True)

    result = run(config, seed, args.runs, stop_after=args.stop_after, progress=progress)
    if "stopped_at" in result:
        print(f"stopped at {result['stopped_at']} steps (resume by running again)")
        return 0
    for key in RESULT_KEYS:
        print(f"{key:>14}: {result[key]:.6g}")
    if args.json:
        print(json.dumps({key: result[key] for key in (*RESULT_KEYS, "seed", "env_id", "algo")}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

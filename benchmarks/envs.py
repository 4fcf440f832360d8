"""Env speed: single envs beside FrozenLake-v1, native vector envs beside SyncVectorEnv and
CartPoleVectorEnv, PPO's training throughput, and the PettingZoo envs beside OpenSpiel's pig."""

from __future__ import annotations

import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import dice_envs  # noqa: F401  (registers the ids)
from dice_envs.games.base import load

ENVS = [
    ("FrozenLake-v1", {}),
    ("Blackjack-v1", {}),
    ("dice_envs/SumAvoid-v0", {}),
    ("dice_envs/D20Rounds-v0", {}),
    ("dice_envs/Pig-v0", {}),
    ("dice_envs/TenThousand-v0", {}),
    ("dice_envs/TenThousandDuel-v0", {}),
    ("dice_envs/DieStopping-v0", {}),
    ("dice_envs/RedBlackCards-v0", {}),
    ("dice_envs/ChowRobbins-v0", {}),
    ("dice_envs/ChowRobbins-v0", {"horizon": 1_000_000}),
    ("dice_envs/PigSolitaire-v0", {}),
    ("dice_envs/TwoDicePig-v0", {}),
    ("dice_envs/TwoDicePigSolitaire-v0", {}),
    ("dice_envs/Hog-v0", {}),
    ("dice_envs/HogSolitaire-v0", {}),
    ("dice_envs/SimultaneousHog-v0", {}),
    ("dice_envs/Yahtzee-v0", {}),
]


def steps_per_second(env: gym.Env, steps: int, seed: int) -> float:
    env.reset(seed=seed)
    env.action_space.seed(seed)
    sample, step, reset = env.action_space.sample, env.step, env.reset
    start = time.perf_counter()
    for _ in range(steps):
        _, _, terminated, truncated, _ = step(sample())
        if terminated or truncated:
            reset()
    return steps / (time.perf_counter() - start)


def _env_label(env_id: str, kwargs: dict) -> str:
    """The id, with its arguments when they are not the defaults (so rows stay apart)."""
    return env_id + "".join(
        f" {k}={v:,}" if isinstance(v, int) else f" {k}={v}" for k, v in kwargs.items()
    )


def bench_envs(steps: int, repeats: int, envs: list[tuple[str, dict]] | None = None) -> list[dict]:
    """Steps per second of each (id, arguments) of `envs` (default `ENVS`, which starts with
    FrozenLake-v1, the reference every ratio is to), the envs taking turns over `repeats`."""
    envs = {_env_label(env_id, kw): gym.make(env_id, **kw).unwrapped for env_id, kw in envs or ENVS}
    best = dict.fromkeys(envs, 0.0)
    for repeat in range(repeats):
        for env_id, env in envs.items():
            best[env_id] = max(best[env_id], steps_per_second(env, steps, seed=repeat))
    reference = best["FrozenLake-v1"]
    return [
        {"env_id": env_id, "steps_per_second": rate, "ratio_to_frozenlake": rate / reference}
        for env_id, rate in best.items()
    ]


VECTOR_COPIES = 4096


def vector_steps_per_second(env, batches: int, seed: int) -> float:
    """Steps per second of a vector env (copies x batches / time) under uniform random actions
    (drawn before the clock starts), next-step autoreset as each env does it."""
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    actions = [rng.integers(env.single_action_space.n, size=env.num_envs) for _ in range(16)]
    step = env.step
    start = time.perf_counter()
    for k in range(batches):
        step(actions[k % 16])
    return env.num_envs * batches / (time.perf_counter() - start)


def cartpole_steps_per_second(repeats: int) -> float:
    """Gymnasium's CartPoleVectorEnv at 4,096 copies, best of `repeats`."""
    cartpole = gym.make_vec(
        "CartPole-v1", num_envs=VECTOR_COPIES, vectorization_mode="vector_entry_point"
    )
    return max(vector_steps_per_second(cartpole, 200, r) for r in range(repeats))


def vector_row(env_id: str, repeats: int, sync_batches: int = 5) -> dict:
    """One id at its default arguments: its native vector env and SyncVectorEnv of its single
    env (over one shared model) at 4,096 copies, best of `repeats` each. A native env over
    tables gives their states and outcome rows; one without (Yahtzee, the Ten Thousand race
    at its full goal) the game's turn-start states and no outcome rows (None)."""
    entry = dice_envs.game(env_id)
    start = time.perf_counter()
    native = gym.make_vec(env_id, num_envs=VECTOR_COPIES)
    build = time.perf_counter() - start
    # The copies share one model: a model per copy, as gym.make builds it, would take
    # about 10 MB each for Pig-v0 (the opponent's tables), 40 GB for 4,096 copies.
    model = native.model
    single_env = load(entry.entry_point)
    sync = gym.vector.SyncVectorEnv([lambda m=model: single_env(m)] * VECTOR_COPIES)
    native_rate = sync_rate = 0.0
    for repeat in range(repeats):
        native_rate = max(native_rate, vector_steps_per_second(native, 200, repeat))
        sync_rate = max(sync_rate, vector_steps_per_second(sync, sync_batches, repeat))
    tables = getattr(native, "tables", None)
    if tables is not None:
        states, outcome_rows = tables.num_states, len(tables.outcome_prob)
    elif hasattr(model, "turn_start_states"):
        states, outcome_rows = len(model.turn_start_states()[0]), None
    else:  # the race: the agent's turns start at every pair of banked scores below the goal
        states, outcome_rows = native.race.goal_chips**2, None
    return {
        "env_id": env_id,
        "tables": tables is not None,
        "states": states,
        "outcome_rows": outcome_rows,
        "build_seconds": build,
        "native_steps_per_second": native_rate,
        "sync_steps_per_second": sync_rate,
        "ratio_to_sync": native_rate / sync_rate,
    }


RACE_ID = "dice_envs/TenThousandDuel-v0"


def bench_race_targets(steps: int, repeats: int) -> dict:
    """The Ten Thousand race's speed targets alone (issue 44): its single env beside
    FrozenLake-v1 (at least 1x) and its native vector env at 4,096 copies, crocce-mordecki
    the opponent, beside CartPoleVectorEnv (at least 0.19x), each pair in the same run."""
    single = bench_envs(steps, repeats, [("FrozenLake-v1", {}), (RACE_ID, {})])[1]
    cartpole = cartpole_steps_per_second(repeats)
    native = gym.make_vec(RACE_ID, num_envs=VECTOR_COPIES, opponent="crocce-mordecki")
    vector = max(vector_steps_per_second(native, 200, r) for r in range(repeats))
    return {
        "single_steps_per_second": single["steps_per_second"],
        "single_ratio_to_frozenlake": single["ratio_to_frozenlake"],
        "vector_steps_per_second": vector,
        "cartpole_steps_per_second": cartpole,
        "vector_ratio_to_cartpole": vector / cartpole,
    }


def bench_vector_envs(repeats: int) -> list[dict]:
    """`vector_row` of every registered id, with Gymnasium's CartPoleVectorEnv at 4,096 copies
    in the same run beside them."""
    cartpole_rate = cartpole_steps_per_second(repeats)
    return [
        {**vector_row(env_id, repeats), "cartpole_steps_per_second": cartpole_rate}
        for env_id in dice_envs.env_ids()
    ]


PPO_GAME = ("dice_envs/Pig-v0", {"goal": 30})


PPO_COPIES = (8, 64)


def bench_ppo_throughput(rollouts: int) -> list[dict]:
    """MaskablePPO's training steps per second (rollouts and updates, the Pig config's
    hyperparameters) through the native adapter and through DummyVecEnv."""
    import torch
    import yaml
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.monitor import Monitor
    from stable_baselines3.common.vec_env import DummyVecEnv

    from dice_envs.envs.sb3 import DiceSB3VecEnv

    torch.set_num_threads(1)
    config = yaml.safe_load((Path(__file__).parent.parent / "configs/pig/ppo.yaml").read_text())
    params = config["hyperparams"]
    env_id, kwargs = PPO_GAME
    rows = []
    for copies in PPO_COPIES:
        for path in ("dummy", "native"):
            if path == "native":
                env = DiceSB3VecEnv(env_id, copies, **kwargs)
            else:
                env = DummyVecEnv(
                    [lambda: Monitor(gym.make(env_id, **kwargs)) for _ in range(copies)]
                )
            model = MaskablePPO(
                "MlpPolicy",
                env,
                n_steps=params["n_steps"],
                batch_size=params["batch_size"],
                n_epochs=params["n_epochs"],
                gamma=params["gamma"],
                policy_kwargs=params["policy_kwargs"],
                seed=0,
                device="cpu",
            )
            steps = params["n_steps"] * copies * rollouts
            start = time.perf_counter()
            model.learn(steps)
            rate = model.num_timesteps / (time.perf_counter() - start)
            rows.append({"copies": copies, "path": path, "steps_per_second": rate})
    return rows


def parallel_steps_per_second(game, steps: int, seed: int) -> float:
    """Joint moves per second of a parallel env, uniformly random actions, new games as
    needed."""
    rng = np.random.default_rng(seed)
    actions = game.action_space("player_0").n
    game.reset(seed=seed)
    done = 0
    start = time.perf_counter()
    while done < steps:
        if not game.agents:
            game.reset()
        choice = rng.integers(actions, size=2)
        game.step({"player_0": int(choice[0]), "player_1": int(choice[1])})
        done += 1
    return done / (time.perf_counter() - start)


AEC_STEPS = 100_000


def aec_steps_per_second(game, steps: int, seed: int) -> float:
    """Agent moves per second, uniformly random legal actions, new games as needed."""
    rng = np.random.default_rng(seed)
    game.reset(seed=seed)
    done = 0
    start = time.perf_counter()
    while done < steps:
        for _agent in game.agent_iter():
            observation, _, termination, truncation, info = game.last()
            if termination or truncation:
                game.step(None)
                continue
            # Shimmy's OpenSpiel envs put the mask in the info, ours in the observation.
            mask = (
                observation["action_mask"] if isinstance(observation, dict) else info["action_mask"]
            )
            game.step(int(rng.choice(np.flatnonzero(mask))))
            done += 1
        game.reset()
    return done / (time.perf_counter() - start)


def bench_aec(repeats: int) -> list[dict]:
    """The PettingZoo AEC env of Pig to 100 and of the family, next to OpenSpiel's pig through
    Shimmy (winscore 100, a d6) when installed: `pip install 'shimmy[openspiel]'`."""
    from dice_envs.pettingzoo import env, parallel_env

    rows = []
    cases = [("pig", {"goal": 100}), ("two_dice_pig", {"goal": 100}), ("hog", {"goal": 100})]
    for name, kwargs in cases:
        rate = max(aec_steps_per_second(env(name, **kwargs), AEC_STEPS, s) for s in range(repeats))
        rows.append(
            {"env": f"dice_envs.pettingzoo.env({name!r}, goal=100)", "steps_per_second": rate}
        )
    game = parallel_env("simultaneous_hog", goal=100)
    rate = max(parallel_steps_per_second(game, AEC_STEPS, s) for s in range(repeats))
    rows.append(
        {
            "env": "dice_envs.pettingzoo.parallel_env('simultaneous_hog', goal=100) (joint moves)",
            "steps_per_second": rate,
        }
    )
    try:
        from shimmy import OpenSpielCompatibilityV0
    except ImportError:
        rows.append({"env": "Shimmy OpenSpiel pig", "steps_per_second": float("nan"),
                     "note": "not installed: pip install 'shimmy[openspiel]'"})  # fmt: skip
        return rows
    rate = max(
        aec_steps_per_second(OpenSpielCompatibilityV0(game_name="pig"), AEC_STEPS, s)
        for s in range(repeats)
    )
    rows.append({"env": "Shimmy OpenSpielCompatibilityV0(game_name='pig') (winscore 100)",
                 "steps_per_second": rate})  # fmt: skip
    return rows

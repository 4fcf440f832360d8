"""Benchmarks: tables, solves, exact evaluation, the CLI, and env steps per second beside
Gymnasium's own toy-text envs.

    python -m baselines.bench [--steps 200000] [--repeats 5] [--skip-slow] [--out docs]

Env speed is measured on unwrapped envs with random actions (`action_space.sample()`), resetting
at each episode end, the envs taking turns over several repeats in the same run; the best repeat
of each counts, and ratios are against FrozenLake-v1 in that same run. The "before" columns
come from the same run too: the code of `--before-rev` (default: the commit before the
two-player refactor), checked out into a temporary git worktree, runs its own benchmark
functions in a subprocess right after ours.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import numpy as np

import baselines
import dice_envs  # noqa: F401  (registers the ids)
from baselines.demo import markdown_table
from baselines.pig import two_player_optimum
from baselines.readme import replace_section
from baselines.solvers import PolicySystem
from dice_envs import make_model
from dice_envs.envs.base import DiceEnv
from dice_envs.tables import build_tables

SOLVES = [
    ("dice_envs/SumAvoid-v0", {"N": 10}, "backward"),
    ("dice_envs/SumAvoid-v0", {"N": 10}, "value_iteration"),
    ("dice_envs/SumAvoid-v0", {"N": 1000}, "backward"),
    ("dice_envs/SumAvoid-v0", {"N": 1000}, "value_iteration"),
    ("dice_envs/D20Rounds-v0", {"rounds": 100}, "backward"),
    ("dice_envs/D20Rounds-v0", {"rounds": 100}, "specialised"),
    ("dice_envs/D20Rounds-v0", {"rounds": 100_000}, "specialised"),
]
PIG_SOLVES = [
    ("dice_envs/Pig-v0", {"goal": goal, "opponent": opponent}, method)
    for goal in (30, 50, 100)
    for opponent, method in (
        ("optimal", "specialised"),
        ("hold-at-20", "specialised"),
        ("hold-at-20", "value_iteration"),
    )
    if not (goal == 100 and method == "value_iteration")
]
TEN_THOUSAND_SOLVES = [
    ("dice_envs/TenThousand-v0", {}, "specialised"),
    ("dice_envs/TenThousand-v0", {}, "backward"),
    ("dice_envs/TenThousand-v0", {"allowed_moves": []}, "specialised"),
    ("dice_envs/TenThousand-v0", {"allowed_moves": []}, "backward"),
]
# The solitaires of the Pig family, by the generic solver (value iteration on the tables).
SOLITAIRE_SOLVES = [
    ("dice_envs/PigSolitaire-v0", {"goal": 100}, "value_iteration"),
    ("dice_envs/TwoDicePigSolitaire-v0", {"goal": 100}, "value_iteration"),
    ("dice_envs/HogSolitaire-v0", {"goal": 100}, "value_iteration"),
]
# Enumerated in Python: 2 million states and 42 million outcomes (D20), 262,000 states (Pig).
SLOW_SOLVES = [
    ("dice_envs/D20Rounds-v0", {"rounds": 100_000}, "backward"),
    ("dice_envs/Pig-v0", {"goal": 100, "opponent": "hold-at-20"}, "value_iteration"),
]

ENVS = [
    ("FrozenLake-v1", {}),
    ("Blackjack-v1", {}),
    ("dice_envs/SumAvoid-v0", {}),
    ("dice_envs/D20Rounds-v0", {}),
    ("dice_envs/Pig-v0", {}),
    ("dice_envs/TenThousand-v0", {}),
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


def bench_solves(skip_slow: bool) -> list[dict]:
    results = []
    chosen = SOLVES + PIG_SOLVES + TEN_THOUSAND_SOLVES + SOLITAIRE_SOLVES
    chosen += [] if skip_slow else SLOW_SOLVES
    for env_id, kwargs, method in chosen:
        two_player_optimum.cache_clear()  # time the "optimal" opponent's solve too
        solution = baselines.solve(env_id, method=method, **kwargs)
        results.append(
            {
                "env_id": env_id,
                "kwargs": kwargs,
                "method": solution.method,
                "states": solution.num_states,
                "value": solution.value,
                "seconds": solution.seconds,
                "table_seconds": solution.table_seconds,
                "bellman_residual": solution.bellman_residual,
            }
        )
        print(f"solved {env_id} {kwargs} by {method}: {solution.seconds:.3f} s", flush=True)
    return results


def plain_value_iteration(goal: int, tol: float = 1e-9) -> tuple[float, float, int]:
    """The peer for the two-player Pig optimum: value iteration on whole numpy arrays, every
    position updated each sweep (seed 002's successive substitution) until no value moves by
    more than `tol`. Returns (first player's win probability, seconds, sweeps)."""
    start = time.perf_counter()
    n, probs = goal, np.full(6, 1 / 6)
    own, turn = np.arange(n)[:, None, None], np.arange(n)[None, None, :]
    banked = np.minimum(own + turn, n - 1)[:, 0, :]  # [own, turn]
    live = (own + turn < n) & np.ones((1, n, 1), dtype=bool)
    padded = np.ones((n, n, n + 7))  # P[own, other, turn]; a reached goal counts 1
    padded[:, :, :n][live] = 0.0  # seed 002 starts from P = 0
    sweeps = 0
    while True:
        sweeps += 1
        start_values = padded[:, :, 0]  # [own, other]
        roll = probs[0] * (1 - start_values.T[:, :, None])
        for face in range(2, 7):
            roll = roll + probs[face - 1] * padded[:, :, face : face + n]
        hold = 1 - np.transpose(start_values[:, banked], (1, 0, 2))
        best = np.where(turn > 0, np.maximum(roll, hold), roll)
        best = np.where(live, best, 1.0)
        change = float(np.max(np.abs(best - padded[:, :, :n])))
        padded[:, :, :n] = best
        if change <= tol:
            return float(padded[0, 0, 0]), time.perf_counter() - start, sweeps


def two_player_positions(goal: int) -> int:
    """Positions (mover's score i, other's score j, turn total k) a game to `goal` can reach:
    scores 0 or 2.. (a bank is at least 2), turn totals 0 or 2.. with i + k < goal."""
    scores = np.array([0, *range(2, goal)])
    turns = np.array([0, *range(2, goal)])
    per_score = (scores[:, None] + turns[None, :] < goal).sum(axis=1)
    return int(per_score.sum() * len(scores))


def bench_two_player() -> list[dict]:
    """The game-theoretic Pig optimum (both players optimal): layered policy iteration, and
    plain whole-array value iteration as the peer in the same run."""
    results = []
    for goal in (30, 50, 100):
        two_player_optimum.cache_clear()
        optimum = two_player_optimum(goal, (1 / 6,) * 6)
        plain_value, plain_seconds, sweeps = plain_value_iteration(goal)
        for method, value, seconds in (
            ("layered policy iteration", optimum.value, optimum.seconds),
            (f"plain value iteration, {sweeps} sweeps", plain_value, plain_seconds),
        ):
            results.append(
                {
                    "env_id": "Pig two-player optimum",
                    "kwargs": {"goal": goal},
                    "method": method,
                    "states": two_player_positions(goal),
                    "value": value,
                    "seconds": seconds,
                    "bellman_residual": float("nan"),
                }
            )
        print(
            f"two-player optimum, goal {goal}: {optimum.seconds:.3f} s layered, "
            f"{plain_seconds:.3f} s plain ({plain_seconds / optimum.seconds:.0f}x)",
            flush=True,
        )
    return results


def bench_family() -> list[dict]:
    """The two-player optima of the Pig family (Pig, two-dice Pig, Hog) by their layered
    solvers, with generic minimax value iteration over both seats' tables as the peer in the
    same run (at goals 30 and 50; at 100 it would take minutes)."""
    from baselines.two_player import minimax_value_iteration
    from baselines.two_player import two_player_optimum as family_optimum
    from dice_envs.games.hog import Hog
    from dice_envs.games.pig import Pig
    from dice_envs.games.two_dice_pig import TwoDicePig

    results = []
    for name, game in (("Pig", Pig), ("two-dice Pig", TwoDicePig), ("Hog", Hog)):
        for goal in (30, 50, 100):
            two_player_optimum.cache_clear()  # Pig's layered solve is cached
            layered = family_optimum(game(goal=goal))
            work = (
                f"{layered.iterations} rounds on the wipe values"
                if game is TwoDicePig
                else f"at most {layered.iterations} passes a layer"
            )
            runs = [(f"layered, {work}", layered)]
            if goal < 100:
                start = time.perf_counter()
                generic = minimax_value_iteration(game(goal=goal))
                generic.seconds = time.perf_counter() - start
                runs.append((f"minimax value iteration, {generic.iterations} sweeps", generic))
            for method, solution in runs:
                results.append(
                    {
                        "env_id": f"{name} two-player optimum",
                        "kwargs": {"goal": goal},
                        "method": method,
                        "states": -1,
                        "value": solution.value,
                        "seconds": solution.seconds,
                        "bellman_residual": float("nan"),
                    }
                )
            print(f"{name} two-player optimum, goal {goal}: {layered.seconds:.3f} s", flush=True)
    return results


PIG_100 = {"goal": 100, "opponent": "hold-at-20"}
EVALUATED = ["hold-at-20", "keep-pace", "two-player-optimal"]


def bench_tables(skip_slow: bool) -> list[dict]:
    """Pig at goal 100 against hold-at-20: the vectorised table builder, and the generic one
    (pure Python over the same model) as its peer in the same run."""
    rows = []
    builders = ["vectorised"] + ([] if skip_slow else ["generic"])
    for builder in builders:
        tables = build_tables(make_model("dice_envs/Pig-v0", **PIG_100), builder)
        rows.append(
            {
                "what": f"tables, {builder} builder",
                "states": tables.num_states,
                "rows": len(tables.outcome_prob),
                "seconds": tables.seconds,
            }
        )
        print(f"Pig tables ({builder}): {tables.seconds:.3f} s", flush=True)
    return rows


def bench_evaluations() -> list[dict]:
    """Exact evaluation of named policies on Pig at goal 100 (tables already built), and the
    plain sparse LU of scipy's spsolve on the same system as the peer."""
    tables, _optimum = baselines.enumerated("dice_envs/Pig-v0", **PIG_100)
    rows = []
    for name in EVALUATED:
        score = baselines.evaluate(name, "dice_envs/Pig-v0", **PIG_100)
        rows.append({"what": f"evaluate {name}", "value": score.value, "seconds": score.seconds})
        print(f"evaluate {name}: {score.seconds:.3f} s", flush=True)
    actions = score.actions
    rows += bench_stochastic_evaluations(tables, actions)
    start = time.perf_counter()
    matrix, rewards = tables.policy_matrix(actions)
    values = PolicySystem.of_matrix(matrix).solve(rewards)  # a fresh factorisation
    ordered = time.perf_counter() - start
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    start = time.perf_counter()
    matrix, rewards = tables.policy_matrix(actions)
    plain = spla.spsolve((sp.identity(tables.num_states, format="csc") - matrix).tocsc(), rewards)
    peer = time.perf_counter() - start
    rows.append(
        {
            "what": "linear solve, block-triangular LU (ours)",
            "value": float(tables.initial @ values),
            "seconds": ordered,
        }
    )
    rows.append(
        {
            "what": "linear solve, plain spsolve (peer)",
            "value": float(tables.initial @ plain),
            "seconds": peer,
        }
    )
    return rows


def bench_stochastic_evaluations(tables, actions: np.ndarray) -> list[dict]:
    """Pig at goal 100: a stochastic policy (a probability table: the last policy's action
    with probability 0.9, else the other legal action) scored exactly, and a MaskablePPO
    model (untrained, 64x64) read greedily and from its action distribution (the forward pass
    over every state included)."""
    from sb3_contrib import MaskablePPO

    legal = tables.legal.astype(float)
    chosen = np.eye(tables.num_actions)[actions]
    mixed = np.where(legal.sum(axis=1, keepdims=True) > 1, 0.9 * chosen + 0.1 * (legal - chosen),
                     chosen)  # fmt: skip
    table = np.full((*tables.model.observation_nvec, tables.num_actions), 1 / tables.num_actions)
    table[tuple(tables.observation_array.T)] = mixed
    rows = []
    score = baselines.evaluate(table, "dice_envs/Pig-v0", **PIG_100)
    rows.append({"what": "evaluate a probability table (0.9 hold-at-20)", "value": score.value,
                 "seconds": score.seconds})  # fmt: skip
    env = gym.make("dice_envs/Pig-v0", **PIG_100)
    model = MaskablePPO(
        "MlpPolicy", env, seed=0, device="cpu", policy_kwargs={"net_arch": [64, 64]}
    )
    for deterministic in (True, False):
        score = baselines.evaluate(
            model, "dice_envs/Pig-v0", deterministic=deterministic, **PIG_100
        )
        kind = "greedy" if deterministic else "stochastic"
        rows.append({"what": f"evaluate a MaskablePPO model ({kind})", "value": score.value,
                     "seconds": score.seconds})  # fmt: skip
    for row in rows:
        print(f"{row['what']}: {row['seconds']:.3f} s", flush=True)
    return rows


def bench_chow_robbins(skip_slow: bool) -> list[dict]:
    """Chow–Robbins with a horizon N: the banded backward pass (O(N * D)) against the plain
    full pass over every position (O(N^2)) at N = 10,000 in the same run (best of 3 each),
    the full pass at 100,000 too unless `skip_slow` (about 20 s), and the banded pass at
    100,000 and 1,000,000 (about 9 s)."""
    from baselines.chow_robbins import banded_backward, full_backward

    def best_of(repeats, run):
        times, result = [], None
        for _ in range(repeats):
            start = time.perf_counter()
            result = run()
            times.append(time.perf_counter() - start)
        return result, min(times)

    rows = []
    runs = [(10_000, "banded", 3), (10_000, "full", 3)]
    runs += [] if skip_slow else [(100_000, "full", 1)]
    runs += [(100_000, "banded", 1), (1_000_000, "banded", 1)]
    for horizon, method, repeats in runs:
        if method == "banded":
            result, seconds = best_of(repeats, lambda n=horizon: banded_backward(n))
            value, band = result.value, result.band
        else:
            (value, _), seconds = best_of(repeats, lambda n=horizon: full_backward(n))
            band = horizon
        rows.append(
            {"horizon": horizon, "method": method, "band": band, "value": value, "seconds": seconds}
        )
        print(f"Chow-Robbins N={horizon:,} {method}: {seconds:.3f} s", flush=True)
    banded = {r["horizon"]: r["seconds"] for r in rows if r["method"] == "banded"}
    for row in rows:
        row["ratio_to_banded"] = row["seconds"] / banded[row["horizon"]]
    return rows


# Runs the CLI in a fresh interpreter and reports the peak resident memory of that process
# (VmHWM belongs to the process's own address space, which a fork's parent does not inflate).
CLI_WRAPPER = """
import runpy, sys
sys.argv = ["baselines", *sys.argv[1:]]
try:
    runpy.run_module("baselines", run_name="__main__")
except SystemExit:
    pass
finally:
    peak = [line for line in open("/proc/self/status") if line.startswith("VmHWM")]
    print("PEAK_KB", peak[0].split()[1] if peak else "nan", file=sys.stderr)
"""


def bench_cli() -> list[dict]:
    """`python -m baselines evaluate dice_envs/Pig-v0 --policy ...` in a fresh process: wall
    time (interpreter start included) and peak memory."""
    rows = []
    for policy in ("optimal", "hold-at-20"):
        command = [sys.executable, "-c", CLI_WRAPPER, "evaluate", "dice_envs/Pig-v0"]
        command += ["--policy", policy, "--json"]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        seconds = time.perf_counter() - start
        output = json.loads(done.stdout.strip().splitlines()[-1])
        peak = float(done.stderr.split("PEAK_KB")[-1].split()[0]) / 1024
        rows.append(
            {
                "what": f"CLI evaluate --policy {policy}",
                "value": output["value"],
                "seconds": seconds,
                "peak_mb": peak,
            }
        )
        print(f"CLI {policy}: {seconds:.2f} s, {peak:.0f} MB", flush=True)
    return rows


def _env_label(env_id: str, kwargs: dict) -> str:
    """The id, with its arguments when they are not the defaults (so rows stay apart)."""
    return env_id + "".join(
        f" {k}={v:,}" if isinstance(v, int) else f" {k}={v}" for k, v in kwargs.items()
    )


def bench_envs(steps: int, repeats: int) -> list[dict]:
    envs = {_env_label(env_id, kw): gym.make(env_id, **kw).unwrapped for env_id, kw in ENVS}
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


def bench_vector_envs(repeats: int) -> list[dict]:
    """Every id at its default arguments: the native vector env and SyncVectorEnv of the single
    env (over one shared model) at 4,096 copies, with Gymnasium's CartPoleVectorEnv at 4,096
    copies beside them."""
    rows = []
    cartpole = gym.make_vec(
        "CartPole-v1", num_envs=VECTOR_COPIES, vectorization_mode="vector_entry_point"
    )
    cartpole_rate = max(vector_steps_per_second(cartpole, 200, r) for r in range(repeats))
    for env_id in dice_envs.env_ids():
        start = time.perf_counter()
        native = gym.make_vec(env_id, num_envs=VECTOR_COPIES)
        build = time.perf_counter() - start
        # The copies share one model: a model per copy, as gym.make builds it, would take
        # about 10 MB each for Pig-v0 (the opponent's tables), 40 GB for 4,096 copies.
        model = native.model
        sync = gym.vector.SyncVectorEnv([lambda m=model: DiceEnv(m)] * VECTOR_COPIES)
        native_rate = sync_rate = 0.0
        for repeat in range(repeats):
            native_rate = max(native_rate, vector_steps_per_second(native, 200, repeat))
            sync_rate = max(sync_rate, vector_steps_per_second(sync, 5, repeat))
        rows.append(
            {
                "env_id": env_id,
                "states": native.tables.num_states,
                "outcome_rows": len(native.tables.outcome_prob),
                "build_seconds": build,
                "native_steps_per_second": native_rate,
                "sync_steps_per_second": sync_rate,
                "ratio_to_sync": native_rate / sync_rate,
                "cartpole_steps_per_second": cartpole_rate,
            }
        )
        del native, sync
    return rows


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


BEFORE_REV = "0ef83cf"
# Runs the older code's own benchmark functions (their names have not changed).
BEFORE_SCRIPT = """
import json, sys
from baselines.bench import bench_envs, bench_solves, bench_two_player
skip_slow, steps, repeats = sys.argv[1] == "1", int(sys.argv[2]), int(sys.argv[3])
solves = bench_two_player() + bench_solves(skip_slow)
print(json.dumps({"solves": solves, "envs": bench_envs(steps, repeats)}))
"""


EXPLOIT_GOAL = 100


def bench_exploitability(repeats: int) -> list[dict]:
    """`baselines.exploitability` of table policies at Pig to 100 (best of `repeats`), and
    the two ways of summing the opponent's turns for a stochastic table, side by side."""
    from baselines.specialised import _turns_by_paths, _turns_by_turn_total

    goal = EXPLOIT_GOAL
    grid = (goal + 1, goal + 1, goal)
    rng = np.random.default_rng(0)
    roll = rng.random(grid)
    stochastic = np.stack([1.0 - roll, roll], axis=-1)
    policies = [
        ("hold-at-20 (named: a table)", "hold-at-20"),
        ("a random action table", (roll < 0.5).astype(np.int8)),
        ("a random probability table (stochastic)", stochastic),
        ("the two-player optimum (named)", "optimal"),
    ]
    rows = []
    for label, policy in policies:
        best, score = np.inf, None
        for _ in range(repeats):
            score = baselines.exploitability(policy, "dice_envs/Pig-v0", goal=goal)
            best = min(best, score.seconds)
        rows.append({"what": label, "value": score.value, "seconds": best})
    fold = make_model("dice_envs/Pig-v0", goal=goal, opponent=stochastic)
    for label, turns in (
        ("turn totals (the fast path)", lambda: _turns_by_turn_total(fold, stochastic)),
        ("paths of each turn (the fold's generic sum)", lambda: _turns_by_paths(fold)),
    ):
        start = time.perf_counter()
        turns()
        rows.append({"what": f"opponent turns of the stochastic table: {label}",
                     "seconds": time.perf_counter() - start})  # fmt: skip
    return rows


# Simultaneous Hog: the ordered solve and plain Shapley value iteration, side by side.
EQUILIBRIUM_GAMES = ((50, 10), (100, 10))


def bench_equilibrium() -> list[dict]:
    """`baselines.equilibrium` (positions by score sum, a fixed point each) against plain
    Shapley value iteration (every position re-solved from the last sweep's values, to 1e-12)
    in the same run, with the largest difference of their values."""
    from baselines.simultaneous import _solved, shapley_value_iteration
    from dice_envs.games.simultaneous_hog import SimultaneousHog

    rows = []
    for goal, dice in EQUILIBRIUM_GAMES:
        _solved.cache_clear()
        ordered = _solved(goal, dice, 6)
        plain = shapley_value_iteration(SimultaneousHog(goal, dice), tol=1e-12)
        difference = float(np.abs(plain.values - ordered.values[:goal, :goal]).max())
        common = {"goal": goal, "max_dice": dice, "positions": goal * goal}
        rows.append({**common, "method": "ordered (baselines.equilibrium)",
                     "seconds": ordered.seconds, "sweeps": 1,
                     "linear_programs": ordered.linear_programs,
                     "saddle_gap": ordered.saddle_gap})  # fmt: skip
        rows.append({**common, "method": "plain Shapley value iteration",
                     "seconds": plain.seconds, "sweeps": plain.sweeps,
                     "linear_programs": plain.linear_programs, "residual": plain.residual,
                     "difference": difference})  # fmt: skip
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


def _before(rev: str, skip_slow: bool, steps: int, repeats: int) -> dict:
    """The benchmark of the code at `rev`, measured now on this machine ({} if it fails)."""
    if not rev:
        return {}
    root = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as scratch:
        tree = Path(scratch) / "before"
        try:
            subprocess.run(
                ["git", "-C", str(root), "worktree", "add", "--detach", str(tree), rev],
                check=True,
                capture_output=True,
            )
        except (subprocess.CalledProcessError, FileNotFoundError) as error:
            print(f"no 'before' columns: {error}", flush=True)
            return {}
        try:
            done = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    BEFORE_SCRIPT,
                    str(int(skip_slow)),
                    str(steps),
                    str(repeats),
                ],
                cwd=tree,
                env={**os.environ, "PYTHONPATH": str(tree)},
                capture_output=True,
                text=True,
            )
        finally:
            subprocess.run(
                ["git", "-C", str(root), "worktree", "remove", "--force", str(tree)],
                capture_output=True,
            )
    if done.returncode != 0:
        print(f"no 'before' columns: {done.stderr.strip()[-300:]}", flush=True)
        return {}
    return json.loads(done.stdout.strip().splitlines()[-1])


def _before_time(before: dict, row: dict) -> str:
    for old in before.get("solves", []):
        same_method = old["method"] == row["method"] or (
            old["method"].split(",")[0] == row["method"].split(",")[0]
        )
        if old["env_id"] == row["env_id"] and old["kwargs"] == row["kwargs"] and same_method:
            return f"{old['seconds'] * 1000:.1f} ms"
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000, help="env steps per repeat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-slow", action="store_true", help="skip the 1-minute generic solve")
    parser.add_argument("--out", type=Path, default=Path("docs"))
    parser.add_argument(
        "--before-rev", default=BEFORE_REV, help="the code to compare with ('' for none)"
    )
    args = parser.parse_args(argv)
    pig = bench_tables(args.skip_slow) + bench_evaluations() + bench_cli()
    solves = bench_two_player() + bench_family() + bench_solves(args.skip_slow)
    chow_robbins = bench_chow_robbins(args.skip_slow)
    envs = bench_envs(args.steps, args.repeats)
    vector = bench_vector_envs(args.repeats)
    ppo = bench_ppo_throughput(rollouts=4)
    exploit = bench_exploitability(repeats=3)
    aec = bench_aec(repeats=3)
    equilibrium = bench_equilibrium()
    before = _before(args.before_rev, args.skip_slow, args.steps, args.repeats)
    pig_rows = [
        [
            r["what"],
            r.get("states", ""),
            f"{r['value']:.6f}" if "value" in r else "",
            f"{r['seconds'] * 1000:.0f} ms",
            f"{r['peak_mb']:.0f} MB" if "peak_mb" in r else "",
        ]
        for r in pig
    ]
    solve_rows = [
        [
            f"`{r['env_id']}`",
            ", ".join(f"{k}={v}" for k, v in r["kwargs"].items()),
            r["method"],
            r["states"] if r["states"] >= 0 else "not enumerated",
            f"{r['value']:.6f}",
            f"{r['seconds'] * 1000:.1f} ms",
            f"{r.get('table_seconds', 0.0) * 1000:.1f} ms",
            _before_time(before, r),
            "not measured (no tables)"
            if np.isnan(r["bellman_residual"])
            else f"{r['bellman_residual']:.1e}",
        ]
        for r in solves
    ]
    chow_rows = [
        [
            f"{r['horizon']:,}",
            "banded (heads - tails within D)" if r["method"] == "banded" else "full",
            f"{r['band']:,}",
            f"{r['value']:.8f}",
            f"{r['seconds']:.3f} s",
            f"{r['ratio_to_banded']:.1f}x",
        ]
        for r in chow_robbins
    ]
    before_envs = {r["env_id"]: r for r in before.get("envs", [])}
    env_rows = [
        [
            f"`{r['env_id']}`",
            f"{r['steps_per_second']:,.0f}",
            f"{r['ratio_to_frozenlake']:.2f}",
            f"{before_envs[r['env_id']]['ratio_to_frozenlake']:.2f}"
            if r["env_id"] in before_envs
            else "",
        ]
        for r in envs
    ]
    vector_rows = [
        [
            f"`{r['env_id']}`",
            f"{r['states']:,}",
            f"{r['outcome_rows']:,}",
            f"{r['build_seconds']:.2f} s",
            f"{r['native_steps_per_second'] / 1e6:.1f}M",
            f"{r['sync_steps_per_second'] / 1e6:.3f}M",
            f"{r['ratio_to_sync']:.0f}x",
            f"{r['native_steps_per_second'] / r['cartpole_steps_per_second']:.2f}",
        ]
        for r in vector
    ]
    cartpole_rate = vector[0]["cartpole_steps_per_second"] if vector else float("nan")
    ppo_rates = {(r["copies"], r["path"]): r["steps_per_second"] for r in ppo}
    ppo_rows = [
        [
            str(copies),
            f"{ppo_rates[copies, 'dummy']:,.0f}",
            f"{ppo_rates[copies, 'native']:,.0f}",
            f"{ppo_rates[copies, 'native'] / ppo_rates[copies, 'dummy']:.2f}x",
        ]
        for copies in PPO_COPIES
    ]
    machine = f"{platform.processor() or platform.machine()}, Python {platform.python_version()}"
    report = (
        f"Measured on {machine}, gymnasium {gym.__version__}.\n\n"
        "### Pig at goal 100 against hold-at-20: tables, exact evaluation, the CLI\n\n"
        + markdown_table(["what", "states", "value", "time", "peak memory"], pig_rows)
        + "\n\n### Solve times (a generic solve includes building its tables; a specialised"
        f" one does not, its tables being built only to measure the residual; 'before': the code"
        f" of {args.before_rev} in the same run, whose times include enumerating the model)\n\n"
        + markdown_table(
            [
                "id",
                "arguments",
                "solver",
                "states",
                "value",
                "time",
                "tables",
                "before",
                "residual",
            ],
            solve_rows,
        )
        + "\n\n### Chow–Robbins: the banded backward pass and the full one (same run; D is the"
        " band's half-width for eps = 1e-14, N for the full pass; time relative to the banded"
        " pass at the same N)\n\n"
        + markdown_table(["N", "pass", "D", "f_N(0)", "time", "vs banded"], chow_rows)
        + f"\n\n### Env steps per second ({args.steps:,} random steps, best of {args.repeats})\n\n"
        + markdown_table(["env", "steps/s", "ratio to FrozenLake-v1", "before"], env_rows)
        + f"\n\n### Vector envs at {VECTOR_COPIES:,} copies (default arguments; uniform random"
        f" actions, next-step autoreset; best of {args.repeats}). Gymnasium's CartPoleVectorEnv"
        f" at {VECTOR_COPIES:,} copies in the same run: {cartpole_rate / 1e6:.1f}M steps/s."
        " 'build': make_vec, tables and alias tables included.\n\n"
        + markdown_table(
            [
                "id",
                "states",
                "outcome rows",
                "build",
                "native steps/s",
                "SyncVectorEnv steps/s",
                "native / sync",
                "native / CartPoleVectorEnv",
            ],
            vector_rows,
        )
        + f"\n\n### PPO training throughput ({PPO_GAME[0]} goal {PPO_GAME[1]['goal']},"
        " MaskablePPO with configs/pig/ppo.yaml's hyperparameters, 4 rollouts and their"
        " updates, one torch thread): steps per second\n\n"
        + markdown_table(["copies", "DummyVecEnv", "native adapter", "speed-up"], ppo_rows)
        + f"\n\n### Exact exploitability at Pig to {EXPLOIT_GOAL} (the whole call, best of 3)\n\n"
        + markdown_table(
            ["policy", "exploitability", "time"],
            [
                [r["what"], f"{r['value']:.6f}" if "value" in r else "", f"{r['seconds']:.2f} s"]
                for r in exploit
            ],
        )
        + f"\n\n### PettingZoo AEC envs: agent moves per second ({AEC_STEPS:,} random legal"
        " moves, best of 3; Shimmy installed by `make bench` only)\n\n"
        + markdown_table(
            ["env", "moves/s", "relative to OpenSpiel pig"],
            [
                [
                    r["env"],
                    r.get("note", f"{r['steps_per_second']:,.0f}"),
                    f"{r['steps_per_second'] / aec[-1]['steps_per_second']:.2f}"
                    if np.isfinite(aec[-1]["steps_per_second"])
                    else "",
                ]
                for r in aec
            ],
        )
        + "\n\n### Simultaneous Hog: the equilibrium of every position (max_dice=10), ordered by"
        " score sum against plain Shapley value iteration, same run\n\n"
        + markdown_table(
            [
                "goal",
                "positions",
                "method",
                "time",
                "per position",
                "sweeps",
                "linear programs",
                "check",
            ],
            [
                [
                    r["goal"],
                    f"{r['positions']:,}",
                    r["method"],
                    f"{r['seconds']:.1f} s",
                    f"{1e3 * r['seconds'] / r['positions']:.2f} ms",
                    r["sweeps"],
                    f"{r['linear_programs']:,}",
                    f"saddle gap {r['saddle_gap']:.1e}"
                    if "saddle_gap" in r
                    else f"last change {r['residual']:.1e}; values differ by {r['difference']:.1e}",
                ]
                for r in equilibrium
            ],
        )  # fmt: skip
        + "\n"
    )
    print(report)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench_results.md").write_text(report)
    if args.out == Path("docs"):
        replace_section("bench", report.replace("### ", "#### "))
    (args.out / "bench_results.json").write_text(
        json.dumps(
            {
                "pig": pig,
                "solves": solves,
                "chow_robbins": chow_robbins,
                "envs": envs,
                "vector_envs": vector,
                "ppo_throughput": ppo,
                "exploitability": exploit,
                "aec": aec,
                "equilibrium": equilibrium,
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

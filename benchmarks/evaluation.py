"""Pig at goal 100: building its tables, exact evaluation (deterministic, stochastic, an SB3
model), the command line, and exact exploitability."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import warnings

import gymnasium as gym
import numpy as np

import baselines
import dice_envs  # noqa: F401  (registers the ids)
from baselines.solvers import PolicySystem
from dice_envs import make_model
from dice_envs.policies import batched
from dice_envs.tables import build_tables

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


def bench_value_errors(repeats: int) -> list[dict]:
    """Pig at goal 100: `baselines.value_errors` of a Q table (Q* with noise, as a learner's)
    and of an untrained MaskablePPO critic acting with its own action distribution; for each,
    the exact evaluation of the acting policy and the time the value errors add to it (the
    issue's bound: 1 s), best of `repeats`. Tables and optimum are built beforehand."""
    from sb3_contrib import MaskablePPO

    tables, optimum = baselines.enumerated("dice_envs/Pig-v0", **PIG_100)
    rng = np.random.default_rng(0)
    q_table = np.full((*tables.model.observation_nvec, tables.num_actions), 0.5)
    noisy = np.where(tables.legal, optimum.q, 0.0) + rng.normal(0.0, 0.01, optimum.q.shape)
    q_table[tuple(tables.observation_array.T)] = noisy
    env = gym.make("dice_envs/Pig-v0", **PIG_100)
    model = MaskablePPO(
        "MlpPolicy", env, seed=0, device="cpu", policy_kwargs={"net_arch": [64, 64]}
    )
    rows = []
    for label, estimates in (("a Q table (Q* + noise)", q_table), ("a MaskablePPO critic", model)):
        evaluation, added, errors = np.inf, np.inf, None
        for _ in range(repeats):
            errors = baselines.value_errors(estimates, "dice_envs/Pig-v0", **PIG_100)
            evaluation = min(evaluation, errors.evaluation.seconds)
            added = min(added, errors.seconds)
        rows.append({"what": f"value errors of {label}: the exact evaluation",
                     "value": errors.evaluation.value, "seconds": evaluation})  # fmt: skip
        rows.append({"what": f"value errors of {label}: added to it", "seconds": added})
        print(f"value errors of {label}: {evaluation:.3f} s + {added:.3f} s", flush=True)
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
    hold_at_20 = np.where(np.indices(grid)[2] < 20, 1, 0).astype(np.int8)
    policies = [
        ("hold-at-20 (named: a table)", "hold-at-20"),
        ("hold-at-20 as an action table", hold_at_20),
        ("hold-at-20 as a batched callable", batched(lambda obs: np.where(obs[:, 2] < 20, 1, 0))),
        ("hold-at-20 as a callable on one observation", lambda obs: int(obs[2] < 20)),
        ("a random action table", (roll < 0.5).astype(np.int8)),
        ("a random probability table (stochastic)", stochastic),
        ("the two-player optimum (named)", "two-player-optimal"),
    ]
    rows = []
    for label, policy in policies:
        best, score = np.inf, None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the slow form's own warning says what is measured
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

"""Solve times: the generic and specialised solvers, the two-player optima of the Pig family
beside their peers, Chow–Robbins' banded pass, Simultaneous Hog's equilibrium."""

from __future__ import annotations

import time

import numpy as np

import baselines
import dice_envs  # noqa: F401  (registers the ids)
from baselines.pig import two_player_optimum
from benchmarks.peers import pig_value_iteration

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
        ("two-player-optimal", "specialised"),
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


def bench_solves(skip_slow: bool) -> list[dict]:
    results = []
    chosen = SOLVES + PIG_SOLVES + TEN_THOUSAND_SOLVES + SOLITAIRE_SOLVES
    chosen += [] if skip_slow else SLOW_SOLVES
    for env_id, kwargs, method in chosen:
        two_player_optimum.cache_clear()  # time the "two-player-optimal" opponent's solve too
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


def two_player_positions(goal: int) -> int:
    """Positions (mover's score i, other's score j, turn total k) a game to `goal` can reach:
    scores 0 or 2.. (a bank is at least 2), turn totals 0 or 2.. with i + k < goal."""
    scores = np.array([0, *range(2, goal)])
    turns = np.array([0, *range(2, goal)])
    per_score = (scores[:, None] + turns[None, :] < goal).sum(axis=1)
    return int(per_score.sum() * len(scores))


def bench_two_player() -> list[dict]:
    """The game-theoretic Pig optimum (both players optimal): layered policy iteration, and
    plain whole-array value iteration (`benchmarks.peers.pig_value_iteration`, to 1e-9) as the
    peer in the same run."""
    results = []
    for goal in (30, 50, 100):
        two_player_optimum.cache_clear()
        optimum = two_player_optimum(goal, (1 / 6,) * 6)
        start = time.perf_counter()
        plain_value, sweeps = pig_value_iteration(goal)
        plain_seconds = time.perf_counter() - start
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

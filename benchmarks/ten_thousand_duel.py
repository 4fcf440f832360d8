"""Benchmark the race to 10,000 at Ten Thousand: the exact solve and best responses.

    python -m benchmarks.ten_thousand_duel [--goal 200] [--small 6 10 20 40 100] [--cold]

Each measurement runs in a fresh interpreter, as a user would run it (imports included in the
wall time), with its peak memory: the two-player optimum at the goal (W(0, 0), policy
iteration counts per two-cycle), then the best responses to `stop-at-20` and to the paper's
optimal solitaire turn (`crocce-mordecki`: `baselines.solve("dice_envs/TenThousand-v0")`,
ties to the lowest action, stopping from 56 chips on), with the time inside the policy
apart, set against a solve with numba's cache warm. `--cold` first removes the solver's numba
cache (`baselines/__pycache__`), so the first solve compiles (then a second, warm, is run).
Prints one JSON object; writes nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

SOLVE_SECONDS_TARGET = 30.0  # the full game in a fresh process (issue 44)
PEAK_MB_TARGET = 2048.0
RESPONSE_RATIO_TARGET = 2.0  # a best response at most twice the solve, policy time excluded

SOLVE = """
import json, resource, time
wall = time.perf_counter()
from baselines.ten_thousand_duel import solve_race
solution = solve_race({goal})
tables = solution.tables
print(json.dumps({{
    "goal": {goal}, "value": solution.value, "solve_seconds": tables.seconds,
    "wall_seconds": time.perf_counter() - wall,
    "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "iterations_max": int(tables.iterations.max()),
    "iterations_mean": float(tables.iterations.mean()),
    "iterations": tables.iteration_histogram(),
}}))
"""

RESPONSE = """
import json, resource, time
import numpy as np
wall = time.perf_counter()
from baselines import solve
from baselines.ten_thousand_duel import best_response, stop_at
from dice_envs.policies import batched
if {policy!r} == "crocce-mordecki":
    solitaire = solve("dice_envs/TenThousand-v0")
    @batched
    def policy(observations):
        turn = observations[:, 2:]
        early = turn[:, 0] < 56
        actions = np.zeros(len(turn), dtype=np.int64)
        actions[early] = solitaire.actions(turn[early])
        return actions
else:
    policy = stop_at(20)
first, second = best_response({goal}, policy)
tables = first.tables
print(json.dumps({{
    "goal": {goal}, "policy": {policy!r}, "as_first": first.value, "as_second": second.value,
    "exploitability": (first.value + second.value) / 2 - 0.5,
    "seconds": tables.seconds, "policy_seconds": tables.policy_seconds,
    "seconds_without_policy": tables.seconds - tables.policy_seconds,
    "wall_seconds": time.perf_counter() - wall,
    "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "iterations_max": int(tables.iterations.max()),
    "iterations_mean": float(tables.iterations.mean()),
}}))
"""


def child(code: str) -> dict:
    """Run `code` in a fresh interpreter from the repository; its last line of JSON."""
    root = Path(__file__).resolve().parents[1]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goal", type=int, default=200, help="the goal in chips (200)")
    parser.add_argument("--small", type=int, nargs="*", default=[6, 10, 20, 40, 100])
    parser.add_argument("--cold", action="store_true", help="remove the numba cache first")
    args = parser.parse_args(argv)
    if args.cold:
        cache = Path(__file__).resolve().parents[1] / "baselines" / "__pycache__"
        for path in cache.glob("ten_thousand_duel.*.nb*"):
            path.unlink()
    full = child(SOLVE.format(goal=args.goal))
    full["cache"] = "cold" if args.cold else "warm"
    warm = child(SOLVE.format(goal=args.goal)) if args.cold else full
    for solve in (full, warm):
        solve["meets_targets"] = (
            solve["wall_seconds"] <= SOLVE_SECONDS_TARGET and solve["peak_mb"] <= PEAK_MB_TARGET
        )
    responses = [
        child(RESPONSE.format(goal=args.goal, policy=name))
        for name in ("stop-at-20", "crocce-mordecki")
    ]
    for response in responses:
        ratio = response["seconds_without_policy"] / warm["solve_seconds"]
        response["ratio_to_solve"] = ratio
        response["meets_target"] = ratio <= RESPONSE_RATIO_TARGET
    small = {goal: child(SOLVE.format(goal=goal))["value"] for goal in args.small}
    result = {"solve": full, "best_responses": responses, "small_goals": small}
    if args.cold:
        result["solve_warm"] = warm
    print(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()

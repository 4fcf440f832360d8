"""Sizes: each operation's estimated peak memory and time (`dice_envs.sizes.estimate`) against
what it measures, each case in a fresh process, so that the rates in `dice_envs.sizes` and
`dice_envs.costs` can be refreshed honestly.

    python -m benchmarks.sizes                 # every case: a table of estimate / measured
    python -m benchmarks.sizes --quick         # the cases under a few seconds
    python -m benchmarks.sizes --json out.json # the rows as JSON too
    python -m benchmarks.sizes --write         # (make bench) docs/bench_sizes.json and the
                                               # "sizes-bench" section of docs/benchmarks.md

A case's peak memory is the high-water mark of its own process (`peak_memory`; imports
included, as the estimate includes `BASE_BYTES`), its time the operation's wall time. A solve
reads the solution's state count and Bellman residual, as `dice-envs solve` prints them (they
may build the tables). Each takes seconds to a minute; the whole run a few minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

Case = tuple[str, str, dict[str, Any], str | None]

# Sizes where the tables dominate the imports, small enough to run in a minute each.
CASES: list[Case] = [
    ("dice_envs/Pig-v0", "evaluate", {"goal": 80}, "hold-at-20"),
    ("dice_envs/Pig-v0", "evaluate", {"goal": 120}, "hold-at-20"),
    ("dice_envs/Pig-v0", "evaluate", {"goal": 160}, "hold-at-20"),
    ("dice_envs/Pig-v0", "solve", {"goal": 120}, None),
    ("dice_envs/Pig-v0", "solve", {"goal": 200}, None),
    ("dice_envs/Pig-v0", "exploitability", {"goal": 100}, "hold-at-20"),
    ("dice_envs/TwoDicePig-v0", "evaluate", {"goal": 60}, "hold-at-20"),
    ("dice_envs/Hog-v0", "evaluate", {"goal": 60}, "five-dice"),
    ("dice_envs/SimultaneousHog-v0", "solve", {"goal": 60}, None),
    ("dice_envs/SimultaneousHog-v0", "equilibrium", {"goal": 60}, None),
    ("dice_envs/PigSolitaire-v0", "evaluate", {"goal": 200}, "hold-at-20"),
    ("dice_envs/HogSolitaire-v0", "evaluate", {"goal": 300}, "five-dice"),
    ("dice_envs/TenThousand-v0", "evaluate", {"max_turn_score": 200}, "stop-at-10"),
    ("dice_envs/SumAvoid-v0", "evaluate", {"N": 10_000}, "stop-at-20"),
    ("dice_envs/DieStopping-v0", "evaluate", {"rolls": 1000, "sides": 60}, "stop-at-4"),
    ("dice_envs/RedBlackCards-v0", "evaluate", {"red": 600, "black": 600}, "stop-at-plus-1"),
    ("dice_envs/ChowRobbins-v0", "evaluate", {"horizon": 1000}, "heads-exceed-tails"),
    ("dice_envs/ChowRobbins-v0", "solve", {"horizon": 100_000}, None),
    ("dice_envs/ChowRobbins-v0", "solve", {"horizon": 1_000_000}, None),
    ("dice_envs/D20Rounds-v0", "evaluate", {"rounds": 20_000}, "take-above-10"),
    ("dice_envs/Yahtzee-v0", "solve", {}, None),
]
QUICK = {0, 3, 6, 9, 10, 11, 13, 20}


def run(case: Case) -> dict[str, Any]:
    """Run one case in this process: its peak memory (bytes) and wall time (seconds)."""
    import baselines

    env_id, operation, kwargs, policy = case
    start = time.perf_counter()
    if operation in ("solve", "play"):
        solution = baselines.solve(env_id, **kwargs)
        for name in ("num_states", "bellman_residual"):  # as `dice-envs solve` prints them
            getattr(solution, name, None)
    elif operation == "evaluate":
        baselines.evaluate(policy, env_id, **kwargs)
    elif operation == "exploitability":
        baselines.exploitability(policy, env_id, **kwargs)
    else:
        baselines.equilibrium(env_id, **kwargs)
    seconds = time.perf_counter() - start
    return {"peak_bytes": peak_memory(), "seconds": seconds}


def peak_memory() -> int:
    """This process's peak resident memory in bytes: Linux's VmHWM, which starts afresh at
    exec. Not `ru_maxrss`: it keeps the high-water mark of the process before its exec, so a
    case started by a large parent (a pytest worker of 1 GB) measured the parent."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # kB on Linux


def measure(case: Case, timeout: float = 900) -> dict[str, Any]:
    """`run(case)` in a fresh Python process (no limit: the measurement may pass it)."""
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.sizes", "--one", json.dumps(case)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=True,
        env={**_environment(), "DICE_ENVS_MAX_MEMORY": "1T"},
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _environment() -> dict[str, str]:
    import os

    return dict(os.environ)


def compare(case: Case) -> dict[str, Any]:
    """The estimate and the measurement of `case`, and their ratios."""
    from dice_envs import sizes

    env_id, operation, kwargs, _ = case
    found = sizes.estimate(env_id, operation, **kwargs)
    measured = measure(case)
    return {
        "env_id": env_id,
        "operation": operation,
        "kwargs": kwargs,
        "estimated_bytes": found.bytes,
        "measured_bytes": measured["peak_bytes"],
        "memory_ratio": found.bytes / measured["peak_bytes"],
        "estimated_seconds": found.seconds,
        "measured_seconds": measured["seconds"],
        "time_ratio": found.seconds / max(measured["seconds"], 1e-3),
        "rows": None if found.size is None else found.size.rows,
        "states": None if found.size is None else found.size.states,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sizes", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the cases under a few seconds")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    parser.add_argument("--only", metavar="TEXT", help="the cases whose id contains TEXT")
    parser.add_argument(
        "--write", action="store_true", help="write docs/bench_sizes.json and the page's table"
    )
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(run(tuple(json.loads(args.one)))))
        return
    cases = [case for i, case in enumerate(CASES) if not args.quick or i in QUICK]
    if args.only:
        cases = [case for case in cases if args.only in case[0]]
    rows = []
    print(f"{'case':<58} {'est MB':>8} {'meas MB':>8} {'ratio':>6} {'est s':>7} {'meas s':>7}")
    for case in cases:
        try:
            row = compare(case)
        except subprocess.CalledProcessError as error:
            print(f"{case}: failed: {error.stderr.strip().splitlines()[-1]}", flush=True)
            continue
        rows.append(row)
        name = f"{case[0].split('/')[1]} {case[1]} {case[2]}"
        print(
            f"{name:<58} {row['estimated_bytes'] / 1e6:8.0f} {row['measured_bytes'] / 1e6:8.0f} "
            f"{row['memory_ratio']:6.2f} {row['estimated_seconds']:7.2f} "
            f"{row['measured_seconds']:7.2f}",
            flush=True,
        )
    ratios = [row["memory_ratio"] for row in rows]
    print(f"memory estimate / measured: {min(ratios):.2f} to {max(ratios):.2f}")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)
    if args.write:
        from docs.tools.readme import BENCHMARKS, DOCS, replace_marked_section

        (DOCS / "bench_sizes.json").write_text(json.dumps(rows, indent=1) + "\n")
        replace_marked_section(BENCHMARKS, "sizes-bench", report(rows))


def report(rows: list[dict[str, Any]]) -> str:
    """The rows as the benchmarks page's table: estimate against measurement, per case."""
    lines = [
        "Each operation's estimate (`dice_envs.sizes.estimate`, read off the arguments before "
        "any work) against its measurement in a fresh process: the peak resident memory "
        "(imports included) and the wall time. The memory check refuses what the estimate "
        "puts over the limit, so a ratio under 1 is the direction that can let too much "
        "through.",
        "",
        "| game | operation | arguments | estimated MB | measured MB | ratio | estimated s "
        "| measured s |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        arguments = (
            ", ".join(
                f"{k}={v:,}" if isinstance(v, int) else f"{k}={v}" for k, v in row["kwargs"].items()
            )
            or "defaults"
        )
        lines.append(
            f"| {row['env_id'].split('/')[1]} | {row['operation']} | {arguments} | "
            f"{row['estimated_bytes'] / 1e6:,.0f} | {row['measured_bytes'] / 1e6:,.0f} | "
            f"{row['memory_ratio']:.2f} | {row['estimated_seconds']:.2f} | "
            f"{row['measured_seconds']:.2f} |"
        )
    ratios = [row["memory_ratio"] for row in rows]
    lines += ["", f"Estimate / measured memory: {min(ratios):.2f} to {max(ratios):.2f}."]
    return "\n".join(lines)


if __name__ == "__main__":
    main()

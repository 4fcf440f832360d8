"""Benchmark the library: tables, solves, exact evaluation, the CLI, and envs beside their peers.

    python -m benchmarks.library [--steps 200000] [--repeats 5] [--skip-slow] [--out docs]

Env speed is measured on unwrapped envs with random actions (`action_space.sample()`), resetting
at each episode end, the envs taking turns over several repeats in the same run; the best repeat
of each counts, and ratios are against FrozenLake-v1 in that same run. Every peer runs in the
same run as what it is compared with; no column compares with older code (to see a change,
run this at both versions on one machine). Writes OUT/bench_results.json, and the report
into the "bench" section of docs/benchmarks.md when OUT is the repository's own docs folder
(the default), else into OUT/bench_results.md.
"""

from __future__ import annotations

import argparse
import json
import platform
from pathlib import Path

import gymnasium as gym
import numpy as np

from benchmarks.envs import (
    AEC_STEPS,
    PPO_COPIES,
    PPO_GAME,
    VECTOR_COPIES,
    bench_aec,
    bench_envs,
    bench_ppo_throughput,
    bench_vector_envs,
)
from benchmarks.evaluation import (
    EXPLOIT_GOAL,
    bench_cli,
    bench_evaluations,
    bench_exploitability,
    bench_tables,
    bench_value_errors,
)
from benchmarks.solves import (
    bench_chow_robbins,
    bench_equilibrium,
    bench_family,
    bench_solves,
    bench_two_player,
)
from docs.tools.game_pages import markdown_table
from docs.tools.readme import BENCHMARKS, DOCS, check_markers, replace_marked_section


def measure(args: argparse.Namespace) -> dict[str, list[dict]]:
    """Every benchmark, in the order they run; the keys of bench_results.json."""
    return {
        "pig": bench_tables(args.skip_slow)
        + bench_evaluations()
        + bench_value_errors(repeats=5)
        + bench_cli(),
        "solves": bench_two_player() + bench_family() + bench_solves(args.skip_slow),
        "chow_robbins": bench_chow_robbins(args.skip_slow),
        "envs": bench_envs(args.steps, args.repeats),
        "vector_envs": bench_vector_envs(args.repeats),
        "ppo_throughput": bench_ppo_throughput(rollouts=4),
        "exploitability": bench_exploitability(repeats=3),
        "aec": bench_aec(repeats=3),
        "equilibrium": bench_equilibrium(),
    }


def pig_section(pig: list[dict]) -> str:
    rows = [
        [
            r["what"],
            r.get("states", ""),
            f"{r['value']:.6f}" if "value" in r else "",
            f"{r['seconds'] * 1000:.0f} ms",
            f"{r['peak_mb']:.0f} MB" if "peak_mb" in r else "",
        ]
        for r in pig
    ]
    return (
        "### Pig at goal 100 against hold-at-20: tables, exact evaluation, value errors,"
        " the CLI\n\n" + markdown_table(["what", "states", "value", "time", "peak memory"], rows)
    )


def solves_section(solves: list[dict]) -> str:
    rows = [
        [
            f"`{r['env_id']}`",
            ", ".join(f"{k}={v}" for k, v in r["kwargs"].items()),
            r["method"],
            r["states"] if r["states"] >= 0 else "not enumerated",
            f"{r['value']:.6f}",
            f"{r['seconds'] * 1000:.1f} ms",
            f"{r.get('table_seconds', 0.0) * 1000:.1f} ms",
            "not measured (no tables)"
            if np.isnan(r["bellman_residual"])
            else f"{r['bellman_residual']:.1e}",
        ]
        for r in solves
    ]
    header = ["id", "arguments", "solver", "states", "value", "time", "tables", "residual"]
    return (
        "### Solve times (a generic solve includes building its tables; a specialised one does"
        " not, its tables being built only to measure the residual)\n\n"
        + markdown_table(header, rows)
    )


def chow_robbins_section(chow_robbins: list[dict]) -> str:
    rows = [
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
    return (
        "### Chow–Robbins: the banded backward pass and the full one (same run; D is the"
        " band's half-width for eps = 1e-14, N for the full pass; time relative to the banded"
        " pass at the same N)\n\n"
        + markdown_table(["N", "pass", "D", "f_N(0)", "time", "vs banded"], rows)
    )


def envs_section(envs: list[dict], steps: int, repeats: int) -> str:
    rows = [
        [f"`{r['env_id']}`", f"{r['steps_per_second']:,.0f}", f"{r['ratio_to_frozenlake']:.2f}"]
        for r in envs
    ]
    return (
        f"### Env steps per second ({steps:,} random steps, best of {repeats})\n\n"
        + markdown_table(["env", "steps/s", "ratio to FrozenLake-v1"], rows)
    )


def vector_section(vector: list[dict], repeats: int) -> str:
    rows = [
        [
            f"`{r['env_id']}`",
            f"{r['states']:,}" if r.get("tables", True) else f"{r['states']:,} turn-start",
            "—" if r["outcome_rows"] is None else f"{r['outcome_rows']:,}",
            f"{r['build_seconds']:.2f} s",
            f"{r['native_steps_per_second'] / 1e6:.1f}M",
            f"{r['sync_steps_per_second'] / 1e6:.3f}M",
            f"{r['ratio_to_sync']:.0f}x",
            f"{r['native_steps_per_second'] / r['cartpole_steps_per_second']:.2f}",
        ]
        for r in vector
    ]
    cartpole = vector[0]["cartpole_steps_per_second"] if vector else float("nan")
    header = [
        "id", "states", "outcome rows", "build", "native steps/s", "SyncVectorEnv steps/s",
        "native / sync", "native / CartPoleVectorEnv",
    ]  # fmt: skip
    return (
        f"### Vector envs at {VECTOR_COPIES:,} copies (default arguments; uniform random"
        f" actions, next-step autoreset; best of {repeats}). Gymnasium's CartPoleVectorEnv"
        f" at {VECTOR_COPIES:,} copies in the same run: {cartpole / 1e6:.1f}M steps/s."
        " 'build': make_vec, tables and alias tables included. A game without tables has no"
        " outcome rows ('—'): Yahtzee's 'states' are its turn-start states (each with a"
        " three-roll turn inside), the Ten Thousand race's its pairs of banked scores (each"
        " with a turn inside); their native envs sample the model's rules.\n\n"
        + markdown_table(header, rows)
    )


def ppo_section(ppo: list[dict]) -> str:
    rates = {(r["copies"], r["path"]): r["steps_per_second"] for r in ppo}
    rows = [
        [
            str(copies),
            f"{rates[copies, 'dummy']:,.0f}",
            f"{rates[copies, 'native']:,.0f}",
            f"{rates[copies, 'native'] / rates[copies, 'dummy']:.2f}x",
        ]
        for copies in PPO_COPIES
    ]
    return (
        f"### PPO training throughput ({PPO_GAME[0]} goal {PPO_GAME[1]['goal']},"
        " MaskablePPO with configs/pig/ppo.yaml's hyperparameters, 4 rollouts and their"
        " updates, one torch thread): steps per second\n\n"
        + markdown_table(["copies", "DummyVecEnv", "native adapter", "speed-up"], rows)
    )


def exploitability_section(exploit: list[dict]) -> str:
    rows = [
        [r["what"], f"{r['value']:.6f}" if "value" in r else "", f"{r['seconds']:.2f} s"]
        for r in exploit
    ]
    seconds = {r["what"]: r["seconds"] for r in exploit}
    table = seconds["hold-at-20 as an action table"]
    fast = seconds["hold-at-20 as a batched callable"]
    slow = seconds["hold-at-20 as a callable on one observation"]
    return (
        f"### Exact exploitability at Pig to {EXPLOIT_GOAL} (the whole call, best of 3)\n\n"
        + markdown_table(["policy", "exploitability", "time"], rows)
        + f"\n\nThe same policy as a batched callable takes {fast / table:.2f}x the time of its "
        f"action table, and as a callable on one observation {slow / table:.1f}x: it is asked "
        "once per observation of the opponent's grid, which the warning it gives names."
    )


def aec_section(aec: list[dict]) -> str:
    peer = aec[-1]["steps_per_second"]  # OpenSpiel's pig (NaN when Shimmy is missing)
    rows = [
        [
            r["env"],
            r.get("note", f"{r['steps_per_second']:,.0f}"),
            f"{r['steps_per_second'] / peer:.2f}" if np.isfinite(peer) else "",
        ]
        for r in aec
    ]
    return (
        f"### PettingZoo AEC envs: agent moves per second ({AEC_STEPS:,} random legal"
        " moves, best of 3; Shimmy installed by `make bench` only)\n\n"
        + markdown_table(["env", "moves/s", "relative to OpenSpiel pig"], rows)
    )


def equilibrium_section(equilibrium: list[dict]) -> str:
    rows = [
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
    ]
    header = [
        "goal", "positions", "method", "time", "per position", "sweeps", "linear programs",
        "check",
    ]  # fmt: skip
    return (
        "### Simultaneous Hog: the equilibrium of every position (max_dice=10), ordered by"
        " score sum against plain Shapley value iteration, same run\n\n"
        + markdown_table(header, rows)
    )


def report_text(results: dict[str, list[dict]], steps: int, repeats: int) -> str:
    """The report's Markdown: the "bench" section of docs/benchmarks.md, or OUT/bench_results.md."""
    machine = f"{platform.processor() or platform.machine()}, Python {platform.python_version()}"
    sections = [
        f"Measured on {machine}, gymnasium {gym.__version__}.",
        pig_section(results["pig"]),
        solves_section(results["solves"]),
        chow_robbins_section(results["chow_robbins"]),
        envs_section(results["envs"], steps, repeats),
        vector_section(results["vector_envs"], repeats),
        ppo_section(results["ppo_throughput"]),
        exploitability_section(results["exploitability"]),
        aec_section(results["aec"]),
        equilibrium_section(results["equilibrium"]),
    ]
    return "\n\n".join(sections) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000, help="env steps per repeat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--skip-slow", action="store_true", help="skip the 1-minute generic solve")
    parser.add_argument("--out", type=Path, default=DOCS, help="the docs folder (default: docs)")
    args = parser.parse_args(argv)
    to_repository = args.out.resolve() == DOCS
    if to_repository:
        check_markers(BENCHMARKS, "bench")  # refused before the minutes of measuring
    results = measure(args)
    report = report_text(results, args.steps, args.repeats)
    print(report)
    args.out.mkdir(parents=True, exist_ok=True)
    if to_repository:
        replace_marked_section(BENCHMARKS, "bench", report)
    else:
        (args.out / "bench_results.md").write_text(report)
    (args.out / "bench_results.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

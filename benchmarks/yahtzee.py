"""Benchmark full-game Yahtzee: the three joker rules' optima and its envs' speed.

    python -m benchmarks.yahtzee [--steps 200000] [--repeats 5] [--out docs] [--json]

Each optimum is solved in a fresh interpreter, as a user would run it (imports included in
the wall time), with its CPU time and peak memory; the "verhoeff" one must reproduce the
published optimum 254.5896 (Verhoeff 1999; Glenn 2006) to 1e-4, else the exit status is 1.
Then, in one run: the single env's steps per second beside FrozenLake-v1's, and the native
vector env at 4,096 copies beside SyncVectorEnv over the same env. Each is set against the
targets of the Yahtzee issue. Writes OUT/bench_yahtzee.json; with the repository's own docs
folder (the default) also the "yahtzee-bench" section of docs/benchmarks.md, else
OUT/bench_yahtzee.md. `--json` prints the results as one JSON object instead of the report.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from benchmarks.envs import VECTOR_COPIES, bench_envs, vector_row
from benchmarks.output import write_results, writes_to_repository
from docs.tools.game_pages import markdown_table
from docs.tools.readme import BENCHMARKS, DOCS, check_markers

ENV_ID = "dice_envs/Yahtzee-v0"
JOKERS = ("verhoeff", "forced", "free")
PUBLISHED_OPTIMUM = 254.5896  # Verhoeff (1999), Glenn (2006)
SOLVE_SECONDS_TARGET = 20.0  # in a fresh process, imports included
PEAK_MB_TARGET = 2048.0
VECTOR_RATE_TARGET = 5e6  # steps per second at 4,096 copies
VECTOR_RATIO_TARGET = 30.0  # times SyncVectorEnv
COMPILED_SOLVE_SECONDS = 1.0  # what compiled Yahtzee solvers take, for the comparison

CHILD = """
import json, resource, time
wall = time.perf_counter(); cpu = time.process_time()
from baselines.yahtzee import solve_yahtzee
solution = solve_yahtzee(joker={joker!r})
print(json.dumps({{
    "joker": {joker!r},
    "value": solution.value,
    "turn_start_states": solution.num_states,
    "solve_seconds": solution.seconds,
    "wall_seconds_with_imports": time.perf_counter() - wall,
    "cpu_seconds": time.process_time() - cpu,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
}}))
"""


EVALUATION_CHILD = """
import json, os, resource, time
import numba
import numpy as np
from baselines.yahtzee import solve_yahtzee
from baselines.yahtzee_evaluation import evaluate_yahtzee
from dice_envs.policies import batched
solution = solve_yahtzee(joker="forced")
deterministic = True
if {policy!r} == "numpy":
    def keep_high_then_last_open(obs):  # reroll dice below 4, else score in the last open box
        faces = np.repeat(np.tile(np.arange(1, 7), (len(obs), 1)).ravel(), obs[:, :6].ravel())
        low = ((faces.reshape(len(obs), 5) < 4) << np.arange(5)).sum(axis=1)
        last_open = 12 - np.argmin(obs[:, 19:6:-1], axis=1)
        return np.where((obs[:, 6] > 0) & (low > 0), low, 32 + last_open)
    policy = batched(keep_high_then_last_open)
else:
    import gymnasium as gym, torch
    from sb3_contrib import MaskablePPO
    torch.set_num_threads(len(os.sched_getaffinity(0)))  # as a run evaluates
    torch.manual_seed(0)
    policy = MaskablePPO("MlpPolicy", gym.make("dice_envs/Yahtzee-v0"), seed=0,
                         policy_kwargs=dict(net_arch={net_arch!r}), device="cpu")
    deterministic = {policy!r} == "maskable-ppo"
evaluation = evaluate_yahtzee(policy, solution=solution, deterministic=deterministic)
print(json.dumps({{
    "policy": {policy!r},
    "value": evaluation.value,
    "solve_seconds": solution.seconds,
    "evaluation_seconds": evaluation.seconds,
    "policy_seconds": evaluation.policy_seconds,
    "decisions_asked": evaluation.decisions_asked,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    "cpu_seconds": time.process_time(),
    "numba_threads": numba.get_num_threads(),
}}))
"""
# The policies evaluated: a numpy rule, then configs/yahtzee/ppo.yaml's network (untrained:
# the time depends on the network's size and the decisions its play reaches), greedy and by
# its action distribution (deterministic=False).
EVALUATION_POLICIES = ("numpy", "maskable-ppo", "maskable-ppo-stochastic")
NET_ARCH = [128, 128]
EVALUATION_SOLVES_TARGET = 2.0  # a batched policy: at most 2x the solve plus its inference
MASKABLE_SECONDS_TARGET = 600.0

DECISIONS_CHILD = """
import json, os, time
import gymnasium as gym
import numpy as np
import torch
torch.set_num_threads(len(os.sched_getaffinity(0)))
from sb3_contrib import MaskablePPO
from baselines.yahtzee_evaluation import policy_asker
from dice_envs.games.yahtzee import Yahtzee
torch.manual_seed(0)
model = MaskablePPO("MlpPolicy", gym.make("dice_envs/Yahtzee-v0"), seed=0,
                    policy_kwargs=dict(net_arch={net_arch!r}), device="cpu")
# Decisions of every kind: whole games of uniformly random legal play.
env = gym.make_vec("dice_envs/Yahtzee-v0", num_envs=-(-{batch} // 39))
obs, info = env.reset(seed=0)
rng = np.random.default_rng(0)
seen, masks = [], []
for _ in range(39):
    legal = info["action_mask"].astype(bool)
    seen.append(obs); masks.append(legal)
    obs, _, _, _, info = env.step((rng.random(legal.shape) * legal).argmax(axis=1))
obs, masks = np.concatenate(seen)[:{batch}], np.concatenate(masks)[:{batch}]
greedy = policy_asker(model, Yahtzee())
played = policy_asker(model, Yahtzee(), deterministic=False)
def best_seconds(ask):
    times = []
    for _ in range({repeats}):
        start = time.perf_counter(); answer = ask(); times.append(time.perf_counter() - start)
    return min(times), answer
fast, actions = best_seconds(lambda: greedy.ask(obs, masks))
sb3, expected = best_seconds(lambda: model.predict(obs, deterministic=True, action_masks=masks)[0])
assert (actions == expected).all()
fast_probs, probs = best_seconds(lambda: played.ask(obs, masks))
def sb3_distribution():
    with torch.no_grad():
        tensor = model.policy.obs_to_tensor(obs)[0]
        return model.policy.get_distribution(tensor, action_masks=masks).distribution.probs
sb3_probs, expected = best_seconds(sb3_distribution)
assert (probs == expected.numpy().astype(np.float64)).all()
per_million = 1e6 / len(obs)
print(json.dumps({{
    "decisions": len(obs), "torch_threads": torch.get_num_threads(),
    "greedy_seconds_per_million": fast * per_million,
    "predict_seconds_per_million": sb3 * per_million,
    "stochastic_seconds_per_million": fast_probs * per_million,
    "get_distribution_seconds_per_million": sb3_probs * per_million,
}}))
"""
DECISION_BATCH = 65_536  # `baselines.policy_forms.PREDICT_BATCH`: the evaluation's batches


def evaluate_in_fresh_process(policy: str) -> dict:
    """One full-game exact evaluation in a new interpreter (the solve measured beside it)."""
    child = EVALUATION_CHILD.format(policy=policy, net_arch=NET_ARCH)
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def decisions_in_fresh_process(repeats: int) -> dict:
    """The network's time per million decisions through the evaluation's fast path and
    through SB3's `predict` (and `get_distribution`), on one batch of real decisions."""
    child = DECISIONS_CHILD.format(net_arch=NET_ARCH, batch=DECISION_BATCH, repeats=repeats)
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def evaluation_table(rows: list[dict], decisions: dict) -> str:
    """Each evaluation against its target: the numpy policy's time without its inference
    within 2x the solve; each of the MaskablePPO network's whole times within 10 minutes;
    then its time per million decisions beside SB3's own calls."""
    lines = []
    net = f"{len(NET_ARCH)}x{NET_ARCH[0]}" if len(set(NET_ARCH)) == 1 else str(NET_ARCH)
    for r in rows:
        own = r["evaluation_seconds"] - r["policy_seconds"]
        if r["policy"] == "numpy":
            what = "numpy policy"
            target = (
                f"at most {EVALUATION_SOLVES_TARGET:.0f}x the solve ({r['solve_seconds']:.1f} s)"
            )
            ok = own <= EVALUATION_SOLVES_TARGET * r["solve_seconds"]
        else:
            what = f"{net} MaskablePPO, " + (
                "its action distribution" if r["policy"].endswith("stochastic") else "greedy"
            )
            target = f"at most {MASKABLE_SECONDS_TARGET / 60:.0f} min in all"
            ok = r["evaluation_seconds"] <= MASKABLE_SECONDS_TARGET
        lines.append([
            f"exact evaluation, {what} ({r['decisions_asked']:,} decisions asked)",
            f"{r['evaluation_seconds']:.0f} s: {r['policy_seconds']:.0f} s asking the policy,"
            f" {own:.1f} s its own work ({own / r['solve_seconds']:.2f}x the solve's"
            f" {r['solve_seconds']:.1f} s)",
            target,
            _met(ok),
        ])  # fmt: skip
    d = decisions
    for kind, fast, sb3, call in (
        ("greedy", "greedy", "predict", "`predict`"),
        ("its action distribution", "stochastic", "get_distribution", "`get_distribution`"),
    ):
        ratio = d[f"{sb3}_seconds_per_million"] / d[f"{fast}_seconds_per_million"]
        lines.append([
            f"a million decisions of the {net} MaskablePPO, {kind} (batches of"
            f" {d['decisions']:,} decisions of every kind, {d['torch_threads']} torch threads)",
            f"{d[f'{fast}_seconds_per_million']:.2f} s; SB3's {call}"
            f" {d[f'{sb3}_seconds_per_million']:.2f} s ({ratio:.1f}x as long), the same answers",
            "no target",
            "",
        ])  # fmt: skip
    return markdown_table(["what", "measured", "target", "status"], lines)


def solve_in_fresh_process(joker: str) -> dict:
    """One full solve in a new interpreter, as a user would run it."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(joker=joker)],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(steps: int, repeats: int) -> dict:
    """The solves, then the single env beside FrozenLake-v1 and the vector env beside
    SyncVectorEnv, all in this run."""
    solves = [solve_in_fresh_process(joker) for joker in JOKERS]
    envs = bench_envs(steps, repeats, [("FrozenLake-v1", {}), (ENV_ID, {})])
    return {
        "solves": solves,
        "published_optimum_reproduced": abs(solves[0]["value"] - PUBLISHED_OPTIMUM) <= 1e-4,
        "env": envs[-1],
        "vector_env": vector_row(ENV_ID, repeats),
        "evaluations": [evaluate_in_fresh_process(policy) for policy in EVALUATION_POLICIES],
        "decisions": decisions_in_fresh_process(repeats),
    }


def _met(ok: bool) -> str:
    return "met" if ok else "missed"


def solves_table(solves: list[dict]) -> str:
    rows = [
        [
            f'`joker="{r["joker"]}"`',
            f"{r['value']:.6f}",
            f"{r['turn_start_states']:,}",
            f"{r['solve_seconds']:.2f} s",
            f"{r['wall_seconds_with_imports']:.2f} s",
            f"{r['cpu_seconds']:.2f} s",
            f"{r['peak_rss_mb']:.0f} MB",
        ]
        for r in solves
    ]
    header = [
        "joker rule", "optimum", "turn-start states", "solve", "fresh process (imports"
        " included)", "CPU", "peak memory",
    ]  # fmt: skip
    return markdown_table(header, rows)


def speed_table(results: dict) -> str:
    slowest = max(results["solves"], key=lambda r: r["wall_seconds_with_imports"])
    biggest = max(r["peak_rss_mb"] for r in results["solves"])
    env, vector = results["env"], results["vector_env"]
    rate, ratio = vector["native_steps_per_second"], vector["ratio_to_sync"]
    rows = [
        [
            "an optimum in a fresh process (the slowest of the three)",
            f"{slowest['wall_seconds_with_imports']:.2f} s",
            f"at most {SOLVE_SECONDS_TARGET:.0f} s",
            _met(slowest["wall_seconds_with_imports"] <= SOLVE_SECONDS_TARGET),
        ],
        [
            "its peak memory (the largest of the three)",
            f"{biggest:.0f} MB",
            f"at most {PEAK_MB_TARGET / 1024:.0f} GB",
            _met(biggest <= PEAK_MB_TARGET),
        ],
        [
            f"single env: {env['steps_per_second']:,.0f} steps/s",
            f"{env['ratio_to_frozenlake']:.2f}x FrozenLake-v1",
            "at least 1x",
            _met(env["ratio_to_frozenlake"] >= 1.0),
        ],
        [
            f"native vector env at {VECTOR_COPIES:,} copies",
            f"{rate / 1e6:.1f}M steps/s",
            f"at least {VECTOR_RATE_TARGET / 1e6:.0f}M",
            _met(rate >= VECTOR_RATE_TARGET),
        ],
        [
            f"the same beside SyncVectorEnv ({vector['sync_steps_per_second'] / 1e6:.3f}M steps/s)",
            f"{ratio:.0f}x",
            f"at least {VECTOR_RATIO_TARGET:.0f}x",
            _met(ratio >= VECTOR_RATIO_TARGET),
        ],
    ]
    return markdown_table(["what", "measured", "target", "status"], rows)


def report_text(results: dict, steps: int, repeats: int) -> str:
    """The report's Markdown: the "yahtzee-bench" section of docs/benchmarks.md."""
    solves = results["solves"]
    fastest = min(r["solve_seconds"] for r in solves)
    reproduced = "reproduces" if results["published_optimum_reproduced"] else "does NOT reproduce"
    threads = results["evaluations"][0].get("numba_threads", "?")
    return (
        "### Yahtzee: the three optima, each solved in a fresh process\n\n"
        + solves_table(solves)
        + f"\n\nThe `verhoeff` optimum {reproduced} the published {PUBLISHED_OPTIMUM}"
        " (Verhoeff 1999; Glenn 2006) to 1e-4. The solver is numpy only (no compiled path):"
        f" its fastest solve took {fastest:.1f} s, {fastest / COMPILED_SOLVE_SECONDS:.0f}"
        " times the about one second of compiled Yahtzee solvers. Its time goes to numpy"
        " operations over chunks of at most 256 turn-start states: gathering the next states'"
        " values for every box and dice multiset, then the three rolls inside each turn (252"
        " dice multisets, 462 keeps), each operation writing a whole intermediate array.\n\n"
        f"### Yahtzee: speed against its targets ({steps:,} random single-env steps, best of"
        f" {repeats}, FrozenLake-v1 in the same run; vector envs under uniform random actions,"
        f" next-step autoreset, best of {repeats})\n\n" + speed_table(results) + "\n\n"
        "### Yahtzee: exact evaluation of a policy (full game, forced joker rule, each in a"
        " fresh process; the time asking the policy is the time inside its calls, building"
        " its observations and masks is the evaluation's own; the evaluation's compiled loops"
        f" run on {threads} numba threads, the solve on one)\n\n"
        + evaluation_table(results["evaluations"], results["decisions"])
        + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200_000, help="env steps per repeat")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=DOCS, help="the docs folder (default: docs)")
    parser.add_argument("--json", action="store_true", help="one JSON object on stdout")
    args = parser.parse_args(argv)
    if writes_to_repository(args.out):
        check_markers(BENCHMARKS, "yahtzee-bench")  # refused before the measuring
    results = measure(args.steps, args.repeats)
    report = report_text(results, args.steps, args.repeats)
    print(json.dumps(results) if args.json else report)
    write_results(args.out, "bench_yahtzee", "yahtzee-bench", results, report)
    return 0 if results["published_optimum_reproduced"] else 1


if __name__ == "__main__":
    raise SystemExit(main())

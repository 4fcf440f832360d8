"""How much less noisy the sampled gap is than the mean score, far from and near the optimum.

    python -m benchmarks.sampled_gap [--episodes 1000] [--table-episodes 10000] [--seed 0]
                                     [--out docs] [--json] [--no-yahtzee-exact]

For each policy, one call of `baselines.estimate_gap` plays the episodes and gives both the
sampled gap (exact regrets summed along each episode) and the plain mean of the same
episodes' scores, each with its standard error; the ratio of the two standard errors is what
the sampled gap saves (the episodes needed for the same precision shrink by its square). On
Yahtzee (default joker rule) the aim is a ratio of at least 5 for a policy within 10 % of the
optimum; the exit status is 1 if no such policy reaches it. Every row has its exact gap
(`baselines.evaluate`; on Yahtzee the full-game exact evaluation, minutes per policy, which
`--no-yahtzee-exact` leaves out) beside the estimate. Every row also holds
the check E[score + summed regrets] = V*. With the repository's own docs folder (the default)
it writes the "sampled-gap" section of docs/results/sampled_gap.md, else OUT/sampled_gap.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import baselines
from baselines.yahtzee_sampled import yahtzee_action_values, yahtzee_positions, yahtzee_solution
from dice_envs.games.yahtzee import REROLL_LEGAL, Yahtzee
from dice_envs.policies import batched
from docs.tools.game_pages import markdown_table
from docs.tools.readme import DOCS, check_markers, replace_marked_section

YAHTZEE = "dice_envs/Yahtzee-v0"
PAGE = DOCS / "results" / "sampled_gap.md"
SECTION = "sampled-gap"
RATIO_TARGET = 5.0  # the requirement: score SE / sampled-gap SE, within 10 % of the optimum
NEAR = 0.10  # "within 10 % of the optimum": relative gap at most this


def yahtzee_legal(observations: np.ndarray, model: Yahtzee) -> np.ndarray:
    """(n, 45) the legal actions at a batch of Yahtzee observations (the env's mask)."""
    positions = yahtzee_positions(observations)
    legal = np.zeros((len(positions), 45), dtype=bool)
    legal[:, :32] = REROLL_LEGAL[positions[:, 3]] & (positions[:, 4] > 0)[:, None]
    legal[:, 32:] = model.scoring_many(positions[:, 0], positions[:, 3]).legal
    return legal


def observation_hash(observations: np.ndarray) -> np.ndarray:
    """(n,) a fixed pseudo-random number in [0, 1) per observation row (a 64-bit multiply-xor
    mix of its entries), the same every time the observation is seen."""
    mixed = np.full(len(observations), 0x9E3779B97F4A7C15, dtype=np.uint64)
    for column in np.asarray(observations, dtype=np.int64).T.astype(np.uint64):
        mixed = (mixed ^ column) * np.uint64(0xBF58476D1CE4E5B9)
        mixed ^= mixed >> np.uint64(31)
    return (mixed >> np.uint64(11)).astype(np.float64) / 2.0**53


def second_best_actions(q: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """(n,) the best legal action other than the optimal one (the lowest-numbered best), or
    the optimal one where it is the only legal action."""
    values = np.where(legal, q, -np.inf)
    best = values.argmax(axis=1)
    values[np.arange(len(values)), best] = -np.inf
    second = values.argmax(axis=1)
    return np.where(np.isfinite(values.max(axis=1)), second, best)


def yahtzee_policies(joker: str, boxes: list[str] | None = None) -> dict[str, Any]:
    """Yahtzee policies far from and near the optimum, by name: every one deterministic or
    given by its action probabilities, so that `baselines.evaluate` scores it exactly
    (`boxes`: a reduced game, for the tests)."""
    model = Yahtzee(joker=joker, boxes=boxes)
    kwargs = {"joker": joker} if boxes is None else {"joker": joker, "boxes": boxes}
    solution = yahtzee_solution(YAHTZEE, **kwargs)

    def uniform(obs: np.ndarray) -> np.ndarray:
        legal = yahtzee_legal(obs, model).astype(float)
        return legal / legal.sum(axis=1, keepdims=True)

    def optimal(obs: np.ndarray) -> np.ndarray:
        q = yahtzee_action_values(solution, obs)
        return np.where(np.isnan(q), -np.inf, q).argmax(axis=1)

    def epsilon_optimal(epsilon: float) -> Callable[[np.ndarray], np.ndarray]:
        def probabilities(obs: np.ndarray) -> np.ndarray:
            probs = epsilon * uniform(obs)
            probs[np.arange(len(obs)), optimal(obs)] += 1.0 - epsilon
            return probs

        return probabilities

    def blunders(share: float) -> Callable[[np.ndarray], np.ndarray]:
        """Optimal, but at a fixed pseudo-random `share` of the observations a legal action
        drawn by a hash of the observation: a deterministic policy with mistakes."""

        def actions(obs: np.ndarray) -> np.ndarray:
            chosen, legal, draw = optimal(obs), yahtzee_legal(obs, model), observation_hash(obs)
            wrong = np.flatnonzero(draw < share)
            counts = legal[wrong].sum(axis=1)
            pick = (draw[wrong] / share * counts).astype(np.int64)
            chosen[wrong] = (np.cumsum(legal[wrong], axis=1) > pick[:, None]).argmax(axis=1)
            return chosen

        return actions

    def second_best(share: float) -> Callable[[np.ndarray], np.ndarray]:
        """Optimal, but the second-best legal action at a fixed pseudo-random `share` of the
        observations: a deterministic policy whose mistakes are small."""

        def actions(obs: np.ndarray) -> np.ndarray:
            q, legal = yahtzee_action_values(solution, obs), yahtzee_legal(obs, model)
            chosen = np.where(legal, q, -np.inf).argmax(axis=1)
            wrong = observation_hash(obs) < share
            chosen[wrong] = second_best_actions(q[wrong], legal[wrong])
            return chosen

        return actions

    return {
        "uniform random legal action (stochastic)": batched(uniform),
        "score-at-once (named policy)": "score-at-once",
        "greedy-turn (named policy)": "greedy-turn",
        "optimal, random legal action at 20 % of steps (stochastic)": batched(epsilon_optimal(0.2)),
        "optimal, random legal action at 5 % of steps (stochastic)": batched(epsilon_optimal(0.05)),
        "optimal, a hashed legal action at 5 % of observations (deterministic)": batched(
            blunders(0.05)
        ),
        "optimal, a hashed legal action at 1 % of observations (deterministic)": batched(
            blunders(0.01)
        ),
        "optimal, the second-best action at 5 % of observations (deterministic)": batched(
            second_best(0.05)
        ),
    }


def epsilon_optimal_table(env_id: str, epsilon: float, **kwargs: Any) -> np.ndarray:
    """A game with tables: its optimal policy, a uniformly random legal action with
    probability `epsilon`, as a table of probabilities over the observation grid."""
    tables, optimum = baselines.enumerated(env_id, **kwargs)
    legal = tables.legal.astype(float)
    probs = epsilon * legal / legal.sum(axis=1, keepdims=True)
    probs[np.arange(tables.num_states), optimum.policy] += 1.0 - epsilon
    table = np.full(tuple(tables.model.observation_nvec) + (tables.num_actions,), 0.0)
    table[..., 0] = 1.0  # observations no reachable state shows: any probabilities
    table[tuple(tables.observation_array.T)] = probs
    return table


TABLE_GAMES = [
    ("dice_envs/SumAvoid-v0", {}, ["stop-at-20", "stop-at-25"]),
    ("dice_envs/Pig-v0", {}, ["hold-at-25", "keep-pace"]),
]


def measure(
    env_id: str, kwargs: dict, name: str, policy: Any, episodes: int, seed: int, exact: bool
) -> dict:
    """One policy's sampled gap, its score mean, the ratio of their standard errors, and (if
    `exact`) its exact gap (`baselines.evaluate`; on Yahtzee the full-game evaluation, from
    minutes to most of an hour per policy on a loaded machine)."""
    estimate = baselines.estimate_gap(policy, env_id, episodes=episodes, seed=seed, **kwargs)
    total = estimate.episode_scores + estimate.episode_gaps
    start = time.perf_counter()
    evaluation = baselines.evaluate(policy, env_id, **kwargs) if exact else None
    exact_seconds = time.perf_counter() - start
    arguments = ", ".join(f"{k}={v!r}" for k, v in kwargs.items())
    return {
        "game": f"{env_id.split('/')[1]}({arguments})",
        "policy": name,
        "episodes": episodes,
        "optimal_value": estimate.optimal_value,
        "exact_gap": None if evaluation is None else evaluation.gap,
        "exact_relative_gap": None if evaluation is None else evaluation.relative_gap,
        "exact_seconds": None if evaluation is None else exact_seconds,
        "gap": estimate.mean,
        "gap_se": estimate.standard_error,
        "low": estimate.interval[0],
        "high": estimate.interval[1],
        "relative_gap": estimate.mean / abs(estimate.optimal_value),
        "score": estimate.score_mean,
        "score_se": estimate.score_standard_error,
        "ratio": estimate.score_standard_error / estimate.standard_error,
        "check": float(total.mean() - estimate.optimal_value),
        "check_se": float(total.std(ddof=1) / np.sqrt(episodes)),
        "seconds": estimate.seconds,
    }


def run(
    episodes: int, table_episodes: int, seed: int, joker: str = "forced", yahtzee_exact=True
) -> list[dict]:
    """Every row: the Yahtzee policies (exact gaps only if `yahtzee_exact`), then the games
    with tables (always exact)."""
    rows = []
    for name, policy in yahtzee_policies(joker).items():
        rows.append(measure(YAHTZEE, {"joker": joker}, name, policy, episodes, seed, yahtzee_exact))
        print(f"{name}: ratio {rows[-1]['ratio']:.2f}", file=sys.stderr)
    for env_id, kwargs, names in TABLE_GAMES:
        policies = {name: name for name in names}
        for epsilon in (0.2, 0.05):
            label = f"optimal, random legal action at {100 * epsilon:g} % of steps (stochastic)"
            policies[label] = epsilon_optimal_table(env_id, epsilon, **kwargs)
        for name, policy in policies.items():
            rows.append(measure(env_id, kwargs, name, policy, table_episodes, seed, True))
    return rows


def _number(value: float | None, digits: int = 4) -> str:
    return "–" if value is None else f"{value:.{digits}g}"


def _seconds(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.1f} s" if value >= 0.1 else f"{1000 * value:.1f} ms"


def near_optimum(rows: list[dict]) -> list[dict]:
    """The Yahtzee rows of policies within `NEAR` of the optimum by their exact relative gap
    (by their sampled one where it was not evaluated exactly)."""
    return [r for r in rows if r["game"].startswith("Yahtzee") and _relative_gap(r) <= NEAR]


def _relative_gap(row: dict) -> float:
    exact = row["exact_relative_gap"]
    return row["gap"] / abs(row["optimal_value"]) if exact is None else exact


def _relative_gap_cell(row: dict) -> str:
    cell = f"{100 * _relative_gap(row):.2f} %"
    return cell if row["exact_relative_gap"] is not None else cell + " (sampled)"


def verdict(rows: list[dict]) -> str:
    """Which Yahtzee policies within 10 % of the optimum reach the ratio the aim sets."""
    near = near_optimum(rows)
    reached = [f"{r['policy']} ({r['ratio']:.1f})" for r in near if r["ratio"] >= RATIO_TARGET]
    short = [r for r in near if r["ratio"] < RATIO_TARGET]
    missed = [f"{r['policy']} ({r['ratio']:.1f})" for r in short]
    text = (
        f"Yahtzee, policies within {100 * NEAR:g} % of the optimum (by their exact relative "
        f"gap, else their sampled one): the aim is a sampled gap whose standard error is "
        f"at least {RATIO_TARGET:g} "
        "times smaller than the score mean's. Reached by: "
        f"{'; '.join(reached) or 'none'}. Not reached by: "
        f"{'; '.join(missed) or 'none'}."
    )
    if any("(deterministic)" in r["policy"] for r in short):
        text += (
            " A deterministic policy's mistakes are not averaged over its action "
            "probabilities: each costs its full regret, so mistakes of large regret at random "
            "observations give a few large terms per episode whose number varies."
        )
    return text


def report(rows: list[dict], seed: int) -> str:
    header = [
        "game", "policy", "episodes", "exact gap", "relative gap", "sampled gap ± SE",
        "95 % interval", "score mean ± SE", "SE ratio", "score + gap − V* (SE)", "time",
        "exact time",
    ]  # fmt: skip
    table = [
        [
            row["game"],
            row["policy"],
            f"{row['episodes']:,}",
            _number(row["exact_gap"]),
            _relative_gap_cell(row),
            f"{row['gap']:.4g} ± {row['gap_se']:.2g}",
            f"[{row['low']:.4g}, {row['high']:.4g}]",
            f"{row['score']:.4g} ± {row['score_se']:.2g}",
            f"**{row['ratio']:.1f}**",
            f"{row['check']:+.2g} ({row['check_se']:.2g})",
            f"{row['seconds']:.1f} s",
            _seconds(row["exact_seconds"]),
        ]
        for row in rows
    ]
    exact = [r for r in rows if r["exact_gap"] is not None]
    covered = sum(r["low"] <= r["exact_gap"] <= r["high"] for r in exact)
    missing = len(rows) - len(exact)
    not_evaluated = (
        f" –: not evaluated exactly in this run (`--no-yahtzee-exact`; {missing} rows)."
        if missing
        else ""
    )
    return (
        f"Measured by `python -m benchmarks.sampled_gap{' --no-yahtzee-exact' if missing else ''}` "
        f"(seed {seed}). Exact gap and relative "
        "gap: `baselines.evaluate` (on Yahtzee the full-game exact evaluation). SE ratio: the "
        "score mean's standard error over the sampled gap's, from the same episodes. The "
        "check column should be near 0 within a few of its standard errors (an unbiasedness "
        "check that needs no exact evaluation). Time: the estimate's call (Yahtzee: the exact "
        "action values of each step's visited observations by `action_values_batch`); exact "
        f"time: the exact evaluation's. The 95 % interval holds the exact gap in {covered} of "
        f"{len(exact)} rows.{not_evaluated}\n\n"
        + markdown_table(header, table)
        + "\n\n"
        + verdict(rows)
        + "\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1000, help="per Yahtzee policy")
    parser.add_argument("--table-episodes", type=int, default=10_000, help="per table policy")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=DOCS)
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--no-yahtzee-exact",
        action="store_true",
        help="skip the Yahtzee rows' exact evaluations (minutes to an hour each when loaded)",
    )
    args = parser.parse_args(argv)
    own_docs = args.out.resolve() == DOCS.resolve()
    if own_docs:
        check_markers(PAGE, SECTION)  # refused before the minutes of measuring
    rows = run(
        args.episodes, args.table_episodes, args.seed, yahtzee_exact=not args.no_yahtzee_exact
    )
    text = report(rows, args.seed)
    if args.json:
        print(json.dumps(rows))
    else:
        print(text)
    if own_docs:
        replace_marked_section(PAGE, SECTION, text)
    else:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "sampled_gap.md").write_text(text)
    return 0 if any(r["ratio"] >= RATIO_TARGET for r in near_optimum(rows)) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Hand-written policies from the source documents, by name, for exact evaluation.

Each entry builds a policy (observation -> action) from the game model, since some rules
depend on the game's parameters (the number of rounds, the die's size).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from dice_envs import make_model
from dice_envs.games.d20_rounds import REROLL, TAKE, D20Rounds
from dice_envs.games.pig import keep_pace_rolls
from dice_envs.games.sum_avoid import ROLL, STOP, SumAvoid
from dice_envs.games.two_player import Fold

Policy = Callable[[object], int]


class Rule:
    """A hand-written policy: `rule(obs) -> action`, and `rule.batch(observations)` for a
    whole (n,) or (n, d) int array at once (exact evaluation calls that once)."""

    def __init__(self, single: Policy, batch: Callable[[np.ndarray], np.ndarray]) -> None:
        self.single, self.batch = single, batch

    def __call__(self, obs) -> int:
        return self.single(obs)


def stop_at(threshold: int) -> Policy:
    """Sum-avoid: roll until the sum is at least `threshold`, then stop."""
    return lambda total: STOP if int(total) >= threshold else ROLL


def remainder_thresholds(N: int, thresholds: dict[int, int | None]) -> Policy:
    """Sum-avoid: stop once the sum reaches the threshold of its remainder class (None: never).

    Seed 000 reads the optimal policy this way: T_r is the least sum with remainder r at which
    stopping is optimal.
    """
    return lambda total: (
        STOP
        if thresholds.get(int(total) % N) is not None and int(total) >= thresholds[int(total) % N]
        else ROLL
    )


def stop_thresholds(solution, model: SumAvoid) -> dict[int, int | None]:
    """Seed 000's reading of an optimal sum-avoid policy: per remainder class r, T_r is the least
    non-bust sum S = r (mod N), up to the cap, at which the solution stops (None: it never does).
    """
    N = model.N
    return {
        r: min(
            (
                s
                for s in range(r, model.max_sum + 1, N)
                if not model.is_bust(s) and solution.action(s) == STOP
            ),
            default=None,
        )
        for r in range(N)
    }


# Seed 001's strategies. The observation is (rounds left, face).
def take_anything(model: D20Rounds) -> Policy:
    return lambda obs: TAKE


def roll_once(model: D20Rounds) -> Policy:
    """Reroll in the first round, take every round after."""
    return lambda obs: REROLL if int(obs[0]) == model.rounds else TAKE


def reroll_below_max(model: D20Rounds) -> Policy:
    """Reroll every face but the highest (seed 001's 'reroll non-20s')."""
    return lambda obs: TAKE if int(obs[1]) == model.sides else REROLL


def take_above(limit: int) -> Callable[[D20Rounds], Policy]:
    """Take any face above `limit` (seed 001's 'take greater than 10'), reroll the rest."""
    return lambda model: lambda obs: TAKE if int(obs[1]) > limit else REROLL


# Pig. The observation is (own score, opponent score, turn total); 0 hold, 1 roll.
def pig_hold_at(threshold: int) -> Policy:
    """Hold once the turn total reaches `threshold` (Neller's "hold at 20" for 20)."""
    return Rule(
        lambda obs: int(int(obs[2]) < threshold),
        lambda batch: (batch[:, 2] < threshold).astype(np.int64),
    )


def pig_table(table) -> Policy:
    """Play a roll-decision table [own, other, turn] (turn total 0 always rolls)."""
    return Rule(
        lambda obs: int(int(obs[2]) == 0 or bool(table[int(obs[0]), int(obs[1]), int(obs[2])])),
        lambda batch: ((batch[:, 2] == 0) | table[batch[:, 0], batch[:, 1], batch[:, 2]]).astype(
            np.int64
        ),
    )


def _pig(name: str, model: Fold) -> Policy | None:
    match = re.fullmatch(r"hold-at-(\d+)", name)
    if match:
        return pig_hold_at(int(match.group(1)))
    if name == "keep-pace":
        return pig_table(keep_pace_rolls(model.goal))
    if name == "two-player-optimal":
        from baselines.pig import two_player_optimum

        return pig_table(two_player_optimum(model.goal, model.face_probs).roll)
    return None


# Ten Thousand. The observation is (turn score in chips, configuration index, dice in hand).
def ten_thousand_stop_at(threshold: int) -> Policy:
    """Roll (never giving dice back) until the turn score reaches `threshold` chips."""
    return lambda obs: 0 if 0 < int(obs[0]) >= threshold else 1


def _ten_thousand(name: str, model) -> Policy | None:
    match = re.fullmatch(r"stop-at-(\d+)", name)
    return ten_thousand_stop_at(int(match.group(1))) if match else None


def _sum_avoid(name: str, model: SumAvoid) -> Policy | None:
    match = re.fullmatch(r"stop-at-(\d+)", name)
    return stop_at(int(match.group(1))) if match else None


def _d20(name: str, model: D20Rounds) -> Policy | None:
    named = {
        "take-anything": take_anything,
        "roll-once": roll_once,
        "reroll-below-max": reroll_below_max,
    }
    if name in named:
        return named[name](model)
    match = re.fullmatch(r"take-above-(\d+)", name)
    return take_above(int(match.group(1)))(model) if match else None


# env id -> (parser, the names it takes, the seed's list for tables and plots)
HEURISTICS = {
    "dice_envs/SumAvoid-v0": (_sum_avoid, "stop-at-K", ["stop-at-20", "stop-at-25", "stop-at-30"]),
    "dice_envs/D20Rounds-v0": (
        _d20,
        "take-anything, roll-once, reroll-below-max, take-above-K",
        ["take-anything", "roll-once", "reroll-below-max", "take-above-10"],
    ),
    "dice_envs/Pig-v0": (
        _pig,
        "hold-at-K, keep-pace, two-player-optimal",
        ["hold-at-20", "hold-at-25", "keep-pace", "two-player-optimal"],
    ),
    "dice_envs/TenThousand-v0": (
        _ten_thousand,
        "stop-at-K",
        ["stop-at-6", "stop-at-10", "stop-at-20"],
    ),
}


def heuristic(env_id: str, name: str, **kwargs) -> Policy:
    """The named hand-written policy for `env_id` built with the env's keyword arguments."""
    if env_id not in HEURISTICS:
        raise ValueError(f"no heuristics for {env_id!r}; games with some: {list(HEURISTICS)}")
    parse, allowed, _ = HEURISTICS[env_id]
    policy = parse(name, make_model(env_id, **kwargs))
    if policy is None:
        raise ValueError(f"policy for {env_id} must be one of: {allowed}; got {name!r}")
    return policy

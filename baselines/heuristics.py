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
from dice_envs.games.sum_avoid import ROLL, STOP, SumAvoid
from dice_envs.games.two_player import Solitaire

Policy = Callable[[object], int]


class Rule:
    """A hand-written policy: `rule(obs) -> action`, and `rule.batch(observations)` for a
    whole (n,) or (n, d) int array at once (exact evaluation calls that once)."""

    def __init__(self, single: Policy, batch: Callable[[np.ndarray], np.ndarray]) -> None:
        self.single, self.batch = single, batch

    def __call__(self, obs) -> int:
        return self.single(obs)

    @classmethod
    def from_batch(cls, batch: Callable[[np.ndarray], np.ndarray]) -> Rule:
        """A rule written once, for a batch; one observation is a batch of one."""
        return cls(lambda obs: int(batch(np.asarray(obs))[0]), batch)


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


# The Pig family (Pig, two-dice Pig, Hog; raced or alone). The rules are the two-player
# model's named policies (the same ones an opponent plays), read on the observation grid.
def _race(name: str, model) -> Policy | None:
    """A two-player model's named policy (hold-at-K, keep-pace, tijms, five-dice, dice-K, ...)
    or "two-player-optimal", for its fold; for its solitaire, the named policy with the
    opponent's score at 0. Only deterministic policies: "random" is refused."""
    rules = model.model
    solo = isinstance(model, Solitaire)
    if name == "two-player-optimal" and not solo:
        from baselines.two_player import two_player_optimum

        actions = two_player_optimum(rules).policy
    else:
        table = rules.named_policy(name)
        if table is None:
            return None
        actions = table.argmax(axis=-1)
        if not np.array_equal(table.max(axis=-1), np.ones(actions.shape)):
            raise ValueError(f"{name} is a stochastic policy; exact evaluation takes actions")
    if solo:
        actions = np.take(actions, 0, axis=rules.observation_names.index("opponent score"))
    return race_table(actions)


def race_table(actions: np.ndarray) -> Rule:
    """Play a table of actions over the observation grid."""

    def batch_rule(batch):
        batch = np.asarray(batch).reshape(-1, actions.ndim)
        return actions[tuple(batch.T)].astype(np.int64)

    return Rule.from_batch(batch_rule)


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


# Tijms's stopping games (seed 002). Observations: DieStopping (rolls left, face), RedBlackCards
# (red left, black left), ChowRobbins (tosses, heads); 0 stop, 1 go on.
def _die_stopping(name: str, model) -> Policy | None:
    """stop-at-K: stop once the face shows K or more (stop-at-1 takes the first roll)."""
    match = re.fullmatch(r"stop-at-(\d+)", name)
    if not match:
        return None
    limit = int(match.group(1))
    return Rule(
        lambda obs: 0 if int(obs[1]) >= max(limit, 1) else 1,
        lambda batch: np.where(batch[:, 1] >= max(limit, 1), 0, 1),
    )


# Seed 002's thresholds for 26 red and 26 black cards: stop once red minus black drawn is
# beta_k or more after the k-th draw, k = 1..51, as the garbled text reads.
SEED_RED_BLACK_THRESHOLDS = (
    [2, 3, 4, 5, 6, 5, 6, 7, 6]
    + [5 if k % 2 == 0 else 4 for k in range(10, 24)]
    + [3 if k % 2 == 0 else 4 for k in range(24, 34)]
    + [3 if k % 2 == 0 else 2 for k in range(34, 44)]
    + [1, 2, 1, 2, 1, 0, 1, 0]
)


def red_black_thresholds(model, thresholds) -> Policy:
    """Stop once red minus black drawn reaches thresholds[k - 1] after k draws (none drawn:
    draw)."""
    beta = np.asarray([np.inf, *thresholds], dtype=float)

    def batch_rule(batch):
        batch = np.asarray(batch).reshape(-1, 2)
        count = (model.red + model.black) - batch.sum(axis=1)
        return np.where(model.lead(batch[:, 0], batch[:, 1]) >= beta[count], 0, 1)

    return Rule.from_batch(batch_rule)


def _red_black(name: str, model) -> Policy | None:
    if name == "seed-thresholds":
        if (model.red, model.black) != (26, 26):
            raise ValueError("seed-thresholds are seed 002's for red=26, black=26 only")
        return red_black_thresholds(model, SEED_RED_BLACK_THRESHOLDS)
    match = re.fullmatch(r"stop-at-plus-(\d+)", name)
    if not match:
        return None
    return red_black_thresholds(model, [int(match.group(1))] * (model.red + model.black))


def _chow_robbins(name: str, model) -> Policy | None:
    """heads-exceed-tails (the seed's pi/4 rule) or stop-at-plus-K: stop once heads minus tails
    is K or more (never before the first toss)."""
    if name == "heads-exceed-tails":
        lead = 1
    else:
        match = re.fullmatch(r"stop-at-plus-(\d+)", name)
        if not match:
            return None
        lead = int(match.group(1))

    def batch_rule(batch):
        batch = np.asarray(batch).reshape(-1, 2)
        tosses, heads = batch[:, 0], batch[:, 1]
        return np.where((tosses > 0) & (2 * heads - tosses >= lead), 0, 1)

    return Rule.from_batch(batch_rule)


# env id -> (parser, the names it takes, the seed's list for tables and plots)
HEURISTICS = {
    "dice_envs/SumAvoid-v0": (_sum_avoid, "stop-at-K", ["stop-at-20", "stop-at-25", "stop-at-30"]),
    "dice_envs/D20Rounds-v0": (
        _d20,
        "take-anything, roll-once, reroll-below-max, take-above-K",
        ["take-anything", "roll-once", "reroll-below-max", "take-above-10"],
    ),
    "dice_envs/Pig-v0": (
        _race,
        "hold-at-K, keep-pace, two-player-optimal",
        ["hold-at-20", "hold-at-25", "keep-pace", "two-player-optimal"],
    ),
    "dice_envs/TwoDicePig-v0": (
        _race,
        "hold-at-K, tijms, two-player-optimal",
        ["hold-at-20", "tijms", "two-player-optimal"],
    ),
    "dice_envs/Hog-v0": (
        _race,
        "five-dice, dice-K, two-player-optimal",
        ["five-dice", "dice-5", "two-player-optimal"],
    ),
    "dice_envs/TenThousand-v0": (
        _ten_thousand,
        "stop-at-K",
        ["stop-at-6", "stop-at-10", "stop-at-20"],
    ),
    # Reaching the goal ends a turn, so hold-at-K alone holds at min(K, points still needed),
    # seed 002's stipulation.
    "dice_envs/PigSolitaire-v0": (_race, "hold-at-K", ["hold-at-20", "hold-at-25"]),
    "dice_envs/TwoDicePigSolitaire-v0": (_race, "hold-at-K, tijms", ["tijms", "hold-at-20"]),
    "dice_envs/HogSolitaire-v0": (_race, "five-dice, dice-K", ["five-dice", "dice-5"]),
    "dice_envs/DieStopping-v0": (
        _die_stopping,
        "stop-at-K",
        ["stop-at-1", "stop-at-4", "stop-at-5"],
    ),
    "dice_envs/RedBlackCards-v0": (
        _red_black,
        "stop-at-plus-K, seed-thresholds (red=26, black=26)",
        ["stop-at-plus-1", "stop-at-plus-2", "stop-at-plus-3"],
    ),
    "dice_envs/ChowRobbins-v0": (
        _chow_robbins,
        "heads-exceed-tails, stop-at-plus-K",
        ["heads-exceed-tails", "stop-at-plus-2", "stop-at-plus-3"],
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

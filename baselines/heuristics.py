"""Hand-written policies by name, for exact evaluation.

The named policies live with their games (`model.named_policy`, resolved by
`dice_envs.policies.named_policy`); this module keeps the older names that point there, and
the analysis of the sum-avoid game's optimal policy by remainder classes.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable

from dice_envs.games.rule import Rule
from dice_envs.games.stopping import TIJMS_RED_BLACK_THRESHOLDS
from dice_envs.games.sum_avoid import ROLL, STOP, SumAvoid, stop_at
from dice_envs.policies import named_policy

Policy = Callable[[object], int]
# The names before the named policies moved into the games (kept for one version).
heuristic = named_policy

__all__ = [
    "TIJMS_RED_BLACK_THRESHOLDS",
    "Rule",
    "heuristic",
    "named_policy",
    "red_black_thresholds",
    "remainder_thresholds",
    "stop_at",
    "stop_thresholds",
]


def __getattr__(name: str) -> object:
    # SEED_RED_BLACK_THRESHOLDS, the old name of TIJMS_RED_BLACK_THRESHOLDS, until 0.6.
    if name == "SEED_RED_BLACK_THRESHOLDS":
        warnings.warn(
            "baselines.heuristics.SEED_RED_BLACK_THRESHOLDS is deprecated and will be removed "
            "in 0.6: use TIJMS_RED_BLACK_THRESHOLDS",
            DeprecationWarning,
            stacklevel=2,
        )
        return TIJMS_RED_BLACK_THRESHOLDS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def remainder_thresholds(N: int, thresholds: dict[int, int | None]) -> Policy:
    """Sum-avoid: stop once the sum reaches the threshold of its remainder class (None: never).

    The sum-avoid write-up reads the optimal policy this way: T_r is the least sum with
    remainder r at which stopping is optimal.
    """
    return lambda total: (
        STOP
        if thresholds.get(int(total) % N) is not None and int(total) >= thresholds[int(total) % N]
        else ROLL
    )


def stop_thresholds(solution, model: SumAvoid) -> dict[int, int | None]:
    """The write-up's reading of an optimal sum-avoid policy: per remainder class r, T_r is the
    least non-bust sum S = r (mod N), up to the cap, at which the solution stops (None: it
    never does)."""
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


def red_black_thresholds(model, thresholds) -> Rule:
    """Red and black cards: stop once red minus black drawn reaches thresholds[k - 1] after k
    draws (none drawn: draw)."""
    return model.thresholds_rule(thresholds)

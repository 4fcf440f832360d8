"""The sum-avoid write-up's reading of the optimal policy by remainder classes, for its page
(docs.tools.single_agent) and tests: T_r, the least sum with remainder r at which stopping is
optimal, and the rule that stops at those thresholds."""

from __future__ import annotations

from collections.abc import Callable

from dice_envs.games.sum_avoid import ROLL, STOP, SumAvoid


def remainder_thresholds(N: int, thresholds: dict[int, int | None]) -> Callable[[object], int]:
    """Sum-avoid: stop once the sum reaches the threshold of its remainder class (None: never)."""
    return lambda total: (
        STOP
        if thresholds.get(int(total) % N) is not None and int(total) >= thresholds[int(total) % N]
        else ROLL
    )


def stop_thresholds(solution, model: SumAvoid) -> dict[int, int | None]:
    """Per remainder class r, T_r: the least non-bust sum S = r (mod N), up to the cap, at which
    the solution stops (None: it never does)."""
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

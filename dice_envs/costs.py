"""What a game's own solvers (in `baselines`) cost where they build no tables: each game's
registration names its function here as its `cost` hook, and `dice_envs.sizes.estimate` asks
it. Plain arithmetic on the arguments, so that a check before work imports no solver.

Each function takes the operation and the game's own arguments and returns a
`dice_envs.sizes.Cost`, or None where the estimate from the game's table size holds (the
operation builds the tables). The rates are measured on this project's machine by
`python -m benchmarks.sizes` (peak RSS of a fresh process, wall time).
"""

from __future__ import annotations

from typing import Any

from dice_envs.games.base import check_int
from dice_envs.sizes import BASE_BYTES, TABLE_ROWS_LIMIT, Cost, table_size

# Pig's layered solver (`baselines.pig`) and the sums over the opponent's turns it reads:
# arrays over (own score, other score, turn total), so goal^3 cells: 110/158/290 MB at goal
# 40/80/120, 0.99 GB and 3 s at 200, 3.3 GB and 24 s at 300 (past 16 million cells the
# opponent is asked batch by batch rather than kept as a table: slower per cell).
PIG_LAYERED_BYTES_PER_CELL = 110.0
PIG_LAYERED_SECONDS_PER_CELL = 0.7e-6

# Chow-Robbins' banded pass: a band of about sqrt(N) heads per toss count, N tosses, kept a
# band at a time: 116 MB and 0.9 to 1.8 s at horizon 10^5, 137 MB and 16 s at 10^6.
CHOW_ROBBINS_BYTES_PER_TOSS = 40.0
CHOW_ROBBINS_SECONDS_PER_CELL = 16e-9

# Simultaneous Hog's equilibrium: a matrix game per pair of scores, solved in sweeps along
# the diagonals (a linear program where no pure saddle point exists): 117 MB and 8.4 s at
# goal 60 with 10 dice (3,721 positions). Its best response (`solve`): a grid of the same
# positions, 114 MB and 0.2 s.
EQUILIBRIUM_SECONDS_PER_POSITION = 2.3e-3
EQUILIBRIUM_BYTES_PER_POSITION = 5_000.0
BEST_RESPONSE_SECONDS_PER_POSITION = 0.1e-3

# Solitaire Yahtzee, the full game (536,320 turn-start states): the solve 214 MB and 5 s,
# the exact evaluation of a numpy policy 510 MB and 45 s (docs/bench_yahtzee.json, `make
# bench`); a game with b of the 13 boxes has about 2^(b - 13) as many turn starts.
YAHTZEE_SOLVE = (214e6, 6.0)
YAHTZEE_EVALUATE = (510e6, 45.0)


def pig_fold(operation: str, kwargs: dict[str, Any]) -> Cost | None:
    """Pig against an opponent: the layered solver (no tables) for the best response of
    `exploitability`, and for a solve whose tables would pass `TABLE_ROWS_LIMIT` (smaller
    ones are built for the Bellman residual)."""
    if operation not in ("solve", "play", "exploitability"):
        return None
    from dice_envs.games.pig import PigVersus

    size = table_size(PigVersus, kwargs)[1]
    if operation != "exploitability" and size.rows <= TABLE_ROWS_LIMIT:
        return None
    cells = float(kwargs.get("goal", 100)) ** 3
    return Cost(
        BASE_BYTES + cells * PIG_LAYERED_BYTES_PER_CELL,
        cells * PIG_LAYERED_SECONDS_PER_CELL,
        "goal",
    )


def chow_robbins(operation: str, kwargs: dict[str, Any]) -> Cost | None:
    """Chow-Robbins: the banded pass for a solve without tables (past `TABLE_ROWS_LIMIT`)."""
    if operation not in ("solve", "play"):
        return None
    horizon = check_int("horizon", kwargs.get("horizon", 100), 1)
    if 1.5 * horizon * (horizon + 1) <= TABLE_ROWS_LIMIT:
        return None
    cells = horizon * horizon**0.5
    return Cost(
        BASE_BYTES + horizon * CHOW_ROBBINS_BYTES_PER_TOSS,
        cells * CHOW_ROBBINS_SECONDS_PER_CELL,
        "horizon",
    )


def simultaneous_hog(operation: str, kwargs: dict[str, Any]) -> Cost | None:
    """Simultaneous Hog: the equilibrium's sweep over pairs of scores, and the best response
    over the same grid (neither builds tables; the best response knows its reachable
    positions, and its residual is not measured)."""
    goal = check_int("goal", kwargs.get("goal", 100), 1)
    positions = float(goal + 1) ** 2
    if operation == "equilibrium":
        seconds = positions * EQUILIBRIUM_SECONDS_PER_POSITION
    elif operation in ("solve", "play", "exploitability"):
        seconds = positions * BEST_RESPONSE_SECONDS_PER_POSITION
    else:
        return None
    return Cost(BASE_BYTES + positions * EQUILIBRIUM_BYTES_PER_POSITION, seconds, "goal")


def yahtzee(operation: str, kwargs: dict[str, Any]) -> Cost:
    """Yahtzee: its structure-aware solver and evaluator, by the boxes in play."""
    from dice_envs.games.yahtzee import NUM_BOXES, Yahtzee

    boxes = len(Yahtzee(**kwargs).boxes)
    share = 2.0 ** (boxes - NUM_BOXES)
    memory, seconds = YAHTZEE_EVALUATE if operation == "evaluate" else YAHTZEE_SOLVE
    return Cost(BASE_BYTES + (memory - BASE_BYTES) * share, seconds * share, "boxes")


def d20_rounds(operation: str, kwargs: dict[str, Any]) -> Cost | None:
    """D20 rounds: the specialised backward pass, a few numbers a round, for a solve whose
    tables would pass `TABLE_ROWS_LIMIT`."""
    if operation not in ("solve", "play"):
        return None
    from dice_envs.games.d20_rounds import D20Rounds

    size = table_size(D20Rounds, kwargs)[1]
    if size.rows <= TABLE_ROWS_LIMIT:
        return None
    return Cost(BASE_BYTES + 100.0 * size.states, 1e-6 * size.states, "rounds")


# The Ten Thousand race's structure-aware solver (`baselines.ten_thousand_duel`): arrays over
# the banked-score pairs, each turn solved in place: 186-229 MB peak and 10-16 s at goal
# 10,000 (200 chips: 40,000 pairs); the work grows with the turn positions of every pair,
# about goal^3. A best response to a batched opponent, its time inside the opponent included:
# 20 s and 236 MB against stop-at-20, 41 s and 265 MB against crocce-mordecki (a loaded
# machine, beside a 14 s solve): about 2.5x.
RACE_SECONDS_PER_CHIP3 = 16.0 / 200**3
RACE_BYTES_PER_CHIP2 = 130e6 / 200**2
RACE_FIXED_OPPONENT_FACTOR = 2.5
# The evaluation's forward pass after the best response: (work of solves, bytes) measured at
# goal 10,000: 146 s and 370 MB in a fresh process with crocce-mordecki on both sides, 37 s of
# it inside the policies, on a machine with a third busy process on its 2 cores (about 1.4x
# the time alone: the estimate, 112 s, is for the machine alone).
RACE_EVALUATION_FACTOR = 4.5
RACE_EVALUATION_BYTES = 200e6


def ten_thousand_duel(operation: str, kwargs: dict[str, Any]) -> Cost | None:
    """The Ten Thousand race, at any goal, without tables: its structure-aware solve (the
    best response to the opponent, or the two-player optimum), exploitability (a best
    response), and evaluation (`baselines.ten_thousand_duel_evaluation`: a best response, then
    a forward pass of about the same work, plus the policy's answers in batches)."""
    if operation not in ("solve", "play", "evaluate", "exploitability"):
        return None
    goal = kwargs.get("goal", 10_000)
    chips = check_int("goal", goal, 50) // 50
    factor = 1.0 if kwargs.get("opponent") == "two-player-optimal" else RACE_FIXED_OPPONENT_FACTOR
    memory = BASE_BYTES + RACE_BYTES_PER_CHIP2 * chips**2
    if operation == "evaluate":
        factor, memory = factor + RACE_EVALUATION_FACTOR, memory + RACE_EVALUATION_BYTES
    return Cost(memory, factor * RACE_SECONDS_PER_CHIP3 * chips**3, "goal")

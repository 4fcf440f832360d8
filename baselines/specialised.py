"""Game-specific exact solvers, each checked against the generic solver in the tests; the
registry names them (`register_game(..., solver=..., solver_rows=...)`)."""

from __future__ import annotations

import time
from types import SimpleNamespace

import numpy as np

from baselines.solvers import GridIndex, Solution, grid_solution
from dice_envs.games.d20_rounds import REROLL, TAKE, D20Rounds
from dice_envs.games.fold import Fold
from dice_envs.games.pig import ROLL


def solve_d20_rounds(model: D20Rounds) -> Solution:
    """Backward induction over the rounds left, all faces at once.

    V_0 = 0; V_r(f) = max(f + V_{r-1}(f), sum_g p_g V_{r-1}(g)). One numpy step per round, so
    100,000 rounds take well under a second. Exact up to float round-off; the model supplies the
    face probabilities, so it is the same game the generic solver enumerates.
    """
    start = time.perf_counter()
    sides, rounds = model.sides, model.rounds
    faces = np.arange(1, sides + 1, dtype=float)
    probs = np.asarray(model.face_probs)
    q = np.empty((rounds, sides, 2))
    values = np.zeros(sides)
    for r in range(rounds):
        q[r, :, TAKE] = faces + values
        q[r, :, REROLL] = probs @ values
        values = q[r].max(axis=1)
    q = q.reshape(rounds * sides, 2)
    # Row (rounds_left - 1) * sides + face - 1 holds (rounds_left, face).
    index = GridIndex((rounds, sides), np.ones(rounds * sides, bool), offset=(1, 1))
    value = q[index((rounds, model.start_face))].max()
    legal = np.ones_like(q, dtype=bool)
    return grid_solution(value, q, legal, index, time.perf_counter() - start)


def pig_opponent_turns(fold: Fold) -> SimpleNamespace:
    """What the layered Pig solver needs of a fold, read through its public surface: bank[j, i,
    b], the probability that the opponent at j, the agent having banked i, ends its turn
    banking b points (b = 0: a 1), and win[j, i], that it reaches the goal in that turn.

    An opponent given by a table (every named one, any action or probability table) is summed
    over turn totals (`_turns_by_turn_total`); any other by the fold's own sum over the paths
    of each turn. A stochastic table makes those paths many (ten seconds at goal 100), the
    turn totals never more than the goal; a test holds the two equal entry for entry.
    """
    table = fold.opponent_policy.table
    if table is None:
        bank, win = _turns_by_paths(fold)
    else:
        bank, win = _turns_by_turn_total(fold, table)
    return SimpleNamespace(
        goal=fold.goal,
        face_probs=fold.face_probs,
        agent_starts=fold.agent_starts,
        opponent_turns=(bank, win),
    )


def _turns_by_turn_total(fold: Fold, table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """bank and win by a forward pass over the opponent's turn total k, all (j, i) at once:
    reach[j, i, k] is the probability that its turn gets to k. The roll's law is the model's
    (`RollLaw.of`); hold at k = 0 plays as a roll, as in the model."""
    from baselines.pig import RollLaw

    goal, law = fold.goal, RollLaw.of(fold.model)
    if law.wipe:
        raise ValueError("the turn-total pass is for Pig's roll law (no wipe)")
    # The opponent sees (own j, other i, turn k): its roll probability at every position.
    roll = np.asarray(table[:goal, :goal, :goal, ROLL], dtype=float).copy()
    roll[:, :, 0] = 1.0
    scores = np.arange(goal)[:, None]
    reach = np.zeros((goal, goal, goal))
    reach[:, :, 0] = 1.0
    bank = np.zeros((goal, goal, goal))
    win = np.zeros((goal, goal))
    for k in range(goal):
        here = reach[:, :, k]
        rolled = here * roll[:, :, k]
        bank[:, :, k] += here - rolled
        bank[:, :, 0] += law.bust * rolled
        for gain, prob in enumerate(law.gains):
            if prob == 0.0:
                continue
            wins = scores + k + gain >= goal  # per opponent score j
            win += np.where(wins, prob * rolled, 0.0)
            if k + gain < goal:
                reach[:, :, k + gain] += np.where(wins, 0.0, prob * rolled)
    return bank, win


def _turns_by_paths(fold: Fold) -> tuple[np.ndarray, np.ndarray]:
    """bank and win from the fold's exact sum over each opponent turn's paths."""
    goal = fold.goal
    own, other = np.meshgrid(np.arange(goal), np.arange(goal), indexing="ij")
    starts = np.column_stack(
        (
            np.ones(goal * goal, np.int64),
            own.ravel(),
            other.ravel(),
            np.zeros(goal * goal, np.int64),
        )
    )
    row, prob, end, _reward, terminal = fold.batch_opponent_turn(starts)
    agent, opponent = own.ravel()[row], other.ravel()[row]
    bank = np.zeros((goal, goal, goal))
    win = np.zeros((goal, goal))
    np.add.at(win, (opponent[terminal], agent[terminal]), prob[terminal])
    live = ~terminal
    np.add.at(bank, (opponent[live], agent[live], end[live, 2] - opponent[live]), prob[live])
    return bank, win


def solve_pig_fold(model: Fold) -> Solution:
    """Pig against a fixed opponent, by the layered solver of `baselines.pig` (the opponent's
    turns summed first, `pig_opponent_turns`)."""
    from baselines.pig import solve_pig

    return solve_pig(model, pig_opponent_turns(model))


def d20_rounds_rows(model: D20Rounds) -> int:
    """The outcome rows of D20 Rounds' tables: a take and `sides` rerolls per position."""
    return model.rounds * model.sides * (model.sides + 1)


def chow_robbins_rows(model) -> int:
    """The outcome rows of Chow-Robbins' tables: three per (tosses, heads) position."""
    return 3 * model.horizon * (model.horizon + 1) // 2

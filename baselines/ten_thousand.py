"""The finite exact algorithm of Crocce and Mordecki for solitaire Ten Thousand.

Rolling n dice from a turn score tau, then playing on optimally, is worth

    R(tau, n) = sum_k f(n, k) / 6**n * W(tau + s(k), k, n'(k))   (k = 0, a bust, pays 0)

where W(tau, k, n) = max(tau, R(tau, n), R(tau - given back, n + dice given back) over the
allowed moves). Moves only lower the score by less than the roll added, so every R needed is
at a higher score. Above the critical threshold (the least tau at which one more roll loses on
average for every n: 56, computed from the roll frequencies) stopping is optimal (Lemma 4.3),
so W(tau, ...) = tau there and the backward pass in tau starts at 55. Exact up to float
round-off.
"""

from __future__ import annotations

import functools
import math
import time
from typing import Any

import numpy as np

from baselines.solvers import GridIndex, Solution, grid_solution
from dice_envs.games.rule import Rule
from dice_envs.games.ten_thousand import (
    ACTION_NAMES,
    CONFIG_INDEX,
    CONFIGS,
    NO_CONFIG,
    ROLL,
    STOP,
    TenThousand,
    roll_frequencies,
    score,
    scoring_dice,
)

ACTION_LABELS = [name.split()[-1] for name in ACTION_NAMES]


def critical_threshold() -> int:
    """min tau with sum_k f(n,k) s(k) <= tau f(n,0) for every n (the paper's eq. 6)."""
    bounds = []
    for n in range(1, 6):
        freq = roll_frequencies(n)
        gain = sum(count * score(config) for config, count in freq.items())
        bounds.append(math.ceil(gain / freq[NO_CONFIG]))
    return max(bounds)


def solve_ten_thousand(model: TenThousand) -> Solution:
    """`baselines.solve` for Ten Thousand by the paper's backward algorithm."""
    start = time.perf_counter()
    cap = model.max_turn_score
    boundary = min(critical_threshold(), cap + 1)  # W(tau, ...) = tau from here on
    top = cap + 25
    roll_value = np.zeros((top + 1, 6))  # R[tau, n]
    outcomes = {}
    for n in range(1, 6):
        rows = [(p, c) for p, c in model.roll_table(n) if c != NO_CONFIG]
        probs = np.array([p for p, _ in rows])
        gains = np.array([score(c) for _, c in rows])
        left = np.array([n - scoring_dice(c) or 5 for _, c in rows])
        moves = [list(model.moves(c, n - scoring_dice(c) or 5).values()) for _, c in rows]
        width = max(1, max(len(m) for m in moves))
        back_chips = np.zeros((len(rows), width), dtype=np.int64)
        back_dice = np.zeros((len(rows), width), dtype=np.int64)
        has_move = np.zeros((len(rows), width), dtype=bool)
        for i, row in enumerate(moves):
            for j, (chips, dice) in enumerate(row):
                back_chips[i, j], back_dice[i, j], has_move[i, j] = chips, dice, True
        outcomes[n] = (probs, gains, left, back_chips, back_dice, has_move)
        # Past the boundary every next state stops: R is the expected score of the roll.
        taus = np.arange(boundary, top + 1)
        roll_value[boundary:, n] = (taus[:, None] + gains[None, :]) @ probs
    for tau in range(boundary - 1, -1, -1):
        for n in range(1, 6):
            probs, gains, left, back_chips, back_dice, has_move = outcomes[n]
            reached = tau + gains
            best = np.maximum(reached, roll_value[reached, left])
            moved = roll_value[reached[:, None] - back_chips, left[:, None] + back_dice]
            best = np.maximum(best, np.where(has_move, moved, -np.inf).max(axis=1))
            roll_value[tau, n] = probs @ np.where(reached >= boundary, reached, best)

    # Q-values of every formal state (tau <= cap, configuration, n = 1..5).
    shape = (cap + 1, len(CONFIGS), 6)
    q = np.full(shape + (model.num_actions,), -np.inf)
    legal = np.zeros_like(q, dtype=bool)
    taus = np.arange(cap + 1)
    for index, config in enumerate(CONFIGS):
        for n in range(1, 6):
            if n < 5 and (index == 0 or scoring_dice(config) + n > 5):
                continue  # no such position
            legal[1:, index, n, [STOP, ROLL, *model.moves(config, n)]] = True
            legal[0, index, n, ROLL] = True
            q[:, index, n, :] = roll_value[: cap + 1, n, None]
            q[:, index, n, STOP] = np.where(taus > 0, taus, roll_value[0, n])
            for action, (chips, dice) in model.moves(config, n).items():
                q[:, index, n, action] = roll_value[np.maximum(taus - chips, 0), n + dice]
    q = q.reshape(-1, model.num_actions)
    legal = legal.reshape(-1, model.num_actions)
    index = GridIndex(shape, legal.any(axis=1))
    return grid_solution(roll_value[0, 5], q, legal, index, time.perf_counter() - start)


# The solitaire turn the "crocce-mordecki" policy is solved on: any cap of 55 chips or more
# has the uncapped optimum (stopping is optimal from 56 on, Lemma 4.3); above the cap, it stops.
SOLITAIRE_CAP = 100


@functools.cache
def _solitaire_optimum(allowed_moves: tuple[str, ...]) -> Solution:
    return solve_ten_thousand(TenThousand(allowed_moves, max_turn_score=SOLITAIRE_CAP))


def crocce_mordecki_policy(model: Any) -> Rule:
    """Crocce and Mordecki's optimal solitaire turn, played in the race: maximises the turn's
    expected score whatever the banked scores (ties to the lowest-numbered action), asked on
    the turn's part of the race's observation (the policy "crocce-mordecki", entry point
    `dice_envs.policies`)."""
    turn = getattr(model, "turn", None)
    if not isinstance(turn, TenThousand) or "turn score" not in model.observation_names:
        raise ValueError(
            "crocce-mordecki is a policy of the Ten Thousand race (its turn is solitaire Ten "
            f"Thousand's); {model!r} is not that race"
        )
    solution = _solitaire_optimum(turn.allowed_moves)
    start = model.observation_names.index("turn score")

    def batch(observations: np.ndarray) -> np.ndarray:
        rows = np.asarray(observations, dtype=np.int64).reshape(-1, len(model.observation_names))
        turns = rows[:, start : start + 3].copy()
        np.minimum(turns[:, 0], SOLITAIRE_CAP, out=turns[:, 0])  # past 55 chips it stops
        index = solution.indices_of(turns)
        # A grid asked whole holds observations no position has: any action does there.
        return np.where(index >= 0, solution.policy[np.maximum(index, 0)], ROLL)

    return Rule.from_batch(batch, "crocce-mordecki", reads=(start, start + 1, start + 2))


# The paper's Table 6 columns: a heading and the positions (configuration, dice in hand) it
# covers; "other" means every configuration with a single scoring combination.
TABLE_6_COLUMNS = [
    ("n=5 (any)", None, 5),
    ("n=4 (any)", None, 4),
    ("n=3 `[2,0,0]` `[1,1,0]`", [(2, 0, 0), (1, 1, 0)], 3),
    ("n=3 `[0,2,0]`", [(0, 2, 0)], 3),
    ("n=3 other", None, 3),
    ("n=2 `[2,1,0]`", [(2, 1, 0)], 2),
    ("n=2 `[1,2,0]`", [(1, 2, 0)], 2),
    ("n=2 `[2,0,0]` `[1,1,0]`", [(2, 0, 0), (1, 1, 0)], 2),
    ("n=2 other", None, 2),
    ("n=1 (any)", None, 1),
]


def policy_table(solution: Solution, reachable: set, top: int = 55) -> str:
    """The optimal value and action of every position, laid out like the paper's Table 6.

    A cell shows "value action" (s stop, r roll, m5 give back a 5 and roll, ...); "s" alone
    where stopping is optimal (the value is then the turn score); "-" where no reachable
    position fits. Columns that cover several configurations show the first reachable one
    (they share their value, as the paper notes).
    """
    short = {STOP: "s", ROLL: "r"}
    header = ["tau"] + [name for name, _, _ in TABLE_6_COLUMNS]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for tau in range(top + 1):
        cells = [str(tau)]
        for _name, configs, n in TABLE_6_COLUMNS:
            if configs is None:
                pool = [c for c in CONFIGS[1:] if _single(c, n)]
                pool = [(0, 0, 0)] + pool if n == 5 else pool
            else:
                pool = configs
            states = [(tau, CONFIG_INDEX[c], n) for c in pool]
            states = [s for s in states if s in reachable]
            if not states:
                cells.append("-")
                continue
            action = solution.action(states[0])
            name = short.get(action) or "m" + ACTION_LABELS[action]
            value = solution.state_value(states[0])
            cells.append("s" if action == STOP else f"{value:.3f} {name}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _single(config, n: int) -> bool:
    """A configuration with one scoring combination that can leave n dice in hand."""
    f, o, t = config
    return f + o + (t != 0) == 1 and scoring_dice(config) + n <= 5


__all__ = [
    "critical_threshold",
    "crocce_mordecki_policy",
    "policy_table",
    "solve_ten_thousand",
]

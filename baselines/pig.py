"""Exact Pig solvers, layered by score sum (after Neller and Presser), with policy iteration
inside each layer.

Positions (i, j, k): the player to move has i, the other player j, and turn total k. Every
move either stays in the layer i + j (a roll that keeps the turn going, or a 1 that hands the
same scores to the other side) or climbs to a higher layer (a hold banks k >= 2, an opponent's
turn banks points). So the layers are solved from the top score sum down; within a layer the
only cycle runs through the turn-start values x = V(i, j, 0), because a 1 leads to a turn start
in the same layer:

- two-player optimum: a 1 gives the other player the move at (j, i, 0), worth 1 - V(j, i, 0);
- best response to a fixed opponent: a 1 lets the opponent play its whole turn, which banks 0
  (back to the agent's own (i, j, 0)) or climbs.

For a guess y of those turn-start values, one backward pass over k gives every V(i, j, k) as
an affine function a + b * y under the policy greedy for y; the turn-start equations are then
solved exactly (two unknowns per pair of mirrored positions, or one), and the pass repeats
until the greedy policy no longer changes. That is policy iteration on a piecewise-linear
problem: it ends after a few passes with the exact values (float round-off only; the tests
check the Bellman residual and the generic solver's value iteration).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from baselines.solvers import Solution, greedy
from dice_envs.games.pig import HOLD, ROLL, Pig

MAX_PASSES = 100


@dataclass
class PigTables:
    """Values over positions [i, j, k] (entries with i + k >= goal are unused).

    Attributes:
        value: V(i, j, k) for the player to move.
        hold, roll: the value of each action (hold at k = 0 plays as a roll).
        turn_start: V(i, j, 0).
        passes: the largest number of policy-iteration passes a layer needed.
        waiting: (best response only) Y[i, j], the agent's value when it has banked i and
            the opponent, at j, is about to play.
    """

    value: np.ndarray
    hold: np.ndarray
    roll: np.ndarray
    turn_start: np.ndarray
    passes: int
    waiting: np.ndarray | None = None

    @property
    def roll_decision(self) -> np.ndarray:
        """True where rolling is strictly better than holding (ties hold; k = 0 rolls)."""
        decision = self.roll > self.hold
        decision[:, :, 0] = True
        return decision


@dataclass
class TwoPlayerOptimum:
    """Both players optimal: `tables.value[i, j, k]` is the mover's win probability."""

    tables: PigTables
    seconds: float

    @property
    def value(self) -> float:
        """The first player's win probability."""
        return float(self.tables.turn_start[0, 0])

    @property
    def roll(self) -> np.ndarray:
        return self.tables.roll_decision


def _solve_layers(goal, face_probs, hold_value, bust_terms, coupled, after_layer):
    """The layered solve shared by both problems.

    Args:
        hold_value(own, other, k): value of banking k at (own, other); those layers are done.
        bust_terms(own, other): (c, d) with the value of rolling a 1 being c + d * y.
        coupled: y is the mirrored position's turn-start value (two-player) or the position's
            own (best response).
        after_layer(own, other, x): called once a layer's turn-start values x are final.
    """
    n, probs = goal, np.asarray(face_probs, dtype=float)
    sides = len(probs)
    scoring = probs[1:]  # faces 2..sides, which add 2..sides
    width = n + sides + 1
    value = np.full((n, n, n), np.nan)
    hold_q = np.full((n, n, n), np.nan)
    roll_q = np.full((n, n, n), np.nan)
    turn_start = np.full((n, n), np.nan)
    most_passes = 0
    ks = np.arange(n)
    for layer in range(2 * n - 2, -1, -1):
        own = np.arange(max(0, layer - n + 1), min(layer, n - 1) + 1)
        other = layer - own
        m = len(own)
        valid = own[:, None] + ks[None, :] < n
        holds = np.where(valid, hold_value(own, other, ks), 1.0)
        holds[:, 0] = -np.inf
        c, d = bust_terms(own, other)
        y = np.full(m, 0.5)
        previous = None
        passes = 0
        while passes < MAX_PASSES:
            passes += 1
            a = np.ones((m, width))
            b = np.zeros((m, width))
            roll_a = np.empty((m, n))
            roll_b = np.empty((m, n))
            for k in range(n - 1, -1, -1):
                ra = c + a[:, k + 2 : k + sides + 1] @ scoring
                rb = d + b[:, k + 2 : k + sides + 1] @ scoring
                roll_a[:, k], roll_b[:, k] = ra, rb
                rolls = ra + rb * y > holds[:, k]
                live = valid[:, k]
                a[:, k] = np.where(live, np.where(rolls, ra, holds[:, k]), 1.0)
                b[:, k] = np.where(live & rolls, rb, 0.0)
            decisions = (roll_a + roll_b * y[:, None] > holds) & valid
            if previous is not None and np.array_equal(decisions, previous):
                break
            previous = decisions
            a0, b0 = a[:, 0], b[:, 0]
            if coupled:  # mirrored positions sit at reversed indices of the layer
                x = (a0 + b0 * a0[::-1]) / (1.0 - b0 * b0[::-1])
                y = x[::-1].copy()
            else:
                x = a0 / (1.0 - b0)
                y = x.copy()
        else:
            raise RuntimeError(f"layer {layer}: the policy did not settle in {MAX_PASSES} passes")
        most_passes = max(most_passes, passes)
        rolled = roll_a + roll_b * y[:, None]
        value[own, other] = np.where(valid, np.maximum(rolled, holds), np.nan)
        roll_q[own, other] = np.where(valid, rolled, np.nan)
        hold_q[own, other] = np.where(valid, holds, np.nan)
        hold_q[own, other, 0] = rolled[:, 0]  # hold at turn total 0 plays as a roll
        turn_start[own, other] = x
        after_layer(own, other, x)
    return PigTables(value, hold_q, roll_q, turn_start, most_passes)


@lru_cache(maxsize=8)
def two_player_optimum(goal: int, face_probs: tuple[float, ...]) -> TwoPlayerOptimum:
    """Both players maximise their win probability (cached per goal and die)."""
    start = time.perf_counter()
    p1 = face_probs[0]
    turn_start = np.full((goal, goal), np.nan)

    def hold_value(own, other, ks):
        banked = np.minimum(own[:, None] + ks[None, :], goal - 1)
        return 1.0 - turn_start[other[:, None], banked]

    def bust_terms(own, other):
        return np.full(len(own), p1), np.full(len(own), -p1)

    def after_layer(own, other, x):
        turn_start[own, other] = x

    tables = _solve_layers(goal, face_probs, hold_value, bust_terms, True, after_layer)
    return TwoPlayerOptimum(tables, time.perf_counter() - start)


def best_response(model: Pig) -> PigTables:
    """The agent's optimal play against the model's fixed opponent.

    Y[i, j] is the agent's win probability when it has just ended its turn at i and the
    opponent, at j, is about to play: the opponent's turn banks b with bank[j, i, b] (the
    agent then moves at (i, j + b, 0)) or wins.
    """
    goal, p1 = model.goal, model.face_probs[0]
    bank, _win = model.opponent_turns
    turn_start = np.full((goal, goal), np.nan)
    waiting = np.full((goal, goal), np.nan)  # Y
    climbing = np.zeros((goal, goal))  # the part of Y from b >= 1, known before its layer

    def hold_value(own, other, ks):
        banked = np.minimum(own[:, None] + ks[None, :], goal - 1)
        return waiting[banked, other[:, None]]

    def bust_terms(own, other):
        later = other[:, None] + np.arange(1, goal)[None, :]
        reach = later < goal
        x_later = np.where(reach, turn_start[own[:, None], np.minimum(later, goal - 1)], 0.0)
        climbing[own, other] = np.sum(bank[other, own, 1:] * x_later, axis=1)
        return p1 * climbing[own, other], p1 * bank[other, own, 0]

    def after_layer(own, other, x):
        turn_start[own, other] = x
        waiting[own, other] = climbing[own, other] + bank[other, own, 0] * x

    tables = _solve_layers(goal, model.face_probs, hold_value, bust_terms, False, after_layer)
    tables.waiting = waiting
    return tables


def start_value(model: Pig, tables: PigTables) -> float:
    """The agent's win probability at the start, by `agent_starts`."""
    first = float(tables.turn_start[0, 0])
    second = float(tables.waiting[0, 0])
    return {True: first, False: second, None: 0.5 * (first + second)}[model.agent_starts]


def solve_pig(model: Pig) -> Solution:
    """`baselines.solve` for Pig: the exact best response to the model's opponent."""
    start = time.perf_counter()
    tables = best_response(model)
    goal = model.goal
    shape = (goal + 1, goal + 1, goal)
    q = np.full(shape + (2,), np.nan)
    q[:goal, :goal, :, HOLD] = tables.hold
    q[:goal, :goal, :, ROLL] = tables.roll
    q[model.lost_state] = 0.0
    q = q.reshape(-1, 2)
    legal = np.ones_like(q, dtype=bool)
    legal.reshape(shape + (2,))[:, :, 0, HOLD] = False
    legal.reshape(shape + (2,))[model.lost_state] = True
    known = ~np.isnan(q).any(axis=1)
    filled = np.where(known[:, None], q, -np.inf)
    values = np.where(legal, filled, -np.inf).max(axis=1)

    def index_of(obs) -> int:
        state = tuple(int(v) for v in np.asarray(obs).reshape(-1))
        if len(state) != 3 or not all(0 <= v < s for v, s in zip(state, shape, strict=True)):
            raise KeyError(obs)
        index = int(np.ravel_multi_index(state, shape))
        if not known[index]:
            raise KeyError(obs)
        return index

    return Solution(
        value=start_value(model, tables),
        state_values=values,
        q=filled,
        policy=greedy(filled, legal),
        legal=legal,
        index_of=index_of,
        method="specialised",
        seconds=time.perf_counter() - start,
        bellman_residual=0.0,  # exact per layer; the tests check it on the generic MDP
        iterations=tables.passes,
    )

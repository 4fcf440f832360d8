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
an affine function of y under the policy greedy for y; the turn-start equations of that policy
are then solved exactly (two unknowns per pair of mirrored positions, or one). A layer stops on
values, not on a repeated policy: when no action beats the values so found by more than
TOLERANCE anywhere in the layer (its Bellman residual), and otherwise passes again from them.
That is policy iteration (Newton's method on a piecewise-linear problem), started from the
turn-start values of the layers above, extrapolated.

Limits and tolerance (the rule: solvers never stall on exact ties):
- Exact ties between holding and rolling are common on loaded dice, and round-off splits them
  either way from pass to pass. Equally good policies have the same values, so the residual
  test passes whichever way a tie goes; the greedy choice is also made stable: a pass, and
  `PigTables.roll_decision`, roll only where rolling beats holding by more than TIE = 1e-14.
- Each layer ends with a Bellman residual <= TOLERANCE = 1e-13, so the values are exact up to
  round-off (about 1e-15 on the published case, which still gives 0.530593 for goal 100).
- The turn-start equations are solved in a form without 1 - b cancellations, so dice that
  almost always bust (p1 up to 1 - 1e-12 tested) keep that precision.
- Layers take 1 to 3 passes at goal 100 with a fair die (270 in all over 199 layers), and at
  most 4 over 11,000 random dice, each solved both ways (goals up to 60, p1 up to 0.999).
  The best response is a one-player problem, where policy iteration always ends; the
  two-player layers switch both players at once, which has no such general guarantee, so
  MAX_PASSES = 100 passes per layer stays as a safety net: reaching it raises RuntimeError,
  and for a valid die that is a bug.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from baselines.solvers import GridIndex, Solution, grid_solution
from dice_envs import progress
from dice_envs.games.pig import HOLD, ROLL, Pig

MAX_PASSES = 100  # per layer; a safety net that valid dice never reach
TIE = 1e-14  # roll only where rolling beats holding by more than this
TOLERANCE = 1e-13  # a layer is done when its Bellman residual is at most this


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
        """True where rolling beats holding by more than `TIE` (ties hold; k = 0 rolls)."""
        decision = self.roll > self.hold + TIE
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


@dataclass(frozen=True)
class RollLaw:
    """What a roll does, as the layered solver reads it: `bust` (the turn total is lost),
    `gains[g]` the probability of adding g points (g = 0 unused), and `wipe` (the mover's score
    is lost too; its value comes from the caller, see `_solve_layers`)."""

    bust: float
    gains: tuple[float, ...]
    wipe: float = 0.0

    @classmethod
    def of(cls, model) -> RollLaw:
        """The law of a Pig-family model (its `bust_prob`, `gains`, `wipe_prob`)."""
        top = max(points for points, _ in model.gains)
        gains = [0.0] * (top + 1)
        for points, prob in model.gains:
            gains[points] = prob
        return cls(float(model.bust_prob), tuple(gains), float(model.wipe_prob))

    @classmethod
    def die(cls, face_probs: tuple[float, ...]) -> RollLaw:
        """Pig's law: face 1 busts, faces 2.. add themselves."""
        return cls(float(face_probs[0]), (0.0, 0.0, *map(float, face_probs[1:])))


def _solve_layers(goal, law: RollLaw, hold_value, bust_terms, after_layer, wipe_value=None):
    """The layered solve shared by both problems.

    Args:
        law: the roll's outcomes (`RollLaw`).
        hold_value(own, other, ks): [position, k] value of banking k; those layers are done.
        bust_terms(own, other): None for the two-player game, where a 1 is worth 1 - y with y
            the mirrored position's turn-start value; otherwise (c, d, e) with a 1 worth
            c + d * y, y the position's own turn-start value, and e = 1 - d (given on its own
            so that a near-certain bust keeps its precision).
        after_layer(own, other, x): called once a layer's turn-start values x are final.
        wipe_value(own, other): (two-player game only, for a law with a wipe) the mover's value
            after its score is wiped, per position; where own = 0 a wipe is a bust and the
            value is not read.

    A pass stores, for each k, U = V - s (the value less the value s = c + d * y of a bust)
    and Q, the probability that the turn ends by a hold or a win rather than a 1, both under
    the policy greedy for y. A roll's U and Q are then the scoring faces' mix of those ahead
    (the faces 2.. carry 1 - p1 of the mass and the bust the rest): one small product per k,
    into preallocated arrays. V(0) = G + (1 - Q) * (c + d * y) with G = U + Q * s, so the
    turn-start equations are solved with Q and e rather than 1 - (1 - Q) * d.

    Stops, limits and tolerance: see the module docstring.
    """
    coupled = bust_terms is None
    if law.wipe > 0 and not (coupled and wipe_value is not None):
        raise ValueError("a law with a wipe needs the two-player game and its wipe_value")
    solver = _LayeredSolver(goal, law, coupled)
    most_passes = 0
    with progress.task("solving", total=2 * goal - 1, unit="layers") as report:
        for layer in range(2 * goal - 2, -1, -1):
            terms = solver.layer(layer, hold_value, bust_terms, wipe_value)
            x, rolled, passes = solver.solve_layer(terms)
            most_passes = max(most_passes, passes)
            solver.store(terms, x, rolled)
            after_layer(terms.own, terms.other, x)
            report.advance()
    return solver.tables(most_passes)


@dataclass
class _Layer:
    """The fixed terms of one layer (positions own + other = number), as a pass reads them.

    `valid[k, position]`: the turn total k occurs; `holds`: the value of banking k (k = 0
    never holds); `checked`: where the Bellman residual is measured; (c, d, e): a 1 is worth
    c + d * y (see `_solve_layers`); `wiped`: the value after a wipe; `base` and `limit`: the
    per-pass starting rows of U and the roll thresholds, before the bust value is taken off.
    """

    number: int
    own: np.ndarray
    other: np.ndarray
    top: int
    ks: np.ndarray
    valid: np.ndarray
    holds: np.ndarray
    checked: np.ndarray
    c: np.ndarray
    d: np.ndarray
    e: np.ndarray | None
    wiped: np.ndarray | None
    base: np.ndarray
    limit: np.ndarray
    bust: np.ndarray
    guess: np.ndarray


class _LayeredSolver:
    """The work arrays of `_solve_layers`, shared by every layer and pass, and the results.

    Work arrays: k first, then (U, Q), then one column per position of the layer (at most n;
    the spare columns hold U = 1 and never roll).
    """

    def __init__(self, goal: int, law: RollLaw, coupled: bool):
        n = self.n = goal
        self.law, self.coupled = law, coupled
        low = next(g for g, prob in enumerate(law.gains) if prob > 0)
        self.scoring = np.array(law.gains[low:])  # the gains low..high, in order
        high = self.high = len(law.gains) - 1
        self.wiping = law.wipe > 0
        width = n + high + 1
        self.value = np.full((n, n, n), np.nan)
        self.hold_q = np.full((n, n, n), np.nan)
        self.roll_q = np.full((n, n, n), np.nan)
        self.known = np.full((n + 1, n + 1), np.nan)  # turn-start values, padded for guesses
        w = self.w = np.empty((width, 2, n))
        r = self.r = np.empty((n, 2, n))  # a roll's (U, Q)
        rolls = self.rolls = np.zeros((n, n), dtype=bool)
        threshold = self.threshold = np.empty((n, n))  # roll where a roll's U is above this
        self.ahead = [w.reshape(width, 2 * n)[k + low : k + high + 1] for k in range(n)]
        self.wipe_pair = np.zeros((2, n))  # a wipe's share of a roll's (U, Q), per position
        self.roll_rows, self.roll_pairs = list(r.reshape(n, 2 * n)), list(r)
        self.roll_values = list(r[:, 0])
        self.w_pairs, self.roll_flags, self.thresholds = list(w), list(rolls), list(threshold)

    def layer(self, number: int, hold_value, bust_terms, wipe_value) -> _Layer:
        """Set up the layer of positions with own + other = `number`."""
        n, high = self.n, self.high
        own = np.arange(max(0, number - n + 1), min(number, n - 1) + 1)
        other = number - own
        m = len(own)
        top = n - int(own[0])  # turn totals 0..top-1 occur in this layer
        ks = np.arange(top)
        valid = own[None, :] + ks[:, None] < n  # [k, position]
        holds = np.where(valid, hold_value(own, other, ks).T, 1.0)
        holds[0] = -np.inf  # a turn total of 0 always rolls
        checked = valid.copy()
        checked[0] = False
        e = None
        if self.coupled:
            c, d = np.ones(m), -np.ones(m)
        else:
            c, d, e = (np.broadcast_to(t, m).astype(float) for t in bust_terms(own, other))
        wiped = None
        if self.wiping:
            wiped = np.where(own > 0, wipe_value(own, other), np.nan)
        base = np.ones((top + high, n))
        base[:top, :m] = holds
        base[0, :m] = 0.0  # overwritten: k = 0 rolls
        limit = np.full((top, n), np.inf)
        limit[:, :m] = np.where(valid, holds + TIE, np.inf)
        limit[0, :m] = -np.inf
        bust = np.zeros(n)  # s = c + d * y (0 in the spare columns)
        guess = self._first_guess(own, other)
        return _Layer(
            number=number,
            own=own,
            other=other,
            top=top,
            ks=ks,
            valid=valid,
            holds=holds,
            checked=checked,
            c=c,
            d=d,
            e=e,
            wiped=wiped,
            base=base,
            limit=limit,
            bust=bust,
            guess=guess,
        )

    def _first_guess(self, own: np.ndarray, other: np.ndarray) -> np.ndarray:
        """The turn-start values guessed from the layers above: x(i+1, j) + x(i, j+1)
        - x(i+1, j+1) where all three exist, else the mean of the neighbours there, else 1/2."""
        known = self.known
        up = np.vstack((known[own + 1, other], known[own, other + 1]))
        count = (~np.isnan(up)).sum(axis=0)
        guess = np.where(count > 0, np.nansum(up, axis=0) / np.maximum(count, 1), 0.5)
        corner = up[0] + up[1] - known[own + 1, other + 1]
        guess = np.where(np.isnan(corner), guess, np.clip(corner, 0.0, 1.0))
        return guess[::-1].copy() if self.coupled else guess

    def solve_layer(self, terms: _Layer) -> tuple[np.ndarray, np.ndarray, int]:
        """Pass until the layer's Bellman residual is at most TOLERANCE.

        Returns (the turn-start values x, the roll values [k, position], the passes taken).
        """
        y = terms.guess
        passes = 0
        while True:
            passes += 1
            x, y_next, rolled, residual = self._pass(terms, y)
            y = y_next
            if residual <= TOLERANCE:
                return x, rolled, passes
            if passes >= MAX_PASSES:
                raise RuntimeError(
                    f"layer {terms.number}: Bellman residual {residual:.3g} after {passes} passes"
                )

    def _pass(self, terms: _Layer, y: np.ndarray):
        """One backward pass over k under the policy greedy for y, then the turn-start
        equations of that policy solved exactly.

        Returns (x, the next guess, the roll values at it, the layer's Bellman residual).
        """
        w, r, law, top = self.w, self.r, self.law, terms.top
        own, c, d, bust = terms.own, terms.c, terms.d, terms.bust
        m = len(own)
        s = bust[:m] = c + d * y
        w[: top + self.high, 0] = terms.base - bust
        w[: top + self.high, 1] = 1.0
        np.subtract(terms.limit, bust, out=self.threshold[:top])
        wiping, scoring, ahead = self.wiping, self.scoring, self.ahead
        roll_rows, roll_values, roll_flags = self.roll_rows, self.roll_values, self.roll_flags
        w_pairs, roll_pairs, thresholds = self.w_pairs, self.roll_pairs, self.thresholds
        if wiping:  # a wipe ends the turn at a known value (own = 0: it is a bust)
            wipe_pair = self.wipe_pair
            wipe_pair[0, :m] = np.where(own > 0, law.wipe * (terms.wiped - s), 0.0)
            wipe_pair[1, :m] = np.where(own > 0, law.wipe, 0.0)
            wipe_flat = wipe_pair.reshape(-1)
        for k in range(top - 1, -1, -1):
            np.matmul(scoring, ahead[k], out=roll_rows[k])
            if wiping:
                roll_rows[k] += wipe_flat
            np.greater(roll_values[k], thresholds[k], out=roll_flags[k])
            np.copyto(w_pairs[k], roll_pairs[k], where=roll_flags[k])
        u0, q0 = w[0, 0, :m], w[0, 1, :m]
        g0, p0 = u0 + q0 * s, 1.0 - q0  # V(0) = g0 + p0 * (c + d * y)
        if self.coupled:  # mirrored positions sit at reversed indices of the layer
            # x = g0 + p0 (1 - x'), x' = g0' + p0' (1 - x); h = q0 - g0 >= 0
            h = q0 * y - u0
            x = (g0 + p0 * h[::-1]) / (q0 + p0 * q0[::-1])
            y_next = x[::-1].copy()
        else:  # x = g0 + p0 (c + d x)
            x = (g0 + p0 * c) / (terms.e + d * q0)
            y_next = x
        # The policy's values at y_next are exact (it is affine in y); stop when no action
        # beats them by more than TOLERANCE anywhere: the layer's Bellman residual.
        rolled = r[:top, 0, :m] + s + d * (1.0 - r[:top, 1, :m]) * (y_next - y)
        gap = rolled - terms.holds
        residual = np.where(self.rolls[:top, :m], -gap, gap)[terms.checked].max(initial=0.0)
        return x, y_next, rolled, residual

    def store(self, terms: _Layer, x: np.ndarray, rolled: np.ndarray) -> None:
        """Keep a finished layer's values and turn-start values."""
        own, other, valid, holds = terms.own, terms.other, terms.valid, terms.holds
        index = (own[:, None], other[:, None], terms.ks[None, :])
        self.value[index] = np.where(valid, np.maximum(rolled, holds), np.nan).T
        self.roll_q[index] = np.where(valid, rolled, np.nan).T
        self.hold_q[index] = np.where(valid, holds, np.nan).T
        self.hold_q[own, other, 0] = rolled[0]  # hold at turn total 0 plays as a roll
        self.known[own, other] = x

    def tables(self, most_passes: int) -> PigTables:
        n = self.n
        return PigTables(
            self.value, self.hold_q, self.roll_q, self.known[:n, :n].copy(), most_passes
        )


@lru_cache(maxsize=8)
def two_player_optimum(goal: int, face_probs: tuple[float, ...]) -> TwoPlayerOptimum:
    """Both players maximise their win probability (cached per goal and die)."""
    start = time.perf_counter()
    tables = two_player_layers(goal, RollLaw.die(face_probs))
    return TwoPlayerOptimum(tables, time.perf_counter() - start)


def two_player_layers(goal: int, law: RollLaw, wiped: np.ndarray | None = None) -> PigTables:
    """The two-player optimum, layer by layer; with a wipe in the law, `wiped[j]` is taken as
    the turn-start value X(j, 0) of the player to move after a wipe (its opponent at 0)."""
    turn_start = np.full((goal, goal), np.nan)

    def hold_value(own, other, ks):
        banked = np.minimum(own[:, None] + ks[None, :], goal - 1)
        return 1.0 - turn_start[other[:, None], banked]

    def after_layer(own, other, x):
        turn_start[own, other] = x

    def wipe_value(own, other):
        return 1.0 - wiped[other]

    return _solve_layers(goal, law, hold_value, None, after_layer, wipe_value)


def best_response(model: Pig) -> PigTables:
    """The agent's optimal play against the model's fixed opponent.

    Y[i, j] is the agent's win probability when it has just ended its turn at i and the
    opponent, at j, is about to play: the opponent's turn banks b with bank[j, i, b] (the
    agent then moves at (i, j + b, 0)) or wins.
    """
    goal = model.goal
    bank, win = model.opponent_turns
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
        # the opponent's turn does not bust: 1 - bank[.., 0], summed without cancellation
        scores = win[other, own] + np.sum(bank[other, own, 1:], axis=1)
        return climbing[own, other], bank[other, own, 0], scores

    def after_layer(own, other, x):
        turn_start[own, other] = x
        waiting[own, other] = climbing[own, other] + bank[other, own, 0] * x

    tables = _solve_layers(goal, RollLaw.die(model.face_probs), hold_value, bust_terms, after_layer)
    tables.waiting = waiting
    return tables


def start_value(model: Pig, tables: PigTables) -> float:
    """The agent's win probability at the start, by `agent_starts`."""
    first = float(tables.turn_start[0, 0])
    second = float(tables.waiting[0, 0])
    return {True: first, False: second, None: 0.5 * (first + second)}[model.agent_starts]


def solve_pig(model, turns) -> Solution:
    """`baselines.solve` for Pig: the exact best response to the fold's opponent.

    `turns` is what `best_response` reads (goal, face_probs, agent_starts and the opponent's
    turn distribution), taken from the fold's public surface by
    `baselines.specialised.pig_opponent_turns`.
    """
    start = time.perf_counter()
    tables = best_response(turns)
    goal = turns.goal
    shape = tuple(model.observation_nvec)
    over = (0, goal, 0)  # the opponent won before the agent's first move
    q = np.full(shape + (2,), np.nan)
    q[:goal, :goal, :, HOLD] = tables.hold
    q[:goal, :goal, :, ROLL] = tables.roll
    q[over] = 0.0
    q = q.reshape(-1, 2)
    legal = np.ones_like(q, dtype=bool)
    legal.reshape(shape + (2,))[:, :, 0, HOLD] = False
    legal.reshape(shape + (2,))[over] = True
    known = ~np.isnan(q).any(axis=1)
    filled = np.where(known[:, None], q, -np.inf)
    index = GridIndex(shape, known)
    seconds = time.perf_counter() - start
    value = start_value(turns, tables)
    return grid_solution(value, filled, legal, index, seconds, iterations=tables.passes)

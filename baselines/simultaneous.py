"""Simultaneous Hog solved exactly: the equilibrium of every position, the exact value of any
pair of stationary mixed policies, best responses and exploitability.

A position (i, j) (player 0's score, player 1's, both below the goal) is a matrix game: both
choose a number of dice at once, and player 0 wins with probability

    M(v)[a, b] = G[a, b] + bust[a] * bust[b] * v,

where G sums what the move's other outcomes are worth (positions with a larger score sum, and
the ends of the game) and the second term is the double bust, after which the position repeats
with its own value v. Shapley's equations ask for v = val(M(v)). A move never lowers a score, so
the positions are solved in decreasing order of i + j, all of one score sum at once, each by a
one-dimensional fixed point (`solve_position`) with every later position known. The same sweep
evaluates a fixed pair of mixed policies (`pair_values`) or a best response (`best_response`)
in closed form: a position's value is then x'Gy / (1 - (x.bust)(y.bust)).

Matrix games are solved by `matrix_game`: a pure saddle point when there is one, else scipy's
HiGHS linear program (the column player's strategy is read from its duals).
"""

from __future__ import annotations

import functools
import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import linprog

from baselines.protocols import ByObservation
from baselines.solvers import GridIndex, Solution, grid_solution
from dice_envs import GAMES, game, make_model, progress, sizes
from dice_envs.games.base import check_int
from dice_envs.games.simultaneous import SimultaneousFold
from dice_envs.games.simultaneous_hog import SimultaneousHog
from dice_envs.policies import checked_answer
from dice_envs.registration import model_hook

# A position is solved when its strategy pair is a saddle point of M(v) to this (the row
# player's best reply to y minus the column player's best reply to x, in win probability).
SADDLE_TOLERANCE = 1e-12
MAX_FIXED_POINT_STEPS = 100  # a safety net: the fixed point takes at most a handful of steps


def matrix_game(payoff: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Optimal mixed strategies (row, column) and the value of the zero-sum matrix game in
    which the row player receives `payoff[a, b]`. A pure saddle point is taken when there is one
    (the lowest-numbered on ties); otherwise the row player's linear program is solved by
    HiGHS, and the column player's strategy is its duals. Accurate to HiGHS's tolerances; the
    saddle gap of the strategies is measured by the caller (`solve_position` stops at
    `SADDLE_TOLERANCE`, and `Equilibrium.saddle_gap` reports the worst position's)."""
    payoff = np.asarray(payoff, dtype=float)
    if payoff.ndim != 2 or 0 in payoff.shape:
        raise ValueError(f"payoff must be a non-empty matrix, got shape {payoff.shape}")
    pure = _pure_saddle(payoff)
    return pure if pure is not None else _linear_program(payoff)


def _pure_saddle(payoff: np.ndarray) -> tuple[np.ndarray, np.ndarray, float] | None:
    worst = payoff.min(axis=1)
    best = payoff.max(axis=0)
    a, b = int(worst.argmax()), int(best.argmin())
    if worst[a] < best[b]:
        return None
    rows, columns = payoff.shape
    return np.eye(rows)[a], np.eye(columns)[b], float(payoff[a, b])


def _linear_program(payoff: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    rows, columns = payoff.shape
    # maximise v subject to x'payoff[:, b] >= v for every b, sum(x) = 1, x >= 0
    cost = np.zeros(rows + 1)
    cost[-1] = -1.0
    result = linprog(
        cost,
        A_ub=np.hstack((-payoff.T, np.ones((columns, 1)))),
        b_ub=np.zeros(columns),
        A_eq=np.append(np.ones(rows), 0.0)[None],
        b_eq=[1.0],
        bounds=[(0, None)] * rows + [(None, None)],
        method="highs",
    )
    if result.status != 0:
        raise RuntimeError(f"the matrix game's linear program failed: {result.message}")
    row = np.clip(result.x[:rows], 0.0, None)
    column = np.clip(-result.ineqlin.marginals, 0.0, None)
    return row / row.sum(), column / column.sum(), float(result.x[-1])


def saddle_gap(payoff: np.ndarray, row: np.ndarray, column: np.ndarray) -> float:
    """How far (row, column) is from a saddle point of `payoff`: the row player's best reply
    to `column` minus the column player's best reply to `row` (0 exactly at a saddle point)."""
    return float((payoff @ column).max() - (row @ payoff).min())


@dataclass
class Position:
    """One position's solution: its value, both strategies, the fixed-point steps, the linear
    programs they needed, and the saddle gap reached."""

    value: float
    row: np.ndarray
    column: np.ndarray
    steps: int
    linear_programs: int
    gap: float


def solve_position(moves: np.ndarray, bust: np.ndarray, guess: float = 0.5) -> Position:
    """The fixed point v = val(moves + v * outer(bust, bust)) of one position.

    Iterates on the equilibrium strategies: with (x, y) optimal in M(v_k), v_(k+1) =
    x'moves y / (1 - (x.bust)(y.bust)) is what the position is worth if both keep playing them
    (Newton's step on v - val(M(v)), whose slope at v_k is 1 - (x.bust)(y.bust) > 0), kept
    inside a shrinking bracket of the root [0, 1], with a bisection when a step would leave
    it. Stops when (x, y) is a saddle point of M(v_(k+1)) to `SADDLE_TOLERANCE`, or after
    `MAX_FIXED_POINT_STEPS` steps with a RuntimeWarning (the gap reached says how far it got).
    """
    double = np.outer(bust, bust)
    if double.max() >= 1.0:
        raise ValueError("a position whose every move can repeat it forever has no value")
    low, high, value, programs, steps = 0.0, 1.0, guess, 0, 0
    while steps < MAX_FIXED_POINT_STEPS:
        steps += 1
        payoff = moves + value * double
        pure = _pure_saddle(payoff)
        if pure is None:
            programs += 1
        row, column, game_value = pure if pure is not None else _linear_program(payoff)
        if game_value > value:
            low = max(low, value)
        else:
            high = min(high, value)
        repeat = float(row @ bust) * float(column @ bust)
        stay = float(row @ moves @ column) / (1.0 - repeat)
        gap = saddle_gap(moves + stay * double, row, column)
        if gap <= SADDLE_TOLERANCE:
            break
        value = stay if low < stay < high else (low + high) / 2
    else:
        warnings.warn(
            f"a position's fixed point stopped after {steps} steps with saddle gap {gap:.1e} "
            f"(tolerance {SADDLE_TOLERANCE:g})",
            RuntimeWarning,
            stacklevel=2,
        )
    return Position(stay, row, column, steps, programs, gap)


def _windows(grid: np.ndarray, rows: np.ndarray, columns: np.ndarray, size: int) -> np.ndarray:
    """grid[i : i + size, j : j + size] for every (i, j), stacked: (n, size, size)."""
    view = np.lib.stride_tricks.sliding_window_view(grid, (size, size))
    return view[rows, columns]


class _Sweep:
    """The backward sweep over score sums that every solve here shares."""

    def __init__(self, model: SimultaneousHog) -> None:
        self.model, self.goal = model, model.goal
        self.law = model.point_law  # (points, actions)
        self.bust = self.law[0]
        self.size = self.law.shape[0]
        span = self.goal + self.size
        first, second = np.indices((span, span))
        # values[i, j]: player 0's win probability with totals (i, j) before the next move;
        # where a total has reached the goal, the rule's result.
        self.values = np.where(
            (first >= self.goal) | (second >= self.goal), model.first_wins(first, second), 0.0
        )

    def diagonals(self):
        """Positions of each score sum, the largest sum first: (rows, columns)."""
        for total in range(2 * self.goal - 2, -1, -1):
            rows = np.arange(max(0, total - self.goal + 1), min(self.goal - 1, total) + 1)
            yield rows, total - rows

    def moves(self, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """G[n, a, b] of each position: the move's worth except the double bust (whose window
        entry, the position itself, is still 0 when it is read)."""
        windows = _windows(self.values, rows, columns, self.size)
        return np.matmul(np.matmul(self.law.T, windows), self.law)


@dataclass
class Equilibrium(ByObservation):
    """Both players at the equilibrium of Simultaneous Hog, at every position.

    The arrays are indexed by scores, the player's own first: `values[own, other]`, with
    `own` and `other` from 0 to `goal` (index `goal` stands for a score that has reached the
    goal: a finished game). Values are win probabilities. Read them by observation with
    `value_at`, `strategy` and `action_values`.

    Attributes:
        values: (goal + 1, goal + 1) float64, [own, other]: the win probability of the player
            with score `own` against one with `other`, both playing the equilibrium (NaN where
            a score has reached the goal).
        strategies: (goal + 1, goal + 1, max_dice) float64, [own, other, a]: that player's
            probability of throwing a + 1 dice (one-hot on 1 die where a score has reached
            the goal, a filler no game reaches).
        goal: the score that wins.
        max_dice: the most dice a player may throw.
        sides: the faces of each die.
        seconds: wall time of the solve.
        saddle_gap: the largest over positions of the strategies' saddle gap in the position's
            matrix game at the returned values (at most `SADDLE_TOLERANCE` unless a fixed point
            ran out of steps).
        mixed_positions: positions whose strategy mixes two or more dice counts.
        linear_programs: matrix games that needed the linear program (no pure saddle point).
        steps: the most fixed-point steps any position took.
    """

    values: np.ndarray
    strategies: np.ndarray
    goal: int
    max_dice: int
    sides: int
    seconds: float
    saddle_gap: float
    mixed_positions: int
    linear_programs: int
    steps: int

    def __repr__(self) -> str:
        return (
            f"Equilibrium(goal={self.goal}, max_dice={self.max_dice}, sides={self.sides}, "
            f"value={self.value:.6g}, mixed_positions={self.mixed_positions}, "
            f"saddle_gap={self.saddle_gap:.2g}, seconds={self.seconds:.3g})"
        )

    @property
    def value(self) -> float:
        """Player 0's win probability at the start (1/2: the game is symmetric)."""
        return float(self.values[0, 0])

    def value_at(self, obs) -> float:
        """The win probability of the player whose score is `own`, at obs = (own, other)."""
        own, other = self._position(obs)
        return float(self.values[own, other])

    def strategy(self, obs) -> np.ndarray:
        """That player's equilibrium probabilities over 1..max_dice dice at (own, other)."""
        own, other = self._position(obs)
        return self.strategies[own, other].copy()

    def probabilities(self) -> np.ndarray:
        """The strategy as an opponent table over the observation grid."""
        return self.strategies

    def action(self, obs) -> int:
        """The most probable number of dice at (own, other), as an action (dice - 1); where the
        equilibrium mixes, `strategy(obs)` gives the whole mixture."""
        return int(self.strategy(obs).argmax())

    def action_values(self, obs) -> np.ndarray:
        """The win probability of throwing each number of dice (action a: a + 1 dice) at
        (own, other) against the opponent's equilibrium mixture, both playing the equilibrium
        after. The actions the equilibrium mixes are all worth the position's value."""
        own, other = self._position(obs)
        sweep = _Sweep(SimultaneousHog(self.goal, self.max_dice, self.sides))
        sweep.values[: self.goal, : self.goal] = self.values[: self.goal, : self.goal]
        sweep.values[own, other] = 0.0  # the position itself: the double bust, added below
        moves = sweep.moves(np.array([own]), np.array([other]))[0]
        payoff = moves + self.values[own, other] * np.outer(sweep.bust, sweep.bust)
        return payoff @ self.strategies[other, own]

    def _position(self, obs) -> tuple[int, int]:
        scores = np.asarray(obs, dtype=object).reshape(-1)
        if len(scores) != 2:
            raise ValueError(f"obs must be (own score, other score), got {obs!r}")
        own = check_int("own score", scores[0], 0, self.goal - 1)
        other = check_int("other score", scores[1], 0, self.goal - 1)
        return own, other


def equilibrium(
    env_id: str | None = None, *, max_memory: int | str | None = None, **kwargs
) -> Equilibrium:
    """The exact equilibrium of the simultaneous game behind `env_id` (None: the one registered
    game with an equilibrium solver) with the env's keyword arguments (an `opponent` is
    checked as the env would check it, then ignored: the equilibrium has none). Cached per
    game. Simultaneous Hog to 100 with 10 dice takes a few seconds. Before any work, one
    whose estimated peak memory passes `max_memory` is refused with a ValueError (as in
    `baselines.solve`)."""
    if env_id is None:
        found = [e.env_id for e in GAMES.values() if e.equilibrium_solver is not None]
        if len(found) != 1:
            raise ValueError(f"env_id must name a simultaneous game: one of {found}")
        env_id = found[0]
    sizes.check(env_id, "equilibrium", kwargs, max_memory=max_memory)
    model = make_model(env_id, **kwargs)
    solver = game(env_id).hook("equilibrium_solver")
    if solver is None:
        raise ValueError(f"{env_id} is not a simultaneous-move game with an equilibrium solver")
    return solver(model.model if isinstance(model, SimultaneousFold) else model)


def equilibrium_policy(model: Any) -> np.ndarray:
    """Action probabilities over a simultaneous model's observation grid of its equilibrium:
    the policy and opponent "equilibrium" (entry point `dice_envs.policies`)."""
    if not getattr(model, "simultaneous", False):
        raise ValueError(
            "equilibrium is the solution of a simultaneous game; an alternating game's is "
            '"two-player-optimal"'
        )
    solver = model_hook(model, "equilibrium_solver")
    if solver is None:
        raise ValueError(f"{model!r} has no equilibrium solver registered")
    return solver(model).probabilities()


def solve_equilibrium(model: SimultaneousHog) -> Equilibrium:
    """The equilibrium of `model` (cached per goal, dice and sides)."""
    return _solved(model.goal, model.max_dice, model.sides)


@functools.lru_cache(maxsize=8)
def _solved(goal: int, max_dice: int, sides: int) -> Equilibrium:
    start = time.perf_counter()
    model = SimultaneousHog(goal, max_dice, sides)
    sweep = _Sweep(model)
    strategies = np.zeros((goal + 1, goal + 1, max_dice))
    strategies[..., 0] = 1.0
    worst_gap, mixed, programs, most_steps = 0.0, 0, 0, 0
    with progress.task("solving", total=goal * goal, unit="positions") as report:
        for rows, columns in sweep.diagonals():
            for i, j, moves in zip(rows, columns, sweep.moves(rows, columns), strict=True):
                position = solve_position(moves, sweep.bust)
                sweep.values[i, j] = position.value
                strategies[i, j] = position.row
                worst_gap = max(worst_gap, position.gap)
                mixed += int((position.row > 0).sum() > 1)
                programs += position.linear_programs
                most_steps = max(most_steps, position.steps)
            report.advance(len(rows))
    values = np.full((goal + 1, goal + 1), np.nan)
    values[:goal, :goal] = sweep.values[:goal, :goal]
    for shared in (values, strategies):  # cached and handed out: nobody may change them
        shared.flags.writeable = False
    return Equilibrium(
        values=values,
        strategies=strategies,
        goal=goal,
        max_dice=max_dice,
        sides=sides,
        seconds=time.perf_counter() - start,
        saddle_gap=worst_gap,
        mixed_positions=mixed,
        linear_programs=programs,
        steps=most_steps,
    )


def _grid_rows(model: SimultaneousHog) -> np.ndarray:
    """The observations (own, other) below the goal, in the order of a grid table's rows."""
    return np.indices((model.goal, model.goal)).reshape(2, -1).T


def _grid_policy(model: SimultaneousHog, table: np.ndarray, name: str) -> np.ndarray:
    """A policy as probabilities [own, other, a] over the scores below the goal, checked."""
    table = np.asarray(table, dtype=float)
    shape = (model.goal + 1, model.goal + 1, model.max_dice)
    if table.shape != shape:
        raise ValueError(f"{name} must have shape {shape} (own, other, action), got {table.shape}")
    below = table[: model.goal, : model.goal]
    probs = checked_answer(below.reshape(-1, model.max_dice), _grid_rows(model), model.max_dice)
    return probs.reshape(below.shape)


def pair_values(model: SimultaneousHog, first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """Player 0's exact win probability at every position [i, j] (i, j below the goal) when
    player 0 plays `first` and player 1 plays `second`, both stationary mixed policies given as
    tables [own, other, a] over the observation grid and read at each player's own observation
    (player 1 at (j, i)). One backward sweep; exact up to round-off."""
    ours = _grid_policy(model, first, "first")
    theirs = _grid_policy(model, second, "second")
    sweep = _Sweep(model)
    for rows, columns in sweep.diagonals():
        moves = sweep.moves(rows, columns)
        x, y = ours[rows, columns], theirs[columns, rows]
        worth = np.einsum("na,nab,nb->n", x, moves, y)
        sweep.values[rows, columns] = worth / (1.0 - (x @ sweep.bust) * (y @ sweep.bust))
    return sweep.values[: model.goal, : model.goal].copy()


def best_response(model: SimultaneousHog, opponent: np.ndarray) -> np.ndarray:
    """Q-values [i, j, a] of player 0's exact best response to player 1 playing `opponent` (a
    table [own, other, a], read at (j, i)): the win probability of throwing a + 1 dice at (i, j)
    and playing the best response after. Against a fixed opponent a position's value is
    max_a r_a / (1 - c_a) (r_a: what the move's other outcomes are worth, c_a < 1: the chance
    it repeats the position). That is the unique fixed point of v = max_a (r_a + c_a v), since
    every r_a + c_a v has slope below 1; so one backward sweep is exact."""
    theirs = _grid_policy(model, opponent, "opponent")
    sweep = _Sweep(model)
    q = np.zeros((model.goal, model.goal, model.max_dice))
    for rows, columns in sweep.diagonals():
        moves = sweep.moves(rows, columns)
        y = theirs[columns, rows]
        repeat = sweep.bust[None, :] * (y @ sweep.bust)[:, None]
        worth = np.einsum("nab,nb->na", moves, y)
        value = (worth / (1.0 - repeat)).max(axis=1)
        q[rows, columns] = worth + repeat * value[:, None]
        sweep.values[rows, columns] = value
    return q


def solve_simultaneous_fold(fold: SimultaneousFold) -> Solution:
    """`baselines.solve` of `dice_envs/SimultaneousHog-v0`: the exact best response to the
    fold's opponent, by `best_response`. The opponent is read at every position below the
    goal, reachable or not, so a mapping opponent must cover the whole grid;
    `baselines.solve(..., method="generic")` builds the fold's tables, which ask only at the
    positions the start reaches."""
    start = time.perf_counter()
    model = fold.model
    scores = np.indices((model.goal, model.goal)).reshape(2, -1).T
    table = np.zeros((model.goal + 1, model.goal + 1, model.max_dice))
    table[..., 0] = 1.0
    table[: model.goal, : model.goal] = fold.opponent_policy.batch_probs(scores).reshape(
        model.goal, model.goal, model.max_dice
    )
    reachable = reachable_positions(model, table).sum()
    q = best_response(model, table).reshape(-1, model.max_dice)
    index = GridIndex((model.goal, model.goal), np.ones(len(q), bool))
    seconds = time.perf_counter() - start
    legal = np.ones_like(q, dtype=bool)
    return grid_solution(q[0].max(), q, legal, index, seconds, _reachable=int(reachable))


def reachable_positions(model: SimultaneousHog, opponent: np.ndarray) -> np.ndarray:
    """[i, j]: whether the fold can reach position (i, j) from the start, the agent throwing
    any number of dice and the opponent any it plays with positive probability (read at
    (j, i)); a forward pass over score sums, since a move never lowers a score."""
    goal = model.goal
    theirs = opponent[:goal, :goal] > 0
    scores = model.point_law > 0  # [points, action]
    ours = scores.any(axis=1)  # points the agent can score with some number of dice
    reach = np.zeros((goal, goal), dtype=bool)
    reach[0, 0] = True
    for total in range(2 * goal - 1):
        for i in range(max(0, total - goal + 1), min(goal - 1, total) + 1):
            j = total - i
            if not reach[i, j]:
                continue
            their_points = (scores[:, theirs[j, i]]).any(axis=1)
            first = i + np.flatnonzero(ours)
            second = j + np.flatnonzero(their_points)
            first, second = first[first < goal], second[second < goal]
            reach[np.ix_(first, second)] = True
    return reach


def simultaneous_outcome_rows(fold: SimultaneousFold) -> int:
    """An upper bound on the fold's outcome rows (whether to build its tables for a residual)."""
    model = fold.model
    per_throw = (model.sides - 1) * model.max_dice + 2
    return model.goal**2 * model.max_dice * per_throw**2


@dataclass
class ShapleyIteration:
    """Plain Shapley value iteration: every position's matrix game re-solved in every sweep,
    all from the previous sweep's values (no ordering by score sum).

    Attributes:
        values: [i, j] player 0's values after the last sweep.
        sweeps: sweeps done; residual: the largest change in the last one.
        seconds: wall time; linear_programs: matrix games that needed the linear program.
    """

    values: np.ndarray
    sweeps: int
    residual: float
    seconds: float
    linear_programs: int


def shapley_value_iteration(
    model: SimultaneousHog, tol: float = 1e-12, max_sweeps: int = 10_000, max_seconds=np.inf
) -> ShapleyIteration:
    """Shapley's value iteration, the textbook method, for comparison with the ordered solve:
    V_(n+1)(s) = val(M_s(V_n)) at every position at once, from V_0 = 1/2, until no value
    moves by more than `tol` (or `max_sweeps` sweeps, or `max_seconds`). Pure saddle points
    are found for all positions at once; the rest go to the linear program one by one."""
    if not (isinstance(tol, int | float) and not isinstance(tol, bool) and tol > 0):
        raise ValueError(f"tol must be a number > 0, got {tol!r}")
    max_sweeps = check_int("max_sweeps", max_sweeps, 1)
    if not (isinstance(max_seconds, int | float) and max_seconds > 0):
        raise ValueError(f"max_seconds must be a number > 0, got {max_seconds!r}")
    start = time.perf_counter()
    sweep = _Sweep(model)
    goal = model.goal
    rows, columns = (axis.ravel() for axis in np.indices((goal, goal)))
    sweep.values[:goal, :goal] = 0.5
    residual, sweeps, programs = np.inf, 0, 0
    while residual > tol and sweeps < max_sweeps and time.perf_counter() - start < max_seconds:
        current = sweep.values[rows, columns].copy()
        payoff = sweep.moves(rows, columns)  # the double bust reads the position's own V_n
        worst, best = payoff.min(axis=2), payoff.max(axis=1)
        new = worst.max(axis=1)
        mixed = np.flatnonzero(new < best.min(axis=1))
        for k in mixed:
            new[k] = _linear_program(payoff[k])[2]
        programs += len(mixed)
        residual = float(np.abs(new - current).max())
        sweep.values[rows, columns] = new
        sweeps += 1
    return ShapleyIteration(
        values=sweep.values[:goal, :goal].copy(),
        sweeps=sweeps,
        residual=residual,
        seconds=time.perf_counter() - start,
        linear_programs=programs,
    )


@dataclass
class FictitiousPlay:
    """Symmetric fictitious play on behaviour strategies, scored exactly at every iteration.

    Attributes:
        strategies: [own, other, a] the average strategy after the last iteration.
        exploitability: entry k is the exploitability of the average after k iterations (k = 0:
            the start), its best response's win probability from the start minus 1/2.
        seconds: wall time.
    """

    strategies: np.ndarray
    exploitability: np.ndarray
    seconds: float


def fictitious_play(
    model: SimultaneousHog, iterations: int, start: np.ndarray | None = None
) -> FictitiousPlay:
    """Self-play with exact best responses: one average strategy plays both seats (the game is
    symmetric). Iteration t computes the exact best response to the average (`best_response`,
    one sweep) and moves the average a step 1 / (t + 2) towards it, position by position: the
    start (by default the uniform strategy) counts as the first term of the average. The
    averaging is of behaviour strategies with equal weights per position, not weighted by how
    often each past policy reaches the position (as extensive-form fictitious play would), so
    no theorem promises convergence; the exploitability after every iteration measures it."""
    iterations = check_int("iterations", iterations, 1)
    clock = time.perf_counter()
    goal, actions = model.goal, model.max_dice
    average = np.full((goal + 1, goal + 1, actions), 1.0 / actions) if start is None else start
    average = np.array(average, dtype=float)
    _grid_policy(model, average, "start")
    curve = np.empty(iterations + 1)
    for t in range(iterations + 1):
        q = best_response(model, average)
        curve[t] = q[0, 0].max() - 0.5  # the average after t iterations
        if t == iterations:
            break
        response = np.zeros_like(q)
        np.put_along_axis(response, q.argmax(axis=-1)[..., None], 1.0, axis=-1)
        average[:goal, :goal] += (response - average[:goal, :goal]) / (t + 2)
    return FictitiousPlay(average, curve, time.perf_counter() - clock)

"""Two-player optima: both players maximise their win probability.

`two_player_optimum(model)` solves any two-player model; Pig, two-dice Pig and Hog have fast
layered solvers, every game has the generic one (minimax value iteration over the tables of
both seats), and the tests hold them equal. The optimum is also every fold's policy and
opponent "two-player-optimal": `dice_envs` resolves it through the `dice_envs.policies` entry
points (pyproject.toml), so the games never import a solver.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from baselines.protocols import ByObservation, observation_rows
from baselines.solvers import q_from_values
from dice_envs.games.base import Observation, State, reachable_states
from dice_envs.games.hog import Hog
from dice_envs.games.pig import HOLD, ROLL, Pig
from dice_envs.games.two_dice_pig import TwoDicePig
from dice_envs.games.two_player import AGENT, TwoPlayerModel
from dice_envs.registration import model_hook
from dice_envs.tables import Tables, build_tables

METHODS = ("auto", "layered", "value_iteration")
# Two-dice Pig: the outer iteration on the wipe values stops when they move by at most this.
WIPE_TOLERANCE = 1e-13
MAX_WIPE_ROUNDS = 200  # a safety net; goal 100 takes about ten rounds
HOG_TOLERANCE = 1e-15  # a Hog layer is done when no number of dice beats its values by more
MAX_HOG_PASSES = 100


@dataclass
class TwoPlayerSolution(ByObservation):
    """Both players optimal.

    The arrays are laid out over the model's observation grid (`model.observation_nvec`),
    indexed by the mover's own observation (Pig: own score, opponent score, turn total), so
    `policy[obs]` is the optimal action at observation `obs` whichever seat moves. Values are
    win probabilities.

    Attributes:
        value: the first player's win probability at the start.
        mover_values: float64 over the observation grid: the mover's win probability per
            observation, from the mover's side (NaN where no position has that observation).
        policy: int64 over the observation grid: the mover's optimal action per observation
            (lowest-numbered on exact ties).
        num_actions: the model's number of actions.
        method: "layered" or "value_iteration".
        seconds: wall time of the solve.
        residual: the largest change of the last iteration (value iteration), or of the
            outer iteration on the wipe values (two-dice Pig); 0 for a solve with none.
        iterations: sweeps (value iteration), outer rounds (two-dice Pig), or the most
            passes a layer took (Pig, Hog).
        model: the two-player model solved (`action_values` needs it; None if not kept).
    """

    value: float
    mover_values: np.ndarray
    policy: np.ndarray
    num_actions: int
    method: str
    seconds: float = 0.0
    residual: float = 0.0
    iterations: int = 0
    model: TwoPlayerModel | None = field(default=None, repr=False)

    def value_at(self, obs: Observation) -> float:
        """The mover's win probability at observation `obs` (the mover's own view)."""
        return float(self.mover_values[tuple(np.atleast_1d(obs))])

    def action(self, obs: Observation) -> int:
        """The mover's optimal action at observation `obs` (the mover's own view)."""
        return int(self.policy[tuple(np.atleast_1d(obs))])

    def probabilities(self) -> np.ndarray:
        """The policy as action probabilities over the grid (an opponent table)."""
        return np.eye(self.num_actions, dtype=np.float32)[self.policy]

    def actions(self, observations: np.ndarray) -> np.ndarray:
        """The mover's optimal action at each observation of an (n, k) batch."""
        return self.policy[tuple(observation_rows(observations).T)]

    def values_at(self, observations: np.ndarray) -> np.ndarray:
        """The mover's win probability at each observation of an (n, k) batch."""
        return self.mover_values[tuple(observation_rows(observations).T)]

    def action_values(self, obs: Observation) -> np.ndarray:
        """The mover's win probability after each action at `obs` (the mover's view), both
        players optimal after it; NaN for the actions the rules forbid there."""
        if self.model is None:
            raise ValueError("action values need the model: solve with two_player_optimum")
        model = self.model
        state = model.state_of(tuple(int(v) for v in np.atleast_1d(obs)), AGENT)
        values = np.full(self.num_actions, np.nan)
        for action in model.legal_actions(state):
            worth = 0.0
            for prob, after, reward, terminal in model.transitions(state, action):
                if not terminal:
                    mover = model.to_move(after)
                    seen = self.mover_values[tuple(np.atleast_1d(model.observation(after, mover)))]
                    reward += seen if mover == AGENT else 1.0 - seen
                worth += prob * reward
            values[action] = worth
        return values


def two_player_optimal_policy(model: TwoPlayerModel) -> np.ndarray:
    """Action probabilities over the model's observation grid of its two-player optimum: the
    policy and opponent "two-player-optimal" (entry point `dice_envs.policies`)."""
    if getattr(model, "simultaneous", False):
        raise ValueError(
            "two-player-optimal is the optimum of an alternating game; a simultaneous game's "
            'is "equilibrium"'
        )
    solution = two_player_optimum(model)
    over_grid = getattr(solution, "probabilities", None)  # a race too large for a grid: asked
    return over_grid() if over_grid is not None else solution.batched_policy()


def two_player_optimum(model: TwoPlayerModel, method: str = "auto") -> TwoPlayerSolution:
    """The two-player optimum of `model`: "layered" (Pig, two-dice Pig, Hog), "value_iteration"
    (any model), or "auto" (layered where there is one). Pig's solve is cached per goal and
    die."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}; got {method!r}")
    layered = model_hook(model, "two_player_solver")
    if method == "layered" and layered is None:
        raise ValueError(f"{model!r} has no layered solver; use method='value_iteration'")
    start = time.perf_counter()
    if layered is not None and method != "value_iteration":
        solution = layered(model)
    else:
        solution = minimax_value_iteration(model)
    solution.seconds = time.perf_counter() - start
    solution.model = model
    return solution


# -- the generic solver ------------------------------------------------------------------------
class BothSeats:
    """A two-player model as one enumerable game: its states are its observations, so the
    tables hold every position of either seat (the player to move included)."""

    def __init__(self, model: TwoPlayerModel) -> None:
        self.model = model
        self.num_actions, self.action_names = model.num_actions, model.action_names
        bounds = getattr(model, "state_bounds", None)
        if bounds is not None:
            self.state_bounds = self.observation_nvec = tuple(bounds)
        else:  # the grid the reachable states span
            states = np.array(list(reachable_states(self)), dtype=np.int64)
            self.observation_nvec = tuple(int(n) for n in states.max(axis=0) + 1)
        if not (hasattr(model, "batch_transitions") and bounds is not None):
            self.batchable = False

    def initial_states(self):
        return self.model.initial_states()

    def legal_actions(self, state: State):
        return self.model.legal_actions(state)

    def transitions(self, state: State, action: int):
        return self.model.transitions(state, action)

    def observation(self, state: State):
        return state

    def validate_state(self, state):
        return self.model.validate_state(state)

    def render_text(self, state: State) -> str:
        return self.model.render_text(state, self.model.to_move(state))

    def batch_transitions(self, states: np.ndarray, action: int):
        return self.model.batch_transitions(states, action)

    def batch_legal(self, states: np.ndarray) -> np.ndarray:
        return self.model.batch_legal(states)

    def batch_observation(self, states: np.ndarray) -> np.ndarray:
        return states


def minimax_value_iteration(
    model: TwoPlayerModel, tol: float = 1e-14, max_iterations: int = 1_000_000
) -> TwoPlayerSolution:
    """Value iteration on the tables of both seats: player 0 maximises, player 1 minimises
    player 0's win probability.

    Limits and tolerance: the model's states must be tuples of non-negative ints (with
    `state_bounds` for the vectorised table builder). Sweeps from V = 0 until no value moves by more
    than `tol`; the values are monotone in the sweeps for these games (win probabilities
    grow as more of the game is seen), so the result is within about tol / (1 - rate) of the
    optimum. For checking the layered solvers at small goals: every sweep touches every row.
    """
    tables = build_tables(BothSeats(model))
    mover = _movers(model, tables)
    legal = tables.legal
    values = np.zeros(tables.num_states)
    for iteration in range(1, max_iterations + 1):  # noqa: B007 (read after the loop)
        q = q_from_values(tables, values)
        best = np.where(
            mover == AGENT,
            np.where(legal, q, -np.inf).max(axis=1),
            np.where(legal, q, np.inf).min(axis=1),
        )
        change = float(np.max(np.abs(best - values), initial=0.0))
        values = best
        if change <= tol:
            break
    else:
        raise RuntimeError(f"minimax value iteration did not reach tol={tol}")
    q = q_from_values(tables, values)
    # The mover's own win probability and greedy action, on the mover's observation grid.
    own_q = np.where((mover == AGENT)[:, None], q, 1.0 - q)
    actions = np.where(legal, own_q, -np.inf).argmax(axis=1)
    own_values = np.where(mover == AGENT, values, 1.0 - values)
    grid = tuple(model.observation_nvec)
    mover_values = np.full(grid, np.nan)
    policy = np.zeros(grid, dtype=np.int64)
    observed = np.array(
        [model.observation(state, int(m)) for state, m in zip(tables.states, mover, strict=True)],
        dtype=np.int64,
    ).reshape(tables.num_states, -1)
    index = tuple(observed.T)
    mover_values[index] = own_values
    policy[index] = actions
    return TwoPlayerSolution(
        value=float(tables.initial @ values),
        mover_values=mover_values,
        policy=policy,
        num_actions=model.num_actions,
        method="value_iteration",
        residual=change,
        iterations=iteration,
    )


def _movers(model: TwoPlayerModel, tables: Tables) -> np.ndarray:
    return np.array([model.to_move(state) for state in tables.states], dtype=np.int64)


# -- layered solvers ---------------------------------------------------------------------------
def _pig_grid(model: Pig, turn_start: np.ndarray, value: np.ndarray, roll: np.ndarray):
    """A layered Pig-family solve on the observation grid [own, other, turn]."""
    goal = model.goal
    values = np.full(tuple(model.observation_nvec), np.nan)
    values[:goal, :goal, :] = value
    policy = np.full(tuple(model.observation_nvec), ROLL, dtype=np.int64)
    policy[:goal, :goal, :] = np.where(roll, ROLL, HOLD)
    return float(turn_start[0, 0]), values, policy


def pig_optimum(model: Pig) -> TwoPlayerSolution:
    from baselines.pig import two_player_optimum as pig_optimum

    optimum = pig_optimum(model.goal, model.face_probs)
    tables = optimum.tables
    value, values, policy = _pig_grid(model, tables.turn_start, tables.value, optimum.roll)
    return TwoPlayerSolution(
        value, values, policy, model.num_actions, "layered", iterations=tables.passes
    )


def two_dice_pig_optimum(model: TwoDicePig) -> TwoPlayerSolution:
    """Pig's layered solve with the wipe (a double 1) worth a guess of the turn-start values
    X(j, 0), iterated until those stop moving (by at most WIPE_TOLERANCE).

    A double 1 sends the mover's score to 0: from layer i + j to the opponent's turn start at
    (j, 0), a lower layer, so the layers alone do not order the game. Each round solves every
    layer exactly for the wipe values of the last round; the wipe values move by a factor of
    about 0.06 a round at goal 100 (a double 1 is rare and X(j, 0) depends little on the
    values after one), so ten rounds reach 1e-13.
    """
    from baselines.pig import RollLaw, two_player_layers

    goal, law = model.goal, RollLaw.of(model)
    wiped = np.full(goal, 0.5)
    change = np.inf
    for rounds in range(1, MAX_WIPE_ROUNDS + 1):  # noqa: B007 (read after the loop)
        tables = two_player_layers(goal, law, wiped)
        new = tables.turn_start[:, 0].copy()
        change = float(np.max(np.abs(new - wiped)))
        wiped = new
        if change <= WIPE_TOLERANCE:
            break
    else:
        raise RuntimeError(f"the wipe values moved by {change:.3g} after {rounds} rounds")
    value, values, policy = _pig_grid(model, tables.turn_start, tables.value, tables.roll_decision)
    return TwoPlayerSolution(
        value, values, policy, model.num_actions, "layered", residual=change, iterations=rounds
    )


def hog_optimum(model: Hog) -> TwoPlayerSolution:
    """Hog layer by layer (score sum descending): a throw scores 0 (the opponent's turn at the
    mirrored position, same layer) or climbs to a layer already solved. Each pair of
    mirrored positions solves x = max_d a_d + p_d (1 - y), y = max_e b_e + q_e (1 - x) by
    policy iteration, all pairs of a layer at once: both pick their best number of dice for
    the last values, the pair's two linear equations are solved in closed form, and a layer
    stops when no number of dice beats the values by more than HOG_TOLERANCE.

    Limits: at most MAX_HOG_PASSES passes per layer (RuntimeError beyond; goal 100 needs 2 to
    3). The values are exact up to round-off and HOG_TOLERANCE.
    """
    goal, counts = model.goal, model.max_dice
    width = 1 + max(points for law in model.scores for points, _ in law)
    prob = np.zeros((counts, width))  # prob[d, s]: d + 1 dice score s (s = 0: a 1 showed)
    for d, law in enumerate(model.scores):
        for points, p in law:
            prob[d, points] = p
    bust = prob[:, 0]
    x = np.full((goal, goal), np.nan)  # X(i, j): the mover at i, the opponent at j
    most_passes = 0
    for layer in range(2 * goal - 2, -1, -1):
        own = np.arange(max(0, layer - goal + 1), min(layer, goal - 1) + 1)
        other, m = layer - own, len(own)
        later = own[:, None] + np.arange(1, width)[None, :]
        after = np.where(later < goal, 1.0 - x[other[:, None], np.minimum(later, goal - 1)], 1.0)
        climb = after @ prob[:, 1:].T  # a_d per [position, d]; the mirror sits reversed
        y = np.full(m, 0.5)
        for passes in range(1, MAX_HOG_PASSES + 1):  # noqa: B007 (read after the loop)
            d = (climb + bust[None, :] * (1.0 - y[::-1][:, None])).argmax(axis=1)
            a, p = climb[np.arange(m), d], bust[d]
            y = (a + p * (1.0 - a[::-1] - p[::-1])) / (1.0 - p * p[::-1])
            gap = (climb + bust[None, :] * (1.0 - y[::-1][:, None])).max(axis=1) - y
            if gap.max(initial=0.0) <= HOG_TOLERANCE:
                break
        else:
            raise RuntimeError(f"Hog layer {layer}: no fixed point in {MAX_HOG_PASSES} passes")
        x[own, other] = y
        most_passes = max(most_passes, passes)
    values = np.full(tuple(model.observation_nvec), np.nan)
    values[:goal, :goal] = x
    policy = np.zeros(tuple(model.observation_nvec), dtype=np.int64)
    policy[:goal, :goal] = _hog_greedy(x, prob, goal)
    return TwoPlayerSolution(
        float(x[0, 0]), values, policy, model.num_actions, "layered", iterations=most_passes
    )


def _hog_greedy(x: np.ndarray, prob: np.ndarray, goal: int) -> np.ndarray:
    """The best number of dice (as an action) at every [own, other], given the values x."""
    width = prob.shape[1]
    own = np.arange(goal)[:, None, None]
    other = np.arange(goal)[None, :, None]
    later = own + np.arange(width)[None, None, :]  # s = 0 included: the mirror
    after = np.where(later < goal, 1.0 - x[other, np.minimum(later, goal - 1)], 1.0)
    return (after @ prob.T).argmax(axis=-1)

"""Generic exact solvers over a game's `Tables`: backward induction, value iteration, and exact
evaluation of a fixed policy by a sparse linear solve.

All games here are undiscounted and end with probability 1 under every policy, so values are
expected total rewards.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from scipy.sparse.csgraph import connected_components

from baselines.protocols import ByObservation, observation_rows
from dice_envs import progress
from dice_envs.tables import Tables, longest_path_levels, observation_key

# Actions whose Q-value is within this of the best are all counted optimal (ties).
TIE_TOLERANCE = 1e-9


@dataclass
class Solution(ByObservation):
    """An optimal value function and policy.

    The per-state arrays have one row per state index: the state order of the game's tables
    (`dice_envs.tables.Tables`) for a generic solve, the cells of the solver's own grid of
    positions for a specialised one. `index_of(obs)` gives an observation's row; read them
    by observation with `action`, `q_values`, `value_at` and `action_values` rather than by
    row. Values are expected total returns in the game's own reward units (a win
    probability for a two-player game against a fixed opponent).

    Attributes:
        value: the optimal expected return from the start distribution.
        state_values: (states,) float64, the optimal value of each state, V*(s).
        q: (states, actions) float64, Q*(s, a): the expected return of action a, then optimal
            play; illegal actions hold what the model makes of them (`action_values` gives
            NaN there).
        policy: (states,) int64, the optimal action of each state (lowest-numbered on ties).
        legal: (states, actions) bool, the rules' legal actions.
        index_of: observation -> state index (raises KeyError for an observation no state
            has).
        method: which solver produced it: "backward", "value_iteration" or "specialised".
        seconds: wall time of the solve, building the tables included (a specialised solve
            leaves out the tables it builds only to measure `bellman_residual`).
        iterations: value iteration's sweeps, or the most passes a layer of Pig's layered
            solver took (0 for backward induction and the other specialised solvers).
        tables: the tables the arrays are indexed by (None for a specialised solve, whose rows
            are its grid's).
        table_seconds: the time spent building the tables (not part of `seconds` for a
            specialised solver, whose residual is measured when first read).
        batch_index: an (m, k) batch of observations -> their state indices, -1 where there
            is none (None: `indices_of` asks `tables` or `index_of`).
        bellman_residual: max over the tables' states of |V(s) - max_a Q(s, a)|, Q computed
            from the tables and the returned V (NaN when no tables were built).
        num_states: the number of reachable non-terminal states (the tables'); a specialised
            solver may also answer for positions the start never reaches.
    """

    value: float
    state_values: np.ndarray
    q: np.ndarray
    policy: np.ndarray
    legal: np.ndarray
    index_of: Callable[[Any], int]
    method: str
    seconds: float
    _residual: float
    iterations: int = 0
    tables: Tables | None = field(default=None, repr=False)
    table_seconds: float = 0.0
    _reachable: int = field(default=-1, repr=False)
    batch_index: Callable[[np.ndarray], np.ndarray] | None = field(default=None, repr=False)
    _visits: np.ndarray | None = field(default=None, repr=False)

    def visits(self) -> np.ndarray:
        """Expected visits of each state under this policy from the start (computed once)."""
        if self._visits is None:
            if self.tables is None:
                raise ValueError("visits need the tables the solution is indexed by")
            self._visits = occupancy(self.tables, self.policy)
        return self._visits

    def indices_of(self, observations: np.ndarray) -> np.ndarray:
        """State indices of an (m, k) batch of observations (-1 where there is none)."""
        if self.batch_index is not None:
            return self.batch_index(np.asarray(observations))
        if self.tables is not None:
            return self.tables.indices_of(observations)
        rows = []
        for obs in np.asarray(observations):
            try:
                rows.append(self.index_of(obs))
            except KeyError:
                rows.append(-1)
        return np.array(rows, dtype=np.int64)

    def __post_init__(self) -> None:
        if self._reachable < 0 and self.tables is not None:
            self._reachable = self.tables.num_states
        self._measure: Callable[[], Tables] | None = None

    def measure_on(self, build: Callable[[], Tables]) -> None:
        """Measure the Bellman residual and the number of reachable states on the tables
        that `build()` returns, when first asked (for solvers that need no tables)."""
        self._measure = build

    def _measured(self) -> None:
        if self._measure is None:
            return
        tables, self._measure = self._measure(), None
        rows = self.indices_of(tables.observation_array)
        if (rows < 0).any():
            raise ValueError(f"the {self.method} solution misses states of the tables")
        self._residual = bellman_residual(tables, self.state_values[rows])
        self._reachable, self.table_seconds = tables.num_states, tables.seconds

    @property
    def bellman_residual(self) -> float:
        """max over the tables' states of |V(s) - max_a Q(s, a)| (Q from the tables)."""
        self._measured()
        return self._residual

    @bellman_residual.setter
    def bellman_residual(self, value: float) -> None:
        self._residual = value

    @property
    def num_states(self) -> int:
        """The number of reachable non-terminal states (the tables')."""
        self._measured()
        return self._reachable

    @num_states.setter
    def num_states(self, value: int) -> None:
        self._reachable = value

    def __repr__(self) -> str:
        # The raw fields: a repr never builds tables to measure them.
        states = self._reachable if self._reachable >= 0 else "not counted"
        return (
            f"Solution(value={self.value:.6g}, method={self.method!r}, states={states}, "
            f"seconds={self.seconds:.3g}, bellman_residual={self._residual:.2g})"
        )

    def action(self, obs) -> int:
        """The optimal action for an observation (lowest-numbered on ties)."""
        return int(self.policy[self.index_of(obs)])

    def q_values(self, obs) -> np.ndarray:
        """Q(s, a) for every action; illegal actions have the value the model gives them."""
        return self.q[self.index_of(obs)].copy()

    def state_value(self, obs) -> float:
        """The optimal expected return from the state with observation `obs`."""
        return float(self.state_values[self.index_of(obs)])

    def value_at(self, obs) -> float:
        """The optimal expected return from the state with observation `obs`."""
        return self.state_value(obs)

    def action_values(self, obs) -> np.ndarray:
        """Q(s, a) of every action at observation `obs`, NaN for the actions the rules forbid
        there (`q_values` gives what the model makes of those)."""
        i = self.index_of(obs)
        return np.where(self.legal[i], self.q[i], np.nan)

    def optimal_actions(self, obs) -> list[int]:
        """Every legal action within TIE_TOLERANCE of the best."""
        i = self.index_of(obs)
        return np.flatnonzero(optimal_action_mask(self.q[i], self.legal[i])).tolist()

    def __call__(self, obs) -> int:
        return self.action(obs)

    def _rows_of(self, observations: np.ndarray) -> np.ndarray:
        rows = observation_rows(observations)
        index = self.indices_of(rows)
        if (index < 0).any():
            missing = tuple(rows[np.flatnonzero(index < 0)[0]].tolist())
            raise ValueError(f"observations: no state of the game shows {missing}")
        return index

    def actions(self, observations: np.ndarray) -> np.ndarray:
        """The optimal action at each observation of an (n, k) batch ((n,) int64)."""
        return self.policy[self._rows_of(observations)]

    def action_values_batch(self, observations: np.ndarray) -> np.ndarray:
        """(n, num_actions): `action_values` of each observation of an (n, k) batch."""
        index = self._rows_of(observations)
        return np.where(self.legal[index], self.q[index], np.nan)

    def values_at(self, observations: np.ndarray) -> np.ndarray:
        """(n,): the optimal value at each observation of an (n, k) batch."""
        return self.state_values[self._rows_of(observations)]


class GridIndex:
    """Observation -> row of a solver's arrays laid out over a grid (`shape`, observations
    shifted by `offset`); positions outside the grid or not `known` have no row. A class, not
    a closure, so that solutions pickle (a solution may be an env's opponent)."""

    def __init__(
        self, shape: tuple[int, ...], known: np.ndarray, offset: tuple[int, ...] | None = None
    ) -> None:
        self.shape = tuple(int(v) for v in shape)
        self.known = np.asarray(known, dtype=bool).reshape(-1)
        self.offset = np.zeros(len(self.shape), np.int64) if offset is None else np.array(offset)

    def __call__(self, obs) -> int:
        key = observation_key(obs)
        key = (key,) if isinstance(key, int) else key
        index = (
            int(self.batch(np.array([key], dtype=np.int64))[0])
            if len(key) == len(self.shape)
            else -1
        )
        if index < 0:
            raise KeyError(obs)
        return index

    def batch(self, observations: np.ndarray) -> np.ndarray:
        """Rows of an (m, k) batch of observations, -1 where there is none."""
        shifted = np.asarray(observations, dtype=np.int64).reshape(len(observations), -1)
        shifted = shifted - self.offset
        inside = ((shifted >= 0) & (shifted < np.array(self.shape))).all(axis=1)
        flat = np.ravel_multi_index(tuple(np.where(inside[:, None], shifted, 0).T), self.shape)
        return np.where(inside & self.known[flat], flat, -1)


def grid_solution(
    value: float,
    q: np.ndarray,
    legal: np.ndarray,
    index: GridIndex,
    seconds: float,
    **extra: Any,
) -> Solution:
    """A specialised solver's answer over a grid of positions (`index`): the greedy policy and
    the values of its Q-values; its Bellman residual and state count are measured on the
    game's tables when first read (`Solution.measure_on`), unless `extra` gives the count."""
    return Solution(
        value=float(value),
        state_values=np.where(legal, q, -np.inf).max(axis=1),
        q=q,
        policy=greedy(q, legal),
        legal=legal,
        index_of=index,
        method="specialised",
        seconds=seconds,
        _residual=float("nan"),
        batch_index=index.batch,
        **extra,
    )


def optimal_action_mask(q: np.ndarray, legal: np.ndarray) -> np.ndarray:
    best = np.where(legal, q, -np.inf).max(axis=-1, keepdims=True)
    return legal & (q >= best - TIE_TOLERANCE * np.maximum(1.0, np.abs(best)))


def q_from_values(tables: Tables, values: np.ndarray) -> np.ndarray:
    return tables.expected_rewards + np.column_stack(
        [m @ values for m in tables.transition_matrices]
    )


def greedy(q: np.ndarray, legal: np.ndarray) -> np.ndarray:
    """The best legal action of each row (the lowest-numbered on exact ties)."""
    return np.where(legal, q, -np.inf).argmax(axis=1)


def bellman_residual(tables: Tables, values: np.ndarray) -> float:
    best = np.where(tables.legal, q_from_values(tables, values), -np.inf).max(axis=1)
    return float(np.max(np.abs(best - values), initial=0.0))


def _level_blocks(levels: np.ndarray) -> list[tuple[int, int]]:
    edges = np.concatenate(([0], np.flatnonzero(np.diff(levels)) + 1, [len(levels)]))
    return list(zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True))


def _layered_pass(
    levels: np.ndarray,
    matrices: list[sp.csr_matrix],
    rewards: np.ndarray,
    legal: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """One backward pass over states sorted by level: V(s) = max over legal a of Q(s, a)."""
    n, num_actions = rewards.shape
    values, q = np.zeros(n), np.zeros((n, num_actions))
    parts = [
        (m.indptr, m.indices, m.data, np.repeat(np.arange(n), np.diff(m.indptr))) for m in matrices
    ]
    with progress.task("solving", total=n, unit="states") as report:
        for lo, hi in _level_blocks(levels):
            for a, (indptr, indices, data, rows) in enumerate(parts):
                start, end = indptr[lo], indptr[hi]
                future = np.bincount(
                    rows[start:end] - lo,
                    weights=data[start:end] * values[indices[start:end]],
                    minlength=hi - lo,
                )
                q[lo:hi, a] = rewards[lo:hi, a] + future
            values[lo:hi] = np.where(legal[lo:hi], q[lo:hi], -np.inf).max(axis=1)
            report.advance(hi - lo)
    return values, q


def backward_induction(tables: Tables) -> tuple[np.ndarray, np.ndarray]:
    """Exact optimal values and Q-values of an acyclic game in one backward pass over levels.

    Limits: acyclic games only (ValueError otherwise); exact up to float round-off.
    """
    if not tables.acyclic:
        raise ValueError("backward induction needs an acyclic game; use value_iteration")
    return _layered_pass(
        tables.levels, tables.transition_matrices, tables.expected_rewards, tables.legal
    )


def value_iteration(
    tables: Tables, tol: float = 1e-12, max_iterations: int = 1_000_000
) -> tuple[np.ndarray, np.ndarray, int]:
    """Synchronous value iteration from V = 0 until successive iterates differ by at most `tol`.

    Limits: for games that end with probability 1 under every policy. The stopping rule bounds
    the change of the last sweep, not the distance to the optimum; the Bellman residual of the
    result is at most `tol`, and for acyclic games the iteration is exact after as many sweeps as
    the longest path. Raises RuntimeError if `max_iterations` pass first.
    """
    values = np.zeros(tables.num_states)
    with progress.task("value iteration", unit="sweeps") as report:
        for iteration in range(1, max_iterations + 1):
            q = q_from_values(tables, values)
            new_values = np.where(tables.legal, q, -np.inf).max(axis=1)
            change = float(np.max(np.abs(new_values - values), initial=0.0))
            values = new_values
            report.advance()
            if change <= tol:
                return values, q_from_values(tables, values), iteration
    raise RuntimeError(f"value iteration did not reach tol={tol} in {max_iterations} sweeps")


def evaluate_linear(tables: Tables, actions: np.ndarray) -> np.ndarray:
    """Exact values of a deterministic policy: solve (I - P_pi) v = r_pi.

    Raises ValueError if the policy can cycle forever (the system is then singular).
    """
    values = _factor(tables, actions).solve(tables.policy_rewards(actions))
    if not np.all(np.isfinite(values)):
        raise ValueError("the policy never ends the game from some state (singular system)")
    return values


def stochastic_system(tables: Tables, probs: np.ndarray) -> tuple[PolicySystem, np.ndarray]:
    """I - P for action probabilities `probs` (n, actions), and the expected rewards r."""
    n, num_actions = tables.num_states, tables.num_actions
    weights = sp.csr_matrix(
        (
            probs.reshape(-1),
            np.arange(n * num_actions),
            np.arange(0, n * num_actions + 1, num_actions),
        ),
        shape=(n, n * num_actions),
    )
    matrix = (weights @ tables.live_matrix)[:, :n].tocsr()
    matrix.eliminate_zeros()
    rewards = (probs * tables.expected_rewards).sum(axis=1)
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return PolicySystem(sp.csr_matrix((0, 0)), empty, empty), rewards
    return PolicySystem.of_matrix(matrix), rewards


def evaluate_stochastic(tables: Tables, probs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Exact values of a stochastic policy, and its expected visits of every state from the
    start: (I - P_pi) v = r_pi and (I - P_pi)^T d = start. Raises ValueError if the policy
    can cycle forever."""
    system, rewards = stochastic_system(tables, probs)
    values = system.solve(rewards)
    visits = system.solve(tables.initial, transpose=True)
    if not (np.all(np.isfinite(values)) and np.all(np.isfinite(visits))):
        raise ValueError("the policy never ends the game from some state (singular system)")
    return values, visits


def occupancy(tables: Tables, actions: np.ndarray) -> np.ndarray:
    """Expected number of visits to each state under a deterministic policy from the start."""
    return _factor(tables, actions).solve(tables.initial, transpose=True)


def block_order(matrix: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    """An order of the states for `PolicySystem`, and each state's level.

    Levels are those of the strongly connected components of P: the longest path to the end
    of the game. The order runs from the end back to the start (levels ascending), so that
    I - P is block lower triangular; within a level, later-found states come first, so that a
    component's entry (a Pig turn's start, found first and reached from every state of the
    turn) comes last, which keeps LU fill small.
    """
    n = matrix.shape[0]
    count, component = connected_components(matrix, directed=True, connection="strong")
    rows = np.repeat(np.arange(n, dtype=np.int32), np.diff(matrix.indptr))
    source, target = component[rows], component[matrix.indices]
    del rows
    between = source != target
    condensed = sp.csr_matrix(
        (np.ones(int(between.sum()), np.int8), (source[between], target[between])),
        shape=(count, count),
    )
    del source, target, between
    level = longest_path_levels(condensed)[component]  # a condensation has no cycle
    return np.lexsort((-np.arange(n), level)), level


class PolicySystem:
    """I - P for one policy, ready to solve, in pieces along the game.

    With the states in `block_order`, I - P is block lower triangular. Consecutive levels are
    grouped into chunks of about `CHUNK` states; each chunk gets its own sparse LU (fill stays
    inside the components, a Pig turn say), and a solve runs chunk by chunk, each taking the
    values of the chunks it leads to. Peak memory is about one copy of P and the chunks' LU.
    Exact up to float round-off; a singular system (a policy that never ends the game) raises
    ValueError.
    """

    CHUNK = 40_000

    def __init__(self, permuted: sp.csr_matrix, order: np.ndarray, level: np.ndarray) -> None:
        """`permuted`: P with rows and columns in `order`; `level`: each state's level."""
        n = permuted.shape[0]
        self.n, self.order, self.matrix = n, order, permuted
        self.chunks: list[tuple[int, int, object]] = []
        starts = np.flatnonzero(np.diff(level[order], prepend=-1))  # each level's first state
        lo = 0
        with progress.task("factorising", total=n, unit="states") as report:
            while lo < n:
                first = np.searchsorted(starts, lo + self.CHUNK, side="left")
                hi = max(int(starts[first]) if first < len(starts) else n, lo + 1)
                block = sp.identity(hi - lo, format="csr") - permuted[lo:hi, lo:hi]
                try:
                    # Factor the transpose (a CSR matrix's transpose is CSC): less fill here.
                    lu = spla.splu(block.T.tocsc(), permc_spec="NATURAL")
                except RuntimeError as error:  # "Factor is exactly singular"
                    raise ValueError(
                        "the policy never ends the game from some state (singular system)"
                    ) from error
                self.chunks.append((lo, hi, lu))
                report.advance(hi - lo)
                lo = hi

    @classmethod
    def of_matrix(cls, matrix: sp.csr_matrix) -> PolicySystem:
        order, level = block_order(matrix)
        permuted = matrix[order]  # rows in the new order; columns renamed
        renamed = np.empty(len(order), dtype=permuted.indices.dtype)
        renamed[order] = np.arange(len(order), dtype=permuted.indices.dtype)
        permuted.indices = renamed[permuted.indices]
        permuted.has_sorted_indices = False
        return cls(permuted, order, level)

    @classmethod
    def of_policy(cls, tables: Tables, actions: np.ndarray) -> PolicySystem:
        """The system of `actions` on `tables`, holding one copy of P at a time."""
        matrix, _ = tables.policy_matrix(actions)
        order, level = block_order(matrix)
        del matrix
        return cls(tables.policy_matrix(actions, order=order)[0], order, level)

    def solve(self, rhs: np.ndarray, transpose: bool = False) -> np.ndarray:
        """x with (I - P) x = rhs, or (I - P)^T x = rhs."""
        if self.n == 0:
            return np.zeros(0)
        rhs = np.asarray(rhs, dtype=float)[self.order]
        x = np.zeros(self.n)
        if not transpose:  # from the end of the game back to the start
            for lo, hi, lu in self.chunks:
                inflow = self.matrix[lo:hi] @ x  # x is 0 from lo on: the chunks already done
                x[lo:hi] = lu.solve(rhs[lo:hi] + inflow, trans="T")
        else:  # from the start forward: mass flows from later chunks to earlier ones
            inflow = np.zeros(self.n)
            for lo, hi, lu in reversed(self.chunks):
                x[lo:hi] = lu.solve(rhs[lo:hi] + inflow[lo:hi], trans="N")
                inflow[:lo] += self.matrix[lo:hi, :lo].T @ x[lo:hi]
        solution = np.empty(self.n)
        solution[self.order] = x
        return solution


def _factor(tables: Tables, actions: np.ndarray) -> PolicySystem:
    """The policy's factorisation, kept on the tables for the last policy (evaluating a
    policy and counting its visits share one LU)."""
    actions = np.asarray(actions)
    key = actions.tobytes()
    cached = getattr(tables, "_policy_system", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    if tables.num_states == 0:
        empty = np.zeros(0, dtype=np.int64)
        return PolicySystem(sp.csr_matrix((0, 0)), empty, empty)
    system = PolicySystem.of_policy(tables, actions)
    tables._policy_system = (key, system)
    return system


def evaluate_backward(tables: Tables, actions: np.ndarray) -> np.ndarray:
    """Exact values of a deterministic policy by one backward pass (acyclic games only)."""
    if not tables.acyclic:
        raise ValueError("a backward pass needs an acyclic game; use evaluate_linear")
    matrix, rewards = tables.policy_matrix(actions)
    legal = np.ones((tables.num_states, 1), dtype=bool)
    return _layered_pass(tables.levels, [matrix], rewards[:, None], legal)[0]


def solve_mdp(tables: Tables, method: str = "auto", tol: float = 1e-12) -> Solution:
    """Solve an enumerated game: backward induction if acyclic, else value iteration.

    `method` is "auto", "backward" or "value_iteration".
    """
    start = time.perf_counter()
    iterations = 0
    if method == "auto":
        method = "backward" if tables.acyclic else "value_iteration"
    if method == "backward":
        values, q = backward_induction(tables)
    elif method == "value_iteration":
        values, q, iterations = value_iteration(tables, tol=tol)
    else:
        raise ValueError(f"method must be 'auto', 'backward' or 'value_iteration', got {method!r}")
    return Solution(
        value=float(tables.initial @ values),
        state_values=values,
        q=q,
        policy=greedy(q, tables.legal),
        legal=tables.legal,
        index_of=tables.index_of,
        method=method,
        seconds=time.perf_counter() - start,
        _residual=bellman_residual(tables, values),
        iterations=iterations,
        tables=tables,
    )

"""A game model enumerated into arrays: what the solvers, exact evaluation and vector envs read.

`build_tables(model)` lists every non-terminal state reachable from the start, in a canonical
order (sorted; then by level when the game is acyclic), and for every (state, action) the
outcome rows (probability, next state index or terminal, reward). Two builders give the same
tables: a generic one over `model.transitions` (pure Python, about a microsecond per outcome),
and a vectorised one for models that also offer the batch form of their rules
(`state_bounds`, `batch_transitions`, `batch_legal`, `batch_observation`); the tests hold the
two equal entry for entry.
"""

from __future__ import annotations

import time
from array import array
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from dice_envs.games.base import GameModel, Observation, State, reachable_states
from dice_envs.progress import task as progress_task

# Above this many keys, state keys are looked up by binary search instead of a dense array.
DENSE_KEYS = 50_000_000


def observation_key(obs) -> Observation:
    """An observation as a hashable key: an int, or a tuple of ints."""
    if isinstance(obs, int | np.integer):
        return int(obs)
    array_obs = np.asarray(obs)
    if array_obs.ndim == 0:
        return int(array_obs)
    return tuple(int(x) for x in array_obs.ravel())


@dataclass(repr=False)
class Tables:
    """Every reachable non-terminal state of a model and every outcome of every action.

    Attributes:
        model: the game model it was built from.
        states: the states (canonical order: sorted, then by level when acyclic); a vectorised
            build keeps them as `state_array` (n, d) and lists them on demand.
        observation_array: (n, k) the observation of each state; each identifies its state.
        legal: (n, actions) booleans, the rules' legal actions.
        initial: (n,) the start distribution.
        outcome_ptr: (n * actions + 1,) the rows of (state s, action a) are
            ``outcome_ptr[s * actions + a] : outcome_ptr[s * actions + a + 1]``.
        outcome_prob, outcome_reward: per row.
        outcome_next: per row, the next state's index, or ``-1 - t`` for terminal state t.
        terminal_states: the final states the rows end in.
        levels: for an acyclic game, the longest path from each state to the end (a state only
            leads to states of lower level); None when the game has cycles.
        seconds: the time it took to build.
    """

    model: GameModel
    state_list: list[State] | None
    observation_array: np.ndarray
    legal: np.ndarray
    initial: np.ndarray
    outcome_ptr: np.ndarray
    outcome_prob: np.ndarray
    outcome_next: np.ndarray
    outcome_reward: np.ndarray
    terminal_states: list[State]
    levels: np.ndarray | None
    seconds: float = 0.0
    builder: str = field(default="generic")
    state_array: np.ndarray | None = None

    @cached_property
    def states(self) -> list[State]:
        """The states (tuples for a vectorised build)."""
        if self.state_list is not None:
            return self.state_list
        if self.state_array.shape[1] == 1:  # a model whose state is one number
            return self.state_array[:, 0].tolist()
        return list(map(tuple, self.state_array.tolist()))

    def __repr__(self) -> str:
        return (
            f"Tables({self.model!r}: {self.num_states} states, {len(self.outcome_prob)} "
            f"outcome rows, {'acyclic' if self.acyclic else 'cyclic'}, {self.builder} builder, "
            f"{self.seconds:.3f} s)"
        )

    @property
    def num_states(self) -> int:
        return len(self.observation_array)

    @property
    def num_actions(self) -> int:
        return self.legal.shape[1]

    @property
    def acyclic(self) -> bool:
        return self.levels is not None

    @cached_property
    def observations(self) -> list[Observation]:
        """The observation of each state as an int (scalar observations) or a tuple."""
        if self.observation_array.shape[1] == 1:
            return self.observation_array[:, 0].tolist()
        return list(map(tuple, self.observation_array.tolist()))

    @cached_property
    def _observation_lookup(self) -> np.ndarray | _KeyIndex:
        nvec = tuple(self.model.observation_nvec)
        flat = np.ravel_multi_index(tuple(self.observation_array.T), nvec)
        if len(np.unique(flat)) != self.num_states:
            raise ValueError("two states share an observation: the observation is not Markov")
        size = int(np.prod(nvec, dtype=np.int64))
        if size > DENSE_KEYS:  # a grid too large for an array (Yahtzee's 22 entries)
            return _KeyIndex(flat, size, missing=-1)
        lookup = np.full(size, -1, dtype=np.int64)
        lookup[flat] = np.arange(self.num_states)
        return lookup

    def index_of(self, obs) -> int:
        """The state index of an observation; KeyError for one no reachable state shows."""
        key = observation_key(obs)
        key = (key,) if isinstance(key, int) else key
        nvec = self.model.observation_nvec
        if len(key) != len(nvec) or not all(0 <= v < n for v, n in zip(key, nvec, strict=True)):
            raise KeyError(obs)
        index = int(self._lookup(np.ravel_multi_index(key, nvec)))
        if index < 0:
            raise KeyError(obs)
        return index

    def indices_of(self, observations: np.ndarray) -> np.ndarray:
        """State indices of an (m, k) batch of observations (-1 where no state shows one)."""
        flat = np.ravel_multi_index(tuple(np.asarray(observations).T), self.model.observation_nvec)
        return self._lookup(flat)

    def _lookup(self, flat):
        lookup = self._observation_lookup
        return lookup(flat) if isinstance(lookup, _KeyIndex) else lookup[flat]

    @cached_property
    def row_state(self) -> np.ndarray:
        """The state of each outcome row."""
        counts = np.diff(self.outcome_ptr).reshape(self.num_states, self.num_actions).sum(axis=1)
        return np.repeat(np.arange(self.num_states, dtype=np.int32), counts)

    @cached_property
    def row_action(self) -> np.ndarray:
        """The action of each outcome row."""
        counts = np.diff(self.outcome_ptr)
        actions = np.tile(np.arange(self.num_actions, dtype=np.int32), self.num_states)
        return np.repeat(actions, counts)

    @cached_property
    def live_matrix(self) -> sp.csr_matrix:
        """(n * actions, n + 1) CSR over the outcome rows themselves: row s * actions + a holds
        the probabilities of moving from state s under action a to each non-terminal state,
        and every final outcome in column n (which a policy matrix drops)."""
        n = self.num_states
        columns = np.where(self.outcome_next >= 0, self.outcome_next, n).astype(
            self.outcome_next.dtype
        )
        return sp.csr_matrix(
            (self.outcome_prob, columns, self.outcome_ptr),
            shape=(len(self.outcome_ptr) - 1, n + 1),
        )

    @cached_property
    def transition_matrices(self) -> list[sp.csr_matrix]:
        """Per action, an (n, n) CSR matrix of the probabilities of moving to each non-terminal
        state (mass that ends the game leaves the matrix)."""
        n = self.num_states
        live = self.outcome_next >= 0
        matrices = []
        for action in range(self.num_actions):
            rows = live & (self.row_action == action)
            matrix = sp.csr_matrix(
                (self.outcome_prob[rows], (self.row_state[rows], self.outcome_next[rows])),
                shape=(n, n),
            )
            matrix.sum_duplicates()
            matrices.append(matrix)
        return matrices

    @cached_property
    def expected_rewards(self) -> np.ndarray:
        """(n, actions) the expected immediate reward."""
        flat = np.zeros(len(self.outcome_ptr) - 1)
        if len(self.outcome_prob):
            flat = np.add.reduceat(self.outcome_prob * self.outcome_reward, self.outcome_ptr[:-1])
        return flat.reshape(self.num_states, self.num_actions)

    def policy_matrix(
        self, actions: np.ndarray, order: np.ndarray | None = None
    ) -> tuple[sp.csr_matrix, np.ndarray]:
        """Transition matrix and expected rewards of a deterministic policy; with `order`, the
        states (rows and columns) in that order."""
        n = self.num_states
        states = np.arange(n) if order is None else np.asarray(order)
        rows = states * self.num_actions + np.asarray(actions)[states]
        matrix = self.live_matrix[rows]
        if order is not None:  # rename the columns, keeping the final outcomes' column n
            renamed = np.full(n + 1, n, dtype=matrix.indices.dtype)
            renamed[states] = np.arange(n, dtype=matrix.indices.dtype)
            matrix.indices = renamed[matrix.indices]
            matrix.has_sorted_indices = False
        matrix = matrix[:, :n].tocsr()
        matrix.sum_duplicates()
        return matrix, self.expected_rewards.reshape(-1)[rows]

    def policy_rewards(self, actions: np.ndarray) -> np.ndarray:
        """The expected immediate reward of a deterministic policy in each state."""
        rows = np.arange(self.num_states) * self.num_actions + np.asarray(actions)
        return self.expected_rewards.reshape(-1)[rows]


def build_tables(model: GameModel, builder: str = "auto") -> Tables:
    """Enumerate `model` into `Tables`.

    `builder`: "auto" (the vectorised builder when the model offers the batch form of its rules,
    else the generic one), "generic" or "vectorised".
    """
    if builder not in ("auto", "generic", "vectorised"):
        raise ValueError(f"builder must be 'auto', 'generic' or 'vectorised', got {builder!r}")
    batched = hasattr(model, "batch_transitions") and getattr(model, "batchable", True)
    if builder == "vectorised" and not batched:
        raise ValueError(f"{model!r} has no batch form of its rules; use builder='generic'")
    start = time.perf_counter()
    tables = _build_vectorised(model) if batched and builder != "generic" else _build(model)
    tables.seconds = time.perf_counter() - start
    return tables


def _build(model: GameModel) -> Tables:
    report = progress_task("building tables", unit="states")
    found = []
    for state in reachable_states(model):  # the first of two passes over the states
        found.append(state)
        if len(found) % 4096 == 0:
            report.advance(4096)
    report.finish()
    states = sorted(found)
    del found
    index = {state: i for i, state in enumerate(states)}
    terminal: dict[State, int] = {}
    n, num_actions = len(states), model.num_actions
    legal = np.zeros((n, num_actions), dtype=bool)
    ptr, probs, nexts, rewards = array("q", [0]), array("d"), array("q"), array("d")
    report = progress_task("listing outcomes", total=n, unit="states")
    for i, state in enumerate(states):
        if i % 4096 == 0 and i:
            report.advance(4096)
        legal[i, list(model.legal_actions(state))] = True
        for action in range(num_actions):
            for prob, next_state, reward, is_terminal in model.transitions(state, action):
                probs.append(prob)
                rewards.append(reward)
                if is_terminal:
                    nexts.append(-1 - terminal.setdefault(next_state, len(terminal)))
                else:
                    nexts.append(index[next_state])
            ptr.append(len(probs))
    report.finish()
    initial = np.zeros(n)
    for prob, state in model.initial_states():
        initial[index[state]] += prob
    observations = np.array(
        [np.atleast_1d(model.observation(state)) for state in states], dtype=np.int64
    ).reshape(n, len(model.observation_nvec))
    return _finish(
        model,
        states,
        observations,
        legal,
        initial,
        np.frombuffer(ptr, dtype=np.int64).copy(),
        np.frombuffer(probs, dtype=float).copy(),
        np.frombuffer(nexts, dtype=np.int64).copy(),
        np.frombuffer(rewards, dtype=float).copy(),
        list(terminal),
        "generic",
    )


def _as_states(array: np.ndarray) -> list:
    """Rows of a state array as model states: ints for one field, else tuples."""
    if array.shape[1] == 1:
        return array[:, 0].tolist()
    return [tuple(row) for row in array.tolist()]


def _compact(values: np.ndarray) -> np.ndarray:
    """float32 where that loses nothing (rewards such as 0 and 1), else float64."""
    single = values.astype(np.float32)
    return single if np.array_equal(single, values) else values


def _pop_column(columns: list[list[np.ndarray]], i: int) -> np.ndarray:
    joined = np.concatenate([parts[i] for parts in columns])
    for parts in columns:
        parts[i] = None
    return joined


class _Keys:
    """States of a batchable model as integer keys (their place in the grid `state_bounds`)."""

    def __init__(self, bounds: tuple[int, ...]) -> None:
        self.bounds = tuple(int(b) for b in bounds)
        self.size = int(np.prod(self.bounds, dtype=np.int64))
        self.dtype = np.int32 if self.size < 2**31 else np.int64

    def encode(self, states: np.ndarray) -> np.ndarray:
        return np.ravel_multi_index(tuple(states.T), self.bounds)

    def decode(self, keys: np.ndarray) -> np.ndarray:
        return np.column_stack(np.unravel_index(keys, self.bounds)).astype(np.int64)


def _build_vectorised(model) -> Tables:
    """Breadth-first, a whole frontier of states per call of the model's batch rules; states
    are numbered in the order found (each frontier sorted)."""
    keys = _Keys(model.state_bounds)
    num_actions = model.num_actions
    starts = model.initial_states()
    start_keys = keys.encode(
        np.array([s for _, s in starts], dtype=np.int64).reshape(len(starts), -1)
    )
    seen = _KeySet(keys.size)
    frontier = seen.add_new(start_keys)
    found, counts, columns = [], [], []
    report = progress_task("building tables", unit="states")
    while len(frontier):
        report.advance(len(frontier))
        found.append(frontier)
        states = keys.decode(frontier)
        parts = [model.batch_transitions(states, action) for action in range(num_actions)]
        group = np.concatenate([p[0] * num_actions + a for a, p in enumerate(parts)])
        order = np.argsort(group, kind="stable")
        counts.append(np.bincount(group, minlength=len(frontier) * num_actions))
        # Next states as keys before gathering: one number a row instead of d.
        next_keys = np.concatenate([keys.encode(p[2]).astype(keys.dtype) for p in parts])[order]
        prob, reward, terminal = (np.concatenate([p[i] for p in parts])[order] for i in (1, 3, 4))
        columns.append([prob, next_keys, _compact(reward), terminal])
        frontier = seen.add_new(next_keys[~terminal])
    report.finish()
    state_keys = np.concatenate(found)
    n = len(state_keys)
    ptr = np.zeros(n * num_actions + 1, dtype=np.int64)
    np.cumsum(np.concatenate(counts), out=ptr[1:])
    del counts
    # One column at a time, freeing its pieces at once, to keep the peak memory low.
    prob, next_keys, reward, terminal = (_pop_column(columns, i) for i in range(4))
    lookup = _KeyIndex(state_keys, keys.size)
    terminal_keys, terminal_ids = np.unique(next_keys[terminal], return_inverse=True)
    nexts = np.empty(len(next_keys), dtype=np.int64 if n >= 2**31 else np.int32)
    nexts[~terminal] = lookup(next_keys[~terminal])
    nexts[terminal] = -1 - terminal_ids
    start_index = lookup(start_keys)
    del next_keys, lookup
    state_array = keys.decode(state_keys)
    initial = np.zeros(n)
    np.add.at(initial, start_index, [p for p, _ in starts])
    return _finish(
        model,
        None,
        model.batch_observation(state_array).reshape(n, -1).astype(np.int64),
        model.batch_legal(state_array),
        initial,
        ptr,
        prob,
        nexts,
        _compact(reward.astype(float, copy=False)),
        _as_states(keys.decode(terminal_keys)),
        "vectorised",
        state_array,
    )


class _KeySet:
    def __init__(self, size: int) -> None:
        self.dense = np.zeros(size, dtype=bool) if size <= DENSE_KEYS else None
        self.members = np.zeros(0, dtype=np.int64)

    def add_new(self, keys: np.ndarray) -> np.ndarray:
        """Add `keys`; return the ones that were not in yet, sorted and unique."""
        if self.dense is not None:
            new = np.unique(keys[~self.dense[keys]])
            self.dense[new] = True
            return new
        keys = np.unique(keys)
        new = keys[~np.isin(keys, self.members)]
        self.members = np.union1d(self.members, new)
        return new


class _KeyIndex:
    """Key -> its position in `keys` (unique keys, in any order); with `missing`, keys not
    among them give `missing` (else they must all be there)."""

    def __init__(self, keys: np.ndarray, size: int, missing: int | None = None) -> None:
        self.missing = missing
        if size <= DENSE_KEYS:
            self.dense = np.full(size, -1, dtype=np.int64)
            self.dense[keys] = np.arange(len(keys))
        else:
            self.dense = None
            self.order = np.argsort(keys)
            self.sorted = keys[self.order]

    def __call__(self, keys: np.ndarray) -> np.ndarray:
        if self.dense is not None:
            return self.dense[keys]
        if self.missing is None:
            return self.order[np.searchsorted(self.sorted, keys)]
        keys = np.asarray(keys)
        at = np.minimum(np.searchsorted(self.sorted, keys), max(len(self.sorted) - 1, 0))
        found = len(self.sorted) > 0 and (self.sorted[at] == keys)
        return np.where(found, self.order[at] if len(self.order) else -1, self.missing)


def _finish(
    model,
    states,
    observations,
    legal,
    initial,
    ptr,
    prob,
    nexts,
    reward,
    terminal,
    builder,
    state_array=None,
) -> Tables:
    tables = Tables(
        model=model,
        state_list=states,
        observation_array=observations,
        legal=legal,
        initial=initial,
        outcome_ptr=ptr,
        outcome_prob=prob,
        outcome_next=nexts,
        outcome_reward=reward,
        terminal_states=terminal,
        levels=None,
        builder=builder,
        state_array=state_array,
    )
    live = nexts >= 0
    n = len(observations)
    # Every (state, action) has a row, so reduceat sees no empty group.
    has_sink = n == 0 or not np.logical_or.reduceat(live, ptr[:-1]).reshape(n, -1).any(axis=1).all()
    levels = None
    if has_sink:  # a graph without a sink has a cycle: no need to build it
        graph = sp.csr_matrix(
            (np.ones(int(live.sum()), dtype=np.int8), (tables.row_state[live], nexts[live])),
            shape=(n, n),
        )
        levels = longest_path_levels(graph)
    if levels is not None:
        tables = _reordered(tables, np.argsort(levels, kind="stable"))
        tables.levels = levels[np.argsort(levels, kind="stable")]
    return tables


def _reordered(tables: Tables, order: np.ndarray) -> Tables:
    """The same tables with state i of the result being state order[i] of the input."""
    n, num_actions = tables.num_states, tables.num_actions
    new_index = np.empty(n, dtype=np.int64)
    new_index[order] = np.arange(n)
    counts = np.diff(tables.outcome_ptr).reshape(n, num_actions)[order].reshape(-1)
    ptr = np.zeros(n * num_actions + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    old_ptr = tables.outcome_ptr[:-1].reshape(n, num_actions)[order].reshape(-1)
    rows = np.repeat(old_ptr - ptr[:-1], counts) + np.arange(ptr[-1])
    nexts = tables.outcome_next[rows]
    nexts = np.where(nexts >= 0, new_index[np.maximum(nexts, 0)], nexts)
    return Tables(
        model=tables.model,
        state_list=None if tables.state_list is None else [tables.state_list[i] for i in order],
        state_array=None if tables.state_array is None else tables.state_array[order],
        observation_array=tables.observation_array[order],
        legal=tables.legal[order],
        initial=tables.initial[order],
        outcome_ptr=ptr,
        outcome_prob=tables.outcome_prob[rows],
        outcome_next=nexts,
        outcome_reward=tables.outcome_reward[rows],
        terminal_states=tables.terminal_states,
        levels=None,
        builder=tables.builder,
    )


def longest_path_levels(graph: sp.csr_matrix) -> np.ndarray | None:
    """Longest path from each node to a sink, or None if the graph has a cycle.

    Kahn's algorithm in rounds: round r removes every node whose successors are all gone,
    and those are exactly the nodes whose longest path to a sink has r edges. Each round is
    one set of array operations, which pays when rounds are few and wide; long thin graphs
    (many rounds) go node by node instead (`_levels_node_by_node`, the same result).
    """
    n = graph.shape[0]
    graph = graph.tocsr()
    graph.sum_duplicates()
    graph.eliminate_zeros()
    out_degree = np.diff(graph.indptr).astype(np.int64)
    if n and not (out_degree == 0).any():
        return None  # no sink: a cycle
    predecessors = graph.tocsc()
    if graph.nnz < WIDE_GRAPH_EDGES:
        return _levels_node_by_node(predecessors, out_degree)
    levels = np.zeros(n, dtype=np.int64)
    ready = np.flatnonzero(out_degree == 0)
    done, level = 0, 0
    while len(ready):
        levels[ready] = level
        done += len(ready)
        starts, ends = predecessors.indptr[ready], predecessors.indptr[ready + 1]
        counts = ends - starts
        if counts.sum() == 0:
            break
        positions = np.repeat(starts - np.cumsum(counts) + counts, counts) + np.arange(counts.sum())
        preds = predecessors.indices[positions]
        np.subtract.at(out_degree, preds, 1)
        touched = np.unique(preds)
        ready = touched[out_degree[touched] == 0]
        level += 1
    return levels if done == n else None


# Below this many edges, levels are found node by node (a round of array operations costs
# tens of microseconds, too much for the thousands of thin rounds of a long chain).
WIDE_GRAPH_EDGES = 2_000_000


def _levels_node_by_node(predecessors: sp.csc_matrix, out_degree: np.ndarray):
    n = len(out_degree)
    degree = out_degree.tolist()
    pred_ptr, pred_idx = predecessors.indptr.tolist(), predecessors.indices.tolist()
    levels = [0] * n
    ready = deque(i for i in range(n) if degree[i] == 0)
    done = 0
    while ready:
        node = ready.popleft()
        done += 1
        level = levels[node] + 1
        for k in range(pred_ptr[node], pred_ptr[node + 1]):
            pred = pred_idx[k]
            if levels[pred] < level:
                levels[pred] = level
            degree[pred] -= 1
            if degree[pred] == 0:
                ready.append(pred)
    return np.array(levels, dtype=np.int64) if done == n else None


def alias_tables(ptr: np.ndarray, prob: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Walker alias tables of many small distributions at once, for O(1) sampling.

    Distribution g has the probabilities ``prob[ptr[g]:ptr[g + 1]]`` (each group non-empty;
    normalised here). It gets as many cells as it has outcomes, at the same positions: to
    draw from g, pick a cell ``c = ptr[g] + floor(u * K)`` uniformly, then take row
    ``keep[c]`` with probability ``threshold[c]``, else row ``alias[c]``. Returns
    (threshold, keep, alias); the law they give equals `prob` to rounding (about 1e-16; the
    tests recompute it).

    Built with Vose's pairing (fill a light cell, one whose scaled probability K * p < 1, from a
    heavy one; a heavy one left with less than 1 becomes light), run for all groups at once:
    round t fills one cell in every group with more than t outcomes, so the cost is the number
    of rows plus one round of array operations per outcome of the largest group.
    """
    ptr = np.asarray(ptr, dtype=np.int64)
    prob = np.asarray(prob, dtype=float)
    counts = np.diff(ptr)
    if len(ptr) == 0 or ptr[0] != 0 or ptr[-1] != len(prob):
        raise ValueError(f"ptr must run from 0 to len(prob) = {len(prob)}")
    if len(counts) and counts.min() < 1:
        raise ValueError("every distribution needs at least one outcome")
    if not np.isfinite(prob).all() or (prob < 0).any():
        raise ValueError("prob must hold finite numbers >= 0")
    if len(prob) and (np.add.reduceat(prob, ptr[:-1]) <= 0).any():
        raise ValueError("every distribution needs a positive total")
    starts = ptr[:-1]
    rows = len(prob)
    group = np.repeat(np.arange(len(counts)), counts)
    scaled = prob * (counts / np.add.reduceat(prob, starts))[group] if rows else prob
    # Lights first, then heavies, inside each group; the largest outcome of a group counts as
    # heavy even if rounding put it just below 1.
    light = (scaled < 1.0) & (scaled < np.maximum.reduceat(scaled, starts)[group]) if rows else []
    light_int = np.asarray(light, dtype=np.int64)
    lights_before = np.cumsum(light_int) - light_int
    num_light = np.add.reduceat(light_int, starts) if rows else light_int
    light_rank = lights_before - lights_before[starts][group]
    heavy_rank = np.arange(rows) - starts[group] - light_rank
    position = starts[group] + np.where(light, light_rank, num_light[group] + heavy_rank)
    order = np.empty(rows, dtype=np.int64)
    order[position] = np.arange(rows)
    q = scaled[order]
    threshold = np.ones(rows)
    partner = np.arange(rows)
    # Groups by size, largest first: the groups still filling in round t are a prefix.
    by_size = np.argsort(-counts, kind="stable")
    sizes = counts[by_size]
    first = starts[by_size]
    light_end = first + num_light[by_size]
    last = first + sizes - 1
    next_light = first.copy()
    donor = light_end.copy()
    residual = q[np.minimum(donor, rows - 1)] if rows else np.zeros(0)
    for t in range(int(sizes[0]) if len(sizes) else 0):
        m = int(np.searchsorted(-sizes, -t, side="left"))
        light_pos, donor_pos, rest = next_light[:m], donor[:m], residual[:m]
        # (a) the donor fell below 1: it becomes a light cell, filled from the next heavy;
        # (b) else fill the next light cell from the donor; (c) else the donor's cell is full.
        spent = (rest < 1.0) & (donor_pos < last[:m])
        fill_light = ~spent & (light_pos < light_end[:m])
        cell = np.where(fill_light, light_pos, donor_pos)
        light_q = q[np.minimum(light_pos, rows - 1)]
        next_q = q[np.minimum(donor_pos + 1, rows - 1)]
        threshold[cell] = np.clip(np.where(fill_light, light_q, np.where(spent, rest, 1.0)), 0, 1)
        partner[cell] = np.where(fill_light | spent, donor_pos + spent, donor_pos)
        residual[:m] = np.where(
            fill_light, rest - (1.0 - light_q), np.where(spent, next_q - (1.0 - rest), next_q)
        )
        next_light[:m] = light_pos + fill_light
        donor[:m] = donor_pos + ~fill_light
    return threshold, order, order[partner]

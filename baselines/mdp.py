"""A game model enumerated into sparse matrices: the form every generic solver reads."""

from __future__ import annotations

from array import array
from collections import deque
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from dice_envs.games.base import GameModel, Observation, State, reachable_states


def observation_key(obs) -> Observation:
    """An observation as a hashable key: an int, or a tuple of ints."""
    if isinstance(obs, int | np.integer):
        return int(obs)
    array_obs = np.asarray(obs)
    if array_obs.ndim == 0:
        return int(array_obs)
    return tuple(int(x) for x in array_obs.ravel())


@dataclass
class TabularMDP:
    """Every reachable non-terminal state of a model, with its transitions as sparse matrices.

    Attributes:
        model: the game model it was built from.
        states: the states, ordered by `levels` when the game is acyclic.
        observations: the observation of each state; each one identifies its state.
        transition_matrices: per action, an (n, n) CSR matrix of probabilities of moving to each
            non-terminal state (mass that ends the game leaves the matrix).
        expected_rewards: (n, actions) expected immediate reward.
        legal: (n, actions) booleans, the rules' legal actions.
        initial: (n,) the start distribution.
        levels: for an acyclic game, the length of the longest path from each state to the end
            (a state only leads to states of lower level); None when the game has cycles.
    """

    model: GameModel
    states: list[State]
    observations: list[Observation]
    transition_matrices: list[sp.csr_matrix]
    expected_rewards: np.ndarray
    legal: np.ndarray
    initial: np.ndarray
    levels: np.ndarray | None

    def __post_init__(self) -> None:
        self.state_index = {state: i for i, state in enumerate(self.states)}
        self.observation_index = {obs: i for i, obs in enumerate(self.observations)}
        if len(self.observation_index) != len(self.states):
            raise ValueError("two states share an observation: the observation is not Markov")

    @property
    def num_states(self) -> int:
        return len(self.states)

    @property
    def num_actions(self) -> int:
        return len(self.transition_matrices)

    @property
    def acyclic(self) -> bool:
        return self.levels is not None

    def index_of(self, obs) -> int:
        """The state index of an observation; KeyError for one no reachable state shows."""
        return self.observation_index[observation_key(obs)]

    def policy_matrix(self, actions: np.ndarray) -> tuple[sp.csr_matrix, np.ndarray]:
        """Transition matrix and expected rewards of a deterministic policy."""
        n = self.num_states
        matrix = sp.csr_matrix((n, n))
        for action, transitions in enumerate(self.transition_matrices):
            chosen = sp.diags((actions == action).astype(float))
            matrix = matrix + chosen @ transitions
        rewards = self.expected_rewards[np.arange(n), actions]
        return matrix.tocsr(), rewards


def build_mdp(model: GameModel) -> TabularMDP:
    """Enumerate the states reachable from the start and tabulate every action's outcomes.

    Pure Python over `model.transitions`, about a microsecond per outcome: fine up to a few
    million outcomes. Outcomes leading to the same next state are summed.
    """
    states = list(reachable_states(model))
    index = {state: i for i, state in enumerate(states)}
    n, num_actions = len(states), model.num_actions
    rewards = np.zeros((n, num_actions))
    legal = np.zeros((n, num_actions), dtype=bool)
    rows = [array("q") for _ in range(num_actions)]
    cols = [array("q") for _ in range(num_actions)]
    probs = [array("d") for _ in range(num_actions)]
    for i, state in enumerate(states):
        legal[i, list(model.legal_actions(state))] = True
        for action in range(num_actions):
            expected = 0.0
            for prob, next_state, reward, terminal in model.transitions(state, action):
                expected += prob * reward
                if not terminal:
                    rows[action].append(i)
                    cols[action].append(index[next_state])
                    probs[action].append(prob)
            rewards[i, action] = expected
    matrices = [
        sp.csr_matrix(
            (np.frombuffer(p), (np.frombuffer(r, np.int64), np.frombuffer(c, np.int64))),
            shape=(n, n),
        )
        for p, r, c in zip(probs, rows, cols, strict=True)
    ]
    initial = np.zeros(n)
    for prob, state in model.initial_states():
        initial[index[state]] += prob
    levels = _longest_path_levels(sum(matrices, sp.csr_matrix((n, n))))
    if levels is not None:
        # Order states by level, so that each level is a contiguous block of rows.
        order = np.argsort(levels, kind="stable")
        states = [states[i] for i in order]
        matrices = [m[order][:, order].tocsr() for m in matrices]
        rewards, legal, initial = rewards[order], legal[order], initial[order]
        levels = levels[order]
    for matrix in matrices:
        matrix.sort_indices()
    return TabularMDP(
        model=model,
        states=states,
        observations=[model.observation(state) for state in states],
        transition_matrices=matrices,
        expected_rewards=rewards,
        legal=legal,
        initial=initial,
        levels=levels,
    )


def _longest_path_levels(graph: sp.csr_matrix) -> np.ndarray | None:
    """Longest path from each node to a sink, or None if the graph has a cycle (Kahn's order)."""
    n = graph.shape[0]
    graph = graph.tocsr()
    graph.eliminate_zeros()
    out_degree = np.diff(graph.indptr).tolist()
    predecessors = graph.tocsc()
    pred_ptr, pred_idx = predecessors.indptr.tolist(), predecessors.indices.tolist()
    levels = [0] * n
    ready = deque(i for i in range(n) if out_degree[i] == 0)
    done = 0
    while ready:
        node = ready.popleft()
        done += 1
        level = levels[node] + 1
        for k in range(pred_ptr[node], pred_ptr[node + 1]):
            pred = pred_idx[k]
            if levels[pred] < level:
                levels[pred] = level
            out_degree[pred] -= 1
            if out_degree[pred] == 0:
                ready.append(pred)
    return np.array(levels, dtype=np.int64) if done == n else None

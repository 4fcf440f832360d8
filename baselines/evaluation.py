"""Exact evaluation of any policy: a callable, a table, a mapping, or an SB3-style model."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from baselines.protocols import LOSS_TOLERANCE, Loss, check_count
from baselines.solvers import (
    Solution,
    evaluate_linear,
    evaluate_stochastic,
    occupancy,
    optimal_action_mask,
    q_from_values,
)
from dice_envs.policies import as_policy
from dice_envs.tables import Tables

# Per-state arrays of an `Evaluation`, readable by observation.
PER_STATE = ("state_values", "actions", "visits", "losses", "probabilities")
# `Evaluation.grid` refuses grids larger than this (a horizon-10^6 Chow-Robbins game's).
GRID_CELLS_LIMIT = 50_000_000


@dataclass
class Evaluation:
    """The exact score of a policy on a game.

    Values are expected total returns in the game's own reward units (a win probability for
    a two-player game against a fixed opponent; minus the expected number of turns for a
    game that minimises turns). The per-state arrays (`state_values`, `actions`,
    `probabilities`, `visits`, `losses`) have one row per reachable non-terminal state, in
    the state order of the game's tables (`baselines.tabulate(env_id, **kwargs)`): row i
    belongs to the state whose observation is `observations[i]`. Read them by observation
    with `grid(name)` (an array over the observation grid), `by_observation(name)` (a mapping)
    and `where_lost(count)` (the observations where the most value is lost).

    Attributes:
        value: the policy's expected return from the start distribution.
        optimal_value: the optimum's.
        gap: optimal_value - value (>= 0 up to round-off).
        relative_gap: gap / |optimal_value| (the gap itself if the optimum is 0).
        agreement: the share of the optimal policy's expected state visits in which the policy
            picks an optimal action (a stochastic policy: its probability of one), in [0, 1].
        seconds: wall time of the evaluation: asking the policy for its actions and the
            linear solve (not the tables and optimum, built once per game arguments and
            kept).
        state_values: (states,) float64, the policy's value of every state.
        actions: (states,) int64, the policy's action in every state (its most probable one,
            if stochastic).
        visits: (states,) float64, the policy's expected number of visits of every state
            from the start.
        losses: (states,) float64, where the gap is lost: visits times what the policy's
            action gives up there, `V*(s) - sum_a pi(a|s) Q*(s, a)`. They sum to `gap` (the
            performance difference lemma), and are >= 0 up to round-off.
        probabilities: (states, actions) float64, a stochastic policy's action probabilities
            per state (None for a deterministic one).
        observations: (states, components) int64, the observation of every state: row i is
            what the agent sees in state i, so the per-state arrays above are keyed by it.
        observation_nvec: the size of each observation component (the observation grid that
            `grid` fills).
        optimal_actions: (states,) int64, the optimum's action in every state.
    """

    value: float
    optimal_value: float
    gap: float
    relative_gap: float
    agreement: float
    seconds: float
    state_values: np.ndarray = field(repr=False)
    actions: np.ndarray = field(repr=False)
    visits: np.ndarray = field(repr=False, default=None)
    losses: np.ndarray = field(repr=False, default=None)
    probabilities: np.ndarray | None = field(repr=False, default=None)
    observations: np.ndarray | None = field(repr=False, default=None)
    observation_nvec: tuple[int, ...] = field(repr=False, default=())
    optimal_actions: np.ndarray | None = field(repr=False, default=None)

    def _per_state(self, name: str) -> np.ndarray:
        if name not in PER_STATE:
            raise ValueError(f"name must be one of {', '.join(PER_STATE)}, got {name!r}")
        values = getattr(self, name)
        if values is None:
            raise ValueError(f"this evaluation has no {name}")
        return values

    def grid(self, name: str = "losses") -> np.ndarray:
        """The per-state array `name` over the observation grid: `grid("losses")[obs]` is what
        is lost at observation `obs`. Observations of no reachable state hold NaN (-1 in the
        integer `actions`); `probabilities` gains a last axis of actions."""
        return grid_of(self._per_state(name), self.observations, self.observation_nvec)

    def by_observation(self, name: str = "losses") -> dict[Any, Any]:
        """The per-state array `name` as a mapping from observation (an int, or a tuple of
        ints, as the env shows it) to its entry."""
        values = self._per_state(name)
        return dict(zip(observation_keys(self.observations), values.tolist(), strict=True))

    def where_lost(self, count: int = 10) -> list[Loss]:
        """The `count` states where the policy loses the most value (`Loss`: the loss, the
        observation, the policy's action and the optimal one there), largest first; only
        states where it loses more than round-off (their losses sum to at most `gap`)."""
        order = np.argsort(-self.losses, kind="stable")[: check_count(count)]
        order = order[self.losses[order] > LOSS_TOLERANCE * max(1.0, abs(self.optimal_value))]
        keys = observation_keys(self.observations[order])
        return [
            Loss(float(self.losses[i]), key, int(self.actions[i]), int(self.optimal_actions[i]))
            for i, key in zip(order, keys, strict=True)
        ]

    def __repr__(self) -> str:
        return (
            f"Evaluation(value={self.value:.6g}, optimal_value={self.optimal_value:.6g}, "
            f"gap={self.gap:.3g}, relative_gap={self.relative_gap:.3g}, "
            f"agreement={self.agreement:.3g})"
        )

    def as_dict(self) -> dict[str, float]:
        keys = ("value", "optimal_value", "gap", "relative_gap", "agreement", "seconds")
        return {key: float(getattr(self, key)) for key in keys}


def grid_of(values: np.ndarray, observations: np.ndarray, nvec: tuple[int, ...]) -> np.ndarray:
    """Per-state `values` (one row per state, in the order of `observations`) over the
    observation grid `nvec`: NaN (-1 for integers) where no reachable state is; trailing axes
    of `values` are kept. Refused above `GRID_CELLS_LIMIT` cells."""
    cells = int(np.prod(nvec))
    if cells > GRID_CELLS_LIMIT:
        raise ValueError(
            f"the observation grid has {cells:,} cells (more than {GRID_CELLS_LIMIT:,}); "
            "use by_observation(name)"
        )
    integer = np.issubdtype(values.dtype, np.integer)
    table = np.full(tuple(nvec) + values.shape[1:], -1 if integer else np.nan)
    table[tuple(observations.T)] = values
    return table


def observation_keys(observations: np.ndarray) -> list[Any]:
    """Each row of `observations` as the env shows it: an int, or a tuple of ints."""
    rows = observations.tolist()
    if observations.shape[1] == 1:
        return [row[0] for row in rows]
    return [tuple(row) for row in rows]


def policy_answer(
    policy: Any, tables: Tables, *, obs_transform: Any = None, deterministic: bool = True
) -> np.ndarray:
    """What `policy` plays at every state of `tables` (any form `dice_envs.policies.as_policy`
    takes): (n,) int64 actions, or (n, num_actions) action probabilities for a stochastic
    policy (an SB3 model with `deterministic=False`: its action distribution). A ValueError
    names the problem when the policy does not fit the game."""
    asked = as_policy(
        policy, tables.model, obs_transform=obs_transform, deterministic=deterministic
    )
    return asked.answer(tables.observation_array, tables.legal)


def policy_actions(policy: Any, tables: Tables, *, obs_transform: Any = None) -> np.ndarray:
    """The action `policy` takes at every state of `tables` (see `policy_answer`); a
    ValueError for a policy that mixes."""
    answer = policy_answer(policy, tables, obs_transform=obs_transform)
    if answer.ndim == 2:
        raise ValueError("the policy mixes (it gave action probabilities): use policy_answer")
    return answer


def policy_probabilities(
    policy: Any, tables: Tables, *, obs_transform: Any = None, deterministic: bool = True
) -> np.ndarray | None:
    """A stochastic policy's action probabilities at every state of `tables`, (n, actions),
    or None for a deterministic one (see `policy_answer`)."""
    answer = policy_answer(policy, tables, obs_transform=obs_transform, deterministic=deterministic)
    return answer if answer.ndim == 2 else None


def evaluate_on(
    policy, tables: Tables, optimum: Solution, *, obs_transform=None, deterministic: bool = True
) -> Evaluation:
    """Evaluate `policy` exactly on an enumerated game whose optimum is already known
    (`policy`, `obs_transform` and `deterministic` as in `policy_answer`)."""
    start = time.perf_counter()
    answer = policy_answer(policy, tables, obs_transform=obs_transform, deterministic=deterministic)
    if answer.ndim == 1:
        evaluation = score_actions(answer, tables, optimum)
    else:
        evaluation = score_probabilities(answer, tables, optimum)
    evaluation.seconds = time.perf_counter() - start
    return evaluation


def score_actions(actions: np.ndarray, tables: Tables, optimum: Solution) -> Evaluation:
    """The exact score of taking `actions[i]` in state i of `tables` (a sparse linear solve)."""
    start = time.perf_counter()
    values = evaluate_linear(tables, actions)
    visits = occupancy(tables, actions)  # the same factorisation, solved the other way
    rows = np.arange(tables.num_states)
    good = optimal_action_mask(optimum.q, tables.legal)[rows, actions]
    given_up = optimum.state_values - _all_q(optimum, tables)[rows, actions]
    return _evaluation(values, visits, given_up, good, actions, None, tables, optimum, start)


def score_probabilities(probs: np.ndarray, tables: Tables, optimum: Solution) -> Evaluation:
    """The exact score of a stochastic policy, `probs[i, a]` the probability of action a in
    state i of `tables` (a sparse linear solve of the policy's averaged transitions)."""
    start = time.perf_counter()
    values, visits = evaluate_stochastic(tables, probs)
    good = (probs * optimal_action_mask(optimum.q, tables.legal)).sum(axis=1)
    given_up = optimum.state_values - (probs * _all_q(optimum, tables)).sum(axis=1)
    actions = probs.argmax(axis=1)
    return _evaluation(values, visits, given_up, good, actions, probs, tables, optimum, start)


def _all_q(optimum: Solution, tables: Tables) -> np.ndarray:
    """Q* of every action, illegal ones included (they play as the rules say), kept."""
    cached = getattr(optimum, "_all_actions_q", None)
    if cached is None:
        cached = q_from_values(tables, optimum.state_values)
        optimum._all_actions_q = cached
    return cached


def _evaluation(
    values, visits, given_up, good, actions, probs, tables, optimum, start
) -> Evaluation:
    value = float(tables.initial @ values)
    optimal_visits = optimum.visits()
    total = optimal_visits.sum()
    agreement = float(optimal_visits @ good / total) if total > 0 else 1.0
    gap = optimum.value - value
    scale = abs(optimum.value)
    return Evaluation(
        value=value,
        optimal_value=optimum.value,
        gap=gap,
        relative_gap=gap / scale if scale > 0 else gap,
        agreement=agreement,
        seconds=time.perf_counter() - start,
        state_values=values,
        actions=actions,
        visits=visits,
        losses=visits * given_up,
        probabilities=probs,
        observations=tables.observation_array,
        observation_nvec=tuple(int(n) for n in tables.model.observation_nvec),
        optimal_actions=optimum.policy,
    )

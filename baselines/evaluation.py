"""Exact evaluation of any policy: a callable, a table, a mapping, or an SB3-style model."""

from __future__ import annotations

import inspect
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from baselines.mdp import TabularMDP
from baselines.solvers import Solution, evaluate_linear, occupancy, optimal_action_mask

PREDICT_BATCH = 65_536


@dataclass
class Evaluation:
    """The exact score of a policy on a game.

    Attributes:
        value: the policy's expected return from the start distribution.
        optimal_value: the optimum's.
        gap: optimal_value - value (>= 0 up to round-off).
        relative_gap: gap / |optimal_value| (the gap itself if the optimum is 0).
        agreement: the share of the optimal policy's expected state visits in which the policy
            picks an optimal action.
        state_values: the policy's value of every state (indexed like the MDP's states).
        actions: the policy's action in every state.
    """

    value: float
    optimal_value: float
    gap: float
    relative_gap: float
    agreement: float
    seconds: float
    state_values: np.ndarray = field(repr=False)
    actions: np.ndarray = field(repr=False)

    def as_dict(self) -> dict[str, float]:
        keys = ("value", "optimal_value", "gap", "relative_gap", "agreement", "seconds")
        return {key: float(getattr(self, key)) for key in keys}


def policy_actions(policy, mdp: TabularMDP) -> np.ndarray:
    """The action a policy takes in every state of `mdp`, validated against the action space.

    A policy may be: an object with SB3's `predict` (called in batches with deterministic=True,
    and with `action_masks` when its `predict` takes them, as MaskablePPO's does); a numpy table
    indexed by the observation; a mapping from observation (int or tuple) to action; or a
    callable taking the observation as the env returns it.
    """
    observations = mdp.observations
    scalar = isinstance(observations[0], int)
    if hasattr(policy, "predict"):
        batch = np.array(observations, dtype=np.int64)
        takes_masks = "action_masks" in inspect.signature(policy.predict).parameters
        chunks = []
        for lo in range(0, len(batch), PREDICT_BATCH):
            extra = {"action_masks": mdp.legal[lo : lo + PREDICT_BATCH]} if takes_masks else {}
            chunk, _ = policy.predict(batch[lo : lo + PREDICT_BATCH], deterministic=True, **extra)
            chunks.append(np.asarray(chunk).reshape(-1))
        raw = np.concatenate(chunks)
    elif isinstance(policy, np.ndarray | Mapping):
        raw = [policy[obs] for obs in observations]
    elif callable(policy):
        if scalar:
            raw = [policy(obs) for obs in observations]
        else:
            raw = [policy(np.array(obs, dtype=np.int64)) for obs in observations]
    else:
        raise TypeError(
            "policy must be a callable, a numpy table, a mapping, or have SB3's predict; "
            f"got {type(policy).__name__}"
        )
    actions = np.asarray(raw)
    if actions.shape != (mdp.num_states,) or not np.issubdtype(actions.dtype, np.integer):
        actions = np.array([_as_action(a) for a in np.asarray(raw, dtype=object).reshape(-1)])
    bad = (actions < 0) | (actions >= mdp.num_actions)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"the policy chose action {actions[i]} for observation {observations[i]}; "
            f"actions are 0..{mdp.num_actions - 1}"
        )
    return actions.astype(np.int64)


def _as_action(action) -> int:
    value = np.asarray(action)
    if value.size != 1 or not np.issubdtype(value.dtype, np.integer):
        raise ValueError(f"a policy must return one integer action, got {action!r}")
    return int(value.reshape(()))


def evaluate_on(policy, mdp: TabularMDP, optimum: Solution) -> Evaluation:
    """Evaluate `policy` exactly on an enumerated game whose optimum is already known."""
    start = time.perf_counter()
    evaluation = score_actions(policy_actions(policy, mdp), mdp, optimum)
    evaluation.seconds = time.perf_counter() - start
    return evaluation


def score_actions(actions: np.ndarray, mdp: TabularMDP, optimum: Solution) -> Evaluation:
    """The exact score of taking `actions[i]` in state i of `mdp` (a sparse linear solve)."""
    start = time.perf_counter()
    values = evaluate_linear(mdp, actions)
    value = float(mdp.initial @ values)
    visits = occupancy(mdp, optimum.policy)
    good = optimal_action_mask(optimum.q, mdp.legal)[np.arange(mdp.num_states), actions]
    agreement = float(visits @ good / visits.sum()) if visits.sum() > 0 else 1.0
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
    )

"""Exact evaluation of any policy: a callable, a table, a mapping, or an SB3-style model."""

from __future__ import annotations

import importlib
import inspect
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from gymnasium import spaces

from baselines.protocols import LOSS_TOLERANCE, Loss, check_count
from baselines.solvers import (
    Solution,
    evaluate_linear,
    evaluate_stochastic,
    occupancy,
    optimal_action_mask,
    q_from_values,
)
from dice_envs.games.seat_policy import PROBABILITY_TOLERANCE, SLOW_CALLS
from dice_envs.registration import GAMES
from dice_envs.tables import Tables

PREDICT_BATCH = 65_536
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


def policy_actions(policy, tables: Tables, *, obs_transform=None) -> np.ndarray:
    """The action a policy takes in every state of `tables`, validated against the game.

    A policy may be:
    - an object with SB3's `predict`, called in batches with deterministic=True, and with
      `action_masks` when its `predict` takes them (as MaskablePPO's does). If it has an
      `observation_space` (SB3 models do), that space must be the game's: Discrete(n) for a
      scalar observation, else MultiDiscrete(observation_nvec);
    - a numpy table of actions indexed by the observation, of shape `observation_nvec` (integer
      entries; floats are accepted where they are whole numbers);
    - a mapping from observation (int, or tuple of ints) to action, with every reachable
      observation among its keys;
    - a callable taking the observation as the env returns it (an int, or an int64 array);
      one with a `batch` attribute (the named heuristics) is called once on the whole (n,) or
      (n, d) batch of observations instead.

    `obs_transform`: for a model or callable trained through an observation wrapper (a one-hot
    or normalised encoding, say). It is called once on the batch of every reachable observation
    (an int64 array of shape (n,) for a scalar observation, else (n, d)) and must return one row
    per observation: `predict` receives those rows (in batches) instead of the raw observations,
    and its `observation_space` is not checked; a callable receives one row at a time. A table or
    mapping is indexed by the game's own observations, so it takes no `obs_transform`.

    A heuristic's name is not a policy here (resolving it needs the env id): pass the name to
    `baselines.evaluate`, or build the policy with `dice_envs.policies.named_policy`.

    Raises ValueError, naming the problem, when the policy does not fit the game, and TypeError
    when it is none of the above.
    """
    _check_policy_arguments(policy, obs_transform)
    if hasattr(policy, "predict"):
        raw = _predicted_actions(policy, tables, obs_transform)
    elif isinstance(policy, np.ndarray):
        raw = _table_actions(policy, tables)
    elif isinstance(policy, Mapping):
        raw = _mapping_actions(policy, tables)
    elif callable(policy) and callable(getattr(policy, "batch", None)) and obs_transform is None:
        # A rule with a batch form (the named heuristics): one call for every observation.
        raw = policy.batch(_observation_batch(tables, None))
    elif callable(policy):
        raw = _called_actions(policy, tables, obs_transform)
    else:
        raise TypeError(
            "policy must be a callable, a numpy table, a mapping, or have SB3's predict; "
            f"got {type(policy).__name__}"
        )
    return _checked_actions(raw, tables)


def _check_policy_arguments(policy, obs_transform) -> None:
    """Refuse a policy name and an `obs_transform` that cannot apply (see `policy_actions`)."""
    if isinstance(policy, str):
        raise TypeError(
            f"policy_actions cannot resolve the policy name {policy!r}: pass the name to "
            "baselines.evaluate(name, env_id, **kwargs), which knows the game, or build the "
            "policy with dice_envs.policies.named_policy(env_id, name, **kwargs)"
        )
    if obs_transform is not None and not callable(obs_transform):
        raise TypeError(f"obs_transform must be callable, got {type(obs_transform).__name__}")
    if obs_transform is not None and isinstance(policy, np.ndarray | Mapping):
        raise TypeError(
            "obs_transform is for models and callables: a policy table or mapping is indexed "
            "by the game's own observations"
        )


def _predicted_actions(model, tables: Tables, obs_transform) -> np.ndarray:
    """An SB3-style model's deterministic actions, asked in batches of PREDICT_BATCH (with
    the legal-action masks where its `predict` takes them)."""
    batch = _observation_batch(tables, obs_transform)
    if obs_transform is None:
        _check_observation_space(model, tables)
    takes_masks = "action_masks" in inspect.signature(model.predict).parameters
    chunks = []
    for lo in range(0, len(batch), PREDICT_BATCH):
        rows = batch[lo : lo + PREDICT_BATCH]
        extra = {"action_masks": tables.legal[lo : lo + PREDICT_BATCH]} if takes_masks else {}
        chunk, _ = model.predict(rows, deterministic=True, **extra)
        chunk = np.asarray(chunk)
        if chunk.size != len(rows):
            raise ValueError(
                f"the model's predict returned {chunk.size} actions (shape {chunk.shape}) "
                f"for a batch of {len(rows)} observations; it must return one action each"
            )
        chunks.append(chunk.reshape(-1))
    return np.concatenate(chunks)


def _called_actions(policy, tables: Tables, obs_transform) -> list:
    """A per-observation callable's answers, one call per state (slow on large games)."""
    _warn_if_slow(tables)
    if obs_transform is not None:
        return [policy(row) for row in _observation_batch(tables, obs_transform)]
    if tables.observation_array.shape[1] == 1:
        return [policy(obs) for obs in tables.observations]
    return [policy(np.array(obs, dtype=np.int64)) for obs in tables.observations]


def _checked_actions(raw, tables: Tables) -> np.ndarray:
    """The answers as an int64 action per state; an action outside 0..num_actions - 1 is a
    ValueError naming the observation."""
    actions = np.asarray(raw)
    if actions.shape != (tables.num_states,) or not np.issubdtype(actions.dtype, np.integer):
        actions = np.array([_as_action(a) for a in np.asarray(raw, dtype=object).reshape(-1)])
    bad = (actions < 0) | (actions >= tables.num_actions)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"the policy chose action {actions[i]} for observation {tables.observations[i]}; "
            f"actions are 0..{tables.num_actions - 1}"
        )
    return actions.astype(np.int64)


def _warn_if_slow(tables: Tables) -> None:
    if tables.num_states > SLOW_CALLS:
        warnings.warn(
            f"the policy is a Python callable asked once per state, {tables.num_states:,} times "
            "here; dice_envs.policies.batched(f) (f takes all observations at once) or a table "
            "over the observation grid is much faster",
            stacklevel=4,
        )


def _game_name(tables: Tables) -> str:
    """The env id of the game behind `tables`, for messages (best effort: else its model's repr).

    A registered model may be a class, an import path "module:name", or a factory with a
    `model_class` (a two-player game against a fixed opponent wraps the model in `.model`).
    """
    model = tables.model
    for layer in (model, getattr(model, "model", None)):
        if layer is None:
            continue
        for env_id, game in GAMES.items():
            entry = game.model
            try:
                if isinstance(entry, str):
                    module, _, name = entry.partition(":")
                    entry = getattr(importlib.import_module(module), name)
                target = getattr(entry, "model_class", entry)
                if isinstance(target, type) and type(layer) is target:
                    return env_id
            except (ImportError, AttributeError):
                continue
    return repr(model) if len(repr(model)) <= 80 else type(model).__name__


def _game_space(tables: Tables) -> spaces.Space:
    """The observation space of the env behind `tables`."""
    nvec = tuple(int(n) for n in tables.model.observation_nvec)
    return spaces.Discrete(nvec[0]) if len(nvec) == 1 else spaces.MultiDiscrete(nvec)


def _same_space(space, game_space: spaces.Space) -> bool:
    """Whether `space` holds the same observations as `game_space` (the dtype aside)."""
    if isinstance(game_space, spaces.Discrete):
        return (
            isinstance(space, spaces.Discrete)
            and int(space.n) == int(game_space.n)
            and int(space.start) == int(game_space.start)
        )
    return (
        isinstance(space, spaces.MultiDiscrete)
        and space.nvec.shape == game_space.nvec.shape
        and bool(np.all(space.nvec == game_space.nvec))
        and bool(np.all(space.start == game_space.start))
    )


def _check_observation_space(policy, tables: Tables) -> None:
    space = getattr(policy, "observation_space", None)
    if space is None:
        return
    game_space = _game_space(tables)
    if not _same_space(space, game_space):
        raise ValueError(
            f"the model was trained on observations {space} but {_game_name(tables)} with these "
            f"arguments has {game_space}; pass obs_transform= if it was trained through a wrapper"
        )


def _observation_batch(tables: Tables, obs_transform) -> np.ndarray:
    """Every reachable observation as an int64 array, (n,) or (n, d), through `obs_transform`."""
    batch = tables.observation_array
    batch = batch[:, 0] if batch.shape[1] == 1 else batch
    if obs_transform is None:
        return batch
    transformed = np.asarray(obs_transform(batch))
    if transformed.ndim == 0 or len(transformed) != len(batch):
        raise ValueError(
            f"obs_transform must return one row per observation: it turned a batch of shape "
            f"{batch.shape} into shape {transformed.shape}"
        )
    return transformed


def _table_actions(table: np.ndarray, tables: Tables) -> np.ndarray:
    """The entries of an action table at every reachable observation."""
    grid = tuple(int(n) for n in tables.model.observation_nvec)
    if table.shape != grid:
        raise ValueError(
            f"policy table has shape {table.shape}; {_game_name(tables)} observations need shape "
            f"{grid} with these arguments (a table of actions indexed by the observation)"
        )
    entries = table[tuple(tables.observation_array.T)]
    if np.issubdtype(entries.dtype, np.integer):
        return entries
    if np.issubdtype(entries.dtype, np.floating):
        whole = np.isfinite(entries) & (entries == np.round(entries))
        if whole.all():
            return entries.astype(np.int64)
        i = int(np.flatnonzero(~whole)[0])
        raise ValueError(
            f"policy table holds {entries[i].item()!r} for observation {tables.observations[i]}; "
            "its entries must be whole-number actions"
        )
    raise ValueError(
        f"policy table has dtype {table.dtype}; it must hold integer actions "
        "(floats are accepted where they are whole numbers)"
    )


def _mapping_actions(mapping: Mapping, tables: Tables) -> list:
    """The mapping's action for every reachable observation; every one must be a key."""
    actions, missing = [], []
    for obs in tables.observations:
        try:
            actions.append(mapping[obs])
        except KeyError:
            missing.append(obs)
    if missing:
        shown = ", ".join(str(obs) for obs in sorted(missing)[:5])
        more = ", ..." if len(missing) > 5 else ""
        raise ValueError(
            f"the policy mapping has no action for {len(missing)} of the {tables.num_states} "
            f"reachable observations of {_game_name(tables)} with these arguments, e.g. "
            f"{shown}{more}"
        )
    return actions


def _as_action(action) -> int:
    value = np.asarray(action)
    if value.size != 1 or not np.issubdtype(value.dtype, np.integer):
        raise ValueError(f"a policy must return one integer action, got {action!r}")
    return int(value.reshape(()))


def evaluate_on(
    policy, tables: Tables, optimum: Solution, *, obs_transform=None, deterministic: bool = True
) -> Evaluation:
    """Evaluate `policy` exactly on an enumerated game whose optimum is already known.

    `policy` and `obs_transform` are as in `policy_actions`; a stochastic policy (see
    `policy_probabilities`) is scored by its action probabilities.
    """
    start = time.perf_counter()
    if callable(getattr(policy, "batch", None)) and obs_transform is None:
        # Asked once: its answer decides between actions and probabilities, then is scored.
        policy = _Answered(np.asarray(policy.batch(_observation_batch(tables, None))))
    probs = policy_probabilities(
        policy, tables, obs_transform=obs_transform, deterministic=deterministic
    )
    if probs is None:
        actions = policy_actions(policy, tables, obs_transform=obs_transform)
        evaluation = score_actions(actions, tables, optimum)
    else:
        evaluation = score_probabilities(probs, tables, optimum)
    evaluation.seconds = time.perf_counter() - start
    return evaluation


class _Answered:
    """A batched policy's answer for every state of the tables, kept so it is asked once."""

    def __init__(self, output: np.ndarray) -> None:
        self.output = output

    def batch(self, observations: np.ndarray) -> np.ndarray:
        return self.output

    def __call__(self, obs):
        raise TypeError("a kept batch answer is read whole, not one observation at a time")


def policy_probabilities(
    policy, tables: Tables, *, obs_transform=None, deterministic: bool = True
) -> np.ndarray | None:
    """A stochastic policy's action probabilities in every state of `tables`, (n, actions), or
    None for a deterministic policy (then `policy_actions` applies).

    Stochastic policies: a float table of shape `observation_nvec + (num_actions,)` (one
    probability vector per observation); an SB3 model with `deterministic=False` (the
    probabilities of its action distribution, masked as MaskablePPO masks them); a callable
    returning a probability vector (a float array of length num_actions) for each observation.
    """
    if isinstance(policy, np.ndarray):
        grid = tuple(int(n) for n in tables.model.observation_nvec)
        if policy.shape != grid + (tables.num_actions,):
            return None
        if not np.issubdtype(policy.dtype, np.floating):
            raise ValueError(
                f"a table of action probabilities must hold floats, got {policy.dtype}"
            )
        return _checked_probabilities(policy[tuple(tables.observation_array.T)], tables)
    if hasattr(policy, "predict"):
        if deterministic:
            return None
        return _model_probabilities(policy, tables, obs_transform)
    if not deterministic:
        raise TypeError("deterministic=False is for SB3 models; pass probabilities otherwise")
    if callable(getattr(policy, "batch", None)) and obs_transform is None:
        output = np.asarray(policy.batch(_observation_batch(tables, None)))
        return _checked_probabilities(output, tables) if output.ndim == 2 else None
    if callable(policy) and not isinstance(policy, Mapping):
        first = _callable_output(policy, tables, obs_transform, 0)
        if np.asarray(first).shape == (tables.num_actions,) and not np.issubdtype(
            np.asarray(first).dtype, np.integer
        ):
            rows = [
                _callable_output(policy, tables, obs_transform, i) for i in range(tables.num_states)
            ]
            return _checked_probabilities(np.asarray(rows, dtype=float), tables)
    return None


def _callable_output(policy, tables: Tables, obs_transform, i: int):
    if obs_transform is not None:
        return policy(_observation_batch(tables, obs_transform)[i])
    obs = tables.observations[i]
    return policy(obs if tables.observation_array.shape[1] == 1 else np.array(obs, dtype=np.int64))


def _checked_probabilities(probs: np.ndarray, tables: Tables) -> np.ndarray:
    probs = np.asarray(probs, dtype=float).reshape(tables.num_states, tables.num_actions)
    bad = ~np.isfinite(probs).all(axis=1) | (probs < 0).any(axis=1)
    bad |= np.abs(probs.sum(axis=1) - 1.0) > PROBABILITY_TOLERANCE
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"the policy's probabilities for observation {tables.observations[i]} are "
            f"{probs[i].tolist()}; they must be >= 0 and sum to 1"
        )
    return probs / probs.sum(axis=1, keepdims=True)  # round-off only: the check above holds


def _model_probabilities(model, tables: Tables, obs_transform) -> np.ndarray:
    """An SB3 model's action probabilities (its categorical distribution) at every state."""
    policy = getattr(model, "policy", None)
    if policy is None or not hasattr(policy, "get_distribution"):
        raise TypeError(
            "deterministic=False needs an SB3 model whose policy has get_distribution "
            f"(PPO, MaskablePPO, A2C); got {type(model).__name__}"
        )
    import torch

    batch = _observation_batch(tables, obs_transform)
    if obs_transform is None:
        _check_observation_space(model, tables)
    takes_masks = "action_masks" in inspect.signature(policy.get_distribution).parameters
    chunks = []
    with torch.no_grad():
        for lo in range(0, len(batch), PREDICT_BATCH):
            obs, _ = policy.obs_to_tensor(batch[lo : lo + PREDICT_BATCH])
            extra = {"action_masks": tables.legal[lo : lo + PREDICT_BATCH]} if takes_masks else {}
            distribution = policy.get_distribution(obs, **extra).distribution
            chunks.append(distribution.probs.cpu().numpy().astype(float))
    return _checked_probabilities(np.concatenate(chunks), tables)


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

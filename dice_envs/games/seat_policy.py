"""The policy of one seat of a two-player (or simultaneous) model, from any accepted form.

A seat's policy gives action probabilities per observation. `policy(model, spec)` converts every
form an opponent may take (a name, a table, a batched callable, a callable, a mapping, a
solution) and checks it against the model.
"""

from __future__ import annotations

import inspect
import numbers
import warnings
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any

import numpy as np

from dice_envs.games.base import (
    Observation,
    TwoPlayerModel,
    cumulative,
)

# Opponent names that a package outside dice_envs supplies (baselines: "optimal"), so that the
# games never import a solver. Each entry point is f(model) -> any opponent form `policy` takes.
POLICY_ENTRY_POINTS = "dice_envs.policies"


# A Python callable asked once per observation on a grid of more observations than this is
# slow; the opponent's constructor says so, and names the fast forms.
SLOW_CALLS = 100_000


# A batched opponent is asked once on the whole grid (and kept as a table) up to this many
# observations.
BATCHED_GRID_LIMIT = 16_000_000


# How far a row of action probabilities may sum from 1 before it is refused: a network's float32
# softmax is off by about 1e-7.
PROBABILITY_TOLERANCE = 1e-6


def normalised_probabilities(probs: object, name: str) -> np.ndarray:
    """`probs` (the last axis over actions) divided by its row sums, after checking that every
    entry is finite and >= 0 and every row sums to 1 within PROBABILITY_TOLERANCE: what is
    evaluated as exact is then a probability measure."""
    probs = np.asarray(probs, dtype=float)
    if not np.isfinite(probs).all() or (probs < 0).any():
        raise ValueError(f"{name} must hold finite probabilities >= 0")
    sums = probs.sum(axis=-1, keepdims=True)
    if (np.abs(sums - 1.0) > PROBABILITY_TOLERANCE).any():
        raise ValueError(
            f"{name} must sum to 1 over its last axis (within {PROBABILITY_TOLERANCE})"
        )
    return probs / sums


class Policy:
    """A policy of one seat of a two-player model: action probabilities per observation.

    Built by `policy` from a name, a table, a callable or a solution object. `probs(obs)` gives
    one observation's probabilities, `batch_probs(observations)` a whole (n, d) batch.
    """

    def __init__(
        self,
        num_actions: int,
        table: np.ndarray | None = None,
        function: Callable[[Observation], int] | None = None,
        name: str = "policy",
    ) -> None:
        self.num_actions, self.table, self.function, self.name = num_actions, table, function, name
        self._cache: dict[Observation, np.ndarray] = {}

    def choice(self, obs: Observation) -> int | list[float]:
        """The action for `obs` where the policy is deterministic there, else the cumulative
        bounds to draw one from (see `draw`)."""
        probs = self.probs(obs)
        best = int(probs.argmax())
        return best if probs[best] == 1.0 else cumulative(probs.tolist())

    def __repr__(self) -> str:
        return f"Policy({self.name})"

    def probs(self, obs: Observation) -> np.ndarray:
        if self.table is not None:
            return self.table[obs]
        cached = self._cache.get(obs)
        if cached is None:
            try:
                action = self.function(obs)
            except KeyError:
                raise ValueError(
                    f"opponent {self.name} has no action for observation {obs}"
                ) from None
            if isinstance(action, bool) or not isinstance(action, numbers.Integral):
                action = np.asarray(action)
                if action.shape == (self.num_actions,) and np.issubdtype(action.dtype, np.floating):
                    cached = normalised_probabilities(action, f"opponent {self.name}'s row")
                    self._cache[obs] = cached
                    return cached
                if action.shape != () or not np.issubdtype(action.dtype, np.integer):
                    raise ValueError(
                        f"opponent {self.name} returned {action!r} for {obs}; it must return "
                        f"an action in 0..{self.num_actions - 1}"
                    )
            if not 0 <= int(action) < self.num_actions:
                raise ValueError(
                    f"opponent {self.name} returned {action!r} for {obs}; actions are "
                    f"0..{self.num_actions - 1}"
                )
            cached = self._cache[obs] = np.eye(self.num_actions)[int(action)]
        return cached

    def batch_probs(self, observations: np.ndarray) -> np.ndarray:
        if self.table is not None:
            return self.table[tuple(observations.T)]
        if observations.shape[1] == 1:
            return np.array([self.probs(int(o)) for o in observations[:, 0]])
        return np.array([self.probs(tuple(int(v) for v in o)) for o in observations])


def _check_covers(model: TwoPlayerModel, mapping: Mapping) -> None:
    """ValueError naming `opponent` unless `mapping` holds an entry for every observation at
    which a player can be to move (where `model.state_of` accepts it): checked when the policy
    is given, not when a missing observation is first met."""
    nvec = tuple(model.observation_nvec)
    scalar = len(nvec) == 1
    keys = set()
    for key in mapping:
        try:
            keys.add(int(key) if scalar else tuple(int(v) for v in key))
        except (TypeError, ValueError):
            raise ValueError(
                f"opponent (a mapping) has the key {key!r}; its keys must be observations "
                f"(grid {nvec})"
            ) from None
    for index in np.ndindex(*nvec):
        observation = index[0] if scalar else index
        if observation in keys:
            continue
        try:
            model.state_of(observation, 1)  # seat 1, the opponent's (two_player.OPPONENT)
        except ValueError:
            continue  # no position shows it to a player to move
        raise ValueError(
            f"opponent (a mapping) has no action for observation {observation}, where the "
            "opponent can be to move; a mapping must cover every such observation (or give a "
            "table over the observation grid, or a callable)"
        )


def policy(model: TwoPlayerModel, spec: object) -> Policy:
    """A seat's policy from any accepted form, checked against the model.

    Accepted: a name (the game's own `policy_names`, or one a package registers under the
    `dice_envs.policies` entry points, such as "optimal" from baselines); a numpy table over the
    observation grid holding actions, or with a last axis of `num_actions` probabilities; a
    batched callable (`dice_envs.policies.batched`: all observations at once, the fast form); a
    callable taking the observation (an int, or an int64 array) and returning an action or a
    probability vector; a solution with `probabilities()` (its whole policy as such a table: a
    two-player solution, an equilibrium, whose mixtures are played as mixtures); an object with
    `action(observation)` (a solution); a mapping from
    observation to action; a `Policy`. A callable taking one argument per observation component,
    `f(own, other, turn_total)` (the form before 0.6.0), is refused with a ValueError.
    """
    if isinstance(spec, Policy):
        return spec
    nvec, actions = tuple(model.observation_nvec), model.num_actions
    if isinstance(spec, str):
        named = model.named_policy(spec)
        if named is None:
            plugin = _plugins().get(spec)
            if plugin is None:
                names = list(model.policy_names) + sorted(_plugins())
                raise ValueError(f"opponent must be one of {', '.join(names)}; got {spec!r}")
            named = plugin.load()(model)
        resolved = policy(model, named)
        resolved.name = repr(spec)
        return resolved
    if isinstance(spec, np.ndarray):
        return Policy(actions, table=_probability_table(spec, nvec, actions), name="<table>")
    if callable(getattr(spec, "batch", None)):
        return _batched(spec, nvec, actions)
    if callable(getattr(spec, "probabilities", None)):
        table = np.asarray(spec.probabilities())
        return Policy(actions, table=_probability_table(table, nvec, actions), name="<solution>")
    if hasattr(spec, "action") and callable(spec.action):
        return Policy(actions, function=spec.action, name="<solution>")
    if isinstance(spec, Mapping):
        _check_covers(model, spec)
        return Policy(actions, function=spec.__getitem__, name="<mapping>")
    if callable(spec):
        if len(nvec) > 1 and _takes_components(spec, len(nvec)):
            raise ValueError(
                "an opponent callable takes the observation, f(observation) (an int64 array of "
                f"{len(nvec)} components), and returns an action or a probability vector; "
                "f(own, other, ...) with one argument per component is no longer taken (since "
                "0.6.0): pass lambda observation: f(*observation), or a batched policy "
                "(dice_envs.policies.batched)"
            )
        if int(np.prod(nvec)) > SLOW_CALLS:
            warnings.warn(
                f"the opponent is a Python callable asked once per observation, of up to "
                f"{int(np.prod(nvec)):,} here; dice_envs.policies.batched(f) (all observations "
                "at once) or a table over the observation grid is much faster",
                stacklevel=3,
            )
        return Policy(actions, function=_OnObservation(spec, len(nvec)), name="<callable>")
    raise ValueError(
        "opponent must be a name, a numpy table, a callable, a mapping or an object with "
        f"action(observation); got {type(spec).__name__}"
    )


def _batched(spec: Any, nvec: tuple[int, ...], actions: int) -> Policy:
    """A batched policy asked once on the whole observation grid (a table from then on), or,
    on a grid too large for that, one observation at a time."""
    cells = int(np.prod(nvec))
    name = f"<batched {getattr(spec, 'name', 'policy')}>"
    if cells > BATCHED_GRID_LIMIT:
        return Policy(actions, function=_OnObservation(spec, len(nvec)), name=name)
    grid = np.indices(nvec).reshape(len(nvec), -1).T.astype(np.int64)
    output = np.asarray(spec.batch(grid[:, 0] if len(nvec) == 1 else grid))
    if output.shape == (cells,):
        table = output.reshape(nvec)
    elif output.shape == (cells, actions):
        table = output.reshape(nvec + (actions,)).astype(float)
    else:
        raise ValueError(
            f"a batched policy must return ({cells},) actions or ({cells}, {actions}) "
            f"probabilities for the {cells} observations of the grid, got shape {output.shape}"
        )
    return Policy(actions, table=_probability_table(table, nvec, actions), name=name)


def _takes_components(function: Callable[..., Any], components: int) -> bool:
    """Whether `function` takes one positional argument per observation component."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    return len(required) == components


class _OnObservation:
    """Calls `function(observation)` with the observation as the env shows it (an int, or an
    int64 array); a class, not a lambda, so that envs pickle."""

    def __init__(self, function: Callable[..., Any], components: int) -> None:
        self.function, self.components = function, components

    def __call__(self, observation: tuple[int, ...]):
        if self.components == 1:
            return self.function(int(np.asarray(observation).reshape(-1)[0]))
        return self.function(np.asarray(observation, dtype=np.int64))


def _plugins() -> dict[str, Any]:
    return {point.name: point for point in entry_points(group=POLICY_ENTRY_POINTS)}


def _probability_table(table: np.ndarray, nvec: tuple[int, ...], actions: int) -> np.ndarray:
    if not (np.issubdtype(table.dtype, np.integer) or np.issubdtype(table.dtype, np.floating)):
        raise ValueError(
            f"an opponent table must hold numbers (actions or probabilities), got {table.dtype}"
        )
    if table.shape == nvec:
        if not np.issubdtype(table.dtype, np.integer) and not np.all(table == np.round(table)):
            raise ValueError("an opponent table of actions must hold whole numbers")
        if table.min() < 0 or table.max() >= actions:
            raise ValueError(f"an opponent table of actions must hold 0..{actions - 1}")
        return np.eye(actions, dtype=np.float32)[table.astype(np.int64)]
    if table.shape == nvec + (actions,):
        probs = normalised_probabilities(table, "an opponent table of probabilities")
        single = probs.astype(np.float32)  # half the memory where nothing is lost
        return single if np.array_equal(single, probs) else probs
    raise ValueError(
        f"an opponent table must have shape {nvec} (actions) or {nvec + (actions,)} "
        f"(probabilities), got {table.shape}"
    )


def named_table(model: TwoPlayerModel, name: str) -> np.ndarray | None:
    """The named policy `name` of a two-player (or simultaneous) model over its observation
    grid: a table of actions where it is deterministic, else of action probabilities; None for
    a name the model does not know. "optimal" (alias "two-player-optimal") comes from the
    package that registers it under the `dice_envs.policies` entry points (baselines)."""
    name = "optimal" if name == "two-player-optimal" else name
    table = model.named_policy(name)
    if table is None:
        plugin = _plugins().get(name)
        if plugin is None:
            return None
        table = plugin.load()(model)
    probs = _probability_table(np.asarray(table), tuple(model.observation_nvec), model.num_actions)
    actions = probs.argmax(axis=-1)
    return actions if np.all(probs.max(axis=-1) == 1.0) else probs


def named_policy_names(model: TwoPlayerModel) -> tuple[str, ...]:
    """The names `named_table` takes for `model`."""
    return (*model.policy_names, *sorted(_plugins()))

"""The policy of one seat of a two-player (or simultaneous) model, from any accepted form.

A seat's policy gives action probabilities per observation. `policy(model, spec)` converts
every policy form (`dice_envs.policies.as_policy`) and asks it on the model's whole
observation grid once, or, for forms called once per observation and grids too large, one
observation at a time as play reaches it.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from operator import itemgetter

import numpy as np

from dice_envs.games.base import Observation, TwoPlayerModel, cumulative
from dice_envs.games.policy_forms import (
    SEAT_SOLUTIONS,
    SOLVED_POLICIES,
    BatchedPolicy,
    GridRows,
    as_policy,
    checked_answer,
    describe_own,
    name_plugins,
    seat_solution,
)
from dice_envs.games.rule import Rule

# A batched opponent is asked once on the whole grid (and kept as a table) up to this many
# observations.
BATCHED_GRID_LIMIT = 16_000_000


class Policy:
    """A policy of one seat of a two-player model: action probabilities per observation.

    Built by `policy` from any policy form. `probs(obs)` gives one observation's
    probabilities, `batch_probs(observations)` a whole (n, d) batch.
    """

    def __init__(
        self,
        num_actions: int,
        table: np.ndarray | None = None,
        asked: BatchedPolicy | None = None,
        model: TwoPlayerModel | None = None,
        name: str = "policy",
    ) -> None:
        self.num_actions, self.table, self.asked, self.model = num_actions, table, asked, model
        self.name = name
        self._cache: dict[Observation, np.ndarray] = {}
        # Answers are kept by the components the policy reads, where it says which.
        reads = None if asked is None else asked.reads
        self._key = None if reads is None or len(reads) < 2 else itemgetter(*reads)

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
        key = obs if self._key is None else self._key(obs)
        cached = self._cache.get(key)
        if cached is None:
            row = np.asarray(obs, dtype=np.int64).reshape(1, -1)
            legal = mover_legal(self.model, row) if self.asked.needs_legal else None
            try:
                answer = self.asked.answer(row, legal)
            except ValueError as error:
                raise ValueError(f"opponent: {error}") from None
            cached = self._cache[key] = _as_probabilities(answer, self.num_actions)[0]
        return cached

    def batch_probs(self, observations: np.ndarray) -> np.ndarray:
        if self.table is not None:
            return self.table[tuple(observations.T)]
        if not self.asked.per_observation:  # a batched policy: one call for the whole batch
            legal = mover_legal(self.model, observations) if self.asked.needs_legal else None
            try:
                answer = self.asked.answer(observations, legal)
            except ValueError as error:
                raise ValueError(f"opponent: {error}") from None
            return _as_probabilities(answer, self.num_actions)
        if observations.shape[1] == 1:
            return np.array([self.probs(int(o)) for o in observations[:, 0]])
        return np.array([self.probs(tuple(int(v) for v in o)) for o in observations])


def policy(model: TwoPlayerModel, spec: object) -> Policy:
    """A seat's policy from any policy form (`dice_envs.policies.as_policy`: a name, a table,
    a solution, a batched callable, a mapping, a callable, an SB3 model, a run folder), checked
    against the model. A mapping must cover every observation at which a player can be to
    move; a two-player solution or an equilibrium plays its mixtures as mixtures."""
    if isinstance(spec, Policy):
        return spec
    spec = opponent_spec(model, spec)
    if isinstance(spec, Mapping):
        _check_covers(model, spec)  # its errors name the opponent themselves
    try:
        return seat_policy(model, spec)
    except ValueError as error:
        raise ValueError(f"opponent: {error}") from None


def seat_policy(model: TwoPlayerModel, spec: object) -> Policy:
    """`policy` without naming the opponent in its errors (a seat's named policy)."""
    if isinstance(spec, str) and spec in SEAT_SOLUTIONS:
        found = _seat_policy(model, as_policy(_solved(model, spec), model))
        found.name = repr(spec)
        return found
    try:
        asked = as_policy(spec, model)
    except ValueError as error:
        if not (isinstance(spec, str) and str(error).startswith("policy for ")):
            raise
        names = ", ".join(named_policy_names(model))
        raise ValueError(f"a policy of this game must be one of {names}; got {spec!r}") from None
    return _seat_policy(model, asked)


def _seat_policy(model: TwoPlayerModel, asked: BatchedPolicy) -> Policy:
    nvec, actions = tuple(int(n) for n in model.observation_nvec), model.num_actions
    lazy = asked.per_observation or not asked.whole_grid
    if lazy or math.prod(nvec) > BATCHED_GRID_LIMIT:  # math.prod: no int64 overflow
        return Policy(actions, asked=asked, model=model, name=asked.name)
    if asked.table is not None:  # the table itself, in the grid's order
        cells = int(np.prod(nvec))
        rows = asked.table.reshape((cells,) + asked.table.shape[len(nvec) :])
        answer = checked_answer(rows, GridRows(nvec), actions)
    else:
        grid = np.indices(nvec).reshape(len(nvec), -1).T.astype(np.int64)
        answer = asked.answer(grid, mover_legal(model, grid) if asked.needs_legal else None)
    table = _as_probabilities(answer, actions).reshape(nvec + (actions,))
    single = table.astype(np.float32)  # half the memory where nothing is lost
    table = single if np.array_equal(single, table) else table
    return Policy(actions, table=table, name=asked.name)


def _as_probabilities(answer: np.ndarray, num_actions: int) -> np.ndarray:
    """(n,) actions as one-hot rows; (n, num_actions) probabilities as they are."""
    if answer.ndim == 2:
        return answer
    return np.eye(num_actions, dtype=np.float32)[answer]


def mover_legal(model: TwoPlayerModel, observations: np.ndarray) -> np.ndarray:
    """The legal actions at each observation as the mover sees it (all, for a model without
    a batch form: an illegal action plays as the rules say)."""
    if not hasattr(model, "batch_state_of"):
        return np.ones((len(observations), model.num_actions), dtype=bool)
    return model.batch_legal(model.batch_state_of(observations, 0))


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


def opponent_spec(model: TwoPlayerModel, spec: object) -> object:
    """An opponent as given, but the old name "optimal" (before 0.7) as the model's own
    optimum, with a FutureWarning naming its replacement: "optimal" now names the optimum of a
    registered game (a best response to its opponent), never an opponent."""
    if not (isinstance(spec, str) and spec == "optimal"):
        return spec
    replacement = seat_solution(model)
    # FutureWarning, not DeprecationWarning: Python shows it by default, and the name is set by
    # users in scripts and configs, deep inside gym.make, where a DeprecationWarning is hidden.
    warnings.warn(
        f'opponent="optimal" is deprecated and will be refused in a later version: use '
        f'opponent="{replacement}" ({SOLVED_POLICIES[replacement].split(" (")[0]}); "optimal" '
        "now names the optimum of the game as registered, never an opponent",
        FutureWarning,
        stacklevel=3,
    )
    return replacement


def _solved(model: TwoPlayerModel, name: str) -> object:
    """The model's own optimum `name` ("two-player-optimal" or "equilibrium") as action
    probabilities over its grid, from the package registered for it; a ValueError naming the
    model's own when `name` is the other kind's."""
    own = seat_solution(model)
    if name != own:
        kind = "simultaneous" if own == "equilibrium" else "alternating"
        raise ValueError(f'{name} is not a policy of this game ({kind} moves): use "{own}"')
    plugin = name_plugins().get(name)
    if plugin is None:
        raise ValueError(
            f"{name} is solved by the baselines package, which registers it under the "
            "dice_envs.policies entry points: install dice-envs with it"
        )
    return plugin.load()(model)


def named_table(model: TwoPlayerModel, name: str) -> np.ndarray | Rule | None:
    """The named policy `name` of a two-player (or simultaneous) model over its observation
    grid: a table of actions where it is deterministic, else of action probabilities (a `Rule`
    asked in batches where the grid is too large to tabulate); None for a name the model does
    not know. Its own optimum ("two-player-optimal", or "equilibrium"
    for simultaneous moves) comes from the package that registers it under the
    `dice_envs.policies` entry points (baselines)."""
    if name != seat_solution(model) and model.named_policy(name) is None:
        return None
    seat = seat_policy(model, name)
    if seat.table is None:  # a grid too large to tabulate: the policy asked in batches
        width = len(model.observation_nvec)
        return Rule.from_batch(
            lambda obs: seat.batch_probs(np.asarray(obs, dtype=np.int64).reshape(-1, width)),
            name,
        )
    table = seat.table
    actions = table.argmax(axis=-1)
    return actions if np.all(table.max(axis=-1) == 1.0) else table


def named_policy_names(model: TwoPlayerModel) -> tuple[str, ...]:
    """The names `named_table` takes for `model`: its own and its optimum's."""
    return (*model.policy_names, seat_solution(model))


def named_policy_descriptions(model: TwoPlayerModel) -> dict[str, str]:
    """One line per name of `named_policy_names` (patterns such as "hold-at-K" as they are)."""
    own = getattr(model, "policy_descriptions", {})
    described = {name: describe_own(own, name) for name in model.policy_names}
    described = {name: text for name, text in described.items() if text is not None}
    return {**described, seat_solution(model): SOLVED_POLICIES[seat_solution(model)]}

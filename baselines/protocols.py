"""The two interfaces every game answers through: a solution and an evaluation.

`baselines.solve` gives a `GameSolution` for every registered game (a table-sized game's
`Solution`, Yahtzee's `YahtzeeSolution`); a two-player optimum (`TwoPlayerSolution`) and a
simultaneous game's `Equilibrium` answer the same questions from the mover's seat.
`baselines.evaluate` gives a `GameEvaluation` for every game (`Evaluation`,
`YahtzeeEvaluation`). The conformance tests check every registered id against both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dice_envs.games.rule import Rule

# A loss at most this (relative to the optimal value) is round-off, not a lost decision:
# `where_lost` leaves it out.
LOSS_TOLERANCE = 1e-12


@runtime_checkable
class GameSolution(Protocol):
    """The optimum of a game, read by observation (the env's, as an int tuple or array).

    One observation: `action(obs)` (the optimal action, lowest-numbered on exact ties),
    `action_values(obs)` (the expected return of each action, then optimal play; NaN where
    the rules forbid it), `value_at(obs)`. A batch, an (n, k) int array (n,) for a scalar
    observation: `actions`, `action_values_batch` (n, num_actions), `values_at` (n,).
    `batched_policy()` is the optimal policy as a batched callable (`dice_envs.policies`).
    """

    value: float

    def action(self, obs: Any) -> int: ...

    def action_values(self, obs: Any) -> np.ndarray: ...

    def value_at(self, obs: Any) -> float: ...

    def actions(self, observations: np.ndarray) -> np.ndarray: ...

    def action_values_batch(self, observations: np.ndarray) -> np.ndarray: ...

    def values_at(self, observations: np.ndarray) -> np.ndarray: ...

    def batched_policy(self) -> Rule: ...


@dataclass(frozen=True)
class Loss:
    """One decision where a policy loses value: `loss` is the expected return it gives up
    there, weighted by how often its play reaches it (a game's losses sum to its gap), at
    `observation` (as the env shows it: an int, or a tuple of ints); `action` is what the
    policy plays there (its most probable action if it mixes), `optimal_action` the
    optimum's."""

    loss: float
    observation: int | tuple[int, ...]
    action: int
    optimal_action: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "observation": (
                self.observation if isinstance(self.observation, int) else list(self.observation)
            ),
            "action": self.action,
            "optimal_action": self.optimal_action,
            "loss": self.loss,
        }


@runtime_checkable
class GameEvaluation(Protocol):
    """The exact score of a policy: `value` and `optimal_value` (expected returns from the
    start), `gap` (their difference), `relative_gap` (gap over |optimal_value|),
    `agreement` (the share of the optimum's expected decisions where the policy plays an
    optimal action), and `where_lost(n)`: the n largest `Loss`es, largest first."""

    value: float
    optimal_value: float
    gap: float
    relative_gap: float
    agreement: float

    def where_lost(self, count: int = 10) -> list[Loss]: ...


def check_count(count: Any) -> int:
    """`where_lost`'s count: an int >= 1 (ValueError naming it otherwise)."""
    if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 1:
        raise ValueError(f"count must be an integer >= 1, got {count!r}")
    return int(count)


def observation_rows(observations: Any) -> np.ndarray:
    """A batch of observations as an int64 array with one row per observation."""
    rows = np.asarray(observations, dtype=np.int64)
    return rows.reshape(len(rows), -1) if rows.ndim else rows.reshape(1, 1)


class ByObservation:
    """The batch forms of `GameSolution` from its one-observation forms, one call per row;
    a solution with arrays over its observations overrides them."""

    def actions(self, observations: np.ndarray) -> np.ndarray:
        return np.array([self.action(_one(row)) for row in observation_rows(observations)])

    def action_values_batch(self, observations: np.ndarray) -> np.ndarray:
        return np.array([self.action_values(_one(row)) for row in observation_rows(observations)])

    def values_at(self, observations: np.ndarray) -> np.ndarray:
        return np.array([self.value_at(_one(row)) for row in observation_rows(observations)])

    def batched_policy(self) -> Rule:
        return Rule.from_batch(self.actions, "optimal")


def _one(row: np.ndarray) -> Any:
    return int(row[0]) if len(row) == 1 else tuple(int(v) for v in row)

"""Policies of the registered games: named policies, batched callables, and `as_policy`, the
one converter of every policy form (`dice_envs.games.policy_forms`).

A game's model builds its own named policies (`model.named_policy(name)`, with the names it
takes in `model.policy_names`): hand-written rules of the single-agent games, and the
two-player models' opponents played from the agent's seat in their folds.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dice_envs.games.policy_forms import (
    POLICY_FORM_ENTRY_POINTS,
    PROBABILITY_TOLERANCE,
    SLOW_CALLS,
    BatchedPolicy,
    PolicyInput,
    as_policy,
    checked_answer,
    name_plugins,
    observation_key,
)
from dice_envs.games.rule import Rule
from dice_envs.registration import make_model


def named_policy(env_id: str, name: str, **kwargs: Any) -> Any:
    """The policy called `name` of `env_id` at the env's keyword arguments: a `Rule`
    (observation -> action, batched) or a table over the observation grid (actions, or action
    probabilities for a policy that mixes). A ValueError names the id, or the names the game
    takes, when either is not known."""
    if not isinstance(name, str):
        raise ValueError(f"name must be a string, got {name!r}")
    return model_policy(make_model(env_id, **kwargs), name, env_id)


def model_policy(model: Any, name: str, game_name: str) -> Any:
    """The policy called `name` of a game model (`named_policy` of a model already made);
    `game_name` names the game in the ValueError for a name it does not take."""
    build = getattr(model, "named_policy", None)
    policy = None if build is None else build(name)
    if policy is None:
        names = list(getattr(model, "policy_names", ()))
        if not names:
            raise ValueError(f"{game_name} has no named policies; got {name!r}")
        raise ValueError(f"policy for {game_name} must be one of {', '.join(names)}; got {name!r}")
    return policy


def policy_names(env_id: str, **kwargs: Any) -> tuple[str, ...]:
    """The names (patterns such as "hold-at-K") that `named_policy` takes for `env_id`."""
    return tuple(getattr(make_model(env_id, **kwargs), "policy_names", ()))


def batched(function: Callable[[np.ndarray], np.ndarray], name: str | None = None) -> Rule:
    """Mark `function` as a batched policy, the fast form every policy argument takes.

    `function(observations)` receives an int64 array of observations, (n,) for a game with a
    scalar observation, else (n, d), and returns (n,) actions, or (n, num_actions) action
    probabilities for a policy that mixes. Exact evaluation asks it once for every state, and
    an opponent once for its whole observation grid.
    """
    if not callable(function):
        raise ValueError(f"function must be callable, got {function!r}")
    return Rule.from_batch(function, name or getattr(function, "__name__", "batched"))


__all__ = [
    "POLICY_FORM_ENTRY_POINTS",
    "PROBABILITY_TOLERANCE",
    "SLOW_CALLS",
    "BatchedPolicy",
    "PolicyInput",
    "as_policy",
    "batched",
    "checked_answer",
    "model_policy",
    "name_plugins",
    "named_policy",
    "observation_key",
    "policy_names",
]

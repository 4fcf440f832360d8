"""Policies of the registered games: named policies, batched callables, and `as_policy`, the
one converter of every policy form (`dice_envs.games.policy_forms`).

A game's model builds its own named policies (`model.named_policy(name)`, with the names it
takes in `model.policy_names` and a line on each in `model.policy_descriptions`): hand-written
rules of the single-agent games, and the two-player models' opponents played from the agent's
seat in their folds. Three names are solved by `baselines` (entry points `dice_envs.policies`):
"optimal", the optimum of a registered game exactly as registered with its arguments (for a
game against an opponent, the best response to that opponent); "two-player-optimal", the
two-player optimum of an alternating game; "equilibrium", a simultaneous game's. The last two
are also opponents; "optimal" never is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from dice_envs.games.policy_forms import (
    POLICY_FORM_ENTRY_POINTS,
    PROBABILITY_TOLERANCE,
    SLOW_CALLS,
    SOLVED_POLICIES,
    BatchedPolicy,
    PolicyError,
    PolicyInput,
    as_policy,
    checked_answer,
    describe_policy,
    game_label,
    load_table,
    model_policy_names,
    name_plugins,
    observation_key,
    resolve_name,
)
from dice_envs.games.rule import Rule
from dice_envs.registration import make_model


def named_policy(env_id: str, name: str, **kwargs: Any) -> Any:
    """The policy called `name` of `env_id` at the env's keyword arguments: a `Rule`
    (observation -> action, batched), a table over the observation grid (actions, or action
    probabilities for a policy that mixes), or for "optimal" the game's solution. A ValueError
    names the id, or the names the game takes, when either is not known."""
    if not isinstance(name, str):
        raise ValueError(f"name must be a string, got {name!r}")
    return model_policy(make_model(env_id, **kwargs), name, env_id)


def model_policy(model: Any, name: str, game_name: str | None = None) -> Any:
    """The policy called `name` of a game model (`named_policy` of a model already made);
    `game_name` names the game in the ValueError for a name it does not take (else the
    model's registered id and arguments)."""
    try:
        return resolve_name(model, name)
    except ValueError as error:
        if game_name is None or not str(error).startswith("policy for "):
            raise
        names = model_policy_names(model)
        if not names:
            raise ValueError(f"{game_name} has no named policies; got {name!r}") from None
        raise ValueError(
            f"policy for {game_name} must be one of {', '.join(names)}; got {name!r}"
        ) from None


def policy_names(env_id: str, **kwargs: Any) -> tuple[str, ...]:
    """The names (patterns such as "hold-at-K") that `named_policy` takes for `env_id`: the
    game's own, and "optimal" (the optimum of the game as registered); a fold's also its
    two-player optimum ("two-player-optimal", or "equilibrium" for simultaneous moves)."""
    return model_policy_names(make_model(env_id, **kwargs))


def policy_descriptions(env_id: str, **kwargs: Any) -> dict[str, str]:
    """Each name of `policy_names(env_id, **kwargs)` with what it is, in one line (a pattern's
    K left as it is)."""
    model = make_model(env_id, **kwargs)
    return {name: describe_policy(model, name) for name in model_policy_names(model)}


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
    "SOLVED_POLICIES",
    "BatchedPolicy",
    "PolicyError",
    "PolicyInput",
    "as_policy",
    "batched",
    "checked_answer",
    "describe_policy",
    "game_label",
    "load_table",
    "model_policy",
    "name_plugins",
    "named_policy",
    "observation_key",
    "policy_descriptions",
    "policy_names",
]

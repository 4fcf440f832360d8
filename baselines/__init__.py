"""Exact baselines for the dice_envs games: optimal solutions and exact policy evaluation.

import baselines
best = baselines.solve("dice_envs/SumAvoid-v0", N=10)
best.value, best.action(23)
score = baselines.evaluate(lambda s: int(s < 20), "dice_envs/SumAvoid-v0", N=10)
score.value, score.gap, score.relative_gap
"""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

import numpy as np

from baselines.evaluation import Evaluation, evaluate_on, policy_actions, score_actions
from baselines.mdp import TabularMDP, build_mdp
from baselines.solvers import Solution, bellman_residual, solve_mdp
from baselines.specialised import SPECIALISED
from dice_envs import make_model

__all__ = [
    "Evaluation",
    "Solution",
    "TabularMDP",
    "enumerated",
    "evaluate",
    "policy_actions",
    "score_actions",
    "solve",
    "tabulate",
]

METHODS = ("auto", "generic", "backward", "value_iteration", "specialised")
_CACHE: OrderedDict[Any, tuple[TabularMDP, Solution]] = OrderedDict()
_CACHE_SIZE = 8


def tabulate(env_id: str, **kwargs: Any) -> TabularMDP:
    """Enumerate the game behind `env_id` (with the env's keyword arguments) into an MDP."""
    return build_mdp(make_model(env_id, **kwargs))


def solve(env_id: str, *, method: str = "auto", tol: float = 1e-12, **kwargs: Any) -> Solution:
    """The optimal value and policy of `env_id` with the env's keyword arguments.

    `method`: "auto" (a game-specific solver where there is one, else "generic"), "generic"
    (backward induction if the game is acyclic, value iteration otherwise), "backward",
    "value_iteration" (to the tolerance `tol`) or "specialised". `Solution.seconds` includes
    enumerating the model.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    start = time.perf_counter()
    model = make_model(env_id, **kwargs)
    specialised = SPECIALISED.get(env_id)
    if method == "specialised" and specialised is None:
        raise ValueError(f"{env_id} has no specialised solver; use method='generic'")
    if specialised is not None and method in ("auto", "specialised"):
        solution = specialised(model)
    else:
        mdp_method = "auto" if method in ("auto", "generic") else method
        solution = solve_mdp(build_mdp(model), mdp_method, tol)
    solution.seconds = time.perf_counter() - start
    return solution


def enumerated(env_id: str, **kwargs: Any) -> tuple[TabularMDP, Solution]:
    """The enumerated game and its optimum on the MDP's states, kept for the next call."""
    return _enumerated(env_id, kwargs)


def _enumerated(env_id: str, kwargs: dict[str, Any]) -> tuple[TabularMDP, Solution]:
    try:
        key = (env_id, tuple(sorted(kwargs.items())))
        hash(key)
    except TypeError:
        key = None
    if key is not None and key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    mdp = tabulate(env_id, **kwargs)
    specialised = SPECIALISED.get(env_id)
    if specialised is None:
        entry = (mdp, solve_mdp(mdp))
    else:
        entry = (mdp, on_states(specialised(mdp.model), mdp))
    if key is not None:
        _CACHE[key] = entry
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return entry


def on_states(solution: Solution, mdp: TabularMDP) -> Solution:
    """`solution` re-indexed by the states of `mdp` (for a solver with its own indexing)."""
    rows = np.array([solution.index_of(obs) for obs in mdp.observations], dtype=np.int64)
    q = solution.q[rows]
    return Solution(
        value=solution.value,
        state_values=solution.state_values[rows],
        q=q,
        policy=solution.policy[rows],
        legal=mdp.legal,
        index_of=mdp.index_of,
        method=solution.method,
        seconds=solution.seconds,
        bellman_residual=bellman_residual(mdp, solution.state_values[rows]),
        iterations=solution.iterations,
        mdp=mdp,
    )


def evaluate(policy: Any, env_id: str, **kwargs: Any) -> Evaluation:
    """Evaluate `policy` exactly on `env_id` (with the env's keyword arguments).

    The policy may be a callable obs -> action, a numpy table indexed by the observation, a
    mapping, or anything with SB3's `predict`. The game is enumerated once per distinct
    arguments and kept (with its optimum) for the next call.
    """
    mdp, optimum = _enumerated(env_id, kwargs)
    return evaluate_on(policy, mdp, optimum)

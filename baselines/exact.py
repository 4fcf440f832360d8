"""The exact answers every game has: its tables, its optimum and the exact score of a policy.

`baselines` re-exports these (`baselines.solve`, `baselines.evaluate`, ...).
"""

from __future__ import annotations

import functools
import time
from collections import OrderedDict
from typing import Any

import numpy as np

from baselines.evaluation import Evaluation, evaluate_on
from baselines.solvers import Solution, bellman_residual, solve_mdp
from dice_envs import game, make_model, sizes
from dice_envs.sizes import TABLE_ROWS_LIMIT
from dice_envs.tables import Tables, build_tables

METHODS = ("auto", "generic", "backward", "value_iteration", "specialised")
_CACHE: OrderedDict[Any, tuple[Tables, Solution]] = OrderedDict()
_CACHE_SIZE = 8


def tabulate(env_id: str, **kwargs: Any) -> Tables:
    """Enumerate the game behind `env_id` (with the env's keyword arguments) into tables; a
    ValueError where its registration says the tables are too large at those arguments."""
    game(env_id).check_tables(kwargs)
    return build_tables(make_model(env_id, **kwargs))


def solve(
    env_id: str,
    *,
    method: str = "auto",
    tol: float = 1e-12,
    max_memory: int | str | None = None,
    **kwargs: Any,
) -> Solution:
    """The optimal value and policy of `env_id` with the env's keyword arguments.

    `method`: "auto" (a game-specific solver where there is one, else "generic"), "generic"
    (backward induction if the game is acyclic, value iteration otherwise), "backward",
    "value_iteration" (to the tolerance `tol`) or "specialised". Its Bellman residual and
    state count are measured on the tables (reachable, non-terminal states; a specialised
    solver may also answer for positions the start never reaches); a specialised solver builds
    them only when `bellman_residual` or `num_states` is first read, so `Solution.seconds`
    (the whole call) leaves them out, and `Solution.table_seconds` says what they took. A
    generic solve's `seconds` includes its tables.

    Before any work, a ValueError refuses a solve whose estimated peak memory passes
    `max_memory` (bytes, or text such as "8G"; by default DICE_ENVS_MAX_MEMORY, else 75 % of
    physical memory: `dice_envs.sizes.check`).
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    sizes.check(env_id, "solve", kwargs, max_memory=max_memory)
    entry = game(env_id)
    structured = entry.hook("structure_solver")
    if structured is not None:
        if method in ("auto", "specialised"):
            return structured(**kwargs)
        if entry.tables_refused(kwargs) is not None:  # a reduced game may have tables
            raise ValueError(
                f"{env_id} has no tables at {kwargs}: method must be 'auto' or 'specialised' "
                f"(its structure-aware solver), got {method!r}"
            )
    start = time.perf_counter()
    model = make_model(env_id, **kwargs)
    specialised = entry.hook("solver")
    if method == "specialised" and specialised is None:
        raise ValueError(f"{env_id} has no specialised solver; use method='generic'")
    if specialised is not None and method in ("auto", "specialised"):
        solution = specialised(model)
        rows = entry.hook("solver_rows")
        if rows is None or rows(model) <= TABLE_ROWS_LIMIT:
            solution.measure_on(functools.partial(build_tables, model))
    else:
        mdp_method = "auto" if method in ("auto", "generic") else method
        tables = build_tables(model)
        solution = solve_mdp(tables, mdp_method, tol)
        solution.table_seconds = tables.seconds
    solution.seconds = time.perf_counter() - start
    return solution


def enumerated(env_id: str, **kwargs: Any) -> tuple[Tables, Solution]:
    """The game's tables and its optimum on their states, kept for the next call."""
    return _enumerated(env_id, kwargs)


def _plain(value: Any) -> bool:
    """A value that can not change behind the cache's back (no callables, tables, objects)."""
    if value is None or isinstance(value, bool | int | float | str):
        return True
    return isinstance(value, tuple | list) and all(_plain(v) for v in value)


def _enumerated(env_id: str, kwargs: dict[str, Any]) -> tuple[Tables, Solution]:
    # Only plain arguments are cached: a callable or a table opponent may change in place.
    key = None
    if all(_plain(v) for v in kwargs.values()):
        key = (env_id, tuple(sorted((k, repr(v)) for k, v in kwargs.items())))
    if key is not None and key in _CACHE:
        _CACHE.move_to_end(key)
        return _CACHE[key]
    tables = tabulate(env_id, **kwargs)
    specialised = game(env_id).hook("solver")
    if specialised is None:
        entry = (tables, solve_mdp(tables))
    else:
        entry = (tables, on_states(specialised(tables.model), tables))
    entry[1].visits()  # where the optimum goes, for every evaluation's agreement
    if key is not None:
        _CACHE[key] = entry
        if len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return entry


def on_states(solution: Solution, tables: Tables) -> Solution:
    """`solution` re-indexed by the states of `tables` (for a solver with its own indexing),
    with its Bellman residual computed on the tables."""
    if solution.tables is tables:
        return solution
    rows = solution.indices_of(tables.observation_array)
    if (rows < 0).any():
        missing = tables.observations[int(np.flatnonzero(rows < 0)[0])]
        raise ValueError(f"the {solution.method} solution has no value for state {missing}")
    state_values = solution.state_values[rows]
    return Solution(
        value=solution.value,
        state_values=state_values,
        q=solution.q[rows],
        policy=solution.policy[rows],
        legal=tables.legal,
        index_of=tables.index_of,
        method=solution.method,
        seconds=solution.seconds,
        _residual=bellman_residual(tables, state_values),
        iterations=solution.iterations,
        tables=tables,
        table_seconds=tables.seconds,
    )


def evaluate(
    policy: Any,
    env_id: str,
    *,
    obs_transform: Any = None,
    deterministic: bool = True,
    max_memory: int | str | None = None,
    **kwargs: Any,
) -> Evaluation:
    """Evaluate `policy` exactly on `env_id` (with the env's keyword arguments).

    The policy takes any form `dice_envs.policies.as_policy` takes: a named policy
    ("stop-at-25"), a table over the observation grid, a solution, a two-player solution or an
    `Equilibrium` (played from the agent's seat, mixtures as mixtures), a batched callable, a
    mapping, a callable obs -> action, an SB3 model, a run folder. Stochastic policies are
    scored exactly too: a float table with a last axis of action probabilities, a callable
    returning a probability vector, or an SB3 model with `deterministic=False` (its action
    distribution, as it plays when sampling). `obs_transform` maps a batch of raw observations
    to what the policy was trained on (for models trained through observation wrappers). The
    game is enumerated once per distinct arguments and kept (with its optimum) for the next
    call. The result also says where the gap is lost (`Evaluation.losses`, per state, summing
    to the gap).
    On a game without tables its structure-aware evaluator answers instead (Yahtzee:
    `baselines.yahtzee_evaluation.evaluate_yahtzee`, a `YahtzeeEvaluation`; the Ten Thousand
    race at every goal: `baselines.ten_thousand_duel_evaluation.evaluate_race_policy`, a
    `RaceEvaluation`), with the same value, gap, agreement and `where_lost`.
    Before any work, an evaluation whose estimated peak memory passes `max_memory` is refused
    with a ValueError (as in `solve`).
    """
    entry = game(env_id)
    structured = entry.hook("structure_evaluator")
    if structured is None:
        entry.check_tables(kwargs)  # a game too large for tables says so, not its memory
    sizes.check(env_id, "evaluate", kwargs, max_memory=max_memory)
    if structured is not None:
        return structured(
            with_optimal(policy, env_id, kwargs),
            obs_transform=obs_transform,
            deterministic=deterministic,
            **kwargs,
        )
    tables, optimum = _enumerated(env_id, kwargs)
    return evaluate_on(
        policy, tables, optimum, obs_transform=obs_transform, deterministic=deterministic
    )


def optimal_policy(model: Any) -> Solution:
    """The policy "optimal" of a model made from a registered game (`dice_envs.make_model`):
    `solve(env_id, **kwargs)`, the optimum of the game exactly as registered with its
    arguments, its opponent included (entry point `dice_envs.policies`, pyproject.toml)."""
    spec = getattr(model, "game_spec", None)
    if spec is None:
        raise ValueError(
            '"optimal" is the optimum of a registered game: it needs a model made by '
            f"dice_envs.make_model(env_id, **kwargs), not {model!r}"
        )
    return solve(spec.env_id, **spec.kwargs)


def with_optimal(policy: Any, env_id: str, kwargs: dict[str, Any]) -> Any:
    """`policy`, but the name "optimal" as `solve(env_id, **kwargs)`: for the evaluators of
    games without tables, which ask the policy on a model of their own."""
    if isinstance(policy, str) and policy == "optimal":
        return solve(env_id, **kwargs)
    return policy

"""A learner's own value estimates held against the exact ones, state by state.

    errors = baselines.value_errors(np.load(".../policy_q.npy"), "dice_envs/Pig-v0", goal=30)
    errors.mean_error, errors.changed_share, errors.grid("errors")

Tabular Q-learning estimates Q*: its table is held against the exact Q*, in the states its own
greedy policy visits. PPO's critic estimates the value of the policy it acts with: its V is
held against that policy's exact value, in the states that policy visits. The weights are the
acting policy's expected visits, from its exact evaluation (`Evaluation.visits`).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from baselines.evaluation import (
    Evaluation,
    _all_q,
    evaluate_on,
    grid_of,
    observation_keys,
    score_actions,
)
from baselines.exact import enumerated
from baselines.policy_forms import PREDICT_BATCH, check_space
from baselines.solvers import PolicySystem, greedy, optimal_action_mask
from dice_envs.policies import SLOW_CALLS, PolicyInput
from dice_envs.tables import Tables

# Policy iteration for a discounted Q* stops with a RuntimeError after this many steps.
POLICY_ITERATIONS = 1_000
# Per-state arrays of a `ValueErrors`, readable by observation.
PER_STATE = ("estimates", "exact_values", "errors", "max_errors", "visits", "actions", "changed")


@dataclass
class ValueErrors:
    """A learner's value estimates against the exact values, per state, weighted by visits.

    For a Q table (`kind` "q") the exact values are Q*, and the acting policy is the table's
    greedy one: the best legal action, the lowest-numbered on ties, as the Q-learner acts.
    For a V estimate (`kind` "v", a PPO critic) the exact values are v_pi of the policy it
    acts with. The per-state arrays have one row per reachable non-terminal state, in the
    state order of the game's tables (as `Evaluation`'s); read them by observation with
    `grid(name)` and `by_observation(name)`.

    Attributes:
        kind: "q" (a Q table against Q*) or "v" (a V estimate against v_pi).
        gamma: the discount the exact values are computed under.
        mean_error: the visit-weighted mean of `errors`: > 0 the estimates are optimistic
            where the policy goes, < 0 pessimistic.
        mean_abs_error: the visit-weighted mean of |errors|.
        mean_max_error: for a Q table, the visit-weighted mean of `max_errors` (what
            Q-learning bootstraps from: the best estimate against V*); None for a V estimate.
        changed_share: the share of the visits spent in states where `changed` holds, in
            [0, 1].
        changed_loss: the gap lost in those states: the sum of `evaluation.losses` there
            (with `gamma` 1 and a Q table this is the whole gap up to round-off, since only a
            non-optimal action loses value).
        seconds: wall time added to the exact evaluation (the exact values, errors and
            weights; `evaluation.seconds` is the evaluation's own).
        evaluation: the exact evaluation of the acting policy (its visits weight the errors;
            its value, gap and losses are the game's, undiscounted).
        estimates: (states,) float64, the estimate: Q(s, a) of the greedy action a for a Q
            table, V(s) for a V estimate.
        exact_values: (states,) float64, the exact value it estimates: Q*(s, a) of that
            action, or v_pi(s).
        errors: (states,) float64, estimates - exact_values.
        max_errors: (states,) float64, for a Q table max over legal a of Q(s, a) minus V*(s)
            (None for a V estimate).
        visits: (states,) float64, the acting policy's expected visits of every state.
        actions: (states,) int64, the estimate's greedy action: the table's best legal action
            for a Q table; for a V estimate, the best legal action of a one-step lookahead on
            it, r(s, a) + gamma E[V(next state)].
        changed: (states,) bool, where the estimate's error changes the greedy action: for a
            Q table, `actions` is not optimal (its Q* is not within the solvers' tie
            tolerance, 1e-9 relative to |V*| above 1, of V*); for a V estimate, the lookahead
            on it picks an action that the same lookahead on the exact v_pi does not rank
            best (within the same tolerance). Ties never count as a change.
        observations: (states, components) int64, the observation of every state.
        observation_nvec: the size of each observation component.
    """

    kind: str
    gamma: float
    mean_error: float
    mean_abs_error: float
    mean_max_error: float | None
    changed_share: float
    changed_loss: float
    seconds: float
    evaluation: Evaluation = field(repr=False)
    estimates: np.ndarray = field(repr=False)
    exact_values: np.ndarray = field(repr=False)
    errors: np.ndarray = field(repr=False)
    max_errors: np.ndarray | None = field(repr=False)
    visits: np.ndarray = field(repr=False)
    actions: np.ndarray = field(repr=False)
    changed: np.ndarray = field(repr=False)
    observations: np.ndarray = field(repr=False)
    observation_nvec: tuple[int, ...] = field(repr=False)

    def _per_state(self, name: str) -> np.ndarray:
        if name not in PER_STATE:
            raise ValueError(f"name must be one of {', '.join(PER_STATE)}, got {name!r}")
        values = getattr(self, name)
        if values is None:
            raise ValueError(f"a {self.kind.upper()} estimate has no {name}")
        return values

    def grid(self, name: str = "errors") -> np.ndarray:
        """The per-state array `name` over the observation grid; observations of no reachable
        state hold NaN (-1 in the integer `actions`; `changed` is 1.0 / 0.0 / NaN)."""
        return grid_of(self._per_state(name), self.observations, self.observation_nvec)

    def by_observation(self, name: str = "errors") -> dict[Any, Any]:
        """The per-state array `name` as a mapping from observation (an int, or a tuple of
        ints, as the env shows it) to its entry."""
        values = self._per_state(name)
        return dict(zip(observation_keys(self.observations), values.tolist(), strict=True))


def value_errors(
    estimates: Any,
    env_id: str,
    *,
    policy: Any = None,
    gamma: float = 1.0,
    deterministic: bool = False,
    obs_transform: Any = None,
    evaluation: Evaluation | None = None,
    **kwargs: Any,
) -> ValueErrors:
    """Hold a learner's own value estimates against the exact values of `env_id`.

    Args:
        estimates: a Q table, of shape `observation_nvec + (num_actions,)` or the run
            store's `(cells, num_actions)` of `policy_q.npy` (row `np.ravel_multi_index(obs,
            observation_nvec)`), held against Q* and acting greedily (lowest-numbered on
            ties); or a V estimate, held against v_pi of `policy`: a float table of shape
            `observation_nvec` (or `(cells,)`), a callable on one observation, a batched
            callable (`dice_envs.policies.batched`) or an SB3 model (its critic). Entries
            at no reachable state's observation (and illegal actions) are not read.
        env_id: the game; `kwargs` are its keyword arguments.
        policy: for a V estimate, the policy it estimates the value of: any form
            `baselines.evaluate` takes, stochastic ones included; None for an SB3 model
            means the model itself. A Q table takes none (it acts on itself).
        gamma: the learner's discount, in (0, 1]. With 1 (every config's) the exact values
            are the evaluation's own. Below 1, Q* comes from policy iteration and v_pi from
            a linear solve, both with the discounted transitions: exact up to float round-off
            (policy iteration stops when no action beats the current one by more than the
            solvers' tie tolerance, 1e-9 relative to |V*| above 1).
        deterministic: for an SB3 model acting as the policy: False (default) scores its
            action distribution (the policy its critic is trained to estimate), True its
            most probable actions. Other policy forms say by their form.
        obs_transform: for a model or callable trained through an observation wrapper (see
            `baselines.evaluate`).
        evaluation: the acting policy's exact evaluation, if the caller has it already
            (`baselines.score_actions` or `score_probabilities` on the tables of
            `baselines.enumerated`): for a Q table, of its greedy actions (checked); for a V
            estimate it stands for `policy`, which must then be None.

    Returns:
        A `ValueErrors` (per state and visit-weighted). The game is enumerated at most once:
        the tables and optimum `baselines.evaluate` keeps serve both.

    Raises:
        ValueError: naming the argument: gamma outside (0, 1], a table of neither shape,
            non-finite estimates at a reachable state, a V estimate without a policy (or with
            a policy and an evaluation), a Q table with a policy, an `evaluation` of other
            states or actions, a policy that never ends the game from some state.
    """
    gamma = _checked_gamma(gamma)
    tables, optimum = enumerated(env_id, **kwargs)
    q_rows = _q_table_rows(estimates, tables)
    if q_rows is not None:
        if policy is not None:
            raise ValueError("policy must be None for a Q table: the table acts greedily on itself")
        actions = greedy(q_rows, tables.legal)  # lowest-numbered on ties, as the learner
        if evaluation is None:
            start = time.perf_counter()
            evaluation = score_actions(actions, tables, optimum)
            evaluation.seconds = time.perf_counter() - start
        else:
            _check_given_evaluation(evaluation, tables, actions)
        return _q_errors(q_rows, actions, evaluation, tables, optimum, gamma)
    if evaluation is not None:
        if policy is not None:
            raise ValueError("give policy or evaluation (of the policy), not both")
        _check_given_evaluation(evaluation, tables, None)
        return _v_errors(_v_rows(estimates, tables, obs_transform), evaluation, tables, gamma)
    if policy is None:
        if not _is_model(estimates):
            raise ValueError(
                "policy is needed for a V estimate: the policy whose value it estimates "
                "(None is allowed only when the estimate is an SB3 model, which then acts)"
            )
        policy = estimates
    v_rows = _v_rows(estimates, tables, obs_transform)
    evaluation = _evaluation(policy, tables, optimum, obs_transform, deterministic)
    return _v_errors(v_rows, evaluation, tables, gamma)


def _check_given_evaluation(evaluation: Any, tables: Tables, actions: np.ndarray | None) -> None:
    """Refuse an `evaluation` that is not one of these tables' states, or (`actions` given,
    a Q table's greedy ones) one of another deterministic policy."""
    if not isinstance(evaluation, Evaluation):
        raise ValueError(f"evaluation must be an Evaluation, got {type(evaluation).__name__}")
    if evaluation.visits is None or len(evaluation.visits) != tables.num_states:
        raise ValueError(
            f"evaluation must be of this game's {tables.num_states} states (its tables' order)"
        )
    if actions is not None and (
        evaluation.probabilities is not None or not np.array_equal(evaluation.actions, actions)
    ):
        raise ValueError("evaluation must be of the Q table's greedy actions")


def _checked_gamma(gamma: Any) -> float:
    if isinstance(gamma, bool) or not isinstance(gamma, int | float | np.floating | np.integer):
        raise ValueError(f"gamma must be a number in (0, 1], got {gamma!r}")
    if not 0.0 < float(gamma) <= 1.0:
        raise ValueError(f"gamma must be in (0, 1], got {gamma!r}")
    return float(gamma)


def _grid_rows(table: np.ndarray, tables: Tables, trailing: tuple[int, ...]) -> np.ndarray | None:
    """The table's entries at every reachable state, for a table over the observation grid
    (shape `observation_nvec + trailing`) or its flattened form (`(cells,) + trailing`); None
    for any other shape."""
    nvec = tuple(int(n) for n in tables.model.observation_nvec)
    if table.shape == nvec + trailing:
        return table[tuple(tables.observation_array.T)]
    if table.shape == (int(np.prod(nvec)),) + trailing:
        return table[np.ravel_multi_index(tuple(tables.observation_array.T), nvec)]
    return None


def _q_table_rows(estimates: Any, tables: Tables) -> np.ndarray | None:
    """A Q table's rows at every reachable state, (states, actions) float64; None when
    `estimates` is not a table of a Q table's shape. Non-finite legal entries are refused."""
    if not isinstance(estimates, np.ndarray):
        return None
    rows = _grid_rows(estimates, tables, (tables.num_actions,))
    if rows is None:
        if _grid_rows(estimates, tables, ()) is not None:
            return None  # a V table
        nvec = tuple(int(n) for n in tables.model.observation_nvec)
        flat = (int(np.prod(nvec)),)
        q_shapes = " or ".join(dict.fromkeys(str(s + (tables.num_actions,)) for s in (nvec, flat)))
        v_shapes = " or ".join(dict.fromkeys(str(s) for s in (nvec, flat)))
        raise ValueError(
            f"estimates has shape {estimates.shape}; a Q table here has shape {q_shapes}, "
            f"a V table {v_shapes}"
        )
    rows = _as_float(rows, "estimates")
    _refuse_non_finite(
        (~np.isfinite(rows) & tables.legal).any(axis=1), rows, tables,
        "a Q table's legal actions must hold finite values at every reachable state",
    )  # fmt: skip
    return rows


def _as_float(values: np.ndarray, name: str) -> np.ndarray:
    if not (np.issubdtype(values.dtype, np.floating) or np.issubdtype(values.dtype, np.integer)):
        raise ValueError(f"{name} must hold numbers, got dtype {values.dtype}")
    return values.astype(np.float64)


def _is_model(estimates: Any) -> bool:
    return callable(getattr(getattr(estimates, "policy", None), "predict_values", None))


def _v_rows(estimates: Any, tables: Tables, obs_transform: Any) -> np.ndarray:
    """A V estimate at every reachable state, (states,) float64; non-finite ones refused."""
    if _is_model(estimates):
        values = _critic_values(estimates, tables, obs_transform)
    elif isinstance(estimates, np.ndarray):
        values = _grid_rows(estimates, tables, ())
    elif callable(getattr(estimates, "batch", None)) and obs_transform is None:
        values = np.asarray(estimates.batch(_observation_batch(tables, None)))
    elif callable(estimates):
        values = np.asarray(_called_values(estimates, tables, obs_transform))
    else:
        raise ValueError(
            "estimates must be a Q or V table, a callable, a batched callable or an SB3 model; "
            f"got {type(estimates).__name__}"
        )
    if values.size != tables.num_states:
        raise ValueError(
            f"estimates gave {values.size} values (shape {values.shape}) for "
            f"{tables.num_states} states; a V estimate gives one value per observation"
        )
    values = _as_float(values.reshape(-1), "estimates")
    _refuse_non_finite(
        ~np.isfinite(values), values, tables, "a V estimate must be finite at every reachable state"
    )
    return values


def _refuse_non_finite(bad: np.ndarray, rows: np.ndarray, tables: Tables, rule: str) -> None:
    """A ValueError naming the first reachable state whose estimate breaks `rule`, if any."""
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"estimates holds {np.asarray(rows[i]).tolist()} at observation "
            f"{tables.observations[i]}; {rule}"
        )


def _called_values(function: Any, tables: Tables, obs_transform: Any) -> list:
    if tables.num_states > SLOW_CALLS:
        warnings.warn(
            f"the V estimate is a Python callable asked once per state, {tables.num_states:,} "
            "times here; dice_envs.policies.batched(f) or a table is much faster",
            stacklevel=4,
        )
    if obs_transform is not None:
        return [float(function(row)) for row in _observation_batch(tables, obs_transform)]
    if tables.observation_array.shape[1] == 1:
        return [float(function(obs)) for obs in tables.observations]
    return [float(function(np.array(obs, dtype=np.int64))) for obs in tables.observations]


def _observation_batch(tables: Tables, obs_transform: Any) -> np.ndarray:
    """Every reachable observation as an int64 array, (n,) or (n, d), through `obs_transform`
    (checked as a policy's input is)."""
    batch = tables.observation_array
    return PolicyInput(batch.shape[1] == 1, obs_transform)(batch)


def _critic_values(model: Any, tables: Tables, obs_transform: Any) -> np.ndarray:
    """An SB3 model's critic, `policy.predict_values`, at every reachable observation."""
    import torch

    batch = _observation_batch(tables, obs_transform)
    if obs_transform is None:
        check_space(model, tables.model)
    chunks = []
    with torch.no_grad():
        for lo in range(0, len(batch), PREDICT_BATCH):
            obs, _ = model.policy.obs_to_tensor(batch[lo : lo + PREDICT_BATCH])
            chunks.append(model.policy.predict_values(obs).cpu().numpy().reshape(-1))
    return np.concatenate(chunks) if chunks else np.zeros(0)


def _evaluation(policy, tables, optimum, obs_transform, deterministic) -> Evaluation:
    """The acting policy's exact evaluation on the kept tables (as `baselines.evaluate`)."""
    # Only an SB3 model has a `deterministic` switch; other forms say it by their form.
    flag = deterministic if hasattr(policy, "predict") else True
    return evaluate_on(policy, tables, optimum, obs_transform=obs_transform, deterministic=flag)


def _q_errors(q_rows, actions, evaluation, tables, optimum, gamma) -> ValueErrors:
    start = time.perf_counter()
    if gamma == 1.0:
        q_exact, v_exact = _all_q(optimum, tables), optimum.state_values
    else:
        q_exact, v_exact = _discounted_optimum(tables, optimum.policy, gamma)
    rows = np.arange(tables.num_states)
    estimates = q_rows[rows, actions]
    exact = q_exact[rows, actions]
    changed = ~optimal_action_mask(q_exact, tables.legal)[rows, actions]
    return _result("q", gamma, estimates, exact, estimates - v_exact, actions, changed,
                   evaluation, tables, start)  # fmt: skip


def _v_errors(v_rows, evaluation, tables, gamma) -> ValueErrors:
    start = time.perf_counter()
    if gamma == 1.0:
        exact = evaluation.state_values
    else:
        exact = _discounted_policy_values(tables, evaluation, gamma)
    actions = greedy(_lookahead(tables, v_rows, gamma), tables.legal)
    exact_lookahead = _lookahead(tables, exact, gamma)
    rows = np.arange(tables.num_states)
    changed = ~optimal_action_mask(exact_lookahead, tables.legal)[rows, actions]
    return _result("v", gamma, v_rows, exact, None, actions, changed, evaluation, tables, start)


def _result(kind, gamma, estimates, exact, max_errors, actions, changed, evaluation, tables,
            start) -> ValueErrors:  # fmt: skip
    visits = evaluation.visits
    total = float(visits.sum())

    def weighted(values: np.ndarray) -> float:
        return float(visits @ values / total) if total > 0 else 0.0

    errors = estimates - exact
    return ValueErrors(
        kind=kind,
        gamma=gamma,
        mean_error=weighted(errors),
        mean_abs_error=weighted(np.abs(errors)),
        mean_max_error=None if max_errors is None else weighted(max_errors),
        changed_share=weighted(changed.astype(float)),
        changed_loss=float(evaluation.losses[changed].sum()),
        seconds=time.perf_counter() - start,
        evaluation=evaluation,
        estimates=estimates,
        exact_values=exact,
        errors=errors,
        max_errors=max_errors,
        visits=visits,
        actions=np.asarray(actions, dtype=np.int64),
        changed=changed,
        observations=tables.observation_array,
        observation_nvec=tuple(int(n) for n in tables.model.observation_nvec),
    )


def _lookahead(tables: Tables, values: np.ndarray, gamma: float) -> np.ndarray:
    """r(s, a) + gamma E[values(next state)] for every state and action (an end pays 0)."""
    future = np.column_stack([m @ values for m in tables.transition_matrices])
    return tables.expected_rewards + gamma * future


def _discounted_values(tables: Tables, matrix: sp.csr_matrix, rewards, gamma) -> np.ndarray:
    """v with v = rewards + gamma * matrix @ v (a sparse solve)."""
    if tables.num_states == 0:
        return np.zeros(0)
    return PolicySystem.of_matrix((gamma * matrix).tocsr()).solve(rewards)


def _discounted_policy_values(tables: Tables, evaluation: Evaluation, gamma: float):
    """v_pi under the discount, of the evaluated policy (its probabilities if stochastic)."""
    probs = evaluation.probabilities
    if probs is None:
        matrix, rewards = tables.policy_matrix(evaluation.actions)
        return _discounted_values(tables, matrix, rewards, gamma)
    matrix = sum(sp.diags(probs[:, a]) @ m for a, m in enumerate(tables.transition_matrices))
    rewards = (probs * tables.expected_rewards).sum(axis=1)
    return _discounted_values(tables, sp.csr_matrix(matrix), rewards, gamma)


def _discounted_optimum(tables: Tables, start_policy: np.ndarray, gamma: float):
    """Q* and V* under the discount, by policy iteration from `start_policy` (the
    undiscounted optimum, usually close): exact values of each policy, then its greedy
    improvement, keeping an action unless another beats it by more than the tie
    tolerance, until no state changes (finitely many steps for a discount below 1)."""
    rows = np.arange(tables.num_states)
    actions = np.asarray(start_policy, dtype=np.int64)
    for _ in range(POLICY_ITERATIONS):
        matrix, rewards = tables.policy_matrix(actions)
        values = _discounted_values(tables, matrix, rewards, gamma)
        q = _lookahead(tables, values, gamma)
        keep = optimal_action_mask(q, tables.legal)[rows, actions]
        if keep.all():
            return q, np.where(tables.legal, q, -np.inf).max(axis=1)
        actions = np.where(keep, actions, greedy(q, tables.legal))
    raise RuntimeError(f"policy iteration did not settle in {POLICY_ITERATIONS} steps")

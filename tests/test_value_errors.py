"""Learned values against exact ones (`baselines.value_errors`), on games solved by hand.

D20 with 2 rounds (20 sides, face 1 showing): with one round left, take pays the face f and a
reroll pays nothing, so Q*(1, f) = (f, 0) and V*(1, f) = f; with two rounds at face 1, take pays
1 + 1 = 2 and a reroll pays the mean face, 10.5. The optimum rerolls, then takes: it visits
(2, 1) once and each (1, f) with probability 1/20, 2 visits in all.

SumAvoid with N=3 and a 2-sided die (a sum that hits 3, 6, 9 pays nothing): from the top down
V*(10) = 10, V*(8) = 8, V*(7) = 7, V*(5) = 5, V*(4) = 4; at sum 2 stop pays 2 and a roll
(3 busts, 4 pays 4) 2 too, at sum 1 stop pays 1 and a roll (2, or 3 busts) 1 too: ties; at sum
0 stop pays 0 and a roll (1 or 2) 1.5.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import baselines
from baselines import ValueErrors, value_errors
from dice_envs import make_model
from dice_envs.policies import batched

D20 = ("dice_envs/D20Rounds-v0", {"rounds": 2})
SUM = ("dice_envs/SumAvoid-v0", {"N": 3, "sides": 2})


def d20_q_star() -> np.ndarray:
    """Q* of D20 with 2 rounds over its observation grid (3, 21, 2), by hand."""
    q = np.zeros((3, 21, 2))
    q[2, 1] = [2.0, 10.5]
    for face in range(1, 21):
        q[1, face] = [face, 0.0]
    return q


def sum_q_star() -> np.ndarray:
    """Q* of SumAvoid N=3, sides=2 over its observation grid (13, 2), by hand (stop, roll)."""
    q = np.zeros((13, 2))
    q[0] = [0, 1.5]
    q[1] = [1, 1]
    q[2] = [2, 2]
    q[4] = [4, (5 + 0) / 2]
    q[5] = [5, (0 + 7) / 2]
    q[7] = [7, (8 + 0) / 2]
    q[8] = [8, (0 + 10) / 2]
    q[10] = [10, (11 + 0) / 2]
    return q


def test_q_star_itself_has_no_error():
    for (env_id, kwargs), q in ((D20, d20_q_star()), (SUM, sum_q_star())):
        errors = value_errors(q, env_id, **kwargs)
        assert errors.kind == "q"
        assert np.abs(errors.errors).max() < 1e-12
        assert np.abs(errors.max_errors).max() < 1e-12
        assert errors.mean_error == pytest.approx(0, abs=1e-12)
        assert errors.mean_abs_error == pytest.approx(0, abs=1e-12)
        assert errors.changed_share == 0 and errors.changed_loss == pytest.approx(0, abs=1e-12)
        assert errors.evaluation.gap == pytest.approx(0, abs=1e-12)
    assert errors.by_observation("visits") == pytest.approx(
        {0: 1, 1: 0.5, 2: 0.5, 4: 0, 5: 0, 7: 0, 8: 0, 10: 0}
    )


def test_an_offset_gives_the_known_visit_weighted_error():
    q = d20_q_star()
    q[1, 3, 0] += 0.5  # the greedy action (take) of two states visited 1/20 each
    q[1, 7, 0] += 0.5
    errors = value_errors(q, *D20[:1], **D20[1])
    # (0.5 / 20 + 0.5 / 20) / 2 visits
    assert errors.mean_error == pytest.approx(0.025)
    assert errors.mean_abs_error == pytest.approx(0.025)
    assert errors.mean_max_error == pytest.approx(0.025)
    assert errors.changed_share == 0
    assert errors.by_observation("errors")[(1, 3)] == pytest.approx(0.5)
    assert errors.grid("errors")[1, 7] == pytest.approx(0.5)
    assert np.isnan(errors.grid("errors")[0, 5])  # no reachable state shows it
    # A pessimistic offset is negative.
    q[1, 3, 0] -= 1.5
    assert value_errors(q, D20[0], **D20[1]).mean_error == pytest.approx((-1 + 0.5) / 20 / 2)


def test_the_run_stores_flat_layout_reads_as_the_grid():
    q = d20_q_star()
    q[1, 5, 1] = 6.0
    on_grid = value_errors(q, D20[0], **D20[1])
    flat = value_errors(q.reshape(-1, 2), D20[0], **D20[1])
    for name in ("estimates", "exact_values", "errors", "visits", "actions"):
        np.testing.assert_array_equal(getattr(flat, name), getattr(on_grid, name))


def test_a_flipped_greedy_action_counts_with_its_visit_share_and_lost_gap():
    q = d20_q_star()
    q[1, 5, 1] = 6.0  # reroll now looks best with one round left at face 5 (visited 1/20)
    errors = value_errors(q, D20[0], **D20[1])
    assert errors.by_observation("changed") == {
        key: key == (1, 5) for key in errors.by_observation("changed")
    }
    assert errors.changed_share == pytest.approx(1 / 20 / 2)
    assert errors.changed_loss == pytest.approx(5 / 20)  # (V* - Q*(reroll)) / 20
    assert errors.evaluation.gap == pytest.approx(5 / 20)
    assert errors.by_observation("errors")[(1, 5)] == pytest.approx(6.0)  # 6 - Q*(reroll) = 0
    assert errors.by_observation("max_errors")[(1, 5)] == pytest.approx(1.0)  # 6 - V* = 5

    q = d20_q_star()
    q[2, 1, 0] = 20.0  # take at the start: it then visits (2, 1) and (1, 1) once each
    errors = value_errors(q, D20[0], **D20[1])
    assert errors.visits.sum() == pytest.approx(2)
    assert errors.changed_share == pytest.approx(0.5)
    assert errors.changed_loss == pytest.approx(10.5 - 2)
    assert errors.mean_error == pytest.approx((20 - 2) / 2)
    assert errors.mean_max_error == pytest.approx((20 - 10.5) / 2)


def test_a_tie_is_never_a_change_and_the_learner_breaks_ties_low():
    q = sum_q_star()
    q[1, 1] += 0.25  # roll at sum 1, tied with stop in Q*
    errors = value_errors(q, SUM[0], **SUM[1])
    assert errors.by_observation("actions")[1] == 1
    assert errors.changed_share == 0 and errors.changed_loss == pytest.approx(0, abs=1e-12)
    # It rolls at 0 and 1, stops at 2 (the tie, lowest action): 1, 1/2, 1/2 + 1/4 visits.
    visits = errors.by_observation("visits")
    assert (visits[0], visits[1], visits[2]) == pytest.approx((1, 0.5, 0.75))
    assert errors.mean_error == pytest.approx(0.25 * 0.5 / 2.25)
    # D20 with 3 sides: take at (2, 1) pays 1 + 1, a reroll the mean face 2: a tie.
    q = np.zeros((3, 4, 2))
    q[2, 1] = [2, 2 + 1e-3]
    q[1, 1:] = np.column_stack([np.arange(1, 4), np.zeros(3)])
    errors = value_errors(q, D20[0], rounds=2, sides=3)
    assert errors.by_observation("actions")[(2, 1)] == 1 and errors.changed_share == 0
    # Equal estimates: the lowest action, as the Q-learner picks (stop, then nothing else).
    assert value_errors(np.zeros((13, 2)), SUM[0], **SUM[1]).actions.tolist() == [0] * 8


def test_a_flipped_start_on_sum_avoid():
    q = sum_q_star()
    q[0, 0] = 2.0  # stop at once: Q*(0, stop) = 0, V*(0) = 1.5
    errors = value_errors(q, SUM[0], **SUM[1])
    assert errors.changed_share == 1.0
    assert errors.changed_loss == pytest.approx(1.5) == errors.evaluation.gap
    assert errors.mean_error == pytest.approx(2.0)
    assert errors.mean_max_error == pytest.approx(0.5)


@functools.cache
def _enumerated_optimum(model, gamma: float = 1.0):
    """Q* and the optimal policy's visits of SumAvoid by recursion over `model.transitions`
    (sums only grow), independent of the tables and the solvers."""

    @functools.cache
    def value(state) -> float:
        return max(q_values(state))

    @functools.cache
    def q_values(state) -> tuple[float, ...]:
        return tuple(
            sum(
                p * (r + (0.0 if end else gamma * value(nxt)))
                for p, nxt, r, end in model.transitions(state, action)
            )  # fmt: skip
            for action in model.legal_actions(state)
        )

    visits: dict[int, float] = {}
    mass = {state: p for p, state in model.initial_states()}
    while mass:  # forward, smallest sum first: every sum is reached from smaller ones only
        state = min(mass)
        visits[state] = mass.pop(state)
        action = int(np.argmax(q_values(state)))
        for p, nxt, _, end in model.transitions(state, action):
            if not end:
                mass[nxt] = mass.get(nxt, 0.0) + visits[state] * p
    return q_values, visits


def test_offsets_on_sum_avoid_against_an_independent_enumeration():
    env_id, kwargs = "dice_envs/SumAvoid-v0", {"N": 5, "sides": 6}
    model = make_model(env_id, **kwargs)
    q_values, visits = _enumerated_optimum(model)
    rng = np.random.default_rng(0)
    q = np.zeros(model.observation_nvec + (2,))
    offsets = {}
    for state in visits:
        q[state] = q_values(state)
        best = int(np.argmax(q[state]))
        offsets[state] = rng.uniform(-0.2, 0.2) if visits[state] > 0 else 0.0
        q[state, best] += offsets[state]
        gap = q[state, best] - q[state, 1 - best]
        if gap <= 0:  # a pessimistic offset that would flip the action: none here
            raise AssertionError("test setup: the offset flips an action")
    errors = value_errors(q, env_id, **kwargs)
    total = sum(visits.values())
    expected = sum(visits[s] * offsets[s] for s in visits) / total
    assert errors.mean_error == pytest.approx(expected, abs=1e-12)
    assert errors.mean_abs_error == pytest.approx(
        sum(visits[s] * abs(offsets[s]) for s in visits) / total, abs=1e-12
    )
    shown = errors.by_observation("visits")
    assert {s: shown[s] for s in visits} == pytest.approx(visits)
    assert errors.changed_share == 0


def test_random_tables_lose_the_whole_gap_in_their_changed_states():
    env_id, kwargs = "dice_envs/SumAvoid-v0", {"N": 5, "sides": 6}
    rng = np.random.default_rng(1)
    for _ in range(3):
        errors = value_errors(rng.normal(size=(73, 2)), env_id, **kwargs)
        assert errors.changed_loss == pytest.approx(errors.evaluation.gap, abs=1e-12)
        assert 0 < errors.changed_share <= 1


P_TAKE = 0.3  # a stochastic policy on D20 with 2 rounds: take with probability 0.3


def d20_stochastic() -> tuple[np.ndarray, np.ndarray, dict]:
    """The policy over the grid, its v_pi by hand (NaN where no state is), its visits."""
    probs = np.zeros((3, 21, 2))
    probs[..., 0], probs[..., 1] = P_TAKE, 1 - P_TAKE
    v = np.full((3, 21), np.nan)
    v[1, 1:] = P_TAKE * np.arange(1, 21)  # take the face, or nothing
    v[2, 1] = P_TAKE * (1 + v[1, 1]) + (1 - P_TAKE) * np.mean(v[1, 1:])
    visits = {(1, f): (1 - P_TAKE) / 20 for f in range(1, 21)}
    visits[(2, 1)], visits[(1, 1)] = 1.0, P_TAKE + (1 - P_TAKE) / 20
    return probs, v, visits


def test_a_critic_equal_to_v_pi_of_a_stochastic_policy_has_no_error():
    probs, v, visits = d20_stochastic()
    errors = value_errors(v, D20[0], policy=probs, **D20[1])
    assert errors.kind == "v" and errors.max_errors is None and errors.mean_max_error is None
    assert np.abs(errors.errors).max() < 1e-12
    assert errors.changed_share == 0
    assert errors.by_observation("visits") == pytest.approx(visits)

    # The same values read through every form a V estimate takes.
    def one(obs):
        return v[tuple(obs)]

    forms = [v.reshape(-1), one, batched(lambda obs: v[obs[:, 0], obs[:, 1]])]
    for form in forms:
        again = value_errors(form, D20[0], policy=probs, **D20[1])
        np.testing.assert_allclose(again.estimates, errors.estimates, rtol=0, atol=0)


@pytest.mark.parametrize("shift", [2.5, -0.75])
def test_a_constant_shift_is_the_signed_error(shift):
    probs, v, _ = d20_stochastic()
    errors = value_errors(v + shift, D20[0], policy=probs, **D20[1])
    assert errors.mean_error == pytest.approx(shift)
    assert errors.mean_abs_error == pytest.approx(abs(shift))
    assert errors.changed_share == 0  # a shift changes no lookahead's choice


def test_a_critic_error_that_flips_the_lookahead():
    probs, v, _ = d20_stochastic()
    v[1, 1] = 100.0  # taking at (2, 1) now looks best: 1 + 100 against a reroll's ~8.4
    errors = value_errors(v, D20[0], policy=probs, **D20[1])
    assert errors.by_observation("actions")[(2, 1)] == 0
    assert errors.by_observation("changed")[(2, 1)] and errors.changed.sum() == 1
    assert errors.changed_share == pytest.approx(1 / 2)
    # What the policy loses at (2, 1): V* - (0.3 Q*(take) + 0.7 Q*(reroll)).
    assert errors.changed_loss == pytest.approx(10.5 - (P_TAKE * 2 + (1 - P_TAKE) * 10.5))


def test_the_discounted_exact_values():
    gamma = 0.5
    errors = value_errors(d20_q_star(), D20[0], gamma=gamma, **D20[1])
    exact = errors.by_observation("exact_values")
    # Q*_gamma(2, 1): take 1 + 0.5 * 1, reroll 0.5 * 10.5; the table's greedy action rerolls.
    assert exact[(2, 1)] == pytest.approx(gamma * 10.5)
    assert exact[(1, 4)] == pytest.approx(4)
    assert errors.mean_error == pytest.approx((10.5 - 5.25) / 2)
    probs, v, _ = d20_stochastic()
    errors = value_errors(v, D20[0], policy=probs, gamma=gamma, **D20[1])
    start = P_TAKE * (1 + gamma * P_TAKE) + (1 - P_TAKE) * gamma * np.nanmean(v[1])
    assert errors.by_observation("exact_values")[(2, 1)] == pytest.approx(start)


def test_discounted_q_star_against_an_independent_recursion():
    env_id, kwargs = "dice_envs/SumAvoid-v0", {"N": 5, "sides": 6}
    model = make_model(env_id, **kwargs)
    for gamma in (0.9, 0.5):
        q_values, _ = _enumerated_optimum(model, gamma)
        q = np.zeros(model.observation_nvec + (2,))
        tables, _ = baselines.enumerated(env_id, **kwargs)
        for state in tables.states:
            q[state] = q_values(state)
        errors = value_errors(q, env_id, gamma=gamma, **kwargs)
        assert np.abs(errors.errors).max() < 1e-12 and errors.changed_share == 0


def test_discounted_q_star_of_a_cyclic_game_solves_its_bellman_equation():
    env_id, kwargs = "dice_envs/Pig-v0", {"goal": 10}
    tables, _ = baselines.enumerated(env_id, **kwargs)
    assert not tables.acyclic
    gamma = 0.9
    zero = np.zeros(tuple(tables.model.observation_nvec) + (2,))
    errors = value_errors(zero, env_id, gamma=gamma, **kwargs)
    q = np.zeros((tables.num_states, 2))
    q[np.arange(tables.num_states), errors.actions] = errors.exact_values
    # Value iteration by hand from V = 0, to a fixed point.
    values = np.zeros(tables.num_states)
    for _ in range(2000):
        future = np.column_stack([m @ values for m in tables.transition_matrices])
        q_hand = tables.expected_rewards + gamma * future
        values = np.where(tables.legal, q_hand, -np.inf).max(axis=1)
    rows = np.arange(tables.num_states)
    np.testing.assert_allclose(errors.exact_values, q_hand[rows, errors.actions], atol=1e-10)
    np.testing.assert_allclose(errors.estimates - errors.max_errors, values, atol=1e-10)


def test_an_sb3_critic_is_read_and_its_own_distribution_weights_it():
    gym = pytest.importorskip("gymnasium")
    ppo = pytest.importorskip("stable_baselines3").PPO
    model = ppo("MlpPolicy", gym.make(D20[0], **D20[1]), n_steps=64, seed=0, device="cpu")
    errors = value_errors(model, D20[0], **D20[1])
    import torch

    obs, _ = model.policy.obs_to_tensor(errors.observations)
    with torch.no_grad():
        direct = model.policy.predict_values(obs).numpy().reshape(-1)
    np.testing.assert_allclose(errors.estimates, direct, rtol=1e-6)
    sampled = baselines.evaluate(model, D20[0], deterministic=False, **D20[1])
    np.testing.assert_allclose(errors.exact_values, sampled.state_values)
    np.testing.assert_allclose(errors.visits, sampled.visits)


def test_bad_arguments_are_refused_naming_them():
    env_id, kwargs = D20
    with pytest.raises(ValueError, match=r"estimates has shape \(3, 20, 2\)"):
        value_errors(np.zeros((3, 20, 2)), env_id, **kwargs)
    with pytest.raises(ValueError, match=r"Q table here has shape \(3, 21, 2\) or \(63, 2\)"):
        value_errors(np.zeros((62, 2)), env_id, **kwargs)
    probs, v, _ = d20_stochastic()
    v[1, 4] = np.nan
    with pytest.raises(ValueError, match=r"estimates holds nan at observation \(1, 4\)"):
        value_errors(v, env_id, policy=probs, **kwargs)
    q = d20_q_star()
    q[1, 9, 1] = np.inf
    with pytest.raises(ValueError, match=r"estimates holds .* at observation \(1, 9\)"):
        value_errors(q, env_id, **kwargs)
    for gamma in (0, 0.0, -0.5, 1.5, float("nan"), True, "1"):
        with pytest.raises(ValueError, match="gamma must be"):
            value_errors(d20_q_star(), env_id, gamma=gamma, **kwargs)
    with pytest.raises(ValueError, match="policy is needed for a V estimate"):
        value_errors(np.zeros((3, 21)), env_id, **kwargs)
    with pytest.raises(ValueError, match="policy must be None for a Q table"):
        value_errors(d20_q_star(), env_id, policy=probs, **kwargs)
    with pytest.raises(ValueError, match="name must be one of"):
        value_errors(d20_q_star(), env_id, **kwargs).grid("losses")
    critic = value_errors(d20_stochastic()[1], env_id, policy=probs, **kwargs)
    with pytest.raises(ValueError, match="a V estimate has no max_errors"):
        critic.grid("max_errors")


def test_the_result_is_exported():
    assert baselines.value_errors is value_errors and baselines.ValueErrors is ValueErrors

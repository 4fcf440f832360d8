"""Generic solvers and exact evaluation: hand-solved cases, two methods agreeing, Monte Carlo."""

import gymnasium as gym
import numpy as np
import pytest
from conftest import CASES, case_id, with_tables

import baselines
from baselines.solvers import (
    backward_induction,
    bellman_residual,
    evaluate_backward,
    evaluate_linear,
    q_from_values,
    solve_mdp,
)
from dice_envs import game
from dice_envs.games.base import Transition
from dice_envs.games.sum_avoid import stop_at
from dice_envs.policies import named_policy
from dice_envs.tables import build_tables


class DoubleOrNothing:
    """A cyclic toy game: take 1 and leave, or flip a coin: heads pays 3 and ends, tails repeats.

    Hand-solved: V = max(1, V/2 + 3/2), so V = 3 and flipping is optimal.
    """

    num_actions = 2
    action_names = ("take", "flip")
    observation_nvec = (1,)

    def initial_states(self):
        return [(1.0, 0)]

    def legal_actions(self, state):
        return (0, 1)

    def transitions(self, state, action):
        if action == 0:
            return [Transition(1.0, 0, 1.0, True)]
        return [Transition(0.5, 0, 0.0, False), Transition(0.5, 0, 3.0, True)]

    def observation(self, state):
        return state


def test_cyclic_game_by_value_iteration():
    tables = build_tables(DoubleOrNothing())
    assert not tables.acyclic
    with pytest.raises(ValueError, match="acyclic"):
        backward_induction(tables)
    solution = solve_mdp(tables, tol=1e-13)
    assert solution.method == "value_iteration"
    assert solution.value == pytest.approx(3.0, abs=1e-12)
    assert solution.action(0) == 1
    assert solution.bellman_residual <= 1e-12
    assert evaluate_linear(tables, np.array([1]))[0] == pytest.approx(3.0, abs=1e-12)
    assert evaluate_linear(tables, np.array([0]))[0] == pytest.approx(1.0, abs=1e-12)


def policy_iteration(tables):
    """Howard's policy iteration with exact evaluation (the second method for a cyclic game
    without a specialised solver); every policy of these games ends with probability 1."""
    actions = np.argmax(tables.legal, axis=1)  # the first legal action everywhere
    for _ in range(1000):
        values = evaluate_linear(tables, actions)
        q = q_from_values(tables, values)
        best = np.where(tables.legal, q, -np.inf)
        current = best[np.arange(len(actions)), actions]
        # Switch only on a strict gain, so the loop can not cycle between tied actions.
        improve = best.max(axis=1) > current + 1e-12
        if not improve.any():
            return values, actions
        actions = np.where(improve, best.argmax(axis=1), actions)
    raise AssertionError("policy iteration did not converge in 1000 steps")


@pytest.mark.parametrize("case", with_tables(CASES), ids=case_id)
def test_two_solvers_and_the_linear_solve_agree(case):
    """Backward induction (acyclic), or the specialised solver or policy iteration (cyclic),
    against value iteration; the optimal policy's exact evaluation against the optimal values."""
    env_id, kwargs = case
    tables = baselines.tabulate(env_id, **kwargs)
    iterated = solve_mdp(tables, "value_iteration", tol=1e-13)
    if tables.acyclic:
        other = solve_mdp(tables, "backward")
    elif game(env_id).solver is None:
        values, actions = policy_iteration(tables)
        np.testing.assert_allclose(values, iterated.state_values, atol=1e-9, rtol=0)
        other = iterated
    else:
        other = baselines.on_states(baselines.solve(env_id, method="specialised", **kwargs), tables)
    np.testing.assert_allclose(other.state_values, iterated.state_values, atol=1e-9, rtol=0)
    assert other.bellman_residual <= 1e-9
    assert iterated.bellman_residual <= 1e-9
    assert bellman_residual(tables, other.state_values) <= 1e-9
    linear = evaluate_linear(tables, other.policy)
    np.testing.assert_allclose(linear, other.state_values, atol=1e-9, rtol=0)
    if tables.acyclic:
        np.testing.assert_allclose(evaluate_backward(tables, other.policy), linear, atol=1e-9)
    score = baselines.evaluate(other, env_id, **kwargs)
    assert score.gap == pytest.approx(0.0, abs=1e-9) and score.agreement == pytest.approx(1.0)


def monte_carlo(env_id, kwargs, policy, episodes, seed):
    env = gym.make(env_id, **kwargs).unwrapped
    returns = np.empty(episodes)
    obs, _ = env.reset(seed=seed)
    for episode in range(episodes):
        total, done = 0.0, False
        while not done:
            obs, reward, done, _, _ = env.step(policy(obs))
            total += reward
        returns[episode] = total
        obs, _ = env.reset()
    return returns.mean(), returns.std(ddof=1) / np.sqrt(episodes)


@pytest.mark.parametrize(
    "env_id, kwargs, name",
    [
        ("dice_envs/SumAvoid-v0", {}, "stop-at-20"),
        ("dice_envs/SumAvoid-v0", {"N": 7, "sides": 4}, "stop-at-12"),
        ("dice_envs/D20Rounds-v0", {"rounds": 15}, "take-above-12"),
        ("dice_envs/D20Rounds-v0", {"rounds": 15}, "roll-once"),
    ],
)
def test_exact_evaluation_agrees_with_seeded_monte_carlo(env_id, kwargs, name):
    policy = named_policy(env_id, name, **kwargs)
    exact = baselines.evaluate(policy, env_id, **kwargs).value
    mean, stderr = monte_carlo(env_id, kwargs, policy, episodes=20_000, seed=7)
    assert abs(mean - exact) <= 4 * stderr, (mean, stderr, exact)


def test_policy_forms_give_the_same_value():
    env_id, kwargs = "dice_envs/D20Rounds-v0", {"rounds": 8, "sides": 6}
    rule = named_policy(env_id, "take-above-3", **kwargs)
    table = np.zeros((9, 7), dtype=np.int64)
    table[:, :4] = 1
    mapping = {(r, f): int(f <= 3) for r in range(1, 9) for f in range(1, 7)}

    class Predictor:  # the shape of SB3's predict: a batch in, (actions, state) out
        def predict(self, observations, deterministic=True):
            return (observations[:, 1] <= 3).astype(np.int64), None

    values = [baselines.evaluate(p, env_id, **kwargs).value for p in (rule, table, mapping)]
    values.append(baselines.evaluate(Predictor(), env_id, **kwargs).value)
    assert max(values) - min(values) <= 1e-12


def test_stable_baselines3_model_is_evaluated_like_its_predictions():
    from stable_baselines3 import PPO

    env_id, kwargs = "dice_envs/SumAvoid-v0", {"N": 5, "sides": 3}
    model = PPO("MlpPolicy", gym.make(env_id, **kwargs), n_steps=64, batch_size=32, seed=0)
    by_model = baselines.evaluate(model, env_id, **kwargs)
    by_call = baselines.evaluate(
        lambda obs: int(model.predict(obs, deterministic=True)[0]), env_id, **kwargs
    )
    assert by_model.value == pytest.approx(by_call.value, abs=1e-12)
    assert 0 <= by_model.agreement <= 1 and by_model.gap >= -1e-9


def test_evaluation_fields():
    score = baselines.evaluate(stop_at(20), "dice_envs/SumAvoid-v0")
    assert score.gap == pytest.approx(score.optimal_value - score.value)
    assert score.relative_gap == pytest.approx(score.gap / score.optimal_value)
    assert 0 < score.agreement < 1
    assert set(score.as_dict()) >= {"value", "optimal_value", "gap", "relative_gap"}


@pytest.mark.parametrize("bad", [lambda s: 2, lambda s: -1, lambda s: "roll", lambda s: 0.5])
def test_policy_with_an_action_outside_the_space_is_refused(bad):
    with pytest.raises(ValueError, match="action"):
        baselines.evaluate(bad, "dice_envs/SumAvoid-v0")


def test_not_a_policy():
    with pytest.raises(ValueError, match="policy"):
        baselines.evaluate(42, "dice_envs/SumAvoid-v0")


def test_solve_rejects_unknown_method():
    with pytest.raises(ValueError, match="method"):
        baselines.solve("dice_envs/SumAvoid-v0", method="magic")
    with pytest.raises(ValueError, match="specialised"):
        baselines.solve("dice_envs/SumAvoid-v0", method="specialised")


def test_evaluate_takes_a_heuristic_by_name_and_an_obs_transform():
    by_name = baselines.evaluate("stop-at-25", "dice_envs/SumAvoid-v0")
    assert by_name.value == baselines.evaluate(stop_at(25), "dice_envs/SumAvoid-v0").value
    shifted = baselines.evaluate(
        lambda s: int(s < 26), "dice_envs/SumAvoid-v0", obs_transform=lambda obs: obs + 1
    )
    assert shifted.value == by_name.value
    with pytest.raises(ValueError, match="stop-at-K"):
        baselines.evaluate("stop-at-lots", "dice_envs/SumAvoid-v0")


def test_a_solution_is_evaluated_by_its_own_actions():
    best = baselines.solve("dice_envs/Pig-v0", goal=20)
    score = baselines.evaluate(best, "dice_envs/Pig-v0", goal=20)
    assert score.gap == pytest.approx(0.0, abs=1e-12) and score.agreement == pytest.approx(1.0)
    assert score.value == pytest.approx(best.value, abs=1e-12)

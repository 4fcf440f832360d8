"""Stochastic policies scored exactly, and where a policy loses its gap."""

import gymnasium as gym
import numpy as np
import pytest
from conftest import with_tables

import baselines
from baselines.evaluation import score_actions, score_probabilities
from dice_envs.registration import GAMES

CASES = [(env_id, game.examples[0]) for env_id, game in GAMES.items()]


def _random_policies(tables, seed=0):
    """A random legal deterministic policy and a random stochastic one (every action, legal or
    not, with positive probability: illegal ones play as the rules say)."""
    rng = np.random.default_rng(seed)
    scores = np.where(tables.legal, rng.random(tables.legal.shape), -1.0)
    actions = scores.argmax(axis=1)
    probs = rng.random(tables.legal.shape) + 0.05
    return actions, probs / probs.sum(axis=1, keepdims=True)


@pytest.mark.parametrize(
    ("env_id", "kwargs"), with_tables(CASES, spread=True), ids=[c[0] for c in CASES]
)
def test_the_losses_sum_to_the_gap_and_one_hot_is_deterministic(env_id, kwargs):
    tables, optimum = baselines.enumerated(env_id, **kwargs)
    actions, probs = _random_policies(tables)
    for evaluation in (
        score_actions(optimum.policy, tables, optimum),
        score_actions(actions, tables, optimum),
        score_probabilities(probs, tables, optimum),
    ):
        assert evaluation.losses.sum() == pytest.approx(evaluation.gap, abs=1e-9)
        assert evaluation.losses.min() >= -1e-9  # nothing is gained anywhere over the optimum
    one_hot = np.eye(tables.num_actions)[actions]
    stochastic, deterministic = (
        score_probabilities(one_hot, tables, optimum),
        score_actions(actions, tables, optimum),
    )
    assert stochastic.value == pytest.approx(deterministic.value, abs=1e-12)
    assert stochastic.agreement == pytest.approx(deterministic.agreement, abs=1e-12)
    np.testing.assert_allclose(stochastic.losses, deterministic.losses, atol=1e-12)
    np.testing.assert_allclose(stochastic.visits, deterministic.visits, atol=1e-9)


def test_the_optimum_loses_nothing_anywhere():
    tables, optimum = baselines.enumerated("dice_envs/Pig-v0", goal=20)
    evaluation = score_actions(optimum.policy, tables, optimum)
    assert np.abs(evaluation.losses).max() < 1e-12 and abs(evaluation.gap) < 1e-12


def test_a_stochastic_policy_matches_seeded_monte_carlo():
    """Sum-avoid with a policy that rolls with probability 0.9 below 20 and 0.2 above."""
    env_id, kwargs = "dice_envs/SumAvoid-v0", {"N": 10}

    def rolls(obs):
        p = 0.9 if obs < 20 else 0.2
        return np.array([1.0 - p, p])

    exact = baselines.evaluate(rolls, env_id, **kwargs)
    assert exact.probabilities is not None
    env = gym.make(env_id, **kwargs)
    rng = np.random.default_rng(1)
    episodes, returns = 20_000, []
    obs, _ = env.reset(seed=2)
    for _ in range(episodes):
        total, done = 0.0, False
        while not done:
            action = int(rng.random() < rolls(obs)[1])
            obs, reward, terminated, truncated, _ = env.step(action)
            total += reward
            done = terminated or truncated
        returns.append(total)
        obs, _ = env.reset()
    returns = np.array(returns)
    stderr = returns.std(ddof=1) / np.sqrt(episodes)
    assert abs(returns.mean() - exact.value) < 4 * stderr
    # Neither of the two deterministic rules it mixes scores what it scores.
    for threshold in (20,):
        rule = baselines.evaluate(lambda s, t=threshold: int(s < t), env_id, **kwargs)
        assert abs(rule.value - exact.value) > 10 * stderr


def test_probability_tables_and_checks():
    goal = 20
    grid = (goal + 1, goal + 1, goal)
    k = np.indices(grid)[2]
    hold_at_12 = np.eye(2)[(k < 12).astype(int)]
    deterministic = baselines.evaluate((k < 12).astype(int), "dice_envs/Pig-v0", goal=goal)
    stochastic = baselines.evaluate(hold_at_12, "dice_envs/Pig-v0", goal=goal)
    assert stochastic.value == pytest.approx(deterministic.value, abs=1e-12)
    mixed = baselines.evaluate(0.5 * hold_at_12 + 0.25, "dice_envs/Pig-v0", goal=goal)
    assert mixed.value < deterministic.value and mixed.probabilities is not None
    with pytest.raises(ValueError, match="must sum to 1 .* and be >= 0"):
        baselines.evaluate(hold_at_12 * 0.9, "dice_envs/Pig-v0", goal=goal)
    with pytest.raises(ValueError, match="must hold floats"):
        baselines.evaluate(hold_at_12.astype(int), "dice_envs/Pig-v0", goal=goal)
    with pytest.raises(ValueError, match="deterministic=False is for SB3 models"):
        baselines.evaluate(lambda obs: 1, "dice_envs/Pig-v0", goal=goal, deterministic=False)


@pytest.mark.parametrize("algorithm", ["PPO", "MaskablePPO"])
def test_an_sb3_model_is_scored_by_its_action_distribution(algorithm):
    import torch

    if algorithm == "PPO":
        from stable_baselines3 import PPO as cls
    else:
        from sb3_contrib import MaskablePPO as cls

    env = gym.make("dice_envs/Pig-v0", goal=10)
    model = cls("MlpPolicy", env, seed=0, device="cpu")
    greedy = baselines.evaluate(model, "dice_envs/Pig-v0", goal=10)
    sampled = baselines.evaluate(model, "dice_envs/Pig-v0", goal=10, deterministic=False)
    assert greedy.probabilities is None and sampled.probabilities is not None
    assert sampled.value != greedy.value
    # The probabilities are those SB3 gives the actions it samples (evaluate_actions).
    tables, _ = baselines.enumerated("dice_envs/Pig-v0", goal=10)
    obs, _ = model.policy.obs_to_tensor(tables.observation_array)
    with torch.no_grad():
        for action in range(2):
            chosen = torch.full((tables.num_states,), action)
            extra = {"action_masks": tables.legal} if algorithm == "MaskablePPO" else {}
            _, log_prob, _ = model.policy.evaluate_actions(obs, chosen, **extra)
            np.testing.assert_allclose(
                sampled.probabilities[:, action], log_prob.exp().numpy(), atol=1e-6
            )

"""Policies that do not fit the game are refused with a message naming the problem; models
trained through observation wrappers are evaluated with `obs_transform`; short reprs."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

import baselines
from baselines.evaluation import evaluate_on

SUM_AVOID, SUM_KWARGS = "dice_envs/SumAvoid-v0", {"N": 5, "sides": 3}  # observations Discrete(28)
D20, D20_KWARGS = "dice_envs/D20Rounds-v0", {"rounds": 4, "sides": 6}  # MultiDiscrete([5 7])


def stop_at(threshold):
    """Sum-avoid: roll (1) until the sum is at least `threshold`, then stop (0)."""
    return lambda total: 0 if int(total) >= threshold else 1


def take_above_3(obs):
    """D20 rounds: take (0) a face above 3, else reroll (1)."""
    return int(obs[1] <= 3)


class FakeModel:
    """The shape of an SB3 model: `predict` on a batch, and the space it was trained on."""

    def __init__(self, observation_space, rule):
        self.observation_space = observation_space
        self.rule = rule

    def predict(self, observations, deterministic=True):
        return np.array([self.rule(obs) for obs in observations], dtype=np.int64), None


def test_table_of_the_wrong_shape_names_the_shape_the_game_needs():
    with pytest.raises(
        ValueError, match=r"shape \(28,\) .* for dice_envs/SumAvoid-v0 \(N=5, .*got \(30,\)"
    ):
        baselines.evaluate(np.zeros(30, dtype=np.int64), SUM_AVOID, **SUM_KWARGS)
    with pytest.raises(
        ValueError, match=r"shape \(5, 7\) .* for dice_envs/D20Rounds-v0 \(.*got \(4, 6\)"
    ):
        baselines.evaluate(np.zeros((4, 6), dtype=np.int64), D20, **D20_KWARGS)


def test_float_table_of_whole_numbers_is_a_table_of_actions():
    table = np.zeros((5, 7))
    table[:, :4] = 1.0  # reroll a face of 3 or less
    assert baselines.evaluate(table, D20, **D20_KWARGS).value == pytest.approx(
        baselines.evaluate(take_above_3, D20, **D20_KWARGS).value, abs=1e-12
    )
    table[2, 5] = 0.5
    with pytest.raises(ValueError, match=r"answered 0\.5 for observation \(2, 5\).*whole numbers"):
        baselines.evaluate(table, D20, **D20_KWARGS)


def test_mapping_missing_observations_says_how_many_and_which():
    mapping = {(r, f): int(f <= 3) for r in range(2, 5) for f in range(1, 7)}  # no round 1
    tables, _ = baselines.enumerated(D20, **D20_KWARGS)
    assert tables.num_states == 19  # rounds 4 (start face 1 only), 3, 2, 1 with 6 faces each
    with pytest.raises(
        ValueError,
        match=r"no action for 6 of the 19 observations asked, .*"
        r"\(1, 1\), \(1, 2\), \(1, 3\), \(1, 4\), \(1, 5\), \.\.\.",
    ):
        baselines.evaluate(mapping, D20, **D20_KWARGS)


def test_model_trained_on_another_observation_space_is_refused():
    small = FakeModel(spaces.Discrete(20), lambda s: int(s < 6))
    with pytest.raises(
        ValueError,
        match=r"trained on observations Discrete\(20\) but SumAvoid\(N=5, sides=3, max_sum=24\) "
        r"has Discrete\(28\); pass obs_transform=",
    ):
        baselines.evaluate(small, SUM_AVOID, **SUM_KWARGS)
    other_dice = FakeModel(spaces.MultiDiscrete([5, 21]), lambda obs: int(obs[1] <= 3))
    with pytest.raises(
        ValueError, match=r"MultiDiscrete\(\[ 5 21\]\) but .* has MultiDiscrete\(\[5 7\]\)"
    ):
        baselines.evaluate(other_dice, D20, **D20_KWARGS)


def test_stable_baselines3_model_on_another_size_of_the_game_is_refused():
    from stable_baselines3 import PPO

    model = PPO("MlpPolicy", gym.make(SUM_AVOID, **SUM_KWARGS), n_steps=64, batch_size=32, seed=0)
    with pytest.raises(
        ValueError,
        match=r"trained on observations Discrete\(28\) but SumAvoid\(N=6, .* has Discrete\(31\)",
    ):
        baselines.evaluate(model, SUM_AVOID, N=6, sides=3)


def test_obs_transform_feeds_the_policy_the_wrapped_observations():
    tables, optimum = baselines.enumerated(SUM_AVOID, **SUM_KWARGS)
    plain = baselines.evaluate(stop_at(6), SUM_AVOID, **SUM_KWARGS).value

    def shifted(obs):  # a policy that learnt on observations shifted by +1
        return stop_at(6)(obs - 1)

    by_call = evaluate_on(shifted, tables, optimum, obs_transform=lambda o: o + 1)
    assert by_call.value == pytest.approx(plain, abs=1e-12)
    # A model of the wrapped space passes with obs_transform and its predict sees the rows.
    model = FakeModel(spaces.Discrete(29), shifted)
    by_model = evaluate_on(model, tables, optimum, obs_transform=lambda o: o + 1)
    assert by_model.value == pytest.approx(plain, abs=1e-12)
    with pytest.raises(ValueError, match=r"Discrete\(29\) but .* has Discrete\(28\)"):
        evaluate_on(model, tables, optimum)


def test_obs_transform_with_tuple_observations_gets_the_whole_batch():
    tables, optimum = baselines.enumerated(D20, **D20_KWARGS)
    scale = np.array([4.0, 6.0])
    seen = []

    def normalised(batch):  # the batch of every reachable observation, (n, 2) int64
        seen.append((batch.shape, batch.dtype))
        return batch / scale

    model = FakeModel(spaces.Box(0.0, 1.0, (2,)), lambda obs: int(obs[1] * 6 <= 3))
    score = evaluate_on(model, tables, optimum, obs_transform=normalised)
    assert seen == [((19, 2), np.dtype(np.int64))]
    assert score.value == pytest.approx(baselines.evaluate(take_above_3, D20, **D20_KWARGS).value)
    with pytest.raises(ValueError, match=r"trained on observations Box\(0\.0, 1\.0, \(2,\)"):
        evaluate_on(model, tables, optimum)


def test_obs_transform_misuse_is_named():
    tables, optimum = baselines.enumerated(SUM_AVOID, **SUM_KWARGS)
    with pytest.raises(ValueError, match=r"one row per observation.*\(21,\) into shape \(1,\)"):
        evaluate_on(stop_at(6), tables, optimum, obs_transform=lambda o: o[:1])
    with pytest.raises(ValueError, match="obs_transform is for models and callables"):
        evaluate_on(np.zeros(28, dtype=np.int64), tables, optimum, obs_transform=lambda o: o)


def test_model_returning_the_wrong_number_of_actions_is_refused():
    class TwoEach:
        def predict(self, observations, deterministic=True):
            return np.zeros((len(observations), 2), dtype=np.int64), None

    with pytest.raises(ValueError, match=r"answer \(21,\) actions .* got shape \(42,\)"):
        baselines.evaluate(TwoEach(), SUM_AVOID, **SUM_KWARGS)


def test_a_name_is_a_policy_form_like_any_other():
    tables, _ = baselines.enumerated(SUM_AVOID, **SUM_KWARGS)
    np.testing.assert_array_equal(
        baselines.policy_actions("stop-at-6", tables), baselines.policy_actions(stop_at(6), tables)
    )
    with pytest.raises(
        ValueError, match=r"policy for dice_envs/SumAvoid-v0 \(N=5, .* must be one of stop-at-K"
    ):
        baselines.policy_actions("hold-at-6", tables)


def test_reprs_are_one_short_line():
    score = baselines.evaluate(stop_at(6), SUM_AVOID, **SUM_KWARGS)
    text = repr(score)
    assert len(text) < 200 and "\n" not in text
    assert text.startswith(f"Evaluation(value={score.value:.6g}, ")
    assert f"optimal_value={score.optimal_value:.6g}" in text and "agreement=" in text
    for solution, method in [
        (baselines.solve(D20), "specialised"),  # 1981 reachable states
        (baselines.solve(SUM_AVOID, method="backward", **SUM_KWARGS), "backward"),
    ]:
        states = solution.num_states  # measured on the tables when first read
        text = repr(solution)
        assert len(text) < 200 and "\n" not in text and "array" not in text
        assert text.startswith(f"Solution(value={solution.value:.6g}, method='{method}', ")
        assert f"states={states}," in text and "bellman_residual=" in text
    assert "states=not counted" in repr(baselines.solve(D20))  # a repr builds no tables

"""Every evaluation point of a run holds the learner's own value estimates against the exact
ones: a Q-learner's table against Q*, a PPO critic against the exact value of the policy it
plays, in the game's reward units whatever `reward_scale` the training used."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from training_helpers import CONFIGS, small, tiny_ppo

import baselines
from training.config import load_config
from training.train import run


def test_a_q_learning_curve_holds_its_tables_value_errors(tmp_path):
    config = small(load_config(CONFIGS / "sum_avoid" / "qlearning.yaml"), 20_000, 10_000)
    result = run(config, 0, tmp_path)
    q_table = np.load(Path(result["run_dir"]) / "policy_q.npy")
    exact = baselines.value_errors(
        q_table, config["env_id"], gamma=config["hyperparams"]["gamma"], **config["env_kwargs"]
    )
    assert result["value_error"] == pytest.approx(exact.mean_error, abs=1e-12)
    assert result["value_abs_error"] == pytest.approx(exact.mean_abs_error, abs=1e-12)
    assert result["value_changed_share"] == pytest.approx(exact.changed_share, abs=1e-12)
    assert exact.mean_abs_error > 0  # 20,000 steps leave errors to measure


@pytest.mark.parametrize("reward_scale", [1.0, 0.05])
def test_a_ppo_curve_holds_its_critics_errors_in_the_games_units(tmp_path, reward_scale):
    """The critic learns scaled returns; its errors are read in the game's units: a critic
    trained on rewards times 0.05 is divided by 0.05 before it meets v_pi."""
    config = tiny_ppo("sum_avoid", timesteps=512)
    config["hyperparams"]["reward_scale"] = reward_scale
    result = run(config, 0, tmp_path)
    from stable_baselines3 import PPO

    model = PPO.load(f"{result['run_dir']}/policy.zip", device="cpu")
    env_id, kwargs, gamma = config["env_id"], config["env_kwargs"], model.gamma
    raw = baselines.value_errors(model, env_id, gamma=gamma, **kwargs)  # in training units
    unscaled = np.nan_to_num(raw.grid("estimates")) / reward_scale  # unreached cells: unread
    critic = baselines.value_errors(unscaled, env_id, policy=model, gamma=gamma, **kwargs)
    assert result["value_error"] == pytest.approx(critic.mean_error, rel=1e-5)
    assert result["value_abs_error"] == pytest.approx(critic.mean_abs_error, rel=1e-5)
    assert critic.mean_abs_error > 0

"""The exact gap inside an SB3 training loop: logged through SB3's logger, and a stop rule."""

import csv
import importlib
from pathlib import Path

import gymnasium as gym
import pytest
import yaml
from stable_baselines3 import PPO
from stable_baselines3.common.logger import configure

import baselines
from baselines.sb3 import ExactGapCallback

GAME = ("dice_envs/SumAvoid-v0", {"N": 5})


def _model(tmp_path):
    env_id, kwargs = GAME
    model = PPO(
        "MlpPolicy", gym.make(env_id, **kwargs), n_steps=64, batch_size=64, n_epochs=1,
        seed=0, device="cpu",
    )  # fmt: skip
    model.set_logger(configure(str(tmp_path), ["csv"]))
    return model


def test_the_callback_logs_the_exact_gap_through_sb3s_logger(tmp_path):
    env_id, kwargs = GAME
    model = _model(tmp_path)
    callback = ExactGapCallback(env_id, eval_freq=64, **kwargs)
    model.learn(256, callback=callback)
    assert [steps for steps, _ in callback.evaluations] == [64, 128, 192, 256]
    rows = list(csv.DictReader((tmp_path / "progress.csv").open()))
    logged = [float(row["exact/gap"]) for row in rows if row.get("exact/gap")]
    # SB3 dumps its logger once per rollout: each dump holds that rollout's evaluation.
    assert logged == pytest.approx([score.gap for _, score in callback.evaluations])
    # It scores the model as it is at that moment (here, after the last update).
    callback.evaluate_now()
    assert callback.evaluations[-1][1].value == baselines.evaluate(model, env_id, **kwargs).value
    assert {"exact/value", "exact/relative_gap", "exact/agreement"} <= set(rows[0])


def test_training_stops_at_the_target_gap(tmp_path):
    env_id, kwargs = GAME
    model = _model(tmp_path)
    # Every policy's relative gap here is at most 1 (returns are >= 0): it stops at once.
    callback = ExactGapCallback(env_id, eval_freq=64, stop_at_relative_gap=1.0, **kwargs)
    model.learn(10_000, callback=callback)
    assert model.num_timesteps == 64 and len(callback.evaluations) == 1
    sampled = ExactGapCallback(env_id, eval_freq=64, deterministic=False, **kwargs)
    sampled.init_callback(model)
    sampled.evaluate_now()
    assert sampled.evaluations[0][1].probabilities is not None


def test_the_callback_holds_the_critic_against_its_policys_exact_value(tmp_path):
    """PPO's critic, at every evaluation, against the exact value of the policy it acts with
    (its action distribution) under the model's gamma: the same numbers as value_errors on
    the model, logged as exact/critic_*; off with critic_errors=False."""
    env_id, kwargs = GAME
    model = _model(tmp_path)
    callback = ExactGapCallback(env_id, eval_freq=64, **kwargs)
    model.learn(128, callback=callback)
    assert [steps for steps, _ in callback.critic_evaluations] == [64, 128]
    rows = list(csv.DictReader((tmp_path / "progress.csv").open()))
    logged = [float(row["exact/critic_error"]) for row in rows if row.get("exact/critic_error")]
    assert logged == pytest.approx([e.mean_error for _, e in callback.critic_evaluations])
    callback.evaluate_now()  # the model as it is now, after the last update
    now = baselines.value_errors(model, env_id, gamma=model.gamma, **kwargs)
    assert callback.critic_evaluations[-1][1].mean_abs_error == pytest.approx(now.mean_abs_error)
    assert now.mean_abs_error > 0 and now.gamma == model.gamma == 0.99
    quiet = ExactGapCallback(env_id, eval_freq=64, critic_errors=False, **kwargs)
    quiet.init_callback(model)
    quiet.evaluate_now()
    assert quiet.critic_evaluations == [] and len(quiet.evaluations) == 1


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="eval_freq must be an integer >= 1"):
        ExactGapCallback("dice_envs/SumAvoid-v0", eval_freq=0)
    with pytest.raises(ValueError, match="stop_at_gap must be a number >= 0"):
        ExactGapCallback("dice_envs/SumAvoid-v0", stop_at_gap=-1.0)
    with pytest.raises(ValueError, match="critic_errors must be True or False"):
        ExactGapCallback("dice_envs/SumAvoid-v0", critic_errors="yes")


def test_the_rl_zoo_hyperparameter_file_builds_the_callback():
    # rl-baselines3-zoo reads `callback:` as a list of {"module.Class": kwargs}, imports the
    # class and calls it with the kwargs (rl_zoo3.utils.get_callback_list); do the same here.
    path = Path(__file__).resolve().parent.parent / "configs" / "rl_zoo.yml"
    entries = yaml.safe_load(path.read_text())
    assert list(entries) == ["dice_envs/SumAvoid-v0"]
    (spec,) = entries["dice_envs/SumAvoid-v0"]["callback"]
    ((dotted, kwargs),) = spec.items()
    module, name = dotted.rsplit(".", 1)
    callback = getattr(importlib.import_module(module), name)(**kwargs)
    assert isinstance(callback, ExactGapCallback)
    assert callback.env_id == "dice_envs/SumAvoid-v0" and callback.eval_freq == 256

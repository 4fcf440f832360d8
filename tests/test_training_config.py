"""Config checks: every hyperparameter is refused with a one-line message naming its key."""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from training.config import ConfigError, check_seed, has_budget, load_config, resolve_config

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "configs"
SOURCE = "configs/sum_avoid/test.yaml"


def qlearning_config() -> dict[str, Any]:
    return {
        "env_id": "dice_envs/SumAvoid-v0",
        "env_kwargs": {"N": 10},
        "algo": "qlearning",
        "seeds": [0, 1],
        "evaluation": {"episodes": 10},
        "hyperparams": {
            "gamma": 1.0,
            "learning_rate": {"power": 0.8},
            "epsilon": {"start": 1.0, "end": 0.1, "fraction": 0.3},
        },
        "budgets": {
            "quick": {"timesteps": 1000, "eval_every": 500},
            "full": {"timesteps": 2000, "eval_every": 500, "seeds": [0, 1, 2]},
        },
    }


def ppo_config() -> dict[str, Any]:
    config = qlearning_config()
    config["algo"] = "ppo"
    config["hyperparams"] = {
        "n_envs": 2,
        "n_steps": 64,
        "batch_size": 64,
        "n_epochs": 2,
        "learning_rate": 0.0003,
        "gamma": 1.0,
        "policy_kwargs": {"net_arch": [64, 64]},
    }
    return config


def changed(config: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    """A copy of `config` with the value at the dotted `path` replaced."""
    config = copy.deepcopy(config)
    *parents, last = path.split(".")
    node = config
    for key in parents:
        node = node[key]
    node[last] = value
    return config


def test_the_base_configs_are_valid():
    assert resolve_config(qlearning_config())["hyperparams"]["gamma"] == 1.0
    assert resolve_config(ppo_config())["hyperparams"]["n_epochs"] == 2


LINEAR = {"schedule": "linear", "start": 0.001, "end": 0.0}
PPO_CASES = [
    ("gamma", 7, "hyperparams.gamma must be a number in (0, 1], got 7"),
    ("gamma", True, "hyperparams.gamma must be a number in (0, 1], got True"),
    ("n_epochs", -3, "hyperparams.n_epochs must be an integer >= 1, got -3"),
    ("n_epochs", 2.5, "hyperparams.n_epochs must be an integer >= 1, got 2.5"),
    ("learning_rate", "abc", "learning_rate must be a number > 0 or a schedule mapping, got 'abc'"),
    ("learning_rate", "3e-4", "got the string '3e-4' (PyYAML reads 3e-4 as a string"),
    ("learning_rate", "3e-4", "write 3.0e-4"),
    ("learning_rate", float("nan"), "hyperparams.learning_rate must be a number > 0"),
    ("learning_rate", {"schedule": "cosine"}, "learning_rate.schedule must be one of"),
    ("learning_rate", {"schedule": "cosine"}, "['constant', 'linear'], got 'cosine'"),
    ("learning_rate", {"start": 0.001, "end": 0.0}, "learning_rate: missing key 'schedule'"),
    (
        "learning_rate",
        {**LINEAR, "fraction": 0},
        "learning_rate.fraction must be a number in (0, 1]",
    ),
    ("learning_rate", {**LINEAR, "end": -0.1}, "learning_rate.end must be a number >= 0, got -0.1"),
    ("learning_rate", {**LINEAR, "speed": 2}, "learning_rate: unknown key 'speed'"),
    (
        "learning_rate",
        {"schedule": "constant", "value": 0},
        "learning_rate.value must be a number > 0",
    ),
    ("batch_size", 129, "batch_size must be <= n_steps * n_envs (64 * 2 = 128), got 129"),
    ("policy_kwargs", {"net_arch": [64, -1]}, "net_arch must be a non-empty list of integers >= 1"),
    ("policy_kwargs", {"net_arch": [64, -1]}, "got [64, -1]"),
    ("policy_kwargs", {"net_arch": []}, "policy_kwargs.net_arch must be a non-empty list"),
    ("policy_kwargs", {"net_arch": {"pi": [64]}}, "policy_kwargs.net_arch: missing key 'vf'"),
    ("policy_kwargs", {"net_arch": {"pi": [64], "vf": [0]}}, "policy_kwargs.net_arch.vf must be"),
    ("policy_kwargs", {"ortho_init": False}, "policy_kwargs: unknown key 'ortho_init'"),
    ("policy_kwargs", {"activation_fn": "gelu"}, "activation_fn must be one of ['tanh', 'relu'"),
    ("use_sde", True, "hyperparams: unsupported key 'use_sde'"),
    ("use_sde", True, "supported: ['batch_size', 'clip_range', 'clip_range_vf', 'ent_coef'"),
    ("learnin_rate", 0.1, "hyperparams: unknown key 'learnin_rate'; supported: ['batch_size'"),
    ("target_kl", -1, "hyperparams.target_kl must be a number > 0 or null, got -1"),
    ("clip_range", 0, "hyperparams.clip_range must be a number > 0 or a schedule mapping, got 0"),
    (
        "clip_range",
        {**LINEAR, "start": 0.2, "end": 0},
        "clip_range.end must be a number > 0, got 0",
    ),
    ("clip_range_vf", 0, "hyperparams.clip_range_vf must be a number > 0 or null, got 0"),
    ("ent_coef", -0.1, "hyperparams.ent_coef must be a number >= 0, got -0.1"),
    ("vf_coef", "0.5", "got the string '0.5' (a quoted number is a string: write 0.5 without"),
    ("gae_lambda", 1.5, "hyperparams.gae_lambda must be a number in [0, 1], got 1.5"),
    ("max_grad_norm", float("inf"), "hyperparams.max_grad_norm must be a number > 0 (finite)"),
    ("normalize_advantage", "yes", "normalize_advantage must be true or false, got 'yes'"),
    ("masked", 1, "hyperparams.masked must be 'auto', true or false, got 1"),
    ("n_steps", "1e3", "n_steps must be an integer >= 2, got the string '1e3'"),
    ("n_steps", "1e3", "write 1000)"),
    ("stats_window_size", 0, "hyperparams.stats_window_size must be an integer >= 1, got 0"),
    ("obs_encoding", "binary", "obs_encoding must be one of ['onehot', 'normalized']"),
    ("reward_scale", 0, "hyperparams.reward_scale must be a number > 0, got 0"),
    ("vec_env", "subproc", "hyperparams.vec_env must be one of ['native', 'dummy'], got 'subproc'"),
]
QLEARNING_CASES = [
    ("gamma", 0, "hyperparams.gamma must be a number in (0, 1], got 0"),
    ("n_envs", 0, "hyperparams.n_envs must be an integer >= 1, got 0"),
    ("learning_rate", {"power": 0.3}, "learning_rate.power must be a number in (0.5, 1], got 0.3"),
    ("learning_rate", 1.5, "hyperparams.learning_rate must be a number in [0, 1] or a schedule"),
    ("epsilon", {"start": 2}, "hyperparams.epsilon.start must be a number in [0, 1], got 2"),
    ("epsilon", {"start": 1.0}, "hyperparams.epsilon: missing key 'end'"),
    ("epsilon", {"start": 1.0, "stop": 0.1}, "hyperparams.epsilon: unknown key 'stop'"),
    ("epsilon", {"schedule": "cosine"}, "epsilon.schedule must be one of ['constant', 'linear']"),
    ("initial_q", float("inf"), "hyperparams.initial_q must be a number (finite), got inf"),
    ("initial_q", True, "hyperparams.initial_q must be a number, got True"),
]
TOP_CASES = [
    ("seeds", [-1], ": seeds[0] must be an integer >= 0 and < 2**32 (numpy's limit), got -1"),
    ("seeds", [2**32], ": seeds[0] must be an integer >= 0 and < 2**32 (numpy's limit), got 4294"),
    ("seeds", [0, 0], ": seeds must not repeat a seed, got 0 twice in [0, 0]"),
    ("seeds", [], ": seeds must be a non-empty list of integers >= 0, got []"),
    ("budgets.full.seeds", [3, True], "budgets.full.seeds[1] must be an integer >= 0 and < 2**32"),
    ("budgets.quick.eval_every", 2000, "budgets.quick.eval_every must be <= timesteps (1000)"),
    ("budgets.full.timesteps", 0, "budgets.full.timesteps must be an integer >= 1, got 0"),
    ("evaluation.episodes", -1, "evaluation.episodes must be an integer >= 0, got -1"),
]


def refused(config: dict[str, Any], message: str) -> str:
    """The one-line message that refuses `config`, checked to contain `message`."""
    with pytest.raises(ConfigError, match=re.escape(message)) as caught:
        resolve_config(config, "quick", source=SOURCE)
    text = str(caught.value)
    assert "\n" not in text and text.startswith(f"{SOURCE}: ")
    return text


@pytest.mark.parametrize("key, value, message", PPO_CASES)
def test_a_bad_ppo_hyperparameter_is_refused(key, value, message):
    refused(changed(ppo_config(), f"hyperparams.{key}", value), message)


@pytest.mark.parametrize("key, value, message", QLEARNING_CASES)
def test_a_bad_qlearning_hyperparameter_is_refused(key, value, message):
    refused(changed(qlearning_config(), f"hyperparams.{key}", value), message)


@pytest.mark.parametrize("path, value, message", TOP_CASES)
def test_a_bad_top_level_value_is_refused(path, value, message):
    refused(changed(qlearning_config(), path, value), message)


@pytest.mark.parametrize("path", sorted(CONFIGS.glob("*/*.yaml")), ids=lambda path: path.stem)
@pytest.mark.parametrize("budget", ["quick", "full"])
def test_every_shipped_config_resolves(path, budget):
    if not has_budget(path, budget):  # full budget only: the default games, Simultaneous Hog
        full_only = path.stem.endswith(("_goal100", "_rounds100"))
        full_only |= path.parent.name in ("simultaneous_hog", "yahtzee")
        assert budget == "quick" and full_only
        with pytest.raises(ConfigError, match="budgets has no 'quick' entry"):
            load_config(path, budget)
        return
    config = load_config(path, budget)
    assert config["budget"] == budget and config["source"] == str(path)
    params = config["hyperparams"]
    if config["algo"] == "ppo":
        assert {"n_envs", "obs_encoding", "reward_scale", "masked"} <= set(params)
        assert isinstance(params["learning_rate"], float | dict)
        assert params["policy_kwargs"]["net_arch"] and params["vec_env"] == "native"
    else:
        assert set(params) == {"gamma", "initial_q", "learning_rate", "epsilon", "n_envs"}
        assert params["n_envs"] == 512
        assert set(params["epsilon"]) == {"start", "end", "fraction"}


def test_a_linear_schedule_resolves_to_the_canonical_dict():
    schedule = {"schedule": "linear", "start": 0.001, "end": 0}
    config = changed(ppo_config(), "hyperparams.learning_rate", schedule)
    config["hyperparams"]["clip_range"] = {
        "schedule": "linear",
        "start": 0.3,
        "end": 0.1,
        "fraction": 0.5,
    }
    params = resolve_config(config)["hyperparams"]
    assert params["learning_rate"] == {
        "schedule": "linear",
        "start": 0.001,
        "end": 0.0,
        "fraction": 1.0,
    }
    assert all(isinstance(number, float) for number in list(params["learning_rate"].values())[1:])
    assert params["clip_range"] == {"schedule": "linear", "start": 0.3, "end": 0.1, "fraction": 0.5}


def test_a_constant_schedule_resolves_to_a_float():
    config = changed(
        ppo_config(), "hyperparams.learning_rate", {"schedule": "constant", "value": 1}
    )
    config["hyperparams"]["clip_range"] = 1
    params = resolve_config(config)["hyperparams"]
    assert params["learning_rate"] == 1.0 and isinstance(params["learning_rate"], float)
    assert params["clip_range"] == 1.0 and isinstance(params["clip_range"], float)


def test_qlearning_schedules_keep_their_internal_form():
    linear = {"schedule": "linear", "start": 1.0, "end": 0.2}
    config = changed(qlearning_config(), "hyperparams.epsilon", linear)
    config["hyperparams"]["learning_rate"] = {"schedule": "constant", "value": 0.5}
    params = resolve_config(config)["hyperparams"]
    assert params["epsilon"] == {"start": 1.0, "end": 0.2, "fraction": 1.0}
    assert params["learning_rate"] == {"start": 0.5, "end": 0.5, "fraction": 1.0}
    params = resolve_config(qlearning_config())["hyperparams"]
    assert params["learning_rate"] == {"power": 0.8}


def test_policy_kwargs_resolve_with_the_activation_name():
    kwargs = {"net_arch": {"pi": [32], "vf": [64, 64]}, "activation_fn": "relu"}
    params = resolve_config(changed(ppo_config(), "hyperparams.policy_kwargs", kwargs))[
        "hyperparams"
    ]
    assert params["policy_kwargs"] == {
        "net_arch": {"pi": [32], "vf": [64, 64]},
        "activation_fn": "relu",
    }


def test_ppo_adds_only_its_own_defaults():
    params = resolve_config(ppo_config())["hyperparams"]
    added = set(params) - set(ppo_config()["hyperparams"])
    assert added == {"obs_encoding", "reward_scale", "masked", "vec_env"}
    assert (params["obs_encoding"], params["reward_scale"], params["masked"]) == (
        "onehot",
        1.0,
        "auto",
    )


def test_batch_size_is_checked_against_sb3_default_n_steps():
    config = ppo_config()
    del config["hyperparams"]["n_steps"]
    config["hyperparams"]["batch_size"] = 2048 * 2
    assert resolve_config(config)["hyperparams"]["batch_size"] == 4096
    config["hyperparams"]["batch_size"] = 2048 * 2 + 1
    with pytest.raises(ConfigError, match=re.escape("(2048 * 2 = 4096), got 4097")):
        resolve_config(config)


def test_a_yaml_syntax_error_is_one_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("seeds: [1,\nalgo: ppo\n")
    with pytest.raises(ConfigError, match=r"bad\.yaml: not valid YAML: .* at line \d+") as caught:
        load_config(path)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("seed", [-1, True, 1.5, "3", 2**32])
def test_check_seed_refuses(seed):
    with pytest.raises(ConfigError, match=r"^seed must be an integer") as caught:
        check_seed(seed)
    assert repr(seed) in str(caught.value) or str(seed) in str(caught.value)


@pytest.mark.parametrize("seed", [0, 7])
def test_check_seed_accepts(seed):
    assert check_seed(seed) == seed


def test_importing_the_config_module_does_not_import_torch():
    code = "import sys, training.config; print('torch' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"

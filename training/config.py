"""Run configs: YAML files in the style of rl-baselines3-zoo, checked key by key.

A config names the env and its keyword arguments, the algorithm, its hyperparameters, the
seeds, and two budgets (`quick` and `full`) of environment steps and evaluation points:

    env_id: dice_envs/SumAvoid-v0
    env_kwargs: {N: 10}
    algo: qlearning
    seeds: [0, 1, 2]
    evaluation: {episodes: 300}
    hyperparams: {...}
    budgets:
      quick: {timesteps: 300000, eval_every: 30000}
      full: {timesteps: 3000000, eval_every: 100000, seeds: [0, 1, 2, 3, 4]}
"""

from __future__ import annotations

import copy
import inspect
import re
from pathlib import Path
from typing import Any

import yaml

from dice_envs import ENV_IDS, make_model

ALGOS = ("qlearning", "ppo")
BUDGETS = ("quick", "full")
TOP_KEYS = {"env_id", "env_kwargs", "algo", "seeds", "evaluation", "hyperparams", "budgets"}
BUDGET_KEYS = {"timesteps", "eval_every", "seeds"}
EVALUATION_KEYS = {"episodes"}
SCHEDULE_KEYS = {"start", "end", "fraction"}
QLEARNING_KEYS = {"gamma", "learning_rate", "epsilon", "initial_q"}
# Keys of ours for PPO; the rest must be keyword arguments of SB3's PPO (or MaskablePPO).
PPO_OWN_KEYS = {"n_envs", "obs_encoding", "reward_scale", "masked"}
OBS_ENCODINGS = ("onehot", "normalized")


class ConfigError(ValueError):
    """A config that can not run; the message names the key."""


def load_config(path: str | Path, budget: str = "quick") -> dict[str, Any]:
    """Read, check and resolve a config for one budget (its keys merged in)."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML: {error}") from None
    return resolve_config(raw, budget, source=str(path))


def resolve_config(raw: Any, budget: str = "quick", source: str = "config") -> dict[str, Any]:
    """Check a config mapping and return it resolved for `budget`."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: a config must be a mapping, got {type(raw).__name__}")
    _no_unknown(raw, TOP_KEYS, source)
    for key in ("env_id", "algo", "hyperparams", "budgets"):
        if key not in raw:
            raise ConfigError(f"{source}: missing key '{key}'")
    if raw["env_id"] not in ENV_IDS:
        raise ConfigError(f"{source}: env_id must be one of {list(ENV_IDS)}, got {raw['env_id']!r}")
    if raw["algo"] not in ALGOS:
        raise ConfigError(f"{source}: algo must be one of {list(ALGOS)}, got {raw['algo']!r}")
    env_kwargs = raw.get("env_kwargs") or {}
    if not isinstance(env_kwargs, dict):
        raise ConfigError(f"{source}: env_kwargs must be a mapping")
    try:
        make_model(raw["env_id"], **env_kwargs)
    except (TypeError, ValueError) as error:
        raise ConfigError(f"{source}: env_kwargs: {error}") from None
    if budget not in BUDGETS:
        raise ConfigError(f"budget must be one of {list(BUDGETS)}, got {budget!r}")
    budgets = raw["budgets"]
    if not isinstance(budgets, dict):
        raise ConfigError(f"{source}: budgets must be a mapping")
    _no_unknown(budgets, set(BUDGETS), f"{source}: budgets")
    if budget not in budgets:
        raise ConfigError(f"{source}: budgets has no '{budget}' entry")
    for name, entry in budgets.items():
        _check_budget(entry, f"{source}: budgets.{name}")
    chosen = budgets[budget]
    seeds = chosen.get("seeds", raw.get("seeds", [0]))
    _check_seeds(seeds, f"{source}: seeds")
    evaluation = raw.get("evaluation") or {}
    _no_unknown(evaluation, EVALUATION_KEYS, f"{source}: evaluation")
    episodes = evaluation.get("episodes", 300)
    _positive_int(episodes, f"{source}: evaluation.episodes", minimum=0)
    hyperparams = raw["hyperparams"] or {}
    if not isinstance(hyperparams, dict):
        raise ConfigError(f"{source}: hyperparams must be a mapping")
    if raw["algo"] == "qlearning":
        hyperparams = _check_qlearning(hyperparams, f"{source}: hyperparams")
    else:
        hyperparams = _check_ppo(hyperparams, f"{source}: hyperparams")
    return {
        "env_id": raw["env_id"],
        "env_kwargs": copy.deepcopy(env_kwargs),
        "algo": raw["algo"],
        "budget": budget,
        "timesteps": chosen["timesteps"],
        "eval_every": chosen["eval_every"],
        "seeds": list(seeds),
        "evaluation": {"episodes": episodes},
        "hyperparams": hyperparams,
        "source": source,
    }


def game_name(env_id: str) -> str:
    """dice_envs/SumAvoid-v0 -> sum_avoid (the configs/ folder name)."""
    name = env_id.split("/")[-1].split("-")[0]
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _no_unknown(mapping: Any, allowed: set[str], where: str) -> None:
    if not isinstance(mapping, dict):
        raise ConfigError(f"{where} must be a mapping, got {mapping!r}")
    unknown = sorted(set(mapping) - allowed)
    if unknown:
        raise ConfigError(f"{where}: unknown key '{unknown[0]}'; allowed: {sorted(allowed)}")


def _positive_int(value: Any, where: str, minimum: int = 1) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{where} must be an integer >= {minimum}, got {value!r}")


def _check_seeds(seeds: Any, where: str) -> None:
    if not isinstance(seeds, list) or not seeds:
        raise ConfigError(f"{where} must be a non-empty list of integers, got {seeds!r}")
    for seed in seeds:
        _positive_int(seed, where, minimum=0)


def _check_budget(entry: Any, where: str) -> None:
    _no_unknown(entry, BUDGET_KEYS, where)
    for key in ("timesteps", "eval_every"):
        if key not in entry:
            raise ConfigError(f"{where}: missing key '{key}'")
        _positive_int(entry[key], f"{where}.{key}")
    if "seeds" in entry:
        _check_seeds(entry["seeds"], f"{where}.seeds")


def _check_schedule(value: Any, where: str) -> dict[str, float]:
    """A linear schedule {start, end, fraction}, or a number for a constant one."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {"start": float(value), "end": float(value), "fraction": 1.0}
    _no_unknown(value, SCHEDULE_KEYS, where)
    schedule = {
        "start": value.get("start"),
        "end": value.get("end"),
        "fraction": value.get("fraction", 1.0),
    }
    for key, number in schedule.items():
        if isinstance(number, bool) or not isinstance(number, int | float):
            raise ConfigError(f"{where}.{key} must be a number, got {number!r}")
    if not 0 < schedule["fraction"] <= 1:
        raise ConfigError(f"{where}.fraction must be in (0, 1], got {schedule['fraction']!r}")
    return {key: float(number) for key, number in schedule.items()}


def _check_qlearning(hyperparams: dict, where: str) -> dict[str, Any]:
    _no_unknown(hyperparams, QLEARNING_KEYS, where)
    gamma = hyperparams.get("gamma", 1.0)
    if isinstance(gamma, bool) or not isinstance(gamma, int | float) or not 0 < gamma <= 1:
        raise ConfigError(f"{where}.gamma must be a number in (0, 1], got {gamma!r}")
    initial = hyperparams.get("initial_q", 0.0)
    if isinstance(initial, bool) or not isinstance(initial, int | float):
        raise ConfigError(f"{where}.initial_q must be a number, got {initial!r}")
    resolved = {"gamma": float(gamma), "initial_q": float(initial)}
    rate = hyperparams.get("learning_rate", 0.1)
    if isinstance(rate, dict) and "power" in rate:
        _no_unknown(rate, {"power"}, f"{where}.learning_rate")
        power = rate["power"]
        if isinstance(power, bool) or not isinstance(power, int | float) or not 0.5 < power <= 1:
            raise ConfigError(f"{where}.learning_rate.power must be in (0.5, 1], got {power!r}")
        resolved["learning_rate"] = {"power": float(power)}
    for key, default in (("learning_rate", 0.1), ("epsilon", 0.1)):
        if key in resolved:
            continue
        schedule = _check_schedule(hyperparams.get(key, default), f"{where}.{key}")
        for end in ("start", "end"):
            if not 0 <= schedule[end] <= 1:
                raise ConfigError(f"{where}.{key}.{end} must be in [0, 1], got {schedule[end]}")
        resolved[key] = schedule
    return resolved


def _check_ppo(hyperparams: dict, where: str) -> dict[str, Any]:
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO

    allowed = set(inspect.signature(PPO.__init__).parameters) | set(
        inspect.signature(MaskablePPO.__init__).parameters
    )
    allowed -= {
        "self",
        "policy",
        "env",
        "seed",
        "verbose",
        "tensorboard_log",
        "device",
        "_init_setup_model",
    }
    _no_unknown(hyperparams, allowed | PPO_OWN_KEYS, where)
    resolved = dict(hyperparams)
    resolved.setdefault("n_envs", 8)
    _positive_int(resolved["n_envs"], f"{where}.n_envs")
    resolved.setdefault("obs_encoding", "onehot")
    if resolved["obs_encoding"] not in OBS_ENCODINGS:
        raise ConfigError(
            f"{where}.obs_encoding must be one of {list(OBS_ENCODINGS)}, "
            f"got {resolved['obs_encoding']!r}"
        )
    scale = resolved.setdefault("reward_scale", 1.0)
    if isinstance(scale, bool) or not isinstance(scale, int | float) or scale <= 0:
        raise ConfigError(f"{where}.reward_scale must be a positive number, got {scale!r}")
    masked = resolved.setdefault("masked", "auto")
    if masked not in ("auto", True, False):
        raise ConfigError(f"{where}.masked must be 'auto', true or false, got {masked!r}")
    return resolved

"""Run configs: YAML files in the style of rl-baselines3-zoo, checked key by key.

A config names the env and its keyword arguments, the algorithm, its hyperparameters, the
seeds, and two budgets (`quick` and `full`) of environment steps and evaluation points:

    env_id: dice_envs/SumAvoid-v0
    env_kwargs: {N: 10}
    algo: qlearning
    seeds: [0, 1, 2]
    evaluation: {episodes: 300}     # Monte Carlo episodes beside each exact evaluation;
                                    # on a game without tables (Yahtzee) the sampled gap's
    hyperparams: {...}
    budgets:
      quick: {timesteps: 300000, eval_every: 30000}
      full: {timesteps: 3000000, eval_every: 100000, seeds: [0, 1, 2, 3, 4]}

Every value is checked for type and range before any training starts; a bad one raises a
one-line `ConfigError` that starts with the config's path and names the full key, e.g.
`configs/pig/ppo.yaml: hyperparams.n_epochs must be an integer >= 1, got -3`.

Hyperparameters resolve to plain data (numbers, strings, lists, dicts), never to library
objects:

- Q-learning: `gamma` and `initial_q` floats; `epsilon` a dict {start, end, fraction};
  `learning_rate` that dict, {power} or {power, offset}. A number,
  `{schedule: constant, value: X}` and `{schedule: linear, start, end, fraction}` all resolve
  to {start, end, fraction}.
- PPO: only the keys of `PPO_CHECKS`, plus the defaults of `PPO_DEFAULTS`; SB3's defaults
  apply to the keys not given. `learning_rate` and `clip_range` resolve to a float (a number
  or `{schedule: constant, value: X}`) or to {"schedule": "linear", "start", "end",
  "fraction"}; `policy_kwargs.activation_fn` stays a name such as 'relu'.
"""

from __future__ import annotations

import copy
import math
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from dice_envs import env_ids, make_model
from dice_envs.registration import game, game_slug

ALGOS = ("qlearning", "ppo")
BUDGETS = ("quick", "full")
TOP_KEYS = {
    "env_id",
    "env_kwargs",
    "algo",
    "seeds",
    "evaluation",
    "hyperparams",
    "budgets",
    "selfplay",
}
BUDGET_KEYS = {"timesteps", "eval_every", "seeds"}
EVALUATION_KEYS = {"episodes", "exploitability"}
# Self-play (two-player games): Q-learning plays both seats with one table (no keys); PPO plays
# against a pool of its own past policies, the `pool` latest evaluation points, kept as their
# greedy actions or as the action probabilities PPO plays (`policies`; a game whose optimum
# mixes, such as Simultaneous Hog, needs the latter).
SELFPLAY_KEYS = {"qlearning": {"starts"}, "ppo": {"pool", "policies"}}
SELFPLAY_POOL = 5
SELFPLAY_POLICIES = ("greedy", "stochastic")
# Where self-play Q-learning starts its games: "anywhere" (every position the game can reach,
# uniformly: exploring starts) or "start" (the game's start only).
SELFPLAY_STARTS = ("anywhere", "start")
SCHEDULES = ("constant", "linear")
LINEAR_KEYS = {"schedule", "start", "end", "fraction"}
QLEARNING_KEYS = {"gamma", "learning_rate", "epsilon", "initial_q", "n_envs"}
# Copies of the env Q-learning steps at once, unless a config says otherwise: at the quick
# budget 512 copies reach the gaps of one copy in a fraction of its time (`make bench`).
QLEARNING_N_ENVS = 512
OBS_ENCODINGS = ("onehot", "normalized")
ACTIVATIONS = ("tanh", "relu", "elu", "leaky_relu")
POLICY_KWARGS_KEYS = {"net_arch", "activation_fn"}
# Keys of ours for PPO, always present in a resolved config.
PPO_DEFAULTS = {
    "n_envs": 8,
    "obs_encoding": "onehot",
    "reward_scale": 1.0,
    "masked": "auto",
    "vec_env": "native",
}
# How PPO's copies of the env are stepped: the native vector env through its SB3 adapter, or
# SB3's DummyVecEnv over gym.make (a Python loop over the copies).
VEC_ENVS = ("native", "dummy")
# SB3's defaults for PPO and MaskablePPO, needed to check batch_size when these are not given.
SB3_N_STEPS, SB3_BATCH_SIZE = 2048, 64
# Arguments of SB3's PPO that a config may not set: unsupported here, or set by the trainer.
SB3_UNSUPPORTED = {
    "use_sde",
    "sde_sample_freq",
    "rollout_buffer_class",
    "rollout_buffer_kwargs",
    "policy",
    "env",
    "seed",
    "verbose",
    "tensorboard_log",
    "device",
    "_init_setup_model",
}
# numpy's legacy seeding (SB3's set_random_seed) refuses larger seeds.
SEED_LIMIT = 2**32

# A range for numbers: how a message states it, and its test.
Bound = tuple[str, Callable[[float], bool]]
POSITIVE: Bound = ("> 0", lambda x: x > 0)
NON_NEGATIVE: Bound = (">= 0", lambda x: x >= 0)
UNIT: Bound = ("in [0, 1]", lambda x: 0 <= x <= 1)
UNIT_OPEN_LOW: Bound = ("in (0, 1]", lambda x: 0 < x <= 1)
ANY: Bound = ("", lambda x: True)


class ConfigError(ValueError):
    """A config that can not run; the message names the key."""


def _read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"config file {path} does not exist") from None
    except yaml.YAMLError as error:
        raise ConfigError(f"{path}: not valid YAML: {_yaml_problem(error)}") from None


def load_config(path: str | Path, budget: str = "quick") -> dict[str, Any]:
    """Read, check and resolve a config for one budget (its keys merged in)."""
    path = Path(path)
    return resolve_config(_read_yaml(path), budget, source=str(path))


def has_budget(path: str | Path, budget: str) -> bool:
    """Whether the config at `path` defines `budget`; a config without it is still checked
    whole (with a budget it has), so a broken config is never skipped silently."""
    path = Path(path)
    raw = _read_yaml(path)
    budgets = raw.get("budgets") if isinstance(raw, dict) else None
    if isinstance(budgets, dict) and budgets and budget not in budgets:
        resolve_config(raw, next(iter(budgets)), source=str(path))
        return False
    return True


def resolve_config(raw: Any, budget: str = "quick", source: str = "config") -> dict[str, Any]:
    """Check a config mapping and return it resolved for `budget`."""
    env_kwargs, model = _check_game(raw, source)
    chosen = _check_budgets(raw, budget, source)
    seeds = chosen.get("seeds", raw.get("seeds", [0]))
    episodes, exploitability = _check_evaluation(raw, source)
    two_player = hasattr(model, "opponent_policy")
    simultaneous = getattr(getattr(model, "model", None), "simultaneous", False)
    selfplay = _check_selfplay(raw, two_player, simultaneous, source)
    if selfplay is not None:
        exploitability = True  # the measure of a self-play agent
    if exploitability and not two_player:
        raise ConfigError(
            f"{source}: evaluation.exploitability needs a two-player game (Pig, TwoDicePig, "
            f"Hog, SimultaneousHog), not {raw['env_id']}"
        )
    if not game(raw["env_id"]).tables and episodes < 2:
        raise ConfigError(
            f"{source}: evaluation.episodes must be an integer >= 2 for {raw['env_id']} (the "
            f"episodes of its sampled gap, which needs a standard error), got {episodes}"
        )
    hyperparams = _check_hyperparams(raw, selfplay, source)
    resolved = {
        "env_id": raw["env_id"],
        "env_kwargs": copy.deepcopy(env_kwargs),
        "algo": raw["algo"],
        "budget": budget,
        "timesteps": chosen["timesteps"],
        "eval_every": chosen["eval_every"],
        "seeds": list(seeds),
        # Only what is switched on: a run's identity (its folder) stays what it was before.
        "evaluation": {
            "episodes": episodes,
            **({"exploitability": True} if exploitability else {}),
        },
        "hyperparams": hyperparams,
        "source": source,
    }
    if selfplay is not None:
        resolved["selfplay"] = selfplay
    return resolved


def _check_game(raw: Any, source: str) -> tuple[dict, Any]:
    """The top-level keys, env_id, algo and env_kwargs; returns (env_kwargs, the model)."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: a config must be a mapping, got {type(raw).__name__}")
    _no_unknown(raw, TOP_KEYS, source)
    for key in ("env_id", "algo", "hyperparams", "budgets"):
        if key not in raw:
            raise ConfigError(f"{source}: missing key '{key}'")
    if not isinstance(raw["env_id"], str) or raw["env_id"] not in env_ids():
        raise ConfigError(
            f"{source}: env_id must be one of {list(env_ids())}, got {raw['env_id']!r}"
        )
    if raw["algo"] not in ALGOS:
        raise ConfigError(f"{source}: algo must be one of {list(ALGOS)}, got {raw['algo']!r}")
    env_kwargs = raw.get("env_kwargs") or {}
    if not isinstance(env_kwargs, dict):
        raise ConfigError(f"{source}: env_kwargs must be a mapping")
    try:
        model = make_model(raw["env_id"], **env_kwargs)
    except (TypeError, ValueError) as error:
        raise ConfigError(f"{source}: env_kwargs: {_one_line(error)}") from None
    return env_kwargs, model


def _check_budgets(raw: dict, budget: str, source: str) -> dict:
    """The budget name, the seeds and every budget entry; returns the chosen entry."""
    if budget not in BUDGETS:
        raise ConfigError(f"budget must be one of {list(BUDGETS)}, got {budget!r}")
    if "seeds" in raw:
        _check_seeds(raw["seeds"], f"{source}: seeds")
    budgets = raw["budgets"]
    _no_unknown(budgets, set(BUDGETS), f"{source}: budgets")
    if budget not in budgets:
        raise ConfigError(f"{source}: budgets has no '{budget}' entry")
    for name, entry in budgets.items():
        _check_budget(entry, f"{source}: budgets.{name}")
    return budgets[budget]


def _check_evaluation(raw: dict, source: str) -> tuple[int, bool]:
    """The evaluation section; returns (episodes, whether exploitability is asked for)."""
    evaluation = raw.get("evaluation")
    evaluation = {} if evaluation is None else evaluation
    _no_unknown(evaluation, EVALUATION_KEYS, f"{source}: evaluation")
    episodes = _integer(evaluation.get("episodes", 300), f"{source}: evaluation.episodes", 0)
    exploitability = evaluation.get("exploitability", False)
    if not isinstance(exploitability, bool):
        raise ConfigError(
            f"{source}: evaluation.exploitability must be true or false, got {exploitability!r}"
        )
    return episodes, exploitability


def _check_hyperparams(raw: dict, selfplay: dict | None, source: str) -> dict:
    """The algorithm's hyperparameters, checked and completed, with self-play's demands."""
    hyperparams = raw["hyperparams"]
    hyperparams = {} if hyperparams is None else hyperparams
    if not isinstance(hyperparams, dict):
        raise ConfigError(f"{source}: hyperparams must be a mapping, got {hyperparams!r}")
    if raw["algo"] == "qlearning":
        hyperparams = _check_qlearning(hyperparams, f"{source}: hyperparams")
        if selfplay is not None and hyperparams["gamma"] != 1.0:
            raise ConfigError(
                f"{source}: hyperparams.gamma must be 1.0 for self-play (values are win "
                f"probabilities), got {hyperparams['gamma']}"
            )
        if selfplay is not None and hyperparams.get("n_envs", QLEARNING_N_ENVS) < 2:
            raise ConfigError(f"{source}: hyperparams.n_envs must be >= 2 for self-play")
    else:
        hyperparams = _check_ppo(hyperparams, f"{source}: hyperparams")
        if selfplay is not None and hyperparams["vec_env"] != "native":
            raise ConfigError(
                f"{source}: hyperparams.vec_env must be native for self-play, "
                f"got {hyperparams['vec_env']!r}"
            )
    return hyperparams


def _check_selfplay(
    raw: dict, two_player: bool, simultaneous: bool, source: str
) -> dict[str, Any] | None:
    if "selfplay" not in raw:
        return None
    where = f"{source}: selfplay"
    selfplay = raw["selfplay"]
    if not isinstance(selfplay, dict):
        raise ConfigError(
            f"{where} must be a mapping (Q-learning: {{starts: anywhere}}, PPO: {{pool: 5}}), "
            f"got {selfplay!r}"
        )
    _no_unknown(selfplay, SELFPLAY_KEYS[raw["algo"]], where)
    if not two_player:
        raise ConfigError(
            f"{where} needs a two-player game (Pig, TwoDicePig, Hog, SimultaneousHog)"
        )
    if raw["algo"] == "ppo":
        resolved = {"pool": _integer(selfplay.get("pool", SELFPLAY_POOL), f"{where}.pool", 1)}
        policies = selfplay.get("policies", "greedy")
        if policies not in SELFPLAY_POLICIES:
            raise ConfigError(
                f"{where}.policies must be one of {list(SELFPLAY_POLICIES)}, got {policies!r}"
            )
        if policies != "greedy":  # only what differs from before: run identities stay
            resolved["policies"] = policies
        return resolved
    if simultaneous:
        raise ConfigError(
            f"{where}: self-play Q-learning plays alternating moves; {raw['env_id']} is "
            "simultaneous (use PPO with selfplay.policies: stochastic)"
        )
    starts = selfplay.get("starts", "anywhere")
    if starts not in SELFPLAY_STARTS:
        raise ConfigError(f"{where}.starts must be one of {list(SELFPLAY_STARTS)}, got {starts!r}")
    return {"starts": starts}


def check_seed(seed: Any) -> int:
    """A seed given on its own (the CLI's `--seed`): an integer >= 0."""
    return _check_one_seed(seed, "seed")


game_name = game_slug  # the configs/ folder name of an env id

# Messages


def _one_line(error: Exception) -> str:
    return " ".join(str(error).split())


def _yaml_problem(error: yaml.YAMLError) -> str:
    mark = getattr(error, "problem_mark", None)
    problem = getattr(error, "problem", None)
    if problem and mark is not None:
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    return _one_line(error)


def _got(value: Any, integer: bool = False) -> str:
    """`got <value>`, explaining a number that YAML read as a string."""
    if isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            return f"got {value!r}"
        if math.isfinite(number):
            return f"got the string {value!r} ({_number_hint(value.strip(), number, integer)})"
    return f"got {value!r}"


def _number_hint(text: str, number: float, integer: bool) -> str:
    # PyYAML (YAML 1.1) reads a float only with a dot, and an exponent only with a sign.
    exponent = re.fullmatch(r"([-+]?\d+)(\.\d*)?[eE]([-+]?)(\d+)", text)
    if integer and number.is_integer():
        fixed = str(int(number))
    elif exponent:
        mantissa, fraction, sign, power = exponent.groups()
        fixed = f"{mantissa}{fraction or '.0'}e{sign or '+'}{power}"
    else:
        fixed = text
    if exponent and fixed != text:
        return f"PyYAML reads {text} as a string, not a number: write {fixed}"
    return f"a quoted number is a string: write {fixed} without quotes"


def _no_unknown(mapping: Any, allowed: set[str], where: str) -> None:
    if not isinstance(mapping, dict):
        raise ConfigError(f"{where} must be a mapping, got {mapping!r}")
    unknown = sorted(set(mapping) - allowed, key=str)
    if unknown:
        raise ConfigError(f"{where}: unknown key '{unknown[0]}'; allowed: {sorted(allowed)}")


def _missing(mapping: dict, key: str, where: str, why: str = "") -> Any:
    if key not in mapping:
        raise ConfigError(f"{where}: missing key '{key}'{why}")
    return mapping[key]


# Values


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _integer(value: Any, where: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{where} must be an integer >= {minimum}, {_got(value, True)}")
    return value


def _number(value: Any, where: str, bound: Bound = ANY, alternative: str = "") -> float:
    """A finite int or float (not a bool) within `bound`, as a float."""
    text, test = bound
    rule = f"a number {text}".rstrip() + alternative
    if not _is_number(value):
        raise ConfigError(f"{where} must be {rule}, {_got(value)}")
    if not math.isfinite(value):
        raise ConfigError(f"{where} must be {rule} (finite), got {value!r}")
    if not test(value):
        raise ConfigError(f"{where} must be {rule}, got {value!r}")
    return float(value)


def _optional_number(value: Any, where: str, bound: Bound) -> float | None:
    if value is None:
        return None
    return _number(value, where, bound, " or null")


def _choice(value: Any, where: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ConfigError(f"{where} must be one of {list(choices)}, got {value!r}")
    return value


def _boolean(value: Any, where: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{where} must be true or false, got {value!r}")
    return value


def _schedule(
    value: Any, where: str, start: Bound, end: Bound, named: bool
) -> float | dict[str, float]:
    """A number or {schedule: constant, value} (a float), or a linear schedule {start, end,
    fraction}. Without `named`, a mapping with no `schedule` key is a linear one."""
    if not isinstance(value, dict):
        return _number(value, where, start, " or a schedule mapping")
    if named or "schedule" in value:
        name = _missing(value, "schedule", where, f" (one of {list(SCHEDULES)})")
        if not isinstance(name, str) or name not in SCHEDULES:
            raise ConfigError(f"{where}.schedule must be one of {list(SCHEDULES)}, got {name!r}")
        if name == "constant":
            _no_unknown(value, {"schedule", "value"}, where)
            return _number(_missing(value, "value", where), f"{where}.value", start)
    _no_unknown(value, LINEAR_KEYS, where)
    return {
        "start": _number(_missing(value, "start", where), f"{where}.start", start),
        "end": _number(_missing(value, "end", where), f"{where}.end", end),
        "fraction": _number(value.get("fraction", 1.0), f"{where}.fraction", UNIT_OPEN_LOW),
    }


# Top level


def _check_one_seed(seed: Any, where: str) -> int:
    seed = _integer(seed, where, 0)
    if seed >= SEED_LIMIT:
        raise ConfigError(f"{where} must be an integer < 2**32 (numpy's limit), got {seed}")
    return seed


def _check_seeds(seeds: Any, where: str) -> None:
    if not isinstance(seeds, list) or not seeds:
        raise ConfigError(f"{where} must be a non-empty list of integers >= 0, got {seeds!r}")
    seen = set()
    for index, seed in enumerate(seeds):
        _check_one_seed(seed, f"{where}[{index}]")
        if seed in seen:
            raise ConfigError(f"{where} must not repeat a seed, got {seed} twice in {seeds}")
        seen.add(seed)


def _check_budget(entry: Any, where: str) -> None:
    _no_unknown(entry, BUDGET_KEYS, where)
    for key in ("timesteps", "eval_every"):
        _integer(_missing(entry, key, where), f"{where}.{key}", 1)
    if entry["eval_every"] > entry["timesteps"]:
        raise ConfigError(
            f"{where}.eval_every must be <= timesteps ({entry['timesteps']}), "
            f"got {entry['eval_every']}"
        )
    if "seeds" in entry:
        _check_seeds(entry["seeds"], f"{where}.seeds")


# Q-learning


def _check_qlearning(hyperparams: dict, where: str) -> dict[str, Any]:
    _no_unknown(hyperparams, QLEARNING_KEYS, where)
    resolved: dict[str, Any] = {
        "gamma": _number(hyperparams.get("gamma", 1.0), f"{where}.gamma", UNIT_OPEN_LOW),
        "initial_q": _number(hyperparams.get("initial_q", 0.0), f"{where}.initial_q"),
    }
    # 1: one env, stepped by the scalar learner; more: the native vector env, batched updates.
    resolved["n_envs"] = _integer(hyperparams.get("n_envs", QLEARNING_N_ENVS), f"{where}.n_envs", 1)
    rate = hyperparams.get("learning_rate", 0.1)
    if isinstance(rate, dict) and ("power" in rate or "offset" in rate):
        resolved["learning_rate"] = _visit_rate(rate, f"{where}.learning_rate")
    for key, default in (("learning_rate", 0.1), ("epsilon", 0.1)):
        if key in resolved:
            continue
        schedule = _schedule(hyperparams.get(key, default), f"{where}.{key}", UNIT, UNIT, False)
        if isinstance(schedule, float):
            schedule = {"start": schedule, "end": schedule, "fraction": 1.0}
        resolved[key] = schedule
    return resolved


def _visit_rate(rate: dict, where: str) -> dict[str, float]:
    """{power, offset}: the step size (offset / (offset + n - 1))**power of a pair's n-th visit;
    power in (0.5, 1] (the Robbins-Monro conditions), offset >= 1 (1: 1 / n**power). The
    offset is kept only where given, so the identity of a run without it stays."""
    _no_unknown(rate, {"power", "offset"}, where)
    power: Bound = ("in (0.5, 1]", lambda x: 0.5 < x <= 1)
    at_least_one: Bound = (">= 1", lambda x: x >= 1)
    resolved = {"power": _number(_missing(rate, "power", where), f"{where}.power", power)}
    if "offset" in rate:
        resolved["offset"] = _number(rate["offset"], f"{where}.offset", at_least_one)
    return resolved


# PPO


def _check_masked(value: Any, where: str) -> str | bool:
    if value != "auto" and not isinstance(value, bool):
        raise ConfigError(f"{where} must be 'auto', true or false, got {value!r}")
    return value


def _ppo_schedule(end: Bound) -> Callable[[Any, str], Any]:
    def check(value: Any, where: str) -> float | dict[str, Any]:
        schedule = _schedule(value, where, POSITIVE, end, True)
        if isinstance(schedule, float):
            return schedule
        return {"schedule": "linear", **schedule}

    return check


def _layers(value: Any, where: str, alternative: str = "") -> list[int]:
    if (
        not isinstance(value, list)
        or not value
        or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in value)
    ):
        raise ConfigError(
            f"{where} must be a non-empty list of integers >= 1{alternative}, got {value!r}"
        )
    return list(value)


def _check_policy_kwargs(value: Any, where: str) -> dict[str, Any]:
    _no_unknown(value, POLICY_KWARGS_KEYS, where)
    resolved: dict[str, Any] = {}
    if "net_arch" in value:
        arch, at = value["net_arch"], f"{where}.net_arch"
        if isinstance(arch, dict):
            _no_unknown(arch, {"pi", "vf"}, at)
            resolved["net_arch"] = {
                key: _layers(_missing(arch, key, at), f"{at}.{key}") for key in ("pi", "vf")
            }
        else:
            resolved["net_arch"] = _layers(arch, at, ", or a mapping {pi: [...], vf: [...]}")
    if "activation_fn" in value:
        activation = value["activation_fn"]
        resolved["activation_fn"] = _choice(activation, f"{where}.activation_fn", ACTIVATIONS)
    return resolved


# Every key a PPO config may set, with its check; each check returns the resolved value.
PPO_CHECKS: dict[str, Callable[[Any, str], Any]] = {
    "n_envs": lambda value, where: _integer(value, where, 1),
    "obs_encoding": lambda value, where: _choice(value, where, OBS_ENCODINGS),
    "reward_scale": lambda value, where: _number(value, where, POSITIVE),
    "masked": _check_masked,
    "vec_env": lambda value, where: _choice(value, where, VEC_ENVS),
    "n_steps": lambda value, where: _integer(value, where, 2),
    "batch_size": lambda value, where: _integer(value, where, 2),
    "n_epochs": lambda value, where: _integer(value, where, 1),
    "learning_rate": _ppo_schedule(NON_NEGATIVE),
    "gamma": lambda value, where: _number(value, where, UNIT_OPEN_LOW),
    "gae_lambda": lambda value, where: _number(value, where, UNIT),
    "clip_range": _ppo_schedule(POSITIVE),
    "clip_range_vf": lambda value, where: _optional_number(value, where, POSITIVE),
    "normalize_advantage": _boolean,
    "ent_coef": lambda value, where: _number(value, where, NON_NEGATIVE),
    "vf_coef": lambda value, where: _number(value, where, NON_NEGATIVE),
    "max_grad_norm": lambda value, where: _number(value, where, POSITIVE),
    "target_kl": lambda value, where: _optional_number(value, where, POSITIVE),
    "stats_window_size": lambda value, where: _integer(value, where, 1),
    "policy_kwargs": _check_policy_kwargs,
}


def _check_ppo(hyperparams: dict, where: str) -> dict[str, Any]:
    supported = sorted(PPO_CHECKS)
    for key in sorted(hyperparams, key=str):
        if key in SB3_UNSUPPORTED:
            raise ConfigError(
                f"{where}: unsupported key '{key}' (an SB3 PPO argument that configs do not "
                f"set); supported: {supported}"
            )
        if key not in PPO_CHECKS:
            raise ConfigError(f"{where}: unknown key '{key}'; supported: {supported}")
    resolved = {key: PPO_CHECKS[key](value, f"{where}.{key}") for key, value in hyperparams.items()}
    for key, default in PPO_DEFAULTS.items():
        resolved.setdefault(key, default)
    n_steps = resolved.get("n_steps", SB3_N_STEPS)
    batch_size = resolved.get("batch_size", SB3_BATCH_SIZE)
    rollout = n_steps * resolved["n_envs"]
    if batch_size > rollout:
        raise ConfigError(
            f"{where}.batch_size must be <= n_steps * n_envs "
            f"({n_steps} * {resolved['n_envs']} = {rollout}), got {batch_size}"
        )
    return resolved

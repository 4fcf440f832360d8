"""Run configs: YAML files in the style of rl-baselines3-zoo, checked by pydantic models.

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

Every value is checked for type and range before any training starts (strict pydantic
models: no key unknown to them, no coercion, no bool for a number); a bad one raises a
one-line `ConfigError` that starts with the config's path and names the full key, e.g.
`configs/pig/ppo.yaml: hyperparams.n_epochs must be an integer >= 1, got -3`.

Hyperparameters resolve to plain data (numbers, strings, lists, dicts), never to library
objects:

- Q-learning (`QLearningParams`): `gamma` and `initial_q` floats; `epsilon` a dict {start,
  end, fraction}; `learning_rate` that dict, {power} or {power, offset}. A number,
  `{schedule: constant, value: X}` and `{schedule: linear, start, end, fraction}` all resolve
  to {start, end, fraction}.
- PPO (`PPOParams`): only the keys given, plus our own keys (`PPO_OWN_KEYS`) with their
  defaults; SB3's defaults apply to the keys not given. `learning_rate` and `clip_range`
  resolve to a float (a number or `{schedule: constant, value: X}`) or to {"schedule":
  "linear", "start", "end", "fraction"}; `policy_kwargs.activation_fn` stays a name such as
  'relu'.
"""

import copy
import math
import re
from pathlib import Path
from typing import Annotated, Any, Literal, Union

import yaml
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    WrapValidator,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from dice_envs import env_ids, make_model
from dice_envs.registration import game, game_slug

ALGOS = ("qlearning", "ppo")
BUDGETS = ("quick", "full")
# Self-play (two-player games): Q-learning plays both seats with one table; PPO plays against
# a pool of its own past policies, the `pool` latest evaluation points, kept as their greedy
# actions or as the action probabilities PPO plays (`policies`; a game whose optimum mixes,
# such as Simultaneous Hog, needs the latter).
SELFPLAY_POOL = 5
SELFPLAY_POLICIES = ("greedy", "stochastic")
# Where self-play Q-learning starts its games: "anywhere" (every position the game can reach,
# uniformly: exploring starts) or "start" (the game's start only).
SELFPLAY_STARTS = ("anywhere", "start")
SCHEDULES = ("constant", "linear")
# Copies of the env Q-learning steps at once, unless a config says otherwise: at the quick
# budget 512 copies reach the gaps of one copy in a fraction of its time (`make bench`).
QLEARNING_N_ENVS = 512
OBS_ENCODINGS = ("onehot", "normalized")
ACTIVATIONS = ("tanh", "relu", "elu", "leaky_relu")
# How PPO's copies of the env are stepped: the native vector env through its SB3 adapter, or
# SB3's DummyVecEnv over gym.make (a Python loop over the copies).
VEC_ENVS = ("native", "dummy")
# Keys of ours for PPO (training.ppo.OWN_KEYS), always present in a resolved config.
PPO_OWN_KEYS = ("n_envs", "obs_encoding", "reward_scale", "masked", "vec_env")
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


def check_seed(seed: Any, name: str = "seed") -> int:
    """A seed given on its own: an integer >= 0; `name` is how the error names it (the
    command line's "--seed")."""
    try:
        return _ONE_SEED.validate_python(seed, strict=True)
    except ValidationError as error:
        raise ConfigError(_explained(error, name)) from None


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


def _error(message: str) -> PydanticCustomError:
    """An error of ours: its message is final (`_explained` only puts the key path first)."""
    return PydanticCustomError("config", "{message}", {"message": message})


# The tags of the unions below (a number or a schedule mapping, ...): pydantic puts them in an
# error's location, between the keys.
_TAGS = {"number", "constant", "linear", "visits", "layers", "arch"}


def _explained(error: ValidationError, whole: str) -> str:
    """pydantic's first error as `key.path must be ...` or `key.path: missing key 'x'`."""
    first = error.errors()[0]
    loc = [part for part in first["loc"] if part not in _TAGS]
    message = first["msg"]
    if first["type"] == "missing":
        *loc, key = loc
        message = f"missing key '{key}'"
    path = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
    if message.startswith("must"):
        return f"{path[1:] or whole} {message}"
    return f"{path[1:]}: {message}" if path else message


# Values: pydantic's types and constraints, each with the rule a message states.


def _rule(rule: str, integer: bool = False) -> WrapValidator:
    """pydantic's own error for a value replaced by `must be <rule>, got <value>`."""

    def check(value: Any, handler: Any) -> Any:
        try:
            return handler(value)
        except ValidationError as error:
            kind = error.errors()[0]["type"]
            if kind == "config":  # a part's own message (seeds[1]), or a check of ours
                raise
            finite = " (finite)" if kind == "finite_number" else ""
            raise _error(f"must be {rule}{finite}, {_got(value, integer)}") from None

    return WrapValidator(check)


def _bounds(gt: float | None = None, ge: float | None = None, le: float | None = None) -> str:
    if le is not None:
        return f"in {'(' if gt is not None else '['}{ge if gt is None else gt}, {le}]"
    return f"> {gt}" if gt is not None else f">= {ge}" if ge is not None else ""


def _number(alternative: str = "", **bounds: float) -> Any:
    """A finite int or float (not a bool) within `bounds`, as a float."""
    rule = f"a number {_bounds(**bounds)}".rstrip() + alternative
    kind = float | None if alternative == " or null" else float
    return Annotated[kind, Field(allow_inf_nan=False, **bounds), _rule(rule)]


def _integer(minimum: int, rule: str = "", **bounds: int) -> Any:
    rule = rule or f"an integer >= {minimum}"
    return Annotated[int, Field(ge=minimum, **bounds), _rule(rule, integer=True)]


def _choice(choices: tuple[str, ...]) -> Any:
    return Annotated[Literal[choices], _rule(f"one of {list(choices)}")]


def _unique(seeds: list[int]) -> list[int]:
    repeated = [seed for index, seed in enumerate(seeds) if seed in seeds[:index]]
    if repeated:
        raise _error(f"must not repeat a seed, got {repeated[0]} twice in {seeds}")
    return seeds


def _layers(alternative: str = "") -> Any:
    rule = "a non-empty list of integers >= 1" + alternative
    return Annotated[list[Annotated[int, Field(ge=1)]], Field(min_length=1), _rule(rule)]


def _none_is_empty(value: Any) -> Any:
    return {} if value is None else value


_BOOLEAN = Annotated[bool, _rule("true or false")]
_SEED = _integer(0, "an integer >= 0 and < 2**32 (numpy's limit)", lt=SEED_LIMIT)
_SEEDS = Annotated[
    list[_SEED],
    Field(min_length=1),
    AfterValidator(_unique),
    _rule("a non-empty list of integers >= 0"),
]
_ONE_SEED = TypeAdapter(_SEED)


class _Model(BaseModel):
    """A mapping with the keys of its fields only, each value of its field's type exactly."""

    model_config = ConfigDict(strict=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise _error(f"must be a mapping, got {data!r}")
        unknown = sorted(set(data) - set(cls.model_fields), key=str)
        if unknown:
            raise _error(cls._unknown(unknown[0]))
        return data

    @classmethod
    def _unknown(cls, key: Any) -> str:
        return f"unknown key '{key}'; allowed: {sorted(cls.model_fields)}"


def _given(model: _Model) -> dict[str, Any]:
    """The keys a mapping gave, in the order of the model's fields."""
    return {
        key: getattr(model, key)
        for key in type(model).model_fields
        if key in model.model_fields_set
    }


def _tagged(choose: Any, resolve: Any, **members: Any) -> Any:
    """A union whose member `choose(value)` names (so that an error is the member's own), its
    value resolved to plain data by `resolve`."""
    union = Union[tuple(Annotated[kind, Tag(tag)] for tag, kind in members.items())]  # noqa: UP007 (built)
    return Annotated[union, Discriminator(choose), AfterValidator(resolve)]


def _schedule(low: dict, high: dict, named: bool, visits: bool = False) -> Any:
    """A number or {schedule: constant, value} (one value throughout), or a linear schedule
    {schedule: linear, start, end, fraction}, its start and end within the bounds `low` and
    `high`. With `named` (PPO) the value resolves to a float or to {"schedule": "linear",
    ...}; without (Q-learning) a mapping with no `schedule` key is linear too, and the value
    resolves to {start, end, fraction}, or with `visits` a mapping with `power` to the
    visit-count step size {power[, offset]}."""

    class Constant(_Model):
        schedule: Literal["constant"]
        value: _number(**low)

    class Linear(_Model):
        schedule: _choice(SCHEDULES) = Field(... if named else "linear")
        start: _number(**low)
        end: _number(**high)
        fraction: _number(gt=0, le=1) = 1.0

    def resolve(value: Any) -> Any:
        if isinstance(value, _Visits):
            return _given(value)
        if isinstance(value, Linear):
            line = {"start": value.start, "end": value.end, "fraction": value.fraction}
            return {"schedule": "linear", **line} if named else line
        number = value.value if isinstance(value, Constant) else value
        return number if named else {"start": number, "end": number, "fraction": 1.0}

    def choose(value: Any) -> str:
        if not isinstance(value, dict):
            return "number"
        if visits and ("power" in value or "offset" in value):
            return "visits"
        return "constant" if value.get("schedule") == "constant" else "linear"

    number = _number(" or a schedule mapping", **low)
    kinds = {"number": number, "constant": Constant, "linear": Linear}
    return _tagged(choose, resolve, **kinds, **({"visits": _Visits} if visits else {}))


class _Visits(_Model):
    """{power, offset}: the step size (offset / (offset + n - 1))**power of a pair's n-th
    visit; power in (0.5, 1] (the Robbins-Monro conditions), offset >= 1 (1: 1 / n**power).
    The offset is kept only where given, so the identity of a run without it stays."""

    power: _number(gt=0.5, le=1)
    offset: _number(ge=1) = 1.0


UNIT, UNIT_OPEN_LOW = {"ge": 0, "le": 1}, {"gt": 0, "le": 1}


class QLearningParams(_Model):
    """training.qlearning's hyperparameters, resolved in this order."""

    gamma: _number(**UNIT_OPEN_LOW) = 1.0
    # An optimistic start (initial_q above every return) makes the agent try everything.
    initial_q: _number() = 0.0
    # 1: one env, stepped by the scalar learner; more: the native vector env, batched updates.
    n_envs: _integer(1) = QLEARNING_N_ENVS
    learning_rate: _schedule(UNIT, UNIT, False, visits=True) = Field(0.1, validate_default=True)
    epsilon: _schedule(UNIT, UNIT, False) = Field(0.1, validate_default=True)


class _NetArch(_Model):
    pi: _layers()
    vf: _layers()


class _PolicyKwargs(_Model):
    net_arch: _tagged(
        lambda value: "arch" if isinstance(value, dict) else "layers",
        lambda value: _given(value) if isinstance(value, _NetArch) else value,
        arch=_NetArch,
        layers=_layers(", or a mapping {pi: [...], vf: [...]}"),
    ) = None
    activation_fn: _choice(ACTIVATIONS) = None


class PPOParams(_Model):
    """The keys a PPO config may set: ours (with their defaults), then SB3's PPO arguments
    (None: not given, SB3's default applies)."""

    n_envs: _integer(1) = 8
    obs_encoding: _choice(OBS_ENCODINGS) = "onehot"
    reward_scale: _number(gt=0) = 1.0
    masked: Annotated[Literal["auto"] | bool, _rule("'auto', true or false")] = "auto"
    vec_env: _choice(VEC_ENVS) = "native"
    n_steps: _integer(2) = SB3_N_STEPS
    batch_size: _integer(2) = Field(SB3_BATCH_SIZE, validate_default=True)
    n_epochs: _integer(1) = None
    learning_rate: _schedule({"gt": 0}, {"ge": 0}, True) = None
    gamma: _number(**UNIT_OPEN_LOW) = None
    gae_lambda: _number(**UNIT) = None
    clip_range: _schedule({"gt": 0}, {"gt": 0}, True) = None
    clip_range_vf: _number(" or null", gt=0) = None
    normalize_advantage: _BOOLEAN = None
    ent_coef: _number(ge=0) = None
    vf_coef: _number(ge=0) = None
    max_grad_norm: _number(gt=0) = None
    target_kl: _number(" or null", gt=0) = None
    stats_window_size: _integer(1) = None
    policy_kwargs: Annotated[_PolicyKwargs, AfterValidator(_given)] = None

    @field_validator("batch_size")
    @classmethod
    def _one_rollout_at_most(cls, batch_size: int, info: ValidationInfo) -> int:
        n_steps, n_envs = info.data.get("n_steps"), info.data.get("n_envs")
        if n_steps and n_envs and batch_size > n_steps * n_envs:
            raise _error(
                f"must be <= n_steps * n_envs ({n_steps} * {n_envs} = {n_steps * n_envs}), "
                f"got {batch_size}"
            )
        return batch_size

    @classmethod
    def _unknown(cls, key: Any) -> str:
        supported = sorted(cls.model_fields)
        if key in SB3_UNSUPPORTED:
            return (
                f"unsupported key '{key}' (an SB3 PPO argument that configs do not set); "
                f"supported: {supported}"
            )
        return f"unknown key '{key}'; supported: {supported}"


class _Budget(_Model):
    timesteps: _integer(1)
    eval_every: _integer(1)
    seeds: _SEEDS = None

    @field_validator("eval_every")
    @classmethod
    def _within_timesteps(cls, eval_every: int, info: ValidationInfo) -> int:
        timesteps = info.data.get("timesteps")
        if timesteps is not None and eval_every > timesteps:
            raise _error(f"must be <= timesteps ({timesteps}), got {eval_every}")
        return eval_every


class _Budgets(_Model):
    quick: _Budget = None  # None: not given (an explicit null is refused)
    full: _Budget = None


class _Evaluation(_Model):
    episodes: _integer(0) = 300
    exploitability: _BOOLEAN = False


class _QLearningSelfPlay(_Model):
    starts: _choice(SELFPLAY_STARTS) = "anywhere"


class _PPOSelfPlay(_Model):
    pool: _integer(1) = SELFPLAY_POOL
    policies: _choice(SELFPLAY_POLICIES) = "greedy"


def _registered(env_id: Any) -> Any:
    if env_id not in env_ids():
        raise _error(f"must be one of {list(env_ids())}, got {env_id!r}")
    return env_id


class _Config(_Model):
    env_id: Annotated[str, BeforeValidator(_registered)]
    env_kwargs: Annotated[dict, _rule("a mapping"), BeforeValidator(lambda v: v or {})] = {}
    algo: _choice(ALGOS)
    seeds: _SEEDS = [0]
    evaluation: Annotated[_Evaluation, BeforeValidator(_none_is_empty)] = _Evaluation()
    budgets: _Budgets


class _QLearningConfig(_Config):
    hyperparams: Annotated[QLearningParams, BeforeValidator(_none_is_empty)]
    selfplay: _QLearningSelfPlay = None  # None: no self-play (an explicit null is refused)


class _PPOConfig(_Config):
    hyperparams: Annotated[PPOParams, BeforeValidator(_none_is_empty)]
    selfplay: _PPOSelfPlay = None


def resolve_config(raw: Any, budget: str = "quick", source: str = "config") -> dict[str, Any]:
    """Check a config mapping and return it resolved for `budget`."""
    if budget not in BUDGETS:
        raise ConfigError(f"budget must be one of {list(BUDGETS)}, got {budget!r}")
    ppo = isinstance(raw, dict) and raw.get("algo") == "ppo"
    try:
        config = (_PPOConfig if ppo else _QLearningConfig).model_validate(raw)
    except ValidationError as error:
        raise ConfigError(f"{source}: {_explained(error, 'a config')}") from None
    chosen = getattr(config.budgets, budget)
    if chosen is None:
        raise ConfigError(f"{source}: budgets has no '{budget}' entry")
    try:
        model = make_model(config.env_id, **config.env_kwargs)
    except (TypeError, ValueError) as error:
        raise ConfigError(f"{source}: env_kwargs: {_one_line(error)}") from None
    selfplay = _check_selfplay(config, model, source)
    episodes, exploitability = config.evaluation.episodes, config.evaluation.exploitability
    exploitability |= selfplay is not None  # the measure of a self-play agent
    if exploitability and not hasattr(model, "opponent_policy"):
        raise ConfigError(
            f"{source}: evaluation.exploitability needs a two-player game (Pig, TwoDicePig, "
            f"Hog, SimultaneousHog), not {config.env_id}"
        )
    if not game(config.env_id).tables and episodes < 2:
        raise ConfigError(
            f"{source}: evaluation.episodes must be an integer >= 2 for {config.env_id} (the "
            f"episodes of its sampled gap, which needs a standard error), got {episodes}"
        )
    params = config.hyperparams
    if ppo:  # the keys given, in their order, then our own keys' defaults
        hyperparams = {key: getattr(params, key) for key in raw["hyperparams"] or {}}
        hyperparams.update(
            {key: getattr(params, key) for key in PPO_OWN_KEYS if key not in hyperparams}
        )
    else:
        hyperparams = dict(params)
    resolved = {
        "env_id": config.env_id,
        "env_kwargs": copy.deepcopy(config.env_kwargs),
        "algo": config.algo,
        "budget": budget,
        "timesteps": chosen.timesteps,
        "eval_every": chosen.eval_every,
        "seeds": list(chosen.seeds or config.seeds),
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


def _check_selfplay(config: _Config, model: Any, source: str) -> dict[str, Any] | None:
    """Self-play's demands on the game and the hyperparameters; returns it resolved."""
    if config.selfplay is None:
        return None
    where, params = f"{source}: selfplay", config.hyperparams
    if not hasattr(model, "opponent_policy"):
        raise ConfigError(
            f"{where} needs a two-player game (Pig, TwoDicePig, Hog, SimultaneousHog)"
        )
    if isinstance(params, PPOParams):
        if params.vec_env != "native":
            raise ConfigError(
                f"{source}: hyperparams.vec_env must be native for self-play, "
                f"got {params.vec_env!r}"
            )
        selfplay = dict(config.selfplay)
        if selfplay["policies"] == "greedy":  # only what differs from before: run identities stay
            del selfplay["policies"]
        return selfplay
    if getattr(getattr(model, "model", None), "simultaneous", False):
        raise ConfigError(
            f"{where}: self-play Q-learning plays alternating moves; {config.env_id} is "
            "simultaneous (use PPO with selfplay.policies: stochastic)"
        )
    if params.gamma != 1.0:
        raise ConfigError(
            f"{source}: hyperparams.gamma must be 1.0 for self-play (values are win "
            f"probabilities), got {params.gamma}"
        )
    if params.n_envs < 2:
        raise ConfigError(f"{source}: hyperparams.n_envs must be >= 2 for self-play")
    return dict(config.selfplay)

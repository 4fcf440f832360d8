"""Any policy form as one batched policy: `as_policy(spec, model)`, the one converter every
door uses (evaluation, opponents, exploitability, the sampled gap, the command line).

It lives with the game models, below the registry, because a fold's opponent is converted
while its model is built; `dice_envs.policies` is its public home.
"""

from __future__ import annotations

import functools
import inspect
import os
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import numpy as np

# Forms a package outside dice_envs converts (baselines: SB3 models; training: run folders), so
# that dice_envs imports neither. Each entry point is
# f(spec, model, obs_transform, deterministic) -> BatchedPolicy, or None for a form it does not
# take.
POLICY_FORM_ENTRY_POINTS = "dice_envs.policy_forms"

# A Python callable asked once per observation on more observations than this is slow: a
# warning says so and names the fast forms.
SLOW_CALLS = 100_000

# How far a row of action probabilities may sum from 1 before it is refused: a network's
# float32 softmax is off by about 1e-7.
PROBABILITY_TOLERANCE = 1e-6


class PolicyError(ValueError):
    """A policy that does not fit its game: a table of the wrong shape or contents, a file
    that holds none, or answers the game does not take (an action out of range, probabilities
    that do not sum to 1, an observation a mapping lacks). Raised while a policy is read or
    asked, so a caller can tell the user's policy from a defect."""


@dataclass(eq=False)
class BatchedPolicy:
    """Any policy form as one thing: asked on a batch of observations.

    `ask(observations, legal)` takes an (n, d) int64 array of observations as the game shows
    them and, when `needs_legal`, their (n, num_actions) legal-action masks (else None), and
    returns the policy's raw answer; `answer` checks it. `per_observation` marks forms that
    make a Python call per observation (slow on large batches); `whole_grid` False marks
    forms that answer only the observations of their own states (a solution), not every
    cell of the observation grid; `table` is a table form's whole table over the grid;
    `reads` the observation components its answers depend on (a `Rule`'s; None: any).
    """

    ask: Callable[[np.ndarray, np.ndarray | None], Any]
    num_actions: int
    name: str = "policy"
    needs_legal: bool = False
    per_observation: bool = False
    whole_grid: bool = True
    table: np.ndarray | None = None
    reads: tuple[int, ...] | None = None

    def answer(self, observations: np.ndarray, legal: np.ndarray | None = None) -> np.ndarray:
        """(n,) int64 actions, or (n, num_actions) float64 action probabilities (each row
        summing to 1), for the (n, d) `observations`; a ValueError names the first observation
        with an answer that is neither."""
        if self.needs_legal and legal is None:
            raise PolicyError(f"{self.name} needs the legal actions of the observations")
        return checked_answer(self.ask(observations, legal), observations, self.num_actions)

    def __repr__(self) -> str:
        return f"BatchedPolicy({self.name})"


def observation_key(row: np.ndarray) -> Any:
    """One observation as the env shows it: an int, or a tuple of ints."""
    values = np.asarray(row).tolist()
    return values[0] if len(values) == 1 else tuple(values)


def checked_answer(raw: Any, observations: np.ndarray, num_actions: int) -> np.ndarray:
    """A policy's answer for `observations` as (n,) int64 actions or (n, num_actions) float64
    probabilities, or a ValueError naming the first observation answered badly."""
    n = len(observations)
    if isinstance(raw, list):  # one answer per observation: actions, or some rows probabilities
        raw = _stacked(raw, observations, num_actions)
    answer = np.asarray(raw)
    if answer.shape == (n, num_actions) and np.issubdtype(answer.dtype, np.floating):
        return _checked_probabilities(answer, observations)
    if answer.shape in ((n,), (n, 1)):
        return _checked_actions(answer.reshape(n), observations, num_actions)
    raise PolicyError(
        f"a policy must answer ({n},) actions or ({n}, {num_actions}) action probabilities for "
        f"{n} observations; got shape {answer.shape} of {answer.dtype}"
    )


def _stacked(answers: list, observations: np.ndarray, num_actions: int) -> np.ndarray:
    rows = [np.asarray(a) for a in answers]
    if all(row.ndim == 0 for row in rows):
        return np.array([_one_action(a, o) for a, o in zip(rows, observations, strict=True)])
    stacked = np.zeros((len(rows), num_actions))
    for i, row in enumerate(rows):
        if row.ndim == 0:
            stacked[i, _one_action(row, observations[i]) % num_actions] = 1.0
            if not 0 <= int(row) < num_actions:
                _checked_actions(row.reshape(1), observations[i : i + 1], num_actions)
        elif row.shape == (num_actions,) and np.issubdtype(row.dtype, np.floating):
            stacked[i] = row
        else:
            raise PolicyError(
                f"the policy answered {row.tolist()!r} for observation "
                f"{observation_key(observations[i])}; it must answer an action or "
                f"{num_actions} action probabilities"
            )
    return stacked


def _one_action(answer: np.ndarray, observation: np.ndarray) -> int:
    if answer.dtype == bool or not np.issubdtype(answer.dtype, np.integer):
        raise PolicyError(
            f"the policy answered {answer.tolist()!r} for observation "
            f"{observation_key(observation)}; it must answer an integer action"
        )
    return int(answer)


def _checked_actions(actions: np.ndarray, observations: np.ndarray, num_actions: int):
    if actions.dtype == bool or not np.issubdtype(actions.dtype, np.number):
        raise PolicyError(f"a policy's actions must be integers, got {actions.dtype}")
    if not np.issubdtype(actions.dtype, np.integer):
        whole = np.isfinite(actions) & (actions == np.round(actions))
        if not whole.all():
            i = int(np.flatnonzero(~whole)[0])
            raise PolicyError(
                f"the policy answered {actions[i].item()!r} for observation "
                f"{observation_key(observations[i])}; actions are whole numbers"
            )
    bad = (actions < 0) | (actions >= num_actions)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise PolicyError(
            f"the policy chose action {actions[i].item()!r} for observation "
            f"{observation_key(observations[i])}; actions are 0..{num_actions - 1}"
        )
    return actions.astype(np.int64)


def _checked_probabilities(probs: np.ndarray, observations: np.ndarray) -> np.ndarray:
    probs = probs.astype(np.float64, copy=False)
    sums = probs.sum(axis=1)
    # Whole-array checks first (an opponent's table has millions of rows); rows only to name
    # the first bad one.
    if not (np.isfinite(sums).all() and probs.min(initial=0.0) >= 0) or (
        np.abs(sums - 1.0).max(initial=0.0) > PROBABILITY_TOLERANCE
    ):
        bad = ~np.isfinite(probs).all(axis=1) | (probs < 0).any(axis=1)
        bad |= np.abs(sums - 1.0) > PROBABILITY_TOLERANCE
        i = int(np.flatnonzero(bad)[0])
        raise PolicyError(
            f"the policy's probabilities for observation {observation_key(observations[i])} "
            f"are {probs[i].tolist()}; they must sum to 1 (within {PROBABILITY_TOLERANCE}) "
            "and be >= 0"
        )
    if (sums == 1.0).all():
        return probs
    return probs / sums[:, None]  # round-off only: the check above holds


class GridRows:
    """The observations of the grid `nvec` in C order, row i made only when asked (for the
    messages of `checked_answer` on a whole grid's table)."""

    def __init__(self, nvec: tuple[int, ...]) -> None:
        self.nvec = nvec

    def __len__(self) -> int:
        return int(np.prod(self.nvec))

    def __getitem__(self, i: int) -> np.ndarray:
        return np.array(np.unravel_index(i, self.nvec))


def as_policy(
    spec: Any, model: Any, *, obs_transform: Any = None, deterministic: bool = True
) -> BatchedPolicy:
    """Any accepted policy form, for the game `model`, as a `BatchedPolicy`.

    Accepted: a name (the model's `policy_names`; "optimal", the optimum of the game exactly
    as registered with its arguments, for a model made by `dice_envs.make_model`; a fold's
    "two-player-optimal" or "equilibrium"; these three come from the package registered under
    the `dice_envs.policies` entry points, `baselines`); a numpy table over the observation
    grid, of actions (shape `observation_nvec`) or action probabilities (a last axis of
    `num_actions`), or the path of a saved `.npy` table; a solution or an equilibrium (its
    `probabilities()` table where it has one, mixtures played as mixtures, else its
    `batched_policy()`); a batched callable (`batched(f)`, a `Rule`: all observations at once);
    a mapping from observation (an int, or a tuple of ints) to action; an object with
    `action(observation)`; a callable taking one observation (an int, or an int64 array) and
    returning an action or a probability vector; and what other packages register under the
    `dice_envs.policy_forms` entry points (baselines: SB3 models and saved `.zip` models;
    training: run folders). A `BatchedPolicy` is returned as it is.

    `obs_transform`: for a model or callable trained through an observation wrapper, called on
    the batch of raw observations ((n,) for a scalar observation, else (n, d)), returning one
    row per observation. `deterministic=False`: an SB3 model's action distribution instead of
    its greedy action (other forms say what they play). A ValueError names what does not fit.
    """
    if isinstance(spec, BatchedPolicy):
        return spec
    _check_arguments(spec, obs_transform, deterministic)
    nvec, num_actions = tuple(int(n) for n in model.observation_nvec), int(model.num_actions)
    if isinstance(spec, str):
        converted = as_policy(resolve_name(model, spec), model)
        converted.name = repr(spec)
        return converted
    if isinstance(spec, os.PathLike) and Path(spec).suffix == ".npy":
        spec = load_table(Path(spec))
    if callable(getattr(spec, "probabilities", None)):
        spec = np.asarray(spec.probabilities())
    elif callable(getattr(spec, "batched_policy", None)) and obs_transform is None:
        solved = as_policy(spec.batched_policy(), model)
        solved.name, solved.whole_grid = type(spec).__name__, False
        return solved
    if isinstance(spec, np.ndarray):
        return _table_policy(spec, nvec, num_actions, model)
    called = _called_policy(spec, nvec, num_actions, obs_transform)
    if called is not None:
        return called
    for form in _policy_forms():
        converted = form(spec, model, obs_transform, deterministic)
        if converted is not None:
            return converted
    raise ValueError(
        "policy must be a name, a numpy table, a solution, a batched callable, a mapping, a "
        f"callable or an SB3 model; got {type(spec).__name__}"
    )


def _check_arguments(spec: Any, obs_transform: Any, deterministic: Any) -> None:
    """A ValueError for an `obs_transform` or `deterministic` that cannot apply to `spec`."""
    if obs_transform is not None and not callable(obs_transform):
        raise ValueError(f"obs_transform must be callable or None, got {obs_transform!r}")
    if not isinstance(deterministic, bool):
        raise ValueError(f"deterministic must be True or False, got {deterministic!r}")
    table_like = isinstance(spec, str | np.ndarray | Mapping | os.PathLike) or callable(
        getattr(spec, "probabilities", None)
    )
    if obs_transform is not None and table_like:
        raise ValueError(
            "obs_transform is for models and callables: a name, a table, a solution or a "
            "mapping is read on the game's own observations"
        )
    if not deterministic and not _other_form(spec):
        raise ValueError(
            "deterministic=False is for SB3 models (their action distribution); give a "
            "stochastic policy as action probabilities otherwise"
        )


def _called_policy(
    spec: Any, nvec: tuple[int, ...], num_actions: int, obs_transform: Any
) -> BatchedPolicy | None:
    """A batched callable, a mapping, an object with `action`, or a callable as a
    `BatchedPolicy`; None for any other form."""
    inputs = PolicyInput(len(nvec) == 1, obs_transform)
    name = getattr(spec, "name", type(spec).__name__)
    if callable(getattr(spec, "batch", None)):
        reads = getattr(spec, "reads", None) if obs_transform is None else None
        return BatchedPolicy(_BatchAsk(spec.batch, inputs), num_actions, name, reads=reads)
    if isinstance(spec, Mapping):
        return BatchedPolicy(_MappingAsk(spec), num_actions, "<mapping>", per_observation=True)
    if callable(getattr(spec, "action", None)):
        ask = _OneByOne(spec.action, PolicyInput(len(nvec) == 1))
        return BatchedPolicy(ask, num_actions, name, per_observation=True)
    if callable(spec):
        if len(nvec) > 1 and _takes_components(spec, len(nvec)):
            raise ValueError(
                "a policy callable takes the observation, f(observation) (an int64 array of "
                f"{len(nvec)} components), and returns an action or a probability vector; "
                "f(own, other, ...) with one argument per component is no longer taken (since "
                "0.6.0): pass lambda observation: f(*observation), or a batched policy "
                "(dice_envs.policies.batched)"
            )
        ask = _OneByOne(spec, inputs)
        return BatchedPolicy(ask, num_actions, "<callable>", per_observation=True)
    return None


def _other_form(spec: Any) -> bool:
    """Whether `spec` is a form only another package converts (an SB3 model, a path)."""
    own = isinstance(spec, str | np.ndarray | Mapping) or callable(spec)
    solution = callable(getattr(spec, "probabilities", None)) or callable(
        getattr(spec, "batched_policy", None)
    )
    return not (own or solution or callable(getattr(spec, "action", None)))


def resolve_name(model: Any, name: str) -> Any:
    """The policy called `name`: the model's own, else one a package registers (entry points
    `dice_envs.policies`: "optimal", the optimum of a registered game, from `baselines`)."""
    own = getattr(model, "named_policy", None)
    named = None if own is None else own(name)
    if named is None:
        plugin = name_plugins().get(name)
        if plugin is None or name in SEAT_SOLUTIONS:  # those only through a seat (see below)
            raise ValueError(
                f"policy for {game_label(model)} must be one of "
                f"{', '.join(model_policy_names(model))}; got {name!r}"
            )
        named = plugin.load()(model)
    return named


# The policy names whose policies a solver package supplies (entry points "dice_envs.policies")
# and what each is. "optimal" is the optimum of any registered game as registered, its opponent
# included; the other two are the optimum of a two-player model, played from a seat (a fold's
# named policies and opponents), for alternating and for simultaneous moves.
SOLVED_POLICIES = {
    "optimal": "the optimum of this game as registered, with these arguments (baselines.solve)",
    "two-player-optimal": "the two-player optimum: both players maximise their win "
    "probability (baselines.two_player)",
    "equilibrium": "the equilibrium of the simultaneous game: its mixed strategy, which "
    "no opponent can exploit (baselines.simultaneous)",
}
SEAT_SOLUTIONS = ("two-player-optimal", "equilibrium")


def seat_solution(model: Any) -> str:
    """The name of a two-player model's own optimum as a policy of one seat: "equilibrium"
    for simultaneous moves, else "two-player-optimal"."""
    return "equilibrium" if getattr(model, "simultaneous", False) else "two-player-optimal"


def model_policy_names(model: Any) -> tuple[str, ...]:
    """The names `as_policy` takes for `model`: its own (patterns such as "hold-at-K") and,
    for a model made from a registered game, "optimal"."""
    own = tuple(getattr(model, "policy_names", ()))
    registered = getattr(model, "game_spec", None) is not None and "optimal" not in own
    return (*own, "optimal") if registered else own


def game_label(model: Any) -> str:
    """How messages name a model's game: its registered id and arguments where it was made
    from them (`dice_envs.make_model`), else its repr."""
    spec = getattr(model, "game_spec", None)
    return repr(model) if spec is None else str(spec)


def describe_policy(model: Any, name: str) -> str:
    """What the named policy `name` of `model` is, in one line ("holds once the turn total
    reaches 20"); a ValueError for a name the model does not take.

    A model describes its own names in `policy_descriptions` (name or pattern -> text, where a
    pattern's K stands for a whole number and the text's K for its value); a fold's opponent is
    described by its own line."""
    if not isinstance(name, str):
        raise ValueError(f"name must be a string, got {name!r}")
    own = describe_own(getattr(model, "policy_descriptions", {}), name)
    if own is not None:
        return own
    if name in getattr(model, "policy_names", ()) or any(
        describe_own({pattern: "?"}, name) for pattern in getattr(model, "policy_names", ())
    ):
        return "a policy the game names (its model describes none: policy_descriptions)"
    if name == "optimal" and name in model_policy_names(model):
        opponent = getattr(model, "opponent", None)
        if isinstance(opponent, str):  # a fold: the best response to its opponent
            inner = getattr(model, "model", None)
            them = describe_own(getattr(inner, "policy_descriptions", {}), opponent)
            shown = opponent if them is None else f"{opponent} ({them})"
            return f"the best response to its opponent {shown}: {SOLVED_POLICIES[name]}"
        return SOLVED_POLICIES[name]
    if name in SOLVED_POLICIES and name in model_policy_names(model):
        return SOLVED_POLICIES[name]
    plugin = name_plugins().get(name)
    if plugin is not None and name not in SOLVED_POLICIES:  # another package's name
        doc = inspect.getdoc(plugin.load()) or f"a policy of {plugin.value}"
        return doc.split("\n\n")[0].replace("\n", " ")
    raise ValueError(
        f"policy for {game_label(model)} must be one of "
        f"{', '.join(model_policy_names(model))}; got {name!r}"
    )


def describe_own(descriptions: Mapping[str, str], name: str) -> str | None:
    """`name`'s line from a model's `policy_descriptions` (K of a pattern filled in), or
    None."""
    if name in descriptions:
        return descriptions[name]
    for pattern, text in descriptions.items():
        prefix, k, suffix = pattern.partition("K")
        found = k and re.fullmatch(f"{re.escape(prefix)}(\\d+){re.escape(suffix)}", name)
        if found:
            return re.sub(r"\bK\b", found.group(1), text)
    return None


# What a saved policy table holds, as messages about a file that does not say.
TABLE_WANTED = (
    "a numpy array saved with numpy.save: integer actions over the game's observation grid, "
    "or floats with a last axis of action probabilities"
)


def load_table(path: Path) -> np.ndarray:
    """The policy table saved at `path` (a .npy file), or a ValueError in one line naming the
    file, what is wrong with it and what it should hold."""
    if not path.is_file():
        raise PolicyError(f"policy file {path} does not exist; give {TABLE_WANTED}")
    with open(path, "rb") as file:
        magic = file.read(6)
    if magic != b"\x93NUMPY":
        raise PolicyError(f"{path} is not a .npy file (no numpy header); give {TABLE_WANTED}")
    try:
        table = np.load(path, allow_pickle=False)
    except ValueError as error:
        if "allow_pickle" in str(error):  # a header saying dtype object
            raise PolicyError(
                f"{path} holds Python objects, not numbers; give {TABLE_WANTED}"
            ) from None
        raise PolicyError(f"{path} is truncated or damaged; give {TABLE_WANTED}") from None
    except (OSError, EOFError):
        raise PolicyError(f"{path} is truncated or damaged; give {TABLE_WANTED}") from None
    return table


def _table_policy(
    table: np.ndarray, nvec: tuple[int, ...], num_actions: int, model: Any
) -> BatchedPolicy:
    """A table over the observation grid: of actions, or of action probabilities."""
    if table.dtype == bool or not np.issubdtype(table.dtype, np.number):
        raise PolicyError(f"a policy table must hold actions or probabilities, got {table.dtype}")
    probabilities = table.shape == nvec + (num_actions,)
    if probabilities and not np.issubdtype(table.dtype, np.floating):
        raise PolicyError(f"a table of action probabilities must hold floats, got {table.dtype}")
    if probabilities and np.issubdtype(table.dtype, np.floating) or table.shape == nvec:
        return BatchedPolicy(_TableAsk(table), num_actions, "<table>", table=table)
    raise PolicyError(
        f"a policy table must have shape {nvec} (actions) or {nvec + (num_actions,)} "
        f"(probabilities) for {game_label(model)}; got {table.shape}"
    )


class _MappingAsk:
    """A mapping's action for each observation; every one asked must be a key."""

    def __init__(self, mapping: Mapping) -> None:
        self.mapping = mapping

    def __call__(self, observations: np.ndarray, legal: np.ndarray | None) -> list:
        keys = [observation_key(row) for row in observations]
        missing = [key for key in keys if key not in self.mapping]
        if missing:
            shown = ", ".join(str(key) for key in sorted(missing)[:5])
            raise PolicyError(
                f"the policy mapping has no action for {len(missing)} of the {len(keys)} "
                f"observations asked, e.g. {shown}{', ...' if len(missing) > 5 else ''}"
            )
        return [self.mapping[key] for key in keys]


class PolicyInput:
    """What a policy is given for an (n, d) batch of observations: (n,) for a scalar
    observation, else (n, d), through `obs_transform` (checked: one row per observation)."""

    def __init__(self, scalar: bool, obs_transform: Callable | None = None) -> None:
        self.scalar, self.obs_transform = scalar, obs_transform

    def __call__(self, observations: np.ndarray) -> np.ndarray:
        batch = observations[:, 0] if self.scalar else observations
        if self.obs_transform is None:
            return batch
        rows = np.asarray(self.obs_transform(batch))
        if rows.ndim == 0 or len(rows) != len(batch):
            raise PolicyError(
                f"obs_transform must return one row per observation: it turned a batch of "
                f"shape {batch.shape} into shape {rows.shape}"
            )
        return rows


class _TableAsk:
    def __init__(self, table: np.ndarray) -> None:
        self.table = table

    def __call__(self, observations: np.ndarray, legal: np.ndarray | None) -> np.ndarray:
        return self.table[tuple(observations.T)]


class _BatchAsk:
    def __init__(self, batch: Callable, inputs: PolicyInput) -> None:
        self.batch, self.inputs = batch, inputs

    def __call__(self, observations: np.ndarray, legal: np.ndarray | None) -> Any:
        return self.batch(self.inputs(observations))


class _OneByOne:
    """A callable asked once per observation (an int for a scalar observation, else an int64
    array; or a row of the transformed batch)."""

    def __init__(self, function: Callable, inputs: PolicyInput) -> None:
        self.function, self.inputs = function, inputs

    def __call__(self, observations: np.ndarray, legal: np.ndarray | None) -> list:
        if len(observations) > SLOW_CALLS:
            warnings.warn(
                f"the policy is a Python callable asked once per observation, "
                f"{len(observations):,} times here; dice_envs.policies.batched(f) (f takes all "
                "observations at once) or a table over the observation grid is much faster",
                stacklevel=4,
            )
        rows = self.inputs(observations)
        if self.inputs.scalar and self.inputs.obs_transform is None:
            return [self.function(value) for value in rows.tolist()]
        return [self.function(row) for row in rows]


def _takes_components(function: Callable[..., Any], components: int) -> bool:
    """Whether `function` takes one positional argument per observation component."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    return len(required) == components


@functools.cache
def name_plugins() -> dict[str, Any]:
    return {point.name: point for point in entry_points(group="dice_envs.policies")}


@functools.cache
def _policy_forms() -> tuple[Callable, ...]:
    return tuple(point.load() for point in entry_points(group=POLICY_FORM_ENTRY_POINTS))

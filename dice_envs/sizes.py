"""How much memory and time an operation on a game needs, estimated from its arguments before
any work, and the check that refuses what would not fit.

    from dice_envs import sizes
    sizes.estimate("dice_envs/Pig-v0", "evaluate", goal=300)   # Estimate(... GB, ... s)
    sizes.check("dice_envs/Pig-v0", "evaluate", {"goal": 300})  # ValueError: over the limit

An estimate is the game's table size (`TableSize`: states and outcome rows, from the model's
own `table_size()`, read off its arguments; a game without one gets the observation grid)
times rates measured on this project's machine (`RATES`, `BASE_BYTES`; `python -m
benchmarks.sizes` measures them again and prints estimate / measured). A game whose own
solvers build no tables (Yahtzee, Chow-Robbins' banded pass, Pig's layered solver, Simultaneous
Hog's equilibrium) gives its own estimate through its registration's `cost` hook.

The limit is `max_memory` where given, else the environment variable DICE_ENVS_MAX_MEMORY,
else 75 % of physical memory. `baselines.solve`, `evaluate`, `exploitability` and
`equilibrium` check before they start; the command line checks before it loads anything.
"""

from __future__ import annotations

import inspect
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from dice_envs.games.base import TableSize, build_model, load
from dice_envs.registration import Game, game

OPERATIONS = ("solve", "evaluate", "exploitability", "equilibrium", "play")
MEMORY_FRACTION = 0.75
MEMORY_VARIABLE = "DICE_ENVS_MAX_MEMORY"
# A `max_memory` that nothing passes: for a call inside one whose estimate was checked.
NO_LIMIT = 2**62

# A fresh process that has imported dice_envs, numpy, scipy and baselines: ru_maxrss of
# `python -c "import baselines"` here (103 MB).
BASE_BYTES = 105e6

# A specialised solve maps its answer onto the tables (for its Bellman residual) up to this
# many outcome rows; beyond, the tables would take longer than the solve and the residual is
# NaN (`baselines.exact` reads it from here, and so do the `cost` hooks).
TABLE_ROWS_LIMIT = 20_000_000

# Outcome rows per state of a game without its own `table_size()`: its observation grid is
# taken as its states, each action with this many outcomes (the median over the registered
# games' tables is about 7).
DEFAULT_OUTCOMES = 8


@dataclass(frozen=True)
class Rates:
    """What one kind of work costs per state and outcome row of the tables.

    Attributes:
        bytes_per_row: peak memory per outcome row, above `BASE_BYTES`.
        bytes_per_state: peak memory per state, above `BASE_BYTES`.
        seconds_per_row: wall time per outcome row.
        seconds_per_state: wall time per state.
    """

    bytes_per_row: float
    bytes_per_state: float
    seconds_per_row: float
    seconds_per_state: float = 0.0


# Measured by `python -m benchmarks.sizes` on this project's machine (2 cores, 24 GiB; peak
# RSS of a fresh process, less BASE_BYTES; 2026-11), each the whole operation, its tables
# included. Keyed by the kind of work and the table builder: "vectorised" for a model with
# the batch form of its rules (fitted on Pig-v0 at goal 80 to 160 and Hog-v0 at 60),
# "generic" (pure Python, a Python object per state; fitted on DieStopping, RedBlackCards,
# ChowRobbins and SumAvoid, whose table sizes are exact).
RATES: dict[tuple[str, str], Rates] = {
    # tables, the optimum (backward induction, value iteration or the game's own solver)
    # and its Bellman residual
    ("solve", "vectorised"): Rates(75.0, 60.0, 0.45e-6),
    ("solve", "generic"): Rates(100.0, 450.0, 1.3e-6, 9e-6),
    # ... and the optimum's visits and the policy's values and visits (two sparse LUs)
    ("evaluate", "vectorised"): Rates(110.0, 60.0, 0.9e-6),
    ("evaluate", "generic"): Rates(130.0, 550.0, 1.5e-6, 10e-6),
}


@dataclass(frozen=True)
class Cost:
    """A game's own estimate of an operation (its registration's `cost` hook).

    Attributes:
        bytes: peak memory of the process, `BASE_BYTES` included.
        seconds: wall time.
        argument: the argument to lower to need less.
    """

    bytes: float
    seconds: float
    argument: str


@dataclass(frozen=True)
class Estimate:
    """The memory and time an operation on a game is expected to need.

    Attributes:
        env_id: the game.
        operation: one of `OPERATIONS`.
        kwargs: the game's arguments as given.
        bytes: expected peak memory of the process (`BASE_BYTES` included).
        seconds: expected wall time.
        argument: the argument to lower to need less.
        size: the table size it was read from (None for a game's own `cost`).
    """

    env_id: str
    operation: str
    kwargs: dict[str, Any] = field(repr=False)
    bytes: float
    seconds: float
    argument: str
    size: TableSize | None = field(default=None, repr=False)

    def __str__(self) -> str:
        return f"about {format_bytes(self.bytes)} and {format_seconds(self.seconds)}"


def estimate(env_id: str, operation: str = "solve", **kwargs: Any) -> Estimate:
    """The memory and time `operation` on `env_id` with `kwargs` is expected to need, from the
    arguments alone (no tables are built; the model is made only where that is cheap: a
    game's two-player model rather than its fold, whose opponent may be a solve)."""
    if operation not in OPERATIONS:
        raise ValueError(f"operation must be one of {', '.join(OPERATIONS)}; got {operation!r}")
    entry = game(env_id)
    own = _game_arguments(entry.factory, kwargs)
    key = None
    if all(_plain(v) for v in own.values()):  # evaluations in a training loop ask often
        key = (env_id, id(entry), operation, tuple(sorted((k, repr(v)) for k, v in own.items())))
    found = _ESTIMATES.get(key) if key is not None else None
    if found is None:
        found = _estimate(entry, operation, own)
        if key is not None:
            _ESTIMATES[key] = found
    memory, seconds, argument, size = found
    return Estimate(env_id, operation, dict(kwargs), memory, seconds, argument, size)


_ESTIMATES: dict[tuple, tuple[float, float, str, TableSize | None]] = {}


def _estimate(entry: Game, operation: str, own: dict[str, Any]):
    hook = entry.hook("cost")
    cost = None if hook is None else hook(operation, own)
    if cost is not None:
        return cost.bytes, cost.seconds, cost.argument, None
    model, size = table_size(entry.factory, own)
    builder = "vectorised" if hasattr(model, "batch_transitions") else "generic"
    kind = "evaluate" if operation == "evaluate" else "solve"
    rates = RATES[(kind, builder)]
    memory = BASE_BYTES + size.rows * rates.bytes_per_row + size.states * rates.bytes_per_state
    seconds = size.rows * rates.seconds_per_row + size.states * rates.seconds_per_state
    return memory, seconds, size.argument, size


def _plain(value: Any) -> bool:
    if value is None or isinstance(value, bool | int | float | str):
        return True
    return isinstance(value, tuple | list) and all(_plain(v) for v in value)


def table_size(factory: Any, kwargs: Mapping[str, Any]) -> tuple[Any, TableSize]:
    """The model `factory(**kwargs)` stands for (a fold's two-player model alone) and its
    table size: its `table_size()` where it has one, else its observation grid with
    `DEFAULT_OUTCOMES` outcomes per action."""
    model_class = load(factory)
    two_player = getattr(model_class, "model_class", None)
    if two_player is not None:  # a fold: its opponent is not needed to count its tables
        model = two_player(**_game_arguments(two_player, kwargs))
        default = inspect.signature(model_class).parameters.get("opponent")
        opponent = kwargs.get("opponent", None if default is None else default.default)
        size = _fold_size(model, opponent)
    else:
        model = build_model(factory, dict(kwargs))
        sizer = getattr(model, "table_size", None)
        size = None if sizer is None else sizer()
    if size is None:
        nvec = [int(n) for n in getattr(model, "observation_nvec", (1,))]
        states = float(math.prod(nvec))
        rows = states * model.num_actions * DEFAULT_OUTCOMES
        size = TableSize(states, rows, _largest_argument(factory, kwargs))
    return model, size


def estimated_rows(model: Any) -> int:
    """A made model's estimated outcome rows (a fold's from its two-player model): a
    `solver_rows` hook for a specialised solver that needs no tables, so that tables too large
    to be worth it are not built for its Bellman residual."""
    two_player = getattr(model, "model", None)
    if hasattr(model, "opponent_policy"):  # a fold
        size = _fold_size(two_player, getattr(model, "opponent", None))
        if size is not None:
            return int(size.rows)
    sizer = getattr(model, "table_size", None)
    if sizer is not None and sizer() is not None:
        return int(sizer().rows)
    nvec = [int(n) for n in getattr(model, "observation_nvec", (1,))]
    return int(math.prod(nvec) * model.num_actions * DEFAULT_OUTCOMES)


def _fold_size(model: Any, opponent: object) -> TableSize | None:
    """A two-player model's estimate of its fold's tables against `opponent` (None if it
    gives none)."""
    sizer = getattr(model, "table_size", None)
    if sizer is None:
        return None
    if "opponent" in inspect.signature(sizer).parameters:
        return sizer("fold", opponent=opponent)
    return sizer("fold")


def check(
    env_id: str,
    operation: str,
    kwargs: Mapping[str, Any],
    *,
    max_memory: int | float | str | None = None,
) -> Estimate:
    """The estimate of `operation`, or a one-line ValueError naming the game, the arguments,
    the estimate, the limit (`memory_limit(max_memory)`) and the argument to lower when it
    would need more memory than that."""
    found = estimate(env_id, operation, **kwargs)
    limit = memory_limit(max_memory)
    if found.bytes > limit:
        named = " ".join(f"{k}={_shown(v)}" for k, v in kwargs.items())
        raise ValueError(
            f"{env_id}{' ' + named if named else ''}: {operation} would need {found} "
            f"(estimated), over the memory limit of {format_bytes(limit)} "
            f"({_limit_source(max_memory)}); lower {found.argument}, or raise the limit "
            f"(max_memory, --max-memory or {MEMORY_VARIABLE})"
        )
    return found


def physical_memory() -> int:
    """This machine's physical memory in bytes."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not POSIX: read /proc/meminfo
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    raise OSError("physical memory unknown")


def memory_limit(max_memory: int | float | str | None = None) -> int:
    """The most memory an operation may need, in bytes: `max_memory` (bytes, or text such as
    "8G", "500MB"), else DICE_ENVS_MAX_MEMORY, else 75 % of physical memory."""
    if max_memory is not None:
        return parse_memory(max_memory, "max_memory")
    variable = os.environ.get(MEMORY_VARIABLE)
    if variable:
        return parse_memory(variable, MEMORY_VARIABLE)
    return int(MEMORY_FRACTION * physical_memory())


_UNITS = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def parse_memory(value: int | float | str, name: str = "max_memory") -> int:
    """Bytes from a number of bytes or text such as "8G", "8 GB", "500M", "1.5T"; a
    ValueError naming `name` otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a size such as 8G or 500M, got {value!r}")
    if isinstance(value, int | float):
        number = float(value)
    else:
        match = re.fullmatch(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*([kKmMgGtT]?)(?:i?[bB])?\s*", str(value))
        if match is None:
            raise ValueError(f"{name} must be a size such as 8G or 500M, got {value!r}")
        number = float(match.group(1)) * _UNITS[match.group(2).upper()]
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"{name} must be a positive size such as 8G or 500M, got {value!r}")
    return int(number)


def format_bytes(count: float) -> str:
    """1.23e9 -> "1.2 GB", 3.4e8 -> "340 MB"."""
    if count >= 1e9:
        return f"{count / 1e9:.3g} GB"
    return f"{count / 1e6:.3g} MB"


def format_seconds(seconds: float) -> str:
    """12.3 -> "12 s", 400 -> "7 min", 9000 -> "2.5 h"."""
    if seconds < 1:
        return "under a second"
    if seconds < 120:
        return f"{seconds:.2g} s"
    if seconds < 7200:
        return f"{seconds / 60:.2g} min"
    return f"{seconds / 3600:.2g} h"


# How the user gave the limit that MEMORY_VARIABLE holds, when a command line set it for its
# own duration (`--max-memory 2G`): a refusal names what the user typed.
limit_typed_as: str | None = None


def _limit_source(max_memory: object) -> str:
    if max_memory is not None:
        return "max_memory"
    if os.environ.get(MEMORY_VARIABLE):
        return limit_typed_as or MEMORY_VARIABLE
    return f"{MEMORY_FRACTION:.0%} of {format_bytes(physical_memory())} of memory"


def _shown(value: Any) -> str:
    if isinstance(value, str | int | float | bool | type(None)):
        return str(value)
    if isinstance(value, list | tuple) and len(value) <= 8:
        return repr(value)
    return f"<{type(value).__name__}>"


def _game_arguments(factory: Any, kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments `factory` takes of `kwargs` (render_mode and the like left out)."""
    parameters = inspect.signature(load(factory)).parameters
    if any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        return {k: v for k, v in kwargs.items() if k != "render_mode"}
    return {k: v for k, v in kwargs.items() if k in parameters}


def _largest_argument(factory: Any, kwargs: Mapping[str, Any]) -> str:
    """The integer argument with the largest value (given or default): the likeliest to
    drive a size."""
    values = {
        name: p.default
        for name, p in inspect.signature(load(factory)).parameters.items()
        if isinstance(p.default, int) and not isinstance(p.default, bool)
    }
    values.update(
        {k: v for k, v in kwargs.items() if isinstance(v, int) and not isinstance(v, bool)}
    )
    return max(values, key=values.get) if values else "the game's arguments"

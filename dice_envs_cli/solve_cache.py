"""Solutions that `dice-envs play` keeps on disk, so that a game solved once starts at once.

Where: `$DICE_ENVS_CACHE` if set, else `$XDG_CACHE_HOME/dice-envs`, else `~/.cache/dice-envs`.
One file per package version, game id and game arguments (defaults filled in, so `goal=30`
and `goal=30 opponent=hold-at-20` share one), named `<game>-<hash>.npz`. It holds the
solution's arrays (no pickles) and the key they belong to; it is written to a temporary file
and renamed into place, so a reader never sees half a file. A file that does not load, fails
its zip checksums, has other shapes or another key is ignored and rewritten, never trusted.
`dice-envs play --clear-cache` removes every file of the folder (`clear`).

Only solves that took more than `MIN_SECONDS` are written. Each solve also records its rate
(size per second, see `size_of`) in `rates.json`, from which the next solve of the same game
is announced with its expected time.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from dice_envs import __version__, game, make_model
from dice_envs.files import atomic_write, atomic_write_bytes

CACHE_ENV = "DICE_ENVS_CACHE"
MIN_SECONDS = 1.0  # a solve quicker than this is not worth a file
RATES_FILE = "rates.json"
# Bumped when what a file holds changes: older files are then never read.
FORMAT = 1
# A table solution is stored over its observation grid, read this many cells at a time.
GRID_CHUNK = 1 << 20


def cache_dir() -> Path:
    """The folder of the cached solutions (not created here)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "dice-envs"


def cache_key(env_id: str, kwargs: dict[str, Any]) -> str | None:
    """What identifies a solution: package version, file format, game id and the game's
    arguments with their defaults; None when an argument is not a plain value (a callable
    or an array opponent could change behind the file's back)."""
    if not all(_plain(value) for value in kwargs.values()):
        return None
    parameters = inspect.signature(game(env_id).factory).parameters.values()
    defaults = {p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty}
    arguments = {name: repr(value) for name, value in sorted({**defaults, **kwargs}.items())}
    return json.dumps(
        {"version": __version__, "format": FORMAT, "env_id": env_id, "kwargs": arguments},
        sort_keys=True,
    )


def _plain(value: Any) -> bool:
    if value is None or isinstance(value, bool | int | float | str):
        return True
    return isinstance(value, tuple | list) and all(_plain(v) for v in value)


def cache_path(env_id: str, key: str) -> Path:
    """The file of the solution `key` names."""
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    return cache_dir() / f"{game(env_id).slug}-{digest}.npz"


class StoredSolution:
    """A table game's solution read back from disk: its optimal value and the exact value of
    every action at each observation it knows (NaN where the rules forbid the action).

    Attributes:
        value: the optimal expected return from the start.
        nvec: the observation grid (the model's `observation_nvec`).
        cells: (n,) the flat grid index of each known observation.
        values: (n, actions) their action values.
    """

    def __init__(self, value: float, nvec: np.ndarray, cells: np.ndarray, values: np.ndarray):
        self.value = float(value)
        self.nvec = tuple(int(v) for v in nvec)
        self.cells, self.values = cells, values
        self._row = np.full(int(np.prod(self.nvec)), -1, dtype=np.int64)
        self._row[cells] = np.arange(len(cells))

    def _row_of(self, obs: Any) -> int:
        key = np.atleast_1d(np.asarray(obs, dtype=np.int64))
        if key.shape != (len(self.nvec),) or (key < 0).any() or (key >= self.nvec).any():
            raise KeyError(obs)
        row = int(self._row[np.ravel_multi_index(tuple(key), self.nvec)])
        if row < 0:
            raise KeyError(obs)
        return row

    def action_values(self, obs: Any) -> np.ndarray:
        """The value of every action at observation `obs` (NaN where illegal)."""
        return self.values[self._row_of(obs)].copy()

    def value_at(self, obs: Any) -> float:
        """The optimal value at observation `obs`."""
        return float(np.nanmax(self.values[self._row_of(obs)]))


def table_arrays(solution: Any, env_id: str, kwargs: dict[str, Any]) -> dict[str, np.ndarray]:
    """The arrays of a table game's `solution` (a `baselines.Solution`): the action values of
    every observation of the grid the solution knows."""
    nvec = np.array(make_model(env_id, **kwargs).observation_nvec, dtype=np.int64)
    cells, values = [], []
    for lo in range(0, int(np.prod(nvec)), GRID_CHUNK):
        flat = np.arange(lo, min(lo + GRID_CHUNK, int(np.prod(nvec))))
        grid = np.stack(np.unravel_index(flat, tuple(nvec)), axis=1)
        known = solution.indices_of(grid) >= 0
        cells.append(flat[known])
        values.append(solution.action_values_batch(grid[known]))
    return {
        "value": np.float64(solution.value),
        "nvec": nvec,
        "cells": np.concatenate(cells),
        "action_values": np.concatenate(values),
    }


def table_solution(arrays: dict[str, np.ndarray], env_id: str, kwargs: dict[str, Any]):
    """A `StoredSolution` from `table_arrays`, or ValueError where they do not fit the game."""
    model = make_model(env_id, **kwargs)
    nvec, cells, values = arrays["nvec"], arrays["cells"], arrays["action_values"]
    if tuple(nvec) != tuple(model.observation_nvec):
        raise ValueError("another observation grid")
    if values.shape != (len(cells), model.num_actions) or cells.ndim != 1:
        raise ValueError("arrays of other shapes")
    if len(cells) and (cells.min() < 0 or cells.max() >= np.prod(nvec)):
        raise ValueError("cells outside the grid")
    return StoredSolution(float(arrays["value"]), nvec, cells.astype(np.int64), values)


def structure_arrays(solution: Any, env_id: str, kwargs: dict[str, Any]) -> dict[str, np.ndarray]:
    """The arrays of a Yahtzee solution: the value of every turn-start state."""
    return {
        "value": np.float64(solution.value),
        "state_values": solution.state_values,
        "num_states": np.int64(solution.num_states),
    }


def structure_solution(arrays: dict[str, np.ndarray], env_id: str, kwargs: dict[str, Any]):
    """A `baselines.yahtzee.YahtzeeSolution` from `structure_arrays` (ValueError where they
    do not fit the game)."""
    from baselines.yahtzee import YahtzeeSolution

    model = make_model(env_id, **kwargs)
    solution = YahtzeeSolution.of_values(model, arrays["state_values"], int(arrays["num_states"]))
    if solution.value != float(arrays["value"]):
        raise ValueError("the start's value is not the value stored")
    return solution


def _codec(env_id: str) -> tuple[Callable, Callable]:
    """How a game's solution becomes arrays and back: over the observation grid for a game
    with tables, by turn-start values for one without (Yahtzee)."""
    if game(env_id).tables:
        return table_arrays, table_solution
    return structure_arrays, structure_solution


def load(env_id: str, kwargs: dict[str, Any]) -> Any | None:
    """The cached solution of `env_id` with `kwargs`, or None if there is none that loads."""
    key = cache_key(env_id, kwargs)
    if key is None:
        return None
    path = cache_path(env_id, key)
    try:
        with np.load(path, allow_pickle=False) as stored:
            arrays = {name: stored[name] for name in stored.files}
        if str(arrays.pop("key")) != key:
            return None
        return _codec(env_id)[1](arrays, env_id, kwargs)
    except FileNotFoundError:
        return None
    except Exception:  # noqa: BLE001  (any damage: the file is ignored and written again)
        return None


def store(env_id: str, kwargs: dict[str, Any], solution: Any) -> Path | None:
    """Write `solution` to the cache atomically; its path, or None where `kwargs` are not
    plain values. OSError where the folder can not be written."""
    key = cache_key(env_id, kwargs)
    if key is None:
        return None
    path = cache_path(env_id, key)
    arrays = _codec(env_id)[0](solution, env_id, kwargs)
    atomic_write(path, lambda file: np.savez(file, key=np.str_(key), **arrays))
    return path


def clear() -> tuple[int, int]:
    """Remove every cached solution and the recorded rates: (files removed, their bytes)."""
    folder = cache_dir()
    removed = size = 0
    if not folder.is_dir():
        return 0, 0
    for path in folder.iterdir():
        if path.is_file() and (path.suffix in (".npz", ".tmp") or path.name == RATES_FILE):
            size += path.stat().st_size
            path.unlink()
            removed += 1
    return removed, size


class ClearCache(argparse.Action):
    """`--clear-cache`: remove the cached solutions, say what went, and exit (no game needed,
    as `--help` needs none)."""

    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        removed, size = clear()
        print(f"removed {removed} files ({size / 1e6:.1f} MB) from {cache_dir()}")
        parser.exit(0)


def size_of(env_id: str, kwargs: dict[str, Any]) -> tuple[int, str]:
    """What a solve's time grows with, and its name: the turn-start states of a game without
    tables (Yahtzee), else the observation grid's cells times the actions."""
    model = make_model(env_id, **kwargs)
    turn_starts = getattr(model, "turn_start_states", None)
    if turn_starts is not None:
        return len(turn_starts()[0]), "turn-start states"
    return int(np.prod(model.observation_nvec)) * model.num_actions, "observation-action pairs"


def recorded_rate(env_id: str) -> float | None:
    """Size per second of this machine's last recorded solve of `env_id` (None: none yet)."""
    try:
        record = json.loads((cache_dir() / RATES_FILE).read_text())[env_id]
        rate = float(record["size"]) / float(record["seconds"])
    except (OSError, ValueError, KeyError, TypeError, ZeroDivisionError):
        return None
    return rate if np.isfinite(rate) and rate > 0 else None


def record_rate(env_id: str, size: int, seconds: float) -> None:
    """Keep the size and time of a solve as the rate of `env_id`'s next estimate."""
    path = cache_dir() / RATES_FILE
    try:
        rates = json.loads(path.read_text())
        if not isinstance(rates, dict):
            rates = {}
    except (OSError, ValueError):
        rates = {}
    rates[env_id] = {"size": size, "seconds": seconds}
    text = json.dumps(rates, indent=1, sort_keys=True)
    atomic_write_bytes(path, text.encode())


def cached_solution(
    env_id: str,
    kwargs: dict[str, Any],
    say: Callable[[str], None],
    reference_rate: tuple[float, str] | None = None,
) -> Any:
    """The solution of `env_id` with `kwargs`: from the cache, else solved (and cached when
    the solve took over `MIN_SECONDS`). `say` gets one line before a solve (its expected time
    where a rate is known: this machine's last solve of the game, else `reference_rate`,
    (size per second, where it was measured)) and one after it."""
    solution = load(env_id, kwargs)
    if solution is not None:
        say(f"the exact solution, solved before, read from {cache_dir()}")
        return solution
    size, unit = size_of(env_id, kwargs)
    rate, basis = recorded_rate(env_id), "this machine's last solve of the game"
    if rate is None and reference_rate is not None:
        rate, basis = reference_rate
    expected = (
        f": {_seconds(size / rate, 'about ')} ({size:,} {unit} at {rate:,.0f} a second, the rate "
        f"of {basis})"
        if rate is not None
        else ""
    )
    say(f"solving {env_id} exactly{expected} ...")
    import baselines

    entry = game(env_id)
    for hook in ("solver", "structure_solver"):  # imported before the clock starts
        entry.hook(hook)
    start = time.perf_counter()
    solution = baselines.solve(env_id, **kwargs)
    seconds = time.perf_counter() - start
    where = ""
    try:
        if seconds > MIN_SECONDS:  # a shorter solve times its overheads more than its size
            record_rate(env_id, size, seconds)
            path = store(env_id, kwargs, solution)
            where = "" if path is None else "; kept on disk for next time (--clear-cache)"
    except OSError as error:
        where = f"; not kept ({error.strerror or error})"
    say(f"solved in {_seconds(seconds)}{where}")
    return solution


def _seconds(seconds: float, about: str = "") -> str:
    if seconds < 0.1:
        return "under 0.1 s"
    if seconds < 90:
        return f"{about}{seconds:.2g} s"
    return f"{about}{seconds / 60:.1f} minutes"

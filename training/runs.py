"""The run store: one folder per run, named by a hash of everything that defines the run.

A run is its resolved config (env id and arguments, algorithm, hyperparameters, steps,
evaluation interval and episodes), its seed, the package version and a fingerprint of the
code of `dice_envs`, `baselines` and `training` (`code_fingerprint`). Change any of them and it
is a different run in a different folder; the budget's name is only a label.

    <root>/<game>/<algo>/seed<n>-<hash>/
        config.yaml      the run's identity (what the hash is of), written first
        curve.json       one exact evaluation per evaluation point
        timing.json      wall-clock measurements (kept apart: they differ run to run)
        checkpoint.pkl   everything needed to continue from the last evaluation point
        policy.*         the final policy (Q table or SB3 model)
        actions.npy      the final greedy policy as a table over the observation grid: int16,
                         shape `observation_nvec` of the env's model, indexed by the
                         observation; the greedy action at every observation of a reachable
                         state and -1 elsewhere, except for a two-player run scored by its
                         exploitability, whose table holds the mover's greedy action at every
                         observation (so it also plays as an opponent). Any policy argument
                         takes it (`baselines.evaluate(np.load(path), env_id, **kwargs)`)
        value_errors.npy the final error of the learner's own value estimate per observation:
                         float32, shape `observation_nvec`, Q(s, greedy a) - Q*(s, a) of a
                         Q table or V(s) - v_pi(s) of a PPO critic (the game's units, the
                         run's gamma), NaN where no reachable state is; not for self-play
        result.json      the final evaluation, written last: its presence means "done"

A game too large for tables (Yahtzee) keeps no actions.npy or value_errors.npy (a per-state
array would need about 400 million cells): its curve holds the sampled gap at each point
(`sampled_gap`, `sampled_gap_stderr`, `sampled_gap_low`, `sampled_gap_high`, ...), its last
point and result.json the exact evaluation made at the end (`value`, `gap`, ...,
`losses_by_turn`), and a Q-learning run's policy is policy_q.npz (the observations' keys and
their Q rows; `training.qlearning.SparseQLearning`).

Every file is written to a temporary file and renamed over its name, so a killed run leaves
complete files only, with the mode an ordinary `open` gives (the umask decides, as on a store
shared by the nodes of a Ray cluster); a run folder is locked while a process trains it, and
the lock file goes when the lock is released. `training.archive` keeps what a report needs
of the finished runs (no checkpoint, no policy), small enough to commit.
"""

from __future__ import annotations

import ast
import fcntl
import functools
import hashlib
import importlib.util
import json
import os
import platform
import secrets
import signal
import threading
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import yaml

from training.config import game_name

# Libraries whose versions decide the numbers; every result records the ones it was made with.
LIBRARIES = ("numpy", "torch", "stable-baselines3", "sb3-contrib", "gymnasium", "scipy")
IDENTITY_KEYS = ("env_id", "env_kwargs", "algo", "hyperparams", "timesteps", "eval_every")
PACKAGE = "dice-envs"
# The packages whose code a run's result depends on (the environments, the exact evaluation,
# the learners), fingerprinted into every run's identity.
CODE_PACKAGES = ("dice_envs", "baselines", "training")
# Modules no run's numbers depend on: they read finished runs (the report and its figures, the
# archive, the pages), talk to a person (the command line, play), or only decide where and when
# `training.train.run` is called (the sweep, its backends, the tuner). An edit there leaves
# every stored run current.
NOT_RUN = frozenset(
    {
        "training/report.py",
        "training/targets.py",
        "training/plots.py",
        "training/archive.py",
        "training/sweep.py",
        "training/backends.py",
        "training/tune.py",
        "training/cli.py",
        "training/play.py",
        "training/play_yahtzee.py",
        "training/prompt.py",
        "baselines/game_pages.py",
    }
)


class RunStoreError(RuntimeError):
    """A run folder that does not hold the run asked for, or is busy."""


def run_identity(config: dict[str, Any], seed: int) -> dict[str, Any]:
    """What defines a run: the resolved config, the seed, the package version and the code."""
    identity = {key: config[key] for key in IDENTITY_KEYS}
    identity["evaluation"] = config["evaluation"]
    if config.get("selfplay") is not None:
        identity["selfplay"] = config["selfplay"]
    identity["seed"] = seed
    identity["package"] = {"name": PACKAGE, "version": version(PACKAGE)}
    identity["code"] = code_fingerprint()
    # Through JSON and back: tuples become lists, so equal configs compare and hash equal.
    return json.loads(json.dumps(identity))


@functools.cache
@functools.cache
def code_fingerprint() -> str:
    """A hash of the code of CODE_PACKAGES as imported (editable install or not), once per
    process: a change that can alter sampling, learning or evaluation makes every run new."""
    roots = {}
    for name in CODE_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise RunStoreError(f"cannot find the source of package {name!r}")
        roots[name] = Path(next(iter(spec.submodule_search_locations)))
    return source_fingerprint(roots)


def source_fingerprint(roots: dict[str, Path]) -> str:
    """sha256 over every module under each root (`name` -> folder): its path relative to the
    root and its code with docstrings, comments and layout taken out (`normalised_source`), so
    that only an edit of what runs gives another fingerprint; the modules of `NOT_RUN` are
    left out."""
    digest = hashlib.sha256()
    for name in sorted(roots):
        root = roots[name]
        for path in sorted(root.rglob("*.py"), key=lambda p: p.relative_to(root).as_posix()):
            if "__pycache__" in path.parts:
                continue
            relative = f"{name}/{path.relative_to(root).as_posix()}"
            if relative in NOT_RUN:
                continue
            digest.update(f"{relative}\0{normalised_source(path.read_text())}\0".encode())
    return digest.hexdigest()[:16]


def normalised_source(text: str) -> str:
    """The module's code as `ast.unparse` writes it, without docstrings: comments, blank lines,
    quotes and line breaks do not count; every statement and constant does."""
    tree = ast.parse(text)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            node.body = body[1:] or [ast.Pass()]
    return ast.unparse(tree)


def library_versions() -> dict[str, str]:
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = version(name)
        except PackageNotFoundError:
            versions[name] = "absent"
    return versions


def machine_description(uses_torch: bool = False) -> dict[str, str]:
    """The CPU a result was made on: float rounding in torch's and MKL's kernels follows the
    instruction set they pick (AVX2, AVX-512), so PPO's digits may differ from one CPU to
    another with the same code, libraries and seed. `uses_torch` (a PPO run) adds the
    instruction set torch picked; it is asked by the run, not read from whether the process
    happens to have imported torch (a sweep's worker may have run PPO before a Q-learning run)."""
    description = {"machine": platform.machine(), "cpu": platform.processor() or "unknown"}
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    description["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    if uses_torch:
        import torch

        description["torch_cpu_capability"] = torch.backends.cpu.get_cpu_capability()
    return description


def run_hash(identity: dict[str, Any]) -> str:
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def run_dir(root: str | Path, config: dict[str, Any], seed: int) -> Path:
    identity = run_identity(config, seed)
    return (
        Path(root)
        / game_name(config["env_id"])
        / config["algo"]
        / f"seed{seed}-{run_hash(identity)}"
    )


def check_identity(directory: Path, identity: dict[str, Any]) -> None:
    """Refuse a folder whose config.yaml is not `identity` (an edited file, or a collision)."""
    path = directory / "config.yaml"
    try:
        stored = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        return
    if json.loads(json.dumps(stored)) != identity:
        raise RunStoreError(
            f"{path} describes another run than the one asked for; move the folder away"
        )


def read_finished(directory: Path, identity: dict[str, Any]) -> dict[str, Any] | None:
    """The result of a finished run after checking that it is this run; None if unfinished."""
    result = read_json(directory / "result.json")
    if result is None:
        return None
    check_identity(directory, identity)
    return result


@contextmanager
def locked(directory: Path):
    """Hold the run folder's lock (released when the process dies, however it dies); its file
    `.lock` is removed on release (a process killed while holding it leaves it, harmlessly)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / ".lock"
    while True:
        with open(path, "a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise RunStoreError(f"{directory} is being trained by another process") from None
            if not _is_file_at(handle, path):
                continue  # its last holder unlinked it after our open: lock the one there now
            try:
                yield
            finally:
                # Unlinked while still held: whoever opened it meanwhile sees it gone, retries.
                path.unlink(missing_ok=True)
                fcntl.flock(handle, fcntl.LOCK_UN)
            return


def _is_file_at(handle, path: Path) -> bool:
    """Whether the open file `handle` is the file now at `path`."""
    try:
        current = os.stat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(handle.fileno())
    return (current.st_dev, current.st_ino) == (held.st_dev, held.st_ino)


def remove_partial_files(directory: Path) -> None:
    """Temporary files of a process that was killed before it could rename or remove them."""
    for path in directory.glob(".*.tmp"):
        path.unlink(missing_ok=True)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write to a temporary file in the same folder, then rename over `path`.

    The file gets the mode `open(path, "wb")` would give it (0o666 less the umask, or the
    folder's default ACL), not `tempfile.mkstemp`'s 0o600: a store shared between users or the
    nodes of a cluster stays readable as its umask says.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = _new_temporary(path)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _new_temporary(path: Path) -> tuple[int, str]:
    """A new file `.<name>.<random>.tmp` beside `path`, opened for writing (`remove_partial_files`
    removes those a killed process leaves)."""
    while True:
        temporary = str(path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp")
        try:
            return os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), temporary
        except FileExistsError:
            continue


@contextmanager
def ctrl_c_deferred():
    """Hold a Ctrl-C (SIGINT) until the block ends, then raise it.

    Files written together (curve, timing, checkpoint) then agree after a Ctrl-C; a kill can
    still split them, which resuming repairs. Outside the main thread signals cannot be
    caught, and the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        signal.raise_signal(signal.SIGINT)


def atomic_write_json(path: Path, data: Any) -> None:
    atomic_write_bytes(path, (json.dumps(data, indent=1) + "\n").encode())


def atomic_write_yaml(path: Path, data: Any) -> None:
    atomic_write_bytes(path, yaml.safe_dump(data, sort_keys=False).encode())


def read_json(path: Path, default: Any = None) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return default


def config_paths(configs: str | Path, games: list[str] | None = None) -> list[Path]:
    """The committed configs: `<configs>/<game>/<name>.yaml`, sorted; optionally only some
    games (`pig`) or single configs (`pig/ppo_goal100`)."""
    paths = sorted(Path(configs).glob("*/*.yaml"))
    if games:

        def selected(path: Path) -> bool:
            return path.parent.name in games or f"{path.parent.name}/{path.stem}" in games

        known = {path.parent.name for path in paths}
        known |= {f"{path.parent.name}/{path.stem}" for path in paths}
        unknown = sorted(set(games) - known)
        if unknown:
            raise ValueError(f"games: no configs for {unknown}; there are {sorted(known)}")
        paths = [path for path in paths if selected(path)]
    return paths


def planned_runs(
    configs: str | Path, budget: str, games: list[str] | None = None
) -> list[tuple[Path, dict[str, Any], int]]:
    """(config path, resolved config, seed) of every run the configs define for `budget`.

    A config without an entry for `budget` plans no run of it: the default games (Pig to 100,
    100 rounds of D20) are trained at the full budget only, which keeps `make demo` short.
    """
    from training.config import has_budget, load_config

    planned = []
    for path in config_paths(configs, games):
        if not has_budget(path, budget):
            continue
        config = load_config(path, budget)
        planned += [(path, config, seed) for seed in config["seeds"]]
    return planned

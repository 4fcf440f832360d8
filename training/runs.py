"""The run store: one folder per run, named by a hash of everything that defines the run.

A run is its resolved config (env id and arguments, algorithm, hyperparameters, steps,
evaluation interval and episodes), its seed and the package version. Change any of them and
it is a different run in a different folder; the budget's name is only a label. The code
that made it is recorded beside it: the fingerprint of every module of `dice_envs`,
`baselines` and `training` its processes imported, and of its game's registration entry
(`code_stamp`). A run is read back, or resumed, only while all of those are unchanged; adding
a game or editing a module the run never imported leaves it current, and a run whose code
has changed is moved aside to `<folder>.stale` and trained afresh.

    <root>/<game>/<algo>/seed<n>-<hash>/
        config.yaml      the run's identity (what the hash is of), written first
        code.json        module -> fingerprint of the code that made it (`code_stamp`), the
                         union over its sessions, written at every checkpoint
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
the lock file goes when the lock is released. `docs.tools.archive` keeps what a report needs
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
import shutil
import signal
import sys
import threading
from collections.abc import Iterable
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import yaml

from dice_envs.files import atomic_write_bytes
from training.config import game_name

# Libraries whose versions decide the numbers; every result records the ones it was made with.
LIBRARIES = ("numpy", "torch", "stable-baselines3", "sb3-contrib", "gymnasium", "scipy")
IDENTITY_KEYS = ("env_id", "env_kwargs", "algo", "hyperparams", "timesteps", "eval_every")
PACKAGE = "dice-envs"
# The packages whose modules a run's result may depend on: each run records the fingerprint of
# every one of their modules its process imported (`code_stamp`).
CODE_PACKAGES = ("dice_envs", "baselines", "training")
# The registration module is stamped as its machinery plus one part per `register_game` entry,
# the run's own: adding or editing another game's entry leaves the run current.
REGISTRATION = "dice_envs/registration.py"
CODE_FILE = "code.json"


class RunStoreError(RuntimeError):
    """A run folder that does not hold the run asked for, or is busy."""


class StaleRun(RunStoreError):
    """A stored run made by code that has changed since, in the modules it names."""

    def __init__(self, directory: Path, changed: list[str]) -> None:
        self.directory, self.changed = directory, changed
        super().__init__(
            f"{directory} was made by code that has changed since (in {', '.join(changed)})"
        )


def run_identity(config: dict[str, Any], seed: int) -> dict[str, Any]:
    """What defines a run, and names its folder: the resolved config, the seed and the package
    version. The code that made it is recorded beside it (`code.json`, `code_stamp`)."""
    identity = {key: config[key] for key in IDENTITY_KEYS}
    identity["evaluation"] = config["evaluation"]
    if config.get("selfplay") is not None:
        identity["selfplay"] = config["selfplay"]
    identity["seed"] = seed
    identity["package"] = {"name": PACKAGE, "version": version(PACKAGE)}
    # Through JSON and back: tuples become lists, so equal configs compare and hash equal.
    return json.loads(json.dumps(identity))


@functools.cache
def package_roots() -> dict[str, Path]:
    """The source folder of each of CODE_PACKAGES, as imported (editable install or not)."""
    roots = {}
    for name in CODE_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise RunStoreError(f"cannot find the source of package {name!r}")
        roots[name] = Path(next(iter(spec.submodule_search_locations))).resolve()
    return roots


def imported_modules() -> list[str]:
    """The modules of CODE_PACKAGES this process has imported, as paths ("training/train.py")."""
    found = set()
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and path.endswith(".py") and (name := _project_module(path)) is not None:
            found.add(name)
    return sorted(found)


@functools.cache
def _project_module(path: str) -> str | None:
    """A module file's path in CODE_PACKAGES ("training/train.py"), or None. Cached: a process
    with torch imported holds about 2,000 modules, and resolving each path at every
    checkpoint took a tenth of a second."""
    resolved = Path(path).resolve()
    for name, root in package_roots().items():
        if resolved.is_relative_to(root):
            return f"{name}/{resolved.relative_to(root).as_posix()}"
    return None


def code_stamp(env_ids: Iterable[str], roots: dict[str, Path] | None = None) -> dict[str, str]:
    """Module -> fingerprint of every project module this process has imported, with the
    registration split into its machinery and the entries of `env_ids` ("<module>::<env id>").

    A fingerprint is of the module's code without docstrings, comments and layout
    (`normalised_source`), read once per process: the code it runs, even if the file is edited
    later. Adding a module or a game leaves a stamp as it was; a stamp goes stale only when one
    of the modules (or the entry) it lists changes (`stale_modules`). `roots`: read the
    modules' code from other copies of the packages (package -> folder)."""
    stamp = {}
    for module in imported_modules():
        if module == REGISTRATION:
            parts = registration_parts(_source(roots, module))
            stamp[module] = _digest(parts[""])
            stamp.update({f"{module}::{e}": _digest(parts[e]) for e in env_ids if e in parts})
        else:
            stamp[module] = _digest(_source(roots, module))
    return stamp


def stale_modules(stamp: dict[str, str], roots: dict[str, Path] | None = None) -> list[str]:
    """The modules (and registration entries) of `stamp` whose code differs now, or is gone
    (`roots`: in other copies of the packages)."""
    changed = []
    for key, digest in stamp.items():
        module, _, entry = key.partition("::")
        try:
            source = _source(roots, module)
        except FileNotFoundError:
            changed.append(key)
            continue
        parts = registration_parts(source) if module == REGISTRATION else {"": source}
        if entry not in parts or _digest(parts[entry]) != digest:
            changed.append(key)
    return changed


def source_stamp() -> dict[str, str]:
    """Module -> fingerprint of every module of CODE_PACKAGES as installed, imported or not:
    the nodes of a Ray sweep compare theirs with the sweep's."""
    stamp = {}
    for name, root in package_roots().items():
        for path in sorted(root.rglob("*.py")):
            if "__pycache__" not in path.parts:
                module = f"{name}/{path.relative_to(root).as_posix()}"
                stamp[module] = _digest(_source(None, module))
    return stamp


def stamp_digest(stamp: dict[str, str]) -> str:
    """One short hash of a whole stamp (a tuning record's "code")."""
    return _digest(json.dumps(stamp, sort_keys=True))


def record_code(directory: Path, env_ids: Iterable[str]) -> None:
    """Add this process's `code_stamp` to the run's code.json (the union over its sessions)."""
    path = directory / CODE_FILE
    stamp = read_json(path, {})
    stamp.update(code_stamp(env_ids))
    atomic_write_json(path, dict(sorted(stamp.items())))


def check_current(directory: Path) -> None:
    """Raise StaleRun if the code recorded in the run's code.json has changed since."""
    changed = stale_modules(read_json(directory / CODE_FILE, {}))
    if changed:
        raise StaleRun(directory, changed)


@functools.lru_cache(maxsize=8)
def registration_parts(source: str) -> dict[str, str]:
    """The normalised code of the registration module by part: "" its machinery, and each
    top-level `register_game("<id>", ...)` entry by its id (cached: the dict is shared)."""
    tree = ast.parse(source)
    entries, machinery = {}, []
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        if (
            isinstance(call, ast.Call)
            and isinstance(call.func, ast.Name)
            and call.func.id == "register_game"
            and call.args
            and isinstance(call.args[0], ast.Constant)
        ):
            entries[call.args[0].value] = ast.unparse(node)
        else:
            machinery.append(node)
    tree.body = machinery
    return {"": normalised_source(ast.unparse(tree)), **entries}


@functools.cache
def _loaded_source(path: Path) -> str:
    return normalised_source(path.read_text())


def _source(roots: dict[str, Path] | None, module: str) -> str:
    """A module's normalised code: once per process from the packages imported (the code this
    process runs), afresh from other `roots`."""
    name, _, relative = module.partition("/")
    if roots is None:
        return _loaded_source(package_roots()[name] / relative)
    return normalised_source((roots[name] / relative).read_text())


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


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
    """The result of a finished run after checking that it is this run; None if unfinished,
    or made by code that has changed since (`move_stale_aside` moves such a run away)."""
    result = read_json(directory / "result.json")
    if result is None:
        return None
    check_identity(directory, identity)
    return None if stale_modules(read_json(directory / CODE_FILE, {})) else result


def move_stale_aside(directory: Path) -> Path | None:
    """If the run in `directory` (finished or checkpointed) was made by code that has changed
    since, move it to `<folder>.stale` (replacing an older one) and return where it went."""
    try:
        check_current(directory)
    except StaleRun:
        with locked(directory):
            aside = directory.with_name(directory.name + ".stale")
            shutil.rmtree(aside, ignore_errors=True)
            directory.rename(aside)
        (aside / ".lock").unlink(missing_ok=True)
        return aside
    return None


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

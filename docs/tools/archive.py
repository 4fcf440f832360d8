"""The run archive: what a report needs of each finished run, small enough to commit.

    <archive>/<budget>/<game>/<config name>/seed<n>/
        config.yaml   the run's identity, as in the run store (with the package version)
        code.json     the fingerprints of the modules that made it, as in the run store
        result.json   the final evaluation
        curve.json    one exact evaluation per evaluation point
        timing.json   the wall-clock measurements
        arrays.npz    the per-state arrays the figures draw, compressed: `actions` (the final
                      greedy policy, as actions.npy) and, where the run saved it,
                      `value_errors` (as value_errors.npy); empty for a game without
                      tables (Yahtzee), whose runs save no per-state arrays

An entry is named by its config's name and seed, not by the hash of its identity, so a report
finds it whatever code made it; it refuses an entry whose config (hyperparameters, steps,
environment arguments, evaluation, seed) is not the config file's any more, and says which
package version and code made the runs when they are not the current ones. Checkpoints stay
in the run store, and so do the policies of runs with per-state arrays (their actions are in
arrays.npz). `archive_runs` replaces a budget's folder whole, by a rename,
so the archive holds exactly the runs the configs plan.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import shutil
import zipfile
from importlib.metadata import version
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from dice_envs.files import atomic_write_bytes
from training.runs import (
    CODE_FILE,
    PACKAGE,
    planned_runs,
    read_finished,
    read_json,
    run_dir,
    run_identity,
    stale_modules,
)

# Copied as they are from the run folder; the arrays go compressed into ARRAYS_FILE.
ARCHIVED_FILES = ("config.yaml", CODE_FILE, "result.json", "curve.json", "timing.json")
ARRAYS_FILE = "arrays.npz"
ARRAYS = ("actions", "value_errors")
POLICY_FILE = "policy.zip"  # kept where a run has no per-state arrays
# What makes an archived run this config's run: its identity without what made it (and the
# code fingerprint that identities held before the code was recorded module by module).
MADE_BY = ("package", "code")


class ArchiveError(ValueError):
    """An archive entry that is not the run the config file asks for, or a run missing."""


def entry_dir(budget_folder: Path, config_path: Path, seed: int) -> Path:
    """Where the run of `config_path` (configs/<game>/<name>.yaml) with `seed` is archived."""
    return Path(budget_folder) / config_path.parent.name / config_path.stem / f"seed{seed}"


class Archive:
    """The archived runs of one budget (`folder`: <archive>/<budget>), as the report reads them."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    def __repr__(self) -> str:
        return f"Archive({str(self.folder)!r})"

    def __str__(self) -> str:
        return f"the archive {self.folder}"

    def entry(self, config_path: Path, seed: int) -> Path:
        return entry_dir(self.folder, config_path, seed)

    def config_names(self) -> list[str]:
        """The configs (`<game>/<config>`) it holds runs of, laid out as `entry_dir` lays
        them; none if the folder is not there."""
        if not self.folder.is_dir():
            return []
        return sorted(
            f"{config.parent.name}/{config.name}"
            for config in self.folder.glob("*/*")
            if config.is_dir() and not config.parent.name.startswith(".")
        )

    def find(
        self, config_path: Path, config: dict[str, Any], seed: int
    ) -> tuple[Path, dict[str, Any] | None]:
        """The entry of the run of `config` with `seed` and its archived result, with its
        `made_by` (package version and code fingerprint); None as the result if not archived.
        An entry made from another config is refused (ArchiveError naming the keys that
        differ). An archive is a `training.report.RunSource`."""
        directory = self.entry(config_path, seed)
        stored = _read_yaml(directory / "config.yaml")
        result = read_json(directory / "result.json")
        if stored is None or result is None:
            return directory, None
        check_archived_config(directory, stored, run_identity(config, seed), config_path)
        return directory, {**result, "made_by": made_by(directory, stored)}


def made_by(directory: Path, identity: dict[str, Any]) -> dict[str, str]:
    """The package version that made an archived run, and "" as its "code" if the code that
    made it (its code.json) is the current code, else the modules changed since."""
    stamp = read_json(directory / CODE_FILE)
    changed = ["its code.json (none archived)"] if stamp is None else stale_modules(stamp)
    return {"version": identity["package"]["version"], "code": ", ".join(changed)}


def current_maker() -> dict[str, str]:
    """The package version running now, and its code ("", as `made_by` says of a current run)."""
    return {"version": version(PACKAGE), "code": ""}


def check_archived_config(
    directory: Path, stored: dict[str, Any], identity: dict[str, Any], config_path: Path
) -> None:
    """Refuse an archived run whose config is not `identity`'s (the code may differ)."""
    stored = {key: value for key, value in stored.items() if key not in MADE_BY}
    wanted = {key: value for key, value in identity.items() if key not in MADE_BY}
    if stored != wanted:
        differ = sorted(k for k in set(stored) | set(wanted) if stored.get(k) != wanted.get(k))
        raise ArchiveError(
            f"{directory} was made from another config than {config_path} now says "
            f"(differs in: {', '.join(differ)}); train it again and archive it "
            "(make train), or restore the config"
        )


def _read_yaml(path: Path) -> dict[str, Any] | None:
    try:
        return _through_json(yaml.safe_load(path.read_text()))
    except FileNotFoundError:
        return None


def _through_json(data: Any) -> Any:
    return json.loads(json.dumps(data))


def run_arrays(directory: Path) -> dict[str, np.ndarray]:
    """The per-state arrays of a run folder or an archive entry, by name (`ARRAYS`): from
    its arrays.npz, or from the run store's actions.npy and value_errors.npy; the ones it
    lacks are left out."""
    directory = Path(directory)
    packed = directory / ARRAYS_FILE
    if packed.exists():
        with np.load(packed, allow_pickle=False) as arrays:
            return {name: arrays[name] for name in ARRAYS if name in arrays}
    found = {}
    for name in ARRAYS:
        path = directory / f"{name}.npy"
        if path.exists():
            found[name] = np.load(path, allow_pickle=False)
    return found


def archive_runs(
    configs: str | Path,
    budget: str,
    runs: str | Path,
    archive: str | Path,
    games: list[str] | None = None,
) -> Path:
    """Archive the finished runs that the configs plan for `budget` from the run store `runs`
    into `archive`/<budget>; return that folder.

    The folder is rebuilt beside it and renamed into place, so it holds exactly the planned
    runs: one that no config plans any more goes. With `games`, the selected configs' runs
    come from the store and the other planned runs are kept from the archive as they were
    (where they were there). Every selected run must be finished in the store
    (ArchiveError otherwise, and the archive is left as it was).
    """
    archive = Path(archive)
    target = archive / budget
    _restore_interrupted_swap(archive, budget)
    selected = {(path, seed) for path, _, seed in planned_runs(configs, budget, games)}
    missing = [
        f"{path} seed {seed}"
        for path, config, seed in planned_runs(configs, budget, games)
        if read_finished(run_dir(runs, config, seed), run_identity(config, seed)) is None
    ]
    if missing:
        raise ArchiveError(
            f"{len(missing)} planned runs are not finished in {runs} (first: {missing[0]}); "
            f"run `python -m training.sweep --budget {budget}` first"
        )
    building = archive / f".{budget}.new-{secrets.token_hex(4)}"
    try:
        for path, config, seed in planned_runs(configs, budget):
            destination = entry_dir(building, path, seed)
            if (path, seed) in selected:
                _archive_run(run_dir(runs, config, seed), destination)
            elif entry_dir(target, path, seed).is_dir():
                shutil.copytree(entry_dir(target, path, seed), destination)
        building.mkdir(parents=True, exist_ok=True)
        _swap_in(building, target)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return target


def _archive_run(source: Path, destination: Path) -> None:
    """One run folder's archived files: the small ones copied, the arrays compressed."""
    destination.mkdir(parents=True)
    for name in ARCHIVED_FILES:
        if (source / name).exists():
            shutil.copyfile(source / name, destination / name)
    arrays = run_arrays(source)
    atomic_write_bytes(destination / ARRAYS_FILE, npz_bytes(arrays))
    if not arrays and (source / POLICY_FILE).is_file():
        shutil.copyfile(source / POLICY_FILE, destination / POLICY_FILE)


def npz_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """The arrays as `np.savez_compressed` writes them, but with a fixed date on every
    member: the same arrays give the same bytes, so archiving a run again changes no file."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as packed:
        for name, array in arrays.items():
            member = io.BytesIO()
            np.save(member, array, allow_pickle=False)
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            packed.writestr(info, member.getvalue(), compresslevel=9)
    return buffer.getvalue()


def _swap_in(building: Path, target: Path) -> None:
    """Put `building` at `target` by renames, the old `target` removed after."""
    old = target.parent / f".{target.name}.old-{secrets.token_hex(4)}"
    if target.exists():
        os.replace(target, old)
    os.replace(building, target)
    shutil.rmtree(old, ignore_errors=True)


def _restore_interrupted_swap(archive: Path, budget: str) -> None:
    """A process killed between `_swap_in`'s renames leaves the old folder aside and none in
    place: put it back. Leftover half-built folders go."""
    for path in archive.glob(f".{budget}.new-*"):
        shutil.rmtree(path, ignore_errors=True)
    olds = sorted(archive.glob(f".{budget}.old-*"), key=lambda p: p.stat().st_mtime)
    if olds and not (archive / budget).exists():
        os.replace(olds.pop(), archive / budget)
    for path in olds:
        shutil.rmtree(path, ignore_errors=True)

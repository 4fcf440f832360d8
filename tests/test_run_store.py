"""The run store: runs are named by their identity, finished runs are checked before they are
read back (a folder of another run, of changed code), one process trains a run at a time, and
files are written whole. Sweeps: tests/test_sweep.py; reports: tests/test_run_reports.py."""

import fcntl
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from training_helpers import (
    CONFIGS,
    ROOT,
    changed,
    small,
)

import baselines
import training.runs
import training.train
from training.config import load_config
from training.runs import (
    CODE_PACKAGES,
    REGISTRATION,
    RunStoreError,
    StaleRun,
    atomic_write_json,
    check_current,
    code_stamp,
    ctrl_c_deferred,
    locked,
    read_finished,
    run_dir,
    run_identity,
    source_stamp,
    stale_modules,
)
from training.train import run, what_happened

CHANGES = [
    ("env_kwargs", {"N": 11}),
    ("timesteps", 30_000),
    ("eval_every", 5_000),
    ("evaluation", {"episodes": 21}),
    ("hyperparams.gamma", 0.99),
    ("hyperparams.learning_rate", {"power": 0.6}),
    ("hyperparams.epsilon", {"start": 1.0, "end": 0.1, "fraction": 0.3}),
    ("hyperparams.initial_q", 1.0),
]


def _base():
    # Evaluated (and checkpointed) at the start and the end only: no test here needs more.
    return small(load_config(CONFIGS / "sum_avoid" / "qlearning.yaml"), 20_000, 20_000)


@pytest.mark.parametrize("dotted, value", CHANGES)
def test_any_config_change_is_another_run(tmp_path, dotted, value):
    base = _base()
    assert run_dir(tmp_path, changed(base, dotted, value), 0) != run_dir(tmp_path, base, 0)


def test_seed_and_package_version_are_part_of_the_identity(tmp_path, monkeypatch):
    base = _base()
    assert run_dir(tmp_path, base, 1) != run_dir(tmp_path, base, 0)
    before = run_dir(tmp_path, base, 0)
    monkeypatch.setattr(training.runs, "version", lambda name: "99.0")
    assert run_dir(tmp_path, base, 0) != before


def test_an_edited_config_trains_anew_and_leaves_the_old_run_alone(tmp_path):
    old = _base()
    first = run(old, 0, tmp_path)
    old_dir = run_dir(tmp_path, old, 0)
    old_files = {p.name: p.read_bytes() for p in old_dir.iterdir() if p.is_file()}
    new = changed(old, "hyperparams.learning_rate", {"power": 0.6})
    second = run(new, 0, tmp_path)
    assert run_dir(tmp_path, new, 0) != old_dir and second["run"] != first["run"]
    q_old = np.load(old_dir / "policy_q.npy")
    q_new = np.load(run_dir(tmp_path, new, 0) / "policy_q.npy")
    assert not np.array_equal(q_old, q_new)
    assert {p.name: p.read_bytes() for p in old_dir.iterdir() if p.is_file()} == old_files
    again = run(old, 0, tmp_path)  # and the old one is still read back
    assert again.pop("status") == "read back" and first.pop("status") == "trained"
    assert again == first


def test_a_folder_that_describes_another_run_is_refused(tmp_path):
    config = _base()
    run(config, 0, tmp_path)
    path = run_dir(tmp_path, config, 0) / "config.yaml"
    path.write_text(path.read_text().replace("timesteps: 20000", "timesteps: 20001"))
    with pytest.raises(RunStoreError, match="another run"):
        run(config, 0, tmp_path)


def test_one_process_at_a_time_trains_a_run(tmp_path):
    config = _base()
    directory = run_dir(tmp_path, config, 0)
    with locked(directory), pytest.raises(RunStoreError, match="another process"):
        run(config, 0, tmp_path)
    assert not (directory / "result.json").exists()


HOLD_LOCK = """
import sys
from pathlib import Path
from training.runs import locked
with locked(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.readline()
"""


def test_another_process_holding_the_lock_keeps_a_run_out_and_no_lock_file_stays(tmp_path):
    config = _base()
    directory = run_dir(tmp_path, config, 0)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(directory)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline().strip() == "held"
        assert (directory / ".lock").exists()
        with pytest.raises(RunStoreError, match="another process"):
            run(config, 0, tmp_path)
    finally:
        holder.communicate("release\n", timeout=30)
    assert holder.returncode == 0
    assert not (directory / ".lock").exists()  # the holder removed it on release
    assert run(config, 0, tmp_path)["status"] == "trained"
    assert not (directory / ".lock").exists()  # and so did the run, when it finished
    stopped = changed(config, "timesteps", 40_000)
    assert "stopped_at" in run(stopped, 0, tmp_path, stop_after=10_000)
    assert not (run_dir(tmp_path, stopped, 0) / ".lock").exists()


def test_a_lock_file_unlinked_between_open_and_flock_is_not_trusted(tmp_path, monkeypatch):
    """The race of removing lock files: we open `.lock`, its holder unlinks it and releases,
    we flock the orphan. Holding that would let a third process lock a new `.lock` beside us;
    `locked` must see the orphan and lock the file at the path instead."""
    directory = tmp_path / "run"
    real_flock = fcntl.flock
    raced = []

    def flock_after_the_holder_left(handle, operation):
        if not raced and operation & fcntl.LOCK_EX:
            raced.append(True)
            (directory / ".lock").unlink()  # what the holder does on release
        return real_flock(handle, operation)

    monkeypatch.setattr(training.runs.fcntl, "flock", flock_after_the_holder_left)
    with locked(directory):
        assert raced and (directory / ".lock").exists()
        with pytest.raises(RunStoreError, match="another process"), locked(directory):
            pass  # a third process: the lock we hold is the one at the path
    assert not (directory / ".lock").exists()


@pytest.mark.parametrize("umask", [0o022, 0o027, 0o002])
def test_run_store_files_get_the_mode_the_umask_gives(tmp_path, umask):
    previous = os.umask(umask)
    try:
        atomic_write_json(tmp_path / "alone.json", {"a": 1})
        config = _base()
        run(config, 0, tmp_path)
    finally:
        os.umask(previous)
    files = [tmp_path / "alone.json", *run_dir(tmp_path, config, 0).iterdir()]
    assert {"result.json", "policy_q.npy", "config.yaml"} <= {path.name for path in files}
    assert {path.name: oct(path.stat().st_mode & 0o777) for path in files} == {
        path.name: oct(0o666 & ~umask) for path in files
    }


def _package_copy(folder):
    """The three packages copied elsewhere, as a non-editable install puts them."""
    roots = {}
    for name in CODE_PACKAGES:
        roots[name] = folder / name
        shutil.copytree(ROOT / name, roots[name], ignore=shutil.ignore_patterns("__pycache__"))
    return roots


def test_a_code_stamp_follows_the_code_and_not_where_it_is_installed(tmp_path):
    roots = _package_copy(tmp_path)
    stamp = code_stamp(["dice_envs/SumAvoid-v0"])
    assert stamp == code_stamp(["dice_envs/SumAvoid-v0"], roots)  # same source, other place
    assert "training/train.py" in stamp and "dice_envs/games/sum_avoid.py" in stamp
    assert set(k for k in stamp if "::" in k) == {f"{REGISTRATION}::dice_envs/SumAvoid-v0"}
    assert stale_modules(stamp, roots) == []
    module = roots["dice_envs"] / "games" / "sum_avoid.py"
    text = module.read_text()
    # Comments, docstrings and layout do not make a stored run stale ...
    module.write_text(text.replace('"""', '"""Edited. ', 1) + "\n\n# a comment\n")
    assert stale_modules(stamp, roots) == []
    # ... a statement in a module the run imported does, and a module gone does.
    module.write_text(text + "\nEXTRA = 1\n")
    assert stale_modules(stamp, roots) == ["dice_envs/games/sum_avoid.py"]
    module.unlink()
    assert stale_modules(stamp, roots) == ["dice_envs/games/sum_avoid.py"]
    module.write_text(text)
    # Its game's registration entry counts; another game's, and the ids, do not.
    registration = roots["dice_envs"] / "registration.py"
    original = registration.read_text()
    registration.write_text(original.replace('"dice_envs.games.pig:PigVersus"', '"x:Y"'))
    assert stale_modules(stamp, roots) == []
    registration.write_text(original.replace('"dice_envs.games.sum_avoid:SumAvoid"', '"x:Y"'))
    assert stale_modules(stamp, roots) == [f"{REGISTRATION}::dice_envs/SumAvoid-v0"]
    registration.write_text(original.replace("\nGAMES: dict", "\nEXTRA = 1\nGAMES: dict"))
    assert stale_modules(stamp, roots) == [REGISTRATION]


def test_adding_a_game_leaves_stored_runs_current_and_editing_the_learner_makes_them_stale(
    tmp_path,
):
    config = _base()
    first = run(config, 0, tmp_path / "runs")
    folder = tmp_path / "runs" / first["run_dir"].split("runs/", 1)[1]
    stamp = json.loads((folder / "code.json").read_text())
    roots = _package_copy(tmp_path / "code")
    # A new game: its model module and one registration entry, as docs/architecture.md says.
    shutil.copy(ROOT / "tests" / "toy_games.py", roots["dice_envs"] / "games" / "toy.py")
    registration = roots["dice_envs"] / "registration.py"
    registration.write_text(
        registration.read_text()
        + '\nregister_game("toy/ToyStop-v0", "dice_envs.games.toy:ToyStop", [{}])\n'
    )
    assert stale_modules(stamp, roots) == []
    learner = roots["training"] / "qlearning.py"
    learner.write_text(learner.read_text() + "\nEXTRA = 1\n")
    assert stale_modules(stamp, roots) == ["training/qlearning.py"]


def test_a_run_of_changed_code_is_moved_aside_and_trained_afresh(tmp_path):
    config = _base()
    first = run(config, 0, tmp_path)
    folder = run_dir(tmp_path, config, 0)
    assert first["run_dir"] == str(folder) and (folder / "code.json").exists()
    stamp = json.loads((folder / "code.json").read_text())
    stamp["training/qlearning.py"] = "0123456789abcdef"  # as if made by another learner
    (folder / "code.json").write_text(json.dumps(stamp))
    assert read_finished(folder, run_identity(config, 0)) is None  # not read back
    with pytest.raises(StaleRun, match="training/qlearning.py"):
        check_current(folder)
    second = run(config, 0, tmp_path)
    assert second["status"] == "trained" and second["run_dir"] == str(folder)
    assert second["stale_moved_to"] == f"{folder}.stale" and "moved to" in what_happened(second)
    assert json.loads((folder.with_name(folder.name + ".stale") / "code.json").read_text()) == stamp
    assert second["value"] == first["value"]  # the same code trains the same run
    assert run(config, 0, tmp_path)["status"] == "read back"


def test_a_two_player_runs_saved_table_covers_the_grid_and_plays_as_an_opponent(tmp_path):
    # Goal 50 (the config's): below 39, always rolling is optimal and no table could differ.
    config = small(load_config(CONFIGS / "pig" / "selfplay_qlearning.yaml"), 20_000, 20_000)
    result = run(config, 0, tmp_path)
    table = np.load(os.path.join(result["run_dir"], "actions.npy"))
    assert table.shape == (51, 51, 50) and table.dtype == np.int16
    assert table.min() >= 0  # the mover's greedy action everywhere, not only where states are
    env_kwargs = config["env_kwargs"]
    played = baselines.evaluate(table, "dice_envs/Pig-v0", **env_kwargs)
    assert played.value == pytest.approx(result["value"], abs=1e-9)
    exploited = baselines.exploitability(table, "dice_envs/Pig-v0", goal=50)
    assert exploited.value == pytest.approx(result["exploitability"], abs=1e-9)
    assert result["exploitability"] > 0.01  # a tiny budget: far from optimal


@pytest.mark.parametrize(
    "space, message",
    [
        ({}, "non-empty mapping"),
        ({"learning_rate.power": {"normal": [0, 1]}}, "must be one of"),
        ({"learning_rate.power": {"uniform": [0.9, 0.6]}}, "low < high"),
        ({"learning_rate.power": {"uniform": [0.3, 1.0]}}, "power must be"),  # a bad corner
        ({"epsilon.end": {"choice": []}}, "non-empty list"),
    ],
)
def test_a_bad_search_space_is_refused_before_ray_starts(space, message):
    from training.config import ConfigError
    from training.tune import check_space, read_raw

    raw = read_raw(CONFIGS / "sum_avoid" / "qlearning.yaml")
    with pytest.raises(ConfigError, match=message):
        check_space(space, raw, "quick", "space.yaml")


def test_tune_sets_nested_hyperparameters():
    from training.config import resolve_config
    from training.tune import DEFAULT_SPACES, check_space, read_raw, with_params

    raw = read_raw(CONFIGS / "sum_avoid" / "qlearning.yaml")
    assert check_space(DEFAULT_SPACES["qlearning"], raw, "quick", "default")
    ppo = read_raw(CONFIGS / "pig" / "ppo.yaml")
    assert check_space(DEFAULT_SPACES["ppo"], ppo, "quick", "default")
    config = resolve_config(with_params(raw, {"learning_rate.power": 0.7, "epsilon.end": 0.05}))
    assert config["hyperparams"]["learning_rate"] == {"power": 0.7}
    assert config["hyperparams"]["epsilon"]["end"] == 0.05
    assert config["hyperparams"]["epsilon"]["start"] == 1.0  # the rest of the schedule kept


def test_a_ctrl_c_inside_ctrl_c_deferred_waits_for_the_block_to_end(tmp_path):
    # Python's own handler, whatever an earlier test (Ray Tune's) left installed.
    earlier = signal.signal(signal.SIGINT, signal.default_int_handler)
    written = []
    try:
        with pytest.raises(KeyboardInterrupt), ctrl_c_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.01)  # the signal has arrived, and is held
            written.append("curve")
            atomic_write_json(tmp_path / "a.json", [1])
            written.append("checkpoint")
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, earlier)
    assert written == ["curve", "checkpoint"] and json.loads((tmp_path / "a.json").read_text())


def test_a_ray_task_on_a_node_with_other_code_fails_before_training(tmp_path):
    from training.backends import _ray_run

    config = _base()
    folder = run_dir(tmp_path, config, 0).relative_to(tmp_path).as_posix()
    sources = {**source_stamp(), "training/qlearning.py": "0123456789abcdef"}
    with pytest.raises(RunStoreError, match=r"differs from the sweep's in \['training/qlearning"):
        _ray_run(config, 0, folder, {}, 0, None, sources)
    with pytest.raises(RunStoreError, match="names the run"):
        _ray_run(config, 0, "sum_avoid/qlearning/seed0-0123", {}, 0, None, source_stamp())

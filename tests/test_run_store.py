"""The run store and the report: runs are named by their identity, finished runs are checked
before they are read back, the report reads exactly the planned runs, and a sweep stopped by
Ctrl-C leaves only complete files and finishes when started again."""

import fcntl
import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import yaml
from training_helpers import (
    CONFIGS,
    ROOT,
    TINY_PPO,
    assert_complete_files,
    interrupt_sweep,
    small,
    write_configs,
)

import baselines
import training.runs
import training.train
from docs.tools import report as repository_report
from training.backends import MessageProgress
from training.config import load_config
from training.report import ReportError, build_report
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
from training.sweep import SweepBar
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
    return small(load_config(CONFIGS / "sum_avoid" / "qlearning.yaml"), 20_000, 10_000)


def _changed(config, dotted, value):
    config = json.loads(json.dumps(config))
    *parents, leaf = dotted.split(".")
    node = config
    for key in parents:
        node = node[key]
    node[leaf] = value
    return config


@pytest.mark.parametrize("dotted, value", CHANGES)
def test_any_config_change_is_another_run(tmp_path, dotted, value):
    base = _base()
    assert run_dir(tmp_path, _changed(base, dotted, value), 0) != run_dir(tmp_path, base, 0)


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
    new = _changed(old, "hyperparams.learning_rate", {"power": 0.6})
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
    stopped = _changed(config, "timesteps", 40_000)
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


def _tiny_configs(folder):
    return write_configs(
        folder,
        {
            "sum_avoid/qlearning": {
                "algo": "qlearning",
                "budget": {"timesteps": 20_000, "eval_every": 10_000},
            },
            # A second config of the same game and algorithm, side by side.
            "sum_avoid/qlearning_greedier": {
                "algo": "qlearning",
                "budget": {"timesteps": 20_000, "eval_every": 10_000},
                "hyperparams": {"epsilon": {"start": 0.5, "end": 0.05, "fraction": 0.5}},
            },
            "d20_rounds/qlearning": {
                "algo": "qlearning",
                "budget": {"timesteps": 20_000, "eval_every": 10_000},
            },
        },
    )


def _sweep(*args):
    command = [sys.executable, "-m", "training.sweep", *map(str, args)]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=240)


def test_the_report_reads_only_the_planned_runs(tmp_path):
    configs, runs, out = _tiny_configs(tmp_path / "configs"), tmp_path / "runs", tmp_path / "out"
    done = _sweep("--configs", configs, "--runs", runs, "--out", out)
    assert done.returncode == 0, done.stderr
    assert "6 trained, 0 resumed from a checkpoint, 0 read back" in done.stderr
    report = (out / "report.md").read_text()
    assert "Q-learning, 2 seeds" in report and "Q-learning (qlearning_greedier), 2 seeds" in report
    # The repository's report (docs/tools) of the same store has the heuristics' rows too.
    assert "heuristic: stop-at-25" in repository_report.build_report(
        configs, "quick", runs, tmp_path / "repository"
    )
    assert len(list((runs / "sum_avoid" / "qlearning").iterdir())) == 4  # two configs x 2 seeds
    # Ad hoc: another seed, and an edited config, in the same store.
    config = load_config(configs / "sum_avoid" / "qlearning.yaml")
    run(config, 3, runs)
    run(_changed(config, "hyperparams.gamma", 0.9), 0, runs)
    build_report(configs, "quick", runs, out)
    assert (out / "report.md").read_text() == report
    path = configs / "d20_rounds" / "qlearning.yaml"
    raw = yaml.safe_load(path.read_text())
    raw["seeds"] = [0, 1, 2]
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(ReportError, match="1 planned runs are not finished"):
        build_report(configs, "quick", runs, out)


def test_a_sweep_of_finished_runs_reads_them_back_and_exits_0(tmp_path):
    """The second sweep starts no worker (every run is finished) and must not join one."""
    configs = write_configs(
        tmp_path / "configs",
        {
            "sum_avoid/qlearning": {
                "algo": "qlearning",
                "budget": {"timesteps": 2_000, "eval_every": 1_000},
                "seeds": [0],
            }
        },
    )
    runs, out = tmp_path / "runs", tmp_path / "out"
    first = _sweep("--configs", configs, "--runs", runs, "--out", out)
    assert first.returncode == 0, first.stderr
    assert "1 trained, 0 resumed from a checkpoint, 0 read back" in first.stderr
    report = (out / "report.md").read_text()
    again = _sweep("--configs", configs, "--runs", runs, "--out", out)
    assert again.returncode == 0, again.stderr
    assert "0 trained, 0 resumed from a checkpoint, 1 read back" in again.stderr
    assert (out / "report.md").read_text() == report


def test_the_report_rebuilds_every_table_and_figure_from_saved_runs_alone(tmp_path, monkeypatch):
    configs = write_configs(
        tmp_path / "configs",
        {
            "sum_avoid/qlearning": {
                "algo": "qlearning",
                "budget": {"timesteps": 20_000, "eval_every": 10_000},
            },
            "sum_avoid/ppo": {
                "algo": "ppo",
                "budget": {"timesteps": 256, "eval_every": 128},
                "hyperparams": TINY_PPO,
            },
        },
    )
    runs, out = tmp_path / "runs", tmp_path / "out"
    done = _sweep("--configs", configs, "--runs", runs, "--out", out, "--no-report")
    assert done.returncode == 0, done.stderr
    repository_report.build_report(configs, "quick", runs, out)
    figures = {"sum_avoid.png", "sum_avoid_losses.png", "sum_avoid_values.png", "monte_carlo.png",
               "sum_avoid_errors.png"}  # fmt: skip
    assert figures <= {p.name for p in out.iterdir()}
    report = (out / "report.md").read_text()
    assert "PPO, 2 seeds, stochastic policy" in report
    assert "(sum_avoid_losses.png)" in report and "(monte_carlo.png)" in report
    assert "(sum_avoid_values.png)" in report and "(sum_avoid_errors.png)" in report
    tables, optimum = baselines.enumerated("dice_envs/SumAvoid-v0", N=10)
    from stable_baselines3 import PPO

    observed = tuple(tables.observation_array.T)
    reachable = np.zeros(tuple(tables.model.observation_nvec), dtype=bool)
    reachable[observed] = True
    for directory in sorted(runs.glob("sum_avoid/*/seed*")):
        result = json.loads((directory / "result.json").read_text())
        # The saved actions are the final greedy policy over the observation grid (-1 where
        # no state is): evaluated as they are, they give the run's value.
        table = np.load(directory / "actions.npy")
        assert table.shape == reachable.shape == (103,) and table.dtype == np.int16
        assert (table[reachable] >= 0).all() and (table[~reachable] == -1).all()
        played = baselines.evaluate(table, "dice_envs/SumAvoid-v0", N=10)
        assert played.value == pytest.approx(result["value"], abs=1e-9)
        final = baselines.score_actions(table[observed], tables, optimum)
        assert final.gap == pytest.approx(result["gap"], abs=1e-12)
        assert final.losses.sum() == pytest.approx(result["gap"], abs=1e-9)
        if result["algo"] == "ppo":
            # The stochastic row is the saved model's action distribution, scored exactly.
            model = PPO.load(directory / "policy.zip", device="cpu")
            played = baselines.evaluate(model, "dice_envs/SumAvoid-v0", deterministic=False, N=10)
            assert played.value == pytest.approx(result["stochastic_value"], abs=1e-9)
            assert result["stochastic_value"] != pytest.approx(result["value"], abs=1e-6)
    # From the saved runs alone (and the sweep's record of its wall time): no training, and
    # the same report and figures again.
    pages = (out / "games" / "sum_avoid.md").read_text()
    for path in out.iterdir():
        if path.is_dir():
            shutil.rmtree(path)  # the games' pages
        elif path.name != "sweep.json":
            path.unlink()

    def no_training(*args, **kwargs):
        raise AssertionError("the report trained a run")

    monkeypatch.setattr(training.train, "_train", no_training)
    repository_report.build_report(configs, "quick", runs, out)
    assert (out / "report.md").read_text() == report
    assert figures <= {p.name for p in out.iterdir()}
    assert (out / "games" / "sum_avoid.md").read_text() == pages


def test_the_report_reads_saved_actions_as_a_grid_table_or_in_the_tables_order(tmp_path):
    from docs.tools.report import _final_actions

    tables, optimum = baselines.enumerated("dice_envs/Pig-v0", goal=12)
    rng = np.random.default_rng(0)
    actions = np.where(tables.legal[:, 1], rng.integers(0, 2, tables.num_states), 0)
    grid = np.full(tuple(tables.model.observation_nvec), -1, dtype=np.int16)
    grid[tuple(tables.observation_array.T)] = actions
    assert _final_actions(tmp_path, tables) is None  # no actions.npy: an older run
    np.save(tmp_path / "actions.npy", grid)
    assert np.array_equal(_final_actions(tmp_path, tables), actions)
    np.save(tmp_path / "actions.npy", actions.astype(np.int16))  # a run saved before the grid
    assert np.array_equal(_final_actions(tmp_path, tables), actions)
    np.save(tmp_path / "actions.npy", grid[:, :, :5])
    with pytest.raises(ReportError, match=r"shape \(13, 13, 5\): neither the observation grid"):
        _final_actions(tmp_path, tables)


def test_a_two_player_runs_saved_table_covers_the_grid_and_plays_as_an_opponent(tmp_path):
    # Goal 50 (the config's): below 39, always rolling is optimal and no table could differ.
    config = small(load_config(CONFIGS / "pig" / "selfplay_qlearning.yaml"), 20_000, 10_000)
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


def test_the_sweep_bar_counts_steps_over_runs():
    bar = SweepBar(["a", "b", "c"], totals=[100, 200, 50], done=[0, 0, 50])
    for message in [
        ("start", 0, 0), ("steps", 0, 60), ("start", 1, 40), ("eval", 1, 80, 0.0123, "gap"),
        ("steps", 0, 100), ("done", 0, {}),
    ]:  # fmt: skip
        bar.handle(message)
    assert bar.bar.n == 100 + 80 + 50 and bar.finished == 2
    assert set(bar.ended) == {0}  # a finished run's rate stops at its end
    assert "b gap 1.23 %" in bar.last_gap
    bar.close()


def test_worker_progress_reports_exact_and_sampled_gaps_to_the_sweep_bar():
    # A Yahtzee run's checkpoints carry a sampled gap and no exact one: its worker once died
    # on the missing key, failing every full-budget Yahtzee run of a sweep.
    sent = []
    channel = type("Channel", (), {"put": staticmethod(sent.append)})()
    progress = MessageProgress(channel, 1)
    progress.evaluated({"steps": 80, "relative_gap": 0.0123})
    progress.evaluated({"steps": 90, "sampled_relative_gap": 0.5, "sampled_gap": 127.3})
    assert sent == [("eval", 1, 80, 0.0123, "gap"), ("eval", 1, 90, 0.5, "sampled gap")]
    bar = SweepBar(["a", "yahtzee s1"], totals=[100, 100], done=[0, 0])
    bar.handle(sent[1])
    assert "yahtzee s1 sampled gap 50 %" in bar.last_gap
    bar.close()


def test_the_sweep_bar_estimates_time_left_per_kind_of_run():
    kinds = [("pig/ppo", "ppo"), ("pig/ppo", "ppo"), ("pig/qlearning", "qlearning")]
    bar = SweepBar(["p0", "p1", "q0"], [1000, 1000, 100_000], [0, 0, 0], kinds, workers=2)
    assert bar.seconds_left() is None  # no rate measured yet
    bar.started = {0: (0.0, 0)}
    bar.done = [100, 0, 0]
    # PPO: 10 steps/s, so 90 s + 100 s left; Q-learning's rate is not known yet.
    assert bar.seconds_left(now=10.0) == (pytest.approx((90 + 100) / 2), False)
    bar.started[2] = (0.0, 0)
    bar.done[2] = 50_000
    # Q-learning: 5,000 steps/s, so 10 s more; two workers share it all.
    assert bar.seconds_left(now=10.0) == (pytest.approx((90 + 100 + 10) / 2), True)
    # A finished run's rate is measured up to its end, not up to now.
    bar.started[1], bar.ended[1], bar.done[1] = (0.0, 0), 5.0, 1000  # 200 steps/s
    # (Q-learning, still running, is now at 500 steps/s: 100 s left.)
    assert bar.seconds_left(now=100.0)[0] == pytest.approx((900 / ((1 + 200) / 2) + 100) / 2)
    bar.close()


@pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(), reason="signals: main thread"
)
def test_sigterm_waits_for_a_write_in_progress_and_a_second_one_cannot_break_off_the_stop():
    from training.runs import ctrl_c_deferred
    from training.sweep import _sigterm_as_ctrl_c

    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    happened = []

    def stop_while_writing():
        with _sigterm_as_ctrl_c():
            try:
                with ctrl_c_deferred():  # as the sweep writes a shipped run or a message
                    signal.raise_signal(signal.SIGTERM)
                    happened.append("written")
            except KeyboardInterrupt:
                happened.append("stopping")
                signal.raise_signal(signal.SIGTERM)  # a second one while the workers stop
                happened.append("stopped")

    try:
        stop_while_writing()
    except KeyboardInterrupt:  # fail this test, not the whole pytest session
        pytest.fail(f"the stop was broken off: {happened}")
    assert happened == ["written", "stopping", "stopped"]
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


@pytest.mark.parametrize("sigterm", [False, True], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_stops_a_sweep_and_the_rerun_finishes_the_rest(tmp_path, sigterm):
    """Ctrl-C (SIGINT to the process group), or SIGTERM to the sweep alone: its workers stop
    with it, so nothing trains after it has exited; after Ctrl-C, the same command again
    finishes the rest."""
    configs = write_configs(
        tmp_path / "configs",
        {
            "sum_avoid/qlearning": {
                "algo": "qlearning",
                "budget": {"timesteps": 10_000, "eval_every": 5_000},
                "seeds": [0],
            },
            "d20_rounds/ppo": {
                "algo": "ppo",
                "budget": {"timesteps": 6144, "eval_every": 1024},
                "hyperparams": {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 2},
                "seeds": [0, 1],
            },
        },
    )
    runs, out = tmp_path / "runs", tmp_path / "out"
    command = [sys.executable, "-m", "training.sweep", "--configs", str(configs)]
    command += ["--runs", str(runs), "--out", str(out), "--workers", "2"]
    seconds, status, stderr = interrupt_sweep(command, runs, timeout=90, sigterm=sigterm)
    assert seconds < 10 and status == 130, stderr
    assert "Traceback" not in stderr
    assert "run the same command again to resume" in stderr.strip().splitlines()[-1]
    stopped = {p: p.read_bytes() for p in runs.rglob("*") if p.is_file()}
    time.sleep(3)  # a worker left running would checkpoint or finish a run meanwhile
    assert {p: p.read_bytes() for p in runs.rglob("*") if p.is_file()} == stopped
    assert_complete_files(runs)
    assert any(pickle.loads(p.read_bytes())["step"] > 0 for p in runs.rglob("checkpoint.pkl"))
    assert not (out / "report.md").exists()
    if sigterm:
        return  # the store is left as Ctrl-C leaves it (above); the rerun is the same from here
    finished_before = {p: p.read_bytes() for p in runs.rglob("result.json")}
    rerun = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert rerun.returncode == 0, rerun.stderr
    assert len(list(runs.rglob("result.json"))) == 3
    assert all(p.read_bytes() == data for p, data in finished_before.items())
    said = re.search(
        r"(\d+) trained, (\d+) resumed from a checkpoint, (\d+) read back", rerun.stderr
    )
    trained, resumed, read_back = map(int, said.groups())
    assert read_back == len(finished_before) and resumed >= 1 and trained + resumed + read_back == 3
    assert (out / "report.md").exists()


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


def test_a_selection_with_no_config_of_the_budget_is_refused(tmp_path):
    # The default games are full-budget configs: asked for `quick` alone, nothing is planned.
    with pytest.raises(ReportError, match="has a `quick` budget"):
        build_report(CONFIGS, "quick", tmp_path / "runs", tmp_path / "out", ["pig/ppo_goal100"])
    assert not (tmp_path / "out").exists()


def test_the_results_full_section_shows_the_default_games_and_links_the_rest(tmp_path, monkeypatch):
    # The maintainer's tool (docs/tools/training_report.py) writes the results page's sections.
    from docs.tools.training_report import write_training_docs

    configs = write_configs(
        tmp_path / "configs",
        {
            "sum_avoid/qlearning": {"algo": "qlearning", "budget": {"timesteps": 20_000,
                                                                    "eval_every": 10_000}},
            "d20_rounds/qlearning": {"algo": "qlearning", "budget": {"timesteps": 20_000,
                                                                     "eval_every": 10_000}},
            "simultaneous_hog/qlearning": {"algo": "qlearning", "env_kwargs": {"goal": 8,
                                           "max_dice": 3}, "evaluation": {"exploitability": True},
                                           "budget": {"timesteps": 20_000, "eval_every": 10_000}},
        },
    )  # fmt: skip
    for path in sorted(configs.glob("*/*.yaml")):  # the same budget, named `full`
        raw = yaml.safe_load(path.read_text())
        raw["budgets"]["full"] = raw["budgets"]["quick"]
        path.write_text(yaml.safe_dump(raw, sort_keys=False))
    (configs / "targets.yaml").write_text(
        "- {name: SumAvoid within 1, configs: [sum_avoid/qlearning], measure: gap, bound: 1.0,"
        " of: every}\n- {name: not here, configs: [pig/qlearning], measure: gap, bound: 1.0,"
        " of: best}\n"
    )
    runs = tmp_path / "runs"
    for path in sorted(configs.glob("*/*.yaml")):
        for seed in (0, 1):
            run(load_config(path, "full"), seed, runs)
    results = tmp_path / "docs/results/training.md"  # the default page under docs
    results.parent.mkdir(parents=True)
    empty = "".join(f"<!-- {name}:start -->\n<!-- {name}:end -->\n" for name in
                    ("training", "training-timing", "training-full"))  # fmt: skip
    results.write_text(empty)
    monkeypatch.chdir(tmp_path)  # docs/ is relative to the folder, as in the repository
    write_training_docs(configs, "full", runs, full_configs=("sum_avoid/qlearning",))
    text = results.read_text()
    section = text.split("<!-- training-full:start -->")[1].split("<!-- training-full:end -->")[0]
    # The results and their times are the default games' alone.
    assert "`sum_avoid/qlearning.yaml`" in section
    assert "`d20_rounds/qlearning.yaml`" not in section and "d20_rounds.png" not in section
    assert "| d20_rounds |" not in section and "The 2 runs shown here took" in section
    assert "The other 2 configs" in section
    assert "(../training/full/report.md)" in section  # relative to docs/results/
    assert "(../training/full/sum_avoid.png)" in section
    # The targets whose configs are all in the report, judged; the others left out.
    assert "### Targets" in section and "| SumAvoid within 1 | Q-learning (sum_avoid/" in section
    assert "not here" not in section
    assert "## Targets" in (tmp_path / "docs/training/full/report.md").read_text()
    assert "<!-- training:start -->\n<!-- training:end -->" in text  # the quick ones untouched
    assert "d20_rounds" in (tmp_path / "docs/training/full/report.md").read_text()
    # A two-player game's page has its exploitability rows and curve.
    page = (tmp_path / "docs/games/simultaneous_hog.md").read_text()
    assert "| Q-learning, 2 seeds | five-dice |" in page, page
    assert "(../training/full/simultaneous_hog_goal8_max_dice3_exploitability.png)" in page
    assert "exploitability" not in (tmp_path / "docs/games/sum_avoid.md").read_text()
    # A game no config trains at this budget says so on its page.
    assert (
        "No config of this game has a `full` budget" in (tmp_path / "docs/games/pig.md").read_text()
    )
    # From the archive alone (`make report`): the report of every config archived.
    report = tmp_path / "docs/training/full/report.md"
    report.unlink()
    write_training_docs(configs, "full", full_configs=("sum_avoid/qlearning",))
    assert all(f"`{game}/qlearning.yaml`" in report.read_text()
               for game in ("sum_avoid", "d20_rounds", "simultaneous_hog"))  # fmt: skip
    # Archiving one config keeps the others archived, and the report is of them all. A
    # default config without archived runs is named in the page's section; its game's page
    # says it waits, and the older report's figures of it go.
    trained = (tmp_path / "docs/games/sum_avoid.md").read_text()
    assert "No config" not in trained and "| sum_avoid (N=10) | Q-learning, 2 seeds |" in trained
    figure = tmp_path / "docs/training/full/sum_avoid.png"
    assert figure.is_file()
    shutil.rmtree(tmp_path / "docs/training/runs/full/sum_avoid")
    results.write_text(empty)
    write_training_docs(configs, "full", runs, ["d20_rounds"], page=results,
                        full_configs=("sum_avoid/qlearning",))  # fmt: skip
    section = results.read_text().split("<!-- training-full:start -->")[1]
    assert "Not yet trained at the full budget by the current code (no archived runs): " \
        "`sum_avoid/qlearning`." in section  # fmt: skip
    assert "| SumAvoid within 1 |" not in section and "(../training/full/report.md)" in section
    assert "`simultaneous_hog/qlearning.yaml`" in report.read_text()
    assert "`sum_avoid/qlearning.yaml`" not in report.read_text()
    assert "Not yet trained at the `full` budget by the current code: no runs of " \
        "`sum_avoid/qlearning.yaml` are archived. `python -m training.sweep --budget full " \
        "--games sum_avoid/qlearning` trains them." in (tmp_path / "docs/games/sum_avoid.md") \
        .read_text()  # fmt: skip
    assert not figure.exists() and (tmp_path / "docs/training/full/d20_rounds.png").is_file()
    # A page without the section's markers is refused before any report is made.
    results.write_text("<!-- training:start -->\n<!-- training:end -->\n")
    with pytest.raises(ValueError, match="no <!-- training-full:start -->"):
        write_training_docs(configs, "full", runs, docs=tmp_path / "elsewhere", page=results)
    assert not (tmp_path / "elsewhere").exists()


def test_a_ray_task_on_a_node_with_other_code_fails_before_training(tmp_path):
    from training.backends import _ray_run

    config = _base()
    folder = run_dir(tmp_path, config, 0).relative_to(tmp_path).as_posix()
    sources = {**source_stamp(), "training/qlearning.py": "0123456789abcdef"}
    with pytest.raises(RunStoreError, match=r"differs from the sweep's in \['training/qlearning"):
        _ray_run(config, 0, folder, {}, 0, None, sources)
    with pytest.raises(RunStoreError, match="names the run"):
        _ray_run(config, 0, "sum_avoid/qlearning/seed0-0123", {}, 0, None, source_stamp())


def test_the_restamp_tool_checks_an_archived_run_by_evaluating_it_again(tmp_path):
    from docs.tools.restamp import reevaluated

    entry = ROOT / "docs" / "training" / "runs" / "quick" / "pig" / "qlearning" / "seed0"
    identity = yaml.safe_load((entry / "config.yaml").read_text())
    result = json.loads((entry / "result.json").read_text())
    assert reevaluated(entry, identity, result) is None
    result["gap"] += 1e-9
    assert reevaluated(entry, identity, result).startswith("gap ")

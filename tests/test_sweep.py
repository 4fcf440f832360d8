"""The sweep: a sweep of finished runs reads them back, its progress bar counts and estimates,
and a sweep stopped by Ctrl-C (or SIGTERM) leaves only complete files and nothing training, and
finishes when started again."""

import pickle
import re
import signal
import subprocess
import sys
import threading
import time

import pytest
from training_helpers import ROOT, assert_complete_files, interrupt_sweep, sweep, write_configs

from training.backends import MessageProgress
from training.runs import ctrl_c_deferred
from training.sweep import SweepBar


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
    first = sweep("--configs", configs, "--runs", runs, "--out", out)
    assert first.returncode == 0, first.stderr
    assert "1 trained, 0 resumed from a checkpoint, 0 read back" in first.stderr
    report = (out / "report.md").read_text()
    again = sweep("--configs", configs, "--runs", runs, "--out", out)
    assert again.returncode == 0, again.stderr
    assert "0 trained, 0 resumed from a checkpoint, 1 read back" in again.stderr
    assert (out / "report.md").read_text() == report


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
                "budget": {"timesteps": 3072, "eval_every": 1024},
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

"""Training: Q-learning reaches the optimum, runs are deterministic, a stopped run resumes bit
for bit, the CLIs behave (Ctrl-C, a killed run). PPO and MaskablePPO: tests/test_training_ppo.py."""

import io
import json
import os
import pickle
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import yaml
from training_helpers import CONFIGS, ROOT, TINY_PPO, default_sigint, small

from dice_envs import env_ids
from training.config import load_config
from training.runs import planned_runs, run_dir
from training.train import BarProgress, Progress, run

BUILT_IN_GAMES = env_ids()  # at import: the package's own games, none a test registers


def test_every_config_loads_for_its_budgets():
    paths = sorted(CONFIGS.glob("*/*.yaml"))
    # Every game has qlearning.yaml and ppo.yaml; Pig and the Ten Thousand race also their
    # self-play configs, Simultaneous Hog self-play PPO, Yahtzee its wide and fast PPO; the default
    # games (Pig to 100, d20 with 100 rounds) and Simultaneous Hog configs of the full budget
    # only.
    defaults = {"qlearning_goal100", "ppo_goal100", "qlearning_rounds100", "ppo_rounds100"}
    assert {p.stem for p in paths} == {
        "qlearning", "ppo", "selfplay_qlearning", "selfplay_ppo", "ppo_wide", "ppo_fast",
        *defaults,
    }  # fmt: skip
    assert [
        p.relative_to(CONFIGS).as_posix() for p in paths if p.stem in ("ppo_wide", "ppo_fast")
    ] == ["yahtzee/ppo_fast.yaml", "yahtzee/ppo_wide.yaml"]
    selfplay = {p.relative_to(CONFIGS).as_posix() for p in paths if p.stem.startswith("selfplay")}
    assert selfplay == {
        "pig/selfplay_qlearning.yaml", "pig/selfplay_ppo.yaml",
        "simultaneous_hog/selfplay_ppo.yaml",
        "ten_thousand_duel/selfplay_qlearning.yaml", "ten_thousand_duel/selfplay_ppo.yaml",
    }  # fmt: skip
    full_only = {
        p for p in paths if p.stem in defaults or p.parent.name in ("simultaneous_hog", "yahtzee")
    }
    algos_by_id: dict[str, set[str]] = {}
    for path in paths:
        for budget in ("full",) if path in full_only else ("quick", "full"):
            config = load_config(path, budget)
            assert config["timesteps"] >= config["eval_every"] > 0 and config["seeds"]
        algos_by_id.setdefault(config["env_id"], set()).add(config["algo"])
    # Configs are optional for a game; a game with configs is trained by both algorithms, and
    # every game registered here today has them.
    assert set(algos_by_id) <= set(env_ids())
    assert all(algos == {"qlearning", "ppo"} for algos in algos_by_id.values())
    assert set(BUILT_IN_GAMES) <= set(algos_by_id)
    # The default games and Simultaneous Hog plan no quick run: `make demo` stays short.
    quick = {path for path, _, _ in planned_runs(CONFIGS, "quick")}
    assert quick == set(paths) - full_only
    full = {path for path, _, _ in planned_runs(CONFIGS, "full")}
    assert full == set(paths)
    # One config by game/name, beside whole games.
    chosen = planned_runs(CONFIGS, "full", ["pig/ppo_goal100", "sum_avoid"])
    assert {path.relative_to(CONFIGS).as_posix() for path, _, _ in chosen} == {
        "pig/ppo_goal100.yaml", "sum_avoid/ppo.yaml", "sum_avoid/qlearning.yaml"
    }  # fmt: skip
    with pytest.raises(ValueError, match="no configs for \\['pig/ppo_goal1000'\\]"):
        planned_runs(CONFIGS, "full", ["pig/ppo_goal1000"])
    pig100 = load_config(CONFIGS / "pig" / "ppo_goal100.yaml", "full")
    assert pig100["env_kwargs"] == {"goal": 100, "opponent": "hold-at-20"}
    d20 = load_config(CONFIGS / "d20_rounds" / "qlearning_rounds100.yaml", "full")
    assert d20["env_kwargs"] == {"rounds": 100}


@pytest.mark.parametrize("n_envs", [1, 512])
def test_qlearning_reaches_one_percent_on_sum_avoid(tmp_path, n_envs):
    # Evaluations draw on no stream of the learner's: the table trained (so the final gap) is
    # the same whatever eval_every is; 250,000 (not a multiple of 512) keeps the checkpoints
    # few, each of which records the code stamp and scores the table exactly.
    config = small(load_config(CONFIGS / "sum_avoid" / "qlearning.yaml"), 1_000_000, 250_000)
    config["hyperparams"]["n_envs"] = n_envs
    assert load_config(CONFIGS / "sum_avoid" / "qlearning.yaml")["hyperparams"]["n_envs"] == 512
    result = run(config, seed=0, root=tmp_path)
    assert result["relative_gap"] < 0.01
    assert result["optimal_value"] == pytest.approx(13.2171185904, abs=1e-9)
    curve = json.loads((run_dir(tmp_path, config, 0) / "curve.json").read_text())
    # A batch of copies steps together, so an evaluation comes within one batch past its point.
    assert curve[0]["steps"] == 0
    assert 0 <= curve[-1]["steps"] - config["timesteps"] < n_envs
    assert len(curve) == config["timesteps"] // config["eval_every"] + 1


def _q_table(root, config, seed):
    return np.load(run_dir(root, config, seed) / "policy_q.npy")


@pytest.mark.parametrize("n_envs", [1, 64])
def test_same_seed_same_q_table_bit_for_bit_also_across_a_resume(tmp_path, n_envs):
    # Three points (0, 10,000, 20,000): stopped at the middle one, resumed to the end.
    config = small(load_config(CONFIGS / "pig" / "qlearning.yaml"), 20_000, 10_000, n_envs=n_envs)
    run(config, seed=5, root=tmp_path / "a")
    run(config, seed=5, root=tmp_path / "b")
    stopped = run(config, seed=5, root=tmp_path / "c", stop_after=10_000)["stopped_at"]
    assert 0 <= stopped - 10_000 < n_envs
    starts = []

    class Starts(Progress):
        def start(self, steps, total):
            starts.append(steps)

    run(config, seed=5, root=tmp_path / "c", progress=Starts())
    assert starts == [stopped]  # resumed from the checkpoint, not from zero
    tables = [_q_table(tmp_path / x, config, 5) for x in ("a", "b", "c")]
    assert np.array_equal(tables[0], tables[1]) and np.array_equal(tables[0], tables[2])
    for name in ("curve.json", "result.json"):
        texts = {(run_dir(tmp_path / x, config, 5) / name).read_text() for x in "abc"}
        assert len(texts) == 1, name
    run(config, seed=6, root=tmp_path / "d")
    assert not np.array_equal(tables[0], _q_table(tmp_path / "d", config, 6))


def test_streams_of_different_seeds_and_uses_are_all_distinct():
    from training.streams import run_streams

    states = [
        tuple(stream.generate_state(4))
        for seed in range(6)
        for stream in run_streams(seed, 8).all().values()
    ]
    assert len(states) == 6 * 12 and len(set(states)) == len(states)


def test_cli_errors_and_json(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "env_id: dice_envs/SumAvoid-v0\nalgo: qlearning\nhyperparams: {eps: 1}\n"
        "budgets: {quick: {timesteps: 10, eval_every: 5}}\n"
    )
    command = [sys.executable, "-m", "training.train"]
    result = subprocess.run(command + [str(bad)], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 2 and "unknown key 'eps'" in result.stderr
    lines = result.stderr.strip().splitlines()  # the usage, then one error line
    assert lines[0].startswith("usage: python -m training.train ")
    assert lines[-1].startswith("python -m training.train: error: ") and "error" not in lines[-2]
    good = tmp_path / "good.yaml"
    raw = yaml.safe_load((CONFIGS / "d20_rounds" / "qlearning.yaml").read_text())
    raw["budgets"]["quick"] = {"timesteps": 20_000, "eval_every": 10_000}
    good.write_text(yaml.safe_dump(raw))
    runs = tmp_path / "runs"
    refused = subprocess.run(
        command + [str(good), "--seed", "-1", "--runs", str(runs)],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert refused.returncode == 2 and "seed must be an integer >= 0" in refused.stderr
    assert not runs.exists()  # nothing created for a refused run
    result = subprocess.run(
        command + [str(good), "--seed", "3", "--json", "--runs", str(runs)],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert {"value", "optimal_value", "gap", "relative_gap", "steps", "seconds"} <= set(data)
    # 512 copies step at once: the run ends within one batch past its budget, as SB3's do.
    assert 20_000 <= data["steps"] < 20_000 + 512 and data["seed"] == 3
    assert "gap" in result.stderr and "step" in result.stderr  # the progress bar
    folder = str(run_dir(runs, load_config(good), 3))
    assert data["status"] == "trained" and data["run_dir"] == folder
    assert result.stdout.splitlines()[0] == f"trained {data['steps']:,} steps in {folder}"
    # Again: read back, said so, with the same numbers and the folder (without --json too).
    again = subprocess.run(
        command + [str(good), "--seed", "3", "--runs", str(runs)],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    lines = again.stdout.splitlines()
    assert lines[0] == f"read back from {folder} (finished before; nothing trained)"
    assert lines[1:] == result.stdout.splitlines()[1:-1]  # the same result lines
    assert "step/s" not in again.stderr  # no bar: nothing trained


def test_the_bar_keeps_its_total_when_a_run_ends_past_its_budget():
    stream = io.StringIO()
    bar = BarProgress("hog/ppo seed 0", file=stream)
    bar.start(0, 200_000)
    bar.steps(100_000)
    bar.evaluated({"steps": 200_192, "relative_gap": 0.01})
    assert bar.bar.total == bar.bar.n == 200_192
    assert str(bar.bar).startswith("hog/ppo seed 0: 100%|")
    bar.close()


def _start_train(config_path, runs):
    command = [sys.executable, "-m", "training.train", str(config_path), "--runs", str(runs)]
    return command, subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=default_sigint,
    )  # fmt: skip


def _wait_for_points(curve_path, points, seconds=60):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if curve_path.exists() and len(json.loads(curve_path.read_text())) >= points:
            return
        time.sleep(0.1)
    raise AssertionError(f"{curve_path} never had {points} points")


def _long_d20_ppo(tmp_path, timesteps=200_000):
    config_path = tmp_path / "ppo.yaml"
    raw = yaml.safe_load((CONFIGS / "d20_rounds" / "ppo.yaml").read_text())
    raw["hyperparams"].update(TINY_PPO)
    raw["budgets"]["quick"] = {"timesteps": timesteps, "eval_every": 512}
    raw["evaluation"] = {"episodes": 5}
    config_path.write_text(yaml.safe_dump(raw))
    return config_path, load_config(config_path)


def test_ctrl_c_on_a_run_exits_130_with_one_line_and_resumes(tmp_path):
    config_path, config = _long_d20_ppo(tmp_path)
    command, process = _start_train(config_path, tmp_path)
    directory = run_dir(tmp_path, config, 0)
    _wait_for_points(directory / "curve.json", 3)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=10)
    assert process.returncode == 130
    assert "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    assert "run the same command again to resume" in last and "checkpoint at step" in last
    checkpoint = pickle.loads((directory / "checkpoint.pkl").read_bytes())
    steps = [p["steps"] for p in json.loads((directory / "curve.json").read_text())]
    assert checkpoint["step"] == steps[-1] > 0
    assert not list(directory.glob(".*.tmp"))


def test_a_killed_run_resumes(tmp_path):
    # Six intervals of 512 steps: killed once two are done, three or four are left to train.
    config_path, config = _long_d20_ppo(tmp_path, timesteps=3_072)
    command, process = _start_train(config_path, tmp_path)
    curve = run_dir(tmp_path, config, 0) / "curve.json"
    _wait_for_points(curve, 3)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    done_before = json.loads(curve.read_text())[-1]["steps"]
    assert 0 < done_before < 3_072
    # The same run, resumed by a new process, finishes.
    finished = subprocess.run(command + ["--json"], cwd=ROOT, capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr
    result = json.loads(finished.stdout.strip().splitlines()[-1])
    assert result["steps"] == 3_072
    steps = [p["steps"] for p in json.loads(curve.read_text())]
    assert steps == sorted(steps) and done_before in steps
    # It says it resumed, from which checkpoint (the last one, or the one before if the kill
    # came between the curve and the checkpoint), and where.
    resumed_at = result["resumed_at"]
    assert result["status"] == "resumed" and resumed_at in steps[:-1]
    assert done_before - 512 <= resumed_at <= done_before
    folder = str(run_dir(tmp_path, config, 0))
    assert finished.stdout.splitlines()[0] == (
        f"resumed at step {resumed_at:,} and trained to 3,072 steps in {folder}"
    )


def _vector_learner(mode, **env_kwargs):
    import gymnasium as gym

    from training.qlearning import VectorQLearning
    from training.streams import run_streams

    env = gym.make_vec("dice_envs/SumAvoid-v0", num_envs=8, autoreset_mode=mode, **env_kwargs)
    greedy = {
        "gamma": 1.0,
        "learning_rate": {"power": 1},
        "epsilon": {"start": 0.0, "end": 0.0, "fraction": 1.0},
    }
    return VectorQLearning(env, greedy, run_streams(0, 1), 8)


def test_vector_qlearning_needs_same_step_resets():
    with pytest.raises(ValueError, match="autoreset_mode='SameStep'"):
        _vector_learner("NextStep")


def test_vector_qlearning_looks_ahead_from_where_a_truncated_episode_stopped():
    """Every copy rolls once from 0 and is cut off: the target is the value of the sums the
    roll reached (100 each), not of the restarted sum 0."""
    learner = _vector_learner("SameStep", max_episode_steps=1)
    learner.table[:] = 0.0
    learner.table[0, 1] = 1.0  # roll at 0 is greedy
    learner.table[1:7] = 100.0
    learner.learn(8)
    assert learner.table[0, 1] == pytest.approx(100.0)

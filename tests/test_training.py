"""Training: Q-learning reaches the optimum, runs are deterministic, survive a kill and resume,
PPO and MaskablePPO run end to end, configs refuse bad keys, the report rebuilds."""

import copy
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml

from training.config import ConfigError, load_config, resolve_config
from training.report import build_report
from training.train import run

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ROOT / "configs"


def small(config: dict, timesteps: int, eval_every: int, **hyperparams) -> dict:
    config = copy.deepcopy(config)
    config.update(timesteps=timesteps, eval_every=eval_every)
    config["evaluation"]["episodes"] = 20
    config["hyperparams"].update(hyperparams)
    return config


def tiny_ppo(game: str, encoding: str = "onehot") -> dict:
    config = load_config(CONFIGS / game / "ppo.yaml")
    return small(
        config, 512, 256, n_envs=2, n_steps=64, batch_size=64, n_epochs=2, obs_encoding=encoding
    )


def test_every_config_loads_for_both_budgets():
    paths = sorted(CONFIGS.glob("*/*.yaml"))
    assert {p.parent.name for p in paths} == {"sum_avoid", "d20_rounds", "pig", "ten_thousand"}
    assert {p.stem for p in paths} == {"qlearning", "ppo"}
    for path in paths:
        for budget in ("quick", "full"):
            config = load_config(path, budget)
            assert config["timesteps"] >= config["eval_every"] > 0 and config["seeds"]


def test_qlearning_reaches_one_percent_on_sum_avoid(tmp_path):
    config = load_config(CONFIGS / "sum_avoid" / "qlearning.yaml")
    result = run(config, seed=0, root=tmp_path)
    assert result["relative_gap"] < 0.01
    assert result["optimal_value"] == pytest.approx(13.2171185904, abs=1e-9)
    curve = json.loads((tmp_path / "quick/sum_avoid/qlearning/seed_0/curve.json").read_text())
    assert curve[0]["steps"] == 0 and curve[-1]["steps"] == config["timesteps"]
    assert len(curve) == config["timesteps"] // config["eval_every"] + 1


def test_same_seed_same_q_table_bit_for_bit(tmp_path):
    config = small(load_config(CONFIGS / "pig" / "qlearning.yaml"), 60_000, 20_000)
    run(config, seed=5, root=tmp_path / "a")
    run(config, seed=5, root=tmp_path / "b")
    stopped = run(config, seed=5, root=tmp_path / "c", stop_after=20_000)
    assert stopped == {"stopped_at": 20_000}
    run(config, seed=5, root=tmp_path / "c")  # resumes from the checkpoint at 20,000
    tables = [
        np.load(tmp_path / x / "quick/pig/qlearning/seed_5/policy_q.npy") for x in ("a", "b", "c")
    ]
    assert np.array_equal(tables[0], tables[1]) and np.array_equal(tables[0], tables[2])
    other = small(config, 60_000, 20_000)
    run(other, seed=6, root=tmp_path / "d")
    assert not np.array_equal(
        tables[0], np.load(tmp_path / "d/quick/pig/qlearning/seed_6/policy_q.npy")
    )


@pytest.mark.parametrize(
    "game, agent, encoding",
    [
        ("sum_avoid", "PPO", "onehot"),
        ("ten_thousand", "MaskablePPO", "onehot"),
        ("sum_avoid", "PPO", "normalized"),
        ("pig", "MaskablePPO", "normalized"),
    ],
)
def test_ppo_runs_start_save_resume_and_evaluate(tmp_path, game, agent, encoding):
    config = tiny_ppo(game, encoding)
    stopped = run(config, seed=0, root=tmp_path, stop_after=256)
    assert stopped["stopped_at"] >= 256
    directory = tmp_path / f"quick/{game}/ppo/seed_0"
    assert (directory / "checkpoint.zip").exists() and not (directory / "result.json").exists()
    result = run(config, seed=0, root=tmp_path)
    assert result["agent"] == agent and result["steps"] >= 512
    assert (directory / "policy.zip").exists() and (directory / "config.yaml").exists()
    curve = json.loads((directory / "curve.json").read_text())
    assert [p["steps"] for p in curve][:2] == [0, 256]
    assert all(0 <= p["agreement"] <= 1 and p["gap"] >= -1e-9 for p in curve)
    assert run(config, seed=0, root=tmp_path) == json.loads((directory / "result.json").read_text())


@pytest.mark.slow
def test_a_killed_run_resumes(tmp_path):
    config_path = tmp_path / "ppo.yaml"
    raw = yaml.safe_load((CONFIGS / "d20_rounds" / "ppo.yaml").read_text())
    raw["hyperparams"].update(n_envs=2, n_steps=64, batch_size=64, n_epochs=2)
    raw["budgets"]["quick"] = {"timesteps": 200_000, "eval_every": 512}
    raw["evaluation"] = {"episodes": 5}
    config_path.write_text(yaml.safe_dump(raw))
    command = [sys.executable, "-m", "training.train", str(config_path), "--runs", str(tmp_path)]
    process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    curve = tmp_path / "quick/d20_rounds/ppo/seed_0/curve.json"
    deadline = time.time() + 60
    while (
        time.time() < deadline and len(json.loads(curve.read_text()) if curve.exists() else []) < 3
    ):
        time.sleep(0.2)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    done_before = json.loads(curve.read_text())[-1]["steps"]
    assert 0 < done_before < 200_000
    raw["budgets"]["quick"]["timesteps"] = done_before + 1024
    config_path.write_text(yaml.safe_dump(raw))
    finished = subprocess.run(command + ["--json"], cwd=ROOT, capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr
    result = json.loads(finished.stdout.strip().splitlines()[-1])
    assert result["steps"] >= done_before + 1024
    steps = [p["steps"] for p in json.loads(curve.read_text())]
    assert steps == sorted(steps) and done_before in steps


@pytest.mark.parametrize(
    "change, message",
    [
        ({"colour": "red"}, "unknown key 'colour'"),
        ({"env_id": "dice_envs/Nope-v0"}, "env_id"),
        ({"env_kwargs": {"N": 1}}, "N must be"),
        ({"env_kwargs": {"goal": 10}}, "env_kwargs"),
        ({"algo": "dqn"}, "algo"),
        ({"hyperparams": {"epsilon": {"start": 1.0, "stop": 0.1}}}, "unknown key 'stop'"),
        ({"hyperparams": {"learning_rate": {"power": 2}}}, "power"),
        ({"hyperparams": {"gamma": 1.5}}, "gamma"),
        ({"budgets": {"quick": {"timesteps": 10}}}, "eval_every"),
        ({"budgets": {"quick": {"timesteps": 10, "eval_every": 5, "epochs": 3}}}, "'epochs'"),
        ({"seeds": []}, "seeds"),
    ],
)
def test_config_errors_name_the_key(change, message):
    raw = yaml.safe_load((CONFIGS / "sum_avoid" / "qlearning.yaml").read_text())
    raw.update(change)
    with pytest.raises(ConfigError, match=message):
        resolve_config(raw, "quick")


def test_ppo_hyperparameters_are_checked_against_sb3():
    raw = yaml.safe_load((CONFIGS / "pig" / "ppo.yaml").read_text())
    raw["hyperparams"]["learnin_rate"] = 0.001
    with pytest.raises(ConfigError, match="unknown key 'learnin_rate'"):
        resolve_config(raw)
    raw["hyperparams"].pop("learnin_rate")
    raw["hyperparams"]["obs_encoding"] = "binary"
    with pytest.raises(ConfigError, match="obs_encoding"):
        resolve_config(raw)


def test_cli_errors_and_json(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "env_id: dice_envs/SumAvoid-v0\nalgo: qlearning\nhyperparams: {eps: 1}\n"
        "budgets: {quick: {timesteps: 10, eval_every: 5}}\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "training.train", str(bad)], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 2 and "unknown key 'eps'" in result.stderr
    good = tmp_path / "good.yaml"
    raw = yaml.safe_load((CONFIGS / "d20_rounds" / "qlearning.yaml").read_text())
    raw["budgets"]["quick"] = {"timesteps": 20_000, "eval_every": 10_000}
    good.write_text(yaml.safe_dump(raw))
    result = subprocess.run(
        [sys.executable, "-m", "training.train", str(good), "--seed", "3", "--json",
         "--runs", str(tmp_path / "runs")],
        cwd=ROOT, capture_output=True, text=True,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert {"value", "optimal_value", "gap", "relative_gap", "steps", "seconds"} <= set(data)
    assert data["steps"] == 20_000 and data["seed"] == 3


def test_report_rebuilds_from_saved_runs(tmp_path):
    for game in ("sum_avoid", "d20_rounds"):
        config = small(load_config(CONFIGS / game / "qlearning.yaml"), 20_000, 10_000)
        for seed in (0, 1):
            run(config, seed=seed, root=tmp_path / "runs")
    table = build_report(tmp_path / "runs", "quick", tmp_path / "out")
    assert "Q-learning, 2 seeds" in table and "heuristic: stop-at-25" in table
    assert (tmp_path / "out/report.md").exists()
    assert (tmp_path / "out/sum_avoid.png").stat().st_size > 1000

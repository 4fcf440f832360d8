"""The Ray paths on a local 2-CPU Ray: a sweep gives the local backend's files and report
byte for byte, and Ray Tune searches hyperparameters on the exact gap."""

import pytest
from training_helpers import write_configs

from training.runs import planned_runs, run_dir
from training.sweep import main as sweep_main
from training.tune import main as tune_main

pytest.importorskip("ray")
pytestmark = pytest.mark.slow

ENTRIES = {
    "sum_avoid/qlearning": {"algo": "qlearning", "budget": {"timesteps": 6000, "eval_every": 2000}},
    "d20_rounds/ppo": {
        "algo": "ppo",
        "budget": {"timesteps": 2048, "eval_every": 1024},
        "hyperparams": {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 2},
    },
}


def _results_part(report: str) -> str:
    return report.split("## Time")[0]


def test_a_ray_sweep_writes_what_the_local_sweep_writes(tmp_path):
    configs = write_configs(tmp_path / "configs", ENTRIES)
    for backend in ("local", "ray"):
        code = sweep_main(
            ["--configs", str(configs), "--runs", str(tmp_path / backend / "runs"),
             "--out", str(tmp_path / backend / "out"), "--backend", backend, "--workers", "2"]
        )  # fmt: skip
        assert code == 0
    planned = planned_runs(configs, "quick")
    assert len(planned) == 4
    for _, config, seed in planned:
        local = run_dir(tmp_path / "local" / "runs", config, seed)
        ray = run_dir(tmp_path / "ray" / "runs", config, seed)
        for name in ("config.yaml", "curve.json", "result.json"):
            assert (local / name).read_bytes() == (ray / name).read_bytes(), (local, name)
    reports = [(tmp_path / b / "out" / "report.md").read_text() for b in ("local", "ray")]
    assert _results_part(reports[0]) == _results_part(reports[1])
    assert "Q-learning, 2 seeds" in reports[0] and "PPO, 2 seeds" in reports[0]


def test_tune_searches_on_the_exact_gap(tmp_path, capsys):
    configs = write_configs(tmp_path / "configs", ENTRIES)
    code = tune_main(
        [str(configs / "sum_avoid" / "qlearning.yaml"), "--samples", "3", "--workers", "2",
         "--runs", str(tmp_path / "runs")]
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("| ") and "%" in line]
    assert len(rows) == 3
    assert "best hyperparams" in out and "power:" in out
    # Every trial is a run in the store, which a second search reads back.
    assert len(list((tmp_path / "runs" / "sum_avoid" / "qlearning").iterdir())) == 3


def test_ctrl_c_stops_a_ray_sweep_and_the_rerun_finishes(tmp_path):
    import pickle
    import subprocess
    import sys

    from training_helpers import ROOT, assert_complete_files, interrupt_sweep

    configs = write_configs(
        tmp_path / "configs",
        {
            "d20_rounds/ppo": {
                "algo": "ppo",
                "budget": {"timesteps": 12_288, "eval_every": 1024},
                "hyperparams": {"n_envs": 2, "n_steps": 64, "batch_size": 64, "n_epochs": 2},
                "seeds": [0, 1],
            }
        },
    )
    runs = tmp_path / "runs"
    command = [sys.executable, "-m", "training.sweep", "--configs", str(configs), "--runs",
               str(runs), "--out", str(tmp_path / "out"), "--backend", "ray"]  # fmt: skip
    seconds, status, stderr = interrupt_sweep(command, runs)
    assert seconds < 10 and status == 130, stderr
    assert "run the same command again to resume" in stderr.strip().splitlines()[-1]
    assert_complete_files(runs)
    assert any(pickle.loads(p.read_bytes())["step"] > 0 for p in runs.rglob("checkpoint.pkl"))
    rerun = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    assert len(list(runs.rglob("result.json"))) == 2

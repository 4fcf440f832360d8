"""A PPO run leaves no folder of SB3's default logger behind (SB3-<date>, which SB3's `learn`
creates in the temporary directory, empty at verbose 0)."""

from __future__ import annotations

import tempfile

from training_helpers import tiny_ppo

from training.train import run


def test_a_ppo_run_and_its_resume_leave_no_sb3_logger_folder(tmp_path, monkeypatch):
    temporary, cwd = tmp_path / "tmp", tmp_path / "cwd"
    temporary.mkdir()
    cwd.mkdir()
    monkeypatch.delenv("SB3_LOGDIR", raising=False)
    monkeypatch.setenv("TMPDIR", str(temporary))
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))  # gettempdir() caches its answer
    monkeypatch.chdir(cwd)
    config = tiny_ppo("pig", timesteps=512)
    stopped = run(config, seed=0, root=tmp_path / "runs", stop_after=256)  # a fresh model
    finished = run(config, seed=0, root=tmp_path / "runs")  # a model loaded from a checkpoint
    assert stopped["stopped_at"] >= 256 and finished["steps"] >= 512
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("SB3-*"))
    assert left == []

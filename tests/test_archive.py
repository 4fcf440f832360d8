"""The run archive: what the report needs of each run (config, result, curve, timing, the
compressed per-state arrays), keyed by config name and seed, so that a report is rebuilt from
it alone; an archived run of another config is refused, and runs made by other code say so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from training_helpers import TINY_PPO, write_configs

import training.train
from docs.tools.archive import (
    Archive,
    ArchiveError,
    archive_runs,
    current_maker,
    entry_dir,
    npz_bytes,
    run_arrays,
)
from docs.tools.report import make_report
from training.config import load_config
from training.train import run

# Evaluated (and checkpointed) at the start and the end: the reports need a curve, not its
# length.
BUDGET = {"timesteps": 20_000, "eval_every": 20_000}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A tiny sweep into a temporary run store: Q-learning on SumAvoid and on Pig to 12 (three
    observation components), a tiny PPO on SumAvoid, two seeds each."""
    root = tmp_path_factory.mktemp("archive")
    configs = write_configs(
        root / "configs",
        {
            "sum_avoid/qlearning": {"algo": "qlearning", "budget": BUDGET},
            "sum_avoid/ppo": {"algo": "ppo", "budget": {"timesteps": 256, "eval_every": 128},
                              "hyperparams": TINY_PPO},
            "pig/qlearning": {"algo": "qlearning", "budget": BUDGET,
                              "env_kwargs": {"goal": 12}},
        },
    )  # fmt: skip
    runs = root / "runs"
    for path in sorted(configs.glob("*/*.yaml")):
        for seed in (0, 1):
            run(load_config(path), seed, runs)
    return configs, runs


def _files(folder: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def _copy_configs(configs: Path, where: Path) -> Path:
    shutil.copytree(configs, where)
    return where


def test_a_report_rebuilt_from_the_archive_alone_equals_the_report_from_the_store(
    store, tmp_path, monkeypatch
):
    configs, runs = store
    from_store = make_report(configs, "quick", runs, tmp_path / "from_store")
    archive = archive_runs(configs, "quick", runs, tmp_path / "archive")
    assert archive == tmp_path / "archive" / "quick"
    entry = entry_dir(archive, configs / "pig" / "qlearning.yaml", 1)
    assert entry == archive / "pig" / "qlearning" / "seed1"
    # What the report needs, and no checkpoint or policy.
    assert sorted(p.name for p in entry.iterdir()) == [
        "arrays.npz", "code.json", "config.yaml", "curve.json", "result.json", "timing.json",
    ]  # fmt: skip
    with np.load(entry / "arrays.npz") as arrays:
        assert sorted(arrays.files) == ["actions", "value_errors"]
    source = Path(from_store.groups[configs / "pig" / "qlearning.yaml"]["results"][1]["directory"])
    for name, array in run_arrays(entry).items():
        np.testing.assert_array_equal(array, np.load(source / f"{name}.npy"))
    # The store gone, and no training allowed: the same report, byte for byte.
    moved = tmp_path / "elsewhere"
    runs.rename(moved)
    try:

        def no_training(*args, **kwargs):
            raise AssertionError("the report trained a run")

        monkeypatch.setattr(training.train, "_train", no_training)
        from_archive = make_report(configs, "quick", Archive(archive), tmp_path / "from_archive")
    finally:
        moved.rename(runs)
    assert "sum_avoid_errors.png" in _files(tmp_path / "from_archive")
    assert _files(tmp_path / "from_archive") == _files(tmp_path / "from_store")
    assert from_archive.table == from_store.table
    assert "Not made by the current code" not in from_archive.description


def test_archiving_replaces_the_budgets_folder_with_exactly_the_planned_runs(store, tmp_path):
    configs, runs = store
    configs = _copy_configs(configs, tmp_path / "configs")
    archive = archive_runs(configs, "quick", runs, tmp_path / "archive")
    stray = archive / "sum_avoid" / "qlearning" / "seed7"
    stray.mkdir()
    (configs / "sum_avoid" / "ppo.yaml").unlink()  # no config plans these runs any more
    before = _files(archive)
    archive_runs(configs, "quick", runs, tmp_path / "archive")
    after = _files(archive)
    assert not stray.exists() and not (archive / "sum_avoid" / "ppo").exists()
    assert after == {name: data for name, data in before.items() if "/ppo/" not in name}
    assert [p.name for p in (tmp_path / "archive").iterdir()] == ["quick"]  # nothing left aside
    # Archiving one game takes its runs from the store and keeps the others as archived.
    shutil.rmtree(archive / "pig")
    archive_runs(configs, "quick", runs, tmp_path / "archive", games=["sum_avoid"])
    assert not (archive / "pig").exists() and (archive / "sum_avoid" / "qlearning").is_dir()
    # A planned run missing from the store is refused, and the archive is left as it was.
    raw = yaml.safe_load((configs / "pig" / "qlearning.yaml").read_text())
    raw["seeds"] = [0, 1, 2]
    (configs / "pig" / "qlearning.yaml").write_text(yaml.safe_dump(raw))
    kept = _files(archive)
    with pytest.raises(ArchiveError, match="1 planned runs are not finished"):
        archive_runs(configs, "quick", runs, tmp_path / "archive")
    assert _files(archive) == kept


def test_the_saved_arrays_pack_the_same_bytes_every_time(tmp_path):
    """No date of writing in the archive's arrays: archiving again changes no committed file."""
    import zipfile

    arrays = {"actions": np.arange(6, dtype=np.int16).reshape(2, 3),
              "value_errors": np.array([np.nan, 0.5], dtype=np.float32)}  # fmt: skip
    packed = npz_bytes(arrays)
    path = tmp_path / "arrays.npz"
    path.write_bytes(packed)
    with zipfile.ZipFile(path) as archive:
        assert {info.date_time for info in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        assert {info.compress_type for info in archive.infolist()} == {zipfile.ZIP_DEFLATED}
    with np.load(path) as loaded:
        np.testing.assert_array_equal(loaded["actions"], arrays["actions"])
        np.testing.assert_array_equal(loaded["value_errors"], arrays["value_errors"])


@pytest.mark.parametrize(
    ("key", "value", "named"),
    [
        ("hyperparams.learning_rate", 0.05, "hyperparams"),
        ("budgets.quick.timesteps", 30_000, "timesteps"),
        ("env_kwargs.goal", 13, "env_kwargs"),
    ],
)
def test_an_archived_run_of_another_config_is_refused(store, tmp_path, key, value, named):
    configs, runs = store
    configs = _copy_configs(configs, tmp_path / "configs")
    archive = archive_runs(configs, "quick", runs, tmp_path / "archive")
    path = configs / "pig" / "qlearning.yaml"
    raw = yaml.safe_load(path.read_text())
    *parents, last = key.split(".")
    target = raw
    for part in parents:
        target = target[part]
    target[last] = value
    path.write_text(yaml.safe_dump(raw))
    refusal = rf"pig/qlearning/seed0 was made from another config .* \(differs in: {named}\)"
    with pytest.raises(ArchiveError, match=refusal):
        make_report(configs, "quick", Archive(archive), tmp_path / "out")


def test_an_archived_seed_of_another_run_is_refused(store, tmp_path):
    configs, runs = store
    archive = archive_runs(configs, "quick", runs, tmp_path / "archive")
    # seed1's files put where seed0 belongs
    seed0 = archive / "sum_avoid" / "qlearning" / "seed0"
    shutil.rmtree(seed0)
    shutil.copytree(archive / "sum_avoid" / "qlearning" / "seed1", seed0)
    with pytest.raises(ArchiveError, match=r"differs in: seed"):
        make_report(configs, "quick", Archive(archive), tmp_path / "out")


def test_runs_made_by_other_code_say_so_in_the_report(store, tmp_path):
    configs, runs = store
    archive = archive_runs(configs, "quick", runs, tmp_path / "archive")
    current = current_maker()
    for seed in (0, 1):
        folder = archive / "sum_avoid" / "ppo" / f"seed{seed}"
        identity = yaml.safe_load((folder / "config.yaml").read_text())
        identity["package"]["version"] = "0.4.0"
        (folder / "config.yaml").write_text(yaml.safe_dump(identity, sort_keys=False))
        stamp = json.loads((folder / "code.json").read_text())
        stamp["training/ppo.py"] = "0123456789abcdef"
        (folder / "code.json").write_text(json.dumps(stamp))
    (archive / "sum_avoid" / "qlearning" / "seed0" / "code.json").unlink()
    report = make_report(configs, "quick", Archive(archive), tmp_path / "out")
    text = (tmp_path / "out" / "report.md").read_text()
    assert "**Not made by the current code.**" in text
    assert "2 by dice-envs 0.4.0, by code that has changed since in training/ppo.py" in text
    assert "by code that has changed since in its code.json (none archived)" in text
    assert f"3 by dice-envs {current['version']}, by the current code" in text
    assert f"The code here is dice-envs {current['version']}" in report.description
    # The results themselves are still read: the old runs' rows are there.
    assert "| sum_avoid (N=10) | PPO, 2 seeds |" in text


def test_the_report_command_reads_an_archive(store, tmp_path):
    import docs.tools.report

    configs, runs = store
    archive_runs(configs, "quick", runs, tmp_path / "archive")
    arguments = ["--configs", str(configs), "--archive", str(tmp_path / "archive")]
    assert docs.tools.report.main([*arguments, "--out", str(tmp_path / "out")]) == 0
    assert "| pig (goal=12, opponent=hold-at-20) |" in (tmp_path / "out/report.md").read_text()
    shutil.rmtree(tmp_path / "archive" / "quick" / "pig")
    assert docs.tools.report.main([*arguments, "--out", str(tmp_path / "again")]) == 2


def test_the_archive_is_not_a_page_of_the_site():
    config = yaml.safe_load((Path(__file__).parent.parent / "mkdocs.yml").read_text())
    assert "training/runs/" in config["exclude_docs"].split()


def test_result_files_are_copied_as_they_are(store, tmp_path):
    configs, runs = store
    archive = archive_runs(configs, "quick", runs, tmp_path / "archive")
    config = load_config(configs / "sum_avoid" / "qlearning.yaml")
    source = training.train.run(config, 0, runs)["run_dir"]  # read back, not trained
    entry = archive / "sum_avoid" / "qlearning" / "seed0"
    for name in ("config.yaml", "result.json", "curve.json", "timing.json"):
        assert (entry / name).read_bytes() == (Path(source) / name).read_bytes()
    assert json.loads((entry / "result.json").read_text())["seed"] == 0


def test_runs_of_another_version_with_unchanged_code_are_not_called_stale(store, tmp_path):
    configs, runs = store
    archive = archive_runs(configs, "quick", runs, tmp_path / "archive")
    current = current_maker()
    folder = archive / "sum_avoid" / "ppo" / "seed0"
    identity = yaml.safe_load((folder / "config.yaml").read_text())
    identity["package"]["version"] = "0.4.0"
    (folder / "config.yaml").write_text(yaml.safe_dump(identity, sort_keys=False))
    make_report(configs, "quick", Archive(archive), tmp_path / "out")
    text = (tmp_path / "out" / "report.md").read_text()
    assert "Not made by the current code" not in text
    assert "1 by dice-envs 0.4.0; " in text
    assert (
        f"every module they used is unchanged in the code here (dice-envs {current['version']})"
        in text
    )

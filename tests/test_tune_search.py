"""One real search on a local 2-CPU Ray, shared by the tests: its record holds what the run
store holds, the winner and the runner-up in order, the committed setting's own run, and
`--write-config` gives a config that is the winner's run."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
import yaml
from training_helpers import CONFIGS

from docs.tools import tuning
from training.config import load_config, resolve_config
from training.runs import read_json, run_dir
from training.tune import TUNE_SEED, main, ranked, with_params

pytest.importorskip("ray")
# A real search on a local Ray (about 75 s): `make verify`. The default suite keeps the
# record, ranking and page tests without Ray (test_tune_record.py) and a Tune run in test_ray.py.
pytestmark = [pytest.mark.slow, pytest.mark.verify]

SAMPLES = 4
TIMESTEPS, EVAL_EVERY = 4096, 2048
HEADER = "# SumAvoid with a tiny budget, for the tune tests."


@pytest.fixture(scope="module")
def search(tmp_path_factory):
    """A 4-trial search of SumAvoid Q-learning with --baseline, --record and --write-config.
    Grace past the last evaluation point: ASHA stops no trial, so the runner-up exists."""
    folder = tmp_path_factory.mktemp("tune")
    raw = yaml.safe_load((CONFIGS / "sum_avoid" / "qlearning.yaml").read_text())
    raw["budgets"]["quick"] = {"timesteps": TIMESTEPS, "eval_every": EVAL_EVERY}
    raw["evaluation"] = {"episodes": 10}
    config = folder / "tiny.yaml"
    config.write_text(HEADER + "\n" + yaml.safe_dump(raw, sort_keys=False))
    paths = {"config": config, "record": folder / "out" / "search.json"}
    paths.update(tuned=folder / "tuned.yaml", runs=folder / "runs")
    code = main(
        [str(config), "--samples", str(SAMPLES), "--grace", "4", "--baseline", "--runs",
         str(paths["runs"]), "--record", str(paths["record"]), "--write-config",
         str(paths["tuned"])]
    )  # fmt: skip
    assert code == 0
    return paths, json.loads(paths["record"].read_text())


def trial_config(paths, params: dict) -> dict:
    return resolve_config(with_params(yaml.safe_load(paths["config"].read_text()), params))


def test_the_record_states_the_search(search):
    paths, record = search
    assert record["config"]["sha256"] == hashlib.sha256(paths["config"].read_bytes()).hexdigest()
    assert (record["budget"], record["seed"], record["samples"]) == ("quick", TUNE_SEED, SAMPLES)
    assert (record["timesteps"], record["grace"], record["objective"]) == (4096, 4, "relative_gap")
    assert record["asha"] == {
        "time_attr": "training_iteration", "metric": "relative_gap", "mode": "min",
        "max_t": 4, "grace_period": 4, "reduction_factor": 4,
    }  # fmt: skip
    assert record["space_source"] == "built in (qlearning)"
    assert record["base_hyperparams"] == load_config(paths["config"])["hyperparams"]
    assert record["libraries"]["ray"] and record["wall_seconds"] > 0
    assert not list(paths["record"].parent.glob(".*.tmp"))  # the atomic write left nothing


def test_every_trial_is_its_run_in_the_store(search):
    paths, record = search
    trials = record["trials"]
    assert [t["trial"] for t in trials] == list(range(SAMPLES))
    for trial in trials:
        assert set(trial["params"]) == set(record["space"])
        assert 0.55 <= trial["params"]["learning_rate.power"] <= 1.0
        directory = run_dir(paths["runs"], trial_config(paths, trial["params"]), TUNE_SEED)
        stored = read_json(directory / "curve.json")
        assert [p["steps"] for p in trial["curve"]] == [p["steps"] for p in stored]
        assert [p["relative_gap"] for p in trial["curve"]] == [p["relative_gap"] for p in stored]
        assert trial["final_relative_gap"] == stored[-1]["relative_gap"]
        assert trial["final_gap"] == stored[-1]["gap"]
        assert trial["steps"] == stored[-1]["steps"] >= TIMESTEPS
        assert (trial["finished"], trial["stopped_by_asha"], trial["error"]) == (True, False, None)


def test_the_winner_and_runner_up_are_the_two_best_final_gaps(search):
    paths, record = search
    finals = sorted((t["final_relative_gap"], t["trial"]) for t in record["trials"])
    assert len({gap for gap, _ in finals}) == SAMPLES  # no ties here: the order is the gaps'
    assert record["winner"]["trial"] == finals[0][1]
    assert record["runner_up"]["trial"] == finals[1][1]
    assert [record["winner"]["trial"], record["runner_up"]["trial"]] == [
        t["trial"] for t in ranked(record["trials"], "relative_gap")[:2]
    ]
    winner = record["trials"][record["winner"]["trial"]]
    assert record["winner"]["params"] == winner["params"]
    assert record["winner"]["final_relative_gap"] == winner["final_relative_gap"]
    assert record["winner"]["hyperparams"] == trial_config(paths, winner["params"])["hyperparams"]


def test_the_baseline_is_the_committed_settings_own_run(search):
    paths, record = search
    baseline = record["baseline"]
    assert baseline["source"] == "run" and baseline["steps"] >= TIMESTEPS
    result = read_json(
        run_dir(paths["runs"], load_config(paths["config"]), TUNE_SEED) / "result.json"
    )
    assert baseline["final_relative_gap"] == result["relative_gap"]
    assert baseline["final_gap"] == result["gap"]


def test_the_tuned_config_is_the_winners_run(search):
    paths, record = search
    text = paths["tuned"].read_text()
    lines = text.splitlines()
    assert re.match(r"# Tuned by training\.tune \(search record: .*search\.json\)", lines[0])
    assert HEADER in lines[:4]  # the base config's own header kept
    tuned = load_config(paths["tuned"])
    assert tuned["hyperparams"] == record["winner"]["hyperparams"]
    winner_run = run_dir(paths["runs"], trial_config(paths, record["winner"]["params"]), 1000)
    assert run_dir(paths["runs"], tuned, TUNE_SEED) == winner_run
    base = load_config(paths["config"])
    assert {k: v for k, v in tuned.items() if k not in ("hyperparams", "source")} == {
        k: v for k, v in base.items() if k not in ("hyperparams", "source")
    }


def test_the_page_of_the_search(search, tmp_path):
    paths, record = search
    (tmp_path / "tiny.json").write_text(paths["record"].read_text())
    page = tuning.page(tmp_path)
    rows = [line for line in page.splitlines() if re.match(r"\| \d \| ", line)]
    order = [t["trial"] for t in ranked(record["trials"], "relative_gap")]
    assert [int(row.split("|")[1]) for row in rows] == order
    assert f"- Winner: trial {order[0]}, " in page and f"- Runner-up: trial {order[1]}, " in page
    assert tuning.verdict(record) in page
    helped = record["winner"]["final_relative_gap"] < record["baseline"]["final_relative_gap"]
    assert tuning.verdict(record).startswith("Tuning helped by" if helped else "Tuning did not")


def test_ctrl_c_during_a_search_writes_no_record(tmp_path):
    import sys

    from training_helpers import assert_complete_files, interrupt_sweep

    raw = yaml.safe_load((CONFIGS / "sum_avoid" / "qlearning.yaml").read_text())
    raw["budgets"]["quick"] = {"timesteps": 100_000_000, "eval_every": 1_000_000}
    config = tmp_path / "long.yaml"
    config.write_text(yaml.safe_dump(raw, sort_keys=False))
    record, tuned, runs = tmp_path / "search.json", tmp_path / "tuned.yaml", tmp_path / "runs"
    command = [sys.executable, "-m", "training.tune", str(config), "--samples", "2", "--runs",
               str(runs), "--record", str(record), "--write-config", str(tuned)]  # fmt: skip
    seconds, code, stderr = interrupt_sweep(command, runs, timeout=120)
    assert code == 130, stderr[-2000:]
    assert "interrupted" in stderr
    assert not record.exists() and not tuned.exists()
    assert not list(tmp_path.glob(".*.tmp"))
    assert_complete_files(runs / "sum_avoid")  # the trials' runs (Tune's own files aside)

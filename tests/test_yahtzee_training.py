"""Training on Yahtzee: sampled gaps at the evaluation points, the exact value at the end, the
sparse Q-learner, checkpoints and resume, and the committed configs. The runs play a reduced
game (two boxes) so that each solve and exact evaluation takes a fraction of a second."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import yaml

import baselines
from dice_envs.games.yahtzee import Yahtzee
from docs.tools.report import make_report
from training.config import ConfigError, has_budget, load_config, resolve_config
from training.evaluation import SAMPLED_KEYS
from training.qlearning import ObservationRows, SparseQLearning, legal_masks
from training.streams import run_streams
from training.train import run

ENV_ID = "dice_envs/Yahtzee-v0"
BOXES = ["chance", "yahtzee"]
CONFIGS = Path(__file__).resolve().parent.parent / "configs" / "yahtzee"
EXACT_KEYS = ("value", "optimal_value", "gap", "relative_gap", "agreement")
# What differs between two runs of one config and seed: the clock, and where the run is.
NOT_COMPARED = ("seconds", "steps_per_second", "wall_seconds", "run_dir", "status", "resumed_at")

QLEARNING = {
    "env_id": ENV_ID,
    "env_kwargs": {"boxes": BOXES},
    "algo": "qlearning",
    "evaluation": {"episodes": 20},
    "hyperparams": {
        "gamma": 1.0,
        "n_envs": 64,
        "learning_rate": {"power": 0.8},
        "epsilon": {"start": 1.0, "end": 0.1, "fraction": 0.5},
    },
    "budgets": {"quick": {"timesteps": 12_800, "eval_every": 6_400}},
}
PPO = {
    "env_id": ENV_ID,
    "env_kwargs": {"boxes": BOXES},
    "algo": "ppo",
    "evaluation": {"episodes": 10},
    "hyperparams": {
        "n_envs": 4,
        "n_steps": 32,
        "batch_size": 64,
        "n_epochs": 1,
        "reward_scale": 0.01,
        "policy_kwargs": {"net_arch": [16]},
    },
    "budgets": {"quick": {"timesteps": 256, "eval_every": 128}},
}


def _compared(result: dict) -> dict:
    return {k: v for k, v in result.items() if k not in NOT_COMPARED}


def _check_run(result: dict, directory: Path, evaluation_points: list[int]) -> None:
    """Sampled gaps at every point, exact keys at the last only, no per-state arrays."""
    curve = json.loads((directory / "curve.json").read_text())
    assert [p["steps"] for p in curve] == evaluation_points
    for point in curve:
        assert set(SAMPLED_KEYS) <= set(point)
        assert point["sampled_gap_low"] <= point["sampled_gap"] <= point["sampled_gap_high"]
        assert point["sampled_gap_episodes"] >= 10
    for point in curve[:-1]:  # never called "gap": that name is exact everywhere
        assert not {"value", "gap", "relative_gap", "agreement"} & set(point)
    optimum = baselines.solve(ENV_ID, boxes=BOXES).value
    assert result["optimal_value"] == pytest.approx(optimum, abs=1e-9)
    assert result["gap"] == pytest.approx(optimum - result["value"], abs=1e-9)
    assert 0.0 <= result["gap"] <= optimum and 0.0 <= result["agreement"] <= 1.0
    assert np.sum(result["losses_by_turn"]) == pytest.approx(result["gap"], abs=1e-6)
    assert len(result["losses_by_turn"]) == len(BOXES)
    assert all(curve[-1][key] == result[key] for key in EXACT_KEYS)
    assert not (directory / "actions.npy").exists()
    assert not (directory / "value_errors.npy").exists()
    assert not (directory / "checkpoint.pkl").exists()


def _run_and_resume(raw: dict, tmp_path: Path, stop_after: int) -> tuple[dict, dict]:
    config = resolve_config(raw, "quick")
    whole = run(config, 0, tmp_path / "whole")
    stopped = run(config, 0, tmp_path / "resumed", stop_after=stop_after)
    assert stopped["stopped_at"] == stop_after
    assert (Path(stopped["run_dir"]) / "checkpoint.pkl").exists()
    resumed = run(config, 0, tmp_path / "resumed")
    assert resumed["status"] == "resumed" and resumed["resumed_at"] == stop_after
    return whole, resumed


def test_qlearning_run_end_to_end_and_resume(tmp_path):
    whole, resumed = _run_and_resume(QLEARNING, tmp_path, stop_after=6_400)
    _check_run(whole, Path(whole["run_dir"]), [0, 6_400, 12_800])
    assert _compared(resumed) == _compared(whole)
    saved = np.load(Path(whole["run_dir"]) / "policy_q.npz")
    assert len(saved["keys"]) == len(np.unique(saved["keys"])) > 100
    assert saved["q"].shape == (len(saved["keys"]), 45)
    # It learned something: better than its start (score-at-once where it knows nothing).
    start = baselines.evaluate("score-at-once", ENV_ID, boxes=BOXES).value
    assert whole["value"] > start
    # The run folder is a policy: it plays back exactly the policy the run scored.
    replayed = baselines.evaluate(Path(whole["run_dir"]), ENV_ID, boxes=BOXES)
    assert replayed.value == pytest.approx(whole["value"], abs=1e-12)
    _check_report(tmp_path)


def _check_report(tmp_path: Path) -> None:
    """The report takes the run: its row from the exact final evaluation, the losses by turn
    in place of loss and error maps, the sampled-gap figure."""
    configs = tmp_path / "configs"
    (configs / "yahtzee").mkdir(parents=True)
    (configs / "yahtzee" / "qlearning.yaml").write_text(yaml.safe_dump({**QLEARNING, "seeds": [0]}))
    out = tmp_path / "report"
    report = make_report(configs, "quick", tmp_path / "whole", out)
    text = (out / "report.md").read_text()
    result = report.groups[configs / "yahtzee" / "qlearning.yaml"]["results"][0]
    assert f"| {result['value']:.4g} |" in text and f"| {result['gap']:.4g} |" in text
    assert "Yahtzee has no loss or error maps" in text
    losses = np.sum(result["losses_by_turn"], axis=1)
    assert f"| Q-learning | {losses[0]:.3g} | {losses[1]:.3g} |" in text
    assert not report.drawn and not report.mapped and list(out.glob("*.png"))


def test_ppo_run_end_to_end_and_resume(tmp_path, monkeypatch):
    """A MaskablePPO run, whose every evaluation asks the model by the fast path (SB3's
    `predict` and `get_distribution` refused here), scored at the end both greedy and by
    the policy it plays (its action distribution, keys `stochastic_`), each timed."""
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    def refused(*args, **kwargs):
        raise AssertionError("SB3's own per-call path was taken")

    monkeypatch.setattr(MaskablePPO, "predict", refused)
    monkeypatch.setattr(MaskableActorCriticPolicy, "get_distribution", refused)
    whole, resumed = _run_and_resume(PPO, tmp_path, stop_after=128)
    _check_run(whole, Path(whole["run_dir"]), [0, 128, 256])
    assert whole["agent"] == "MaskablePPO"
    played = baselines.evaluate(
        Path(whole["run_dir"]) / "policy.zip", ENV_ID, boxes=BOXES, deterministic=False
    )
    assert whole["stochastic_value"] == pytest.approx(played.value, abs=1e-12)
    assert whole["stochastic_gap"] == pytest.approx(played.gap, abs=1e-12)
    assert whole["stochastic_value"] != pytest.approx(whole["value"], abs=1e-6)
    timing = json.loads((Path(whole["run_dir"]) / "timing.json").read_text())
    assert timing["exact_evaluation"]["steps"] == 256
    assert timing["exact_evaluation"]["seconds"] > 0
    assert timing["exact_evaluation"]["stochastic_seconds"] > 0
    replayed = baselines.evaluate(Path(whole["run_dir"]), ENV_ID, boxes=BOXES)
    assert replayed.value == pytest.approx(whole["value"], abs=1e-12)
    assert _compared(resumed) == _compared(whole)
    _check_archive_and_analysis(whole, tmp_path)


def _check_archive_and_analysis(whole: dict, tmp_path: Path) -> None:
    """The archive keeps a PPO run's model (no per-state arrays on Yahtzee); restamp's check
    evaluates it again, greedy and stochastic; the Yahtzee analysis scores it beside
    `greedy-turn` and the optimum."""
    from docs.tools import yahtzee_agents
    from docs.tools.archive import _archive_run
    from docs.tools.restamp import reevaluated

    entry = tmp_path / "archive" / "full" / "yahtzee" / "ppo" / "seed0"
    _archive_run(Path(whole["run_dir"]), entry)
    assert (entry / "policy.zip").is_file() and not np.load(entry / "arrays.npz").files
    identity = yaml.safe_load((entry / "config.yaml").read_text())
    result = json.loads((entry / "result.json").read_text())
    assert reevaluated(entry, identity, result) is None
    result["stochastic_gap"] += 1e-9
    assert reevaluated(entry, identity, result).startswith("stochastic_gap ")

    # An earlier config's run, 1 point worse, without a kept model: set beside it.
    earlier = entry.parent.parent / "ppo_first" / "seed0"
    earlier.mkdir(parents=True)
    old = {**identity, "hyperparams": {**identity["hyperparams"], "n_envs": 2}}
    (earlier / "config.yaml").write_text(yaml.safe_dump(old))
    before = np.array(whole["losses_by_turn"]) + [[0.25, 0.125, 0.125]]  # 1 point in all
    worse = {"value": whole["value"] - 1, "gap": whole["gap"] + 1,
             "losses_by_turn": before.tolist()}  # fmt: skip
    (earlier / "result.json").write_text(json.dumps({**whole, **worse}))
    analysis = yahtzee_agents.analyse(
        None, tmp_path / "archive" / "full", games=300, seed=0, hand_written=("greedy-turn",)
    )
    assert [run["config"] for run in analysis["other_agents"]] == ["ppo_first"]
    with pytest.raises(ValueError, match="finished Yahtzee PPO run folder; .* has no policy.zip"):
        yahtzee_agents.analyse(earlier, tmp_path / "archive" / "full")
    changes = yahtzee_agents.changes_text(analysis)
    assert f"the gap fell from {whole['gap'] + 1:.2f} to {whole['gap']:.2f}" in changes
    assert "n_envs 2 -> 4" in changes and "(50 %) with 2 rolls left" in changes
    agent, greedy, optimal = (analysis["policies"][k] for k in ("agent", "greedy-turn", "optimal"))
    assert agent["value"] == pytest.approx(whole["value"], abs=1e-12)
    assert greedy["value"] == pytest.approx(
        baselines.evaluate("greedy-turn", ENV_ID, boxes=BOXES).value, abs=1e-12
    )
    assert optimal["value"] == pytest.approx(whole["optimal_value"], abs=1e-12)
    for row in (agent, greedy, optimal):
        assert sum(row["scores"]["counts"].values()) == 300
        assert sum(row["losses_by_played"]) == pytest.approx(row["gap"], abs=1e-9)
        assert 0.0 < row["yahtzee_probability"] < 1.0
    assert agent["yahtzee_probability"] != optimal["yahtzee_probability"]
    out = tmp_path / "analysis"
    written = yahtzee_agents.write(analysis, out, None)
    assert {p.name for p in written} == {
        "yahtzee_agents.json", "yahtzee_agents_losses.png", "yahtzee_agents_boxes.png",
        "yahtzee_agents_scores.png",
    }  # fmt: skip
    section = yahtzee_agents.report_section(out)
    assert section.startswith("## Yahtzee: why") and f"| {agent['value']:.4f} |" in section
    assert "not there any more" not in section and "is now" not in section
    (entry / "result.json").write_text(json.dumps({**result, "value": 1.0}))
    assert "that run's exact value is now 1.0" in yahtzee_agents.report_section(out)


def test_median_interval_by_hand():
    """Scores 1..101: the median 51, and the order statistics of ranks 50.5 -+ 1.96 *
    sqrt(101) / 2 = 50.5 -+ 9.85, floor and ceiling: the 41st and 62nd values (0-based 40, 61)."""
    from docs.tools.yahtzee_agents import median_interval, score_summary

    assert median_interval(np.arange(1, 102)) == (51.0, 41.0, 62.0)
    summary = score_summary(np.array([3.0, 3.0, 7.0]))
    assert summary["counts"] == {"3": 2, "7": 1} and summary["median"] == 3.0
    with pytest.raises(ValueError, match="integers"):
        score_summary(np.array([1.5]))


@pytest.mark.parametrize("name", ["ppo", "qlearning"])
def test_committed_configs_load_at_the_full_budget_only(name):
    assert not has_budget(CONFIGS / f"{name}.yaml", "quick")  # out of make demo's sweep
    config = load_config(CONFIGS / f"{name}.yaml", "full")
    assert config["env_id"] == ENV_ID and config["algo"] == name
    assert config["evaluation"]["episodes"] >= 100
    assert config["eval_every"] <= config["timesteps"]
    if name == "ppo":
        assert config["hyperparams"]["obs_encoding"] == "onehot"


def test_sampled_gap_needs_two_episodes():
    raw = copy.deepcopy(QLEARNING)
    raw["evaluation"] = {"episodes": 1}
    with pytest.raises(ConfigError, match="evaluation.episodes must be an integer >= 2"):
        resolve_config(raw)


def test_observation_rows_number_a_batchs_new_keys_in_increasing_order():
    rows = ObservationRows()
    assert rows.add(np.array([5, 3, 5, 9])).tolist() == [1, 0, 1, 2]
    assert rows.add(np.array([7, 3, 10**11, 1])).tolist() == [4, 0, 5, 3]
    assert len(rows) == 6 and rows.keys().tolist() == [3, 5, 9, 1, 7, 10**11]
    assert rows.find(np.array([9, 2, 1, 10**12])).tolist() == [2, -1, 3, -1]
    assert rows.find(np.array([], dtype=np.int64)).dtype == np.int64


def test_observation_rows_match_a_dict_and_rebuild_from_their_keys():
    rows, expected = ObservationRows(), {}
    rng = np.random.default_rng(1)
    for batch in range(60):  # small keys (many repeats), then large ones
        keys = rng.integers(0, 400 if batch < 30 else 10**11, size=200)
        for key in sorted(set(keys.tolist()) - set(expected)):  # a batch's new keys, in order
            expected[key] = len(expected)
        assert rows.add(keys).tolist() == [expected[k] for k in keys.tolist()]
    assert len(rows) == len(expected) and rows.keys().tolist() == list(expected)
    rebuilt = ObservationRows(rows.keys())
    known = np.array(list(expected))
    assert rebuilt.find(known).tolist() == [expected[k] for k in known.tolist()]
    assert rebuilt.find(np.array([10**12, -5 + 10**11 * 3])).tolist() == [-1, -1]
    assert rebuilt.add(np.array([10**12])).tolist() == [len(expected)]


def _sparse_learner(timesteps: int) -> SparseQLearning:
    env = gym.make_vec(
        ENV_ID, num_envs=8, vectorization_mode="vector_entry_point",
        autoreset_mode="SameStep", boxes=BOXES,
    )  # fmt: skip
    return SparseQLearning(
        env, resolve_config(QLEARNING)["hyperparams"], run_streams(0, 8), timesteps
    )


def test_sparse_learner_resumes_from_its_checkpoint_exactly():
    whole, resumed = _sparse_learner(4_000), _sparse_learner(4_000)
    whole.learn(2_000)
    state = pickle.loads(pickle.dumps(whole.checkpoint_state()))
    keys = state["store"]  # the keys of rows 0, 1, ...
    assert keys.dtype == np.int64 and len(keys) == len(whole.store) > 100
    assert whole.store.find(keys).tolist() == list(range(len(keys)))
    resumed.restore(state)
    whole.learn(4_000)
    resumed.learn(4_000)
    assert np.array_equal(resumed.store.keys(), whole.store.keys())
    assert np.array_equal(resumed.table, whole.table)
    assert np.array_equal(resumed.visit_counts, whole.visit_counts)


def test_sparse_learner_plays_score_at_once_where_it_never_acted():
    learner = _sparse_learner(10_000)
    env = learner.env
    learner.learn(2_000)
    observations, info = env.reset(seed=5)
    for _ in range(6):  # a few batches of observations, some met in training, some not
        observations, *_, info = env.step(np.full(8, 32))
        mask = info["action_mask"].astype(bool)
        assert np.array_equal(legal_masks(Yahtzee(boxes=BOXES), observations), mask)
        rows = learner.store.find(learner.keys(observations))
        played = learner.policy().batch(observations)
        score_at_once = env.unwrapped.model.named_policy("score-at-once").batch(observations)
        table = np.where(mask, learner.table[np.maximum(rows, 0)], -np.inf).argmax(axis=1)
        assert np.array_equal(played, np.where(rows >= 0, table, score_at_once))
        assert mask[np.arange(8), played].all()


def test_a_run_store_folder_is_labelled_by_its_committed_config():
    from docs.tools import yahtzee_agents
    from docs.tools.readme import ROOT
    from training.runs import run_identity

    config = load_config(ROOT / "configs" / "yahtzee" / "ppo_wide.yaml", "full")
    identity = run_identity(config, 2)
    assert yahtzee_agents.committed_config(identity) == "ppo_wide"
    other = {**identity, "hyperparams": {**identity["hyperparams"], "n_envs": 3}}
    assert yahtzee_agents.committed_config(other) is None

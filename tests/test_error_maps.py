"""Every run saves the final per-state error of the learner's own value estimate
(value_errors.npy), computed from the evaluation the run made anyway, and the report draws it
as an error map beside each loss map."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest
from training_helpers import CONFIGS, small, tiny_ppo, write_configs

import baselines
from docs.tools.plots import collapse_errors
from docs.tools.report import build_report
from training.config import load_config
from training.train import run

# The module (the package's `value_errors` attribute is the function of that name).
value_errors_module = importlib.import_module("baselines.value_errors")


def _count_calls(monkeypatch, module, name: str) -> list[int]:
    calls = []
    original = getattr(module, name)

    def counted(*args, **kwargs):
        calls.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def test_a_q_learning_run_saves_its_tables_final_errors_without_solving_twice(
    tmp_path, monkeypatch
):
    config = small(load_config(CONFIGS / "pig" / "qlearning.yaml"), 20_000, 10_000)
    config["env_kwargs"]["goal"] = 12
    solves = _count_calls(monkeypatch, value_errors_module, "score_actions")
    result = run(config, 0, tmp_path)
    assert solves == []  # every point's value errors reuse the greedy policy's evaluation
    directory = Path(result["run_dir"])
    saved = np.load(directory / "value_errors.npy")
    exact = baselines.value_errors(
        np.load(directory / "policy_q.npy"), config["env_id"], **config["env_kwargs"]
    )
    assert saved.dtype == np.float32 and saved.shape == (13, 13, 12)
    expected = exact.grid("errors")
    np.testing.assert_array_equal(np.isnan(saved), np.isnan(expected))
    np.testing.assert_allclose(saved, expected.astype(np.float32), equal_nan=True)
    assert np.isnan(saved).any() and np.nanmax(np.abs(saved)) > 0
    assert result["value_error"] == pytest.approx(exact.mean_error, abs=1e-12)


def test_a_ppo_run_saves_its_critics_final_errors_in_the_games_units(tmp_path, monkeypatch):
    config = tiny_ppo("sum_avoid", timesteps=512)
    config["hyperparams"]["reward_scale"] = 0.05
    solves = _count_calls(monkeypatch, value_errors_module, "evaluate_on")
    result = run(config, 0, tmp_path)
    assert solves == []  # every point, and the end, reuse the stochastic evaluation made
    directory = Path(result["run_dir"])
    saved = np.load(directory / "value_errors.npy")
    from stable_baselines3 import PPO

    model = PPO.load(directory / "policy.zip", device="cpu")
    env_id, kwargs = config["env_id"], config["env_kwargs"]
    raw = baselines.value_errors(model, env_id, gamma=model.gamma, **kwargs)
    unscaled = np.nan_to_num(raw.grid("estimates")) / 0.05
    critic = baselines.value_errors(unscaled, env_id, policy=model, gamma=model.gamma, **kwargs)
    assert saved.shape == (103,) and saved.dtype == np.float32
    np.testing.assert_allclose(saved, critic.grid("errors"), rtol=1e-4, atol=1e-4)
    reachable = ~np.isnan(saved)
    assert reachable.sum() == critic.errors.size and np.abs(saved[reachable]).max() > 1


def test_a_self_play_run_saves_no_value_errors(tmp_path):
    config = small(load_config(CONFIGS / "pig" / "selfplay_qlearning.yaml"), 2_000, 1_000)
    config["env_kwargs"]["goal"] = 10
    result = run(config, 0, tmp_path)
    assert (Path(result["run_dir"]) / "actions.npy").exists()
    assert not (Path(result["run_dir"]) / "value_errors.npy").exists()


def test_value_errors_reuse_a_given_evaluation_and_refuse_another_policys():
    env_id, kwargs = "dice_envs/SumAvoid-v0", {"N": 6}
    tables, optimum = baselines.enumerated(env_id, **kwargs)
    rng = np.random.default_rng(3)
    q = rng.normal(size=(int(np.prod(tables.model.observation_nvec)), tables.num_actions))
    fresh = baselines.value_errors(q, env_id, **kwargs)
    given = baselines.score_actions(fresh.actions, tables, optimum)
    reused = baselines.value_errors(q, env_id, evaluation=given, **kwargs)
    assert reused.evaluation is given
    for name in ("errors", "visits", "changed"):
        np.testing.assert_array_equal(getattr(reused, name), getattr(fresh, name))
    assert reused.mean_error == fresh.mean_error
    other = baselines.score_actions(1 - fresh.actions, tables, optimum)
    with pytest.raises(ValueError, match="evaluation must be of the Q table's greedy actions"):
        baselines.value_errors(q, env_id, evaluation=other, **kwargs)
    small_tables, small_optimum = baselines.enumerated(env_id, N=3)
    wrong = baselines.score_actions(np.zeros(small_tables.num_states, int), small_tables,
                                    small_optimum)  # fmt: skip
    with pytest.raises(ValueError, match=r"evaluation must be of this game's \d+ states"):
        baselines.value_errors(q, env_id, evaluation=wrong, **kwargs)
    # A V estimate: the evaluation stands for the policy it estimates.
    probs = np.full((tables.num_states, tables.num_actions), 0.5)
    played = baselines.score_probabilities(probs, tables, optimum)
    v = rng.normal(size=tuple(tables.model.observation_nvec))
    by_policy = baselines.value_errors(v, env_id, policy=np.full(v.shape + (2,), 0.5), **kwargs)
    by_evaluation = baselines.value_errors(v, env_id, evaluation=played, **kwargs)
    np.testing.assert_allclose(by_evaluation.errors, by_policy.errors, atol=1e-12)
    with pytest.raises(ValueError, match="give policy or evaluation"):
        baselines.value_errors(v, env_id, policy="stop-at-20", evaluation=played, **kwargs)


def test_the_error_map_is_the_states_error_or_its_mean_over_the_other_components():
    observations = np.array([[0, 0, 0], [0, 0, 1], [1, 2, 0], [1, 2, 3]])
    grid = collapse_errors(observations, np.array([1.0, 3.0, -2.0, 0.0]))
    assert grid.shape == (2, 3)
    assert grid[0, 0] == 2.0 and grid[1, 2] == -1.0
    assert np.isnan(grid[0, 1]) and np.isnan(grid[1, 0])
    flat = collapse_errors(np.array([[0], [3]]), np.array([0.5, -4.0]))
    np.testing.assert_array_equal(flat, [0.5, np.nan, np.nan, -4.0])


def test_the_report_shows_each_games_error_map_beside_its_loss_map(tmp_path):
    budget = {"timesteps": 20_000, "eval_every": 10_000}
    configs = write_configs(
        tmp_path / "configs",
        {"pig_solitaire/qlearning": {"algo": "qlearning", "budget": budget,
                                     "env_kwargs": {"goal": 20}}},
    )  # fmt: skip
    runs, out = tmp_path / "runs", tmp_path / "out"
    for seed in (0, 1):
        run(load_config(configs / "pig_solitaire" / "qlearning.yaml"), seed, runs)
    build_report(configs, "quick", runs, out)
    assert (out / "pig_solitaire_errors.png").stat().st_size > 0
    report = (out / "report.md").read_text()
    losses = report.index("(pig_solitaire_losses.png)")
    errors = report.index("(pig_solitaire_errors.png)")
    assert losses < errors < losses + 300  # the next figure
    assert "Beside each loss map, the error map" in report
    assert "Self-play agents have no error map" not in report  # no self-play config here
    page = (out / "games" / "pig_solitaire.md").read_text()
    assert "(../pig_solitaire_errors.png)" in page

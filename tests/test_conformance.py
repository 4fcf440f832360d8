"""Every registered id answers through one interface: its solution is a `GameSolution`, its
evaluations are `GameEvaluation`s, one observation and a batch agree, and every subcommand of
the command line runs on it. Games too large for the test budget run on their registration's
last (smallest) example; the full Yahtzee solve through the command line runs once."""

from __future__ import annotations

import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import baselines
from baselines.protocols import GameEvaluation, GameSolution, Loss
from dice_envs import GAMES, env_ids, make_model
from dice_envs.policies import policy_names

IDS = list(env_ids())
SCRIPT = Path(sys.executable).parent / "dice-envs"


def small(env_id: str) -> dict:
    return dict(GAMES[env_id].examples[-1])


def visited_observations(env_id: str, kwargs: dict, count: int = 40) -> np.ndarray:
    """Observations of states a random legal player reaches (never a finished game's)."""
    env = gym.make(env_id, **kwargs)
    rng = np.random.default_rng(0)
    found = []
    obs, info = env.reset(seed=0)
    while len(found) < count:
        found.append(np.atleast_1d(np.asarray(obs, dtype=np.int64)))
        legal = np.flatnonzero(info["action_mask"])
        obs, _, terminated, truncated, info = env.step(int(rng.choice(legal)))
        if terminated or truncated:
            obs, info = env.reset()
    return np.array(found)


def one(row: np.ndarray):
    return int(row[0]) if len(row) == 1 else tuple(int(v) for v in row)


@pytest.mark.parametrize("env_id", IDS)
def test_every_solution_answers_one_observation_and_a_batch_alike(env_id):
    kwargs = small(env_id)
    solution = baselines.solve(env_id, **kwargs)
    assert isinstance(solution, GameSolution)
    batch = visited_observations(env_id, kwargs)
    actions = solution.actions(batch)
    values = solution.values_at(batch)
    worth = solution.action_values_batch(batch)
    assert actions.shape == values.shape == (len(batch),) and worth.shape[0] == len(batch)
    np.testing.assert_array_equal(solution.batched_policy().batch(batch), actions)
    for i, row in enumerate(batch):
        obs = one(row)
        assert solution.action(obs) == actions[i]
        assert solution.value_at(obs) == pytest.approx(values[i], abs=1e-12)
        np.testing.assert_allclose(solution.action_values(obs), worth[i], atol=1e-12)
        legal = ~np.isnan(worth[i])
        assert legal.any()
        # The optimum's value is its best action's, and its action is a best one.
        assert np.nanmax(worth[i]) == pytest.approx(values[i], abs=1e-9)
        assert worth[i, actions[i]] == pytest.approx(values[i], abs=1e-9)


@pytest.mark.parametrize("env_id", IDS)
def test_every_evaluation_says_where_it_loses_in_one_record_type(env_id):
    kwargs = small(env_id)
    optimum = baselines.solve(env_id, **kwargs)
    exact = baselines.evaluate(optimum, env_id, **kwargs)
    assert isinstance(exact, GameEvaluation)
    assert exact.gap == pytest.approx(0.0, abs=1e-9) and exact.where_lost(5) == []
    names = GAMES[env_id].policies or policy_names(env_id, **kwargs)
    name = next(n for n in names if "K" not in n and n not in ("optimal", "two-player-optimal"))
    scored = baselines.evaluate(name, env_id, **kwargs)
    assert isinstance(scored, GameEvaluation)
    lost = scored.where_lost(3)
    assert all(isinstance(loss, Loss) for loss in lost)
    assert [loss.loss for loss in lost] == sorted((loss.loss for loss in lost), reverse=True)
    assert sum(loss.loss for loss in lost) <= scored.gap + 1e-9
    for loss in lost:
        assert loss.action != loss.optimal_action or env_id == "dice_envs/Yahtzee-v0"
        worth = optimum.action_values(loss.observation)
        assert worth[loss.optimal_action] == pytest.approx(np.nanmax(worth), abs=1e-9)


@pytest.mark.parametrize(
    "env_id", [i for i in IDS if GAMES[i].players != "one" and GAMES[i].two_player_solver]
)
def test_two_player_optima_answer_the_same_interface(env_id):
    from baselines.two_player import two_player_optimum

    solution = two_player_optimum(make_model(env_id, **small(env_id)).model)
    assert isinstance(solution, GameSolution)
    batch = visited_observations(env_id, small(env_id), count=10)
    np.testing.assert_array_equal(solution.actions(batch), [solution.action(one(r)) for r in batch])


def test_the_equilibrium_answers_the_same_interface():
    (env_id,) = [i for i in IDS if GAMES[i].equilibrium_solver]
    found = baselines.equilibrium(env_id, **small(env_id))
    assert isinstance(found, GameSolution)
    batch = visited_observations(env_id, small(env_id), count=10)
    np.testing.assert_allclose(found.values_at(batch), [found.value_at(one(r)) for r in batch])


@pytest.mark.parametrize("env_id", IDS)
def test_every_model_names_its_game_and_arguments_in_its_repr(env_id):
    """Pages, reports and messages print models: an object address would leak into them."""
    for kwargs in GAMES[env_id].examples:
        shown = repr(make_model(env_id, **kwargs))
        assert " at 0x" not in shown and "(" in shown, shown

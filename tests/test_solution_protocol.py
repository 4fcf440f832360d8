"""Every solution answers value_at and action_values alike, and an evaluation's per-state
arrays are read by observation."""

from __future__ import annotations

import numpy as np
import pytest

import baselines
from baselines.two_player import two_player_optimum
from dice_envs.games.pig import HOLD, Pig

POSITIONS = [(0, 0, 0), (10, 20, 5), (25, 28, 3), (5, 2, 14)]


@pytest.mark.parametrize("obs", POSITIONS)
def test_two_player_action_values_hold_the_optimum(obs):
    solution = two_player_optimum(Pig(goal=30))
    values = solution.action_values(obs)
    assert np.nanmax(values) == pytest.approx(solution.value_at(obs), abs=1e-12)
    assert int(np.nanargmax(values)) == solution.action(obs)
    assert np.isnan(values[HOLD]) == (obs[2] == 0)  # hold is not allowed at turn total 0


@pytest.mark.parametrize("obs", POSITIONS)
def test_single_agent_action_values_match_q_on_legal_actions(obs):
    solution = baselines.solve("dice_envs/Pig-v0", goal=30)
    values = solution.action_values(obs)
    assert np.nanmax(values) == pytest.approx(solution.value_at(obs), abs=1e-12)
    legal = ~np.isnan(values)
    np.testing.assert_allclose(values[legal], solution.q_values(obs)[legal])


def test_equilibrium_action_values_are_indifferent_where_it_mixes():
    found = baselines.equilibrium(goal=16)
    checked = 0
    for own in range(16):
        for other in range(16):
            values = found.action_values((own, other))
            support = found.strategy((own, other)) > 1e-9
            value = found.value_at((own, other))
            np.testing.assert_allclose(values[support], value, atol=1e-9)
            assert values.max() <= value + 1e-9  # against the mixture, nothing does better
            checked += int(support.sum() > 1)
    assert checked > 0  # some positions mix


def test_evaluation_read_by_observation():
    score = baselines.evaluate("stop-at-25", "dice_envs/SumAvoid-v0")
    grid = score.grid("losses")
    mapping = score.by_observation("losses")
    assert grid.shape == tuple(score.observation_nvec)
    assert np.nansum(grid) == pytest.approx(score.gap, abs=1e-12)
    lost = score.where_lost(1)[0]
    assert mapping[24] == grid[24] == lost.loss
    assert (lost.observation, lost.action, lost.optimal_action) == (24, 1, 0)  # rolls; stops
    actions = score.grid("actions")
    assert (actions[24], actions[25], actions[20]) == (1, 0, -1)  # roll, stop, unreachable
    assert np.isnan(grid[20]) and 20 not in mapping

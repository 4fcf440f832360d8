"""The game models: outcome lists are probability distributions, bad arguments are refused."""

import math

import gymnasium as gym
import numpy as np
import pytest
from conftest import CASES, case_id, with_tables

from dice_envs import env_ids, game, make_model
from dice_envs.games.base import GameModel, reachable_states


@pytest.mark.parametrize("case", with_tables(CASES), ids=case_id)
def test_every_outcome_list_is_a_distribution(case):
    model = make_model(case[0], **case[1])
    assert isinstance(model, GameModel)
    start = model.initial_states()
    assert math.isclose(sum(p for p, _ in start), 1.0, abs_tol=1e-12)
    count = 0
    for state in reachable_states(model):
        count += 1
        legal = model.legal_actions(state)
        assert legal and set(legal) <= set(range(model.num_actions))
        assert model.validate_state(state) == state
        for action in range(model.num_actions):
            outcomes = model.transitions(state, action)
            assert all(t.prob > 0 for t in outcomes)
            assert math.isclose(sum(t.prob for t in outcomes), 1.0, abs_tol=1e-12)
    assert count > 0


def test_all_ids_have_a_model():
    for env_id in env_ids():
        model = make_model(env_id)
        if game(env_id).tables:
            assert isinstance(model, GameModel)
        else:  # a game too large for tables: its structure, and no tables at its defaults
            assert callable(model.turn_start_states) and game(env_id).tables_refused({})


@pytest.mark.parametrize(
    "env_id, kwargs, name",
    [
        ("dice_envs/SumAvoid-v0", {"N": 1}, "N"),
        ("dice_envs/SumAvoid-v0", {"N": 10.0}, "N"),
        ("dice_envs/SumAvoid-v0", {"sides": 1}, "sides"),
        ("dice_envs/SumAvoid-v0", {"max_sum": 0}, "max_sum"),
        ("dice_envs/SumAvoid-v0", {"max_sum": 2.5}, "max_sum"),
        ("dice_envs/SumAvoid-v0", {"max_sum": "big"}, "max_sum"),
        ("dice_envs/D20Rounds-v0", {"rounds": 0}, "rounds"),
        ("dice_envs/D20Rounds-v0", {"sides": 1}, "sides"),
        ("dice_envs/D20Rounds-v0", {"start_face": 0}, "start_face"),
        ("dice_envs/D20Rounds-v0", {"start_face": 21}, "start_face"),
        ("dice_envs/D20Rounds-v0", {"sides": 6, "start_face": 7}, "start_face"),
        ("dice_envs/D20Rounds-v0", {"rounds": True}, "rounds"),
        ("dice_envs/Pig-v0", {"goal": 0}, "goal"),
        ("dice_envs/Pig-v0", {"sides": 1}, "sides"),
        ("dice_envs/Pig-v0", {"die_probs": (0.5, 0.4)}, "sum to 1"),
        ("dice_envs/Pig-v0", {"die_probs": (0.5, -0.1, 0.6)}, "non-negative"),
        ("dice_envs/Pig-v0", {"die_probs": (1.0, 0.0)}, "face 1"),
        ("dice_envs/Pig-v0", {"die_probs": (1.0,)}, "die_probs"),
        ("dice_envs/Pig-v0", {"die_probs": "loaded"}, "die_probs"),
        ("dice_envs/Pig-v0", {"sides": 4, "die_probs": (0.5, 0.5)}, "sides"),
        ("dice_envs/Pig-v0", {"sides": 6, "die_probs": [0.25] * 4}, "sides=6"),
        ("dice_envs/Pig-v0", {"goal": True}, "goal"),
        ("dice_envs/Pig-v0", {"agent_starts": 1}, "agent_starts"),
        ("dice_envs/Pig-v0", {"agent_starts": 0}, "agent_starts"),
        ("dice_envs/Pig-v0", {"gaol": 100}, "unknown argument"),
        ("dice_envs/Pig-v0", {"opponent": np.zeros((3, 3))}, "opponent: a policy table"),
        ("dice_envs/SumAvoid-v0", {"n": 10}, "unknown argument"),
        ("dice_envs/SumAvoid-v0", {"sides": False}, "sides"),
        ("dice_envs/Pig-v0", {"opponent": "hold-at-0"}, "K >= 1"),
        ("dice_envs/Pig-v0", {"opponent": "greedy"}, "opponent"),
        ("dice_envs/Pig-v0", {"opponent": 20}, "opponent"),
        ("dice_envs/Pig-v0", {"agent_starts": "yes"}, "agent_starts"),
        ("dice_envs/TenThousand-v0", {"allowed_moves": ["5", "7"]}, "allowed_moves"),
        ("dice_envs/TenThousand-v0", {"allowed_moves": "51"}, "allowed_moves"),
        ("dice_envs/TenThousand-v0", {"max_turn_score": 0}, "max_turn_score"),
        ("dice_envs/TenThousand-v0", {"max_turn_score": 55.5}, "max_turn_score"),
    ],
)
def test_bad_arguments_name_the_argument(env_id, kwargs, name):
    with pytest.raises(ValueError, match=name):
        make_model(env_id, **kwargs)


def test_unknown_env_id():
    with pytest.raises(ValueError, match="env_id"):
        make_model("dice_envs/Nope-v0")


def test_validate_state_refuses_non_states():
    sum_avoid = make_model("dice_envs/SumAvoid-v0")
    for bad in (-1, 10, 20, sum_avoid.max_sum + 1, "3"):
        with pytest.raises(ValueError):
            sum_avoid.validate_state(bad)
    d20 = make_model("dice_envs/D20Rounds-v0", rounds=5)
    for bad in ((0, 3), (6, 3), (2, 0), (2, 21), 7, (1, 2, 3)):
        with pytest.raises(ValueError):
            d20.validate_state(bad)


@pytest.mark.parametrize("options", [{"State": 23}, {"state": 3, "seed": 1}, ["state"]])
def test_unknown_reset_options_are_refused(options):
    env = gym.make("dice_envs/SumAvoid-v0")
    with pytest.raises(ValueError, match="options"):
        env.reset(options=options)


def test_sides_and_die_probs_that_agree_are_accepted():
    model = make_model("dice_envs/Pig-v0", goal=10, sides=4, die_probs=[0.25] * 4)
    assert model.face_probs == (0.25,) * 4
    assert make_model("dice_envs/Pig-v0", goal=10, die_probs=[0.25] * 4).sides == 4
    assert make_model("dice_envs/Pig-v0", goal=10).sides == 6

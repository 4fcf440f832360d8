"""Competitive Ten Thousand: the race's rules are the solitaire turn's, and the small races
solve as worked by hand."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import baselines
import dice_envs
from baselines.ten_thousand import crocce_mordecki_policy
from baselines.two_player import two_player_optimum
from dice_envs.games.base import reachable_states
from dice_envs.games.ten_thousand import CONFIGS, TenThousand
from dice_envs.games.ten_thousand_duel import TenThousandDuel

DUEL = "dice_envs/TenThousandDuel-v0"


@pytest.mark.parametrize("allowed_moves", [None, [], ["5", "1", "t2"]])
@pytest.mark.parametrize(("own", "other"), [(0, 0), (7, 3), (11, 11)])
def test_the_races_turn_is_the_solitaire_turn_below_the_goal(allowed_moves, own, other):
    goal = 600  # 12 chips
    duel = TenThousandDuel(goal, allowed_moves)
    turn = TenThousand(allowed_moves, max_turn_score=40)
    left = duel.goal_chips - own
    checked = 0
    for position in reachable_states(turn):
        tau, _, dice = position
        if dice == 0 or tau >= left:
            continue
        for mover in (0, 1):
            scores = (own, other) if mover == 0 else (other, own)
            state = (mover, *scores, *position)
            assert duel.legal_actions(state) == turn.legal_actions(position)
            for action in turn.legal_actions(position):
                expected = {}
                for prob, after, _, _ in turn.transitions(position, action):
                    if action == 0:  # a stop banks the turn score; the other moves
                        key = ("banked", tau)
                    elif after[2] == 0:
                        key = ("bust",)
                    elif after[0] >= left:
                        key = ("won",)
                    else:
                        key = after
                    expected[key] = expected.get(key, 0.0) + prob
                found = {}
                for prob, after, reward, terminal in duel.transitions(state, action):
                    if terminal:
                        assert reward == float(mover == 0) and after[1 + mover] == duel.goal_chips
                        key = ("won",)
                    elif after[0] != mover:  # the turn passed: banked, or lost
                        assert after[3:] == (0, 0, 5)
                        gained = after[1 + mover] - own
                        assert after[2 - mover] == other
                        key = ("banked", gained) if gained else ("bust",)
                    else:
                        assert after[1:3] == state[1:3]
                        key = after[3:]
                    found[key] = found.get(key, 0.0) + prob
                assert found.keys() == expected.keys()
                for key, prob in expected.items():
                    assert found[key] == pytest.approx(prob, abs=1e-15)
                checked += 1
    assert checked > (500 if left > 6 else 1)


def test_a_race_to_one_chip_is_won_by_the_first_scoring_roll():
    """By hand: with 50 points to go, any scoring roll of five dice wins (p = 1 - 600/7776);
    the first player wins W = p + (1 - p)^2 W, so W = 1 / (2 - p)."""
    p = 1 - 600 / 7776
    optimum = baselines.solve(DUEL, goal=50, opponent="two-player-optimal", agent_starts=True)
    assert optimum.value == pytest.approx(1 / (2 - p), abs=1e-12)
    second = baselines.solve(DUEL, goal=50, opponent="stop-at-1", agent_starts=False)
    assert second.value == pytest.approx(1 - 1 / (2 - p), abs=1e-12)


def test_half_way_through_a_race_is_the_start_of_a_race_half_as_long():
    """Scores shift: at banked scores (g/2, g/2) only the g/2 still to go matters."""
    whole = two_player_optimum(TenThousandDuel(600))
    half = two_player_optimum(TenThousandDuel(300))
    middle = whole.value_at((6, 6, 0, 0, 5))
    assert middle == pytest.approx(half.value, abs=1e-12)
    assert half.value == pytest.approx(half.value_at((0, 0, 0, 0, 5)), abs=1e-12)
    assert abs(whole.value - half.value) > 1e-3  # the shift is not a coincidence of values


def test_crocce_mordecki_plays_the_solitaire_optimum_on_the_turn():
    solitaire = baselines.solve("dice_envs/TenThousand-v0")
    env = gym.make(DUEL, goal=10_000)
    policy = crocce_mordecki_policy(env.unwrapped.model.model)
    turns = [s for s in reachable_states(TenThousand(max_turn_score=60)) if s[2] > 0]
    banked = np.array([[0, 0], [150, 3], [37, 190]])
    for own, other in banked:
        observations = np.array([(own, other, *turn) for turn in turns])
        actions = policy.batch(observations)
        expected = solitaire.actions(np.array(turns))
        assert np.array_equal(actions, expected)
    assert CONFIGS[0] == (0, 0, 0)


def test_the_goal_must_be_a_positive_multiple_of_50():
    for goal in (0, 75, -50, 10.5, "10000"):
        with pytest.raises(ValueError, match="goal"):
            TenThousandDuel(goal)
    assert TenThousandDuel(10_000).observation_nvec == (201, 201, 200, len(CONFIGS), 6)


def test_the_tables_stop_where_the_structure_takes_over():
    small = TenThousandDuel(300)
    assert small.table_size().states == len(list(reachable_states(small)))  # exact when small
    with pytest.raises(ValueError, match="has no tables at .*its structure-aware solver"):
        baselines.solve(DUEL, goal=10_000, method="value_iteration")
    assert "goal=10000 gives tables of about" in dice_envs.game(DUEL).tables_refused(
        {"goal": 10_000}
    )


@pytest.mark.parametrize("goal", [300, 500])
def test_the_structure_aware_solver_and_the_tables_agree(goal):
    """The race's solver (banked-score pairs, policy iteration on each two-cycle) against the
    generic tables: the two-player optimum and best responses, either seat starting."""
    model = TenThousandDuel(goal)
    structure = two_player_optimum(model)
    tables = two_player_optimum(model, method="value_iteration")
    assert structure.value == pytest.approx(tables.value, abs=1e-12)
    for opponent in ("two-player-optimal", "crocce-mordecki", "stop-at-20"):
        for agent_starts in (True, False):
            kwargs = {"goal": goal, "opponent": opponent, "agent_starts": agent_starts}
            found = baselines.solve(DUEL, **kwargs)
            assert found.method == "structure-aware"
            on_tables = baselines.solve(DUEL, method="generic", tol=1e-15, **kwargs)
            assert found.value == pytest.approx(on_tables.value, abs=1e-12)
    # crocce-mordecki against stop-at-20, scored exactly on the tables, by the race's solver.
    from baselines.ten_thousand_duel import evaluate_race

    crocce = crocce_mordecki_policy(model)
    for agent_starts in (True, False):
        scored = baselines.evaluate(
            "crocce-mordecki", DUEL, goal=goal, opponent="stop-at-20", agent_starts=agent_starts
        )
        seats = (crocce, "stop-at-20") if agent_starts else ("stop-at-20", crocce)
        from dice_envs.policies import as_policy

        seats = tuple(as_policy(s, model) if isinstance(s, str) else s for s in seats)
        race = evaluate_race(model.goal_chips, *seats).first_player_wins
        expected = race if agent_starts else 1.0 - race
        assert scored.value == pytest.approx(expected, abs=1e-12)

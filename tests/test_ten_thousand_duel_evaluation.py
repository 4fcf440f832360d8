"""The race's structure-aware evaluator (`baselines.ten_thousand_duel_evaluation`) against the
generic tables' exact evaluation, where the tables fit."""

from __future__ import annotations

import numpy as np
import pytest

import baselines
import dice_envs
from baselines.evaluation import evaluate_on
from baselines.exact import enumerated
from baselines.ten_thousand_duel_evaluation import RaceEvaluation, evaluate_race_policy
from baselines.two_player import two_player_optimum
from dice_envs.games.policy_forms import PolicyError
from dice_envs.games.ten_thousand_duel import TenThousandDuel

DUEL = "dice_envs/TenThousandDuel-v0"


def _uneven(observations: np.ndarray) -> np.ndarray:
    """A stochastic policy that is not uniform: 0.7 on a roll, the rest on a stop."""
    rows = np.asarray(observations).reshape(-1, 5)
    probabilities = np.zeros((len(rows), 15))
    probabilities[:, 1] = 0.7
    probabilities[:, 0] = 0.3
    return probabilities


@pytest.mark.parametrize(
    ("goal", "opponent"), [(300, "stop-at-20"), (500, "crocce-mordecki"), (350, "random")]
)
@pytest.mark.parametrize("agent_starts", [True, False, None])
def test_the_structure_evaluator_is_the_tables(goal, opponent, agent_starts):
    """Value, agreement and the losses to 1e-12, deterministic and stochastic policies, either
    seat first or a coin; the optimum (the best response) to the generic fold's tolerance."""
    kwargs = {"goal": goal, "opponent": opponent, "agent_starts": agent_starts}
    tables, optimum = enumerated(DUEL, **kwargs)
    named = ("crocce-mordecki", "stop-at-20", "random", "two-player-optimal")
    for policy in (*named, dice_envs.policies.batched(_uneven)):
        race = baselines.evaluate(policy, DUEL, **kwargs)
        assert isinstance(race, RaceEvaluation)
        generic = evaluate_on(policy, tables, optimum)
        assert race.value == pytest.approx(generic.value, abs=1e-12)
        assert race.agreement == pytest.approx(generic.agreement, abs=1e-12)
        # The generic fold's solve stops at its own tolerance (about 1e-12 from the brute
        # force of tests/test_ten_thousand_duel.py); the race's best response is its solver's.
        assert race.optimal_value == pytest.approx(generic.optimal_value, abs=5e-12)
        assert race.losses_by_scores.sum() == pytest.approx(race.gap, abs=1e-12)
        ours, theirs = race.where_lost(5), generic.where_lost(5)
        assert [loss.observation for loss in ours] == [loss.observation for loss in theirs]
        assert [loss.action for loss in ours] == [loss.action for loss in theirs]
        assert [loss.optimal_action for loss in ours] == [loss.optimal_action for loss in theirs]
        assert np.allclose([x.loss for x in ours], [x.loss for x in theirs], rtol=0, atol=1e-12)


def test_a_policy_against_itself_wins_half_with_a_coin():
    """The race is symmetric: any policy against itself, first mover by a coin, wins 1/2."""
    for policy in ("crocce-mordecki", "stop-at-20"):
        score = baselines.evaluate(policy, DUEL, goal=600, opponent=policy)
        assert score.value == pytest.approx(0.5, abs=1e-13)
        exploited = baselines.exploitability(policy, DUEL, goal=600)
        assert score.gap == pytest.approx(exploited.value, abs=1e-13)


def test_the_gap_sums_over_the_banked_scores_and_where_lost_is_bounded():
    score = evaluate_race_policy("stop-at-20", goal=800, keep_losses=20)
    assert score.losses_by_scores.shape == (16, 16)
    assert score.losses_by_scores.sum() == pytest.approx(score.gap, abs=1e-13)
    assert score.gap > 0.01 and 0 < score.agreement < 1
    lost = score.where_lost(20)
    assert [x.loss for x in lost] == sorted((x.loss for x in lost), reverse=True)
    assert all(0 <= x.observation[0] < 16 and x.action != x.optimal_action for x in lost)
    with pytest.raises(ValueError, match="count must be at most 20"):
        score.where_lost(21)
    with pytest.raises(ValueError, match="agent_starts must be True, False or None"):
        evaluate_race_policy("stop-at-20", goal=300, agent_starts="yes")


@pytest.mark.parametrize(
    ("goal", "agent_starts"), [(300, True), (300, False), (300, None), (500, None)]
)
def test_exploitability_by_the_structure_path_is_the_generic_fold(goal, agent_starts):
    """The best response by the banked-score pairs is the generic fold's solve on its tables,
    with either seat first or a coin; the game's value in that seat is the race optimum's."""
    optimum = two_player_optimum(TenThousandDuel(goal))
    game_value = {True: optimum.value, False: 1.0 - optimum.value, None: 0.5}[agent_starts]
    for policy in ("stop-at-20", "crocce-mordecki", dice_envs.policies.batched(_uneven)):
        exploited = baselines.exploitability(policy, DUEL, goal=goal, agent_starts=agent_starts)
        generic = baselines.solve(
            DUEL, goal=goal, opponent=policy, agent_starts=agent_starts, method="generic"
        )
        assert exploited.best_response_value == pytest.approx(generic.value, abs=5e-12)
        assert exploited.game_value == pytest.approx(game_value, abs=1e-15)
        assert exploited.value == pytest.approx(generic.value - game_value, abs=5e-12)


@pytest.mark.verify
def test_the_structure_evaluator_is_the_tables_at_goal_1000():
    """`make verify`: goal 1,000 (20 chips), crocce-mordecki against stop-at-20 and a mixture
    against crocce-mordecki, either seat first: value, agreement, losses as the tables'."""
    for opponent, policy in (("stop-at-20", "crocce-mordecki"), ("crocce-mordecki", None)):
        policy = policy or dice_envs.policies.batched(_uneven)
        for agent_starts in (True, False):
            kwargs = {"goal": 1000, "opponent": opponent, "agent_starts": agent_starts}
            tables, optimum = enumerated(DUEL, **kwargs)
            race = baselines.evaluate(policy, DUEL, **kwargs)
            generic = evaluate_on(policy, tables, optimum)
            assert race.value == pytest.approx(generic.value, abs=1e-12)
            assert race.agreement == pytest.approx(generic.agreement, abs=1e-12)
            assert race.gap == pytest.approx(generic.gap, abs=5e-12)
            assert race.losses_by_scores.sum() == pytest.approx(race.gap, abs=1e-12)
            ours, theirs = race.where_lost(5), generic.where_lost(5)
            assert [x.observation for x in ours] == [x.observation for x in theirs]
            assert np.allclose([x.loss for x in ours], [x.loss for x in theirs], atol=1e-12)


def test_a_solution_of_tables_is_asked_only_where_play_goes():
    """A tables solution answers its own game's observations: evaluated on that game it is
    optimal; against an opponent whose play reaches observations it never saw, refused by
    name."""
    solution = baselines.solve(DUEL, goal=300, opponent="stop-at-20", method="generic")
    score = baselines.evaluate(solution, DUEL, goal=300, opponent="stop-at-20")
    assert score.gap == pytest.approx(0.0, abs=1e-12) and score.agreement == 1.0
    with pytest.raises(PolicyError, match=r"reaches \[0, 1, 1, 1, 4\]"):
        baselines.evaluate(solution, DUEL, goal=300, opponent="random")

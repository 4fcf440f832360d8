"""Solitaire Pig (PigSolitaire-v0): the rules read from the two-player Pig model, and the
published numbers.

Published numbers: H. Tijms, "Stochastic games and dynamic programming", Asia Pacific
Mathematics Newsletter (2012), after J. Haigh and M. Roters, "Optimal strategy in a dice
game", Journal of Applied Probability 37 (2000); F. Crocce and E. Mordecki, "A finite exact
algorithm to solve a dice game", Journal of Applied Probability (2016), after M. Roters,
"Optimal stopping in a dice game", Journal of Applied Probability 35 (1998).
"""

import numpy as np
import pytest

import baselines
from dice_envs import make_model
from dice_envs.games.pig import HOLD, ROLL
from dice_envs.policies import named_policy

SOLO = "dice_envs/PigSolitaire-v0"


def test_fewest_turns_to_100_as_published():
    # Tijms (2012), after Haigh and Roters (2000), reports 12.545 turns at best, 12.637
    # holding at 20 (or at what the score still lacks).
    assert round(-baselines.solve(SOLO).value, 3) == 12.545
    hold = baselines.evaluate(named_policy(SOLO, "hold-at-20"), SOLO)
    assert round(-hold.value, 3) == 12.637


def test_one_turn_score_as_published():
    # Crocce and Mordecki (2016), section 5.2, after Roters (1998), report V(0) = 8.14 and the
    # critical threshold 20.
    solution = baselines.solve(SOLO, objective="turn_score")
    assert round(solution.value, 2) == 8.14
    rolls = [solution.action((0, turn)) for turn in range(2, 40)]
    assert rolls == [ROLL] * 18 + [HOLD] * 20  # roll below 20, hold from 20 on


def _turn_outcomes(model, hold_at: int) -> dict[int, float]:
    """The banked total of one turn under hold-at-K, by exact propagation over the model."""
    outcomes: dict[int, float] = {}
    frontier = {(0, 0): 1.0}
    while frontier:
        following: dict[tuple[int, int], float] = {}
        for state, mass in frontier.items():
            action = HOLD if state[1] >= hold_at else ROLL
            for prob, after, reward, terminal in model.transitions(state, action):
                if terminal:
                    outcomes[int(reward)] = outcomes.get(int(reward), 0.0) + mass * prob
                else:
                    following[after] = following.get(after, 0.0) + mass * prob
        frontier = following
    return outcomes


def test_hold_at_20_turn_outcomes_as_neller_and_presser_compute_them():
    # Neller and Presser (2004), as quoted by the issue: a hold-at-20 turn banks 0, 20, ..., 25
    # with these probabilities.
    published = {0: 0.624541, 20: 0.099713, 21: 0.094991, 22: 0.074189, 23: 0.054196,
                 24: 0.035198, 25: 0.017173}  # fmt: skip
    outcomes = _turn_outcomes(make_model(SOLO, objective="turn_score"), 20)
    assert sum(outcomes.values()) == pytest.approx(1.0, abs=1e-12)
    assert {k: round(v, 6) for k, v in outcomes.items()} == published


def test_the_rules_are_pigs():
    """One solitaire turn is seat 0's turn of two-player Pig, outcome for outcome."""
    solo, pig = make_model(SOLO, goal=30), make_model("dice_envs/Pig-v0", goal=30).model
    for score, turn in [(0, 0), (5, 12), (27, 2)]:
        for action in solo.legal_actions((score, turn)):
            ours = solo.transitions((score, turn), action)
            theirs = pig.transitions((0, score, 0, turn), action)
            assert [o.prob for o in ours] == [t.prob for t in theirs]
            assert [o.next_state[0] for o in ours] == [t.next_state[1] for t in theirs]


def test_bad_objective_is_refused():
    with pytest.raises(ValueError, match="objective must be one of"):
        make_model(SOLO, objective="score")
    with pytest.raises(ValueError, match="score must be 0"):
        make_model(SOLO, objective="turn_score").validate_state((3, 2))
    assert np.isclose(baselines.solve(SOLO, goal=2).value, -(1 / (5 / 6)))

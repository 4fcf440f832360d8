"""D20 rounds: the blog post's reasoning, hand-solved cases, and the two solvers agreeing.

The blog post: "Random dice game: simulations and optimal strategy using dynamic programming"
(anonymous, 2025).
"""

import numpy as np
import pytest

import baselines
from dice_envs.policies import named_policy

ID = "dice_envs/D20Rounds-v0"


def take_threshold(solution, rounds_left, sides=20):
    """The least face worth taking with `rounds_left` rounds to go."""
    return min(f for f in range(1, sides + 1) if solution.action((rounds_left, f)) == 0)


@pytest.mark.parametrize("method", ["auto", "generic"])
def test_blog_post_one_and_two_rounds(method):
    # The blog post: with one round take the $1; with two, reroll once: 10.5 on average.
    assert baselines.solve(ID, rounds=1, method=method).value == pytest.approx(1.0, abs=1e-12)
    assert baselines.solve(ID, rounds=2, method=method).value == pytest.approx(10.5, abs=1e-12)


def test_hand_solved_three_rounds():
    # Two rounds left: take f iff 2f > 10.5, so V_2 averages (5 * 10.5 + 2 * (6 + ... + 20)) / 20
    # = 22.125. Three rounds from face 1: reroll (22.125) beats 1 + V_2(1) = 11.5. A face is
    # worth taking with three rounds left iff 3f > 22.125, i.e. f >= 8.
    solution = baselines.solve(ID, rounds=3)
    assert solution.value == pytest.approx(22.125, abs=1e-12)
    assert take_threshold(solution, 2) == 6
    assert take_threshold(solution, 3) == 8


def test_blog_post_thresholds():
    # The blog post reports "with 10 rounds left, you should reroll anything less than 13, once
    # you get to 50 rounds left you should reroll anything less than 17". (Its "3 rounds left:
    # less than 7" disagrees with the hand computation above, which gives 8.)
    solution = baselines.solve(ID, rounds=100)
    assert take_threshold(solution, 10) == 13
    assert take_threshold(solution, 50) == 17


@pytest.mark.parametrize(
    "kwargs",
    [{"rounds": 1}, {"rounds": 40}, {"rounds": 200}, {"rounds": 25, "sides": 6, "start_face": 4}],
)
def test_specialised_solver_agrees_with_the_generic_one(kwargs):
    fast = baselines.solve(ID, method="specialised", **kwargs)
    generic = baselines.solve(ID, method="generic", **kwargs)
    assert fast.value == pytest.approx(generic.value, abs=1e-9)
    tables = generic.tables
    for i, obs in enumerate(tables.observations):
        np.testing.assert_allclose(fast.q_values(obs), generic.q[i], atol=1e-9)
        assert fast.action(obs) == generic.policy[i]
    assert generic.bellman_residual <= 1e-9


def test_large_horizon_value():
    # For many rounds the optimum rerolls to a 20 (20 rerolls on average) and keeps it:
    # 20 * (rounds - 20), up to the vanishing chance of never seeing a 20.
    solution = baselines.solve(ID, rounds=2000)
    assert solution.value == pytest.approx(20 * (2000 - 20), abs=1e-6)


def first_success_value(rounds, p_success, mean_taken):
    """Reroll until a face in a set of probability p shows, then take it every round left.

    The k-th reroll is the first success with probability (1 - p)^(k - 1) p, after which
    rounds - k rounds pay the face (its mean over the set).
    """
    k = np.arange(1, rounds + 1)
    return float(np.sum((1 - p_success) ** (k - 1) * p_success * mean_taken * (rounds - k)))


@pytest.mark.parametrize("rounds", [1, 2, 10, 100])
def test_blog_post_strategies_exactly(rounds):
    values = {
        name: baselines.evaluate(named_policy(ID, name, rounds=rounds), ID, rounds=rounds).value
        for name in ("take-anything", "roll-once", "reroll-below-max", "take-above-10")
    }
    assert values["take-anything"] == pytest.approx(rounds, abs=1e-9)
    assert values["roll-once"] == pytest.approx(10.5 * (rounds - 1), abs=1e-9)
    assert values["reroll-below-max"] == pytest.approx(first_success_value(rounds, 0.05, 20), 1e-12)
    assert values["take-above-10"] == pytest.approx(first_success_value(rounds, 0.5, 15.5), 1e-12)
    optimum = baselines.solve(ID, rounds=rounds).value
    assert all(value <= optimum + 1e-9 for value in values.values())


def test_blog_post_estimates_for_100_rounds():
    # The blog post estimates "roll until 20" at about 80 * 20 = 1600 and "take 11 or
    # more" at about 98 * 15.5 = 1519; the exact values sit close to both.
    reroll = baselines.evaluate(named_policy(ID, "reroll-below-max"), ID).value
    above = baselines.evaluate(named_policy(ID, "take-above-10"), ID).value
    assert reroll == pytest.approx(1600, rel=0.01)
    assert above == pytest.approx(1519, rel=0.001)

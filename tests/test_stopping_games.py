"""Tijms's stopping games: hand-solved small cases, the published values and the published
stopping rules, read off the exact solutions.

Published numbers: H. Tijms, "Stochastic games and dynamic programming", Asia Pacific
Mathematics Newsletter (2012).
"""

import numpy as np
import pytest

import baselines
from dice_envs import make_model
from dice_envs.games.stopping import TIJMS_RED_BLACK_THRESHOLDS
from dice_envs.policies import named_policy
from docs.tools.stopping_rules import (
    CARDS,
    DIE,
    die_stop_faces,
    effective_thresholds,
    red_black_stop_leads,
)

COIN = "dice_envs/ChowRobbins-v0"


@pytest.mark.parametrize(
    "env_id, kwargs, value",
    [
        # Two rolls of a coin-like d2: stop on a 2, roll again on a 1: (2 + 1.5) / 2.
        (DIE, {"rolls": 2, "sides": 2}, 1.75),
        # One red, one black: red first (stop at +1) or black first (draw the red: 0).
        (CARDS, {"red": 1, "black": 1}, 0.5),
        # Only red cards: draw them all.
        (CARDS, {"red": 4, "black": 0}, 4.0),
        # Only black cards: stop at once.
        (CARDS, {"red": 0, "black": 3}, 0.0),
        # Two tosses: heads first, stop at 1; tails first, toss again for 1/2 * 1/2.
        (COIN, {"horizon": 2}, 0.625),
        (COIN, {"horizon": 1}, 0.5),
    ],
)
def test_hand_solved_small_games(env_id, kwargs, value):
    assert baselines.solve(env_id, method="generic", **kwargs).value == pytest.approx(value)


def test_die_values_and_rule_as_published():
    # Tijms (2012) reports 3.5, 4.25, 4.67, 4.944, 5.129 for 1 to 5 rolls.
    published = {1: 3.5, 2: 4.25, 3: 4.67, 4: 4.944, 5: 5.129}
    for rolls, value in published.items():
        digits = len(str(value).split(".")[1])
        exact = baselines.solve(DIE, rolls=rolls).value
        # Within one unit of the last printed digit: Tijms rounds 4.6667 to 4.67 but cuts
        # 5.1296 to 5.129.
        assert abs(exact - value) < 10**-digits
    # Tijms (2012): with one roll left stop on 4, 5 or 6; with two or more on 5 or 6.
    assert die_stop_faces(5) == {1: 4, 2: 5, 3: 5, 4: 5}


def test_red_black_value_and_thresholds_as_published():
    # Tijms (2012) reports E(26, 26) = 2.6245.
    assert round(baselines.solve(CARDS).value, 4) == 2.6245
    leads = red_black_stop_leads()
    published = effective_thresholds(TIJMS_RED_BLACK_THRESHOLDS, 51)
    ours = np.array([-1 if lead is None else lead for lead in leads])
    # Tijms's beta_k (read as 'lead beta_k or more') agree everywhere but k = 8, where the
    # text prints 7 and the exact least lead is 6 (his 5, in its parity).
    assert list(np.flatnonzero(ours != published) + 1) == [8]
    assert ours[7] == 6
    corrected = list(TIJMS_RED_BLACK_THRESHOLDS)
    corrected[7] = 5
    model = make_model(CARDS)
    assert baselines.evaluate(model.thresholds_rule(corrected), CARDS).gap < 1e-12
    printed = baselines.evaluate(named_policy(CARDS, "tijms-thresholds"), CARDS)
    assert printed.gap > 1e-3  # as printed, beta_8 = 7 costs something


def test_chow_robbins_small_horizons_as_published_by_the_generic_solver():
    # Tijms (2012) reports f_N(0) = 0.7679, 0.7780, 0.7839 for N = 25, 50, 100.
    for horizon, value in ((25, 0.7679), (50, 0.7780), (100, 0.7839)):
        exact = baselines.solve(COIN, method="generic", horizon=horizon).value
        assert round(exact, 4) == value


def test_named_rules():
    assert baselines.evaluate(named_policy(DIE, "stop-at-1"), DIE).value == pytest.approx(3.5)
    with pytest.raises(ValueError, match="red=26, black=26 only"):
        named_policy(CARDS, "tijms-thresholds", red=5, black=5)
    rule = named_policy(COIN, "heads-exceed-tails", horizon=10)
    assert [rule((0, 0)), rule((1, 1)), rule((1, 0)), rule((3, 2))] == [1, 0, 1, 0]


def test_old_name_of_tijms_thresholds_is_refused():
    # "seed-thresholds", deprecated in 0.5.0, is gone in 0.6.0: the error lists the names taken.
    with pytest.raises(ValueError, match="tijms-thresholds.*got 'seed-thresholds'"):
        named_policy(CARDS, "seed-thresholds")


def test_chow_robbins_makes_and_steps_without_tables_at_a_million_tosses():
    import gymnasium as gym

    env = gym.make(COIN, horizon=1_000_000)
    obs, info = env.reset(seed=0)
    assert list(obs) == [0, 0] and list(info["action_mask"]) == [0, 1]
    for _ in range(1000):
        obs, reward, terminated, truncated, info = env.step(1)
    assert obs[0] == 1000 and not terminated and reward == 0
    obs, reward, terminated, truncated, info = env.step(0)
    assert terminated and reward == pytest.approx(obs[1] / 1000)

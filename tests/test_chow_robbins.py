"""The Chow–Robbins solvers: the banded pass against the full one, the published values and
thresholds, the heads-exceed-tails rule, and baselines.solve.

Published numbers: H. Tijms, "Stochastic games and dynamic programming", Asia Pacific
Mathematics Newsletter (2012).
"""

import math

import numpy as np
import pytest

import baselines
from baselines import chow_robbins
from baselines.chow_robbins import (
    ChowRobbinsSolution,
    band_width,
    banded_backward,
    evaluate_threshold_rule,
    full_backward,
    heads_exceed_tails,
    heads_exceed_tails_bounds,
)

ID = "dice_envs/ChowRobbins-v0"


@pytest.fixture(scope="module")
def banded_100k():
    return banded_backward(100_000)


@pytest.mark.parametrize("horizon", [1, 2, 7, 30, 100, 1000, 5000])
def test_banded_pass_equals_the_full_pass(horizon):
    value, thresholds = full_backward(horizon)
    banded = banded_backward(horizon)
    assert banded.value == pytest.approx(value, abs=1e-12)
    # Every layer with a decision (n = 1..N-1; n = 0 must toss, n = N pays).
    np.testing.assert_array_equal(banded.thresholds[1:horizon], thresholds[1:horizon])
    assert banded.thresholds[0] == thresholds[0] == 1
    assert banded.thresholds[horizon] == thresholds[horizon] == -horizon
    assert banded.irregular == 0 and banded.band <= horizon


def test_hand_values():
    # N = 1: one toss, 1/2. N = 2: a head stops at 1, a tail tosses again for 1/4: 5/8.
    assert full_backward(1)[0] == banded_backward(1).value == 0.5
    assert banded_backward(2).value == pytest.approx(5 / 8, abs=1e-15)
    assert banded_backward(2).thresholds[1] == 1


def test_a_narrow_band_stays_within_its_bound():
    # The docstring's proof: value - eps <= banded value <= value, for any eps.
    exact, _ = full_backward(5000)
    for eps in (1e-2, 1e-4, 1e-8):
        banded = banded_backward(5000, eps=eps)
        assert banded.band < 5000
        assert exact - eps <= banded.value <= exact + 1e-15
    rule = evaluate_threshold_rule(5000, 1, eps=1e-3)
    assert abs(rule.value - evaluate_threshold_rule(5000, 1, eps=1e-300).value) <= 1e-3


def test_band_width():
    assert band_width(1) == 1 and band_width(50) == 50
    for horizon in (100, 10_000, 1_000_000):
        d = band_width(horizon)
        assert 4 * math.exp(-((d + 1) ** 2) / (2 * horizon)) <= 1e-14
        assert 4 * math.exp(-(d**2) / (2 * horizon)) > 1e-14


# Tijms (2012) reports "f_N(0) has the values 0.7679, 0.7780, 0.7839, 0.7912, 0.79206,
# 0.79263, 0.79289, and 0.79294 for N = 25, 50, 100, 1,000, 2,500, 10,000, 100,000, and
# 1,000,000", compared to the printed digits.
PUBLISHED = [
    (25, "0.7679"),
    (50, "0.7780"),
    (100, "0.7839"),
    (1000, "0.7912"),
    (2500, "0.79206"),
    (10_000, "0.79263"),
]


@pytest.mark.parametrize("horizon, printed", PUBLISHED)
def test_published_values(horizon, printed):
    digits = len(printed.split(".")[1])
    assert f"{banded_backward(horizon).value:.{digits}f}" == printed


def test_published_value_at_100_000(banded_100k):
    assert f"{banded_100k.value:.5f}" == "0.79289"  # Tijms (2012) at N = 100,000


@pytest.mark.verify  # 10-15 s; the default run checks the published value and thresholds at 100k
def test_published_value_and_thresholds_at_a_million():
    banded = banded_backward(1_000_000)  # about 9 s
    assert f"{banded.value:.5f}" == "0.79294"  # Tijms (2012) at N = 1,000,000
    for n, beta in TIJMS_THRESHOLDS.items():
        assert banded.thresholds[n] == beta, n


# Tijms (2012) reports "beta_1 = 1 ... beta_2 = 2, beta_3 = 3, beta_4 = 2, beta_5 = 3,
# beta_8 = 2, beta_10 = 4, beta_15 = 3, beta_25 = 5, beta_50 = 6, beta_75 = 7, beta_99 = 9,
# and beta_100 = 8" (Medina and Zeilberger's, 2010, for the unbounded game).
TIJMS_THRESHOLDS = {
    1: 1,
    2: 2,
    3: 3,  # "not optimal to stop with 2 heads and 1 tail after 3 tosses"
    4: 2,
    5: 3,
    8: 2,  # "optimal if you have 5 heads and 3 tails after 8 tosses"
    10: 4,
    15: 3,
    25: 5,
    50: 6,
    75: 7,
    99: 9,
    100: 8,
}


def test_tijms_thresholds_at_a_large_horizon(banded_100k):
    found = {n: int(banded_100k.thresholds[n]) for n in TIJMS_THRESHOLDS}
    assert found == TIJMS_THRESHOLDS


def test_thresholds_near_a_short_horizon_differ():
    # With N = 1000 the horizon already shows at n = 99: beta_99 = 7, not the unbounded 9.
    assert banded_backward(1000).thresholds[99] == 7
    # (N - 1, d = 0) is an exact tie for odd N (stop 1/2, toss 1/2): the rule stops.
    assert banded_backward(99).thresholds[98] == 0


def test_heads_exceed_tails_by_the_tables():
    # The banded rule evaluation against the generic exact evaluation on the tables.
    for horizon in (7, 30, 100):
        exact = baselines.evaluate(
            lambda obs: int(obs[0] == 0 or 2 * obs[1] - obs[0] < 1), ID, horizon=horizon
        ).value
        assert heads_exceed_tails(horizon).value == pytest.approx(exact, abs=1e-12)


def test_heads_exceed_tails_approaches_pi_over_4():
    # pi/4 - 1/(2N) <= value <= pi/4 - P(tau <= N)/(2N) (heads_exceed_tails' docstring);
    # measured: 0.7849065726 (N = 1000), 0.7853931718 (N = 100,000), 0.7853976637 (10^6).
    for horizon in (1000, 100_000):
        value = heads_exceed_tails(horizon).value
        lower, upper = heads_exceed_tails_bounds(horizon)
        assert lower - 1e-13 <= value <= upper + 1e-13
    assert math.pi / 4 - value == pytest.approx(5e-6, rel=0.01)  # about 1/(2N), N = 100,000
    assert f"{math.pi / 4:.7f}" == "0.7853982"  # Tijms (2012): its value when unbounded


def test_optimal_thresholds_as_a_rule_give_the_optimal_value():
    for horizon in (30, 1000):
        banded = banded_backward(horizon)
        rule = evaluate_threshold_rule(horizon, banded.thresholds)
        assert rule.value == pytest.approx(banded.value, abs=1e-13)
    with pytest.raises(ValueError, match="thresholds"):
        evaluate_threshold_rule(10, np.ones(3))


@pytest.mark.parametrize("horizon", [1, 7, 100, 200])
def test_solve_agrees_with_the_generic_solver(horizon, monkeypatch):
    """Single-position answers come without the arrays (refused here by a limit of 0), and
    agree with the generic solver; so do the arrays, read afterwards."""
    fast = baselines.solve(ID, method="specialised", horizon=horizon)
    generic = baselines.solve(ID, method="generic", horizon=horizon)
    assert isinstance(fast, ChowRobbinsSolution) and fast.method == "specialised"
    assert fast.value == pytest.approx(generic.value, abs=1e-12)
    tables = generic.tables
    with monkeypatch.context() as limit:
        limit.setattr(chow_robbins, "MATERIALISE_LIMIT", 0)
        lazy = np.array([fast.q_values(obs) for obs in tables.observations])
        with pytest.raises(ValueError, match="MATERIALISE_LIMIT=0"):
            fast.q  # noqa: B018
    np.testing.assert_allclose(lazy, generic.q, atol=1e-12)
    np.testing.assert_allclose(
        fast.q[fast.indices_of(tables.observation_array)], generic.q, atol=1e-12
    )
    for obs in tables.observations:
        assert fast.action(obs) in generic.optimal_actions(obs)
        assert fast.action(obs) == fast.policy[fast.index_of(obs)]
    assert fast.bellman_residual <= 1e-12 and fast.num_states == tables.num_states


def test_large_horizon_solution_without_quadratic_memory(banded_100k):
    solution = baselines.solve(ID, horizon=100_000)
    assert solution.value == pytest.approx(banded_100k.value, abs=1e-13)
    assert solution.q_values((0, 0))[1] == pytest.approx(solution.value, abs=1e-13)
    assert np.isnan(solution.bellman_residual) and solution.num_states == -1
    n, beta = 99, TIJMS_THRESHOLDS[99]
    assert solution.action((n, (n + beta) // 2)) == 0  # d = 9: stop
    assert solution.action((n, (n + beta) // 2 - 1)) == 1  # d = 7: toss
    assert solution.action((0, 0)) == 1
    stop, toss = solution.q_values((99_999, 50_000))  # the last toss: (2i + 1) / (2N)
    assert (stop, toss) == (50_000 / 99_999, 100_001 / 200_000)
    assert solution.optimal_actions((0, 0)) == [1]
    with pytest.raises(ValueError, match="MATERIALISE_LIMIT"):
        solution.q  # noqa: B018
    with pytest.raises(KeyError):
        solution.action((5, 6))

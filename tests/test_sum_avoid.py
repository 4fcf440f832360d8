"""Sum-avoid-N against the printed table of "Rolling dice game and value functions" (an
anonymous question with a worked answer, a web page), hand-solved cases and the cap argument."""

import pytest

import baselines
from dice_envs import make_model
from dice_envs.games.sum_avoid import default_max_sum
from docs.tools.sum_avoid_rules import remainder_thresholds, stop_thresholds

ID = "dice_envs/SumAvoid-v0"

# The write-up's printed V(S) and policy for N=10, a six-sided die, S_max=200
# (S = 10, 20, 30, 40 are terminal busts and left out).
WRITE_UP_TABLE = {
    0: (13.217, "roll"), 1: (13.405, "roll"), 2: (13.608, "roll"), 3: (13.846, "roll"),
    4: (11.868, "roll"), 5: (12.847, "roll"), 6: (13.729, "roll"), 7: (14.533, "roll"),
    8: (14.827, "roll"), 9: (15.272, "roll"), 11: (18.722, "roll"), 12: (19.018, "roll"),
    13: (19.357, "roll"), 14: (16.592, "roll"), 15: (17.945, "roll"), 16: (19.157, "roll"),
    17: (20.260, "roll"), 18: (20.795, "roll"), 19: (21.395, "roll"), 21: (26.062, "roll"),
    22: (26.432, "roll"), 23: (26.878, "roll"), 24: (24.000, "stop"), 25: (25.000, "stop"),
    26: (26.303, "roll"), 27: (27.759, "roll"), 28: (28.651, "roll"), 29: (29.558, "roll"),
    31: (35.764, "roll"), 32: (36.083, "roll"), 33: (36.500, "roll"), 34: (34.000, "stop"),
    35: (35.000, "stop"), 36: (36.000, "stop"), 37: (37.000, "stop"), 38: (38.000, "stop"),
    39: (39.000, "stop"), 41: (45.764, "roll"), 42: (46.083, "roll"), 43: (46.500, "roll"),
    44: (44.000, "stop"), 45: (45.000, "stop"), 46: (46.000, "stop"), 47: (47.000, "stop"),
    48: (48.000, "stop"), 49: (49.000, "stop"),
}  # fmt: skip
# The write-up's thresholds per remainder class (None: never stop in that class).
WRITE_UP_THRESHOLDS = {0: None, 1: None, 2: None, 3: None, 4: 24, 5: 25, 6: 36, 7: 37, 8: 38, 9: 39}


@pytest.mark.parametrize("max_sum", [None, 200])
def test_write_up_table(max_sum):
    solution = baselines.solve(ID, N=10, max_sum=max_sum)
    assert round(solution.value, 3) == 13.217
    for total, (value, action) in WRITE_UP_TABLE.items():
        assert round(solution.state_value(total), 3) == pytest.approx(value, abs=1e-9), total
        assert ("stop", "roll")[solution.action(total)] == action, total


@pytest.mark.parametrize("max_sum", [None, 200])
def test_write_up_thresholds(max_sum):
    solution = baselines.solve(ID, N=10, max_sum=max_sum)
    found = stop_thresholds(solution, make_model(ID, N=10, max_sum=max_sum))
    assert found == WRITE_UP_THRESHOLDS
    # The thresholds describe the whole optimal policy: evaluated exactly, they are optimal.
    score = baselines.evaluate(remainder_thresholds(10, found), ID, N=10, max_sum=max_sum)
    assert score.gap == pytest.approx(0.0, abs=1e-9)
    assert score.agreement == pytest.approx(1.0)


def test_hand_solved_two_sided_die():
    # N=2, a two-sided die. Odd sums S can roll to S+1 (bust) or S+2: rolling is worth
    # V(S+2)/2, and V(S) = S for every odd S >= 3 (since (S+2)/2 < S). V(1) = max(1, 3/2) = 1.5
    # and V(0) = V(1)/2 = 0.75 (a 2 busts at once).
    solution = baselines.solve(ID, N=2, sides=2)
    assert solution.value == pytest.approx(0.75, abs=1e-12)
    assert solution.state_value(1) == pytest.approx(1.5, abs=1e-12)
    assert solution.action(1) == 1 and solution.action(3) == 0


@pytest.mark.parametrize("N", [2, 3, 5, 7, 10, 13, 25])
@pytest.mark.parametrize("sides", [2, 4, 6, 8, 12])
def test_default_cap_gives_the_uncapped_value(N, sides):
    # The default cap is an argument (default_max_sum's docstring); here it meets the numbers:
    # with a cap four times larger, the value from every sum below the stopping bound is the same.
    default = baselines.solve(ID, N=N, sides=sides)
    larger = baselines.solve(ID, N=N, sides=sides, max_sum=4 * default_max_sum(N, sides) + 50)
    assert default.value == pytest.approx(larger.value, abs=1e-9)
    for total in range((sides - 1) * (N + sides)):
        if total == 0 or total % N:
            assert default.state_value(total) == pytest.approx(larger.state_value(total), abs=1e-9)


def test_small_cap_changes_the_game():
    capped = baselines.solve(ID, N=10, max_sum=12)
    # From 7 a roll that passes 12 pays the sum at once: the cap makes the game a different one.
    assert capped.value != pytest.approx(13.217, abs=1e-3)
    assert capped.bellman_residual <= 1e-9

"""Ten Thousand against Crocce and Mordecki: values, Table 4, Table 5, Table 6, Lemma 4.3, and
the paper's algorithm against the generic solver.

The paper: F. Crocce and E. Mordecki, "A finite exact algorithm to solve a dice game", Journal
of Applied Probability (2016).
"""

import gymnasium as gym
import numpy as np
import pytest

import baselines
from baselines.solvers import optimal_action_mask
from baselines.ten_thousand import critical_threshold
from dice_envs import make_model
from dice_envs.games.ten_thousand import (
    CONFIG_INDEX,
    CONFIGS,
    MOVE_ACTION,
    ROLL,
    STOP,
    classify,
    roll_frequencies,
    score,
    scoring_dice,
)

ID = "dice_envs/TenThousand-v0"

# Table 5 of the paper: rolls of n = 1..5 dice (out of 6**n) giving each configuration
# [f, o, t]. Its converted text dropped the blank cells; the columns are re-aligned here.
TABLE_5 = {
    (0, 0, 0): (4, 16, 60, 204, 600),
    (1, 0, 0): (1, 8, 48, 240, 1020), (0, 1, 0): (1, 8, 48, 240, 1020),
    (2, 0, 0): (0, 1, 12, 96, 600), (1, 1, 0): (0, 2, 24, 192, 1200),
    (0, 2, 0): (0, 1, 12, 96, 600), (3, 0, 0): (0, 0, 1, 16, 160),
    (2, 1, 0): (0, 0, 3, 48, 480), (1, 2, 0): (0, 0, 3, 48, 480),
    (0, 3, 0): (0, 0, 1, 16, 160), (4, 0, 0): (0, 0, 0, 1, 20),
    (3, 1, 0): (0, 0, 0, 4, 80), (2, 2, 0): (0, 0, 0, 6, 120),
    (1, 3, 0): (0, 0, 0, 4, 80), (0, 4, 0): (0, 0, 0, 1, 20),
    (5, 0, 0): (0, 0, 0, 0, 1), (4, 1, 0): (0, 0, 0, 0, 5), (3, 2, 0): (0, 0, 0, 0, 10),
    (2, 3, 0): (0, 0, 0, 0, 10), (1, 4, 0): (0, 0, 0, 0, 5), (0, 5, 0): (0, 0, 0, 0, 1),
}  # fmt: skip
for _t in (2, 3, 4, 6):
    TABLE_5[(0, 0, _t)] = (0, 0, 1, 13, 106)
    TABLE_5[(1, 0, _t)] = TABLE_5[(0, 1, _t)] = (0, 0, 0, 4, 65)
    TABLE_5[(2, 0, _t)] = TABLE_5[(0, 2, _t)] = (0, 0, 0, 0, 10)
    TABLE_5[(1, 1, _t)] = (0, 0, 0, 0, 20)

# Table 6, n = 5 column: the value of rolling five dice at turn score tau = 1..55 (3 decimals).
TABLE_6_FIVE_DICE = [
    6.607, 7.355, 8.107, 8.883, 9.713, 10.553, 11.394, 12.235, 13.077, 13.918, 14.779, 15.655,
    16.534, 17.413, 18.291, 19.170, 20.060, 20.972, 21.893, 22.814, 23.734, 24.655, 25.576,
    26.497, 27.418, 28.339, 29.260, 30.181, 31.102, 32.022, 32.943, 33.864, 34.785, 35.706,
    36.627, 37.548, 38.469, 39.390, 40.312, 41.233, 42.154, 43.075, 43.997, 44.919, 45.840,
    46.762, 47.684, 48.607, 49.529, 50.452, 51.375, 52.298, 53.221, 54.144, 55.066,
]  # fmt: skip
# Table 6, n = 4 column (tau = 1..18; stop from 19 on).
TABLE_6_FOUR_DICE = [
    4.338, 5.021, 5.743, 6.476, 7.212, 8.001, 8.840, 9.679, 10.517, 11.357, 12.196, 13.035,
    13.875, 14.715, 15.554, 16.394, 17.234, 18.073,
]  # fmt: skip


def test_table_1_scores_and_classification():
    assert score((1, 0, 0)) == 1 and score((0, 1, 0)) == 2
    assert [score((0, 0, t)) for t in (2, 3, 4, 6)] == [4, 6, 8, 12]
    assert score((3, 0, 0)) == 10 and score((0, 3, 0)) == 20
    assert score((4, 0, 0)) == 11 and score((0, 5, 0)) == 24  # triple plus singles
    assert classify([2, 2, 2, 2, 3]) == (0, 0, 2) and scoring_dice((0, 0, 2)) == 3
    assert classify([1, 2, 3, 4, 5]) == (1, 1, 0)  # no straights in this model
    assert len(CONFIGS) == 45


def test_table_5_frequencies_come_out_of_the_model():
    for n in range(1, 6):
        counts = roll_frequencies(n)
        assert sum(counts.values()) == 6**n
        for config, column in TABLE_5.items():
            assert counts.get(config, 0) == column[n - 1], (n, config)
    assert set(TABLE_5) == set(CONFIGS)


def test_theorem_4_1_value_and_stop_or_roll():
    # Theorem 4.1: V*(start) = 5.872019 chips; section 5.1: stop-or-roll is worth 5.576326.
    assert round(baselines.solve(ID).value, 6) == 5.872019
    assert round(baselines.solve(ID, allowed_moves=[]).value, 6) == 5.576326


@pytest.mark.parametrize(
    "allowed, printed",
    [
        ([], 5.5763262782),
        (["5"], 5.8012180037),
        (["5", "1"], 5.8153340639),
        (["5", "1", "55"], 5.8707484326),
        (["5", "1", "55", "51"], 5.8720189185),
        (None, 5.8720189185),
    ],
)
def test_table_4_restricted_games(allowed, printed):
    # Table 4: the value of the game with only stop, roll and the listed moves. A move gives
    # back dice and rolls them (Table 2), so moves do not chain. Every row agrees to 10 digits
    # except {s, r, m5}: the paper prints 5.8012180037, we get 5.8011800370 (the same digits
    # "180037" shifted by one place, a slip in the printed table; no reading of the rules we
    # tried gives the printed digits).
    value = baselines.solve(ID, allowed_moves=allowed).value
    if allowed == ["5"]:
        assert round(value, 10) == 5.8011800370
        assert abs(value - printed) == pytest.approx(3.8e-5, abs=1e-6)
    else:
        assert round(value, 10) == printed


def test_table_6_values():
    solution = baselines.solve(ID)
    for tau, value in enumerate(TABLE_6_FIVE_DICE, start=1):
        assert round(solution.q_values((tau, 0, 5))[ROLL], 3) == value, tau
    for tau, value in enumerate(TABLE_6_FOUR_DICE, start=1):
        assert round(solution.state_value((tau, CONFIG_INDEX[(1, 0, 0)], 4)), 3) == value, tau
    assert solution.action((18, CONFIG_INDEX[(1, 0, 0)], 4)) == ROLL
    assert solution.action((19, CONFIG_INDEX[(1, 0, 0)], 4)) == STOP
    # n = 3 after [2, 0, 0]: give back a 5 and roll four dice (Table 6, column m5).
    two_fives = CONFIG_INDEX[(2, 0, 0)]
    assert solution.action((5, two_fives, 3)) == MOVE_ACTION["5"]
    assert round(solution.state_value((5, two_fives, 3)), 3) == 6.476


def test_critical_threshold_and_lemma_4_3():
    assert critical_threshold() == 56  # 33516 / 600 = 55.86 for five dice
    solution = baselines.solve(ID, method="generic")
    tables = solution.tables
    high = np.array([obs[0] >= 56 for obs in tables.observations])
    assert high.any()
    assert (solution.policy[high] == STOP).all()
    low = np.array([obs[0] == 55 and obs[2] == 5 for obs in tables.observations])
    assert (solution.policy[low] == ROLL).all()  # R(55, 5) = 55.066 > 55


def test_never_optimal_moves():
    # After Theorem 4.1: m11, m551, m511 and m_t1..m_t6 are never optimal; the optimal moves
    # that do occur are m5, m1, m55 and m51.
    solution = baselines.solve(ID, method="generic")
    optimal = optimal_action_mask(solution.q, solution.tables.legal)
    used = {a for a in range(2, 15) if (optimal[:, a] & ~optimal[:, ROLL]).any()}
    names = {solution.tables.model.action_names[a].split()[-1] for a in used}
    assert names <= {"5", "1", "55", "51"}
    never = [
        MOVE_ACTION[label] for label in ("11", "551", "511", "t1", "t2", "t3", "t4", "t5", "t6")
    ]
    strictly_better = optimal & ~optimal[:, [ROLL]]
    assert not strictly_better[:, never].any()
    best = solution.policy
    assert {solution.tables.model.action_names[a] for a in np.unique(best)} >= {
        "give back 5",
        "give back 1",
    }


# ["5"] is Table 4's {s, r, m5}, the row whose printed value the paper mistypes.
@pytest.mark.parametrize("allowed", [None, [], ["5"], ["5", "1", "t2", "t5"]])
@pytest.mark.parametrize("cap", [100, 40])
def test_paper_algorithm_agrees_with_the_generic_solver(allowed, cap):
    fast = baselines.solve(ID, allowed_moves=allowed, max_turn_score=cap)
    generic = baselines.solve(ID, allowed_moves=allowed, max_turn_score=cap, method="generic")
    assert generic.bellman_residual <= 1e-9
    assert fast.value == pytest.approx(generic.value, abs=1e-9)
    for i, obs in enumerate(generic.tables.observations):
        legal = generic.tables.legal[i]
        np.testing.assert_allclose(fast.q_values(obs)[legal], generic.q[i][legal], atol=1e-9)
    assert baselines.on_states(fast, generic.tables).bellman_residual <= 1e-9


def test_cap_of_55_or_more_keeps_the_value():
    reference = baselines.solve(ID, max_turn_score=400).value
    assert baselines.solve(ID, max_turn_score=55).value == pytest.approx(reference, abs=1e-12)
    assert baselines.solve(ID, max_turn_score=20).value < reference - 1e-3


def test_illegal_actions_play_as_a_roll():
    model = make_model(ID)
    start = (0, 0, 5)
    assert model.legal_actions(start) == (ROLL,)
    assert model.transitions(start, STOP) == model.transitions(start, ROLL)
    single = (1, CONFIG_INDEX[(1, 0, 0)], 4)  # one combination: no give-back
    assert model.legal_actions(single) == (STOP, ROLL)
    for action in range(2, 15):
        assert model.transitions(single, action) == model.transitions(single, ROLL)
    pair = (3, CONFIG_INDEX[(1, 1, 0)], 3)
    assert set(model.legal_actions(pair)) == {STOP, ROLL, MOVE_ACTION["5"], MOVE_ACTION["1"]}
    gave_five = model.transitions(pair, MOVE_ACTION["5"])
    assert sum(t.prob for t in gave_five if not t.terminal) == pytest.approx(1 - 204 / 1296)


def test_restricted_moves_are_masked():
    env = gym.make(ID, allowed_moves=["1"])
    model = env.unwrapped.model
    pair = (3, CONFIG_INDEX[(1, 1, 0)], 3)
    assert model.legal_actions(pair) == (STOP, ROLL, MOVE_ACTION["1"])
    env.reset(seed=0, options={"state": pair})
    assert env.unwrapped.action_masks().tolist() == [
        a in (STOP, ROLL, MOVE_ACTION["1"]) for a in range(15)
    ]


def test_env_shows_the_dice():
    env = gym.make(ID, render_mode="ansi")
    env.reset(seed=2)
    obs, reward, terminated, _, info = env.step(ROLL)
    assert len(info["dice"]) == 5
    assert "dice " + " ".join(map(str, info["dice"])) in env.render()
    if not terminated:
        assert obs[2] == 5 - scoring_dice(CONFIGS[obs[1]]) or obs[2] == 5

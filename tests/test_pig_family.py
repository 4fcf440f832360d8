"""Two-dice Pig and Hog, alone and raced: the published numbers, hand-solved cases, and the
layered two-player solvers against generic minimax value iteration.

Published numbers: H. Tijms, "Stochastic games and dynamic programming", Asia Pacific
Mathematics Newsletter (2012).
"""

import numpy as np
import pytest

import baselines
from baselines.two_player import minimax_value_iteration, two_player_optimum
from dice_envs import make_model
from dice_envs.games.hog import Hog, five_dice_rule, turn_scores
from dice_envs.games.pig import HOLD, ROLL, Pig
from dice_envs.games.two_dice_pig import TwoDicePig

TWO_DICE_SOLO = "dice_envs/TwoDicePigSolitaire-v0"
HOG_SOLO = "dice_envs/HogSolitaire-v0"


def test_two_dice_pig_alone_as_published():
    # Tijms (2012) reports 16.923 turns to 100 at best, 17.164 under his rule
    # 10/36 k + 1/36 (i + k) >= 25/36 x 8 (hold when it holds, as the text says).
    assert round(-baselines.solve(TWO_DICE_SOLO).value, 3) == 16.923
    assert round(-baselines.evaluate("tijms", TWO_DICE_SOLO).value, 3) == 17.164


def test_hog_alone_as_published_and_as_the_text_reads():
    # Tijms (2012) reports 13.039 turns to 100 at best and 13.623 for "the five-dice rule". The
    # 13.623 is five dice on every turn; the rule with the text's stipulation (trunc(l / 2)
    # dice when l <= 9 points are still needed, one die at l = 1) takes 13.221 turns.
    assert round(-baselines.solve(HOG_SOLO).value, 3) == 13.039
    assert round(-baselines.evaluate("dice-5", HOG_SOLO).value, 3) == 13.623
    assert round(-baselines.evaluate("five-dice", HOG_SOLO).value, 3) == 13.221
    assert five_dice_rule(100, 10)[90:].tolist() == [5, 4, 4, 3, 3, 2, 2, 1, 1, 1]


def test_small_solitaires_by_hand():
    # Goal 4 with two dice: every roll without a 1 (25/36) reaches it, so 36/25 turns.
    assert baselines.solve(TWO_DICE_SOLO, goal=4).value == pytest.approx(-36 / 25, abs=1e-12)
    # Goal 1 in Hog: one die scores with 5/6 (more dice only add risk): 6/5 turns.
    solution = baselines.solve(HOG_SOLO, goal=1)
    assert solution.value == pytest.approx(-6 / 5, abs=1e-12)
    assert solution.action(0) == 0
    # Goal 5 in two-dice Pig: from score 0, a first roll of 4 (prob 1/36) must go on.
    assert baselines.solve(TWO_DICE_SOLO, goal=5).action((0, 4)) == ROLL


def test_two_dice_roll_law():
    model = TwoDicePig(goal=100)
    assert model.bust_prob == pytest.approx(10 / 36) and model.wipe_prob == pytest.approx(1 / 36)
    gains = dict(model.gains)
    assert sorted(gains) == list(range(4, 13))
    assert gains[8] == pytest.approx(5 / 36) and sum(gains.values()) == pytest.approx(25 / 36)
    outcomes = model.transitions((0, 30, 40, 8), ROLL)
    assert sum(o.prob for o in outcomes) == pytest.approx(1.0, abs=1e-15)
    wiped = [o for o in outcomes if o.next_state == (1, 0, 40, 0)]
    assert len(wiped) == 1 and wiped[0].prob == pytest.approx(1 / 36)
    assert model.transitions((0, 30, 40, 8), HOLD)[0].next_state == (1, 38, 40, 0)
    with pytest.raises(ValueError, match="turn total of 3 can not happen"):
        model.state_of((0, 0, 3), 0)


def test_hog_turn_scores():
    for dice in (1, 3, 5, 10):
        law = dict(turn_scores(dice, 6))
        assert sum(law.values()) == pytest.approx(1.0, abs=1e-14)
        assert law[0] == pytest.approx(1 - (5 / 6) ** dice)
        assert min(k for k in law if k) == 2 * dice and max(law) == 6 * dice
    # The expected score 4 d (5/6)^d is largest at five dice, and equally at six.
    means = [sum(k * p for k, p in turn_scores(d, 6)) for d in range(1, 11)]
    assert means[4] == pytest.approx(4 * 5 * (5 / 6) ** 5, abs=1e-12)
    assert max(means) == pytest.approx(means[4]) == pytest.approx(means[5])


@pytest.mark.parametrize(
    "model",
    [
        Pig(goal=15),
        TwoDicePig(goal=20),
        TwoDicePig(goal=14, sides=4),
        TwoDicePig(goal=12, die_probs=(0.3, 0.2, 0.2, 0.3)),
        Hog(goal=25),
        Hog(goal=14, max_dice=4, sides=4),
    ],
    ids=repr,
)
def test_layered_two_player_optimum_equals_value_iteration(model):
    layered = two_player_optimum(model, "layered")
    generic = minimax_value_iteration(model)
    assert layered.value == pytest.approx(generic.value, abs=1e-9)
    seen = ~np.isnan(generic.mover_values)
    assert not np.isnan(layered.mover_values[seen]).any()
    np.testing.assert_allclose(layered.mover_values[seen], generic.mover_values[seen], atol=1e-9)
    # Where the greedy actions differ, they tie (both are optimal).
    differ = seen & (layered.policy != generic.policy)
    assert differ.sum() <= 0.01 * seen.sum()


def test_first_player_edge_and_monotone_values_at_goal_100():
    # The first player's edge under optimal play: Neller and Presser's 0.5306 for Pig.
    assert round(two_player_optimum(Pig(goal=100)).value, 4) == 0.5306
    hog = two_player_optimum(Hog(goal=100))
    two = two_player_optimum(TwoDicePig(goal=100))
    assert 0.5 < hog.value < 0.55 and 0.5 < two.value < 0.55 and two.residual <= 1e-13
    # Win probabilities at turn starts, and more points never hurt the mover.
    for starts in (hog.mover_values[:100, :100], two.mover_values[:100, :100, 0]):
        assert np.all((starts >= 0) & (starts <= 1))
        assert np.all(np.diff(starts, axis=0) >= -1e-12)


def test_two_dice_optimum_is_a_fixed_point_of_the_full_equations():
    """The layered solve with the outer iteration on the wipe values, checked on Tijms's
    optimality equations of the whole game at goal 100 (not only at the layers)."""
    model = TwoDicePig(goal=100)
    solution = two_player_optimum(model)
    x = solution.mover_values[:100, :100, :]
    goal = 100
    worst = 0.0
    for i in range(0, goal, 7):
        for j in range(0, goal, 5):
            for k in [0] + list(range(4, goal - i)):
                roll = model.bust_prob * (1 - x[j, i, 0]) + model.wipe_prob * (1 - x[j, 0, 0])
                for gain, prob in model.gains:
                    roll += prob * (1.0 if i + k + gain >= goal else x[i, j, k + gain])
                best = roll if k == 0 else max(roll, 1 - x[j, i + k, 0])
                worst = max(worst, abs(best - x[i, j, k]))
    assert worst <= 1e-12


def test_optimal_opponent_in_every_race():
    for env_id, kwargs in [
        ("dice_envs/TwoDicePig-v0", {"goal": 15}),
        ("dice_envs/Hog-v0", {"goal": 15}),
    ]:
        # Against the optimum, the best response wins exactly the optimum's share: the
        # second player's 1 - X(0, 0) and the first player's X(0, 0).
        rules = make_model(env_id, **kwargs).model
        first = two_player_optimum(rules).value
        for starts, expected in [(True, first), (False, 1 - first)]:
            value = baselines.solve(
                env_id, opponent="two-player-optimal", agent_starts=starts, **kwargs
            )
            assert value.value == pytest.approx(expected, abs=1e-9)


def test_named_policies_and_bad_names():
    hog = Hog(goal=100)
    table = hog.named_policy("five-dice")
    assert table[0, 0].argmax() == 4 and table[95, 3].argmax() == 1 and table[99, 0].argmax() == 0
    with pytest.raises(ValueError, match="dice-K needs 1 <= K <= 10"):
        hog.named_policy("dice-11")
    two = TwoDicePig(goal=100)
    holds = two.named_policy("tijms")[..., HOLD] == 1
    # 10 k + (i + k) >= 200: at i = 0 hold from k = 19 (209 >= 200), at i = 90 from k = 10.
    assert holds[0, 0, 18:20].tolist() == [False, True]
    assert holds[90, 0, 9:11].tolist() == [False, True]
    with pytest.raises(
        ValueError, match="opponent: a policy of this game must be one of .*two-player-optimal"
    ):
        make_model("dice_envs/TwoDicePig-v0", opponent="keep-pace")
    # A named policy that mixes is scored as the probabilities it plays.
    uniform = np.full((11, 11, 10), 0.1)
    by_name = baselines.evaluate("random", "dice_envs/Hog-v0", goal=10)
    by_table = baselines.evaluate(uniform, "dice_envs/Hog-v0", goal=10)
    assert by_name.value == pytest.approx(by_table.value, abs=1e-12)
    assert 0.0 < by_name.value < by_name.optimal_value
    with pytest.raises(
        ValueError, match="must be one of five-dice, dice-K, random, two-player-optimal, optimal"
    ):
        baselines.evaluate("hold-at-20", "dice_envs/Hog-v0", goal=10)

"""The structure-aware Yahtzee solver: the published optimum, and agreement with a plain
recursion (written here, independently) on reduced games, to 1e-9."""

from collections import Counter
from itertools import product

import numpy as np
import pytest

from baselines.yahtzee import solve_model, solve_yahtzee
from dice_envs.games import yahtzee as yz
from dice_envs.games.yahtzee import BOX_NAMES, TurnState, Yahtzee, dice_index

# Verhoeff, "Optimal Solitaire Yahtzee Player" (1999) and Glenn, "An Optimal Strategy for
# Yahtzee" (2006): the optimal expected final score of solitaire Yahtzee is 254.5896 (to 4 dp).
PUBLISHED_OPTIMUM = 254.5896
JOKERS = ("forced", "verhoeff", "free")


def rolls(n: int) -> list[tuple[tuple[int, ...], float]]:
    """Every sorted outcome of rolling n dice, with its probability, by counting sequences."""
    counts = Counter(tuple(sorted(seq)) for seq in product(range(1, 7), repeat=n))
    return [(faces, count / 6**n) for faces, count in counts.items()]


ROLLS = {n: rolls(n) for n in range(6)}


class PlainSolver:
    """Straightforward recursion with memoisation over (state, dice, rolls left): every reroll
    of every subset of the dice, every legal box, through the model's one-state rules."""

    def __init__(self, model: Yahtzee) -> None:
        self.model = model
        self.values: dict = {}
        self.dice_values: dict = {}
        self.keep_values: dict = {}

    def value(self, state: TurnState) -> float:
        if self.model.is_over(state):
            return 0.0
        if state not in self.values:
            self.values[state] = sum(p * self.dice_value(state, d, 2) for d, p in ROLLS[5])
        return self.values[state]

    def box_value(self, state, faces, box) -> float:
        reward, after = self.model.score(state, dice_index(faces), box)
        return reward + self.value(after)

    def keep_value(self, state, kept: tuple, rolls_left: int) -> float:
        key = (state, kept, rolls_left)
        if key not in self.keep_values:
            self.keep_values[key] = sum(
                p * self.dice_value(state, tuple(sorted(kept + new)), rolls_left)
                for new, p in ROLLS[5 - len(kept)]
            )
        return self.keep_values[key]

    def action_values(self, state, faces, rolls_left) -> np.ndarray:
        values = np.full(45, np.nan)
        for box in self.model.legal_boxes(state, dice_index(faces)):
            values[32 + box] = self.box_value(state, faces, box)
        if rolls_left:
            for bits in range(1, 32):
                kept = tuple(f for i, f in enumerate(faces) if not bits >> i & 1)
                values[bits] = self.keep_value(state, kept, rolls_left - 1)
        return values

    def dice_value(self, state, faces, rolls_left) -> float:
        key = (state, faces, rolls_left)
        if key not in self.dice_values:
            self.dice_values[key] = float(np.nanmax(self.action_values(state, faces, rolls_left)))
        return self.dice_values[key]


REDUCED_GAMES = [
    (["chance"], "forced"),
    (["yahtzee"], "forced"),
    (["sixes"], "forced"),
    (["ones", "full_house"], "forced"),
    (["fours", "yahtzee"], "forced"),  # a joker into its upper box, the Yahtzee bonus
    (["fours", "yahtzee"], "free"),
    (["full_house", "large_straight", "yahtzee"], "forced"),  # jokers in full
    (["twos", "small_straight", "yahtzee"], "verhoeff"),  # in full only with Twos filled
    pytest.param(["twos", "small_straight", "yahtzee"], "free", marks=pytest.mark.slow),
    pytest.param(["threes", "small_straight", "yahtzee"], "forced", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("boxes, joker", REDUCED_GAMES, ids=lambda x: str(x))
def test_structure_aware_equals_plain_recursion_on_reduced_games(boxes, joker):
    model = Yahtzee(joker=joker, boxes=boxes)
    solution = solve_model(model)
    plain = PlainSolver(model)
    assert solution.value == pytest.approx(plain.value(model.start), abs=1e-9)
    for state in zip(*model.turn_start_states(), strict=True):
        state = TurnState(int(state[0]), int(state[1]), bool(state[2]))
        expected = plain.value(state)
        assert solution.state_values[yz.state_index(*state)] == pytest.approx(expected, abs=1e-9)


def test_action_values_equal_plain_recursion_in_every_situation_of_a_turn():
    model = Yahtzee(joker="forced", boxes=["fours", "yahtzee"])
    solution = solve_model(model)
    plain = PlainSolver(model)
    states = [model.start, TurnState(model.absent | 1 << yz.YAHTZEE, 0, True)]
    for state in states:
        for faces in [(4, 4, 4, 4, 4), (1, 2, 2, 4, 4), (3, 3, 3, 5, 5), (1, 2, 3, 4, 6)]:
            for rolls_left in (0, 1, 2):
                got = solution.turn_action_values(state, dice_index(faces), rolls_left)
                want = plain.action_values(state, faces, rolls_left)
                for bits in range(32):  # a duplicate reroll is NaN in the solution
                    if not yz.REROLL_LEGAL[dice_index(faces), bits]:
                        want[bits] = np.nan
                np.testing.assert_allclose(got, want, atol=1e-9, equal_nan=True)
                value = solution.turn_value(state, dice_index(faces), rolls_left)
                assert value == pytest.approx(np.nanmax(want), abs=1e-9)


def test_known_single_box_values():
    # Chance alone: E[best of three rolls of a die, per die] * 5 = 14/3 * 5.
    assert solve_yahtzee(boxes=["chance"]).value == pytest.approx(70 / 3, abs=1e-12)
    # Yahtzee alone: 50 times the chance of five of a kind within three rolls (0.04603).
    assert solve_yahtzee(boxes=["yahtzee"]).value == pytest.approx(50 * 0.0460286, abs=1e-5)


def test_published_optimum_under_the_verhoeff_reading(verhoeff_solution):
    assert verhoeff_solution.value == pytest.approx(PUBLISHED_OPTIMUM, abs=1e-4)
    assert verhoeff_solution.num_states == len(Yahtzee().turn_start_states()[0])


def test_full_game_late_states_equal_plain_recursion(verhoeff_solution):
    """Near the end of the full game, where both bonuses and the joker are at stake."""
    plain = PlainSolver(verhoeff_solution.model)
    names = {name: 1 << i for i, name in enumerate(BOX_NAMES)}
    for open_boxes, upper, flag in [
        (("threes", "chance"), 60, True),
        (("sixes", "full_house"), 45, True),
        (("fives", "large_straight"), 58, False),
    ]:
        state = TurnState(yz.FULL_CARD & ~sum(names[b] for b in open_boxes), upper, flag)
        got = verhoeff_solution.state_values[yz.state_index(*state)]
        assert got == pytest.approx(plain.value(state), abs=1e-9)
        faces = (5, 5, 5, 5, 5)
        np.testing.assert_allclose(
            verhoeff_solution.turn_action_values(state, dice_index(faces), 0)[32:],
            plain.action_values(state, faces, 0)[32:],
            atol=1e-9,
        )


# Two more full-game solves (about 9 s each): `make verify`. The default run keeps the same
# behaviour on a four-box game, below: each reading solved and ordered as its rules allow; each
# reading's optimum also equals the plain recursion on the reduced games above.
@pytest.mark.verify
@pytest.mark.parametrize("joker", ["forced", "free"])
def test_forced_and_free_optima(joker, verhoeff_solution):
    value = solve_yahtzee(joker=joker).value
    assert 254 < value < 256
    assert value != pytest.approx(verhoeff_solution.value, abs=1e-4)  # not the published one
    if joker == "free":  # any open box, always in full: at least as good as either reading
        assert value > verhoeff_solution.value


def test_the_joker_readings_give_ordered_optima_where_they_differ():
    """Ones, Full house, Chance and Yahtzee: a joker of ones may leave Ones open under Verhoeff's
    reading (not in full then) and score a lower box in full under the free one. Each reading
    allows every choice of the one before it, so forced < verhoeff < free, each strictly here."""
    boxes = ["ones", "full_house", "chance", "yahtzee"]
    forced, verhoeff, free = (solve_yahtzee(joker, boxes).value for joker in JOKERS)
    assert forced + 1e-4 < verhoeff and verhoeff + 1e-4 < free


def test_bad_queries_raise():
    solution = solve_yahtzee(boxes=["chance"])
    with pytest.raises(ValueError, match="rolls_left"):
        solution.turn_value(solution.model.start, 0, 3)
    with pytest.raises(ValueError, match="dice"):
        solution.turn_action_values(solution.model.start, 252, 0)
    with pytest.raises(ValueError, match="game is over"):
        solution.turn((yz.FULL_CARD, 0, False))

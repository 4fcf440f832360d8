"""The Yahtzee model: scoring checked by hand in every box, the joker rules, the bonuses, the
inside-turn tables against brute force, and the turn-start state order."""

from collections import Counter
from itertools import product

import numpy as np
import pytest

from dice_envs.games import yahtzee as yz
from dice_envs.games.yahtzee import BOX_NAMES, TurnState, Yahtzee, dice_index

B = {name: i for i, name in enumerate(BOX_NAMES)}
ALL = yz.FULL_CARD


def card(*open_boxes: str) -> int:
    """A filled mask with only the named boxes open."""
    return ALL & ~sum(1 << B[name] for name in open_boxes)


def points_of(model, filled, faces):
    legal, points = model.scoring(filled, dice_index(faces))
    return {BOX_NAMES[b]: int(points[b]) for b in np.flatnonzero(legal)}


# Each box by hand, on an empty card: (dice, {box: points}) for every box.
HAND_SCORES = [
    (
        (1, 1, 1, 2, 2),
        dict(ones=3, twos=4, threes=0, fours=0, fives=0, sixes=0, three_of_a_kind=7,
             four_of_a_kind=0, full_house=25, small_straight=0, large_straight=0, yahtzee=0,
             chance=7),
    ),
    (
        (6, 6, 6, 6, 2),
        dict(ones=0, twos=2, threes=0, fours=0, fives=0, sixes=24, three_of_a_kind=26,
             four_of_a_kind=26, full_house=0, small_straight=0, large_straight=0, yahtzee=0,
             chance=26),
    ),
    (
        (2, 3, 4, 5, 5),
        dict(ones=0, twos=2, threes=3, fours=4, fives=10, sixes=0, three_of_a_kind=0,
             four_of_a_kind=0, full_house=0, small_straight=30, large_straight=0, yahtzee=0,
             chance=19),
    ),
    (
        (1, 3, 4, 5, 6),
        dict(ones=1, twos=0, threes=3, fours=4, fives=5, sixes=6, three_of_a_kind=0,
             four_of_a_kind=0, full_house=0, small_straight=30, large_straight=0, yahtzee=0,
             chance=19),
    ),
    (
        (2, 3, 4, 5, 6),
        dict(ones=0, twos=2, threes=3, fours=4, fives=5, sixes=6, three_of_a_kind=0,
             four_of_a_kind=0, full_house=0, small_straight=30, large_straight=40, yahtzee=0,
             chance=20),
    ),
    (  # five of a kind is not a full house (nor a straight) unless played as a joker
        (3, 3, 3, 3, 3),
        dict(ones=0, twos=0, threes=15, fours=0, fives=0, sixes=0, three_of_a_kind=15,
             four_of_a_kind=15, full_house=0, small_straight=0, large_straight=0, yahtzee=50,
             chance=15),
    ),
]  # fmt: skip


@pytest.mark.parametrize("joker", yz.JOKER_RULES)
@pytest.mark.parametrize("faces, expected", HAND_SCORES)
def test_every_box_scores_as_counted_by_hand(joker, faces, expected):
    assert points_of(Yahtzee(joker=joker), 0, faces) == expected


FOURS = (4, 4, 4, 4, 4)


def legal_points(joker, filled, flag=True, upper=0):
    model = Yahtzee(joker=joker)
    state = TurnState(filled, upper, flag)
    dice = dice_index(FOURS)
    return {BOX_NAMES[b]: model.score(state, dice, b)[0] for b in model.legal_boxes(state, dice)}


def test_forced_joker_goes_to_its_upper_box_when_open():
    filled = card("fours", "full_house", "chance", "ones")
    assert legal_points("forced", filled) == {"fours": 20 + 100}
    assert legal_points("forced", filled, flag=False) == {"fours": 20}


def test_forced_joker_then_any_open_lower_box_in_full_then_zero_in_upper():
    filled = card("ones", "full_house", "small_straight", "large_straight", "chance")
    assert legal_points("forced", filled) == {
        "full_house": 125, "small_straight": 130, "large_straight": 140, "chance": 120
    }  # fmt: skip
    # the Yahtzee box filled with 0: still a joker, no bonus
    assert legal_points("forced", filled, flag=False)["large_straight"] == 40
    assert legal_points("forced", card("ones", "twos")) == {"ones": 100, "twos": 100}


def test_free_joker_any_open_box_lower_boxes_in_full():
    filled = card("fours", "ones", "full_house", "small_straight", "large_straight")
    assert legal_points("free", filled, flag=False) == {
        "ones": 0, "fours": 20, "full_house": 25, "small_straight": 30, "large_straight": 40
    }  # fmt: skip


def test_verhoeff_joker_any_open_box_in_full_only_when_its_upper_box_is_filled():
    lower = ("full_house", "small_straight", "large_straight")
    with_upper_open = legal_points("verhoeff", card("fours", "ones", *lower))
    assert with_upper_open == {
        "ones": 100, "fours": 120, "full_house": 100, "small_straight": 100, "large_straight": 100
    }  # fmt: skip
    assert legal_points("verhoeff", card("ones", *lower)) == {
        "ones": 100, "full_house": 125, "small_straight": 130, "large_straight": 140
    }  # fmt: skip


def test_no_joker_while_the_yahtzee_box_is_open():
    for joker in yz.JOKER_RULES:
        filled = card("fours", "yahtzee", "full_house", "large_straight")
        assert legal_points(joker, filled, flag=False) == {
            "fours": 20, "yahtzee": 50, "full_house": 0, "large_straight": 0
        }  # fmt: skip


def test_upper_bonus_paid_once_by_the_scoring_that_reaches_63():
    model = Yahtzee()
    dice = dice_index((3, 3, 1, 2, 4))
    assert model.score(TurnState(card("threes", "ones"), 60, False), dice, B["threes"]) == (
        6 + 35,
        TurnState(card("ones"), 63, False),
    )
    assert model.score(TurnState(card("threes", "ones"), 57, False), dice, B["threes"]) == (
        6 + 35,
        TurnState(card("ones"), 63, False),
    )  # exactly 63
    assert model.score(TurnState(card("threes", "ones"), 63, False), dice, B["threes"])[0] == 6
    assert model.score(TurnState(card("threes", "ones"), 50, False), dice, B["threes"]) == (
        6,
        TurnState(card("ones"), 56, False),
    )
    # lower boxes never move the upper total
    assert model.score(TurnState(card("chance"), 62, False), dice, B["chance"]) == (
        13,
        TurnState(ALL, 62, False),
    )


def test_yahtzee_box_sets_the_flag_only_with_50():
    model = Yahtzee()
    state = TurnState(card("yahtzee", "chance"), 0, False)
    assert model.score(state, dice_index((2, 2, 2, 2, 2)), B["yahtzee"]) == (
        50,
        TurnState(card("chance"), 0, True),
    )
    assert model.score(state, dice_index((2, 2, 2, 2, 3)), B["yahtzee"]) == (
        0,
        TurnState(card("chance"), 0, False),
    )


def test_scoring_depends_on_the_card_only_through_open_boxes_except_a_joker():
    """The contract the structure-aware solver relies on, over every card and every dice."""
    rng = np.random.default_rng(0)
    masks = np.concatenate([[0, ALL - 1, card("fours"), card("ones")], rng.integers(0, ALL, 600)])
    for joker in yz.JOKER_RULES:
        model = Yahtzee(joker=joker)
        legal, points = model.scoring(masks[:, None], np.arange(yz.NUM_DICE_SETS)[None, :])
        open_ = (masks[:, None, None] >> np.arange(13) & 1) == 0
        joker_case = yz.IS_YAHTZEE[None, :] & (masks[:, None] >> yz.YAHTZEE & 1 == 1)
        plain = ~joker_case
        assert (legal[plain] == np.broadcast_to(open_, legal.shape)[plain]).all()
        assert (points[plain] == np.broadcast_to(yz.BOX_POINTS, points.shape)[plain]).all()
        assert legal.any(axis=-1).all()  # some box is always legal


def test_keep_outcomes_equal_brute_force_rolls():
    for faces in [(), (6,), (1, 1), (2, 3, 5), (4, 4, 4, 1)]:
        rolled = 5 - len(faces)
        counts = Counter(tuple(sorted(faces + seq)) for seq in product(range(1, 7), repeat=rolled))
        expected = np.zeros(yz.NUM_DICE_SETS)
        for dice, n in counts.items():
            expected[dice_index(dice)] = n / 6**rolled
        np.testing.assert_allclose(yz.KEEP_OUTCOMES[yz.keep_index(faces)], expected, atol=1e-15)
    np.testing.assert_array_equal(yz.KEEP_OUTCOMES[yz.DICE_KEEP_OFFSET :], np.eye(252))


def test_keep_add_and_remove_tables():
    k = yz.keep_index((2, 5))
    assert yz.KEEP_ADD[k, 4] == yz.keep_index((2, 5, 5))
    assert yz.KEEP_REMOVE[k, 1] == yz.keep_index((5,))
    assert yz.KEEP_REMOVE[k, 0] == -1
    assert (yz.KEEP_ADD[yz.DICE_KEEP_OFFSET :] == -1).all()


def test_rerolls_one_legal_per_distinct_keep_lowest_numbered():
    straight = dice_index((1, 2, 3, 4, 5))
    assert yz.REROLL_LEGAL[straight].sum() == 31
    yahtzee = dice_index((6, 6, 6, 6, 6))
    assert np.flatnonzero(yz.REROLL_LEGAL[yahtzee]).tolist() == [1, 3, 7, 15, 31]
    pairs = dice_index((2, 2, 5, 5, 6))
    assert yz.REROLL_KEEP[pairs, 0b00001] == yz.keep_index((2, 5, 5, 6))
    assert yz.REROLL_LEGAL[pairs, 0b00001] and not yz.REROLL_LEGAL[pairs, 0b00010]
    assert not yz.REROLL_LEGAL[:, 0].any()
    distinct = [len(set(yz.REROLL_KEEP[d, 1:])) for d in range(yz.NUM_DICE_SETS)]
    assert yz.REROLL_LEGAL.sum(axis=1).tolist() == distinct


def test_turn_start_states_in_an_order_where_a_turn_leads_later():
    model = Yahtzee(boxes=["twos", "fives", "full_house", "yahtzee"])
    filled, upper, flag = model.turn_start_states()
    assert (filled[0], upper[0], flag[0]) == tuple(model.start)
    slots = yz.state_index(filled, upper, flag)
    position = np.full(yz.NUM_STATE_SLOTS, -1)
    position[slots] = np.arange(len(slots))
    position[yz.state_index(ALL, np.arange(64)[:, None], [0, 1])] = len(slots)  # the end
    assert len(set(slots.tolist())) == len(slots)
    dice = np.arange(yz.NUM_DICE_SETS)[None, :]
    legal, points = model.scoring(filled[:, None], dice)
    boxes = np.arange(13)
    _, next_upper, next_flag = model.score_result(
        upper[:, None, None], flag[:, None, None], boxes, points, yz.IS_YAHTZEE[dice][..., None]
    )
    after = position[yz.state_index(filled[:, None, None] | 1 << boxes, next_upper, next_flag)]
    here = np.arange(len(slots))[:, None, None]
    assert (after[legal] > np.broadcast_to(here, after.shape)[legal]).all()
    full = Yahtzee().turn_start_states()[0]
    popcount = sum(full >> b & 1 for b in range(13))
    assert (np.diff(popcount) >= 0).all()


def test_reduced_game_and_upper_bonus_of_the_boxes_in_play():
    model = Yahtzee(boxes=["sixes", "chance"])
    assert model.num_turns == 2 and model.start == TurnState(card("sixes", "chance"), 0, False)
    assert model.reachable_uppers(card("chance")).tolist() == [
        u % 6 == 0 and u <= 30 for u in range(64)
    ]
    legal, _ = model.scoring(model.start.filled, dice_index(FOURS))
    assert np.flatnonzero(legal).tolist() == [B["sixes"], B["chance"]]


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"joker": "official"}, "joker must be one of"),
        ({"joker": None}, "joker must be one of"),
        ({"boxes": "ones"}, "boxes must be a sequence"),
        ({"boxes": ["Ones"]}, "boxes must be distinct names"),
        ({"boxes": []}, "boxes must be distinct names"),
        ({"boxes": ["ones", "ones"]}, "boxes must be distinct names"),
    ],
)
def test_bad_arguments_raise_value_error_naming_them(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Yahtzee(**kwargs)


def test_bad_states_and_dice_raise():
    model = Yahtzee(boxes=["ones", "yahtzee"])
    with pytest.raises(ValueError, match="absent boxes"):
        model.check_state((0, 0, False))
    with pytest.raises(ValueError, match="yahtzee50 needs"):
        model.check_state((model.start.filled, 0, True))
    with pytest.raises(ValueError, match="not legal"):
        model.score(model.start, 0, B["chance"])
    with pytest.raises(ValueError, match="five faces"):
        dice_index((1, 2, 3))

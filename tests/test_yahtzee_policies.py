"""Yahtzee's named policies: their actions at hand-checked observations (the jokers and the
upper bonus included), always legal under the env's mask, the same whatever the batch, and the
greedy one far better than scoring at once."""

import gymnasium as gym
import numpy as np
import pytest

import dice_envs  # noqa: F401  (registers the ids)
from dice_envs.games import yahtzee as yahtzee_policies
from dice_envs.games.yahtzee import (
    BOX_NAMES,
    FULL_CARD,
    Yahtzee,
    dice_index,
    encode_observations,
)
from dice_envs.policies import named_policy, policy_names

ENV_ID = "dice_envs/Yahtzee-v0"
B = {name: i for i, name in enumerate(BOX_NAMES)}


def obs(faces, rolls_left, open_boxes, upper=0, yahtzee50=0):
    """The env's observation of dice `faces` with only `open_boxes` open."""
    filled = FULL_CARD & ~sum(1 << B[name] for name in open_boxes)
    return encode_observations(filled, upper, yahtzee50, dice_index(faces), rolls_left)[0]


def score(box: str) -> int:
    return 32 + B[box]


def act(policy_name: str, observation, joker: str = "forced") -> int:
    return int(Yahtzee(joker=joker).named_policy(policy_name)(observation))


EVERY_BOX = BOX_NAMES

# (joker, observation, the action score-at-once takes): each checked by hand.
SCORE_AT_ONCE_CASES = [
    # an empty card: Full house 25 beats Three of a kind and Chance (7 each); rolls left unused
    ("forced", obs((1, 1, 1, 2, 2), 2, EVERY_BOX), score("full_house")),
    # Sixes 18 reaches 63 from 45: 18 + 35 beats 20 in Three of a kind and Chance
    ("forced", obs((6, 6, 6, 1, 1), 1, ("sixes", "three_of_a_kind", "chance"), 45), score("sixes")),
    # from 44 it does not reach 63: 20 in Three of a kind ties Chance, the first box wins
    (
        "forced",
        obs((6, 6, 6, 1, 1), 0, ("sixes", "three_of_a_kind", "chance"), 44),
        score("three_of_a_kind"),
    ),
    # 15 in Threes, Three of a kind and Chance: the first in box order
    ("free", obs((3, 3, 3, 3, 3), 0, ("chance", "three_of_a_kind", "threes")), score("threes")),
    # a joker under the forced rule: Fours (20 + 100) though Full house would pay 25 + 100
    (
        "forced",
        obs((4, 4, 4, 4, 4), 2, ("fours", "full_house", "chance"), 0, 1),
        score("fours"),
    ),
    # Fours filled: forced into the lower boxes, Full house in full (125) beats Chance (120)
    (
        "forced",
        obs((4, 4, 4, 4, 4), 0, ("ones", "full_house", "chance"), 0, 1),
        score("full_house"),
    ),
    # the free rule lets Full house in full (125) beat Fours (120) while Fours is open
    ("free", obs((4, 4, 4, 4, 4), 0, ("fours", "full_house", "chance"), 0, 1), score("full_house")),
    # Verhoeff's rule: Full house only 0 + 100 while Fours is open, so Fours (120)
    ("verhoeff", obs((4, 4, 4, 4, 4), 0, ("fours", "full_house"), 0, 1), score("fours")),
    # the Yahtzee box holds 0: a joker without bonus, Large straight in full (40) under forced
    (
        "forced",
        obs((2, 2, 2, 2, 2), 1, ("ones", "large_straight", "chance")),
        score("large_straight"),
    ),
    # Fours 20 + 35 reaches the bonus from 50 and beats Yahtzee 50 (and Chance 20)
    ("forced", obs((4, 4, 4, 4, 4), 0, ("fours", "chance", "yahtzee"), 50), score("fours")),
    ("forced", obs((4, 4, 4, 4, 2), 0, ("fours", "chance"), 47), score("fours")),
]


@pytest.mark.parametrize("joker, observation, expected", SCORE_AT_ONCE_CASES)
def test_score_at_once_at_hand_checked_observations(joker, observation, expected):
    assert act("score-at-once", observation, joker) == expected


# (observation, the action greedy-turn takes), forced joker rule.
GREEDY_CASES = [
    # a Yahtzee with the Yahtzee box open: score it
    (obs((5, 5, 5, 5, 5), 2, EVERY_BOX), score("yahtzee")),
    # a large straight with its box open: score it, rolls left or not
    (obs((2, 3, 4, 5, 6), 2, EVERY_BOX), score("large_straight")),
    # four sixes and a one, two rolls left, an empty card: reroll the one (the lowest die)
    (obs((6, 6, 6, 6, 1), 2, EVERY_BOX), 0b00001),
    # four ones: Ones (4, one above par) rather than 0 in Yahtzee or 6 in Chance
    (obs((1, 1, 1, 1, 2), 0, ("ones", "chance", "yahtzee")), score("ones")),
    # 60 in the upper boxes: Ones (4) reaches 63 and earns the bonus; Threes (3) does not
    (obs((1, 1, 1, 1, 3), 0, ("ones", "threes"), 60), score("ones")),
    # the last box open: nothing to save for, all but the sixes rerolled for Sixes
    (obs((1, 2, 3, 6, 6), 1, ("sixes",)), 0b00111),
]


@pytest.mark.parametrize("observation, expected", GREEDY_CASES)
def test_greedy_turn_at_hand_checked_observations(observation, expected):
    assert act("greedy-turn", observation) == expected


def test_the_names_are_the_models_and_others_are_refused():
    assert policy_names(ENV_ID) == (
        "score-at-once",
        "greedy-turn",
        "glenn-greedy",
        "glenn-heuristic",
        "glenn-better-heuristic",
        "optimal",
    )
    assert named_policy(ENV_ID, "glenn-heuristic", boxes=["chance"]).name == "glenn-heuristic"
    assert named_policy(ENV_ID, "greedy-turn", boxes=["chance"]).name == "greedy-turn"
    with pytest.raises(ValueError, match="score-at-once, greedy-turn"):
        named_policy(ENV_ID, "hold-at-20")


def play(policy, episodes: int, seed: int, **kwargs) -> np.ndarray:
    """Final scores of `episodes` games of the policy on the native vector env, checking that
    every action it takes is legal under the env's mask."""
    env = gym.make_vec(ENV_ID, num_envs=episodes, vectorization_mode="vector_entry_point", **kwargs)
    observations, info = env.reset(seed=seed)
    total, done = np.zeros(episodes), np.zeros(episodes, dtype=bool)
    while not done.all():
        actions = policy.batch(observations)
        legal = info["action_mask"][np.arange(episodes), actions] == 1
        assert legal[~done].all(), observations[~done & ~legal][:3]
        observations, rewards, terminated, _, info = env.step(actions)
        total += np.where(done, 0.0, rewards)
        done |= terminated
    return total


@pytest.mark.parametrize("name", ["score-at-once", "greedy-turn", "glenn-better-heuristic"])
@pytest.mark.parametrize(
    "kwargs",
    [
        {"joker": "forced"},
        {"joker": "free"},
        {"joker": "verhoeff"},
        {"joker": "forced", "boxes": ["fours", "full_house", "yahtzee"]},
    ],
)
def test_the_policies_take_legal_actions_only(name, kwargs):
    play(Yahtzee(**kwargs).named_policy(name), 64, seed=7, **kwargs)


def test_greedy_turn_scores_far_above_score_at_once():
    model = Yahtzee()
    at_once = play(model.named_policy("score-at-once"), 256, seed=3)
    greedy = play(model.named_policy("greedy-turn"), 256, seed=3)
    # about 111 and 238 over many games (the report's simulation)
    assert at_once.mean() < 130 < 200 < greedy.mean()


@pytest.mark.parametrize("name", ["greedy-turn", "glenn-greedy"])
def test_turn_plans_answer_the_same_in_any_batch(monkeypatch, name):
    """Observations of many cards, asked at once, in small groups of cards, or one by one."""
    rng = np.random.default_rng(5)
    model = Yahtzee(joker="free")
    filled, upper, flag = model.turn_start_states()
    rows = rng.integers(0, len(filled), 300)
    rows = np.concatenate([rows, rows[:50]])  # repeated cards, with other dice
    observations = encode_observations(
        filled[rows],
        upper[rows],
        flag[rows],
        rng.integers(0, 252, len(rows)),
        rng.integers(0, 3, len(rows)),
    )
    policy = model.named_policy(name)
    together = policy.batch(observations)
    monkeypatch.setattr(yahtzee_policies, "CARDS_AT_ONCE", 7)
    np.testing.assert_array_equal(policy.batch(observations[::-1]), together[::-1])
    one_by_one = [policy(o) for o in observations[:40]]
    np.testing.assert_array_equal(one_by_one, together[:40])

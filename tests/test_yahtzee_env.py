"""Yahtzee-v0: the env and the native vector env against the model (chi-square of rolls and
rerolls, every transition checked by the model's own scoring), masks, the forbidden-action
fallback, rewards summing to the final score, episode lengths, reduced games, the SB3 adapter."""

from collections import Counter

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from scipy.stats import chisquare

import baselines
from baselines.yahtzee import solve_yahtzee
from dice_envs.envs.sb3 import DiceSB3VecEnv
from dice_envs.envs.yahtzee import observation_of
from dice_envs.envs.yahtzee_vector import YahtzeeVectorEnv
from dice_envs.games.yahtzee import (
    BOX_NAMES,
    CHANCE,
    DICE,
    DICE_FACES,
    FULL_CARD,
    IS_YAHTZEE,
    KEEP_OUTCOMES,
    NUM_DICE_SETS,
    REROLL_KEEP,
    ROLL_PROBABILITIES,
    YAHTZEE,
    PlayState,
    Yahtzee,
    dice_index,
    keep_index,
)

ENV_ID = "dice_envs/Yahtzee-v0"
THREES = BOX_NAMES.index("threes")
REDUCED = [
    {"joker": "verhoeff", "boxes": ["ones", "yahtzee", "chance"]},
    {"joker": "free", "boxes": ["small_straight", "yahtzee"]},
    {"boxes": ["sixes"]},
]


def chi_square_pvalue(observed: Counter, probabilities: np.ndarray) -> float:
    """Chi-square of counts of dice indices against their probabilities (only the outcomes
    with positive probability; any other outcome fails the test outright)."""
    support = np.flatnonzero(probabilities > 0)
    assert set(observed) <= set(support.tolist())
    total = sum(observed.values())
    counts = [observed[d] for d in support]
    return chisquare(counts, probabilities[support] * total).pvalue


def brute_force_mask(model: Yahtzee, state: PlayState) -> np.ndarray:
    """The mask as the issue states it, from the dice themselves: a reroll per distinct kept
    multiset (the lowest-numbered non-empty one) with rolls left, the boxes the rules allow."""
    mask = np.zeros(45, dtype=np.int8)
    faces = DICE_FACES[state.dice].tolist()
    if state.rolls_left:
        seen = set()
        for bits in range(1, 32):
            kept = tuple(f for i, f in enumerate(faces) if not bits >> i & 1)
            if kept not in seen:
                seen.add(kept)
                mask[bits] = 1
    card = (state.filled, state.upper, state.yahtzee50)
    mask[[32 + b for b in model.legal_boxes(card, state.dice)]] = 1
    return mask


def check_transition(model, before: PlayState, action: int, after: PlayState, reward: float):
    """One step as the model says: a reroll keeps the kept dice and uses a roll; a scoring
    step pays `Yahtzee.score` of the box `played_action` names and starts the next turn."""
    legal, _ = model.scoring_one(before.filled, before.dice)
    played = Yahtzee.played_action(before.dice, before.rolls_left, legal, action)
    if played < 32:
        kept = Counter(f for i, f in enumerate(DICE_FACES[before.dice]) if not played >> i & 1)
        assert not kept - Counter(DICE_FACES[after.dice].tolist())
        assert after[:3] == before[:3] and after.rolls_left == before.rolls_left - 1
        assert reward == 0
        return False
    points, card = model.score(before[:3], before.dice, played - 32)
    assert reward == points and tuple(after[:3]) == tuple(card)
    if card.filled == FULL_CARD:
        assert after.dice == before.dice and after.rolls_left == 0
        return True
    assert after.rolls_left == 2
    return False


# -- the interface ------------------------------------------------------------------------------


def test_spaces_and_the_first_observation():
    env = gym.make(ENV_ID)
    assert env.action_space == gym.spaces.Discrete(45)
    assert env.observation_space == gym.spaces.MultiDiscrete([6] * 6 + [3] + [2] * 13 + [64, 2])
    obs, info = env.reset(seed=0)
    assert obs.shape == (22,) and obs.dtype == np.int64
    assert obs[:6].sum() == 5 and obs[6] == 2 and not obs[7:].any()
    state = env.unwrapped.state
    np.testing.assert_array_equal(obs[:6], DICE[state.dice])
    np.testing.assert_array_equal(info["action_mask"], brute_force_mask(env.unwrapped.model, state))
    for section in ("Description", "Action Space", "Observation Space", "Rewards"):
        assert f"## {section}" in env.unwrapped.__doc__
    for section in ("Starting State", "Episode End", "Arguments", "Version History"):
        assert f"## {section}" in env.unwrapped.__doc__


def test_a_reduced_game_shows_the_boxes_out_of_play_as_filled():
    obs, _ = gym.make(ENV_ID, boxes=["chance", "ones"]).reset(seed=1)
    filled = obs[7:20]
    assert filled.tolist() == [0] + [1] * 11 + [0]


@pytest.mark.parametrize("kwargs", [{"joker": "loose"}, {"boxes": ["one"]}, {"boxes": "ones"}])
def test_bad_arguments_are_refused(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        gym.make(ENV_ID, **kwargs)


def test_bad_start_states_are_refused():
    env = gym.make(ENV_ID).unwrapped
    with pytest.raises(ValueError, match="rolls_left"):
        env.reset(options={"state": (0, 0, False, 3, 3)})
    with pytest.raises(ValueError, match="over"):
        env.reset(options={"state": (FULL_CARD, 0, False, 3, 0)})


# -- masks and the fallback ---------------------------------------------------------------------


def random_states(model: Yahtzee, count: int, seed: int) -> list[PlayState]:
    rng = np.random.default_rng(seed)
    present = [b for b in model.boxes]
    states = []
    for _ in range(count):
        filled = model.absent
        for b in present:
            if rng.random() < 0.5:
                filled |= 1 << b
        if filled == FULL_CARD:
            filled &= ~(1 << present[0])
        flag = bool(model.has_yahtzee_box and filled >> YAHTZEE & 1 and rng.random() < 0.5)
        # Yahtzees often, so that the joker rules are exercised.
        dice = int(rng.choice([0, 56, 126] if rng.random() < 0.3 else NUM_DICE_SETS))
        states.append(PlayState(filled, int(rng.integers(64)), flag, dice, int(rng.integers(3))))
    return states


@pytest.mark.parametrize("joker", ["forced", "free", "verhoeff"])
def test_masks_are_the_legal_actions_in_both_envs(joker):
    env = gym.make(ENV_ID, joker=joker).unwrapped
    vector = YahtzeeVectorEnv(num_envs=3, joker=joker)
    for state in random_states(env.model, 300, seed=len(joker)):
        expected = brute_force_mask(env.model, state)
        _, info = env.reset(options={"state": state})
        np.testing.assert_array_equal(info["action_mask"], expected, err_msg=str(state))
        np.testing.assert_array_equal(env.action_masks(), expected.astype(bool))
        _, info = vector.reset(options={"state": state})
        np.testing.assert_array_equal(info["action_mask"][0], expected, err_msg=str(state))
        np.testing.assert_array_equal(vector.action_masks()[1], expected.astype(bool))


def test_fast_scorings_equal_the_models_scoring():
    for joker in ("forced", "free", "verhoeff"):
        model = Yahtzee(joker=joker)
        rng = np.random.default_rng(0)
        filled = rng.integers(FULL_CARD + 1, size=20_000)
        dice = rng.integers(NUM_DICE_SETS, size=20_000)
        dice[::3] = rng.choice(np.flatnonzero(IS_YAHTZEE), size=len(dice[::3]))
        legal, points = model.scoring(filled, dice)
        many = model.scoring_many(filled, dice)
        np.testing.assert_array_equal(many.legal, legal)
        np.testing.assert_array_equal(many.legal_bits, (legal << np.arange(13)).sum(axis=1))
        assert len(many.jokers) > 1000
        np.testing.assert_array_equal(many.joker_points, points[many.jokers])
        for i in range(3000):
            bits, row = model.scoring_one(int(filled[i]), int(dice[i]))
            assert bits == many.legal_bits[i] and row == tuple(points[i])


def test_played_actions_for_arrays_equal_one_at_a_time():
    rng = np.random.default_rng(3)
    n = 20_000
    dice = rng.integers(NUM_DICE_SETS, size=n)
    rolls = rng.integers(3, size=n)
    legal = rng.integers(1, FULL_CARD + 1, size=n)
    actions = rng.integers(45, size=n)
    batch = Yahtzee.played_actions(dice, rolls, legal, actions)
    one = [
        Yahtzee.played_action(d, r, b, a)
        for d, r, b, a in zip(
            dice.tolist(), rolls.tolist(), legal.tolist(), actions.tolist(), strict=True
        )
    ]
    np.testing.assert_array_equal(batch, one)


def test_the_fallback():
    env = gym.make(ENV_ID).unwrapped
    dice = dice_index([1, 1, 3, 3, 5])
    start = PlayState(0, 0, False, dice, 2)
    # A duplicate reroll plays as its legal twin: rerolling the second 1 is rerolling the first.
    env.reset(seed=5, options={"state": start})
    twin_obs = env.step(0b00001)[0]
    env.reset(seed=5, options={"state": start})
    obs, reward, *_ = env.step(0b00010)
    assert env.played_action == 0b00001 and reward == 0
    np.testing.assert_array_equal(obs, twin_obs)
    # Rerolling nothing, or a reroll with no rolls left: the dice score in the first legal box.
    for state, action in ((start, 0), (start._replace(rolls_left=0), 0b00100)):
        env.reset(options={"state": state})
        obs, reward, *_ = env.step(action)
        assert env.played_action == 32 and reward == 2 and obs[7] == 1 and obs[6] == 2
    # A filled box: the first open one (Twos is filled too, so Threes).
    env.reset(options={"state": start._replace(filled=0b11)})
    _, reward, *_ = env.step(32 + 0)
    assert env.played_action == 32 + THREES and reward == 6
    # A box the forced joker rule forbids: a Yahtzee of 3s with Threes open goes to Threes.
    yahtzee = PlayState(1 << YAHTZEE, 0, True, dice_index([3] * 5), 1)
    env.reset(options={"state": yahtzee})
    _, reward, *_ = env.step(32 + CHANCE)
    assert env.played_action == 32 + THREES and reward == 15 + 100


# -- episodes -----------------------------------------------------------------------------------


def final_score(card: list, yahtzee_bonuses: int) -> int:
    """The score card's total, counted from the points written: boxes, the upper bonus, the
    Yahtzee bonuses."""
    upper = sum(card[:6])
    return sum(card) + (35 if upper >= 63 else 0) + 100 * yahtzee_bonuses


@pytest.mark.parametrize("masked", [True, False])
@pytest.mark.parametrize("kwargs", [{}, {"joker": "free"}, *REDUCED])
def test_episodes_follow_the_model_and_rewards_sum_to_the_final_score(kwargs, masked):
    env = gym.make(ENV_ID, **kwargs).unwrapped
    model = env.model
    rng = np.random.default_rng(7)
    for episode in range(30 if not kwargs else 10):
        obs, info = env.reset(seed=episode)
        card = [0] * 13
        bonuses = steps = 0
        total = 0.0
        done = False
        while not done:
            before = env.state
            if masked:
                action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            else:
                action = int(rng.integers(45))
            obs, reward, done, truncated, info = env.step(action)
            steps += 1
            total += reward
            assert not truncated
            check_transition(model, before, action, env.state, reward)
            np.testing.assert_array_equal(obs, observation_of(env.state))
            if env.played_action >= 32:
                card[env.played_action - 32] = env.card[env.played_action - 32]
                bonuses += bool(IS_YAHTZEE[before.dice] and before.yahtzee50)
        assert steps <= 3 * model.num_turns <= 39
        assert total == final_score(card, bonuses) == env.episode_return
        assert obs[6] == 0 and obs[7:20].all() and not info["action_mask"].any()
        np.testing.assert_array_equal(obs[:6], DICE[env.state.dice])


def test_an_action_after_the_end_is_refused_and_renders_say_so():
    env = gym.make(ENV_ID, boxes=["chance"], render_mode="ansi").unwrapped
    env.reset(seed=0)
    env.step(40)  # a filled box: scores Chance
    with pytest.raises(RuntimeError, match="ended"):
        env.step(44)
    text = env.render()
    assert "game over" in text and "chance" in text and "(for score lg_straight" not in text


def test_rgb_frame_shows_dice_and_card(tmp_path):
    env = gym.make(ENV_ID, render_mode="rgb_array")
    env.reset(seed=2)
    env.step(44)
    frame = env.render()
    assert frame.dtype == np.uint8 and frame.shape[2] == 3
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 10


# -- the draws against the model: chi-square ----------------------------------------------------


def test_the_envs_first_rolls_follow_the_model():
    env = gym.make(ENV_ID).unwrapped
    observed = Counter()
    env.reset(seed=0)
    for _ in range(20_000):
        env.reset()
        observed[env.state.dice] += 1
    assert chi_square_pvalue(observed, ROLL_PROBABILITIES) > 1e-4


KEEPS_TRIED = [([1, 1, 3, 5, 6], 0b11100), ([2, 2, 2, 6, 6], 0b11000), ([1, 2, 3, 4, 6], 0b10000)]


@pytest.mark.parametrize(("faces", "reroll"), KEEPS_TRIED)
def test_the_envs_rerolls_follow_the_model(faces, reroll):
    env = gym.make(ENV_ID).unwrapped
    state = PlayState(0, 0, False, dice_index(faces), 2)
    keep = REROLL_KEEP[state.dice, reroll]
    assert keep == keep_index([f for i, f in enumerate(sorted(faces)) if not reroll >> i & 1])
    observed = Counter()
    env.reset(seed=1)
    for _ in range(10_000):
        env.reset(options={"state": state})
        env.step(reroll)
        observed[env.state.dice] += 1
    assert chi_square_pvalue(observed, KEEP_OUTCOMES[keep]) > 1e-4


@pytest.mark.parametrize(("faces", "reroll"), [*KEEPS_TRIED, ([4, 4, 4, 4, 4], 31)])
def test_the_vector_envs_rerolls_and_next_turns_follow_the_model(faces, reroll):
    n = 20_000
    vector = YahtzeeVectorEnv(num_envs=n)
    state = PlayState(0, 0, False, dice_index(faces), 2)
    vector.reset(seed=2, options={"state": state})
    vector.step(np.full(n, reroll))
    observed = Counter(s.dice for s in vector.states)
    assert chi_square_pvalue(observed, KEEP_OUTCOMES[REROLL_KEEP[state.dice, reroll]]) > 1e-4
    # Scoring starts the next turn with a fresh roll of five dice.
    vector.step(np.full(n, 32 + CHANCE))
    observed = Counter(s.dice for s in vector.states)
    assert chi_square_pvalue(observed, ROLL_PROBABILITIES) > 1e-4
    # And the first rolls of a reset.
    vector.reset()
    observed = Counter(s.dice for s in vector.states)
    assert chi_square_pvalue(observed, ROLL_PROBABILITIES) > 1e-4


# -- the vector env -----------------------------------------------------------------------------


@pytest.mark.parametrize("kwargs", [{}, {"joker": "verhoeff"}, *REDUCED])
def test_the_vector_envs_steps_follow_the_model(kwargs):
    """Random actions (legal or not) for many copies: every transition is the model's, every
    episode's rewards sum to its final score, and no episode lasts more than 3 steps a box.
    A copy the next step resets allows every action (its action is ignored), so masked
    sampling (`rng.choice` over the legal actions) never meets an empty row."""
    n = 64
    vector = YahtzeeVectorEnv(num_envs=n, **kwargs)
    model = vector.model
    obs, info = vector.reset(seed=3)
    rng = np.random.default_rng(4)
    returns, lengths = np.zeros(n), np.zeros(n, dtype=int)
    ended = 0
    for step in range(200):
        before = vector.states
        if step % 2:
            actions = rng.integers(45, size=n)
        else:
            actions = np.array([rng.choice(np.flatnonzero(row)) for row in info["action_mask"]])
        obs, rewards, terminated, truncated, info = vector.step(actions)
        assert info["action_mask"][terminated].all()
        np.testing.assert_array_equal(vector.action_masks(), info["action_mask"].astype(bool))
        after = vector.states
        for i in range(n):
            if before[i].filled == FULL_CARD:  # next-step reset
                assert (
                    rewards[i] == 0 and after[i].rolls_left == 2 and after[i].filled == model.absent
                )
                returns[i], lengths[i] = 0, 0
                continue
            done = check_transition(model, before[i], int(actions[i]), after[i], rewards[i])
            assert done == terminated[i]
            returns[i] += rewards[i]
            lengths[i] += 1
            if done:
                ended += 1
                assert lengths[i] <= 3 * model.num_turns
            np.testing.assert_array_equal(obs[i], observation_of(after[i]))
        assert not truncated.any()
    assert ended > 20


def test_the_vector_env_same_step_mode_and_seeds():
    def run(seed, mode):
        vector = gym.make_vec(
            ENV_ID, num_envs=8, vectorization_mode="vector_entry_point", autoreset_mode=mode,
            boxes=["ones", "chance"],
        )  # fmt: skip
        assert isinstance(vector, YahtzeeVectorEnv)
        obs, _ = vector.reset(seed=seed)
        trace = [obs.copy()]
        for _ in range(12):
            obs, rewards, terminated, _, info = vector.step(np.full(8, 44))
            trace.append((obs.copy(), rewards.copy(), terminated.copy()))
            if mode == AutoresetMode.SAME_STEP and terminated.any():
                final = info["final_obs"][terminated][0]
                assert final[7:20].all() and final[6] == 0
                assert not info["final_info"]["action_mask"][terminated].any()
                assert (obs[terminated][:, 6] == 2).all()  # already reset
        return trace

    def same(a, b):
        return all(
            all(np.array_equal(x, y) for x, y in zip(p, q, strict=True))
            if isinstance(p, tuple)
            else np.array_equal(p, q)
            for p, q in zip(a, b, strict=True)
        )

    assert same(run(1, AutoresetMode.NEXT_STEP), run(1, AutoresetMode.NEXT_STEP))
    assert not same(run(1, AutoresetMode.NEXT_STEP), run(2, AutoresetMode.NEXT_STEP))
    run(1, AutoresetMode.SAME_STEP)


def test_the_vector_env_snapshot_restores_bit_for_bit():
    vector = YahtzeeVectorEnv(num_envs=16)
    vector.reset(seed=0)
    actions = np.random.default_rng(0).integers(45, size=(10, 16))
    vector.step(actions[0])
    saved = vector.snapshot()
    first = [vector.step(a)[0] for a in actions[1:]]
    vector.restore(saved)
    again = [vector.step(a)[0] for a in actions[1:]]
    assert all(np.array_equal(x, y) for x, y in zip(first, again, strict=True))


def test_bad_vector_input_is_refused():
    vector = YahtzeeVectorEnv(num_envs=4)
    with pytest.raises(RuntimeError, match="reset"):
        vector.step(np.zeros(4, dtype=int))
    vector.reset(seed=0)
    with pytest.raises(ValueError, match="actions"):
        vector.step(np.full(4, 45))
    with pytest.raises(ValueError, match="reset_mask"):
        vector.reset(options={"reset_mask": np.ones(3, dtype=bool)})
    with pytest.raises(ValueError, match="render_mode"):
        YahtzeeVectorEnv(num_envs=2, render_mode="rgb_array")


def test_the_sb3_adapter_steps_it():
    env = DiceSB3VecEnv(ENV_ID, num_envs=4, boxes=["fives", "yahtzee"])
    env.seed(0)
    obs = env.reset()
    assert obs.shape == (4, 22)
    dones_seen = 0
    for _ in range(12):
        masks = env.action_masks()
        env.step_async(masks.argmax(axis=1))
        obs, rewards, dones, infos = env.step_wait()
        for i in np.flatnonzero(dones):
            dones_seen += 1
            assert infos[i]["terminal_observation"][7:20].all()
    assert dones_seen >= 4


# -- the solve dispatch -------------------------------------------------------------------------


def test_baselines_solve_sends_yahtzee_to_its_structure_aware_solver():
    boxes = ["twos", "yahtzee", "chance"]
    solution = baselines.solve(ENV_ID, joker="free", boxes=boxes)
    assert solution.value == solve_yahtzee(joker="free", boxes=boxes).value
    assert solution.model.joker == "free" and solution.model.boxes == (1, YAHTZEE, CHANCE)
    with pytest.raises(ValueError, match="method"):
        baselines.solve(ENV_ID, method="generic", boxes=boxes)
    assert BOX_NAMES[CHANCE] == "chance"


@pytest.mark.parametrize("joker", ["forced", "free", "verhoeff"])
def test_both_envs_pay_the_bonuses_and_jokers_as_the_model(joker):
    """Crafted cards where the bonuses and the joker rules decide the reward: every box (legal
    or not) scored from them in both envs pays what the model says."""
    env = gym.make(ENV_ID, joker=joker).unwrapped
    vector = YahtzeeVectorEnv(num_envs=13, joker=joker)
    upper_five = 0b11111
    states = [
        PlayState(1 << YAHTZEE, 0, True, dice_index([3] * 5), 1),  # bonus, Threes open
        PlayState((1 << YAHTZEE) | (1 << THREES), 0, True, dice_index([3] * 5), 0),
        PlayState((1 << YAHTZEE) | 0b111111, 63, False, dice_index([6] * 5), 2),
        PlayState(upper_five, 60, False, dice_index([6, 6, 6, 1, 2]), 0),  # the upper bonus
        PlayState(FULL_CARD & ~(1 << CHANCE), 62, True, dice_index([2] * 5), 0),
    ]
    for state in states:
        vector.reset(seed=0, options={"state": state})
        actions = np.arange(32, 45)
        _, rewards, _, _, _ = vector.step(actions)
        for action, after, reward in zip(actions, vector.states, rewards, strict=True):
            check_transition(env.model, state, int(action), after, reward)
            env.reset(seed=0, options={"state": state})
            env.step(int(action))
            check_transition(env.model, state, int(action), env.state, env.episode_return)
    vector.reset(seed=0, options={"state": states[0]})
    assert vector.step(np.full(13, 32 + THREES))[1][0] == 15 + 100
    vector.reset(seed=0, options={"state": states[3]})
    assert vector.step(np.full(13, 32 + 5))[1][0] == 18 + 35

"""The PettingZoo views of the two-player models: PettingZoo's own tests with no warning from
this package, its wrappers' errors, the model's law, and the reward convention against the
exact win probability."""

import re
import warnings
from contextlib import contextmanager

import gymnasium as gym
import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test, seed_test
from scipy.stats import chisquare

import baselines
from dice_envs.games.hog import Hog
from dice_envs.games.pig import Pig
from dice_envs.games.two_dice_pig import TwoDicePig
from dice_envs.pettingzoo import AGENTS, DiceAECEnv, env, names, parallel_env, raw_env

CASES = [
    ("pig", {"goal": 20}),
    ("pig", {"goal": 12, "die_probs": (0.3, 0.1, 0.1, 0.1, 0.2, 0.2), "first_player": None}),
    ("two_dice_pig", {"goal": 15, "sides": 4}),
    ("two_dice_pig", {"goal": 20, "first_player": "player_1"}),
    ("hog", {"goal": 15, "max_dice": 4}),
    ("hog", {"goal": 20, "first_player": None}),
]
ENV_IDS = {
    "pig": "dice_envs/Pig-v0",
    "two_dice_pig": "dice_envs/TwoDicePig-v0",
    "hog": "dice_envs/Hog-v0",
}


# PettingZoo's api_test advises against what its own classic games do (a Dict observation
# holding the action mask, which is not a NumPy array nor a Box or Discrete space) and against
# all-zero observations (the scores start at 0). These warnings are raised by pettingzoo.test
# itself; every other warning, any from this package included, fails the tests below.
PETTINGZOO_ADVICE = (
    "Observation is not a NumPy array",
    "Observation numpy array is all zeros",
    "Observation space for each agent probably should be",
)


@contextmanager
def warnings_are_errors_but_pettingzoos_advice():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for advice in PETTINGZOO_ADVICE:
            warnings.filterwarnings("ignore", re.escape(advice), module=r"pettingzoo\.test\.")
        yield


def test_every_two_player_game_has_an_aec_env():
    assert names() == ("pig", "ten_thousand_duel", "two_dice_pig", "hog")
    assert isinstance(env("pig").unwrapped.model, Pig)
    assert isinstance(env("two_dice_pig").unwrapped.model, TwoDicePig)
    assert isinstance(raw_env("hog").model, Hog)


@pytest.mark.parametrize(("name", "kwargs"), CASES)
def test_pettingzoo_api_and_seed_tests_pass_with_no_warning_of_ours(name, kwargs):
    with warnings_are_errors_but_pettingzoos_advice():
        api_test(env(name, **kwargs), num_cycles=300)
        api_test(raw_env(name, **kwargs), num_cycles=100)
        seed_test(lambda: env(name, **kwargs), num_cycles=300)


def test_the_parallel_api_test_passes_with_no_warning_at_all():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parallel_api_test(parallel_env("simultaneous_hog", goal=25, max_dice=4), num_cycles=300)


def test_env_wraps_the_raw_env_as_pettingzoos_classic_games_do():
    from pettingzoo.utils.wrappers import AssertOutOfBoundsWrapper, OrderEnforcingWrapper

    game = env("pig", goal=20)
    assert isinstance(game, OrderEnforcingWrapper)
    assert isinstance(game.env, AssertOutOfBoundsWrapper)
    assert isinstance(game.unwrapped, DiceAECEnv) and type(raw_env("pig")) is DiceAECEnv


def test_calls_before_reset_give_pettingzoos_clear_errors():
    game = env("pig", goal=20)
    with pytest.raises(AssertionError, match=r"reset\(\) needs to be called before step"):
        game.step(1)
    with pytest.raises(AssertionError, match=r"reset\(\) needs to be called before observe"):
        game.observe("player_0")
    with pytest.raises(AssertionError, match=r"reset\(\) needs to be called before state"):
        game.state()
    with pytest.raises(AttributeError, match="agent_selection cannot be accessed before reset"):
        _ = game.agent_selection
    with pytest.raises(RuntimeError, match=r"state\(\) called before reset\(\)"):
        raw_env("hog").state()
    game.reset(seed=0)
    assert game.state().tolist() == [0, 0, 0, 0] == list(game.unwrapped.position)
    with pytest.raises(AssertionError, match="action is not in action space"):
        game.step(2)
    # The parallel env has no OrderEnforcingWrapper: its own errors say the same.
    simultaneous = parallel_env("simultaneous_hog", goal=20, render_mode="ansi")
    for call, what in [
        (lambda: simultaneous.step({"player_0": 0, "player_1": 0}), "step"),
        (simultaneous.state, "state"),
        (simultaneous.render, "render"),
    ]:
        with pytest.raises(RuntimeError, match=rf"{what}\(\) called before reset\(\)"):
            call()


@pytest.mark.parametrize(
    ("make", "env_id"),
    [
        (lambda **kwargs: env("pig", **kwargs), "dice_envs/Pig-v0"),
        (lambda **kwargs: raw_env("hog", **kwargs), "dice_envs/Hog-v0"),
        (
            lambda **kwargs: parallel_env("simultaneous_hog", **kwargs),
            "dice_envs/SimultaneousHog-v0",
        ),
    ],
)
def test_a_misspelt_argument_is_the_valueerror_gym_make_gives(make, env_id):
    with pytest.raises(ValueError) as single_agent:
        gym.make(env_id, gaol=30)
    with pytest.raises(ValueError) as multi_agent:
        make(gaol=30)
    # The same check (the registration's), so the same first words; then what each env takes.
    same = "unknown argument(s) ['gaol'];"
    assert str(single_agent.value).startswith(same) and str(multi_agent.value).startswith(same)
    assert "'goal'" in str(multi_agent.value) and "render_mode" in str(multi_agent.value)


def test_the_envs_describe_themselves_not_the_single_agent_model():
    for game in (raw_env("pig"), env("hog").unwrapped, parallel_env("simultaneous_hog")):
        doc = game.__doc__
        assert "+1 to the winner, -1 to the loser" in doc and "action_mask" in doc
        assert "player_0" in doc and "1 when the agent wins, 0 otherwise" not in doc
    assert raw_env("two_dice_pig").__doc__.startswith("two_dice_pig as a PettingZoo AEC env.")
    assert "+1 to the winner, -1 to the loser" in (raw_env.__doc__ + DiceAECEnv.__doc__)


def _play(game, choose, seed):
    """One game with `choose(agent, observation)`; returns the rewards and the steps."""
    game.reset(seed=seed)
    totals, steps = dict.fromkeys(AGENTS, 0.0), 0
    for agent in game.agent_iter():
        observation, reward, termination, truncation, _ = game.last()
        totals[agent] += reward
        if termination or truncation:
            game.step(None)
            continue
        game.step(choose(agent, observation))
        steps += 1
    return totals, steps


def test_rewards_are_plus_minus_one_and_their_mean_is_two_p_minus_one():
    goal, games = 20, 3000
    game = env("pig", goal=goal)
    hold_at_12 = lambda agent, obs: int(obs["observation"][2] < 12)  # noqa: E731
    outcomes = np.array([_play(game, hold_at_12, seed)[0]["player_0"] for seed in range(games)])
    returns = [_play(game, hold_at_12, seed)[0] for seed in range(5)]
    assert all(r["player_0"] == -r["player_1"] and abs(r["player_0"]) == 1 for r in returns)
    assert set(np.unique(outcomes)) <= {-1.0, 1.0}
    # The same match, exactly: player_0 moves first, both hold at 12.
    p = baselines.evaluate(
        lambda obs: int(obs[2] < 12),
        "dice_envs/Pig-v0",
        goal=goal,
        opponent="hold-at-12",
        agent_starts=True,
    ).value
    stderr = outcomes.std(ddof=1) / np.sqrt(games)
    assert abs(outcomes.mean() - (2 * p - 1)) < 4 * stderr


@pytest.mark.parametrize(("name", "kwargs"), CASES[::2])
def test_observations_are_the_single_agent_envs_and_masks_the_movers(name, kwargs):
    game = raw_env(name, **kwargs)
    single = gym.make(ENV_IDS[name], **{k: v for k, v in kwargs.items() if k != "first_player"})
    rng = np.random.default_rng(0)
    for seed in range(20):
        game.reset(seed=seed)
        for agent in game.agent_iter():
            observation, _, termination, truncation, _ = game.last()
            seat = AGENTS.index(agent)
            assert np.array_equal(
                observation["observation"], game.model.observation(game.position, seat)
            )
            if termination or truncation:
                game.step(None)
                continue
            assert single.observation_space.contains(observation["observation"])
            legal = np.zeros(game.model.num_actions, np.int8)
            legal[list(game.model.legal_actions(game.position))] = 1
            assert np.array_equal(observation["action_mask"], legal)
            other = AGENTS[1 - seat]
            assert not game.observe(other)["action_mask"].any()
            assert game.model.to_move(game.position) == seat
            game.step(int(rng.choice(np.flatnonzero(legal))))


def _law_cases():
    pig = Pig(goal=15, die_probs=(0.3, 0.1, 0.1, 0.1, 0.2, 0.2))
    two = TwoDicePig(goal=15, sides=4)
    hog = Hog(goal=15, max_dice=4)
    return [
        ("pig", {"goal": 15, "die_probs": pig.face_probs}, pig, (0, 5, 3, 4), 1),
        ("pig", {"goal": 15, "die_probs": pig.face_probs}, pig, (1, 5, 10, 2), 1),
        ("pig", {"goal": 15, "die_probs": pig.face_probs}, pig, (1, 5, 10, 0), 0),  # hold at 0
        ("two_dice_pig", {"goal": 15, "sides": 4}, two, (0, 3, 7, 4), 1),
        ("two_dice_pig", {"goal": 15, "sides": 4}, two, (1, 6, 2, 0), 1),
        ("hog", {"goal": 15, "max_dice": 4}, hog, (0, 3, 7), 2),
        ("hog", {"goal": 15, "max_dice": 4}, hog, (1, 12, 0), 3),
    ]


@pytest.mark.parametrize(("name", "kwargs", "model", "state", "action"), _law_cases())
def test_the_aec_env_samples_the_models_transitions(name, kwargs, model, state, action):
    """Chi-square of the next (state, reward, terminal) against `model.transitions`."""
    draws = 4000
    outcomes = model.transitions(state, action)
    index = {(next_state, terminal): i for i, (_, next_state, _, terminal) in enumerate(outcomes)}
    counts = np.zeros(len(outcomes))
    game = raw_env(name, **kwargs)
    game.reset(seed=7)
    for _ in range(draws):
        game.reset(options={"state": state})
        game.step(action)
        terminal = game.terminations["player_0"]
        counts[index[(game.position, terminal)]] += 1
    expected = np.array([t.prob for t in outcomes]) * draws
    assert counts.sum() == draws
    assert chisquare(counts, expected).pvalue > 1e-3


def test_the_law_test_catches_a_wrong_die():
    """The chi-square above fails when the env's die is not the model's."""
    model = Pig(goal=15, die_probs=(0.3, 0.1, 0.1, 0.1, 0.2, 0.2))
    wrong = raw_env("pig", goal=15)  # a fair die instead
    outcomes = model.transitions((0, 5, 3, 4), 1)
    index = {next_state: i for i, (_, next_state, _, _) in enumerate(outcomes)}
    counts = np.zeros(len(outcomes))
    wrong.reset(seed=7)
    for _ in range(4000):
        wrong.reset(options={"state": (0, 5, 3, 4)})
        wrong.step(1)
        counts[index[wrong.position]] += 1
    expected = np.array([t.prob for t in outcomes]) * 4000
    assert chisquare(counts, expected).pvalue < 1e-6


def test_first_player_and_seeds():
    starts = [env("pig", goal=10, first_player=None) for _ in range(1)][0]
    movers = []
    for seed in range(400):
        starts.reset(seed=seed)
        movers.append(starts.agent_selection)
    share = movers.count("player_1") / len(movers)
    assert 0.4 < share < 0.6  # a fair coin: 400 games, 4 standard errors
    second = raw_env("hog", goal=10, first_player="player_1")
    second.reset(seed=0)
    assert second.agent_selection == "player_1" and second.model.to_move(second.position) == 1
    a, b = env("pig", goal=30), env("pig", goal=30)
    rolls = lambda agent, obs: 1  # noqa: E731
    assert _play(a, rolls, 5) == _play(b, rolls, 5)
    assert any(_play(a, rolls, 5)[1] != _play(a, rolls, s)[1] for s in range(6, 12))


def test_bad_arguments_and_actions_raise_clear_errors():
    with pytest.raises(
        ValueError, match="name must be one of pig, ten_thousand_duel, two_dice_pig, hog"
    ):
        env("chess")
    with pytest.raises(ValueError, match="first_player must be"):
        env("pig", first_player="player_2")
    with pytest.raises(ValueError, match="goal"):
        env("pig", goal=0)
    with pytest.raises(ValueError, match="render_mode"):
        env("pig", render_mode="human")
    with pytest.raises(ValueError, match=r"unknown argument\(s\) \['opponent'\]"):
        env("pig", opponent="hold-at-20")  # both seats are agents
    game = raw_env("hog", goal=10, max_dice=3)
    game.reset(seed=0)
    with pytest.raises(ValueError, match=r"action must be an integer in 0\.\.2"):
        game.step(3)
    with pytest.raises(ValueError, match="unknown key 'stat'; did you mean 'state'"):
        game.reset(options={"stat": (0, 1, 2)})
    with pytest.raises(ValueError, match="reset options must be a dict"):
        game.reset(options=[1])
    game.reset(options={"state": (1, 4, 6), "some_wrapper's_key": 1})  # PettingZoo's convention
    assert game.position == (1, 4, 6) and game.agent_selection == "player_1"


def test_render_ansi_and_rgb_frames_of_one_size():
    text = env("pig", goal=20, render_mode="ansi")
    text.reset(seed=1)
    text.step(1)
    line = text.render()
    assert line.startswith("player_0's view: you 0, opponent 0") and "to move" in line
    frames = env("hog", goal=20, render_mode="rgb_array")
    frames.reset(seed=1)
    shapes = set()
    for _agent in frames.agent_iter():
        _, _, termination, truncation, _ = frames.last()
        frames.step(None if termination or truncation else 4)
        shapes.add(frames.render().shape)
    assert len(shapes) == 1 and shapes.pop()[2] == 3
    # The frame draws each player's last-turn dice: forgetting player_0's changes it.
    frames.reset(seed=2)
    frames.step(4)  # player_0 throws five dice
    assert frames.thrown[0] == frames.infos["player_0"]["rolls"] and len(frames.thrown[0]) == 5
    drawn = frames.render()
    frames.thrown[0] = []
    assert not np.array_equal(drawn, frames.render())
    assert raw_env("pig").render() is None


def test_the_aec_env_is_a_pettingzoo_aec_env():
    from pettingzoo import AECEnv

    game = env("two_dice_pig", goal=20)
    assert isinstance(game, AECEnv) and isinstance(game.unwrapped, DiceAECEnv)
    assert game.possible_agents == ["player_0", "player_1"]
    assert game.metadata["name"] == "dice_envs_two_dice_pig_v0"
    assert game.observation_space("player_1")["observation"] == gym.spaces.MultiDiscrete(
        (21, 21, 20)
    )


def test_pettingzoos_own_registry_makes_them_under_the_gym_ids():
    import pettingzoo

    made = pettingzoo.make("aec", "dice_envs/Hog-v0", goal=25, max_dice=4)
    assert isinstance(made.unwrapped, DiceAECEnv) and made.name == "hog"
    assert (made.model.goal, made.model.max_dice) == (25, 4)
    assert {"dice_envs/Pig-v0", "dice_envs/TwoDicePig-v0"} <= set(pettingzoo.aec_registry)

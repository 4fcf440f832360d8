"""The PettingZoo AEC view of the two-player models: PettingZoo's own tests, the model's law,
and the reward convention against the exact win probability."""

import gymnasium as gym
import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test
from scipy.stats import chisquare

import baselines
from dice_envs.games.hog import Hog
from dice_envs.games.pig import Pig
from dice_envs.games.two_dice_pig import TwoDicePig
from dice_envs.pettingzoo import AGENTS, DiceAECEnv, env, names

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


def test_every_two_player_game_has_an_aec_env():
    assert names() == ("pig", "two_dice_pig", "hog")
    assert isinstance(env("pig").model, Pig)
    assert isinstance(env("two_dice_pig").model, TwoDicePig)
    assert isinstance(env("hog").model, Hog)


@pytest.mark.filterwarnings("ignore")  # api_test's advice (Dict observations, zeros) and options
@pytest.mark.parametrize(("name", "kwargs"), CASES)
def test_pettingzoo_api_and_seed_tests_pass(name, kwargs):
    api_test(env(name, **kwargs), num_cycles=300)
    seed_test(lambda: env(name, **kwargs), num_cycles=300)


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
    game = env(name, **kwargs)
    single = gym.make(ENV_IDS[name], **{k: v for k, v in kwargs.items() if k != "first_player"})
    rng = np.random.default_rng(0)
    for seed in range(20):
        game.reset(seed=seed)
        for agent in game.agent_iter():
            observation, _, termination, truncation, _ = game.last()
            seat = AGENTS.index(agent)
            assert np.array_equal(
                observation["observation"], game.model.observation(game.state, seat)
            )
            if termination or truncation:
                game.step(None)
                continue
            assert single.observation_space.contains(observation["observation"])
            legal = np.zeros(game.model.num_actions, np.int8)
            legal[list(game.model.legal_actions(game.state))] = 1
            assert np.array_equal(observation["action_mask"], legal)
            other = AGENTS[1 - seat]
            assert not game.observe(other)["action_mask"].any()
            assert game.model.to_move(game.state) == seat
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
    game = env(name, **kwargs)
    game.reset(seed=7)
    for _ in range(draws):
        game.reset(options={"state": state})
        game.step(action)
        terminal = game.terminations["player_0"]
        counts[index[(game.state, terminal)]] += 1
    expected = np.array([t.prob for t in outcomes]) * draws
    assert counts.sum() == draws
    assert chisquare(counts, expected).pvalue > 1e-3


def test_the_law_test_catches_a_wrong_die():
    """The chi-square above fails when the env's die is not the model's."""
    model = Pig(goal=15, die_probs=(0.3, 0.1, 0.1, 0.1, 0.2, 0.2))
    wrong = env("pig", goal=15)  # a fair die instead
    outcomes = model.transitions((0, 5, 3, 4), 1)
    index = {next_state: i for i, (_, next_state, _, _) in enumerate(outcomes)}
    counts = np.zeros(len(outcomes))
    wrong.reset(seed=7)
    for _ in range(4000):
        wrong.reset(options={"state": (0, 5, 3, 4)})
        wrong.step(1)
        counts[index[wrong.state]] += 1
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
    second = env("hog", goal=10, first_player="player_1")
    second.reset(seed=0)
    assert second.agent_selection == "player_1" and second.model.to_move(second.state) == 1
    a, b = env("pig", goal=30), env("pig", goal=30)
    rolls = lambda agent, obs: 1  # noqa: E731
    assert _play(a, rolls, 5) == _play(b, rolls, 5)
    assert any(_play(a, rolls, 5)[1] != _play(a, rolls, s)[1] for s in range(6, 12))


def test_bad_arguments_and_actions_raise_clear_errors():
    with pytest.raises(ValueError, match="name must be one of pig, two_dice_pig, hog"):
        env("chess")
    with pytest.raises(ValueError, match="first_player must be"):
        env("pig", first_player="player_2")
    with pytest.raises(ValueError, match="goal"):
        env("pig", goal=0)
    with pytest.raises(ValueError, match="render_mode"):
        env("pig", render_mode="human")
    game = env("hog", goal=10, max_dice=3)
    game.reset(seed=0)
    with pytest.raises(ValueError, match=r"action must be an integer in 0\.\.2"):
        game.step(3)
    with pytest.warns(UserWarning, match="ignores the options"):
        game.reset(options={"stat": (0, 1, 2)})
    with pytest.raises(ValueError, match="reset options must be a dict"):
        game.reset(options=[1])


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
    assert env("pig").render() is None


def test_the_aec_env_is_a_pettingzoo_aec_env():
    from pettingzoo import AECEnv

    game = env("two_dice_pig", goal=20)
    assert isinstance(game, AECEnv) and isinstance(game, DiceAECEnv)
    assert game.possible_agents == ["player_0", "player_1"]
    assert game.metadata["name"] == "dice_envs_two_dice_pig_v0"
    assert game.observation_space("player_1")["observation"] == gym.spaces.MultiDiscrete(
        (21, 21, 20)
    )


def test_pettingzoos_own_registry_makes_them_under_the_gym_ids():
    import pettingzoo

    made = pettingzoo.make("aec", "dice_envs/Hog-v0", goal=25, max_dice=4)
    assert isinstance(made, DiceAECEnv) and made.name == "hog"
    assert (made.model.goal, made.model.max_dice) == (25, 4)
    assert {"dice_envs/Pig-v0", "dice_envs/TwoDicePig-v0"} <= set(pettingzoo.aec_registry)

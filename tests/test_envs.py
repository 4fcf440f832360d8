"""Conformance of every registered env: checkers, seeding, pickling, env-vs-model, rules of play."""

import pickle
import sys
import warnings
from collections import Counter

import gymnasium as gym
import numpy as np
import pytest
from conftest import CASES, case_id, with_tables
from gymnasium.utils.env_checker import check_env as gymnasium_check_env
from scipy.stats import chisquare
from stable_baselines3.common.env_checker import check_env as sb3_check_env
from traces import env_trace, model_trace, without_mask

from dice_envs import env_ids, game, make_model
from dice_envs.games.base import reachable_states
from dice_envs.tables import observation_key


def test_every_registered_id_is_covered():
    assert {env_id for env_id, _ in CASES} == set(env_ids())
    assert set(env_ids()) <= set(gym.registry)


@pytest.mark.parametrize("render_mode", [None, "ansi", "rgb_array"])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_gymnasium_check_env(case, render_mode):
    env = gym.make(case[0], render_mode=render_mode, **case[1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gymnasium_check_env(env.unwrapped, skip_render_check=render_mode is None)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_sb3_check_env(case):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check_env(gym.make(case[0], **case[1]), warn=True)


def rollout(env, seed, steps=300):
    """Seeded random play, resetting at each end; returns everything the env said."""
    actions = np.random.default_rng(seed).integers(env.action_space.n, size=steps)
    trace = [observation_key(env.reset(seed=seed)[0])]
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append((observation_key(obs), reward, terminated, tuple(info["action_mask"])))
        if terminated or truncated:
            trace.append(observation_key(env.reset()[0]))
    return trace


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_same_seed_same_episode(case):
    first = rollout(gym.make(case[0], **case[1]), seed=3)
    second = rollout(gym.make(case[0], **case[1]), seed=3)
    other = rollout(gym.make(case[0], **case[1]), seed=4)
    assert first == second
    assert first != other or case[1].get("rounds") == 1


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_envs_pickle_mid_episode(case):
    env = gym.make(case[0], **case[1])
    env.reset(seed=11)
    env.step(1)
    if env.unwrapped.done:
        env.reset()
    copy = pickle.loads(pickle.dumps(env))
    for _ in range(5):
        if env.unwrapped.done:
            break
        a, b = env.step(1), copy.step(1)
        assert observation_key(a[0]) == observation_key(b[0]) and a[1:4] == b[1:4]


def sample_states(model, count, seed):
    states = list(reachable_states(model))
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(states), size=min(count, len(states)), replace=False)
    return [states[i] for i in picks]


@pytest.mark.parametrize("case", with_tables(CASES), ids=case_id)
def test_env_draws_match_the_model(case):
    """Chi-square of observed outcomes against `transitions`, for sampled states and actions."""
    env_id, kwargs = case
    model = make_model(env_id, **kwargs)
    env = gym.make(env_id, **kwargs).unwrapped
    env.reset(seed=123)
    draws = 3000
    for state in sample_states(model, 4, seed=5):
        for action in range(model.num_actions):
            expected = Counter()
            for prob, next_state, reward, terminal in model.transitions(state, action):
                expected[(observation_key(model.observation(next_state)), reward, terminal)] += prob
            observed = Counter()
            for _ in range(draws):
                env.reset(options={"state": state})
                obs, reward, terminal, _, _ = env.step(action)
                observed[(observation_key(obs), reward, terminal)] += 1
            assert set(observed) <= set(expected)
            keys = list(expected)
            if len(keys) == 1:
                assert observed[keys[0]] == draws
                continue
            f_obs = [observed[k] for k in keys]
            f_exp = [expected[k] * draws for k in keys]
            assert chisquare(f_obs, f_exp).pvalue > 1e-4, (state, action)


@pytest.mark.parametrize("case", with_tables(CASES), ids=case_id)
def test_masks_are_the_legal_actions(case):
    env = gym.make(case[0], **case[1]).unwrapped
    model = env.model
    obs, info = env.reset(seed=0)
    for _ in range(50):
        legal = np.zeros(model.num_actions, dtype=np.int8)
        legal[list(model.legal_actions(env.state))] = 1
        np.testing.assert_array_equal(info["action_mask"], legal)
        np.testing.assert_array_equal(env.action_masks(), legal.astype(bool))
        obs, _, terminated, _, info = env.step(env.action_space.sample(mask=info["action_mask"]))
        if terminated:
            assert not info["action_mask"].any() and not env.action_masks().any()
            obs, info = env.reset()


@pytest.mark.parametrize("bad", ["n", -1, 1.5, "roll", None, np.array([0, 1])])
@pytest.mark.parametrize("env_id", env_ids())
def test_action_outside_the_space_changes_nothing(env_id, bad):
    env = gym.make(env_id).unwrapped
    bad = env.action_space.n if isinstance(bad, str) and bad == "n" else bad
    env.reset(seed=0)
    before = (env.state, env.episode_return, env.np_random.bit_generator.state)
    with pytest.raises(ValueError, match="action"):
        env.step(bad)
    assert (env.state, env.episode_return, env.np_random.bit_generator.state) == before


@pytest.mark.parametrize("env_id", env_ids())
def test_step_outside_an_episode_is_refused(env_id):
    env = gym.make(env_id, render_mode="ansi").unwrapped
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    with pytest.raises(RuntimeError, match="reset"):
        env.render()
    if game(env_id).tables:
        env.reset(seed=0, options={"state": make_model(env_id).initial_states()[0][1]})
    else:  # no listed start states: a seeded start (action 0 still ends the game)
        env.reset(seed=0)
    terminated = False
    while not terminated:
        _, _, terminated, _, _ = env.step(0)
    final = env.state
    with pytest.raises(RuntimeError, match="ended"):
        env.step(0)
    assert env.state == final and "game over" in env.render()


def test_bad_render_mode_and_bad_start_state():
    with pytest.raises(ValueError, match="render_mode"), pytest.warns(UserWarning):
        gym.make("dice_envs/SumAvoid-v0", render_mode="video")
    env = gym.make("dice_envs/SumAvoid-v0").unwrapped
    with pytest.raises(ValueError, match="bust"):
        env.reset(options={"state": 20})
    with pytest.raises(ValueError, match="face"):
        gym.make("dice_envs/D20Rounds-v0").reset(options={"state": (3, 25)})


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_human_render_shows_the_rgb_array_frame_in_a_window(case, monkeypatch):
    """render_mode="human" draws a frame in a pygame window at every reset and step (SDL's
    dummy video driver here): the window holds exactly the rgb_array picture of the same
    seeded episode; `close` closes it."""
    import pygame

    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    human = gym.make(case[0], render_mode="human", **case[1])
    human.unwrapped.metadata = {**human.unwrapped.metadata, "render_fps": 0}  # no waits here
    picture = gym.make(case[0], render_mode="rgb_array", **case[1])

    def window() -> np.ndarray:
        return pygame.surfarray.array3d(pygame.display.get_surface()).swapaxes(0, 1)

    (_, info), _ = human.reset(seed=3), picture.reset(seed=3)
    np.testing.assert_array_equal(window(), picture.render())
    for _ in range(3):
        action = int(np.flatnonzero(info["action_mask"])[-1])
        (_, _, end, cut, info), _ = human.step(action), picture.step(action)
        np.testing.assert_array_equal(window(), picture.render())
        if end or cut:
            break
    human.close()
    assert not pygame.display.get_init()


def test_human_render_without_pygame_is_refused_when_made(monkeypatch):
    monkeypatch.setitem(sys.modules, "pygame", None)  # `import pygame` raises ImportError
    with pytest.raises(gym.error.DependencyNotInstalled, match=r"pip install 'dice-envs\[human\]'"):
        gym.make("dice_envs/Pig-v0", render_mode="human")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_renders(case):
    text_env = gym.make(case[0], render_mode="ansi", **case[1])
    picture_env = gym.make(case[0], render_mode="rgb_array", **case[1])
    for env in (text_env, picture_env):
        env.reset(seed=1)
        env.step(1)
    text = text_env.render()
    assert isinstance(text, str) and "\n" not in text and "return" in text
    picture = picture_env.render()
    assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3
    assert len(np.unique(picture.reshape(-1, 3), axis=0)) >= 2  # more than a blank canvas


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_rgb_frames_keep_one_size_through_episodes(case):
    """RecordVideo needs every frame of an episode to have the same size."""
    env = gym.make(case[0], render_mode="rgb_array", **case[1])
    shapes = set()
    for seed in range(3):
        env.reset(seed=seed)
        shapes.add(env.render().shape)
        terminated = False
        while not terminated:
            _, _, terminated, _, _ = env.step(env.action_space.sample())
            shapes.add(env.render().shape)
    assert len(shapes) == 1, shapes


class _Draws:
    """Scalar draws of a generator seeded as `reset(seed=)` seeds the env's, counted."""

    def __init__(self, seed: int) -> None:
        self.generator = gym.utils.seeding.np_random(seed)[0]
        self.used = 0

    def __call__(self) -> float:
        self.used += 1
        return self.generator.random()


def test_uniforms_drawn_in_blocks_are_the_generators_own_sequence():
    """The env's episodes are its model's sampler fed scalar draws of `np_random`, across the
    ends of its 256-draw blocks; a new generator, or a seeded reset, starts afresh mid-block."""
    env = gym.make("dice_envs/Pig-v0").unwrapped
    model, actions = env.model, np.random.default_rng(0).integers(2, size=400).tolist()
    draws = _Draws(8)
    start = model.sample_start(draws)
    _, info = env.reset(seed=8)
    assert (env.state, without_mask(info)) == start
    first = env_trace(env, actions)
    assert first == model_trace(model, start[0], draws, actions)
    assert draws.used == 935  # three blocks and part of a fourth
    env.np_random, fresh, state = gym.utils.seeding.np_random(7)[0], _Draws(7), env.state
    assert env_trace(env, actions[:50]) == model_trace(model, state, fresh, actions[:50])
    assert fresh.used == 115
    env.reset(seed=8)
    assert env.state == start[0] and env_trace(env, actions) == first


def test_reading_np_random_gives_back_the_uniforms_drawn_ahead():
    """After steps that used a block and part of the next, `env.np_random` is where the
    generator is after the draws used, so restoring its saved state (with the env's state)
    replays the same steps."""
    env = gym.make("dice_envs/Pig-v0").unwrapped
    model, actions = env.model, np.random.default_rng(1).integers(2, size=200).tolist()
    draws = _Draws(7)
    start, _ = model.sample_start(draws)
    env.reset(seed=7)
    assert env_trace(env, actions[:130]) == model_trace(model, start, draws, actions[:130])
    assert draws.used == 297
    saved, state = env.np_random.bit_generator.state, env.state
    assert saved == draws.generator.bit_generator.state
    after = env_trace(env, actions[130:])
    assert after == model_trace(model, state, draws, actions[130:])
    env.np_random.bit_generator.state = saved
    env.reset(options={"state": state})
    assert env_trace(env, actions[130:]) == after

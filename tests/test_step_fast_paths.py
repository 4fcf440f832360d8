"""The env's fast step paths draw what the generic ones draw: the same seed, the same episode."""

import gymnasium as gym
import numpy as np
import pytest

import dice_envs  # noqa: F401  (registers the ids)
from dice_envs.games.fold import Fold


def _trace(sample_step, sample_start, seed: int, num_actions: int, steps: int = 3000):
    rng = np.random.default_rng(seed)
    actions = rng.integers(num_actions, size=steps).tolist()
    uniform = np.random.default_rng(seed + 1).random
    state, info = sample_start(uniform)
    trace = [(state, info)]
    for action in actions:
        state, reward, terminal, info = sample_step(state, action, uniform)
        trace.append((state, reward, terminal, info))
        if terminal:
            state, info = sample_start(uniform)
            trace.append((state, info))
    return trace


@pytest.mark.parametrize(
    ("env_id", "kwargs"),
    [
        ("dice_envs/Pig-v0", {"goal": 30}),
        ("dice_envs/Pig-v0", {"goal": 30, "opponent": "random"}),
        ("dice_envs/TwoDicePig-v0", {"goal": 30, "opponent": "random"}),
        ("dice_envs/Hog-v0", {"goal": 30, "opponent": "random"}),
        ("dice_envs/Hog-v0", {"goal": 30, "agent_starts": False}),
    ],
)
def test_turn_sampler_path_equals_the_step_by_step_opponent(env_id, kwargs):
    fast = gym.make(env_id, **kwargs).unwrapped.model
    assert fast.sample_step == fast._sample_by_turns  # the fast path is the one taken
    slow = gym.make(env_id, **kwargs).unwrapped.model
    slow._turn_sampler = None  # the opponent plays action by action through model.sample_step
    fast_trace = _trace(fast.sample_step, fast.sample_start, 7, fast.num_actions)
    slow_trace = _trace(
        lambda s, a, u: Fold.sample_step(slow, s, a, u), slow.sample_start, 7, slow.num_actions
    )
    assert fast_trace == slow_trace


@pytest.mark.parametrize("env_id", ["dice_envs/Pig-v0", "dice_envs/SumAvoid-v0"])
def test_handed_out_observations_and_masks_are_copies(env_id):
    env = gym.make(env_id).unwrapped
    obs, info = env.reset(seed=0)
    start = env.state
    expected_obs, expected_mask = np.copy(obs), info["action_mask"].copy()
    if isinstance(obs, np.ndarray):
        obs[...] = -1
    info["action_mask"][...] = 7
    env.action_masks()[...] = False
    obs, info = env.reset(options={"state": start})
    np.testing.assert_array_equal(obs, expected_obs)
    np.testing.assert_array_equal(info["action_mask"], expected_mask)
    np.testing.assert_array_equal(env.action_masks(), expected_mask.astype(bool))

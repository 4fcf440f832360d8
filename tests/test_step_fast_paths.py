"""The env's fast step paths draw what the generic ones draw: the same seed, the same episode."""

import gymnasium as gym
import numpy as np
import pytest
from traces import env_trace, model_trace, without_mask

import dice_envs  # noqa: F401  (registers the ids)
from dice_envs.games.fold import Fold


class _ActionByAction:
    """A game without `sample_turn`: a `Fold` of it plays the opponent's turn action by action,
    through the game's `sample_step`."""

    def __init__(self, game) -> None:
        self.game = game

    def __getattr__(self, name: str):
        if name == "sample_turn":
            raise AttributeError(name)
        return getattr(self.game, name)


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
    """The env (whose fold plays the opponent's whole turn by the game's `sample_turn`) gives,
    seed for seed, the episodes of a fold of the same game without `sample_turn`, fed the
    scalar draws of the seeded generator."""
    env = gym.make(env_id, **kwargs).unwrapped
    fast = env.model
    slow = Fold(_ActionByAction(fast.model), fast.opponent_policy, fast.agent_starts)
    actions = np.random.default_rng(7).integers(fast.num_actions, size=3000).tolist()
    uniform = gym.utils.seeding.np_random(7)[0].random
    _, info = env.reset(seed=7)
    fast_trace = [(env.state, without_mask(info)), *env_trace(env, actions)]
    start = slow.sample_start(uniform)
    slow_trace = [start, *model_trace(slow, start[0], uniform, actions)]
    assert len(fast_trace) > 3000 and fast_trace == slow_trace


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

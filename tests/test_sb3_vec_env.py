"""SB3's VecEnv over the native vector env: the interface SB3 and sb3-contrib rely on, and
PPO and MaskablePPO trained through it, then scored exactly."""

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3 import PPO
from stable_baselines3.common.vec_env import VecEnv, VecMonitor

import baselines
from dice_envs.envs.sb3 import DiceSB3VecEnv
from dice_envs.envs.vector import DiceVectorEnv


def test_same_step_resets_with_terminal_observations():
    env = DiceSB3VecEnv("dice_envs/SumAvoid-v0", num_envs=64, N=5, sides=3)
    assert isinstance(env, VecEnv) and env.num_envs == 64
    env.seed(3)
    first = env.reset()
    env.seed(3)
    assert (env.reset() == first).all()  # the seed takes effect at the next reset
    assert len(env.reset_infos) == 64 and "action_mask" in env.reset_infos[0]
    ended = 0
    for _ in range(30):
        env.step_async(np.ones(64, dtype=np.int64))  # always roll: every copy ends in time
        obs, rewards, dones, infos = env.step_wait()
        assert rewards.dtype == np.float32 and dones.dtype == bool and len(infos) == 64
        for i in np.flatnonzero(dones):
            final = int(infos[i]["terminal_observation"])
            # A bust (a multiple of N) pays nothing; reaching the cap pays the sum.
            assert rewards[i] == (0 if final % 5 == 0 else final) and final > 0
            assert infos[i]["TimeLimit.truncated"] is False
            assert obs[i] == 0  # restarted at once, from the sum 0
        ended += int(dones.sum())
    assert ended >= 64


def test_masks_and_the_rest_of_the_interface():
    env = DiceSB3VecEnv("dice_envs/TenThousand-v0", num_envs=5, allowed_moves=[])
    env.reset()
    masks = get_action_masks(env)
    assert masks.shape == (5, env.action_space.n) and masks.dtype == bool
    np.testing.assert_array_equal(masks, env.vector_env.action_masks())
    assert env.env_method("action_masks", indices=[1, 3])[1].shape == (env.action_space.n,)
    assert env.get_attr("num_envs") == [5] * 5
    assert env.env_is_wrapped(VecMonitor) == [False] * 5
    with pytest.raises(ValueError, match="autoreset_mode='SameStep'"):
        DiceSB3VecEnv(DiceVectorEnv("dice_envs.games.sum_avoid:SumAvoid", 2))
    with pytest.raises(ValueError, match="num_envs and game arguments go with an env id"):
        DiceSB3VecEnv(
            DiceVectorEnv(
                "dice_envs.games.sum_avoid:SumAvoid", 2, autoreset_mode=AutoresetMode.SAME_STEP
            ),
            num_envs=3,
        )


def test_truncation_options_and_bad_actions():
    env = DiceSB3VecEnv("dice_envs/SumAvoid-v0", num_envs=4, max_episode_steps=2)
    env.set_options({"state": 3})
    assert (env.reset() == 3).all()  # SB3's set_options reach the vector env
    env.step(np.ones(4, dtype=np.int64))
    _, _, dones, infos = env.step(np.zeros(4, dtype=np.int64) + 1)
    for done, info in zip(dones, infos, strict=True):
        if done:  # an episode of two rolls from 3 ends by truncation unless it busted at 10
            busted = info["terminal_observation"] % 10 == 0
            assert info["TimeLimit.truncated"] is (not busted)
    assert dones.all()
    with pytest.raises(ValueError, match="actions must be 4 integers"):
        env.step(np.array([0.9, 0.9, 0.9, 0.9]))
    env.set_options([{"state": 3}, {}, {}, {}])
    with pytest.raises(ValueError, match="one set of reset options"):
        env.reset()
    with pytest.raises(ValueError, match="drop autoreset_mode"):
        DiceSB3VecEnv("dice_envs/SumAvoid-v0", num_envs=2, autoreset_mode="NextStep")


def test_ppo_trains_through_the_adapter_and_is_scored_exactly():
    kwargs = {"N": 5, "sides": 3}
    env = VecMonitor(DiceSB3VecEnv("dice_envs/SumAvoid-v0", num_envs=16, **kwargs))
    model = PPO("MlpPolicy", env, n_steps=32, batch_size=128, seed=0, device="cpu")
    model.learn(3_000)
    assert model.num_timesteps >= 3_000
    assert len(model.ep_info_buffer) > 0  # VecMonitor saw whole episodes end
    evaluation = baselines.evaluate(model, "dice_envs/SumAvoid-v0", **kwargs)
    assert 0 < evaluation.value <= evaluation.optimal_value + 1e-12
    assert evaluation.gap == pytest.approx(evaluation.optimal_value - evaluation.value)


def test_maskable_ppo_trains_through_the_adapter_and_is_scored_exactly():
    kwargs = {"allowed_moves": [], "max_turn_score": 30}
    env = DiceSB3VecEnv("dice_envs/TenThousand-v0", num_envs=16, **kwargs)
    model = MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=128, seed=0, device="cpu")
    model.learn(2_000)
    assert model.num_timesteps >= 2_000
    evaluation = baselines.evaluate(model, "dice_envs/TenThousand-v0", **kwargs)
    assert 0 < evaluation.value <= evaluation.optimal_value + 1e-12
    assert 0 <= evaluation.agreement <= 1


def test_trainings_encoding_wrapper_scales_rewards_and_observations():
    """training.ppo's batch form of ScaledReward and NormalizedObservation, step for step
    against the bare adapter with the same seed."""
    from training.ppo import EncodedVecEnv

    kwargs = {"N": 5, "sides": 3}
    bare = DiceSB3VecEnv("dice_envs/SumAvoid-v0", num_envs=32, **kwargs)
    scale = np.array([27.0], dtype=np.float32)  # observations 0..27
    wrapped = EncodedVecEnv(DiceSB3VecEnv("dice_envs/SumAvoid-v0", 32, **kwargs), scale, 0.05)
    for env in (bare, wrapped):
        env.seed(4)
    first = wrapped.reset()
    np.testing.assert_allclose(first, bare.reset().reshape(-1, 1) / 27.0)
    assert all(wrapped.observation_space.contains(row) for row in first)
    for _ in range(20):
        actions = np.ones(32, dtype=np.int64)
        obs, rewards, dones, infos = wrapped.step(actions)
        raw_obs, raw_rewards, raw_dones, raw_infos = bare.step(actions)
        np.testing.assert_allclose(obs, raw_obs.reshape(-1, 1) / 27.0)
        np.testing.assert_allclose(rewards, raw_rewards * 0.05, rtol=1e-6)
        assert (dones == raw_dones).all()
        for info, raw in zip(infos, raw_infos, strict=True):
            if "terminal_observation" in info:
                assert info["terminal_observation"] == pytest.approx(
                    raw["terminal_observation"] / 27.0
                )

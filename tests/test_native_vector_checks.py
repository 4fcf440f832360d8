"""The checks both native vector envs share (`NativeVectorEnv`): the same errors, for the
games with tables and for Yahtzee."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import dice_envs  # noqa: F401  (registers the ids)

IDS = ["dice_envs/SumAvoid-v0", "dice_envs/Yahtzee-v0"]


def native(env_id: str, **options):
    return gym.make_vec(env_id, vectorization_mode="vector_entry_point", **options)


@pytest.mark.parametrize("env_id", IDS)
def test_both_native_vector_envs_refuse_the_same_bad_arguments(env_id):
    with pytest.raises(ValueError, match="num_envs"):
        native(env_id, num_envs=0)
    with pytest.raises(ValueError, match="autoreset_mode must be an AutoresetMode"):
        native(env_id, num_envs=2, autoreset_mode="Later")
    env = native(env_id, num_envs=2)
    with pytest.raises(ValueError, match="reset_mask needs a full reset first"):
        env.reset(options={"reset_mask": np.array([True, False])})
    with pytest.raises(ValueError, match="reset options may hold"):
        env.reset(options={"seed": 1})
    env.reset(seed=0)
    with pytest.raises(ValueError, match="actions must be 2 integers"):
        env.step(np.array([0, 99]))

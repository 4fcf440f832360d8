"""The rollout arithmetic the SB3 adapter's docstring and the README state: a rollout is
`n_steps * num_envs` steps, and `learn(total)` runs whole rollouts."""

import math

from sb3_contrib import MaskablePPO

from dice_envs.envs.sb3 import DiceSB3VecEnv


def test_learn_runs_whole_rollouts_of_n_steps_times_num_envs():
    env = DiceSB3VecEnv("dice_envs/SumAvoid-v0", num_envs=4, N=5, sides=3)
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=32, n_epochs=1, seed=0)
    per_rollout = model.n_steps * env.num_envs
    model.learn(100)
    assert per_rollout == 64
    assert model.num_timesteps == math.ceil(100 / per_rollout) * per_rollout == 128


def test_ppos_default_rollout_is_the_one_the_docstring_warns_of():
    model = MaskablePPO("MlpPolicy", DiceSB3VecEnv("dice_envs/Pig-v0", num_envs=64, goal=30))
    per_rollout = model.n_steps * model.n_envs
    assert per_rollout == 2048 * 64 == 131_072
    # learn(200_000) and learn(20_000) run this many steps: whole rollouts.
    assert math.ceil(200_000 / per_rollout) * per_rollout == 262_144
    assert math.ceil(20_000 / per_rollout) * per_rollout == 131_072

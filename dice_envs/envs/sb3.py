"""Stable-Baselines3's `VecEnv` over the native vector env (needs stable-baselines3 installed).

    from dice_envs.envs.sb3 import DiceSB3VecEnv
    from sb3_contrib import MaskablePPO

    env = DiceSB3VecEnv("dice_envs/Pig-v0", num_envs=8, goal=30)
    model = MaskablePPO("MlpPolicy", env, n_steps=256)  # 256 * 8 = 2,048 steps per rollout
    model.learn(20_000)  # 10 whole rollouts: model.num_timesteps == 20_480

SB3 resets copies in the same step (a finished copy's last observation goes to
``infos[i]["terminal_observation"]``), so the adapter runs the vector env in same-step mode.
``env_method("action_masks")`` gives each copy's mask, as sb3-contrib's MaskablePPO asks for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from dice_envs.envs.ten_thousand_duel_vector import TenThousandDuelVectorEnv
from dice_envs.envs.vector import DiceVectorEnv
from dice_envs.envs.yahtzee_vector import YahtzeeVectorEnv

# Every game's native vector env.
NATIVE_VECTOR_ENVS = (DiceVectorEnv, YahtzeeVectorEnv, TenThousandDuelVectorEnv)


class DiceSB3VecEnv(VecEnv):
    """A `DiceVectorEnv` as SB3's `VecEnv`: `DiceSB3VecEnv(env_id, num_envs, **kwargs)`, or
    `DiceSB3VecEnv(vector_env)` around one made in same-step mode.

    Seeding follows SB3: `seed(s)` (or `model.set_random_seed`) takes effect at the next
    `reset()`; the whole batch draws from one generator seeded with `s`. Rewards come as
    float32 and dones as terminated or truncated, with ``TimeLimit.truncated`` in the infos.

    Choosing `num_envs` and PPO's `n_steps`: a rollout is `n_steps` steps of every copy, so
    `n_steps * num_envs` steps per policy update, and `learn(total)` runs whole rollouts: it
    stops at the first multiple of `n_steps * num_envs` that reaches `total`. PPO's default
    `n_steps=2048` with 64 copies is 131,072 steps per rollout, so `learn(200_000)` runs
    262,144 steps and `learn(20_000)` 131,072 with a single update. Pick the rollout size first
    (a budget of B steps gives about B / (n_steps * num_envs) updates; the project's PPO
    configs use 8 copies and `n_steps=128`, 1,024 steps per rollout), then split it: several
    copies decorrelate the batch, and the native vector env steps them all in one numpy call,
    so more copies cost little; keep `batch_size` a divisor of `n_steps * num_envs`.
    """

    def __init__(self, env: str | DiceVectorEnv, num_envs: int | None = None, **kwargs: Any):
        if isinstance(env, str):
            if "autoreset_mode" in kwargs:
                raise ValueError(
                    "the SB3 adapter always resets in the same step: drop autoreset_mode"
                )
            env = gym.make_vec(
                env,
                num_envs=1 if num_envs is None else num_envs,
                vectorization_mode="vector_entry_point",
                autoreset_mode=AutoresetMode.SAME_STEP,
                **kwargs,
            )
        elif num_envs is not None or kwargs:
            raise ValueError("num_envs and game arguments go with an env id, not a made env")
        if not isinstance(env, NATIVE_VECTOR_ENVS):
            raise ValueError(f"env must be an env id or a native vector env, got {env!r}")
        if env.autoreset_mode != AutoresetMode.SAME_STEP:
            raise ValueError(
                f"SB3 resets in the same step: make the vector env with autoreset_mode="
                f"'SameStep', got {env.autoreset_mode.value!r}"
            )
        self.vector_env = env
        self.render_mode = env.render_mode
        self._actions: np.ndarray | None = None
        super().__init__(env.num_envs, env.single_observation_space, env.single_action_space)

    # -- stepping -------------------------------------------------------------------------

    def reset(self):
        seed = self._seeds[0]
        # SB3 keeps options per copy; the vector env takes one set for the batch.
        options = self._options[0]
        if any(other != options for other in self._options):
            raise ValueError("the native vector env takes one set of reset options for all copies")
        obs, info = self.vector_env.reset(seed=seed, options=options or None)
        self._reset_seeds()
        self._reset_options()
        masks = info["action_mask"]
        self.reset_infos = [{"action_mask": mask} for mask in masks]
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)  # the vector env checks them

    def step_wait(self):
        obs, rewards, terminated, truncated, info = self.vector_env.step(self._actions)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones).tolist():
            infos[i]["terminal_observation"] = info["final_obs"][i]
            infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        return obs, rewards.astype(np.float32), dones, infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, actions) booleans, each copy's legal actions."""
        return self.vector_env.action_masks()

    # -- the rest of SB3's interface --------------------------------------------------------

    def _indices(self, indices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, int):
            return [indices]
        return list(indices)

    def env_method(self, method_name: str, *args, indices=None, **kwargs) -> list[Any]:
        """``action_masks``: each copy's mask; any other method of the vector env is called
        once and its result given to every copy asked for."""
        indices = self._indices(indices)
        if method_name == "action_masks":
            masks = self.vector_env.action_masks()
            return [masks[i] for i in indices]
        result = getattr(self.vector_env, method_name)(*args, **kwargs)
        return [result for _ in indices]

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        """The vector env's attribute (the copies share the game and its settings)."""
        value = getattr(self.vector_env, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        setattr(self.vector_env, attr_name, value)

    def env_is_wrapped(self, wrapper_class: type[gym.Wrapper], indices=None) -> list[bool]:
        return [False for _ in self._indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        raise NotImplementedError(
            "the native vector env renders text only; use DummyVecEnv over gym.make for frames"
        )

    def close(self) -> None:
        self.vector_env.close()

"""PPO from stable-baselines3, and MaskablePPO from sb3-contrib where the game masks actions.

Observations reach the network one-hot (SB3's own encoding of MultiDiscrete) or, with
`obs_encoding: normalized`, as one number per component scaled to [0, 1]. Rewards can be
scaled (`reward_scale`) to keep value targets near 1; that changes no optimal policy, and the
exact evaluation always scores the policy on the unscaled game.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv

import dice_envs  # noqa: F401  (registers the ids)
from training.runs import atomic_write_bytes

OWN_KEYS = ("n_envs", "obs_encoding", "reward_scale", "masked")


class NormalizedObservation(gym.ObservationWrapper):
    """MultiDiscrete or Discrete observations as floats in [0, 1], one per component."""

    def __init__(self, env: gym.Env) -> None:
        super().__init__(env)
        space = env.observation_space
        nvec = np.atleast_1d(space.nvec if isinstance(space, spaces.MultiDiscrete) else space.n)
        self.scale = np.maximum(nvec - 1, 1).astype(np.float32)
        self.observation_space = spaces.Box(0.0, 1.0, shape=self.scale.shape, dtype=np.float32)

    def observation(self, observation):
        return encode(observation, self.scale)


def encode(observation, scale: np.ndarray) -> np.ndarray:
    return (np.asarray(observation, dtype=np.float32).reshape(-1, len(scale)) / scale).squeeze(0)


class ScaledReward(gym.RewardWrapper):
    def __init__(self, env: gym.Env, scale: float) -> None:
        super().__init__(env)
        self.scale = scale

    def reward(self, reward):
        return reward * self.scale


class Predictor:
    """SB3's `predict` on raw observations, whatever encoding the model was trained on."""

    def __init__(self, model, scale: np.ndarray | None, masked: bool) -> None:
        self.model, self.scale, self.masked = model, scale, masked

    def predict(self, observations, deterministic: bool = True, action_masks=None):
        if self.scale is not None:
            batch = np.asarray(observations, dtype=np.float32).reshape(-1, len(self.scale))
            observations = batch / self.scale
        extra = {"action_masks": action_masks} if self.masked and action_masks is not None else {}
        return self.model.predict(observations, deterministic=deterministic, **extra)


def algorithm_class(masked: bool):
    if masked:
        from sb3_contrib import MaskablePPO

        return MaskablePPO
    from stable_baselines3 import PPO

    return PPO


def make_vec_env(config: dict[str, Any], seed: int) -> DummyVecEnv:
    params = config["hyperparams"]

    def build(rank: int):
        def thunk():
            env = Monitor(gym.make(config["env_id"], **config["env_kwargs"]))
            if params["reward_scale"] != 1.0:
                env = ScaledReward(env, params["reward_scale"])
            if params["obs_encoding"] == "normalized":
                env = NormalizedObservation(env)
            env.reset(seed=seed * 1000 + rank)
            return env

        return thunk

    vec_env = DummyVecEnv([build(rank) for rank in range(params["n_envs"])])
    vec_env.seed(seed)
    return vec_env


class EvaluationCallback(BaseCallback):
    """Calls `on_eval(model)` each time another `every` environment steps have passed."""

    def __init__(self, every: int, next_at: int, on_eval) -> None:
        super().__init__()
        self.every, self.next_at, self.on_eval = every, next_at, on_eval

    def _on_step(self) -> bool:
        if self.num_timesteps >= self.next_at:
            self.on_eval(self.model)
            self.next_at += self.every
        return True


class PPOAgent:
    """PPO or MaskablePPO with checkpoints that `learn` resumes from."""

    def __init__(self, config: dict[str, Any], seed: int, masked: bool) -> None:
        torch.set_num_threads(1)  # two threads were never faster here
        self.config, self.seed = config, seed
        params = config["hyperparams"]
        self.masked = masked
        self.cls = algorithm_class(masked)
        self.env = make_vec_env(config, seed)
        kwargs = {k: v for k, v in params.items() if k not in OWN_KEYS}
        kwargs.setdefault("policy", "MlpPolicy")
        self.model = self.cls(env=self.env, seed=seed, device="cpu", verbose=0, **kwargs)
        self.training_seconds = 0.0
        probe = gym.make(config["env_id"], **config["env_kwargs"]).observation_space
        nvec = np.atleast_1d(probe.nvec if isinstance(probe, spaces.MultiDiscrete) else probe.n)
        self.scale = (
            np.maximum(nvec - 1, 1).astype(np.float32)
            if params["obs_encoding"] == "normalized"
            else None
        )

    @property
    def step(self) -> int:
        return int(self.model.num_timesteps)

    def learn(self, until: int, every: int, on_eval) -> None:
        """Train to `until` steps, calling `on_eval` every `every` steps (checkpoint there)."""
        start = time.perf_counter()
        next_at = (self.step // every + 1) * every

        def timed_eval(model):
            self.training_seconds += time.perf_counter() - timed_eval.start
            on_eval(self)
            timed_eval.start = time.perf_counter()

        timed_eval.start = start
        callback = EvaluationCallback(every, next_at, timed_eval)
        self.model.learn(
            total_timesteps=until - self.step, reset_num_timesteps=False, callback=callback
        )
        self.training_seconds += time.perf_counter() - timed_eval.start

    def predictor(self) -> Predictor:
        return Predictor(self.model, self.scale, self.masked)

    def save(self, path: Path) -> None:
        temporary = path.with_name(f".{path.name}.tmp.zip")
        self.model.save(temporary)
        os.replace(temporary, path)
        meta = {"training_seconds": self.training_seconds, "step": self.step}
        atomic_write_bytes(path.with_suffix(".json"), json.dumps(meta).encode())

    def load(self, path: Path) -> None:
        self.model = self.cls.load(path, env=self.env, device="cpu")
        meta = json.loads(path.with_suffix(".json").read_text())
        self.training_seconds = meta["training_seconds"]

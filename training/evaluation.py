"""Scoring a learning agent: its greedy policy over every reachable observation, evaluated
exactly, beside the mean return of a few hundred seeded episodes."""

from __future__ import annotations

import time
from typing import Any

import gymnasium as gym
import numpy as np

import baselines
import dice_envs  # noqa: F401  (registers the ids)


class ExactScorer:
    """Enumerates one game (env id and keyword arguments) once and scores policies on it."""

    def __init__(self, env_id: str, env_kwargs: dict[str, Any], episodes: int, seed: int) -> None:
        self.env_id, self.env_kwargs = env_id, env_kwargs
        self.mdp, self.optimum = baselines.enumerated(env_id, **env_kwargs)
        self.episodes, self.seed = episodes, seed
        self._env = gym.make(env_id, **env_kwargs).unwrapped

    def score(self, actions: np.ndarray) -> dict[str, float]:
        """Exact value, gap and agreement of an action per MDP state; Monte Carlo beside it."""
        start = time.perf_counter()
        evaluation = baselines.score_actions(actions, self.mdp, self.optimum)
        result = evaluation.as_dict()
        result["mc_mean"], result["mc_stderr"] = self.monte_carlo(actions)
        result["seconds"] = time.perf_counter() - start
        return result

    def monte_carlo(self, actions: np.ndarray) -> tuple[float, float]:
        """Mean return (and its standard error) of `episodes` seeded episodes."""
        if self.episodes == 0:
            return float("nan"), float("nan")
        env, index_of = self._env, self.mdp.index_of
        returns = np.empty(self.episodes)
        obs, _ = env.reset(seed=self.seed)
        for episode in range(self.episodes):
            total, done = 0.0, False
            while not done:
                obs, reward, done, truncated, _ = env.step(int(actions[index_of(obs)]))
                total += reward
                done = done or truncated
            returns[episode] = total
            obs, _ = env.reset()
        stderr = returns.std(ddof=1) / np.sqrt(self.episodes) if self.episodes > 1 else 0.0
        return float(returns.mean()), float(stderr)

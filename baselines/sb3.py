"""The exact gap inside anyone's Stable-Baselines3 training loop.

    from baselines.sb3 import ExactGapCallback
    model.learn(200_000, callback=ExactGapCallback("dice_envs/Pig-v0", eval_freq=2_000, goal=30))

Every `eval_freq` calls the callback scores the model being trained exactly (`baselines.evaluate`:
a sparse linear solve on the game's tables, no episodes) and records `exact/value`,
`exact/gap`, `exact/relative_gap` and `exact/agreement` through SB3's logger, so they reach
whatever outputs it was configured with (stdout, CSV, TensorBoard). With `stop_at_gap` (or
`stop_at_relative_gap`) training stops once the gap is that small. Needs stable-baselines3.
"""

from __future__ import annotations

from typing import Any

from stable_baselines3.common.callbacks import BaseCallback

import baselines


class ExactGapCallback(BaseCallback):
    """Score the model exactly every `eval_freq` calls (SB3 calls a callback once per step of
    its vector env, so `eval_freq` calls are `eval_freq * n_envs` environment steps).

    Args:
        env_id: the game the model trains on; `env_kwargs` are its keyword arguments.
        eval_freq: calls between evaluations (>= 1).
        deterministic: score the greedy policy (True) or the policy as it samples (False).
        stop_at_gap: stop training once the gap is at most this (None: never).
        stop_at_relative_gap: stop training once the relative gap is at most this (None:
            never).
        obs_transform: for a model trained through an observation wrapper (see
            `baselines.evaluate`).
        verbose: 1 prints each evaluation's value, gap and agreement.
        **env_kwargs: the game's keyword arguments.

    Attributes:
        evaluations: `(timesteps, Evaluation)` of every evaluation so far, oldest first;
            `timesteps` is the model's `num_timesteps` when it was scored.
    """

    def __init__(
        self,
        env_id: str,
        eval_freq: int = 10_000,
        *,
        deterministic: bool = True,
        stop_at_gap: float | None = None,
        stop_at_relative_gap: float | None = None,
        obs_transform: Any = None,
        verbose: int = 0,
        **env_kwargs: Any,
    ) -> None:
        super().__init__(verbose)
        if isinstance(eval_freq, bool) or not isinstance(eval_freq, int) or eval_freq < 1:
            raise ValueError(f"eval_freq must be an integer >= 1, got {eval_freq!r}")
        for name, value in (("stop_at_gap", stop_at_gap), ("stop_at_relative_gap",
                                                            stop_at_relative_gap)):  # fmt: skip
            if value is not None and (isinstance(value, bool) or not value >= 0):
                raise ValueError(f"{name} must be a number >= 0 or None, got {value!r}")
        self.env_id, self.env_kwargs = env_id, env_kwargs
        self.eval_freq, self.deterministic = eval_freq, deterministic
        self.stop_at_gap, self.stop_at_relative_gap = stop_at_gap, stop_at_relative_gap
        self.obs_transform = obs_transform
        self.evaluations: list[tuple[int, baselines.Evaluation]] = []

    def _on_step(self) -> bool:
        if self.n_calls % self.eval_freq:
            return True
        return self.evaluate_now()

    def evaluate_now(self) -> bool:
        """Score the model now and record it; False if training should stop."""
        score = baselines.evaluate(
            self.model,
            self.env_id,
            deterministic=self.deterministic,
            obs_transform=self.obs_transform,
            **self.env_kwargs,
        )
        self.evaluations.append((self.num_timesteps, score))
        for key in ("value", "gap", "relative_gap", "agreement"):
            self.logger.record(f"exact/{key}", float(getattr(score, key)))
        if self.verbose:
            print(
                f"{self.num_timesteps} steps: exact value {score.value:.6g}, gap {score.gap:.3g}"
                f" ({100 * score.relative_gap:.3g} %), agreement {100 * score.agreement:.3g} %"
            )
        if self.stop_at_gap is not None and score.gap <= self.stop_at_gap:
            return False
        return not (
            self.stop_at_relative_gap is not None
            and score.relative_gap <= self.stop_at_relative_gap
        )


__all__ = ["ExactGapCallback"]

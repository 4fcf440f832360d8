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
        critic_errors: for a model with a critic (`policy.predict_values`: PPO, A2C), also
            hold the critic against the exact value of the policy it acts with, its action
            distribution, under the model's `gamma` (`baselines.value_errors`), at every
            evaluation. It costs a second exact evaluation (the sampling policy's), about as
            long as the first. Models without a critic are not asked.
        verbose: 1 prints each evaluation's value, gap and agreement (and the critic's error).
        **env_kwargs: the game's keyword arguments.

    Attributes:
        evaluations: `(timesteps, Evaluation)` of every evaluation so far, oldest first;
            `timesteps` is the model's `num_timesteps` when it was scored.
        critic_evaluations: `(timesteps, ValueErrors)` of every evaluation of the critic so
            far, oldest first (empty without a critic or with `critic_errors=False`). Logged
            as `exact/critic_error` (the visit-weighted mean error: > 0 optimistic),
            `exact/critic_abs_error` and `exact/critic_changed_share`.
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
        critic_errors: bool = True,
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
        if not isinstance(critic_errors, bool):
            raise ValueError(f"critic_errors must be True or False, got {critic_errors!r}")
        self.obs_transform, self.critic_errors = obs_transform, critic_errors
        self.evaluations: list[tuple[int, baselines.Evaluation]] = []
        self.critic_evaluations: list[tuple[int, baselines.ValueErrors]] = []

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
        critic = self._critic_now()
        if self.verbose:
            print(
                f"{self.num_timesteps} steps: exact value {score.value:.6g}, gap {score.gap:.3g}"
                f" ({100 * score.relative_gap:.3g} %), agreement {100 * score.agreement:.3g} %"
                + (f", critic error {critic.mean_error:+.3g}" if critic is not None else "")
            )
        if self.stop_at_gap is not None and score.gap <= self.stop_at_gap:
            return False
        return not (
            self.stop_at_relative_gap is not None
            and score.relative_gap <= self.stop_at_relative_gap
        )

    def _critic_now(self) -> baselines.ValueErrors | None:
        """The critic against the exact value of the policy it acts with (None without one)."""
        policy = getattr(self.model, "policy", None)
        if not self.critic_errors or not callable(getattr(policy, "predict_values", None)):
            return None
        errors = baselines.value_errors(
            self.model,
            self.env_id,
            gamma=float(getattr(self.model, "gamma", 1.0)),
            obs_transform=self.obs_transform,
            **self.env_kwargs,
        )
        self.critic_evaluations.append((self.num_timesteps, errors))
        for key, field_name in (
            ("critic_error", "mean_error"),
            ("critic_abs_error", "mean_abs_error"),
            ("critic_changed_share", "changed_share"),
        ):
            self.logger.record(f"exact/{key}", float(getattr(errors, field_name)))
        return errors


__all__ = ["ExactGapCallback"]

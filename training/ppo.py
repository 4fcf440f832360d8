"""PPO from stable-baselines3, and MaskablePPO from sb3-contrib where the game masks actions.

Observations reach the network one-hot (SB3's own encoding of MultiDiscrete) or, with
`obs_encoding: normalized`, as one number per component scaled to [0, 1]. Rewards can be
scaled (`reward_scale`) to keep value targets near 1; that changes no optimal policy, and the
exact evaluation always scores the policy on the unscaled game.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import os
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.utils import LinearSchedule
from stable_baselines3.common.vec_env import DummyVecEnv, VecEnv, VecEnvWrapper

import dice_envs  # noqa: F401  (registers the ids)
from dice_envs.envs.sb3 import DiceSB3VecEnv
from dice_envs.files import atomic_write_bytes
from dice_envs.games.seat_policy import named_table
from training.streams import RunStreams, generator, numpy_global_seed, seed_env, torch_seed

OWN_KEYS = ("n_envs", "obs_encoding", "reward_scale", "masked", "vec_env")


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
    """SB3's `predict` on raw observations, for a model trained on normalised ones."""

    def __init__(self, model, scale: np.ndarray | None, masked: bool) -> None:
        self.model, self.scale, self.masked = model, scale, masked

    def predict(self, observations, deterministic: bool = True, action_masks=None):
        if self.scale is not None:
            batch = np.asarray(observations, dtype=np.float32).reshape(-1, len(self.scale))
            observations = batch / self.scale
        extra = {"action_masks": action_masks} if self.masked and action_masks is not None else {}
        return self.model.predict(observations, deterministic=deterministic, **extra)


def silence_logger(model) -> None:
    """Give `model` a logger that writes nowhere. Without one, SB3's `learn` makes its default
    logger, which creates an empty folder `SB3-<date>` in the temporary directory at every
    call (even at verbose 0, where it writes nothing there)."""
    model.set_logger(Logger(folder=None, output_formats=[]))


def algorithm_class(masked: bool):
    if masked:
        from sb3_contrib import MaskablePPO

        return MaskablePPO
    from stable_baselines3 import PPO

    return PPO


class EncodedVecEnv(VecEnvWrapper):
    """The native path's `ScaledReward` and `NormalizedObservation`, for a whole batch."""

    def __init__(self, venv: VecEnv, scale: np.ndarray | None, reward_scale: float) -> None:
        space = (
            venv.observation_space
            if scale is None
            else spaces.Box(0.0, 1.0, shape=scale.shape, dtype=np.float32)
        )
        super().__init__(venv, observation_space=space)
        self.scale, self.reward_scale = scale, reward_scale

    def _encode(self, observations):
        if self.scale is None:
            return observations
        return np.asarray(observations, dtype=np.float32).reshape(-1, len(self.scale)) / self.scale

    def reset(self):
        return self._encode(self.venv.reset())

    def step_wait(self):
        observations, rewards, dones, infos = self.venv.step_wait()
        if self.scale is not None:
            for info in infos:
                if "terminal_observation" in info:
                    info["terminal_observation"] = encode(info["terminal_observation"], self.scale)
        return self._encode(observations), rewards * self.reward_scale, dones, infos


def observation_scale(env_id: str, env_kwargs: dict[str, Any]) -> np.ndarray:
    space = gym.make(env_id, **env_kwargs).observation_space
    nvec = np.atleast_1d(space.nvec if isinstance(space, spaces.MultiDiscrete) else space.n)
    return np.maximum(nvec - 1, 1).astype(np.float32)


def random_table(game: Any) -> np.ndarray:
    """The two-player model's named policy "random" as a table over its observation grid
    (self-play's first opponent); a model whose own named policy is a batched rule is
    tabulated here."""
    table = game.named_policy("random")
    if not isinstance(table, np.ndarray):
        table = named_table(game, "random")
    if not isinstance(table, np.ndarray):
        raise ValueError(
            "self-play PPO keeps its opponents as tables over the observation grid, and this "
            "game's grid is too large to tabulate: choose smaller game arguments"
        )
    return table


def make_vec_env(config: dict[str, Any], streams: RunStreams) -> VecEnv:
    """`n_envs` copies of the game: the native vector env (one dice stream for the batch), or
    SB3's DummyVecEnv (a dice stream per copy); SB3's `seed + rank` is not used."""
    params = config["hyperparams"]
    if params["vec_env"] == "native":
        env = DiceSB3VecEnv(config["env_id"], params["n_envs"], **config["env_kwargs"])
        env.vector_env.np_random = generator(streams.envs[0])
        scale = None
        if params["obs_encoding"] == "normalized":
            scale = observation_scale(config["env_id"], config["env_kwargs"])
        if scale is None and params["reward_scale"] == 1.0:
            return env
        return EncodedVecEnv(env, scale, params["reward_scale"])

    def build(rank: int):
        def thunk():
            env = Monitor(gym.make(config["env_id"], **config["env_kwargs"]))
            if params["reward_scale"] != 1.0:
                env = ScaledReward(env, params["reward_scale"])
            if params["obs_encoding"] == "normalized":
                env = NormalizedObservation(env)
            seed_env(env, streams.envs[rank])
            return env

        return thunk

    return DummyVecEnv([build(rank) for rank in range(params["n_envs"])])


def sb3_schedule(value: float | dict[str, Any]):
    """A config schedule as SB3 takes it: a float, or a function of the progress remaining."""
    if isinstance(value, dict):
        return LinearSchedule(value["start"], value["end"], value["fraction"])
    return value


ACTIVATIONS = {"tanh": "Tanh", "relu": "ReLU", "elu": "ELU", "leaky_relu": "LeakyReLU"}


def sb3_kwargs(params: dict[str, Any]) -> dict[str, Any]:
    """The algorithm's keyword arguments from the checked hyperparameters."""
    kwargs = {k: v for k, v in params.items() if k not in OWN_KEYS}
    for key in ("learning_rate", "clip_range"):
        if key in kwargs:
            kwargs[key] = sb3_schedule(kwargs[key])
    policy_kwargs = dict(kwargs.get("policy_kwargs") or {})
    if "activation_fn" in policy_kwargs:
        policy_kwargs["activation_fn"] = getattr(
            torch.nn, ACTIVATIONS[policy_kwargs["activation_fn"]]
        )
    if policy_kwargs:
        kwargs["policy_kwargs"] = policy_kwargs
    return kwargs


class Checkpointer(BaseCallback):
    """Calls `on_eval()` at the first rollout start at or past each multiple of `every` steps,
    and `on_steps(steps)` at every rollout start.

    A rollout start is the one point of SB3's loop where no half-collected rollout exists: the
    parameters, optimiser, last observations, env states and random states are everything, so
    a checkpoint taken there resumes bit for bit.
    """

    def __init__(self, every: int, next_at: int, on_eval, on_steps) -> None:
        super().__init__()
        self.every, self.next_at = every, next_at
        self.on_eval, self.on_steps = on_eval, on_steps

    def _on_rollout_start(self) -> None:
        self.on_steps(self.num_timesteps)
        if self.num_timesteps >= self.next_at:
            self.on_eval()
            self.next_at = (self.num_timesteps // self.every + 1) * self.every

    def _on_step(self) -> bool:
        return True


@contextlib.contextmanager
def unchecked_distributions():
    """Torch distributions without argument validation while SB3 trains: the checks of every
    minibatch's Categorical (simplex, support) were about a tenth of MaskablePPO's time on
    Yahtzee, and they only raise, never change a value, so training is bit for bit the same."""
    before = torch.distributions.Distribution._validate_args
    torch.distributions.Distribution.set_default_validate_args(False)
    try:
        yield
    finally:
        torch.distributions.Distribution.set_default_validate_args(before)


class PPOAgent:
    """PPO or MaskablePPO with checkpoints that `learn` resumes from bit for bit."""

    def __init__(self, config: dict[str, Any], streams: RunStreams, masked: bool) -> None:
        torch.set_num_threads(1)  # two threads were never faster here, and one is reproducible
        self.config, self.streams = config, streams
        params = config["hyperparams"]
        self.masked = masked
        self.cls = algorithm_class(masked)
        self.env = make_vec_env(config, streams)
        self._seed_globals()
        kwargs = sb3_kwargs(params)
        kwargs.setdefault("policy", "MlpPolicy")
        # seed=None: SB3 would reseed every env copy with seed + rank; the streams did it.
        self.model = self.cls(env=self.env, seed=None, device="cpu", verbose=0, **kwargs)
        silence_logger(self.model)
        self.training_seconds = 0.0
        self.scale = (
            observation_scale(config["env_id"], config["env_kwargs"])
            if params["obs_encoding"] == "normalized"
            else None
        )

    def _seed_globals(self) -> None:
        torch.manual_seed(torch_seed(self.streams.torch))
        np.random.seed(numpy_global_seed(self.streams.numpy_global))

    @property
    def step(self) -> int:
        return int(self.model.num_timesteps)

    def learn(self, until: int, every: int, on_eval, on_steps=lambda steps: None) -> None:
        """Train to `until` steps; `on_eval()` at each checkpoint point (see Checkpointer)."""
        clock = [time.perf_counter()]

        def timed_eval() -> None:
            self.training_seconds += time.perf_counter() - clock[0]
            on_eval()
            clock[0] = time.perf_counter()

        next_at = (self.step // every + 1) * every
        callback = Checkpointer(every, next_at, timed_eval, on_steps)
        try:
            with unchecked_distributions():
                self.model.learn(
                    total_timesteps=until - self.step, reset_num_timesteps=False, callback=callback
                )
        finally:
            self.training_seconds += time.perf_counter() - clock[0]
            clock[0] = time.perf_counter()

    def predictor(self):
        """The greedy policy on raw observations, as every policy argument takes it: the SB3
        model itself where it was trained on them (one-hot: SB3 encodes inside), so the
        exact evaluations reach `baselines.policy_forms`' fast path; else a `Predictor`."""
        if self.scale is None:
            return self.model
        return Predictor(self.model, self.scale, self.masked)

    def stochastic_policy(self) -> dict[str, Any]:
        """The policy it plays, its action distribution, as `baselines.evaluate`'s arguments."""
        return {"policy": self.model, "obs_transform": self._transform(), "deterministic": False}

    def _transform(self):
        """Raw observations as the model was trained on them (None: as they are)."""
        scale = self.scale
        if scale is None:
            return None

        def transform(obs):
            return np.asarray(obs, np.float32).reshape(-1, len(scale)) / scale

        return transform

    @contextlib.contextmanager
    def inference_threads(self):
        """Torch on every core this process may use (the exact evaluations' large batches),
        then back to the one thread training uses."""
        before = torch.get_num_threads()
        cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
        torch.set_num_threads(len(cores) if cores else os.cpu_count() or 1)
        try:
            yield
        finally:
            torch.set_num_threads(before)

    def critic_values(self, tables) -> np.ndarray:
        """The critic's V at every state of `tables`, in the game's reward units (the training
        reward is scaled by `reward_scale`, so the critic's raw outputs are divided by it)."""
        observations = np.asarray(tables.observation_array)
        if self.scale is not None:
            observations = observations.astype(np.float32) / self.scale
        elif isinstance(self.model.observation_space, spaces.Discrete):
            observations = observations[:, 0]  # one number per observation
        policy, values = self.model.policy, []
        with torch.no_grad():
            for start in range(0, len(observations), 65_536):
                batch, _ = policy.obs_to_tensor(observations[start : start + 65_536])
                values.append(policy.predict_values(batch).numpy().reshape(-1))
        return np.concatenate(values) / self.config["hyperparams"]["reward_scale"]

    def probabilities(self, tables) -> np.ndarray:
        """The action probabilities the policy plays (not its greedy action) in every state of
        `tables`, read from its action distribution, masked as it was trained."""
        import baselines

        return baselines.policy_probabilities(
            self.model, tables, obs_transform=self._transform(), deterministic=False
        )

    def grid_probabilities(self, game) -> np.ndarray:
        """The action probabilities it plays at every observation of a two-player game's grid
        (the mover's view), as an opponent table: shape observation_nvec + (num_actions,)."""
        from baselines.exploitability import observation_grid

        probs = self.probabilities(observation_grid(game))
        return probs.reshape(tuple(game.observation_nvec) + (game.num_actions,))

    def checkpoint_state(self) -> dict[str, Any]:
        """Everything a resume needs, taken at a rollout start."""
        buffer = io.BytesIO()
        self.model.save(buffer)
        state = {
            "model": buffer.getvalue(),
            "step": self.step,
            "training_seconds": self.training_seconds,
            # None before the first rollout; SB3 then resets the envs, from restored dice.
            "last_obs": copy.deepcopy(self.model._last_obs),
            "last_episode_starts": copy.deepcopy(self.model._last_episode_starts),
            "torch_rng": torch.get_rng_state(),
            "numpy_rng": np.random.get_state(),
        }
        native = self._native()
        if native is not None:
            state["vector_env"] = native.snapshot()
        else:
            envs = [env.unwrapped for env in self.env.envs]
            state["env_states"] = [env.state for env in envs]
            state["env_rngs"] = [env.np_random.bit_generator.state for env in envs]
        return state

    def _native(self):
        """The native vector env under the SB3 adapter (and encoding wrapper), if any."""
        env = self.env
        while isinstance(env, VecEnvWrapper):
            env = env.venv
        return env.vector_env if isinstance(env, DiceSB3VecEnv) else None

    def restore(self, state: dict[str, Any]) -> None:
        self.model = self.cls.load(io.BytesIO(state["model"]), env=self.env, device="cpu")
        silence_logger(self.model)
        native = self._native()
        if native is not None:
            native.restore(state["vector_env"])
        else:
            for env, env_state, rng in zip(
                self.env.envs, state["env_states"], state["env_rngs"], strict=True
            ):
                env.reset(options={"state": env_state})
                env.unwrapped.np_random.bit_generator.state = rng
        if state["last_obs"] is not None:
            self.model._last_obs = state["last_obs"]
            self.model._last_episode_starts = state["last_episode_starts"]
        torch.set_rng_state(state["torch_rng"])
        np.random.set_state(state["numpy_rng"])
        self.training_seconds = state["training_seconds"]

    def save_policy(self, path: Path) -> None:
        buffer = io.BytesIO()
        self.model.save(buffer)
        atomic_write_bytes(path, buffer.getvalue())

    def parameters(self) -> dict[str, np.ndarray]:
        return {
            k: v.detach().cpu().numpy().copy() for k, v in self.model.policy.state_dict().items()
        }


class SelfPlayPPOAgent(PPOAgent):
    """PPO (or MaskablePPO) against a pool of its own past policies.

    The agent trains in the game's fold against one opponent at a time: a policy drawn
    uniformly from the pool, for one evaluation interval. After each interval its greedy
    policy (an action table over the whole observation grid, the mover's view), or with
    `policies: stochastic` the action probabilities it plays, joins the pool, which keeps the
    `pool` latest; the pool starts with the uniformly random policy. The draws
    come from the run's exploration stream (unused by PPO otherwise), and the dice continue
    from one env to the next, so a run resumes bit for bit from any evaluation point. Games in
    progress when the opponent changes are abandoned (the new env starts new games).
    """

    def __init__(self, config: dict[str, Any], streams: RunStreams, masked: bool, scorer) -> None:
        if config["hyperparams"]["vec_env"] != "native":
            raise ValueError("self-play PPO runs on the native vector env (vec_env: native)")
        self.scorer = scorer
        self.pool_size = config["selfplay"]["pool"]
        self.stochastic_pool = config["selfplay"].get("policies") == "stochastic"
        self.pool: list[np.ndarray] = [random_table(scorer.game)]
        self.pool_rng = generator(streams.exploration)
        self.opponent = self.pool[0]
        super().__init__(self._with_opponent(config, self.opponent), streams, masked)
        self.config = config

    @staticmethod
    def _with_opponent(config: dict[str, Any], opponent: np.ndarray) -> dict[str, Any]:
        return {**config, "env_kwargs": {**config["env_kwargs"], "opponent": opponent}}

    def _use_opponent(self, opponent: np.ndarray) -> None:
        """Train against `opponent` from now on: a new vector env whose dice continue."""
        self._build_env(opponent)
        self.model.set_env(self.env)  # and the next learn starts new games

    def _build_env(self, opponent: np.ndarray) -> None:
        dice = self._native().np_random
        self.opponent = opponent
        self.env = make_vec_env(self._with_opponent(self.config, opponent), self.streams)
        self._native().np_random = dice

    def greedy_table(self) -> np.ndarray:
        """The greedy action at every observation of the grid, as the mover sees it."""
        grid, legal = self.scorer.grid
        extra = {"action_masks": legal} if self.masked else {}
        actions, _ = self.predictor().predict(grid, deterministic=True, **extra)
        return np.asarray(actions, dtype=np.int8).reshape(self.scorer.game.observation_nvec)

    def stochastic_table(self) -> np.ndarray:
        return self.grid_probabilities(self.scorer.game)

    def learn(self, until: int, every: int, on_eval, on_steps=lambda steps: None) -> None:
        """One evaluation interval at a time: train, add to the pool, draw the next opponent,
        then `on_eval()` (whose checkpoint holds the pool and the opponent drawn)."""
        progress = _Progress(on_steps)
        while self.step < until:
            boundary = min(until, (self.step // every + 1) * every)
            start = time.perf_counter()
            model = self.model
            # SB3's schedules (learning rate, clip range) run over the whole budget, as in one
            # learn call; learn(interval) alone would end them at each interval's end.
            model._update_current_progress_remaining = functools.partial(
                _progress_on_budget, model, total=until
            )
            try:
                with unchecked_distributions():
                    self.model.learn(
                        total_timesteps=boundary - self.step,
                        reset_num_timesteps=False,
                        callback=progress,
                    )
                newest = self.stochastic_table() if self.stochastic_pool else self.greedy_table()
                self.pool = [*self.pool, newest][-self.pool_size :]
                self._use_opponent(self.pool[int(self.pool_rng.integers(len(self.pool)))])
            finally:
                del model._update_current_progress_remaining  # SB3's own again (for saving)
                self.training_seconds += time.perf_counter() - start
            on_eval()

    def checkpoint_state(self) -> dict[str, Any]:
        state = super().checkpoint_state()
        state["pool"] = [table.copy() for table in self.pool]
        state["opponent"] = self.opponent.copy()
        state["pool_rng"] = self.pool_rng.bit_generator.state
        return state

    def restore(self, state: dict[str, Any]) -> None:
        self.pool = [table.copy() for table in state["pool"]]
        self.pool_rng.bit_generator.state = state["pool_rng"]
        self._build_env(state["opponent"])
        super().restore(state)  # loads the model onto the new env


def _progress_on_budget(model, num_timesteps: int, _interval_end: int, total: int) -> None:
    type(model)._update_current_progress_remaining(model, num_timesteps, total)


class _Progress(BaseCallback):
    """Reports the steps at every rollout start."""

    def __init__(self, on_steps) -> None:
        super().__init__()
        self.on_steps = on_steps

    def _on_rollout_start(self) -> None:
        self.on_steps(self.num_timesteps)

    def _on_step(self) -> bool:
        return True

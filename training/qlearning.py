"""Tabular Q-learning for any env with a finite Discrete or MultiDiscrete observation space.

Epsilon-greedy over the legal actions (`info["action_mask"]`, taken to depend on the
observation only, as in every dice_envs game); a linear schedule for epsilon; for the learning
rate either a linear schedule or (offset / (offset + n(s, a) - 1))**power, with n(s, a) the
visits of the pair: 1 / n**power for offset 1 (a sample average for power 1; rarely visited
pairs still learn fast), the generalized harmonic step size for power 1 and a larger offset
(W. B. Powell, Approximate Dynamic Programming, 2nd ed., 2011). Both satisfy the
Robbins-Monro conditions for power in (0.5, 1]. The offset matters where values are
bootstrapped through long episodes (the solitaire Pig games: about 50 steps to the goal,
undiscounted): with 1 / n**power the step size of the often-visited early states falls faster
than the values behind them settle, so their estimates trail their targets and stay near
`initial_q` (the training guide gives the numbers). All randomness comes from
the run's streams (training/streams.py): exploration draws from one, the env's dice from
another. The same seed gives the same Q table bit for bit, resumed or not.

Written by hand: no maintained library offers tabular Q-learning on Gymnasium envs with action
masks and exact resumption.
"""

from __future__ import annotations

import io
import time
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

from dice_envs.files import atomic_write_bytes
from training.streams import RunStreams, generator, seed_env


def linear(schedule: dict[str, float], progress: float) -> float:
    """`start` to `end` over the first `fraction` of training, then `end`."""
    done = min(1.0, progress / schedule["fraction"])
    return schedule["start"] + (schedule["end"] - schedule["start"]) * done


def visit_rate(visits, power: float, offset: float):
    """The step size of a pair's `visits`-th update: (offset / (offset + visits - 1))**power."""
    if offset == 1.0:
        return visits**-power  # the same floats as before the offset existed
    return (offset / (offset + visits - 1.0)) ** power


def observation_sizes(space: gym.Space) -> tuple[int, ...]:
    if isinstance(space, spaces.Discrete):
        return (int(space.n),)
    if isinstance(space, spaces.MultiDiscrete) and space.nvec.ndim == 1:
        return tuple(int(n) for n in space.nvec)
    raise ValueError(f"tabular Q-learning needs a Discrete or MultiDiscrete space, got {space}")


class QLearning:
    """The learner: a Q table over flat observation indices, trained in chunks of steps."""

    def __init__(
        self, env: gym.Env, hyperparams: dict[str, Any], streams: RunStreams, timesteps: int
    ) -> None:
        self.env = env
        self.hyperparams = hyperparams
        self.timesteps = timesteps
        sizes = observation_sizes(env.observation_space)
        self.sizes = sizes
        self.strides = tuple(int(np.prod(sizes[i + 1 :])) for i in range(len(sizes)))
        self.num_actions = int(env.action_space.n)
        # An optimistic start (initial_q above every return) makes the agent try everything.
        initial = float(hyperparams.get("initial_q", 0.0))
        self.q = [[initial] * self.num_actions for _ in range(int(np.prod(sizes)))]
        self.visits = [[0] * self.num_actions for _ in range(len(self.q))]
        self.rng = generator(streams.exploration)
        self.step = 0
        self.training_seconds = 0.0
        self._legal: dict[int, tuple[int, ...]] = {}
        seed_env(env, streams.envs[0])
        self.obs, self.info = env.reset()

    def index(self, obs) -> int:
        if len(self.sizes) == 1:
            return int(obs)
        return sum(int(o) * s for o, s in zip(obs, self.strides, strict=True))

    def _legal_actions(self, state: int, info: dict) -> tuple[int, ...]:
        legal = self._legal.get(state)
        if legal is None:
            mask = info.get("action_mask")
            legal = tuple(range(self.num_actions)) if mask is None else tuple(np.flatnonzero(mask))
            legal = tuple(int(a) for a in legal)
            self._legal[state] = legal
        return legal

    def learn(self, until: int) -> None:
        """Train until `until` environment steps in all."""
        start = time.perf_counter()
        q, rng, env = self.q, self.rng.random, self.env
        gamma = self.hyperparams["gamma"]
        eps_schedule, lr_schedule = self.hyperparams["epsilon"], self.hyperparams["learning_rate"]
        power, offset = lr_schedule.get("power"), float(lr_schedule.get("offset", 1.0))
        visits = self.visits
        total = self.timesteps
        obs, info = self.obs, self.info
        state = self.index(obs)
        for step in range(self.step, until):
            progress = step / total
            legal = self._legal_actions(state, info)
            row = q[state]
            if rng() < linear(eps_schedule, progress):
                action = legal[int(rng() * len(legal))]
            else:
                action = max(legal, key=row.__getitem__)
            obs, reward, terminated, truncated, info = env.step(action)
            if terminated:
                target = reward
            else:
                next_state = self.index(obs)
                next_row = q[next_state]
                best = max(next_row[a] for a in self._legal_actions(next_state, info))
                target = reward + gamma * best
            if power is None:
                rate = linear(lr_schedule, progress)
            else:
                counts = visits[state]
                counts[action] += 1
                rate = visit_rate(counts[action], power, offset)
            row[action] += rate * (target - row[action])
            if terminated or truncated:
                obs, info = env.reset()
                next_state = self.index(obs)
            state = next_state
        self.obs, self.info, self.step = obs, info, until
        self.training_seconds += time.perf_counter() - start

    def q_table(self) -> np.ndarray:
        return np.array(self.q)

    def greedy_actions(self, observations: list, legal: np.ndarray) -> np.ndarray:
        """The greedy legal action for each observation (lowest-numbered on ties)."""
        rows = self.q_table()[[self.index(obs) for obs in observations]]
        return np.where(legal, rows, -np.inf).argmax(axis=1)

    # Checkpoints: the Q table, the visit counts, the step, the env's position and both
    # random states; restoring them continues the run bit for bit.
    def checkpoint_state(self) -> dict[str, Any]:
        unwrapped = self.env.unwrapped
        return {
            "q": self.q_table(),
            "visits": np.array(self.visits),
            "step": self.step,
            "training_seconds": self.training_seconds,
            "rng": self.rng.bit_generator.state,
            "env_rng": unwrapped.np_random.bit_generator.state,
            "env_state": unwrapped.state,
        }

    def restore(self, state: dict[str, Any]) -> None:
        self.q = state["q"].tolist()
        self.visits = state["visits"].tolist()
        self.step, self.training_seconds = state["step"], state["training_seconds"]
        self.rng.bit_generator.state = state["rng"]
        self.obs, self.info = self.env.reset(options={"state": state["env_state"]})
        self.env.unwrapped.np_random.bit_generator.state = state["env_rng"]

    def save_policy(self, path: Path) -> None:
        buffer = io.BytesIO()
        np.save(buffer, self.q_table())
        atomic_write_bytes(path, buffer.getvalue())


class VectorQLearning(QLearning):
    """The same learner on the native vector env: `n_envs` copies step at once, and each batch
    updates the Q table in a few numpy operations.

    The env must reset copies in the same step (`autoreset_mode="SameStep"`): a finished copy's
    next observation is then its new episode's start, and its end is read from the infos.
    A batch is one synchronous update: the k copies that took the same (state, action) give
    their mean target, applied as k updates would apply it. With the visit-count rate,
    power 1 and offset 1 that is exactly the sample average; otherwise the rate is
    min(1, k * r(n)) (r the visit rate, n the visits after the batch); with a linear rate r,
    1 - (1 - r)**k.
    Exploration draws from the run's exploration stream, the dice from the batch's one stream.
    """

    def __init__(
        self, env, hyperparams: dict[str, Any], streams: RunStreams, timesteps: int
    ) -> None:
        if env.metadata.get("autoreset_mode") != AutoresetMode.SAME_STEP:
            raise ValueError(
                "VectorQLearning needs a vector env with autoreset_mode='SameStep', got "
                f"{env.metadata.get('autoreset_mode')!r}"
            )
        self.env = env
        self.hyperparams = hyperparams
        self.timesteps = timesteps
        self.sizes = self._table_grid(env)
        self.strides = np.array(
            [int(np.prod(self.sizes[i + 1 :])) for i in range(len(self.sizes))], dtype=np.int64
        )
        self.num_actions = int(env.single_action_space.n)
        self.table = np.full(
            (int(np.prod(self.sizes)), self.num_actions), float(hyperparams.get("initial_q", 0.0))
        )
        self.visit_counts = np.zeros(self.table.shape, dtype=np.int64)
        self.rng = generator(streams.exploration)
        self.step = 0
        self.training_seconds = 0.0
        env.np_random = generator(streams.envs[0])
        self.obs, info = env.reset()
        self.mask = info["action_mask"].astype(bool)

    def _table_grid(self, env) -> tuple[int, ...]:
        """The observation grid the Q table is indexed by."""
        return observation_sizes(env.single_observation_space)

    def indices(self, observations) -> np.ndarray:
        batch = np.asarray(observations, dtype=np.int64).reshape(-1, len(self.sizes))
        return batch @ self.strides

    def _rows(self, observations) -> np.ndarray:
        """The Q table's rows of a batch of the env's observations."""
        return self.indices(observations)

    def _continuation(self, best: np.ndarray, before, after) -> np.ndarray:
        """What the best next value is worth to the copy that acted (before -> after)."""
        return best

    def learn(self, until: int) -> None:
        start = time.perf_counter()
        q, visits, rng, env = self.table, self.visit_counts, self.rng, self.env
        n, num_actions = env.num_envs, self.num_actions
        gamma = self.hyperparams["gamma"]
        eps_schedule, lr_schedule = self.hyperparams["epsilon"], self.hyperparams["learning_rate"]
        power = lr_schedule.get("power")
        power = None if power is None else float(power)
        offset = float(lr_schedule.get("offset", 1.0))
        state, mask = self._rows(self.obs), self.mask
        while self.step < until:
            progress = self.step / self.timesteps
            greedy = np.where(mask, q[state], -np.inf).argmax(axis=1)
            any_legal = np.where(mask, rng.random((n, num_actions)), -1.0).argmax(axis=1)
            explore = rng.random(n) < linear(eps_schedule, progress)
            actions = np.where(explore, any_legal, greedy)
            before = self.obs
            obs, rewards, terminated, truncated, info = env.step(actions)
            next_state = self._rows(obs)
            next_mask = info["action_mask"].astype(bool)
            # A finished copy's obs is already its next episode's start: a truncated one looks
            # ahead from where it was cut off, a terminated one not at all.
            ahead, ahead_state, ahead_mask = obs, next_state, next_mask
            cut = truncated & ~terminated
            if cut.any():
                ahead, ahead_mask = np.array(obs, copy=True), next_mask.copy()
                ahead[cut] = np.stack(info["final_obs"][cut])
                ahead_state = self._rows(ahead)
                ahead_mask[cut] = info["final_info"]["action_mask"][cut].astype(bool)
            best = np.where(ahead_mask, q[ahead_state], -np.inf).max(axis=1)
            ended = terminated | ~ahead_mask.any(axis=1)
            best[ended] = 0.0
            targets = rewards + gamma * self._continuation(best, before, ahead)
            targets[ended] = rewards[ended]
            pairs, which, counts = np.unique(
                state * num_actions + actions, return_inverse=True, return_counts=True
            )
            mean_targets = np.bincount(which, weights=targets) / counts
            rows, cols = np.divmod(pairs, num_actions)
            if power is None:
                rates = 1.0 - (1.0 - linear(lr_schedule, progress)) ** counts
            else:
                visits[rows, cols] += counts
                rates = np.minimum(1.0, counts * visit_rate(visits[rows, cols], power, offset))
            q[rows, cols] += rates * (mean_targets - q[rows, cols])
            state, mask = next_state, next_mask
            self.obs, self.mask = obs, mask
            self.step += n
        self.training_seconds += time.perf_counter() - start

    def q_table(self) -> np.ndarray:
        return self.table.copy()

    def greedy_actions(self, observations: list, legal: np.ndarray) -> np.ndarray:
        rows = self.table[self.indices(observations)]
        return np.where(legal, rows, -np.inf).argmax(axis=1)

    def checkpoint_state(self) -> dict[str, Any]:
        return {
            "q": self.q_table(),
            "visits": self.visit_counts.copy(),
            "step": self.step,
            "training_seconds": self.training_seconds,
            "rng": self.rng.bit_generator.state,
            "vector_env": self.env.snapshot(),
            "obs": np.array(self.obs, copy=True),
            "mask": self.mask.copy(),
        }

    def restore(self, state: dict[str, Any]) -> None:
        self.table, self.visit_counts = state["q"].copy(), state["visits"].copy()
        self.step, self.training_seconds = state["step"], state["training_seconds"]
        self.rng.bit_generator.state = state["rng"]
        self.env.restore(state["vector_env"])
        self.obs, self.mask = state["obs"], state["mask"]


class SelfPlayQLearning(VectorQLearning):
    """Tabular Q-learning against itself: one Q table plays both seats of a two-player game.

    The env is the native vector env of the game seen by the mover (`MoverView`): each
    observation is (player to move, that player's own observation), and a game pays its winner
    1. The table is indexed by the mover's own observation, so both seats read and update the
    same entries, and Q(s, a) is the mover's win probability. When the move passes to the other
    player, the acting player's value of the next position is 1 minus the other's (a zero-sum
    game whose values are win probabilities): target = 1 - max Q(s', .). While the mover keeps
    the move (Pig's rolls), the target is max Q(s', .) as in one-player Q-learning. For
    alternating zero-sum games this converges to the two-player optimum under the usual
    step-size and exploration conditions (Littman 1994; Littman and Szepesvari 1996).
    """

    def _table_grid(self, env) -> tuple[int, ...]:
        return observation_sizes(env.single_observation_space)[1:]  # without "player to move"

    def _rows(self, observations) -> np.ndarray:
        batch = np.asarray(observations, dtype=np.int64).reshape(-1, len(self.sizes) + 1)
        return batch[:, 1:] @ self.strides

    def _continuation(self, best: np.ndarray, before, after) -> np.ndarray:
        same = np.asarray(before)[:, 0] == np.asarray(after)[:, 0]
        return np.where(same, best, 1.0 - best)


class ObservationRows:
    """Rows of a table for the observations met so far, found by an int64 key each (a dict).
    Rows are numbered in the order keys arrive (a batch's new keys in increasing order), so
    the same keys in the same order give the same rows."""

    def __init__(self, keys: np.ndarray | tuple[int, ...] = ()) -> None:
        """`keys`: the keys of rows 0, 1, ..., as `ObservationRows.keys` returns them."""
        keys = np.asarray(keys, dtype=np.int64).tolist()
        self.row_of: dict[int, int] = {key: row for row, key in enumerate(keys)}

    def __len__(self) -> int:
        return len(self.row_of)

    def find(self, keys: np.ndarray) -> np.ndarray:
        """The row of each key, -1 for a key never added."""
        get, keys = self.row_of.get, np.asarray(keys, dtype=np.int64).tolist()
        return np.array([get(key, -1) for key in keys], dtype=np.int64)

    def add(self, keys: np.ndarray) -> np.ndarray:
        """The row of each key, adding the keys never added before."""
        keys = np.asarray(keys, dtype=np.int64)
        rows = self.find(keys)
        missing = rows < 0
        if missing.any():
            new, which = np.unique(keys[missing], return_inverse=True)
            first = len(self)
            rows[missing] = first + which
            self.row_of.update({key: first + i for i, key in enumerate(new.tolist())})
        return rows

    def keys(self) -> np.ndarray:
        """The keys of rows 0, 1, ... (a dict keeps the order of insertion)."""
        return np.fromiter(self.row_of, dtype=np.int64, count=len(self))


# What the sparse learner plays where its table has no row (see SparseQLearning).
FALLBACK = "score-at-once"


class SparseQLearning:
    """Tabular Q-learning on a game whose observation grid is too large for a dense table
    (Yahtzee: 1.5e11 observations): a Q row only for each observation it has acted in.

    Each observation packs into one int64 key (its index in the grid, mixed radix) and finds
    its row in an `ObservationRows` (a dict); rows are float32 (45 actions: 180 bytes each,
    plus as much for the visit counts). The learner steps the native vector env's `n_envs`
    copies at once, with the batched update of `VectorQLearning` (epsilon-greedy over the
    legal actions, the mean target of the copies that took one (state, action)).

    Never-visited observations: their Q values are `initial_q` (a bootstrapped target from one
    uses it), and the greedy policy, in training as in evaluation, plays there what the
    `fallback` named policy plays (default "score-at-once": score the dice now in the box
    that earns the most): the first legal action by the mask would reroll the lowest die at
    every new turn, wasting the rolls, while score-at-once is a whole policy whose exact
    value is known, so the evaluated policy is the table where it has learned and a stated
    floor elsewhere. At a visited observation it plays its greedy legal action (lowest-
    numbered on ties).
    """

    def __init__(
        self, env, hyperparams: dict[str, Any], streams: RunStreams, timesteps: int,
        fallback: str = FALLBACK,
    ) -> None:  # fmt: skip
        if env.metadata.get("autoreset_mode") != AutoresetMode.SAME_STEP:
            raise ValueError(
                "SparseQLearning needs a vector env with autoreset_mode='SameStep', got "
                f"{env.metadata.get('autoreset_mode')!r}"
            )
        self.env, self.hyperparams, self.timesteps = env, hyperparams, timesteps
        self.sizes = observation_sizes(env.single_observation_space)
        self.strides = np.array(
            [int(np.prod(self.sizes[i + 1 :])) for i in range(len(self.sizes))], dtype=np.int64
        )
        self.num_actions = int(env.single_action_space.n)
        self.initial = float(hyperparams.get("initial_q", 0.0))
        self.store = ObservationRows()
        self.table = np.full((1024, self.num_actions), self.initial, dtype=np.float32)
        self.visit_counts = np.zeros(self.table.shape, dtype=np.int32)
        self.fallback = env.unwrapped.model.named_policy(fallback)
        if self.fallback is None:
            raise ValueError(f"fallback must be a named policy of {env.unwrapped.model!r}")
        self.rng = generator(streams.exploration)
        self.step = 0
        self.training_seconds = 0.0
        env.np_random = generator(streams.envs[0])
        self.obs, info = env.reset()
        self.mask = info["action_mask"].astype(bool)

    def keys(self, observations) -> np.ndarray:
        batch = np.asarray(observations, dtype=np.int64).reshape(-1, len(self.sizes))
        return batch @ self.strides

    def _ensure(self, rows: int) -> None:
        """Room for `rows` rows in the Q table and the visit counts (doubling)."""
        if rows <= len(self.table):
            return
        size = max(rows, 2 * len(self.table))
        table = np.full((size, self.num_actions), self.initial, dtype=np.float32)
        table[: len(self.table)] = self.table
        visits = np.zeros(table.shape, dtype=np.int32)
        visits[: len(self.visit_counts)] = self.visit_counts
        self.table, self.visit_counts = table, visits

    def greedy(self, observations, mask: np.ndarray, rows: np.ndarray | None = None):
        """The greedy legal action of each observation: the table's where it has a row, the
        fallback policy's where not."""
        rows = self.store.find(self.keys(observations)) if rows is None else rows
        return sparse_greedy(self.table, rows, mask, observations, self.fallback)

    def _best_next(self, observations, mask: np.ndarray) -> np.ndarray:
        """max over legal actions of Q at each observation (`initial_q` without a row)."""
        rows = self.store.find(self.keys(observations))
        best = np.full(len(rows), self.initial)
        known = rows >= 0
        values = np.where(mask[known], self.table[rows[known]], -np.inf)
        best[known] = values.max(axis=1)
        return best

    def learn(self, until: int) -> None:
        start = time.perf_counter()
        env, rng, n = self.env, self.rng, self.env.num_envs
        gamma = self.hyperparams["gamma"]
        eps_schedule, lr_schedule = self.hyperparams["epsilon"], self.hyperparams["learning_rate"]
        power = lr_schedule.get("power")
        power = None if power is None else float(power)
        offset = float(lr_schedule.get("offset", 1.0))
        while self.step < until:
            progress = self.step / self.timesteps
            obs, mask = self.obs, self.mask
            greedy = self.greedy(obs, mask)
            any_legal = np.where(mask, rng.random((n, self.num_actions)), -1.0).argmax(axis=1)
            explore = rng.random(n) < linear(eps_schedule, progress)
            actions = np.where(explore, any_legal, greedy)
            next_obs, rewards, terminated, truncated, info = env.step(actions)
            next_mask = info["action_mask"].astype(bool)
            ahead, ahead_mask = next_obs, next_mask
            cut = truncated & ~terminated  # looks ahead from where it was cut off
            if cut.any():
                ahead, ahead_mask = np.array(next_obs, copy=True), next_mask.copy()
                ahead[cut] = np.stack(info["final_obs"][cut])
                ahead_mask[cut] = info["final_info"]["action_mask"][cut].astype(bool)
            ended = terminated | ~ahead_mask.any(axis=1)
            targets = rewards + gamma * np.where(ended, 0.0, self._best_next(ahead, ahead_mask))
            self._update(self.store.add(self.keys(obs)), actions, targets, power, offset, progress)
            self.obs, self.mask = next_obs, next_mask
            self.step += n
        self.training_seconds += time.perf_counter() - start

    def _update(self, rows, actions, targets, power, offset, progress) -> None:
        """One synchronous update of the (row, action) pairs of a batch (as `VectorQLearning`)."""
        self._ensure(len(self.store))
        pairs, which, counts = np.unique(
            rows * self.num_actions + actions, return_inverse=True, return_counts=True
        )
        mean_targets = np.bincount(which, weights=targets) / counts
        rows, cols = np.divmod(pairs, self.num_actions)
        if power is None:
            rates = 1.0 - (1.0 - linear(self.hyperparams["learning_rate"], progress)) ** counts
        else:
            self.visit_counts[rows, cols] += counts.astype(np.int32)
            visits = self.visit_counts[rows, cols].astype(np.float64)
            rates = np.minimum(1.0, counts * visit_rate(visits, power, offset))
        q = self.table[rows, cols].astype(np.float64)
        self.table[rows, cols] = q + rates * (mean_targets - q)

    def policy(self):
        """The greedy policy as a batched policy on (n, 22) observations (legal actions from
        the observations themselves: `legal_masks`)."""
        from dice_envs.games.rule import Rule

        model = self.env.unwrapped.model

        def batch(observations: np.ndarray) -> np.ndarray:
            observations = np.asarray(observations, dtype=np.int64).reshape(-1, len(self.sizes))
            return self.greedy(observations, legal_masks(model, observations))

        return Rule.from_batch(batch, "sparse Q-learning (greedy)")

    def checkpoint_state(self) -> dict[str, Any]:
        used = len(self.store)
        return {
            "store": self.store.keys(),
            "q": self.table[:used].copy(),
            "visits": self.visit_counts[:used].copy(),
            "step": self.step,
            "training_seconds": self.training_seconds,
            "rng": self.rng.bit_generator.state,
            "vector_env": self.env.snapshot(),
            "obs": np.array(self.obs, copy=True),
            "mask": self.mask.copy(),
        }

    def restore(self, state: dict[str, Any]) -> None:
        self.store = ObservationRows(state["store"])
        self.table = np.full((1024, self.num_actions), self.initial, dtype=np.float32)
        self.visit_counts = np.zeros(self.table.shape, dtype=np.int32)
        self._ensure(len(state["q"]))
        self.table[: len(state["q"])] = state["q"]
        self.visit_counts[: len(state["visits"])] = state["visits"]
        self.step, self.training_seconds = state["step"], state["training_seconds"]
        self.rng.bit_generator.state = state["rng"]
        self.env.restore(state["vector_env"])
        self.obs, self.mask = state["obs"], state["mask"]

    def save_policy(self, path: Path) -> None:
        """The keys (the observations' grid indices) and their Q rows, as an .npz."""
        keys = self.store.keys()
        buffer = io.BytesIO()
        np.savez_compressed(buffer, keys=keys, q=self.table[: len(keys)], strides=self.strides)
        atomic_write_bytes(path, buffer.getvalue())


def sparse_greedy(
    table: np.ndarray, rows: np.ndarray, mask: np.ndarray, observations, fallback: Any
) -> np.ndarray:
    """The greedy legal action at each observation of a sparse Q table (`rows` its rows, -1
    where it has none): the lowest-numbered best legal action where it has a row, what the
    batched `fallback` policy plays where not."""
    known = rows >= 0
    actions = np.empty(len(rows), dtype=np.int64)
    if known.any():
        values = np.where(mask[known], table[rows[known]], -np.inf)
        actions[known] = values.argmax(axis=1)
    if not known.all():
        unknown = np.asarray(observations).reshape(len(rows), -1)[~known]
        actions[~known] = np.asarray(fallback.batch(unknown)).reshape(-1)
    return actions


def legal_masks(model, observations: np.ndarray) -> np.ndarray:
    """(n, 45) the legal actions of Yahtzee observations (n, 22), as the env masks them: the
    rerolls of distinct keeps while rolls are left, the boxes the joker rule allows."""
    from dice_envs.games.yahtzee import NUM_BOXES, REROLL_LEGAL, decode_observations

    filled, _, _, dice, rolls_left = decode_observations(observations)
    masks = np.zeros((len(filled), 32 + NUM_BOXES), dtype=bool)
    masks[:, :32] = REROLL_LEGAL[dice] & (rolls_left > 0)[:, None]
    masks[:, 32:] = model.scoring_many(filled, dice).legal
    return masks

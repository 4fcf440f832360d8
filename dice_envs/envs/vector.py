"""The one native vector env of every game: all copies step at once by sampling the tables."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from dice_envs.envs.base import game_model
from dice_envs.games.base import check_int
from dice_envs.tables import DENSE_KEYS, Tables, alias_tables, build_tables

# One outcome cell of an alias table: keep `keep` (next position, reward) with probability
# `threshold`, else `alias`. One record, so a step gathers each copy's cell in one read.
CELL = np.dtype(
    [
        ("threshold", np.float64),
        ("keep", np.int32),
        ("alias", np.int32),
        ("keep_reward", np.float64),
        ("alias_reward", np.float64),
    ]
)

AUTORESET_MODES = tuple(mode.value for mode in AutoresetMode)


class NativeVectorEnv(VectorEnv):
    """What the native vector envs share (`DiceVectorEnv`, and the Yahtzee one): the checks of
    their options, of `reset`'s arguments and of `step`'s actions."""

    metadata = {"render_modes": ["ansi"], "autoreset_mode": AutoresetMode.NEXT_STEP}

    def _set_options(
        self,
        num_envs: int,
        autoreset_mode: str | AutoresetMode,
        max_episode_steps: int | None,
        render_mode: str | None,
    ) -> None:
        """Check the options every native vector env takes and keep them."""
        self.num_envs = check_int("num_envs", num_envs, 1)
        try:
            self.autoreset_mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(
                f"autoreset_mode must be an AutoresetMode or one of {list(AUTORESET_MODES)}, "
                f"got {autoreset_mode!r}"
            ) from None
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}
        self.max_episode_steps = (
            None
            if max_episode_steps is None
            else check_int("max_episode_steps", max_episode_steps, 1)
        )
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be None or 'ansi' for the native vector env, got "
                f"{render_mode!r}; vectorization_mode='sync' renders rgb_array frames"
            )
        self.render_mode = render_mode
        self._all = np.ones(self.num_envs, dtype=bool)

    def _begin_reset(
        self, seed: int | None, options: dict[str, Any] | None, started: bool
    ) -> tuple[np.ndarray, Any]:
        """Check `reset`'s arguments and seed the batch (`started`: a full reset came before).
        Returns the copies to reset (`_all`, or the ``reset_mask`` given) and the start state
        asked for (``options["state"]``, None for starts drawn by the rules)."""
        if seed is not None and (not isinstance(seed, int | np.integer) or isinstance(seed, bool)):
            raise ValueError(
                "seed must be an int or None: the native vector env draws every copy from one "
                f"generator, got {seed!r}"
            )
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be a dict or None, got {options!r}")
        options = dict(options or {})
        unknown = set(options) - {"reset_mask", "state"}
        if unknown:
            raise ValueError(
                f"reset options may hold 'reset_mask' and 'state', got {sorted(unknown)}"
            )
        super().reset(seed=None if seed is None else int(seed))
        mask = options.get("reset_mask")
        if mask is None:
            mask = self._all
        elif not (
            isinstance(mask, np.ndarray) and mask.dtype == bool and mask.shape == (self.num_envs,)
        ):
            raise ValueError(f"reset_mask must be a bool array of shape ({self.num_envs},)")
        elif not mask.any():
            raise ValueError("reset_mask must hold at least one True")
        elif not started:
            raise ValueError("reset_mask needs a full reset first")
        return mask, options.get("state")

    def _checked_actions(self, actions, num_actions: int) -> np.ndarray:
        """`step`'s actions as int64, else a ValueError saying what is allowed."""
        actions = np.asarray(actions)
        if (
            actions.shape != (self.num_envs,)
            or actions.dtype.kind not in "iu"
            or (actions.min() < 0 or actions.max() >= num_actions)
        ):
            raise ValueError(
                f"actions must be {self.num_envs} integers in 0..{num_actions - 1}, got {actions!r}"
            )
        return actions.astype(np.int64, copy=False)

    def _open_where_resetting(self, mask: np.ndarray) -> np.ndarray:
        """`mask` with every action allowed for the copies the next step resets (next-step
        mode): their action is ignored there, and a row of zeros would break masked sampling
        (`space.sample(mask)`, MaskablePPO) on every batch in which an episode ends."""
        if self.autoreset_mode == AutoresetMode.NEXT_STEP and self._done.any():
            mask[self._done] = 1
        return mask

    def _refuse_ended(self, ended: np.ndarray) -> None:
        """With autoreset disabled, a step on copies whose episode ended is an error."""
        if self.autoreset_mode == AutoresetMode.DISABLED and ended.any():
            raise RuntimeError(
                f"step() on copies {np.flatnonzero(ended).tolist()} whose episode ended; "
                "reset them with reset(options={'reset_mask': ...}) first"
            )


class DiceVectorEnv(NativeVectorEnv):
    """`num_envs` copies of a game, stepped together with a few numpy operations per step.

    The same class for every game, registered as every id's `vector_entry_point`, so
    ``gym.make_vec(env_id, num_envs=n, **kwargs)`` builds it from the game's own keyword
    arguments. It reads the game's tables (`dice_envs.tables`): per step, for every copy, the
    outcome rows of (state, action), drawn in O(1) from Walker alias tables built once from the
    rows' exact probabilities. No rule is written here: the law of a step is the model's.

    Arguments: `model` (as for `DiceEnv`, with the game's keyword arguments), `num_envs`,
    `autoreset_mode` (a `gymnasium.vector.AutoresetMode` or its value: "NextStep", the default,
    "SameStep" or "Disabled"), `max_episode_steps` (None: no truncation; else each copy is
    truncated after that many steps of its episode, as `gym.make(..., max_episode_steps=)`
    does), `render_mode` (None or "ansi": one line of text per copy).

    What it returns, as `SyncVectorEnv` over `gym.make(env_id)` does under the same autoreset
    mode: observations (n,) or (n, k) int64; rewards (n,) float64; terminations, truncations
    (n,) bool; infos with ``action_mask`` (n, actions) int8 and its ``_action_mask``. In
    next-step mode a copy that ended is reset by the next `step` (its action ignored, reward 0,
    the start observation), so its ``action_mask`` allows every action (where `SyncVectorEnv`
    passes on the terminal state's empty mask, which masked sampling cannot draw from); in
    same-step mode it is reset at once and infos carry
    ``final_obs`` and ``final_info`` with their masks. The single env's event keys (the dice
    an opponent threw, say) are not reported here; make the sync vector env
    (``vectorization_mode="sync"``) for them, or for rgb_array frames.

    Randomness: one `np_random` for the whole batch; each step draws one uniform per copy (its
    integer part picks the alias cell, its fraction the side), so copies are independent and
    ``reset(seed=s)`` fixes every trajectory. `reset(options=)` takes ``"reset_mask"`` (bool
    (n,): reset only those copies, as the disabled mode needs) and ``"state"`` (one model state
    every reset copy starts from, as `DiceEnv.reset` takes it).

    Tables index every observation densely, so a game whose observation grid holds more than
    `DENSE_KEYS` cells (ChowRobbins with a horizon of many thousands) is refused; the sync
    vector env samples the model directly and takes any size.
    """

    def __init__(
        self,
        model: Any,
        num_envs: int = 1,
        *,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        max_episode_steps: int | None = None,
        render_mode: str | None = None,
        tables: Tables | None = None,
        **kwargs: Any,
    ) -> None:
        self._set_options(num_envs, autoreset_mode, max_episode_steps, render_mode)
        if tables is not None:
            if kwargs or tables.model is not model:
                raise ValueError("tables= must come alone, with the model they were built from")
        else:
            model = game_model(model, kwargs)
            grid = int(np.prod(model.observation_nvec, dtype=object))
            if grid > DENSE_KEYS:
                raise ValueError(
                    f"{model!r} has {grid:,} observations, more than the native vector env's "
                    f"tables index ({DENSE_KEYS:,}); use gym.make_vec(..., "
                    "vectorization_mode='sync'), which samples the model directly"
                )
            tables = build_tables(model)
        self.model, self.tables = model, tables
        self.__doc__ = model.__doc__ or DiceVectorEnv.__doc__
        self._compile(tables)

        nvec = model.observation_nvec
        self._scalar_obs = len(nvec) == 1
        self.single_observation_space = (
            spaces.Discrete(nvec[0]) if self._scalar_obs else spaces.MultiDiscrete(nvec)
        )
        self.single_action_space = spaces.Discrete(model.num_actions)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

        n = self.num_envs
        self._position: np.ndarray | None = None  # None until the first reset
        self._done = np.zeros(n, dtype=bool)
        self._elapsed = np.zeros(n, dtype=np.int64)

    def _compile(self, tables: Tables) -> None:
        """The arrays a step reads. Positions: 0..n-1 the live states, n.. the terminal ones."""
        n, num_actions = tables.num_states, tables.num_actions
        terminals = tables.terminal_states
        if n + len(terminals) >= 2**31:
            raise ValueError(f"{tables!r} has too many states for the native vector env")
        self._num_states, self._num_actions = n, num_actions
        threshold, keep, alias = alias_tables(tables.outcome_ptr, tables.outcome_prob)
        nexts = tables.outcome_next
        position = np.where(nexts >= 0, nexts, n - 1 - nexts).astype(np.int32)
        cells = np.empty(len(threshold), dtype=CELL)
        cells["threshold"] = threshold
        cells["keep"], cells["alias"] = position[keep], position[alias]
        cells["keep_reward"] = tables.outcome_reward[keep]
        cells["alias_reward"] = tables.outcome_reward[alias]
        self._cells = cells
        self._row_start = tables.outcome_ptr[:-1]
        self._row_count = np.diff(tables.outcome_ptr)
        model = tables.model
        final = [np.atleast_1d(model.observation(state)) for state in terminals]
        width = tables.observation_array.shape[1]
        self._observations = np.concatenate(
            [tables.observation_array, np.array(final, dtype=np.int64).reshape(-1, width)]
        )
        if self._observations.shape[1] == 1:
            self._observations = self._observations[:, 0].copy()
        self._masks = np.concatenate(
            [tables.legal.astype(np.int8), np.zeros((len(terminals), num_actions), np.int8)]
        )
        starts = np.flatnonzero(tables.initial > 0)
        self._starts = starts.astype(np.int32)
        s_threshold, s_keep, s_alias = alias_tables(
            np.array([0, len(starts)]), tables.initial[starts]
        )
        self._start_cells = np.empty(len(starts), dtype=CELL)
        self._start_cells["threshold"] = s_threshold
        self._start_cells["keep"], self._start_cells["alias"] = starts[s_keep], starts[s_alias]

    # -- sampling -------------------------------------------------------------------------

    def _alias_draw(self, cells: np.ndarray, start, counts):
        """One draw per entry from the alias groups of `cells` at `start` with `counts` cells:
        the chosen cell, and whether it keeps its own outcome (else its alias)."""
        scaled = self.np_random.random(len(counts)) * counts
        index = scaled.astype(np.int64)
        cell = np.take(cells, start + index)
        return cell, (scaled - index) < cell["threshold"]

    def _draw_outcomes(self, positions: np.ndarray, actions: np.ndarray):
        """Next positions and rewards of live `positions` under `actions`, one draw each."""
        group = positions.astype(np.int64) * self._num_actions + actions
        cell, keep = self._alias_draw(
            self._cells, np.take(self._row_start, group), np.take(self._row_count, group)
        )
        return (
            np.where(keep, cell["keep"], cell["alias"]),
            np.where(keep, cell["keep_reward"], cell["alias_reward"]),
        )

    def _draw_starts(self, count: int) -> np.ndarray:
        cell, keep = self._alias_draw(self._start_cells, 0, np.full(count, len(self._start_cells)))
        return np.where(keep, cell["keep"], cell["alias"])

    # -- the VectorEnv API ----------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        mask, state = self._begin_reset(seed, options, started=self._position is not None)
        count = int(mask.sum())
        if state is not None:
            start = self._position_of(state)
            new = np.full(count, start, dtype=np.int32)
        else:
            new = self._draw_starts(count)
        if self._position is None:
            self._position = np.empty(self.num_envs, dtype=np.int32)
        self._position[mask] = new
        self._done[mask] = False
        self._elapsed[mask] = 0
        observations = np.take(self._observations, self._position, axis=0)
        action_mask = np.take(self._masks, self._position, axis=0)
        if mask is not self._all:
            action_mask[~mask] = 0
        return observations, {"action_mask": action_mask, "_action_mask": mask.copy()}

    def _position_of(self, state) -> int:
        state = self.model.validate_state(state)
        try:
            return self.tables.index_of(self.model.observation(state))
        except KeyError:
            raise ValueError(
                f"state {state!r} is not a reachable live state of {self.model!r}"
            ) from None

    def step(self, actions):
        if self._position is None:
            raise RuntimeError("step() called before reset()")
        actions = self._checked_actions(actions, self._num_actions)
        mode = self.autoreset_mode
        resetting = self._done
        self._refuse_ended(resetting)
        position = self._position
        if mode == AutoresetMode.NEXT_STEP and resetting.any():
            # A copy being reset draws an outcome from a live stand-in position (the draw
            # stays one branch-free batch), which its start then replaces.
            position = np.where(resetting, self._starts[0], position)
        nexts, rewards = self._draw_outcomes(position, actions)
        terminated = nexts >= self._num_states
        self._elapsed += 1
        if self.max_episode_steps is None:
            truncated = np.zeros(self.num_envs, dtype=bool)
        else:
            truncated = self._elapsed >= self.max_episode_steps
        infos: dict[str, Any] = {}
        if mode == AutoresetMode.NEXT_STEP and resetting.any():
            count = int(resetting.sum())
            nexts[resetting] = self._draw_starts(count)
            rewards[resetting] = 0.0
            terminated[resetting] = False
            truncated[resetting] = False
            self._elapsed[resetting] = 0
        ended = terminated | truncated
        if mode == AutoresetMode.SAME_STEP and ended.any():
            final_obs = np.full(self.num_envs, None, dtype=object)
            for i, obs in zip(
                np.flatnonzero(ended),
                np.take(self._observations, nexts[ended], axis=0),
                strict=True,
            ):
                final_obs[i] = obs
            final_mask = np.take(self._masks, nexts, axis=0)
            final_mask[~ended] = 0
            infos["final_obs"], infos["_final_obs"] = final_obs, ended.copy()
            infos["final_info"] = {"action_mask": final_mask, "_action_mask": ended.copy()}
            infos["_final_info"] = ended.copy()
            nexts[ended] = self._draw_starts(int(ended.sum()))
            self._elapsed[ended] = 0
            self._done = np.zeros(self.num_envs, dtype=bool)
        else:
            self._done = ended
        self._position = nexts
        infos["action_mask"] = self._open_where_resetting(np.take(self._masks, nexts, axis=0))
        infos["_action_mask"] = self._all.copy()
        return np.take(self._observations, nexts, axis=0), rewards, terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        """(num_envs, actions) booleans: each copy's legal actions; every action for a copy the
        next step resets (next-step mode), none for one whose episode ended (disabled mode)."""
        if self._position is None:
            return np.zeros((self.num_envs, self._num_actions), dtype=bool)
        return self._open_where_resetting(np.take(self._masks, self._position, axis=0)).astype(bool)

    def snapshot(self) -> dict[str, Any]:
        """Everything that decides the batch's future: positions (None before the first reset),
        episode flags and steps, and the generator's state. `restore` of it continues bit for
        bit (checkpoints)."""
        return {
            "position": None if self._position is None else self._position.copy(),
            "done": self._done.copy(),
            "elapsed": self._elapsed.copy(),
            "rng": self.np_random.bit_generator.state,
        }

    def restore(self, snapshot: dict[str, Any]) -> None:
        position = snapshot["position"]
        if position is not None:
            position = np.asarray(position, dtype=np.int32)
            if position.shape != (self.num_envs,) or not (
                position.min() >= 0 and position.max() < len(self._observations)
            ):
                raise ValueError("snapshot holds positions of another game or batch size")
            position = position.copy()
        done = np.asarray(snapshot["done"], dtype=bool)
        elapsed = np.asarray(snapshot["elapsed"], dtype=np.int64)
        if done.shape != (self.num_envs,) or elapsed.shape != (self.num_envs,):
            raise ValueError("snapshot holds flags of another batch size")
        self._position = position
        self._done, self._elapsed = done.copy(), elapsed.copy()
        self.np_random.bit_generator.state = snapshot["rng"]

    @property
    def states(self) -> list:
        """Each copy's model state (a terminal state for a copy whose episode just ended)."""
        if self._position is None:
            raise RuntimeError("states read before reset()")
        every = self.tables.states
        terminals = self.tables.terminal_states
        n = self._num_states
        return [every[p] if p < n else terminals[p - n] for p in self._position.tolist()]

    def render(self) -> tuple[str, ...] | None:
        if self.render_mode is None:
            return None
        return tuple(self.model.render_text(state) for state in self.states)

"""The native vector env of `dice_envs/Yahtzee-v0`: every copy stepped at once with numpy,
playing the model's batch rules (no tables: the game has none)."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from dice_envs.envs.vector import NativeVectorEnv
from dice_envs.envs.yahtzee import NUM_ACTIONS, OBSERVATION_NVEC, observation_of, yahtzee_model
from dice_envs.games.yahtzee import (
    BOX_POINTS,
    DICE,
    DICE_FACES,
    DICE_KEEP_OFFSET,
    FULL_CARD,
    IS_YAHTZEE,
    KEEP_SIZE,
    KEEPS,
    NUM_BOXES,
    NUM_DICE,
    NUM_DICE_SETS,
    REROLL_KEEP,
    REROLL_LEGAL,
    PlayState,
    Yahtzee,
)


def _roll_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rolling dice in one draw per copy: a uniform r in 0..6**5 - 1 gives five independent
    faces, its base-6 digits; the dice a keep of k dice leaves out show the first 5 - k. A
    multiset of faces is coded as the sum of 6**face over its dice; `_ROLLED_CODE[m * 7776 +
    r]` codes the first m digits of r, `_KEEP_CODE` each keep, and `_DICE_OF_CODE` maps the
    code of five dice to their index in `DICE`."""
    powers = 6 ** np.arange(6, dtype=np.int64)
    digits = np.arange(6**NUM_DICE)[:, None] // powers[:NUM_DICE] % 6  # (7776, 5)
    rolled = np.zeros((NUM_DICE + 1, 6**NUM_DICE), dtype=np.int64)
    for m in range(1, NUM_DICE + 1):
        rolled[m] = rolled[m - 1] + powers[digits[:, m - 1]]
    keep_code = KEEPS.astype(np.int64) @ powers
    dice_of_code = np.full(6**6 * NUM_DICE, -1, dtype=np.int64)
    dice_of_code[keep_code[DICE_KEEP_OFFSET:]] = np.arange(len(DICE))
    return rolled.ravel(), keep_code, dice_of_code


_ROLLED_CODE, _KEEP_CODE, _DICE_OF_CODE = _roll_tables()
_ROLLS = 6**NUM_DICE
_MISSING = (NUM_DICE - KEEP_SIZE.astype(np.int64)) * _ROLLS  # dice a keep leaves out, scaled
_REROLL_KEEP_FLAT = REROLL_KEEP.ravel().astype(np.int64)  # dice * 32 + reroll -> keep
_BOX_POINTS_FLAT = BOX_POINTS.ravel().astype(np.int64)  # dice * 13 + box -> points
_DICE_COUNTS = DICE.astype(np.int64)
_FILLED_FLAGS = ((np.arange(FULL_CARD + 1)[:, None] >> np.arange(NUM_BOXES)) & 1).astype(np.int8)
# Row dice + 252 * (rolls left > 0): the reroll part of the mask (none without rolls left).
_REROLL_MASKS = np.concatenate([np.zeros_like(REROLL_LEGAL), REROLL_LEGAL]).astype(np.int8)


class YahtzeeVectorEnv(NativeVectorEnv):
    """`num_envs` copies of Yahtzee stepped together: a few dozen numpy operations per step
    over all copies, with the model's batch rules (`Yahtzee.scoring`, `score_result`,
    `played_actions`) and the dice rolled one die at a time through `KEEP_ADD`.

    The same interface as the native vector env of the games with tables
    (`dice_envs.envs.vector.DiceVectorEnv`), registered as the id's `vector_entry_point`:
    arguments `model` (with the game's keyword arguments `joker`, `boxes`), `num_envs`,
    `autoreset_mode` ("NextStep", the default, "SameStep" or "Disabled"),
    `max_episode_steps`, `render_mode` (None or "ansi"). Observations (n, 22) int64, rewards
    (n,) float64, infos with ``action_mask`` (n, 45) int8 and ``_action_mask`` (in next-step
    mode, every action for a copy the next step resets: its action is ignored there); same-step
    mode adds ``final_obs`` and ``final_info``. `reset(options=)` takes ``"reset_mask"`` and
    ``"state"`` (one `PlayState` every reset copy starts from). `DiceSB3VecEnv` takes it.

    Randomness: one `np_random` for the batch; each step draws five uniforms per copy (the
    faces of the dice it rolls), so copies are independent and ``reset(seed=s)`` fixes every
    trajectory.
    """

    def __init__(
        self,
        model: Any = "dice_envs.games.yahtzee:Yahtzee",
        num_envs: int = 1,
        *,
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        max_episode_steps: int | None = None,
        render_mode: str | None = None,
        **kwargs: Any,
    ) -> None:
        self._set_options(num_envs, autoreset_mode, max_episode_steps, render_mode)
        self.model = model = yahtzee_model(model, kwargs)
        self.__doc__ = YahtzeeVectorEnv.__doc__
        self.single_observation_space = spaces.MultiDiscrete(OBSERVATION_NVEC)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        n = self.num_envs
        self._started = False
        self._filled = np.full(n, model.absent, dtype=np.int64)
        self._upper = np.zeros(n, dtype=np.int64)
        self._flag = np.zeros(n, dtype=bool)
        self._dice = np.zeros(n, dtype=np.int64)
        self._rolls = np.zeros(n, dtype=np.int64)
        self._done = np.zeros(n, dtype=bool)
        self._elapsed = np.zeros(n, dtype=np.int64)
        self._rows = np.arange(n)
        self._legal = np.zeros((n, NUM_BOXES), dtype=bool)
        self._legal_bits = np.zeros(n, dtype=np.int64)
        self._jokers = np.zeros(0, dtype=np.int64)
        self._joker_points = np.zeros((0, NUM_BOXES), dtype=np.int64)

    # -- the rules, over arrays -----------------------------------------------------------

    def _roll(self, keeps: np.ndarray) -> np.ndarray:
        """The dice (indices in `DICE`) after rolling, for each keep, the dice it leaves out:
        one uniform per copy, whose base-6 digits are the faces (`_roll_tables`)."""
        draws = (self.np_random.random(len(keeps)) * _ROLLS).astype(np.int64)
        codes = np.take(_KEEP_CODE, keeps) + np.take(_ROLLED_CODE, np.take(_MISSING, keeps) + draws)
        return np.take(_DICE_OF_CODE, codes)

    def _observe(self) -> np.ndarray:
        obs = np.empty((self.num_envs, 22), dtype=np.int64)
        obs[:, :6] = np.take(_DICE_COUNTS, self._dice, axis=0)
        obs[:, 6] = self._rolls
        obs[:, 7:20] = np.take(_FILLED_FLAGS, self._filled, axis=0)
        obs[:, 20] = self._upper
        obs[:, 21] = self._flag
        return obs

    def _refresh_masks(self) -> np.ndarray:
        """The legal boxes of every copy's dice (and the points of its jokers), and the
        (n, 45) action masks (all zeros for a copy whose game is over: no box is open)."""
        self._legal, self._legal_bits, self._jokers, self._joker_points = self.model.scoring_many(
            self._filled, self._dice
        )
        rerolls = np.take(_REROLL_MASKS, self._dice + (self._rolls > 0) * NUM_DICE_SETS, axis=0)
        return np.concatenate((rerolls, self._legal.view(np.int8)), axis=1)

    def _start(self, which: np.ndarray, state: PlayState | None) -> None:
        count = int(which.sum())
        if state is None:
            start = self.model.start
            values = (start.filled, start.upper, start.yahtzee50, None, 2)
            dice = self._roll(np.zeros(count, dtype=np.int64))
        else:
            values, dice = state, state.dice
        self._filled[which], self._upper[which], self._flag[which] = values[:3]
        self._dice[which], self._rolls[which] = dice, values[4]
        self._done[which] = False
        self._elapsed[which] = 0

    # -- the VectorEnv API ----------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        which, state = self._begin_reset(seed, options, started=self._started)
        self._start(which, None if state is None else self.model.check_play_state(state))
        self._started = True
        mask = self._refresh_masks()
        if which is not self._all:
            mask[~which] = 0
        return self._observe(), {"action_mask": mask, "_action_mask": which.copy()}

    def step(self, actions):
        if not self._started:
            raise RuntimeError("step() called before reset()")
        actions = self._checked_actions(actions, NUM_ACTIONS)
        mode = self.autoreset_mode
        resetting = self._done.copy()  # `_start` clears `_done` in place
        self._refuse_ended(resetting)
        rewards, terminated = self._play(actions)
        self._elapsed += 1
        if mode == AutoresetMode.NEXT_STEP and resetting.any():
            self._start(resetting, None)
            rewards[resetting] = 0.0
            terminated[resetting] = False
        if self.max_episode_steps is None:
            truncated = np.zeros(self.num_envs, dtype=bool)
        else:
            truncated = self._elapsed >= self.max_episode_steps
        ended = terminated | truncated
        infos: dict[str, Any] = {}
        if mode == AutoresetMode.SAME_STEP and ended.any():
            final = self._observe()[ended]
            final_obs = np.full(self.num_envs, None, dtype=object)
            for i, obs in zip(np.flatnonzero(ended), final, strict=True):
                final_obs[i] = obs
            final_mask = np.zeros((self.num_envs, NUM_ACTIONS), dtype=np.int8)
            cut = truncated & ~terminated  # a truncated game still has legal actions
            if cut.any():
                final_mask[cut] = self._refresh_masks()[cut]
            infos["final_obs"], infos["_final_obs"] = final_obs, ended.copy()
            infos["final_info"] = {"action_mask": final_mask, "_action_mask": ended.copy()}
            infos["_final_info"] = ended.copy()
            self._start(ended, None)
        else:
            self._done = ended
        infos["action_mask"] = self._open_where_resetting(self._refresh_masks())
        infos["_action_mask"] = self._all.copy()
        return self._observe(), rewards, terminated, truncated, infos

    def _play(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every copy plays its action (as `Yahtzee.played_actions` says); rewards and which
        games ended. A copy whose game is over is being reset: what it plays is overwritten."""
        dice = self._dice
        played = Yahtzee.played_actions(dice, self._rolls, self._legal_bits, actions)
        rerolls = played < 32
        scoring = ~rerolls
        keeps = np.take(_REROLL_KEEP_FLAT, dice * 32 + (played & 31)) * rerolls
        rolled = self._roll(keeps)
        box = (played - 32) * scoring
        points = np.take(_BOX_POINTS_FLAT, dice * NUM_BOXES + box)
        jokers = self._jokers
        if len(jokers):
            points[jokers] = self._joker_points[np.arange(len(jokers)), box[jokers]]
        # A copy that rerolls scores 0 in box 0 without a Yahtzee: its card does not change.
        reward, self._upper, self._flag = Yahtzee.score_result(
            self._upper, self._flag, box, points * scoring, np.take(IS_YAHTZEE, dice) & scoring
        )
        self._filled = self._filled | (scoring << box)
        terminated = self._filled == FULL_CARD
        self._dice = np.where(terminated, dice, rolled)
        self._rolls = np.where(scoring, 2 - 2 * terminated, self._rolls - 1)
        return reward.astype(np.float64), terminated

    def action_masks(self) -> np.ndarray:
        """(num_envs, 45) booleans: each copy's legal actions; every action for a copy the next
        step resets (next-step mode), none for one whose game is over (disabled mode)."""
        if not self._started:
            return np.zeros((self.num_envs, NUM_ACTIONS), dtype=bool)
        mask = np.zeros((self.num_envs, NUM_ACTIONS), dtype=bool)
        mask[:, :32] = REROLL_LEGAL[self._dice] & (self._rolls > 0)[:, None]
        mask[:, 32:] = self._legal
        return self._open_where_resetting(mask)

    @property
    def states(self) -> list[PlayState]:
        """Each copy's `PlayState` (the final one for a copy whose game just ended)."""
        if not self._started:
            raise RuntimeError("states read before reset()")
        return [
            PlayState(int(f), int(u), bool(y), int(d), int(r))
            for f, u, y, d, r in zip(
                self._filled, self._upper, self._flag, self._dice, self._rolls, strict=True
            )
        ]

    def snapshot(self) -> dict[str, Any]:
        """Everything that decides the batch's future; `restore` continues bit for bit."""
        names = ("_filled", "_upper", "_flag", "_dice", "_rolls", "_done", "_elapsed")
        return {
            "arrays": {name: getattr(self, name).copy() for name in names},
            "started": self._started,
            "rng": self.np_random.bit_generator.state,
        }

    def restore(self, snapshot: dict[str, Any]) -> None:
        arrays = snapshot["arrays"]
        if any(np.shape(a) != (self.num_envs,) for a in arrays.values()):
            raise ValueError("snapshot holds arrays of another batch size")
        for name, array in arrays.items():
            setattr(self, name, np.array(array, copy=True))
        self._started = snapshot["started"]
        self.np_random.bit_generator.state = snapshot["rng"]
        if self._started:
            self._refresh_masks()

    def render(self) -> tuple[str, ...] | None:
        if self.render_mode is None:
            return None
        return tuple(
            f"dice {' '.join(map(str, DICE_FACES[s.dice].tolist()))} | rolls left "
            f"{s.rolls_left} | filled {bin(s.filled & ~self.model.absent).count('1')}"
            f"/{self.model.num_turns} | upper {s.upper}/63"
            for s in self.states
        )


__all__ = ["YahtzeeVectorEnv", "observation_of"]

"""Solitaire Yahtzee as a Gymnasium env: `dice_envs/Yahtzee-v0`, sampled from the model's rules.

The game is too large for the project's tables, so it has its own env (and its own native
vector env, `dice_envs.envs.yahtzee_vector`): both play the model's batch rules
(`dice_envs.games.yahtzee`); chi-square tests hold their draws to the model's distributions.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from dice_envs.envs.base import GameEnv, action_index, game_model
from dice_envs.envs.rendering import render_scene
from dice_envs.games.yahtzee import (
    BOX_NAMES,
    DICE,
    DICE_FACES,
    DICE_KEEP_OFFSET,
    FULL_CARD,
    IS_YAHTZEE,
    KEEP_ADD,
    KEEP_SIZE,
    NUM_BOXES,
    NUM_DICE,
    REROLL_KEEP,
    REROLL_LEGAL,
    UPPER_TARGET,
    PlayState,
    Yahtzee,
)

NUM_ACTIONS = 32 + NUM_BOXES
OBSERVATION_NVEC = (6,) * 6 + (3,) + (2,) * NUM_BOXES + (UPPER_TARGET + 1, 2)
"""The observation's 22 entries: dice per face 1..6, rolls left, the 13 filled flags, the
upper total capped at 63, whether the Yahtzee box holds 50."""
BOX_LABELS = (
    "ones", "twos", "threes", "fours", "fives", "sixes", "3 kind", "4 kind", "full house",
    "sm straight", "lg straight", "yahtzee", "chance",
)  # fmt: skip

# Plain-Python copies of the model's constant arrays: a step reads a few entries of each,
# and list indexing costs a tenth of numpy's for one entry.
_KEEP_ADD = KEEP_ADD.tolist()
_KEEP_SIZE = KEEP_SIZE.tolist()
_REROLL_KEEP = REROLL_KEEP.tolist()
_IS_YAHTZEE = IS_YAHTZEE.tolist()
_DICE_COUNTS = DICE.tolist()
_FILLED_FLAGS = ((np.arange(FULL_CARD + 1)[:, None] >> np.arange(NUM_BOXES)) & 1).tolist()
_REROLL_MASKS = REROLL_LEGAL.astype(np.int8)
_NO_REROLLS = np.zeros(32, dtype=np.int8)
_BOX_MASKS = np.array(_FILLED_FLAGS, dtype=np.int8)  # row = the legal boxes' bit mask
_NO_ACTIONS = np.zeros(NUM_ACTIONS, dtype=np.int8)
_UNKNOWN = -1  # a box filled before a start mid-game: its points are not known


def observation_of(state: PlayState) -> np.ndarray:
    """The 22-entry observation (int64) of a `PlayState`."""
    filled, upper, flag, dice, rolls_left = state
    return np.array(
        _DICE_COUNTS[dice] + [rolls_left] + _FILLED_FLAGS[filled] + [upper, int(flag)],
        dtype=np.int64,
    )


def yahtzee_model(model: Any, kwargs: dict[str, Any]) -> Yahtzee:
    """The `Yahtzee` model a Yahtzee env is given (see `dice_envs.envs.base.game_model`); a
    ValueError for a model of another game."""
    model = game_model(model, kwargs)
    if not isinstance(model, Yahtzee):
        raise ValueError(f"model must be a Yahtzee model, got {model!r}")
    return model


def action_name(action: int) -> str:
    """ "reroll 0b00101" (bit i rerolls the i-th lowest die) or "score chance"."""
    if action < 32:
        return f"reroll 0b{action:05b}"
    return f"score {BOX_NAMES[action - 32]}"


class YahtzeeEnv(GameEnv):
    """Solitaire Yahtzee: thirteen turns of five dice, up to two rerolls, one box per turn.

    ## Description
    The official solitaire rules: 13 boxes (Ones to Sixes, Three of a kind, Four of a kind,
    Full house 25, Small straight 30, Large straight 40, Yahtzee 50, Chance), the upper bonus
    35 once the upper boxes total 63, a Yahtzee bonus of 100 for each further Yahtzee while the
    Yahtzee box holds 50, and a joker rule for a further Yahtzee once the Yahtzee box is
    filled (`joker`). Five of a kind is not a Full house unless played as a joker. The optimal
    expected final score is 254.5896 under the reading of Verhoeff (1999) and Glenn (2006)
    (`joker="verhoeff"`); `baselines.solve("dice_envs/Yahtzee-v0", joker=...)` computes it
    for every joker rule. The game is too large for tables: this env and its native vector
    env play the model's rules directly (`dice_envs.games.yahtzee.Yahtzee`).

    ## Action Space
    `Discrete(45)`. Actions 0-31 reroll the dice whose bit is set, the five dice taken in
    ascending order of face (bit 0 = the lowest die); actions 32-44 score the dice in a box,
    in the order above. The mask (`info["action_mask"]`, `action_masks()`) allows rerolls only
    with rolls left, never rerolling nothing, and one reroll per distinct multiset kept: the
    lowest-numbered one (among equal faces, reroll the lowest-positioned dice); and only the
    open boxes the joker rule allows. An action the mask forbids never raises and always
    makes progress: a duplicate reroll plays as its legal twin; any other forbidden action
    (rerolling nothing, a reroll with no rolls left, a filled box, a box the joker rule
    forbids) scores the dice in the first legal box in box order. So every episode ends
    within 39 steps, masked or not.

    ## Observation Space
    `MultiDiscrete` of 22 entries: how many dice show each face 1..6 (six entries, 0..5);
    rolls left in the turn (0..2); for each box in the order above, 1 if it is filled (13
    entries); the upper total capped at 63 (0..63); 1 if the Yahtzee box holds 50.

    ## Rewards
    The points each scoring earns, the upper bonus and the Yahtzee bonus included when
    earned; rerolls earn 0. The episode's rewards sum to the final score.

    ## Starting State
    The first roll of the first turn is made: five dice showing, 2 rolls left, an empty card
    (in a reduced game, the boxes not in play shown as filled).

    ## Episode End
    Termination when the last box is filled; the final observation shows the last dice
    scored, 0 rolls left and every box filled. A scoring step before that returns the next
    turn's first roll with 2 rolls left. No truncation: at most 3 steps per box.

    ## Arguments
    - `joker="forced"`: the joker rule for a Yahtzee rolled with the Yahtzee box filled:
      `"forced"` (the official instructions: its upper box if open, else any open lower box,
      where Full house and the straights score in full, else 0 in an open upper box),
      `"free"` (any open box, lower boxes in full) or `"verhoeff"` (any open box; Full house
      and the straights in full only when its upper box is filled).
    - `boxes=None`: the names of the boxes in play (`dice_envs.games.yahtzee.BOX_NAMES`;
      default all 13): a reduced game of one turn per box, the others shown as filled.
    - `render_mode=None`: `"ansi"` (one line of text), `"rgb_array"` (the dice and the
      score card) or `"human"` (that picture in a pygame window: `pip install
      'dice-envs[human]'`).

    ## Version History
    - v0: initial version.
    """

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 2}

    def __init__(
        self,
        model: Any = "dice_envs.games.yahtzee:Yahtzee",
        render_mode: str | None = None,
        **kwargs: Any,
    ) -> None:
        self._check_render_mode(render_mode)
        self.model = yahtzee_model(model, kwargs)
        self.render_mode = render_mode
        self.action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = spaces.MultiDiscrete(OBSERVATION_NVEC)
        self.state: PlayState | None = None
        self.done = True
        self.episode_return = 0.0
        self.last_action: int | None = None
        self.played_action: int | None = None
        self.card: list[int | None] = [None] * NUM_BOXES  # points written, for the renders
        self._scoring: tuple[int, tuple[int, ...]] = (0, ())
        self._uniforms: list[float] = []
        self._block_start: dict = {}

    # -- sampling ---------------------------------------------------------------------------

    def _roll(self, keep: int) -> int:
        """The dice (index in `DICE`) after rolling the dice a keep leaves out, one die at a
        time, each face with probability 1/6."""
        uniform = self._uniform
        for _ in range(NUM_DICE - _KEEP_SIZE[keep]):
            keep = _KEEP_ADD[keep][int(6.0 * uniform())]
        return keep - DICE_KEEP_OFFSET

    def _mask(self, state: PlayState) -> np.ndarray:
        """The mask of `state`, keeping its scoring for the next step."""
        self._scoring = self.model.scoring_one(state.filled, state.dice)
        legal = self._scoring[0]
        rerolls = _REROLL_MASKS[state.dice] if state.rolls_left else _NO_REROLLS
        return np.concatenate((rerolls, _BOX_MASKS[legal]))

    # -- the Env API --------------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        requested = self._begin_reset(seed, options)
        if requested is not None:
            state = self.model.check_play_state(requested)
            # A start mid-game: the points of the boxes filled before are not known.
            self.card = [_UNKNOWN if state.filled >> b & 1 else None for b in range(NUM_BOXES)]
        else:
            start = self.model.start
            state = PlayState(start.filled, start.upper, start.yahtzee50, self._roll(0), 2)
            self.card = [None] * NUM_BOXES
        self.state, self.done = state, False
        self.episode_return, self.last_action, self.played_action = 0.0, None, None
        info = {"action_mask": self._mask(state)}
        if self.render_mode == "human":
            self.render()
        return observation_of(state), info

    def step(self, action):
        self._check_steppable()
        action = action_index(action, NUM_ACTIONS)
        filled, upper, flag, dice, rolls_left = self.state
        legal, points = self._scoring  # the current state's, kept by `_mask`
        played = Yahtzee.played_action(dice, rolls_left, legal, action)
        terminal = False
        if played < 32:
            state = PlayState(
                filled, upper, flag, self._roll(_REROLL_KEEP[dice][played]), rolls_left - 1
            )
            reward = 0
        else:
            box = played - 32
            reward, upper, flag = Yahtzee.score_result(
                upper, flag, box, points[box], _IS_YAHTZEE[dice]
            )
            self.card[box] = points[box]
            filled |= 1 << box
            terminal = filled == FULL_CARD
            if terminal:
                state = PlayState(filled, upper, bool(flag), dice, 0)
            else:
                state = PlayState(filled, upper, bool(flag), self._roll(0), 2)
        self.state, self.done = state, terminal
        self.last_action, self.played_action = action, played
        self.episode_return += reward
        mask = _NO_ACTIONS.copy() if terminal else self._mask(state)
        if self.render_mode == "human":
            self.render()
        return observation_of(state), float(reward), terminal, False, {"action_mask": mask}

    # -- rendering (`render` is `GameEnv`'s) ----------------------------------------------------

    def _box_text(self, box: int) -> str:
        if box not in self.model.boxes:
            return "."
        points = self.card[box]
        if points is None:
            return "-"
        return "x" if points == _UNKNOWN else str(points)

    def _last(self) -> str:
        if self.last_action is None:
            return "first roll"
        text = action_name(self.played_action)
        if self.played_action != self.last_action:
            text += f" (for {action_name(self.last_action)})"
        return text

    def _text(self) -> str:
        state = self.state
        faces = " ".join(str(f) for f in DICE_FACES[state.dice].tolist())
        card = " ".join(f"{BOX_LABELS[b]} {self._box_text(b)}" for b in range(NUM_BOXES))
        parts = [
            f"dice {faces}",
            f"rolls left {state.rolls_left}",
            card,
            f"upper {state.upper}/63" + (" yahtzee 50" if state.yahtzee50 else ""),
            f"last {self._last()}",
            f"return {self.episode_return:g}" + (" (game over)" if self.done else ""),
        ]
        return " | ".join(parts)

    def _picture(self) -> np.ndarray:
        """The dice (dimmed once the game is over) above the score card, in one frame size."""
        state = self.state
        dice = [(face, self.done) for face in DICE_FACES[state.dice].tolist()]
        pairs = [(b, 6 + b) for b in range(6)] + [(None, 12)]
        lines = [
            f"ROLLS LEFT {state.rolls_left}   UPPER {state.upper}/63   "
            f"SCORE {self.episode_return:g}" + ("   GAME OVER" if self.done else "")
        ]
        for upper_box, lower_box in pairs:
            left = "" if upper_box is None else f"{BOX_LABELS[upper_box]} "
            left += "" if upper_box is None else self._box_text(upper_box)
            right = f"{BOX_LABELS[lower_box]} {self._box_text(lower_box)}"
            lines.append(f"{left:<14}{right}")
        lines.append(f"LAST {self._last()}")
        return render_scene(dice, lines, max_dice=NUM_DICE, max_lines=9)

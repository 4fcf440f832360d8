"""The exact optimum of solitaire Yahtzee by backward induction over the turn-start states.

The solver reads only the model's public structure (`dice_envs.games.yahtzee`): the turn-start
states in an order in which a turn leads only to later ones, the fixed graph inside a turn and
the batch scoring rules. Each turn is solved inside with array operations over the 252 dice
multisets and the 462 keeps, for thousands of turn-start states at once:

    S(d)      = max over legal boxes of reward + V(next state)        (no rolls left)
    K_r(k)    = mean over faces f of K_r(k + f), K_r(d) = E_r(d) for five dice
                (rolling the dice a keep leaves out, one at a time)
    E_{r+1}(d) = max(S(d), max over keeps k strictly inside d of K_r(k))
    V(state)  = K_2(empty keep)                                        (the first roll)

Keeping all five dice is not a reroll: scoring now is worth the same. Values are float64 sums
of exact rationals; agreement with a plain recursion is within 1e-9 (round-off only).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from dice_envs.games.yahtzee import (
    FULL_CARD,
    IS_YAHTZEE,
    KEEP_ADD,
    KEEP_LEVEL_START,
    KEEP_REMOVE,
    NUM_BOXES,
    NUM_DICE,
    NUM_DICE_SETS,
    NUM_KEEPS,
    NUM_STATE_SLOTS,
    REROLL_KEEP,
    REROLL_LEGAL,
    YAHTZEE_DICE,
    TurnState,
    Yahtzee,
    state_index,
)

NUM_ACTIONS = 32 + NUM_BOXES  # rerolls by bit mask, then the boxes (the env's action order)
CHUNK = 4096  # turn-start states solved at once: about 100 MB of work arrays
_PLAIN_DICE = np.flatnonzero(~IS_YAHTZEE)


def _levels() -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Per keep size n, the local indices of the keeps with one more die (into size n + 1) and
    of those with one die less (into size n - 1; a face the keep lacks repeats one it has)."""
    start = KEEP_LEVEL_START
    add, remove = [], []
    for n in range(NUM_DICE + 1):
        rows = slice(start[n], start[n + 1])
        add.append(KEEP_ADD[rows] - start[n + 1] if n < NUM_DICE else None)
        if n == 0:
            remove.append(None)
            continue
        parents = KEEP_REMOVE[rows].copy()
        first = parents.max(axis=1, keepdims=True)
        parents = np.where(parents < 0, first, parents) - start[n - 1]
        remove.append(parents)
    return add, remove


_ADD, _REMOVE = _levels()


def roll_levels(dice_values: np.ndarray) -> list[np.ndarray]:
    """Keep values ``[K_0, ..., K_5]`` by size, from values of the 252 dice multisets
    (``K_5``, shape (252, B)): each keep is worth the mean over the faces of one more die."""
    levels = [None] * (NUM_DICE + 1)
    levels[NUM_DICE] = dice_values
    for n in range(NUM_DICE - 1, -1, -1):
        upper = levels[n + 1]
        total = upper.take(_ADD[n][:, 0], axis=0)
        for face in range(1, 6):
            total += upper.take(_ADD[n][:, face], axis=0)
        total /= 6.0
        levels[n] = total
    return levels


def best_reroll(levels: list[np.ndarray]) -> np.ndarray:
    """(252, B): per dice multiset, the best keep strictly inside it (a real reroll)."""
    best = levels[0]
    for n in range(1, NUM_DICE + 1):
        parents = _REMOVE[n]
        inner = best.take(parents[:, 0], axis=0)
        for face in range(1, 6):
            np.maximum(inner, best.take(parents[:, face], axis=0), out=inner)
        if n == NUM_DICE:
            return inner
        best = np.maximum(levels[n], inner, out=inner)
    raise AssertionError("unreachable")


@dataclass
class _BoxClasses:
    """Per box in play, the distinct points non-Yahtzee dice score there and each dice's class:
    the reward and next state depend on the dice only through them (the model's contract)."""

    boxes: list[int]
    values: list[np.ndarray]
    classes: list[np.ndarray]

    @classmethod
    def of(cls, model: Yahtzee) -> _BoxClasses:
        _, points = model.scoring(model.absent, _PLAIN_DICE)
        values, classes = [], []
        for box in model.boxes:
            distinct, inverse = np.unique(points[:, box], return_inverse=True)
            values.append(distinct)
            classes.append(inverse.ravel())
        return cls(list(model.boxes), values, classes)


def scoring_values(
    model: Yahtzee, values: np.ndarray, filled, upper, yahtzee50, classes: _BoxClasses | None = None
) -> np.ndarray:
    """(252, B): the best reward + V(next state) over legal boxes, per dice multiset, for a
    batch of turn-start states, given turn-start values `values` (dense, `state_index`)."""
    classes = classes or _BoxClasses.of(model)
    filled = np.asarray(filled, dtype=np.int64)
    upper = np.asarray(upper, dtype=np.int64)
    flag = np.asarray(yahtzee50, dtype=bool)
    best = np.full((len(_PLAIN_DICE), len(filled)), -np.inf)
    buffer = np.empty_like(best)
    for box, points, inverse in zip(classes.boxes, classes.values, classes.classes, strict=True):
        open_ = (filled >> box & 1) == 0
        if not open_.any():
            continue
        reward, next_upper, next_flag = model.score_result(
            upper[None, :], flag[None, :], box, points[:, None], False
        )
        table = reward + values[state_index(filled | 1 << box, next_upper, next_flag)]
        table[:, ~open_] = -np.inf
        np.maximum(best, table.take(inverse, axis=0, out=buffer), out=best)
    result = np.empty((NUM_DICE_SETS, len(filled)))
    result[_PLAIN_DICE] = best
    result[YAHTZEE_DICE] = (
        box_values(model, values, filled, upper, flag, YAHTZEE_DICE).max(axis=-1).T
    )
    return result


def box_values(model: Yahtzee, values: np.ndarray, filled, upper, yahtzee50, dice) -> np.ndarray:
    """(B, D, 13): reward + V(next state) of scoring each of D dice in each box (-inf where
    illegal), by the model's general rules; for the few dice whose scoring depends on the
    filled boxes (Yahtzees) and for queries."""
    filled = np.asarray(filled, dtype=np.int64)[:, None, None]
    boxes = np.arange(NUM_BOXES)
    legal, points = model.scoring(filled[..., 0], np.asarray(dice)[None, :])
    reward, next_upper, next_flag = model.score_result(
        np.asarray(upper)[:, None, None],
        np.asarray(yahtzee50)[:, None, None],
        boxes,
        points,
        IS_YAHTZEE[np.asarray(dice)][None, :, None],
    )
    worth = reward + values[state_index(filled | 1 << boxes, next_upper, next_flag)]
    return np.where(legal, worth, -np.inf)


@dataclass
class TurnInside:
    """Everything inside one batch of turns: ``dice[r]`` (252, B) is the value of the dice with
    r rolls left, ``keeps[r]`` (462, B) the value of a keep rerolled with r + 1 rolls left
    (then r rolls left after it), and ``start`` (B,) the value at the turn's start."""

    dice: list[np.ndarray]
    keeps: list[np.ndarray]
    start: np.ndarray


def solve_turns(score_values: np.ndarray, detail: bool = False) -> TurnInside | np.ndarray:
    """The inside of a batch of turns from their scoring values (252, B): the turn-start
    values (B,), or with `detail` the whole `TurnInside`."""
    dice = [score_values]
    keeps = []
    for _ in range(2):
        levels = roll_levels(dice[-1])
        if detail:
            keeps.append(np.concatenate(levels[:NUM_DICE]))
        dice.append(np.maximum(score_values, best_reroll(levels)))
    start = roll_levels(dice[-1])[0][0]
    if not detail:
        return start
    return TurnInside(dice, keeps, start)


@dataclass
class YahtzeeSolution:
    """The optimal play of a Yahtzee model: `value` is the optimal expected final score.

    `state_values` holds V for every reachable turn-start state at its `state_index` (NaN
    elsewhere; 0 once every box is filled). Values inside a turn are recomputed from them on
    demand (one turn costs about a millisecond). Exact up to float64 round-off (about 1e-12
    relative).
    """

    model: Yahtzee
    value: float
    state_values: np.ndarray
    seconds: float
    num_states: int
    _classes: _BoxClasses = field(repr=False)

    def turn(self, state: TurnState | Sequence) -> TurnInside:
        """The inside of the turn starting at `state`, in detail (batch size 1)."""
        state = self.model.check_state(state)
        if self.model.is_over(state):
            raise ValueError("the game is over in this state: every box is filled")
        args = ([state.filled], [state.upper], [state.yahtzee50])
        scores = scoring_values(self.model, self.state_values, *args, classes=self._classes)
        return solve_turns(scores, detail=True)

    def value_at(self, state: TurnState | Sequence, dice: int, rolls_left: int) -> float:
        """Expected final score to go with these dice (index in `DICE`) and rolls left."""
        _check_query(dice, rolls_left)
        return float(self.turn(state).dice[rolls_left][dice, 0])

    def action_values(self, state: TurnState | Sequence, dice: int, rolls_left: int) -> np.ndarray:
        """(45,): expected final score to go of each action, its own points included: rerolls
        0..31 by bit mask over the dice in ascending order, then boxes 32..44. NaN for an
        illegal action (a duplicate or empty reroll, a reroll with no rolls left, a box the
        rules forbid)."""
        _check_query(dice, rolls_left)
        state = self.model.check_state(state)
        result = np.full(NUM_ACTIONS, np.nan)
        worth = box_values(
            self.model, self.state_values, [state.filled], [state.upper], [state.yahtzee50], [dice]
        )[0, 0]
        result[32:] = np.where(np.isfinite(worth), worth, np.nan)
        if rolls_left > 0:
            keeps = self.turn(state).keeps[rolls_left - 1][:, 0]
            legal = REROLL_LEGAL[dice]
            result[:32][legal] = keeps[REROLL_KEEP[dice][legal]]
        return result


def _check_query(dice: int, rolls_left: int) -> None:
    if isinstance(dice, bool) or not 0 <= int(dice) < NUM_DICE_SETS:
        raise ValueError(f"dice must be an index in 0..{NUM_DICE_SETS - 1}, got {dice!r}")
    if isinstance(rolls_left, bool) or rolls_left not in (0, 1, 2):
        raise ValueError(f"rolls_left must be 0, 1 or 2, got {rolls_left!r}")


def solve_model(model: Yahtzee, chunk: int = CHUNK) -> YahtzeeSolution:
    """Backward induction over the model's turn-start states, `chunk` states at a time."""
    start_time = time.perf_counter()
    classes = _BoxClasses.of(model)
    values = np.full(NUM_STATE_SLOTS, np.nan)
    values[state_index(FULL_CARD, np.arange(64)[:, None], np.array([0, 1]))] = 0.0
    filled, upper, flag = model.turn_start_states()
    layer_start = np.searchsorted(_popcount(filled), np.arange(NUM_BOXES + 1))
    stop = len(filled)
    while stop > 0:
        # A turn fills one box: the states of one layer (boxes filled) lead only to the next
        # layer, already solved. Chunks never straddle two layers.
        first_of_layer = layer_start[np.searchsorted(layer_start, stop - 1, side="right") - 1]
        lo = max(stop - chunk, int(first_of_layer))
        rows = slice(lo, stop)
        scores = scoring_values(model, values, filled[rows], upper[rows], flag[rows], classes)
        values[state_index(filled[rows], upper[rows], flag[rows])] = solve_turns(scores)
        stop = lo
    value = float(values[state_index(*model.start)])
    return YahtzeeSolution(
        model, value, values, time.perf_counter() - start_time, len(filled), classes
    )


def _popcount(masks: np.ndarray) -> np.ndarray:
    masks = np.asarray(masks, dtype=np.int64)
    return sum((masks >> b) & 1 for b in range(NUM_BOXES))


def solve_yahtzee(joker: str = "forced", boxes: Sequence[str] | None = None) -> YahtzeeSolution:
    """The exact optimum of solitaire Yahtzee (`dice_envs.games.yahtzee.Yahtzee` arguments).

    The full game (536,320 turn-start states) takes seconds and about 150 MB; see
    `benchmarks/yahtzee.py` for the measured time.
    """
    return solve_model(Yahtzee(joker=joker, boxes=boxes))

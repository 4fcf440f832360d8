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
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from baselines.yahtzee_compiled import BoxRows, best_actions, turn_tables
from dice_envs import GAMES, progress, sizes
from dice_envs.envs.yahtzee import OBSERVATION_NVEC
from dice_envs.games.rule import Rule
from dice_envs.games.yahtzee import (
    DICE,
    FULL_CARD,
    IS_YAHTZEE,
    KEEP_ADD,
    KEEP_LEVEL_START,
    KEEP_REMOVE,
    KEEP_SIZE,
    KEEPS,
    NUM_BOXES,
    NUM_DICE,
    NUM_DICE_SETS,
    NUM_KEEPS,
    NUM_STATE_SLOTS,
    REROLL_KEEP,
    REROLL_LEGAL,
    UPPER_LEVELS,
    UPPER_TARGET,
    YAHTZEE,
    YAHTZEE_DICE,
    TurnState,
    Yahtzee,
    state_index,
)

NUM_ACTIONS = 32 + NUM_BOXES  # rerolls by bit mask, then the boxes (the env's action order)
CHUNK = 256  # turn-start states solved at once: work arrays of 0.5 MB stay in cache
_FACE_CODES = 6 ** np.arange(6)  # dice counts per face -> a code, to find the dice index
_DICE_OF_CODE = np.full(6**6, -1, dtype=np.int64)
_DICE_OF_CODE[DICE.astype(np.int64) @ _FACE_CODES] = np.arange(NUM_DICE_SETS)


def _internal_order() -> tuple[np.ndarray, np.ndarray]:
    """The solver's own order of the keeps: by size, and inside a size by the number of
    distinct faces, most first (so the keeps with a j-th distinct face form a prefix).
    Returns (order, position): internal row i is keep ``order[i]``; keep k is row
    ``position[k]``. The dice multisets are the last 252 rows."""
    distinct = (KEEPS > 0).sum(axis=1)
    order = np.lexsort((-distinct, KEEP_SIZE)).astype(np.int64)
    position = np.empty_like(order)
    position[order] = np.arange(NUM_KEEPS)
    return order, position


_ORDER, _POSITION = _internal_order()
DICE_ROWS = _POSITION[KEEP_LEVEL_START[NUM_DICE] :] - KEEP_LEVEL_START[NUM_DICE]
"""(252,): the row of each dice multiset (in `DICE` order) in the solver's (252, B) arrays."""


def _levels() -> tuple[list, list]:
    """Per keep size n, in the internal order: the rows (of size n + 1) of the keeps with one
    more die, face by face, flattened (n_keeps * 6,); and per slot j the rows (of size n - 1)
    of each keep with its j-th distinct face taken out, for the keeps that have one."""
    start = KEEP_LEVEL_START
    add, remove = [], []
    for n in range(NUM_DICE + 1):
        keeps = _ORDER[start[n] : start[n + 1]]
        if n < NUM_DICE:
            add.append((_POSITION[KEEP_ADD[keeps]] - start[n + 1]).ravel())
        if n == 0:
            remove.append(None)
            continue
        parents = [_POSITION[row[row >= 0]] - start[n - 1] for row in KEEP_REMOVE[keeps]]
        slots = []
        for j in range(min(n, 6)):
            column = [p[j] for p in parents if len(p) > j]  # a prefix, by the order
            slots.append(np.array(column, dtype=np.int64))
        remove.append(slots)
    return add, remove


_ADD, _REMOVE = _levels()


def roll_levels(dice_values: np.ndarray) -> list[np.ndarray]:
    """Keep values ``[K_0, ..., K_5]`` by size (internal order), from the values of the dice
    multisets (``K_5``, shape (252, B), rows `DICE_ROWS`): each keep is worth the mean over
    the faces of one more die."""
    levels: list[np.ndarray] = [dice_values] * (NUM_DICE + 1)
    batch = dice_values.shape[1]
    for n in range(NUM_DICE - 1, -1, -1):
        children = levels[n + 1].take(_ADD[n], axis=0).reshape(-1, 6, batch)
        levels[n] = children.sum(axis=1)
        levels[n] /= 6.0
    return levels


def best_reroll(levels: list[np.ndarray]) -> np.ndarray:
    """(252, B): per dice multiset, the best keep strictly inside it (a real reroll)."""
    best = levels[0]
    for n in range(1, NUM_DICE + 1):
        slots = _REMOVE[n]
        inner = best.take(slots[0], axis=0)
        for column in slots[1:]:
            head = inner[: len(column)]
            np.maximum(head, best.take(column, axis=0), out=head)
        if n == NUM_DICE:
            return inner
        best = np.maximum(levels[n], inner, out=inner)
    raise AssertionError("unreachable")


@dataclass
class _BoxClasses:
    """Per box in play, the distinct (points, Yahtzee roll) pairs the dice score there on an
    empty card, and each dice multiset's pair: the model's contract is that the scoring depends
    on the filled boxes only for a Yahtzee with the Yahtzee box filled, and the reward and next
    state depend on the dice only through this pair."""

    boxes: list[int]
    points: list[np.ndarray]
    yahtzee: list[np.ndarray]
    classes: list[np.ndarray]

    @classmethod
    def of(cls, model: Yahtzee) -> _BoxClasses:
        _, points = model.scoring(model.absent, np.arange(NUM_DICE_SETS))
        result = cls(list(model.boxes), [], [], [])
        for box in model.boxes:
            keys = points[:, box] * 2 + IS_YAHTZEE
            distinct, inverse = np.unique(keys, return_inverse=True)
            result.points.append(distinct // 2)
            result.yahtzee.append(distinct % 2 == 1)
            classes = np.empty(NUM_DICE_SETS, dtype=np.int64)
            classes[DICE_ROWS] = inverse.ravel()
            result.classes.append(classes)
        return result


def scoring_values(
    model: Yahtzee, values: np.ndarray, filled, upper, yahtzee50, classes: _BoxClasses | None = None
) -> np.ndarray:
    """(252, B): the best reward + V(next state) over legal boxes, per dice multiset (rows
    `DICE_ROWS`), for a batch of turn-start states, given turn-start values `values` (dense,
    `state_index`)."""
    classes = classes or _BoxClasses.of(model)
    filled = np.asarray(filled, dtype=np.int64)
    upper = np.asarray(upper, dtype=np.int64)
    flag = np.asarray(yahtzee50, dtype=bool)
    best = np.full((NUM_DICE_SETS, len(filled)), -np.inf)
    buffer = np.empty_like(best)
    for box, points, yahtzee, inverse in zip(
        classes.boxes, classes.points, classes.yahtzee, classes.classes, strict=True
    ):
        open_ = (filled >> box & 1) == 0
        if not open_.any():
            continue
        reward, next_upper, next_flag = model.score_result(
            upper[None, :], flag[None, :], box, points[:, None], yahtzee[:, None]
        )
        table = reward + values[state_index(filled | 1 << box, next_upper, next_flag)]
        table[:, ~open_] = -np.inf
        np.maximum(best, table.take(inverse, axis=0, out=buffer), out=best)
    joker = np.flatnonzero(filled >> YAHTZEE & 1) if model.has_yahtzee_box else []
    if len(joker):  # a Yahtzee with the Yahtzee box filled: the joker rules, in general
        worth = box_values(model, values, filled[joker], upper[joker], flag[joker], YAHTZEE_DICE)
        best[DICE_ROWS[YAHTZEE_DICE][:, None], joker[None, :]] = worth.max(axis=-1).T
    return best


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
    r rolls left, ``keeps[r]`` (462, B) the value of keeping a multiset and rolling the other
    dice with r + 1 rolls left (r left after the roll; a keep of five dice is worth
    ``dice[r]``), and ``start`` (B,) the value at the turn's start."""

    dice: list[np.ndarray]
    keeps: list[np.ndarray]
    start: np.ndarray


def solve_turns(score_values: np.ndarray, detail: bool = False) -> TurnInside | np.ndarray:
    """The inside of a batch of turns from their scoring values (252, B; rows `DICE_ROWS`):
    the turn-start values (B,), or with `detail` the whole `TurnInside` (in `DICE` and
    `KEEPS` order)."""
    dice = [score_values]
    keeps = []
    for _ in range(2):
        levels = roll_levels(dice[-1])
        if detail:
            keeps.append(np.concatenate(levels)[_POSITION])
        dice.append(np.maximum(score_values, best_reroll(levels)))
    start = roll_levels(dice[-1])[0][0]
    if not detail:
        return start
    return TurnInside([values[DICE_ROWS] for values in dice], keeps, start)


@dataclass
class YahtzeeSolution:
    """The optimal play of a Yahtzee model: `value` is the optimal expected final score.

    Values inside a turn are recomputed from `state_values` on demand (one turn costs about a
    millisecond). Exact up to float64 round-off (about 1e-12 relative).

    Attributes:
        model: the `dice_envs.games.yahtzee.Yahtzee` model solved (joker rule, boxes).
        value: the optimal expected final score from the start, bonuses included.
        state_values: V of every reachable turn-start state at its `state_index` (NaN
            elsewhere; 0 once every box is filled).
        seconds: the solve's wall time (imports and the model's construction excluded).
        num_states: how many reachable turn-start states were solved (536,320 in the full
            game).
    """

    model: Yahtzee
    value: float
    state_values: np.ndarray
    seconds: float
    num_states: int
    _classes: _BoxClasses = field(repr=False)

    @classmethod
    def of_values(
        cls, model: Yahtzee, state_values: np.ndarray, num_states: int, seconds: float = 0.0
    ) -> YahtzeeSolution:
        """The solution of `model` from the `state_values` and `num_states` of a solve of the
        same model (read back from disk, say); ValueError where they can not be its values."""
        values = np.asarray(state_values)
        if values.shape != (NUM_STATE_SLOTS,) or values.dtype != np.float64:
            raise ValueError(
                f"state_values must be float64 of shape ({NUM_STATE_SLOTS},), got "
                f"{values.dtype} of shape {values.shape}"
            )
        start = float(values[state_index(*model.start)])
        if not np.isfinite(start):
            raise ValueError("state_values has no value at the model's start")
        return cls(model, start, values, seconds, int(num_states), _BoxClasses.of(model))

    def turn(self, state: TurnState | Sequence) -> TurnInside:
        """The inside of the turn starting at `state`, in detail (batch size 1)."""
        state = self.model.check_state(state)
        if self.model.is_over(state):
            raise ValueError("the game is over in this state: every box is filled")
        args = ([state.filled], [state.upper], [state.yahtzee50])
        scores = scoring_values(self.model, self.state_values, *args, classes=self._classes)
        return solve_turns(scores, detail=True)

    def turn_value(self, state: TurnState | Sequence, dice: int, rolls_left: int) -> float:
        """Expected final score to go with these dice (index in `DICE`) and rolls left."""
        _check_query(dice, rolls_left)
        return float(self.turn(state).dice[rolls_left][dice, 0])

    def turn_action_values(
        self, state: TurnState | Sequence, dice: int, rolls_left: int
    ) -> np.ndarray:
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

    def action_values_batch(self, observations) -> np.ndarray:
        """`action_values` of many env observations at once: (n, 45) for an int array of
        shape (n, 22) (or (45,) for one observation). A final observation (every box filled)
        has no legal action: its row is all NaN. The turns are solved once per distinct
        turn-start state among the observations, `CHUNK` at a time."""
        observations = np.asarray(observations)
        single = observations.ndim == 1
        rows = (
            observations.reshape(-1, observations.shape[-1]) if observations.ndim else observations
        )
        turn = parse_observations(self.model, rows, self.state_values)
        filled, upper, flag, dice, rolls_left, final = turn
        result = np.full((len(filled), NUM_ACTIONS), np.nan)
        live = np.flatnonzero(~final)
        if len(live):
            args = (filled[live], upper[live], flag[live], dice[live], rolls_left[live])
            result[live] = self._live_action_values(*args)
        return result[0] if single else result

    def _live_action_values(self, filled, upper, flag, dice, rolls_left) -> np.ndarray:
        result = np.full((len(filled), NUM_ACTIONS), np.nan)
        boxes = np.arange(NUM_BOXES)
        legal, points = self.model.scoring(filled[:, None], dice[:, None])
        reward, next_upper, next_flag = self.model.score_result(
            upper[:, None], flag[:, None], boxes, points[:, 0], IS_YAHTZEE[dice][:, None]
        )
        after = state_index(filled[:, None] | 1 << boxes, next_upper, next_flag)
        result[:, 32:] = np.where(legal[:, 0], reward + self.state_values[after], np.nan)
        rerolls = np.flatnonzero(rolls_left > 0)
        if not len(rerolls):
            return result
        slots = state_index(filled[rerolls], upper[rerolls], flag[rerolls])
        unique, which = np.unique(slots, return_inverse=True)
        keep_values = np.empty((len(rerolls), NUM_ACTIONS - NUM_BOXES))
        for lo in range(0, len(unique), CHUNK):
            part = unique[lo : lo + CHUNK]
            card = (part // 128, part // 2 % UPPER_LEVELS, part % 2 == 1)
            scores = scoring_values(self.model, self.state_values, *card, classes=self._classes)
            keeps = solve_turns(scores, detail=True).keeps  # (462, B) per rolls left - 1
            rows = np.flatnonzero((which >= lo) & (which < lo + CHUNK))
            d, r = dice[rerolls[rows]], rolls_left[rerolls[rows]]
            column = which[rows] - lo
            table = np.stack(keeps)  # (2, 462, B)
            keep_values[rows] = table[r[:, None] - 1, REROLL_KEEP[d], column[:, None]]
        legal_rerolls = REROLL_LEGAL[dice[rerolls]]
        result[rerolls, :32] = np.where(legal_rerolls, keep_values, np.nan)
        return result

    def actions(self, observations) -> np.ndarray:
        """The optimal action of each observation ((n,) int64 for (n, 22); the lowest-numbered
        one on exact ties); 32 for a final observation, where no action is legal. Each
        distinct turn-start state among the observations is solved inside once (compiled,
        `CHUNK` states at a time), and every decision of its turn answered from it."""
        observations = np.asarray(observations)
        single = observations.ndim == 1
        rows = observations.reshape(-1, len(OBSERVATION_NVEC)) if single else observations
        filled, upper, flag, dice, rolls_left, final = parse_observations(
            self.model, rows, self.state_values
        )
        result = np.full(len(filled), 32, dtype=np.int64)
        live = np.flatnonzero(~final)
        unique, which = np.unique(state_index(filled, upper, flag)[live], return_inverse=True)
        for lo in range(0, len(unique), CHUNK):
            part = unique[lo : lo + CHUNK]
            card = (part // 128, part // 2 % UPPER_LEVELS, part % 2 == 1)
            tables = turn_tables(self.model, self._box_rows, self.state_values, *card)
            args = (tables.pair_worth, tables.joker, tables.joker_worth, self._box_rows.rows)
            best = best_actions(*args)  # (B, 3, 252)
            inside = slice(None) if len(unique) <= CHUNK else (which >= lo) & (which < lo + CHUNK)
            rows_in = live[inside]
            result[rows_in] = best[which[inside] - lo, rolls_left[rows_in], dice[rows_in]]
        return result[0] if single else result

    @cached_property
    def _box_rows(self) -> BoxRows:
        return BoxRows(self.model)

    def batched_policy(self) -> Rule:
        """The optimal policy as a batched policy (`dice_envs.policies.batched` form): int64
        observations (n, 22) -> (n,) actions, by `actions`; one observation gives one int."""
        width = len(OBSERVATION_NVEC)
        return Rule.from_batch(lambda obs: self.actions(np.reshape(obs, (-1, width))), "optimal")

    def action(self, obs) -> int:
        """The optimal action at one env observation (22 ints)."""
        return int(self.actions(np.asarray(obs, dtype=np.int64).reshape(1, -1))[0])

    def action_values(self, obs) -> np.ndarray:
        """(45,): the expected final score to go of each action at one env observation, its
        own points included (NaN where the rules forbid it); `turn_action_values` takes the
        score card, the dice and the rolls left instead."""
        return self.action_values_batch(np.asarray(obs, dtype=np.int64).reshape(1, -1))[0]

    def value_at(self, obs) -> float:
        """The optimal expected final score to go at one env observation (0 once every box
        is filled)."""
        return float(self.values_at(np.asarray(obs, dtype=np.int64).reshape(1, -1))[0])

    def values_at(self, observations) -> np.ndarray:
        """(n,): `value_at` of each row of an (n, 22) int array."""
        values = self.action_values_batch(np.asarray(observations, dtype=np.int64))
        live = ~np.isnan(values).all(axis=1)
        result = np.zeros(len(values))
        result[live] = np.nanmax(values[live], axis=1)
        return result


def parse_observations(
    model: Yahtzee, observations: np.ndarray, state_values: np.ndarray
) -> tuple[np.ndarray, ...]:
    """Env observations (n, 22) as arrays ``(filled, upper, yahtzee50, dice, rolls_left,
    final)`` of the game `model` (whose reachable turn-start states are those where the dense
    `state_values` are not NaN), or a ValueError naming the first observation that is not one
    of its observations (out of range, not five dice, an unreachable score card)."""
    obs = np.asarray(observations)
    if obs.ndim != 2 or obs.shape[1] != len(OBSERVATION_NVEC):
        raise ValueError(
            f"observations must have shape (n, {len(OBSERVATION_NVEC)}), got {obs.shape}"
        )
    if not np.issubdtype(obs.dtype, np.integer):
        raise ValueError(f"observations must be integers, got dtype {obs.dtype}")
    obs = obs.astype(np.int64)
    filled = obs[:, 7:20] @ (1 << np.arange(NUM_BOXES))
    upper, flag, rolls_left = obs[:, 20], obs[:, 21], obs[:, 6]
    in_range = ((obs >= 0) & (obs < np.asarray(OBSERVATION_NVEC))).all(axis=1)
    dice = _DICE_OF_CODE[np.clip(obs[:, :6], 0, 5) @ _FACE_CODES]
    final = filled == FULL_CARD
    slot = state_index(filled, np.clip(upper, 0, UPPER_TARGET), flag.clip(0, 1))
    known = ~np.isnan(state_values[slot])
    bad = ~in_range | (dice < 0) | ~known | (filled & model.absent != model.absent)
    if bad.any():
        row = obs[int(np.flatnonzero(bad)[0])].tolist()
        raise ValueError(
            f"observation {row} is not one of {model!r}: dice counts summing to 5, rolls "
            "left 0..2, a reachable score card (the boxes out of play shown as filled)"
        )
    return filled, upper, flag == 1, dice, rolls_left, final


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
    with progress.task("solving", total=stop, unit="turn starts") as report:
        while stop > 0:
            # A turn fills one box: the states of one layer (boxes filled) lead only to the
            # next layer, already solved. Chunks never straddle two layers.
            first_of_layer = layer_start[np.searchsorted(layer_start, stop - 1, side="right") - 1]
            lo = max(stop - chunk, int(first_of_layer))
            rows = slice(lo, stop)
            scores = scoring_values(model, values, filled[rows], upper[rows], flag[rows], classes)
            values[state_index(filled[rows], upper[rows], flag[rows])] = solve_turns(scores)
            report.advance(stop - lo)
            stop = lo
    value = float(values[state_index(*model.start)])
    return YahtzeeSolution(
        model, value, values, time.perf_counter() - start_time, len(filled), classes
    )


def _popcount(masks: np.ndarray) -> np.ndarray:
    masks = np.asarray(masks, dtype=np.int64)
    return sum((masks >> b) & 1 for b in range(NUM_BOXES))


def registered_id() -> str:
    """The id of the registered game these solvers answer for (the one whose structure
    solver is `solve_yahtzee`)."""
    path = f"{__name__}:solve_yahtzee"
    for entry in GAMES.values():
        if entry.structure_solver == path:
            return entry.env_id
    raise ValueError(f"no registered game has the structure solver {path}")


def solve_yahtzee(joker: str = "forced", boxes: Sequence[str] | None = None) -> YahtzeeSolution:
    """The exact optimum of solitaire Yahtzee (`dice_envs.games.yahtzee.Yahtzee` arguments).

    The full game (536,320 turn-start states) takes seconds; `make bench` measures its time
    and peak memory in a fresh process (the Benchmarks page, "Yahtzee"). A game whose estimated
    peak memory passes the limit of `dice_envs.sizes.check` is refused before any work.
    """
    sizes.check(registered_id(), "solve", {"joker": joker, "boxes": boxes})
    return solve_model(Yahtzee(joker=joker, boxes=boxes))


_SOLUTIONS: OrderedDict[str, YahtzeeSolution] = OrderedDict()
SOLUTIONS_KEPT = 3  # a full solution holds 8.6 M floats (69 MB)


def optimal_solution(joker: str = "forced", boxes: Sequence[str] | None = None) -> YahtzeeSolution:
    """`solve_yahtzee(joker, boxes)`, kept per process for the next call (the latest
    `SOLUTIONS_KEPT` games): the evaluation, the sampled gap and the pages share it."""
    key = repr(Yahtzee(joker=joker, boxes=boxes))
    if key not in _SOLUTIONS:
        _SOLUTIONS[key] = solve_yahtzee(joker=joker, boxes=boxes)
        if len(_SOLUTIONS) > SOLUTIONS_KEPT:
            _SOLUTIONS.popitem(last=False)
    _SOLUTIONS.move_to_end(key)
    return _SOLUTIONS[key]

"""The compiled (numba) inner loops of Yahtzee's exact evaluation and of its optimal policy.

The rules stay in the model: the scoring of every turn-start state of a batch is computed by
numpy from `Yahtzee.scoring` and `Yahtzee.score_result` per (box, points, Yahtzee roll) pair
(`turn_tables`); the compiled loops only read those tables and the model's fixed tables of the
dice (`REROLL_KEEP`, `REROLL_TWIN`, `KEEP_ADD`, `KEEP_OUTCOMES` as sparse rows). Per turn-start
state they solve the turn inside (as the solver does, the same float operations in the same
order, so the values are bit for bit the solver's), pick the optimal action (the
lowest-numbered of the best), and for the evaluation follow the policy's and the optimum's
occupancies through the turn with the loss bookkeeping of
`baselines.yahtzee_evaluation` (whose numpy sweep is their test oracle). Compiled once, cached
on disk (`cache=True`). The evaluation's loops run in parallel over the turn-start states of a
batch (numba's threads; `NUMBA_NUM_THREADS` sets how many).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import get_num_threads, njit, prange

from dice_envs.games.yahtzee import (
    BOX_NAMES,
    DICE,
    DICE_KEEP_OFFSET,
    FULL_CARD,
    IS_YAHTZEE,
    KEEP_ADD,
    NUM_BOXES,
    NUM_DICE_SETS,
    NUM_KEEPS,
    REROLL_KEEP,
    REROLL_LEGAL,
    REROLL_TWIN,
    ROLL_PROBABILITIES,
    YAHTZEE_DICE,
    YAHTZEE_FACE,
    Yahtzee,
    state_index,
)

NUM_CHOICES = 1 + NUM_BOXES  # a reroll, or a box: the rows and columns of the losses by choice
TIE_TOLERANCE = 1e-9  # as `baselines.solvers`: an action within it of the best is optimal
_I64 = np.int64
_ADD = np.ascontiguousarray(KEEP_ADD, dtype=_I64)
_REROLL_KEEP = np.ascontiguousarray(REROLL_KEEP, dtype=_I64)
_REROLL_LEGAL = np.ascontiguousarray(REROLL_LEGAL)
_REROLL_TWIN = np.ascontiguousarray(REROLL_TWIN, dtype=_I64)
_FACE = np.ascontiguousarray(YAHTZEE_FACE, dtype=_I64)
_DICE = np.ascontiguousarray(DICE, dtype=_I64)
_ROLL = np.ascontiguousarray(ROLL_PROBABILITIES)


def _legal_rerolls() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per dice multiset its legal rerolls in ascending order (one per distinct keep): how
    many, their bits and the keeps they leave (padded with -1)."""
    count = REROLL_LEGAL.sum(axis=1).astype(_I64)
    bits = np.full((NUM_DICE_SETS, 31), -1, dtype=_I64)
    keeps = np.full((NUM_DICE_SETS, 31), -1, dtype=_I64)
    for d in range(NUM_DICE_SETS):
        legal = np.flatnonzero(REROLL_LEGAL[d])
        bits[d, : len(legal)] = legal
        keeps[d, : len(legal)] = REROLL_KEEP[d, legal]
    return count, bits, keeps


_NUM_REROLLS, _REROLL_BITS, _REROLL_KEEPS = _legal_rerolls()


def _slot_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where a scoring can lead, as 44 slots per turn-start state: an upper box with 0..5 dice
    of its face (36), another lower box (6), the Yahtzee box with 0 or 50 (2). The next state
    depends on the box and the dice only through the slot. Returns the slot of each (box,
    dice), and each slot's box and points (for the next state; the reward is counted apart)."""
    slot_of = np.zeros((NUM_BOXES, NUM_DICE_SETS), dtype=_I64)
    boxes, points = [], []
    for box in range(6):
        slot_of[box] = 6 * box + DICE[:, box]
        boxes += [box] * 6
        points += [(box + 1) * count for count in range(6)]
    yahtzee = BOX_NAMES.index("yahtzee")
    for box in (b for b in range(6, NUM_BOXES) if b != yahtzee):
        slot_of[box] = len(boxes)
        boxes.append(box)
        points.append(0)
    slot_of[yahtzee] = len(boxes) + IS_YAHTZEE
    boxes += [yahtzee, yahtzee]
    points += [0, 50]
    return slot_of, np.array(boxes), np.array(points)


SLOT_OF, SLOT_BOX, SLOT_POINTS = _slot_tables()
NUM_SLOTS = len(SLOT_BOX)


class BoxRows:
    """Per box in play, the distinct (points, Yahtzee roll) pairs its dice score on an empty
    card: a scoring's reward and next state depend on the dice only through its pair (the
    model's contract; jokers apart), so they are computed per pair, then spread to the dice.
    `rows[b, d]` is the pair row of dice d in box b; boxes out of play point to a last row
    that is never legal."""

    def __init__(self, model: Yahtzee) -> None:
        _, points = model.scoring(model.absent, np.arange(NUM_DICE_SETS))
        rows = np.full((NUM_BOXES, NUM_DICE_SETS), -1, dtype=_I64)
        pair_points, pair_yahtzee, pair_box = [], [], []
        for box in model.boxes:
            distinct, inverse = np.unique(points[:, box] * 2 + IS_YAHTZEE, return_inverse=True)
            rows[box] = len(pair_points) + inverse.ravel()
            pair_points += (distinct // 2).tolist()
            pair_yahtzee += (distinct % 2 == 1).tolist()
            pair_box += [box] * len(distinct)
        rows[rows < 0] = len(pair_points)
        self.rows = rows
        self.points = np.array(pair_points, dtype=_I64)
        self.yahtzee = np.array(pair_yahtzee, dtype=bool)
        self.box = np.array(pair_box, dtype=_I64)
        # Each pair's reward and next (upper total, flag) from every (upper total, flag) of
        # the card, by the model's `score_result`, once: a batch then only gathers them.
        upper, flag = np.divmod(np.arange(2 * 64), 2)
        reward, next_upper, next_flag = model.score_result(
            upper[None, :], flag[None, :] == 1, self.box[:, None], self.points[:, None],
            self.yahtzee[:, None],
        )  # fmt: skip
        self.reward = np.ascontiguousarray(reward, dtype=np.float64)  # (pairs, 128)
        self.next_upper = next_upper.astype(_I64)  # (pairs, 128)
        self.next_flag = next_flag.astype(_I64)


@dataclass
class TurnTables:
    """The scorings of a batch of B turn-start states, by the model's rules: `pair_worth`
    (B, pairs + 1) reward + V* of the next state per `BoxRows` pair (-inf in a filled box and
    in the last row), `pair_reward` the same pairs' rewards, `open_bits` (B,) the open boxes
    as bits; for a Yahtzee with the Yahtzee box filled (`joker`, (B,) bool), the joker rules
    in general: `joker_worth`, `joker_reward` (B, 6, 13) by the Yahtzee's face and box (-inf
    and 0 where illegal) and `joker_bits` (B, 6) its legal boxes as bits."""

    pair_worth: np.ndarray
    pair_reward: np.ndarray
    open_bits: np.ndarray
    joker: np.ndarray
    joker_worth: np.ndarray
    joker_reward: np.ndarray
    joker_bits: np.ndarray

    def box_worth(self, rows: BoxRows) -> np.ndarray:
        """(13, 252, B): reward + V* of scoring each dice multiset in each box (-inf where
        illegal)."""
        worth = self.pair_worth.T.take(rows.rows, axis=0)
        where = np.flatnonzero(self.joker)
        worth[:, YAHTZEE_DICE[:, None], where[None, :]] = self.joker_worth[where].transpose(2, 1, 0)
        return worth

    def legal_bits(self) -> np.ndarray:
        """(252, B): the legal boxes of each dice multiset, as bits."""
        bits = np.broadcast_to(self.open_bits, (NUM_DICE_SETS, len(self.open_bits))).copy()
        where = np.flatnonzero(self.joker)
        bits[YAHTZEE_DICE[:, None], where[None, :]] = self.joker_bits[where].T
        return bits


def turn_tables(model: Yahtzee, rows: BoxRows, values, filled, upper, flag) -> TurnTables:
    """The `TurnTables` of turn-start states (arrays `filled`, `upper`, `flag`), from the
    optimum's turn-start values `values` (dense, `state_index`)."""
    box = rows.box[:, None]
    card = np.asarray(upper, dtype=_I64) * 2 + np.asarray(flag, dtype=_I64)
    reward = rows.reward[:, card]  # (pairs, B)
    filled = np.asarray(filled, dtype=_I64)
    after = state_index(
        filled[None, :] | 1 << box, rows.next_upper[:, card], rows.next_flag[:, card]
    )
    worth = reward + values[after]
    worth[filled[None, :] >> box & 1 == 1] = -np.inf
    batch = len(filled)
    pair_worth = np.full((batch, len(rows.box) + 1), -np.inf)
    pair_worth[:, :-1] = worth.T
    pair_reward = np.zeros((batch, len(rows.box) + 1))
    pair_reward[:, :-1] = reward.T
    joker = model.is_joker(filled, YAHTZEE_DICE[0])
    joker_worth = np.full((batch, 6, NUM_BOXES), -np.inf)
    joker_reward = np.zeros((batch, 6, NUM_BOXES))
    joker_bits = np.zeros((batch, 6), dtype=_I64)
    where = np.flatnonzero(joker)
    if len(where):  # a Yahtzee with the Yahtzee box filled: the joker rules, in general
        legal, points = model.scoring(filled[where, None], YAHTZEE_DICE[None, :])
        boxes = np.arange(NUM_BOXES)
        reward_j, upper_j, flag_j = model.score_result(
            upper[where, None, None], flag[where, None, None], boxes, points, True
        )
        after = state_index(filled[where, None, None] | 1 << boxes, upper_j, flag_j)
        joker_worth[where] = np.where(legal, reward_j + values[after], -np.inf)
        joker_reward[where] = np.where(legal, reward_j, 0)
        joker_bits[where] = (legal << boxes).sum(axis=-1)
    open_bits = (FULL_CARD & ~np.asarray(filled, dtype=_I64)).astype(_I64)
    return TurnTables(
        pair_worth, pair_reward, open_bits, joker, joker_worth, joker_reward, joker_bits
    )


# -- the compiled loops ------------------------------------------------------------------------


@njit(cache=True, nogil=True)
def _roll(dice_values, keep_values):
    """`keep_values` (462,) from the dice values (252,): a keep is worth the mean over the
    faces of the keep with one more die (the sum in face order, then / 6, as the solver)."""
    for d in range(NUM_DICE_SETS):
        keep_values[DICE_KEEP_OFFSET + d] = dice_values[d]
    for k in range(DICE_KEEP_OFFSET - 1, -1, -1):
        total = keep_values[_ADD[k, 0]]
        for f in range(1, 6):
            total += keep_values[_ADD[k, f]]
        keep_values[k] = total / 6.0


@njit(cache=True, nogil=True)
def _inside(pair_worth, jokered, joker_worth, rows, worth, dice_values, keep_values, best):
    """The turn of one state inside, from its `pair_worth` (pairs + 1,) and, if `jokered`
    (a Yahtzee is a joker there), its `joker_worth` (6, 13): `worth` (13, 252) its scorings,
    `dice_values` (3, 252) V* with r rolls left, `keep_values` (2, 462) a keep's value with
    r rolls left after the roll, `best` (3, 252) the lowest-numbered optimal action."""
    for d in range(NUM_DICE_SETS):
        joker_here = jokered and IS_YAHTZEE[d]
        top = -np.inf
        act = 32
        for b in range(NUM_BOXES):
            v = joker_worth[_FACE[d], b] if joker_here else pair_worth[rows[b, d]]
            worth[b, d] = v
            if v > top:
                top, act = v, 32 + b
        dice_values[0, d] = top
        best[0, d] = act
    for r in range(1, 3):
        _roll(dice_values[r - 1], keep_values[r - 1])
        for d in range(NUM_DICE_SETS):
            top = -np.inf
            act = 32
            for i in range(_NUM_REROLLS[d]):
                v = keep_values[r - 1, _REROLL_KEEPS[d, i]]
                if v > top:
                    top, act = v, _REROLL_BITS[d, i]
            for b in range(NUM_BOXES):
                if worth[b, d] > top:
                    top, act = worth[b, d], 32 + b
            dice_values[r, d] = top
            best[r, d] = act


@njit(cache=True, nogil=True)
def best_actions(pair_worth, joker, joker_worth, rows):
    """(B, 3, 252): the lowest-numbered optimal action of every decision of a batch of turns
    (by rolls left 0..2, then dice), from their `TurnTables` fields."""
    batch = pair_worth.shape[0]
    out = np.empty((batch, 3, NUM_DICE_SETS), dtype=np.int64)
    worth = np.empty((NUM_BOXES, NUM_DICE_SETS))
    dice_values = np.empty((3, NUM_DICE_SETS))
    keep_values = np.empty((2, NUM_KEEPS))
    for s in range(batch):
        _inside(pair_worth[s], joker[s], joker_worth[s], rows, worth, dice_values, keep_values,
                out[s])  # fmt: skip
    return out


@njit(cache=True, nogil=True)
def _played(d, rolls_left, legal, action):
    """`Yahtzee.played_action` (the env's fallback for forbidden actions), compiled."""
    if action < 32:
        if action > 0 and rolls_left > 0:
            return _REROLL_TWIN[d, action]
    elif legal >> (action - 32) & 1:
        return action
    first = 0
    while not legal >> first & 1:
        first += 1
    return 32 + first


@njit(cache=True, nogil=True)
def _spread(keep_mass, dice_mass):
    """The dice after rolling what each keep leaves out, one die at a time: `dice_mass`
    (252,) from the mass on the keeps (462,; emptied on the way). The keeps are ordered by
    size, so a keep's mass is complete before it is passed on to the keeps one die larger."""
    for k in range(DICE_KEEP_OFFSET):
        m = keep_mass[k]
        if m != 0.0:
            m /= 6.0
            for f in range(6):
                keep_mass[_ADD[k, f]] += m
    for d in range(NUM_DICE_SETS):
        dice_mass[d] = keep_mass[DICE_KEEP_OFFSET + d]


def sweep_blocks() -> int:
    """How many blocks `sweep_turns` splits a batch into: four per numba thread, so that
    states of unequal cost even out (read here: a compiled call of `get_num_threads` goes
    through a pointer, and a function holding one cannot be cached on disk)."""
    return 4 * get_num_threads()


@njit(cache=True, nogil=True, parallel=True)
def sweep_turns(
    pair_worth, open_bits, joker, joker_worth, pair_reward, joker_bits, joker_reward, rows,
    actions, weights, reach, optimal_reach, out, sums, top, blocks,
):  # fmt: skip
    """The policy's and the optimum's turns of a batch of B states (`TurnTables` fields), in
    parallel over `blocks` blocks of states (each its own scratch arrays; `sweep_blocks()`).

    `actions`, `weights` (B, 3, 252, M): the policy's actions and their probabilities per
    decision (rolls left 0..2, dice). Writes `out` (B, 1 + 2 * 44): the policy's expected
    reward this turn, its and the optimum's probability of each scoring slot; adds to `sums`
    (B, 3 + 196 + 2), per state: losses by rolls left (2, 1, 0), losses by (choice played,
    choice optimal), the agreeing and all decisions of the optimum, weighted by its occupancy.
    Writes `top` (B, K, 5): per state its K largest single-decision losses, largest first,
    as rows (loss, rolls left, dice, action played (the most probable), optimal action);
    rows of loss 0 where it has fewer.
    """
    batch = pair_worth.shape[0]
    blocks = max(1, min(batch, blocks))
    tables = (pair_worth, open_bits, joker, joker_worth, pair_reward, joker_bits, joker_reward)
    policy = (actions, weights, reach, optimal_reach)
    for block in prange(blocks):
        lo, hi = block * batch // blocks, (block + 1) * batch // blocks
        _sweep_block(lo, hi, tables, rows, policy, out, sums, top)


@njit(cache=True, nogil=True)
def _sweep_block(lo, hi, tables, rows, policy, out, sums, top):
    """States lo..hi-1 of `sweep_turns` (a function of its own: a parallel loop's body that
    reads the module's tables could not be cached on disk)."""
    pair_worth, open_bits, joker, joker_worth, pair_reward, joker_bits, joker_reward = tables
    actions, weights, reach, optimal_reach = policy
    worth = np.empty((NUM_BOXES, NUM_DICE_SETS))
    dice_values = np.empty((3, NUM_DICE_SETS))
    keep_values = np.empty((2, NUM_KEEPS))
    best = np.empty((3, NUM_DICE_SETS), dtype=np.int64)
    for s in range(lo, hi):
        _inside(pair_worth[s], joker[s], joker_worth[s], rows, worth, dice_values, keep_values,
                best)  # fmt: skip
        card = (open_bits[s], joker[s], joker_bits[s], pair_reward[s], joker_reward[s])
        _follow(worth, dice_values, keep_values, best, rows, card, actions[s], weights[s],
                reach[s], optimal_reach[s], out[s], sums[s], top[s])  # fmt: skip


@njit(cache=True, nogil=True)
def _follow(
    worth, dice_values, keep_values, best, rows, card, actions, weights, reach, optimal_reach,
    out, sums, top,
):  # fmt: skip
    """One turn, solved inside: the policy's and the optimum's occupancies through it, level
    by level, with the bookkeeping of `sweep_turns` (`card`: this state's open bits, joker
    flag, joker bits, pair rewards and joker rewards; `actions`, `weights` (3, 252, M) and
    `out` (1 + 2 * 44,) this state's). A policy that does not reach the state (`reach` 0)
    is not followed through it, nor is the optimum: what they would do there weighs nothing
    (the policy's turn there is left empty, its value is never used)."""
    open_bits, jokered, joker_bits, pair_reward, joker_reward = card
    occ = _ROLL * (reach > 0.0)
    opt = _ROLL * (optimal_reach > 0.0)
    keep_mass, opt_keep_mass = np.empty(NUM_KEEPS), np.empty(NUM_KEEPS)
    by_choice = np.zeros(NUM_CHOICES * NUM_CHOICES)
    out[:] = 0.0
    top[:] = 0.0
    for level in range(3):
        r = 2 - level
        keep_mass[:] = 0.0
        opt_keep_mass[:] = 0.0
        lost = agree = decisions = 0.0
        for d in range(NUM_DICE_SETS):
            m, om, act = occ[d], opt[d], best[r, d]
            decisions += om
            if act < 32:
                opt_keep_mass[_REROLL_KEEP[d, act]] += om
            else:
                out[1 + NUM_SLOTS + SLOT_OF[act - 32, d]] += om
            if m == 0.0 and om == 0.0:
                continue
            value = dice_values[r, d]
            best_choice = 0 if act < 32 else act - 31
            joker_here = jokered and IS_YAHTZEE[d]
            legal = joker_bits[_FACE[d]] if joker_here else open_bits
            good_at = value - TIE_TOLERANCE * max(1.0, abs(value))
            decision_loss, most, most_played = 0.0, -1.0, 0
            for i in range(actions.shape[2]):
                w = weights[r, d, i]
                if w == 0.0:
                    continue
                played = _played(d, r, legal, actions[r, d, i])
                mass = m * w
                if played < 32:
                    keep = _REROLL_KEEP[d, played]
                    got = keep_values[r - 1, keep]
                    keep_mass[keep] += mass
                    choice = 0
                else:
                    b = played - 32
                    got = worth[b, d]
                    reward = joker_reward[_FACE[d], b] if joker_here else pair_reward[rows[b, d]]
                    out[0] += mass * reward
                    out[1 + SLOT_OF[b, d]] += mass
                    choice = played - 31
                loss = reach * mass * (value - got)
                lost += loss
                decision_loss += loss
                if w > most:
                    most, most_played = w, played
                by_choice[choice * NUM_CHOICES + best_choice] += loss
                if got >= good_at:
                    agree += om * w
            if decision_loss > top[-1, 0]:
                _keep_largest(top, decision_loss, r, d, most_played, act)
        sums[level] += lost
        sums[-2] += agree * optimal_reach
        sums[-1] += decisions * optimal_reach
        if r:
            _spread(keep_mass, occ)
            _spread(opt_keep_mass, opt)
    sums[3 : 3 + NUM_CHOICES * NUM_CHOICES] += by_choice


@njit(cache=True, nogil=True)
def _keep_largest(top, loss, rolls_left, dice, played, best):
    """Insert a decision's loss into `top` (K, 5), kept largest first; the smallest drops."""
    row = top.shape[0] - 1
    while row > 0 and top[row - 1, 0] < loss:
        top[row] = top[row - 1]
        row -= 1
    top[row, 0], top[row, 1], top[row, 2] = loss, rolls_left, dice
    top[row, 3], top[row, 4] = played, best


@njit(cache=True, nogil=True, parallel=True)
def fill_observations(filled, upper, flag, out, card_only):
    """Every decision of a batch of B turns as env observations into `out` (B * 756, 22),
    ordered by state, then rolls left 0..2, then dice, in parallel over the states. With
    `card_only` only the card's columns (7..21) are written: the dice and rolls left repeat
    every 756 rows, so a buffer filled once keeps them."""
    for s in prange(len(filled)):
        _fill_observations_of(s, filled[s], upper[s], flag[s], out, card_only)


@njit(cache=True, nogil=True)
def _fill_observations_of(s, filled, upper, flag, out, card_only):
    row = s * 3 * NUM_DICE_SETS
    for r in range(3):
        for d in range(NUM_DICE_SETS):
            if not card_only:
                for f in range(6):
                    out[row, f] = _DICE[d, f]
                out[row, 6] = r
            for b in range(NUM_BOXES):
                out[row, 7 + b] = filled >> b & 1
            out[row, 20] = upper
            out[row, 21] = flag
            row += 1


@njit(cache=True, nogil=True, parallel=True)
def fill_masks(open_bits, joker, joker_bits, out, boxes_only):
    """The env's action masks of `fill_observations`' rows into `out` (B * 756, 45); with
    `boxes_only` only the boxes' columns (32..44): the rerolls' repeat every 756 rows."""
    for s in prange(len(open_bits)):
        _fill_masks_of(s, open_bits[s], joker[s], joker_bits[s], out, boxes_only)


@njit(cache=True, nogil=True)
def _fill_masks_of(s, open_bits, jokered, joker_bits, out, boxes_only):
    row = s * 3 * NUM_DICE_SETS
    for r in range(3):
        for d in range(NUM_DICE_SETS):
            if not boxes_only:
                for bits in range(32):
                    out[row, bits] = r > 0 and _REROLL_LEGAL[d, bits]
            legal = joker_bits[_FACE[d]] if jokered and IS_YAHTZEE[d] else open_bits
            for b in range(NUM_BOXES):
                out[row, 32 + b] = legal >> b & 1 == 1
            row += 1


def fields(tables: TurnTables) -> tuple:
    """The `TurnTables` as the tuple the compiled loops take."""
    return (
        tables.pair_worth,
        tables.open_bits,
        tables.joker,
        tables.joker_worth,
        tables.pair_reward,
        tables.joker_bits,
        tables.joker_reward,
    )

"""The race to the goal at Ten Thousand (issue 44), solved exactly, at any goal.

Two players alternate turns of Crocce and Mordecki's solitaire turn (`TenThousand`): a throw
without score ends the turn with nothing banked, a stop banks the turn total, and a player
whose banked chips plus turn total reach the goal `G` wins at once. A decision is seen as
(own banked chips, opponent's banked chips, turn total, configuration index, dice in hand),
with the actions and masks of `TenThousand-v0`.

The solve works on banked-score pairs (a, b), a the mover's, in decreasing order of a + b.
A turn of the mover at (a, b) pays P(t) = 1 - V'(b, a + t) for a stop at t (every such pair
has a larger sum, so it is known), 1 for a roll reaching G - a, and the bust value
v = 1 - V'(b, a), where V' is the other seat's win probability when it moves. Inside the turn
every value is linear in v: R(tau, n) = alpha + beta * v, computed by the paper's backward
recursion over the turn total (a give-back lowers the total by less than the roll added, so
every R needed is at a higher total). The only unknowns of a sum are the two-cycles
(a, b) <-> (b, a) a bust closes: each is solved exactly by policy iteration on the pair (fix
both turn policies, solve the 2x2 linear system of their alpha + beta * v, improve both turns
with the new bust values; an action changes only if it is better by more than `PI_TOLERANCE`,
so exact ties never stall it). A seat that plays a fixed policy (asked in batches, a sum at a
time) has a turn value linear in its bust value, so best responses and evaluations run on the
same loop. The optimal actions are not stored (about 170 million decision states at the full
goal): a pair's turn is recomputed on demand from the win probabilities (`RaceSolution`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit

from dice_envs.games.rule import Rule
from dice_envs.games.ten_thousand import (
    CONFIGS,
    NO_CONFIG,
    ROLL,
    STOP,
    TenThousand,
    score,
    scoring_dice,
)
from dice_envs.policies import batched

NUM_ACTIONS = len(TenThousand.action_names)
MAX_ROLL_SCORE = 24  # five 1s: the most one throw scores, in chips
PI_TOLERANCE = 1e-13  # an action is replaced only by one better by more than this
TIE_TOLERANCE = 1e-9  # as `baselines.solvers`: the lowest action within it of the best is played
MAX_ITERATIONS = 200  # policy evaluations of one pair before giving up (never reached)
OPTIMISE, FIXED_ACTIONS, FIXED_PROBABILITIES = 0, 1, 2
PAIRS_PER_ASK = 64  # pairs whose decisions a fixed policy is asked in one batch


@dataclass(frozen=True)
class TurnTables:
    """The solitaire turn as flat arrays for the compiled loops.

    Positions are the decision positions (configuration index, dice in hand): position 0 is
    five fresh dice (the start and hot dice), the others a configuration set aside with 1-4
    dice in hand. Rows of `out_*` are the scoring configurations a roll of n dice shows.
    """

    positions: np.ndarray  # (P, 2): configuration index, dice in hand
    position_of: np.ndarray  # (len(CONFIGS), 6): position of (configuration, dice), -1 if none
    position_score: np.ndarray  # (P,): chips of the configuration set aside (least turn total)
    legal: np.ndarray  # (P, NUM_ACTIONS) legal actions at a turn total > 0
    bust_prob: np.ndarray  # (6,)
    n_out: np.ndarray  # (6,)
    out_prob: np.ndarray  # (6, K)
    out_gain: np.ndarray  # (6, K) chips scored
    out_left: np.ndarray  # (6, K) dice in hand after (5 after hot dice)
    out_pos: np.ndarray  # (6, K) position after
    mv_count: np.ndarray  # (P,)
    mv_action: np.ndarray  # (P, M)
    mv_chips: np.ndarray  # (P, M) chips given back
    mv_dice: np.ndarray  # (P, M) dice given back

    def arrays(self) -> tuple:
        return (
            self.n_out,
            self.out_prob,
            self.out_gain,
            self.out_left,
            self.out_pos,
            self.bust_prob,
            self.mv_count,
            self.mv_action,
            self.mv_chips,
            self.mv_dice,
        )


def turn_tables(allowed_moves: Iterable[str] | None = None) -> TurnTables:
    """The turn of `TenThousand(allowed_moves=...)` (its roll tables and moves) as arrays."""
    model = TenThousand(allowed_moves=allowed_moves)
    positions = [(0, 5)]
    for index, config in enumerate(CONFIGS):
        if index:
            positions += [(index, n) for n in range(1, 5) if scoring_dice(config) + n <= 5]
    position_of = np.full((len(CONFIGS), 6), -1, dtype=np.int64)
    position_of[:, 5] = 0  # five dice in hand: no move, whatever was set aside
    for p, (index, n) in enumerate(positions):
        position_of[index, n] = p
    count = len(positions)
    moves = [sorted(model.moves(CONFIGS[index], n).items()) for index, n in positions]
    width = max(1, max(len(m) for m in moves))
    mv_action = np.zeros((count, width), dtype=np.int64)
    mv_chips = np.zeros((count, width), dtype=np.int64)
    mv_dice = np.zeros((count, width), dtype=np.int64)
    legal = np.zeros((count, NUM_ACTIONS), dtype=bool)
    legal[:, [STOP, ROLL]] = True
    for p, row in enumerate(moves):
        for m, (action, (chips, dice)) in enumerate(row):
            mv_action[p, m], mv_chips[p, m], mv_dice[p, m] = action, chips, dice
            legal[p, action] = True
    rows = {n: [(p, c) for p, c in model.roll_table(n) if c != NO_CONFIG] for n in range(1, 6)}
    most = max(len(r) for r in rows.values())
    out_prob = np.zeros((6, most))
    out_gain, out_left, out_pos = (np.zeros((6, most), dtype=np.int64) for _ in range(3))
    bust_prob = np.zeros(6)
    n_out = np.zeros(6, dtype=np.int64)
    for n, outcomes in rows.items():
        bust_prob[n] = sum(p for p, c in model.roll_table(n) if c == NO_CONFIG)
        n_out[n] = len(outcomes)
        for j, (p, config) in enumerate(outcomes):
            left = n - scoring_dice(config)
            out_prob[n, j], out_gain[n, j] = p, score(config)
            out_left[n, j] = left or 5
            out_pos[n, j] = position_of[CONFIGS.index(config), left] if left else 0
    return TurnTables(
        positions=np.array(positions, dtype=np.int64),
        position_of=position_of,
        position_score=np.array([score(CONFIGS[index]) for index, _ in positions]),
        legal=legal,
        bust_prob=bust_prob,
        n_out=n_out,
        out_prob=out_prob,
        out_gain=out_gain,
        out_left=out_left,
        out_pos=out_pos,
        mv_count=np.array([len(m) for m in moves], dtype=np.int64),
        mv_action=mv_action,
        mv_chips=mv_chips,
        mv_dice=mv_dice,
    )


# -- the compiled turn and pair loops -----------------------------------------------------------


@njit(cache=True)
def _turn(
    top, pay, v, mode, fixed_act, fixed_prob, current, ra, rb, tol,
    n_out, out_prob, out_gain, out_left, out_pos, bust_prob,
    mv_count, mv_action, mv_chips, mv_dice,
):  # fmt: skip
    """One turn by backward induction over the turn total, totals capped at `top`.

    `pay[t]`: the payoff of stopping at t < top, or of a roll reaching t >= top. Every value is
    kept as ra + rb * v (v the bust value): ra[tau, n], rb[tau, n] for rolling n dice from tau.
    mode OPTIMISE picks each decision's action at the bust value `v` (writing it to `current`;
    an action already there is replaced only by one better by more than `tol`); the other
    modes play `fixed_act` or the mixtures `fixed_prob`. Returns (alpha, beta) of the turn's
    start, whether any optimised action changed, and the stability interval (low, high): the
    bust values at which no optimised decision would be beaten by more than `tol` (each
    decision compares lines in v, its alternatives' coefficients fixed by the decisions
    after it; (-inf, inf) when nothing is optimised).
    """
    changed = False
    low, high = -np.inf, np.inf
    width = mv_action.shape[1] + 2
    cand_a = np.empty(width)
    cand_b = np.empty(width)
    cand_act = np.empty(width, dtype=np.int64)
    for tau in range(top - 1, -1, -1):
        for n in range(1, 6):
            sa = 0.0
            sb = bust_prob[n]
            for j in range(n_out[n]):
                p = out_prob[n, j]
                t = tau + out_gain[n, j]
                if t >= top:
                    sa += p * pay[t]
                    continue
                left = out_left[n, j]
                pos = out_pos[n, j]
                moves = mv_count[pos] if left < 5 else 0
                # Every action's value as coefficients, in action order.
                cand_a[0], cand_b[0], cand_act[0] = pay[t], 0.0, STOP
                cand_a[1], cand_b[1], cand_act[1] = ra[t, left], rb[t, left], ROLL
                for m in range(moves):
                    back = t - mv_chips[pos, m]
                    more = left + mv_dice[pos, m]
                    cand_a[2 + m], cand_b[2 + m] = ra[back, more], rb[back, more]
                    cand_act[2 + m] = mv_action[pos, m]
                count = 2 + moves
                if mode == FIXED_PROBABILITIES:
                    for i in range(count):
                        sa += p * fixed_prob[t, pos, cand_act[i]] * cand_a[i]
                        sb += p * fixed_prob[t, pos, cand_act[i]] * cand_b[i]
                    continue
                act = fixed_act[t, pos] if mode == FIXED_ACTIONS else current[t, pos]
                best = -1
                for i in range(count):
                    if cand_act[i] == act:
                        best = i
                if mode == FIXED_ACTIONS:
                    sa += p * cand_a[best]
                    sb += p * cand_b[best]
                    continue
                if best < 0:  # no action yet: the first of the best
                    best, margin = 0, 0.0
                else:
                    margin = tol
                best_value = cand_a[best] + cand_b[best] * v
                for i in range(count):
                    value = cand_a[i] + cand_b[i] * v
                    if value > best_value + margin:
                        best, best_value = i, value
                if cand_act[best] != act:
                    changed = True
                    current[t, pos] = cand_act[best]
                low, high = _narrowed(cand_a, cand_b, count, best, tol, low, high)
                sa += p * cand_a[best]
                sb += p * cand_b[best]
            ra[tau, n] = sa
            rb[tau, n] = sb
    return ra[0, 5], rb[0, 5], changed, low, high


@njit(cache=True)
def _narrowed(cand_a, cand_b, count, best, tol, low, high):
    """(low, high) narrowed to the bust values v at which no candidate beats the chosen one
    `best` by more than tol (each is a line cand_a + cand_b * v)."""
    for i in range(count):
        slope = cand_b[best] - cand_b[i]
        gap = -tol - (cand_a[best] - cand_a[i])  # the crossing is at gap / slope
        if slope > 0.0 and gap > low * slope:
            low = gap / slope
        elif slope < 0.0 and gap > high * slope:
            high = gap / slope
    return low, high


@njit(cache=True)
def _guess(values, a, b, goal):
    """A first guess of values[a, b] from the solved pairs (a, b + 1), (a, b + 2): the line
    through them (the fixed point is then usually met by the first policy evaluation)."""
    if b + 2 < goal:
        return min(1.0, max(0.0, 2.0 * values[a, b + 1] - values[a, b + 2]))
    if b + 1 < goal:
        return values[a, b + 1]
    return values[a + 1, b] if a + 1 < goal else 0.5


@njit(cache=True)
def _pairs(
    goal, total, first, last, symmetric, v0, v1, mode0, mode1,
    act0, prob0, act1, prob1, iterations, tol, max_iterations, recheck,
    n_out, out_prob, out_gain, out_left, out_pos, bust_prob,
    mv_count, mv_action, mv_chips, mv_dice,
):  # fmt: skip
    """Solve the two-cycles of the pairs (a, total - a), a = first..last - 1, in place (they
    only read pairs of larger sums: numba's prange could run them at once, but on the 2 shared
    cores here threads measured slower).

    v0[a, b] (v1[a, b]): the win probability of seat 0 (1) when it moves, its banked chips a,
    the other's b. A cycle couples seat 0 at (a, b) with seat 1 at (b, a). `symmetric` (both
    seats the same optimiser, v0 is v1) solves only a <= b. act*/prob* [a - first] hold a fixed
    seat's actions or mixtures per (turn total, position). iterations[a - first] receives the
    policy evaluations the cycle took (-1 if it did not settle in max_iterations).
    """
    for a in range(first, last):
        if symmetric and a > total - a:
            continue
        i = a - first
        iterations[i] = _cycle(
            goal, a, total - a, v0, v1, mode0, mode1, act0[i], prob0[i], act1[i], prob1[i],
            tol, max_iterations, recheck,
            n_out, out_prob, out_gain, out_left, out_pos, bust_prob,
            mv_count, mv_action, mv_chips, mv_dice,
        )  # fmt: skip


@njit(cache=True)
def _cycle(
    goal, a, b, v0, v1, mode0, mode1, act0, prob0, act1, prob1, tol, max_iterations, recheck,
    n_out, out_prob, out_gain, out_left, out_pos, bust_prob,
    mv_count, mv_action, mv_chips, mv_dice,
):  # fmt: skip
    """The two-cycle of seat 0 at (a, b) and seat 1 at (b, a) by policy iteration: writes
    v0[a, b], v1[b, a]; returns the policy evaluations it took (-1: not settled)."""
    positions = mv_count.shape[0]
    pay0 = np.ones(goal + MAX_ROLL_SCORE + 1)
    pay1 = np.ones(goal + MAX_ROLL_SCORE + 1)
    ra0 = np.zeros((goal, 6))
    rb0 = np.zeros((goal, 6))
    ra1 = np.zeros((goal, 6))
    rb1 = np.zeros((goal, 6))
    cur0 = np.full((goal, positions), -1, dtype=np.int8)
    cur1 = np.full((goal, positions), -1, dtype=np.int8)
    top0, top1 = goal - a, goal - b
    for t in range(1, top0):
        pay0[t] = 1.0 - v1[b, a + t]
    for t in range(1, top1):
        pay1[t] = 1.0 - v0[a, b + t]
    # A first guess of the cycle's values from solved neighbours; policy iteration fixes it.
    x = _guess(v0, a, b, goal)
    y = _guess(v1, b, a, goal)
    alpha0 = beta0 = alpha1 = beta1 = 0.0
    count = 0
    low0 = high0 = low1 = high1 = 0.0
    redo0 = redo1 = True
    while True:
        changed = False
        if redo0:
            alpha0, beta0, c, low0, high0 = _turn(
                top0, pay0, 1.0 - y, mode0, act0, prob0, cur0, ra0, rb0, tol,
                n_out, out_prob, out_gain, out_left, out_pos, bust_prob,
                mv_count, mv_action, mv_chips, mv_dice,
            )  # fmt: skip
            changed = changed or c
        if redo1:
            alpha1, beta1, c, low1, high1 = _turn(
                top1, pay1, 1.0 - x, mode1, act1, prob1, cur1, ra1, rb1, tol,
                n_out, out_prob, out_gain, out_left, out_pos, bust_prob,
                mv_count, mv_action, mv_chips, mv_dice,
            )  # fmt: skip
            changed = changed or c
        if recheck and count > 0 and not changed:
            break
        # x = alpha0 + beta0 (1 - y), y = alpha1 + beta1 (1 - x)
        x = (alpha0 + beta0 * (1.0 - alpha1 - beta1)) / (1.0 - beta0 * beta1)
        y = alpha1 + beta1 * (1.0 - x)
        count += 1
        if count >= max_iterations:
            count = -1
            break
        if recheck:  # a pass at the new bust values decides
            redo0, redo1 = mode0 == OPTIMISE, mode1 == OPTIMISE
            if not (redo0 or redo1):
                break
            continue
        # A turn whose stability interval holds its new bust value keeps every action.
        redo0 = mode0 == OPTIMISE and not (low0 <= 1.0 - y <= high0)
        redo1 = mode1 == OPTIMISE and not (low1 <= 1.0 - x <= high1)
        if not (redo0 or redo1):
            break
    v0[a, b] = x
    v1[b, a] = y
    return count


@njit(cache=True)
def _turn_values(
    top, pay, v, n_out, out_prob, out_gain, out_left, out_pos, bust_prob,
    mv_count, mv_action, mv_chips, mv_dice,
):  # fmt: skip
    """R(tau, n) of the optimal turn at bust value v (values, not coefficients)."""
    positions = mv_count.shape[0]
    ra = np.zeros((top, 6))
    rb = np.zeros((top, 6))
    current = np.full((top, positions), -1, dtype=np.int8)
    _turn(
        top, pay, v, OPTIMISE, current, np.zeros((1, 1, 1)), current, ra, rb, 0.0,
        n_out, out_prob, out_gain, out_left, out_pos, bust_prob,
        mv_count, mv_action, mv_chips, mv_dice,
    )  # fmt: skip
    return ra + rb * v


@njit(cache=True)
def _action_table(
    goal, others, tie, position_dice,
    n_out, out_prob, out_gain, out_left, out_pos, bust_prob,
    mv_count, mv_action, mv_chips, mv_dice,
):  # fmt: skip
    """The optimal action (the lowest within `tie` of the best) at every (a, b, turn total,
    position), flat: pair (a, b) starts at `_table_offset`, then turn total * P + position.
    `others[b, a]`: the other seat's win probability when it moves."""
    positions = mv_count.shape[0]
    table = np.full(goal * (goal * (goal + 1) // 2) * positions, ROLL, dtype=np.uint8)
    pay = np.ones(goal + MAX_ROLL_SCORE + 1)
    for a in range(goal):
        top = goal - a
        for b in range(goal):
            pay[:] = 1.0
            for t in range(1, top):
                pay[t] = 1.0 - others[b, a + t]
            r = _turn_values(
                top, pay, 1.0 - others[b, a], n_out, out_prob, out_gain, out_left, out_pos,
                bust_prob, mv_count, mv_action, mv_chips, mv_dice,
            )  # fmt: skip
            start = _table_offset(goal, positions, a, b)
            for tau in range(1, top):
                for pos in range(positions):
                    n = position_dice[pos]
                    moves = mv_count[pos] if n < 5 else 0
                    best = max(pay[tau], r[tau, n])
                    for m in range(moves):
                        best = max(best, r[tau - mv_chips[pos, m], n + mv_dice[pos, m]])
                    least = best - tie * max(1.0, abs(best))
                    if pay[tau] >= least:
                        action = STOP
                    elif r[tau, n] >= least:
                        action = ROLL
                    else:
                        action = ROLL
                        for m in range(moves - 1, -1, -1):
                            if r[tau - mv_chips[pos, m], n + mv_dice[pos, m]] >= least:
                                action = mv_action[pos, m]
                    table[start + tau * positions + pos] = action
    return table


@njit(cache=True)
def _table_offset(goal, positions, a, b):
    """Where pair (a, b)'s rows start in `_action_table`: pairs by a, then b, each with
    (goal - a) * positions rows."""
    return positions * (goal * (a * goal - a * (a - 1) // 2) + b * (goal - a))


# -- fixed seats: asking a policy in batches ------------------------------------------------------

PolicyArgument = Any  # a BatchedPolicy, a Rule, or a callable (observations, masks) -> answers


def _ask(
    policy: PolicyArgument, observations: np.ndarray, masks: np.ndarray | None
) -> tuple[np.ndarray, float]:
    """The policy's answer for a batch, checked: (k,) actions or (k, NUM_ACTIONS)
    probabilities, and the seconds spent inside the policy."""
    start = time.perf_counter()
    if hasattr(policy, "answer"):
        raw = policy.answer(observations, masks)
    elif isinstance(policy, Rule):
        raw = policy.batch(observations)
    else:
        raw = policy(observations, masks)
    answer = np.asarray(raw)
    asked = time.perf_counter() - start
    k = len(observations)
    if answer.shape in ((k,), (k, 1)) and np.issubdtype(answer.dtype, np.integer):
        actions = answer.reshape(k).astype(np.int64, copy=False)
        if (actions.min() < 0) | (actions.max() >= NUM_ACTIONS):
            raise ValueError(f"policy answered actions outside 0..{NUM_ACTIONS - 1}")
        return actions, asked  # an illegal action is played as a roll when scattered
    if answer.shape == (k, NUM_ACTIONS) and np.issubdtype(answer.dtype, np.floating):
        probs = answer.astype(np.float64)
        if (probs < 0).any() or not np.allclose(probs.sum(axis=1), 1.0, rtol=0, atol=1e-9):
            raise ValueError("policy answered probabilities that are negative or do not sum to 1")
        return probs, asked  # what is put on an illegal action moves to a roll when scattered
    raise ValueError(
        f"policy must answer ({k},) int actions or ({k}, {NUM_ACTIONS}) float probabilities for "
        f"{k} observations; got shape {answer.shape} of {answer.dtype}"
    )


@dataclass
class _Decisions:
    """Every decision (turn total >= 1, position) of a turn, by turn total, for asking."""

    tau: np.ndarray
    position: np.ndarray
    below: np.ndarray  # below[top]: how many rows have a turn total < top

    @classmethod
    def of(cls, tables: TurnTables, goal: int) -> _Decisions:
        taus = np.arange(1, goal)
        reachable = tables.position_score[None, :] <= taus[:, None]
        tau, position = np.nonzero(reachable)
        below = np.concatenate(([0, 0], np.cumsum(reachable.sum(axis=1))))
        return cls(taus[tau], position, below)


def _fixed_answers(
    policy: PolicyArgument,
    tables: TurnTables,
    decisions: _Decisions,
    goal: int,
    own: np.ndarray,
    other: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, bool, float]:
    """A fixed seat's answers at every decision of its turns at (own[i], other[i]): actions
    (len, goal, P) int8 (an illegal one played as a roll), probabilities (len, goal, P, 15)
    (or a dummy), whether it mixes, and the seconds spent inside the policy."""
    rows = (own, goal, decisions.below, decisions.tau, decisions.position)
    needs_masks = getattr(policy, "needs_legal", not isinstance(policy, Rule))
    observations, masks = _decision_batch(*rows, other, tables.positions, tables.legal, needs_masks)
    actions = np.full((len(own), goal, len(tables.positions)), ROLL, dtype=np.int8)
    no_probs = np.zeros((len(own), 1, 1, 1))
    if not len(observations):  # one chip from the goal: every roll that scores wins
        return actions, no_probs, False, 0.0
    answer, asked = _ask(policy, observations, masks if needs_masks else None)
    if answer.ndim == 1:
        _scatter_actions(actions, *rows, tables.legal, answer)
        return actions, no_probs, False, asked
    probs = np.zeros(actions.shape + (NUM_ACTIONS,))
    _scatter_probabilities(probs, *rows, tables.legal, answer)
    return actions, probs, True, asked


@njit(cache=True)
def _decision_batch(own, goal, below, tau, position, other, positions, legal, with_masks):
    """The observations and masks of every decision of the turns at (own[i], other[i]): per
    pair, the decision rows with a turn total below its goal minus own chips."""
    total = 0
    for i in range(len(own)):
        total += below[goal - own[i]]
    observations = np.empty((total, 5), dtype=np.int64)
    masks = np.empty((total if with_masks else 0, legal.shape[1]), dtype=np.bool_)
    k = 0
    for i in range(len(own)):
        for r in range(below[goal - own[i]]):
            p = position[r]
            observations[k, 0] = own[i]
            observations[k, 1] = other[i]
            observations[k, 2] = tau[r]
            observations[k, 3] = positions[p, 0]
            observations[k, 4] = positions[p, 1]
            if with_masks:  # a Rule, or a BatchedPolicy that does not need them, is not sent them
                for action in range(legal.shape[1]):
                    masks[k, action] = legal[p, action]
            k += 1
    return observations, masks


@njit(cache=True)
def _scatter_actions(target, own, goal, below, tau, position, legal, answer):
    """target[i, tau, position] = the answer of each row of `_decision_batch`, a roll if the
    answer is illegal there."""
    k = 0
    for i in range(len(own)):
        for r in range(below[goal - own[i]]):
            action = answer[k]
            target[i, tau[r], position[r]] = action if legal[position[r], action] else ROLL
            k += 1


@njit(cache=True)
def _scatter_probabilities(target, own, goal, below, tau, position, legal, answer):
    """target[i, tau, position] = the probabilities of each row of `_decision_batch`, what
    is put on an illegal action moved to a roll."""
    k = 0
    for i in range(len(own)):
        for r in range(below[goal - own[i]]):
            p = position[r]
            for action in range(legal.shape[1]):
                if legal[p, action]:
                    target[i, tau[r], p, action] += answer[k, action]
                else:
                    target[i, tau[r], p, ROLL] += answer[k, action]
            k += 1


# -- the race --------------------------------------------------------------------------------


@dataclass
class RaceTables:
    """Win probabilities of both seats of a race, and what the solve took.

    Attributes:
        goal: G, in chips.
        allowed_moves: the give-back labels (None: all).
        seat_values: (2, G, G): [s, a, b] the win probability of seat s (0 moves first) when
            it is to move with a chips banked and the other b.
        iterations: policy evaluations of every two-cycle solved (-1: did not settle).
        seconds: wall time of the solve; policy_seconds of it inside the fixed policies.
    """

    goal: int
    allowed_moves: tuple[str, ...] | None
    seat_values: np.ndarray
    iterations: np.ndarray
    seconds: float
    policy_seconds: float = 0.0

    @property
    def first_player_wins(self) -> float:
        """Seat 0's win probability from (0, 0), seat 0 to move."""
        return float(self.seat_values[0, 0, 0])

    def iteration_histogram(self) -> dict[int, int]:
        """How many two-cycles took each number of policy evaluations."""
        counts, numbers = np.unique(self.iterations, return_counts=True)
        return {int(c): int(n) for c, n in zip(counts, numbers, strict=True)}


def _check_goal(goal_chips: Any) -> int:
    if isinstance(goal_chips, bool) or not isinstance(goal_chips, (int, np.integer)):
        raise ValueError(f"goal_chips must be an integer >= 1, got {goal_chips!r}")
    if goal_chips < 1:
        raise ValueError(f"goal_chips must be an integer >= 1, got {goal_chips!r}")
    return int(goal_chips)


def solve_seats(
    goal_chips: int,
    seats: tuple[PolicyArgument | None, PolicyArgument | None],
    allowed_moves: Iterable[str] | None = None,
    tolerance: float = PI_TOLERANCE,
    recheck: bool = False,
) -> RaceTables:
    """The race with each seat optimising (None) or playing a fixed policy asked in batches
    (a `BatchedPolicy`, a `Rule` (its `batch(observations)`), or a callable (observations
    (k, 5) int, masks (k, 15) bool) -> (k,) actions or (k, 15) probabilities). Seat 0 moves
    first from (0, 0).

    Policy iteration on a pair stops when no optimising turn would change an action by more
    than `tolerance`: by default seen from each turn's stability interval (the bust values
    between which every decision of the pass keeps its action, a by-product of the pass);
    `recheck=True` runs one more pass at the final bust values instead (slower, the same
    policies: a test compares them).
    """
    goal = _check_goal(goal_chips)
    moves = None if allowed_moves is None else tuple(allowed_moves)
    start = time.perf_counter()
    tables = turn_tables(moves)
    arrays = tables.arrays()
    symmetric = seats[0] is None and seats[1] is None
    values = np.zeros((2, goal, goal))
    v0, v1 = (values[0], values[0]) if symmetric else (values[0], values[1])
    decisions = _Decisions.of(tables, goal) if not symmetric else None
    iterations = []
    asked = 0.0
    for total in range(2 * goal - 2, -1, -1):
        low, high = max(0, total - goal + 1), min(goal - 1, total) + 1
        for first in range(low, high, PAIRS_PER_ASK if not symmetric else high - low):
            last = min(high, first + (PAIRS_PER_ASK if not symmetric else high - low))
            own0 = np.arange(first, last)
            fixed = []
            for seat, policy in enumerate(seats):
                if policy is None:
                    # Placeholders, one per pair (an optimising turn reads neither).
                    no_actions = np.zeros((last - first, 1, 1), dtype=np.int8)
                    fixed.append((OPTIMISE, no_actions, np.zeros((last - first, 1, 1, 1))))
                    continue
                own = own0 if seat == 0 else total - own0
                acts, probs, mixes, seconds = _fixed_answers(
                    policy, tables, decisions, goal, own, total - own
                )
                asked += seconds
                fixed.append((FIXED_PROBABILITIES if mixes else FIXED_ACTIONS, acts, probs))
            counts = np.zeros(last - first, dtype=np.int64)
            (mode0, act0, prob0), (mode1, act1, prob1) = fixed
            _pairs(
                goal, total, first, last, symmetric, v0, v1, mode0, mode1,
                act0, prob0, act1, prob1, counts, tolerance, MAX_ITERATIONS, recheck, *arrays,
            )  # fmt: skip
            if symmetric:
                counts = counts[own0 <= total - own0]
            iterations.append(counts)
    if symmetric:
        values[1] = values[0]
    return RaceTables(
        goal,
        moves,
        values,
        np.concatenate(iterations),
        time.perf_counter() - start,
        asked,
    )


@dataclass
class RaceSolution:
    """An optimising seat of a race: its win probabilities and its optimal turn, recomputed
    per banked-score pair on demand from them.

    Attributes:
        tables: the solve (`RaceTables`).
        seat: the optimising seat (0 moves first).
        value: the optimising seat's win probability as first mover at (0, 0) (seat 0) or as
            second mover (seat 1) -- for the two-player optimum, W(0, 0).
    """

    tables: RaceTables
    seat: int = 0
    turn: TurnTables = field(init=False, repr=False)
    _table: np.ndarray | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self.turn = turn_tables(self.tables.allowed_moves)

    @property
    def goal(self) -> int:
        return self.tables.goal

    @property
    def value(self) -> float:
        own = self.tables.seat_values[self.seat, 0, 0]
        return float(own if self.seat == 0 else 1.0 - self.tables.seat_values[0, 0, 0])

    def win_probability(self, own: int, other: int) -> float:
        """The optimising seat's win probability when it is to move with `own` chips banked
        and the other `other`."""
        goal = self.goal
        for name, chips in (("own", own), ("other", other)):
            if not 0 <= chips < goal:
                raise ValueError(f"{name} must be banked chips in 0..{goal - 1}, got {chips!r}")
        return float(self.tables.seat_values[self.seat, own, other])

    def _pair_turn(self, own: int, other: int) -> tuple[int, np.ndarray, np.ndarray, float]:
        """(top, stop payoffs, R values (top, 6), bust value) of the optimal turn at a pair."""
        goal = self.goal
        others = self.tables.seat_values[1 - self.seat]
        top = goal - own
        pay = np.ones(goal + MAX_ROLL_SCORE + 1)
        pay[1:top] = 1.0 - others[other, own + 1 : goal]
        bust = 1.0 - others[other, own]
        return top, pay, _turn_values(top, pay, bust, *self.turn.arrays()), bust

    def _q(self, observations: np.ndarray) -> np.ndarray:
        """(k, 15) win probability of each action (-inf where illegal) at the (k, 5)
        observations (own, other, turn total, configuration index, dice in hand)."""
        obs = self._checked(observations)
        q = np.full((len(obs), NUM_ACTIONS), -np.inf)
        ended = self._ended(obs)
        # A game that ended before the seat's move (the env's last observation): every action
        # is legal and worth the result.
        q[ended] = (obs[ended, 0] == self.goal)[:, None].astype(float)
        playing = np.flatnonzero(~ended)
        pairs, inverse = np.unique(obs[playing, :2], axis=0, return_inverse=True)
        for p, (own, other) in enumerate(pairs):
            rows = playing[np.flatnonzero(inverse.reshape(-1) == p)]
            top, pay, r, _bust = self._pair_turn(int(own), int(other))
            tau, config, dice = obs[rows, 2], obs[rows, 3], obs[rows, 4]
            q[rows, ROLL] = r[tau, dice]
            started = tau > 0
            q[rows[started], STOP] = pay[tau[started]]
            position = self.turn.position_of[config, dice]
            for m in range(self.turn.mv_action.shape[1]):
                has = started & (m < self.turn.mv_count[position]) & (dice < 5)
                action = self.turn.mv_action[position[has], m]
                q[rows[has], action] = r[
                    tau[has] - self.turn.mv_chips[position[has], m],
                    dice[has] + self.turn.mv_dice[position[has], m],
                ]
        return q

    def actions(self, observations: np.ndarray) -> np.ndarray:
        """The optimal action at each observation: the lowest within TIE_TOLERANCE of the best
        (read from `action_table()` once it is built, else recomputed per pair)."""
        if self._table is not None and not self._ended(self._checked(observations)).any():
            obs = self._checked(observations)
            own, other, tau, config, dice = obs.T
            positions = len(self.turn.positions)
            rows = _table_offsets(self.goal, positions, own, other)
            rows += tau * positions + self.turn.position_of[config, dice]
            return self._table[rows].astype(np.int64)
        q = self._q(observations)
        best = q.max(axis=1, keepdims=True)
        return np.argmax(q >= best - TIE_TOLERANCE * np.maximum(1.0, np.abs(best)), axis=1)

    def action_table(self) -> np.ndarray:
        """Every optimal action of the seat, one byte per decision (189 MB at the full goal,
        about 4 s to build): kept, and read by `actions` from then on."""
        if self._table is None:
            others = self.tables.seat_values[1 - self.seat]
            self._table = _action_table(
                self.goal, others, TIE_TOLERANCE, self.turn.positions[:, 1], *self.turn.arrays()
            )
        return self._table

    def batched_policy(self) -> Rule:
        """The optimal actions as a policy asked in batches (`dice_envs.policies.batched`); an
        observation that is neither a decision nor a finished game (a grid asked whole holds
        them) gets a roll."""

        def answer(observations: np.ndarray) -> np.ndarray:
            obs = np.asarray(observations, dtype=np.int64).reshape(-1, 5)
            actions = np.full(len(obs), ROLL, dtype=np.int64)
            decisions = ~self._invalid(obs) | self._ended(obs)
            if decisions.any():
                actions[decisions] = self.actions(obs[decisions])
            return actions

        return batched(answer, "race optimum")

    def action_values_batch(self, observations: np.ndarray) -> np.ndarray:
        """(k, 15): the seat's win probability after each action then optimal play, at the
        (k, 5) observations (own, other, turn total, configuration index, dice in hand); NaN
        where the rules forbid the action."""
        q = self._q(observations)
        return np.where(np.isneginf(q), np.nan, q)

    def values_at(self, observations: np.ndarray) -> np.ndarray:
        """(k,): the seat's win probability at each decision, playing optimally."""
        return self._q(observations).max(axis=1)

    @staticmethod
    def _one(obs: Any) -> np.ndarray:
        return np.asarray(obs, dtype=np.int64).reshape(1, -1)

    def action(self, obs: Any) -> int:
        """The optimal action at one observation (lowest-numbered on ties)."""
        return int(self.actions(self._one(obs))[0])

    def action_values(self, obs: Any) -> np.ndarray:
        """`action_values_batch` of one observation."""
        return self.action_values_batch(self._one(obs))[0]

    def value_at(self, obs: Any) -> float:
        """`values_at` of one observation."""
        return float(self.values_at(self._one(obs))[0])

    def _checked(self, observations: Any) -> np.ndarray:
        obs = np.asarray(observations)
        if obs.ndim != 2 or obs.shape[1] != 5 or not np.issubdtype(obs.dtype, np.integer):
            raise ValueError(
                "observations must be a (k, 5) int array of (own chips, other chips, turn "
                f"total, configuration index, dice in hand); got shape {obs.shape} of {obs.dtype}"
            )
        obs = obs.astype(np.int64)
        bad = self._invalid(obs) & ~self._ended(obs)
        if bad.any():
            raise ValueError(
                f"observations must be decisions of the race to {self.goal} chips: own and "
                f"other chips in 0..{self.goal - 1}, a turn total below the goal minus own "
                "chips, a configuration that can leave those dice; got "
                f"{obs[np.flatnonzero(bad)[0]].tolist()}"
            )
        return obs

    def _ended(self, obs: np.ndarray) -> np.ndarray:
        """Which rows are a finished game's observation: a winner's score at the goal, the
        other's below, no turn."""
        own, other, tau, config, dice = obs.T
        goal = self.goal
        won = (own == goal) & (other >= 0) & (other < goal)
        lost = (other == goal) & (own >= 0) & (own < goal)
        return (won | lost) & (tau == 0) & (config == 0) & (dice == 0)

    def _invalid(self, obs: np.ndarray) -> np.ndarray:
        """Which rows of an (k, 5) int array are no decision of the race."""
        own, other, tau, config, dice = obs.T
        goal = self.goal
        bad = (
            (own < 0)
            | (own >= goal)
            | (other < 0)
            | (other >= goal)
            | (tau < 0)
            | (tau >= goal - own)
            | (config < 0)
            | (config >= len(CONFIGS))
            | (dice < 1)
            | (dice > 5)
        )
        inside = ~bad
        position = np.full(len(obs), -1)
        position[inside] = self.turn.position_of[config[inside], dice[inside]]
        score_of = np.array([score(c) for c in CONFIGS])
        bad |= (position < 0) | ((tau == 0) & ((config != 0) | (dice != 5)))
        bad |= (tau > 0) & (
            tau < np.where(dice == 5, 0, score_of[np.clip(config, 0, len(CONFIGS) - 1)])
        )
        return bad


def _table_offsets(goal: int, positions: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`_table_offset` of arrays of pairs."""
    return positions * (goal * (a * goal - a * (a - 1) // 2) + b * (goal - a))


def solve_race(goal_chips: int, allowed_moves: Iterable[str] | None = None) -> RaceSolution:
    """The two-player optimum of the race to `goal_chips` chips (200: 10,000 points):
    `.value` is the first player's win probability W(0, 0)."""
    return RaceSolution(solve_seats(goal_chips, (None, None), allowed_moves))


def best_response(
    goal_chips: int, policy: PolicyArgument, allowed_moves: Iterable[str] | None = None
) -> tuple[RaceSolution, RaceSolution]:
    """The exact best responses to `policy` (asked in batches), as first mover and as second
    mover: (seat 0 optimising against it in seat 1, seat 1 optimising against it in seat 0)."""
    as_first = solve_seats(goal_chips, (None, policy), allowed_moves)
    # The race is symmetric: the response's tables as second mover are those of the first
    # with the seats swapped, so one solve answers both.
    swapped = RaceTables(
        as_first.goal,
        as_first.allowed_moves,
        as_first.seat_values[::-1].copy(),
        as_first.iterations,
        as_first.seconds,
        as_first.policy_seconds,
    )
    return RaceSolution(as_first, 0), RaceSolution(swapped, 1)


def evaluate_race(
    goal_chips: int,
    first_policy: PolicyArgument | None,
    second_policy: PolicyArgument | None = None,
    allowed_moves: Iterable[str] | None = None,
) -> RaceTables:
    """The race with the first mover playing `first_policy` and the second `second_policy`
    (None: that seat plays its best response; both None: the two-player optimum).
    `.first_player_wins` is the first mover's exact win probability."""
    return solve_seats(goal_chips, (first_policy, second_policy), allowed_moves)


def solitaire_turn_value(
    top: int = 100, allowed_moves: Iterable[str] | None = None
) -> tuple[float, np.ndarray]:
    """The race's turn solver with the solitaire payoff (the turn total; bust 0), totals capped
    at `top` (a turn reaching it stops): the paper's optimal expected turn score (5.872019
    chips for top >= 56) and R(tau, n) (top, 6)."""
    tables = turn_tables(allowed_moves)
    pay = np.arange(top + MAX_ROLL_SCORE + 1, dtype=np.float64)
    r = _turn_values(top, pay, 0.0, *tables.arrays())
    return float(r[0, 5]), r


__all__ = [
    "RaceSolution",
    "RaceTables",
    "best_response",
    "evaluate_race",
    "solitaire_turn_value",
    "solve_race",
    "solve_seats",
    "turn_tables",
]


# -- the registry's hooks of dice_envs/TenThousandDuel-v0 ------------------------------------
def race_optimum(model: Any) -> RaceSolution:
    """The two-player optimum of a `TenThousandDuel` model (its `two_player_solver` hook)."""
    return solve_race(model.goal_chips, model.allowed_moves)


@dataclass
class RaceFoldSolution:
    """The agent's optimum in the race against a fixed opponent (`baselines.solve` of the
    race, every goal): the best response, its value by who starts (a coin when
    `agent_starts` is None). Its answers are the best response's (the same at a position
    whoever started)."""

    response: RaceSolution
    value: float
    seconds: float
    num_states: int = 0  # the agent's decision positions (every pair of banked scores)
    method: str = "structure-aware"

    def action(self, obs: Any) -> int:
        return self.response.action(obs)

    def action_values(self, obs: Any) -> np.ndarray:
        return self.response.action_values(obs)

    def value_at(self, obs: Any) -> float:
        return self.response.value_at(obs)

    def actions(self, observations: np.ndarray) -> np.ndarray:
        return self.response.actions(observations)

    def action_values_batch(self, observations: np.ndarray) -> np.ndarray:
        return self.response.action_values_batch(observations)

    def values_at(self, observations: np.ndarray) -> np.ndarray:
        return self.response.values_at(observations)

    def batched_policy(self) -> Rule:
        return self.response.batched_policy()


def solve_race_fold(
    goal: int = 10_000,
    allowed_moves: Iterable[str] | None = None,
    opponent: Any = "crocce-mordecki",
    agent_starts: bool | None = None,
) -> RaceFoldSolution:
    """`baselines.solve` of the race against `opponent` (its `structure_solver` hook): the
    exact best response, by the pairs of banked scores (`solve_seats`), at any goal; the
    opponent is asked in batches. Exact to round-off, as `solve_seats`."""
    from dice_envs.games.seat_policy import opponent_spec
    from dice_envs.games.ten_thousand_duel import TenThousandDuel
    from dice_envs.policies import as_policy

    start = time.perf_counter()
    model = TenThousandDuel(goal, allowed_moves)
    if isinstance(agent_starts, bool | type(None)) is False:
        raise ValueError(f"agent_starts must be True, False or None, got {agent_starts!r}")
    spec = opponent_spec(model, opponent)
    if isinstance(spec, str) and spec == "two-player-optimal":
        first = race_optimum(model)
        second = RaceSolution(first.tables, 1)
    else:
        first, second = best_response(model.goal_chips, as_policy(spec, model), model.allowed_moves)
    values = {True: first.value, False: second.value}
    value = values[agent_starts] if agent_starts is not None else sum(values.values()) / 2
    decisions = int(model.table_size().states) // 2  # both seats' positions, halved
    return RaceFoldSolution(first, value, time.perf_counter() - start, decisions)

"""Exact evaluation of any policy in the race to the goal at Ten Thousand, at any goal.

`evaluate_race_policy` scores a policy of the agent's seat against the race's opponent (both
asked in batches) without tables: the registry's `structure_evaluator` of
`dice_envs/TenThousandDuel-v0`. It answers what every evaluation answers (value, optimal
value, gap, agreement, where the gap is lost), with the losses summed by banked scores.

The pass runs forward over banked-score pairs (a, b), the agent's chips a and the opponent's
b, in increasing order of a + b. At each pair every turn is followed forward over the turn
total from its start (the reverse of the solver's backward recursion: a give-back lowers the
total by less than the roll added, so a roll from a larger total never feeds a smaller one):
the expected visits of each decision, the chance of stopping at each total, of busting and of
winning. A bust hands the turn over with the scores unchanged, so the agent's and the
opponent's turn starts at (a, b) form a two-cycle, whose expected numbers of visits solve a
2x2 linear system; every stop moves the mass to a pair of larger sum. The same pass runs for
the policy and for the best response (`baselines.ten_thousand_duel.best_response`, whose win
probabilities give every action's value): the policy's visits weight its losses (they sum to
the gap: the performance-difference identity, checked by the tests), the best response's
weight the agreement, as in `baselines.evaluation`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numba import njit

from baselines.kept_losses import KeptLosses
from baselines.protocols import Loss
from baselines.ten_thousand_duel import (
    FIXED_ACTIONS,
    FIXED_PROBABILITIES,
    MAX_ROLL_SCORE,
    NUM_ACTIONS,
    PAIRS_PER_ASK,
    TIE_TOLERANCE,
    _ask,
    _decision_batch,
    _Decisions,
    _fixed_answers,
    _scatter_actions,
    _scatter_probabilities,
    _turn_values,
    race_optimum,
    solve_seats,
    turn_tables,
)
from dice_envs.games.policy_forms import PolicyError
from dice_envs.games.rule import Rule
from dice_envs.games.ten_thousand import ROLL, STOP

KEEP_LOSSES = 1000  # the largest single-decision losses an evaluation keeps for where_lost


@dataclass(repr=False)
class RaceEvaluation(KeptLosses):
    """The exact score of a policy in the race against a fixed opponent.

    Attributes:
        value: the policy's win probability (a coin for who starts when `agent_starts` is
            None).
        optimal_value: the best response's.
        gap: optimal_value - value (>= 0 up to round-off).
        relative_gap: gap / optimal_value.
        agreement: the share of the best response's expected decisions in which the policy
            plays an optimal action (a stochastic policy: its probability of one), in [0, 1].
        seconds: the evaluation's wall time (the best response's solve, kept per game
            arguments, excluded); `policy_seconds` of it inside the policy's calls.
        policy_seconds: the time inside the policy's calls.
        decisions_asked: how many observations the policy was asked about.
        losses_by_scores: (G, G): the win probability lost at the decisions with the agent's
            banked chips a (rows) and the opponent's b (columns), weighted by how often the
            policy reaches them. Sums to `gap`.
        top_losses: the `losses_kept` largest single-decision losses (`Loss` records, largest
            first): `where_lost` reads them.
        losses_kept: how many the pass kept (`evaluate_race_policy`'s `keep_losses`).
    """

    evaluator = "evaluate_race_policy"

    value: float
    optimal_value: float
    gap: float
    relative_gap: float
    agreement: float
    seconds: float
    policy_seconds: float
    decisions_asked: int
    losses_by_scores: np.ndarray = field(repr=False)
    top_losses: list[Loss] = field(repr=False, default_factory=list)
    losses_kept: int = 0


# -- the compiled forward pass ------------------------------------------------------------------


@njit(cache=True)
def _forward(
    top, mode, act, prob, visits, stops,
    n_out, out_prob, out_gain, out_left, out_pos, bust_prob,
    mv_count, mv_action, mv_chips, mv_dice,
):  # fmt: skip
    """One turn from its start (mass 1) forward over the turn total, its actions `act`
    (FIXED_ACTIONS) or mixtures `prob` (FIXED_PROBABILITIES) per (turn total, position), as
    scattered (an illegal answer already a roll): writes visits[t, position] (expected visits
    of each decision) and stops[t] (the chance of stopping at t); returns (bust, win)
    probabilities."""
    mass = np.zeros((top, 6))
    mass[0, 5] = 1.0
    visits[:top] = 0.0
    stops[:top] = 0.0
    bust = 0.0
    win = 0.0
    for tau in range(top):
        for n in range(1, 6):
            w = mass[tau, n]
            if w == 0.0:
                continue
            bust += w * bust_prob[n]
            for j in range(n_out[n]):
                p = w * out_prob[n, j]
                t = tau + out_gain[n, j]
                if t >= top:
                    win += p
                    continue
                left = out_left[n, j]
                pos = out_pos[n, j]
                visits[t, pos] += p
                moves = mv_count[pos] if left < 5 else 0
                if mode == FIXED_PROBABILITIES:
                    stops[t] += p * prob[t, pos, STOP]
                    mass[t, left] += p * prob[t, pos, ROLL]
                    for m in range(moves):
                        q = prob[t, pos, mv_action[pos, m]]
                        if q > 0.0:
                            mass[t - mv_chips[pos, m], left + mv_dice[pos, m]] += p * q
                    continue
                action = act[t, pos]
                if action == STOP:
                    stops[t] += p
                    continue
                routed = False
                for m in range(moves):
                    if mv_action[pos, m] == action:
                        mass[t - mv_chips[pos, m], left + mv_dice[pos, m]] += p
                        routed = True
                if not routed:
                    mass[t, left] += p
    return bust, win


@njit(cache=True)
def _optimal_q(
    top, pay, r, t, pos, legal, q,
    out_left_of_pos, mv_count, mv_action, mv_chips, mv_dice,
):  # fmt: skip
    """q[action]: the best response's win probability after each action at decision
    (t, position), an illegal action valued as the roll it plays as."""
    n = out_left_of_pos[pos]
    roll = r[t, n]
    for action in range(q.shape[0]):
        q[action] = roll
    q[STOP] = pay[t]
    moves = mv_count[pos] if n < 5 else 0
    for m in range(moves):
        q[mv_action[pos, m]] = r[t - mv_chips[pos, m], n + mv_dice[pos, m]]
    best = -np.inf
    for action in range(q.shape[0]):
        if legal[pos, action] and q[action] > best:
            best = q[action]
    return best


@njit(cache=True)
def _scores(
    top_a, pay, r, rows_start, raw_act, raw_prob, mixes, tau_of, pos_of, count, legal, tie,
    row_optimal, position_dice, mv_count, mv_action, mv_chips, mv_dice,
):  # fmt: skip
    """At each decision of the pair: the best response's action (the lowest within `tie` of
    the best, as the solver's; also written to row_optimal), what the policy's answer gives up
    against it, and the policy's weight on optimal actions."""
    positions = mv_count.shape[0]
    best_act = np.full((top_a, positions), ROLL, dtype=np.int8)
    q = np.empty(legal.shape[1])
    given_up = np.zeros((top_a, positions))
    good = np.zeros((top_a, positions))
    for k in range(count):
        t, pos = tau_of[k], pos_of[k]
        best = _optimal_q(
            top_a, pay, r, t, pos, legal, q, position_dice, mv_count, mv_action, mv_chips,
            mv_dice,
        )  # fmt: skip
        least = best - tie * max(1.0, abs(best))
        chosen = ROLL
        for action in range(q.shape[0] - 1, -1, -1):
            if legal[pos, action] and q[action] >= least:
                chosen = action
        best_act[t, pos] = chosen
        row_optimal[rows_start + k] = chosen
        if mixes:
            played = 0.0
            agree = 0.0
            for action in range(q.shape[0]):
                w = raw_prob[rows_start + k, action]
                if w > 0.0:
                    played += w * q[action]
                    if legal[pos, action] and q[action] >= least:
                        agree += w
            given_up[t, pos] = best - played
            good[t, pos] = agree
        else:
            action = raw_act[rows_start + k]
            given_up[t, pos] = best - q[action]
            good[t, pos] = 1.0 if legal[pos, action] and q[action] >= least else 0.0
    return best_act, given_up, good


@njit(cache=True)
def _pair_pass(
    goal, a, b, others, rows_start, raw_act, raw_prob, mixes, agent_act, agent_prob,
    agent_mode, opp_act, opp_prob, opp_mode, tau_of, pos_of, count, legal, tie,
    flows, row_losses, row_optimal, tallies, position_dice, start_good, losses_by_scores,
    row_reach, pair_reach,
    n_out, out_prob, out_gain, out_left, out_pos, bust_prob,
    mv_count, mv_action, mv_chips, mv_dice,
):  # fmt: skip
    """Pair (a, b): both seats' turns forward, the two-cycles of the policy's and of the best
    response's visits, the stops moved to larger sums, the policy's losses at its decisions
    (rows rows_start.. of the asked batch, as `_decision_batch` orders them) and the best
    response's agreement with it.

    flows (4, G, G): the expected turn starts, as they arrive: [0] the agent's and [1] the
    opponent's under the policy, [2] and [3] under the best response. tallies: [0] value
    (the policy's wins), [1] the best response's wins, [2] agreement numerator, [3] its
    denominator."""
    positions = mv_count.shape[0]
    top_a, top_b = goal - a, goal - b
    pay = np.ones(goal + MAX_ROLL_SCORE + 1)
    for t in range(1, top_a):
        pay[t] = 1.0 - others[b, a + t]
    r = _turn_values(
        top_a, pay, 1.0 - others[b, a], n_out, out_prob, out_gain, out_left, out_pos,
        bust_prob, mv_count, mv_action, mv_chips, mv_dice,
    )  # fmt: skip
    best_act, given_up, good = _scores(
        top_a, pay, r, rows_start, raw_act, raw_prob, mixes, tau_of, pos_of, count, legal, tie,
        row_optimal, position_dice, mv_count, mv_action, mv_chips, mv_dice,
    )  # fmt: skip
    # Every turn forward from its start.
    visits = np.zeros((top_a, positions))
    best_visits = np.zeros((top_a, positions))
    stops = np.zeros(top_a)
    best_stops = np.zeros(top_a)
    opp_visits = np.zeros((top_b, positions))
    opp_stops = np.zeros(top_b)
    bust_a, win_a = _forward(
        top_a, agent_mode, agent_act, agent_prob, visits, stops,
        n_out, out_prob, out_gain, out_left, out_pos, bust_prob,
        mv_count, mv_action, mv_chips, mv_dice,
    )  # fmt: skip
    bust_s, win_s = _forward(
        top_a, FIXED_ACTIONS, best_act, agent_prob, best_visits, best_stops,
        n_out, out_prob, out_gain, out_left, out_pos, bust_prob,
        mv_count, mv_action, mv_chips, mv_dice,
    )  # fmt: skip
    bust_o, win_o = _forward(
        top_b, opp_mode, opp_act, opp_prob, opp_visits, opp_stops,
        n_out, out_prob, out_gain, out_left, out_pos, bust_prob,
        mv_count, mv_action, mv_chips, mv_dice,
    )  # fmt: skip
    x = _cycle_flows(flows, 0, a, b, bust_a, bust_o, stops, opp_stops, top_a, top_b)
    tallies[0] += x * win_a
    lost = 0.0
    for k in range(count):
        t, pos = tau_of[k], pos_of[k]
        row_losses[rows_start + k] = x * visits[t, pos] * given_up[t, pos]
        row_reach[rows_start + k] = x * visits[t, pos]
        lost += row_losses[rows_start + k]
    losses_by_scores[a, b] += lost
    pair_reach[a, b] = x
    x = _cycle_flows(flows, 2, a, b, bust_s, bust_o, best_stops, opp_stops, top_a, top_b)
    pair_reach[a, b] += x
    tallies[1] += x * win_s
    # The turn's start (a roll, the only legal action) is a decision of the agent's too.
    tallies[2] += x * start_good
    tallies[3] += x
    if a == 0 and b == 0:
        # An opponent who starts and wins its first turn leaves the agent the finished game's
        # observation, where every action is legal and worth the same: a decision the
        # policy always agrees at, as the env (and the tables) count it.
        tallies[2] += flows[3, 0, 0] * win_o
        tallies[3] += flows[3, 0, 0] * win_o
    for k in range(count):
        t, pos = tau_of[k], pos_of[k]
        tallies[2] += x * best_visits[t, pos] * good[t, pos]
        tallies[3] += x * best_visits[t, pos]
        row_reach[rows_start + k] += x * best_visits[t, pos]


@njit(cache=True)
def _cycle_flows(flows, flow, a, b, bust, bust_o, stops, opp_stops, top_a, top_b):
    """The two-cycle at (a, b) of flows[flow] (the agent's turn starts) and flows[flow + 1]
    (the opponent's): x = in_x + bust_o * y, y = in_y + bust * x; the stops of both turns
    moved to their pairs of larger sum. Returns x."""
    agent_in, opp_in = flows[flow, a, b], flows[flow + 1, a, b]
    x = (agent_in + bust_o * opp_in) / (1.0 - bust * bust_o)
    y = opp_in + bust * x
    for t in range(1, top_a):
        if stops[t] > 0.0:
            flows[flow + 1, a + t, b] += x * stops[t]
    for t in range(1, top_b):
        if opp_stops[t] > 0.0:
            flows[flow, a, b + t] += y * opp_stops[t]
    return x


@njit(cache=True)
def _chunk(
    goal, total, first, last, others, raw_act, raw_prob, mixes, agent_act, agent_prob,
    agent_mode, opp_act, opp_prob, opp_mode, below, dtau, dpos, legal, tie, flows,
    row_losses, row_optimal, tallies, position_dice, start_good, losses_by_scores,
    row_reach, pair_reach, n_out, out_prob, out_gain, out_left, out_pos, bust_prob,
    mv_count, mv_action, mv_chips, mv_dice,
):  # fmt: skip
    """`_pair_pass` of the pairs (a, total - a), a = first..last - 1, in the asked order."""
    start = 0
    for a in range(first, last):
        i = a - first
        count = below[goal - a]
        _pair_pass(
            goal, a, total - a, others, start, raw_act, raw_prob, mixes, agent_act[i],
            agent_prob[i], agent_mode, opp_act[i], opp_prob[i], opp_mode, dtau, dpos, count,
            legal, tie, flows, row_losses, row_optimal, tallies, position_dice, start_good[i],
            losses_by_scores, row_reach, pair_reach,
            n_out, out_prob, out_gain, out_left, out_pos, bust_prob,
            mv_count, mv_action, mv_chips, mv_dice,
        )  # fmt: skip
        start += count


# -- the evaluation ------------------------------------------------------------------------------


def _answers(policy: Any, tables, decisions, goal: int, own: np.ndarray, other: np.ndarray):
    """The agent's raw answers at every decision of its turns at the pairs (own[i], other[i])
    (kept for agreement and losses) and as scattered for the pass: (observations, raw actions
    (k,) or None, raw probabilities (k, 15) or None, actions, probabilities, mixes, seconds)."""
    rows = (own, goal, decisions.below, decisions.tau, decisions.position)
    needs_masks = getattr(policy, "needs_legal", not isinstance(policy, Rule))
    observations, masks = _decision_batch(*rows, other, tables.positions, tables.legal, needs_masks)
    actions = np.full((len(own), goal, len(tables.positions)), ROLL, dtype=np.int8)
    if not len(observations):
        nothing = np.zeros(0, dtype=bool)
        return observations, np.zeros(0, np.int64), None, actions, None, False, nothing, 0.0
    answer, unknown, asked = _ask_known(policy, observations, masks if needs_masks else None)
    if answer.ndim == 1:
        _scatter_actions(actions, *rows, tables.legal, answer)
        return observations, answer, None, actions, None, False, unknown, asked
    probs = np.zeros(actions.shape + (NUM_ACTIONS,))
    _scatter_probabilities(probs, *rows, tables.legal, answer)
    return observations, None, answer, actions, probs, True, unknown, asked


def _ask_known(policy: Any, observations: np.ndarray, masks: np.ndarray | None):
    """`_ask`, but a policy that answers only its own game's observations (a solution of
    tables: `whole_grid` False) gets a roll where it has no answer: (answers, which rows had
    none, seconds). The pass then checks that no play reaches those rows."""
    unknown = np.zeros(len(observations), dtype=bool)
    if getattr(policy, "whole_grid", True):
        answer, asked = _ask(policy, observations, masks)
        return answer, unknown, asked
    parts: list[tuple[int, np.ndarray]] = []
    asked = 0.0

    def ask(lo: int, hi: int) -> None:
        nonlocal asked
        try:
            answer, seconds = _ask(
                policy, observations[lo:hi], None if masks is None else masks[lo:hi]
            )
        except ValueError:
            if hi - lo == 1:
                unknown[lo] = True
                return
            mid = (lo + hi) // 2
            ask(lo, mid)
            ask(mid, hi)
            return
        asked += seconds
        parts.append((lo, answer))

    ask(0, len(observations))
    mixes = any(answer.ndim == 2 for _, answer in parts)
    shape = (len(observations), NUM_ACTIONS) if mixes else (len(observations),)
    answers = np.zeros(shape, dtype=np.float64 if mixes else np.int64)
    if mixes:
        answers[:, ROLL] = 1.0
    else:
        answers[:] = ROLL
    for lo, answer in parts:
        if mixes and answer.ndim == 1:
            answer = np.eye(NUM_ACTIONS)[answer]
        answers[lo : lo + len(answer)] = answer
    return answers, unknown, asked


def _start_agreement(policy: Any, own: np.ndarray, other: np.ndarray):
    """The policy's probability of its only legal action (a roll) at the turn starts
    (own[i], other[i], 0, 0, 5), which starts it has no answer at, and the seconds inside the
    policy."""
    observations = np.zeros((len(own), 5), dtype=np.int64)
    observations[:, 0], observations[:, 1], observations[:, 4] = own, other, 5
    masks = np.zeros((len(own), NUM_ACTIONS), dtype=bool)
    masks[:, ROLL] = True
    needs_masks = getattr(policy, "needs_legal", not isinstance(policy, Rule))
    answer, unknown, asked = _ask_known(policy, observations, masks if needs_masks else None)
    if answer.ndim == 1:
        return (answer == ROLL).astype(np.float64), unknown, asked
    return answer[:, ROLL].copy(), unknown, asked


def _largest(values: np.ndarray, count: int) -> np.ndarray:
    """The indices of the `count` largest values, largest first (ties by index)."""
    if len(values) > count:
        chosen = np.argpartition(-values, count - 1)[:count]
        return chosen[np.lexsort((chosen, -values[chosen]))]
    return np.argsort(-values, kind="stable")


def _check_reached(unknown: np.ndarray, reach: np.ndarray, observations: np.ndarray) -> None:
    """PolicyError unless every observation the policy had no answer for is reached by
    neither its own play nor the best response's."""
    reached = unknown & (reach > 0.0)
    if reached.any():
        row = observations[np.flatnonzero(reached)[0]].tolist()
        raise PolicyError(
            f"the policy answers only its own game's observations, and this evaluation's play "
            f"reaches {row}, which it has no answer for"
        )


_RESPONSES: dict[tuple, Any] = {}


def _is_optimum(spec: Any) -> bool:
    return isinstance(spec, str) and spec == "two-player-optimal"


def _optimum_policy(model: Any) -> Rule:
    """The two-player optimum asked in batches, its answers read from one byte per decision
    (`RaceSolution.action_table`: 189 MB and a few seconds at the full goal)."""
    optimum = race_optimum(model)
    optimum.action_table()
    return optimum.batched_policy()


def evaluate_seats(
    goal_chips: int,
    policy: Any,
    opponent: Any,
    agent_starts: bool | None = None,
    allowed_moves: Any = None,
    response: Any = None,
    keep_losses: int = KEEP_LOSSES,
) -> RaceEvaluation:
    """The exact score of `policy` (the agent's seat) against `opponent`, both asked in
    batches (a `BatchedPolicy`, a `Rule` or a callable (observations, masks) -> answers, as
    `baselines.ten_thousand_duel.solve_seats` takes them), in the race to `goal_chips` chips.
    `response`: the best response's `RaceTables` to `opponent` if already solved (else solved
    here). Exact to round-off (the tests hold it to the tables to 1e-12)."""
    start = time.perf_counter()
    tables = turn_tables(allowed_moves)
    arrays = tables.arrays()
    goal = int(goal_chips)
    if response is None:
        response = solve_seats(goal, (None, opponent), allowed_moves)
    others = response.seat_values[1]  # the opponent's win probability when it moves
    decisions = _Decisions.of(tables, goal)
    flows = np.zeros((4, goal, goal))
    if agent_starts is None:
        flows[:, 0, 0] = 0.5
    else:
        flows[0 if agent_starts else 1, 0, 0] = flows[2 if agent_starts else 3, 0, 0] = 1.0
    tallies = np.zeros(4)
    losses_by_scores = np.zeros((goal, goal))
    pair_reach = np.zeros((goal, goal))
    kept: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    asked = 0.0
    decisions_asked = 0
    for total in range(2 * goal - 1):
        low, high = max(0, total - goal + 1), min(goal - 1, total) + 1
        for first in range(low, high, PAIRS_PER_ASK):
            last = min(high, first + PAIRS_PER_ASK)
            own = np.arange(first, last)
            observations, raw_act, raw_prob, act, prob, mixes, unknown, seconds = _answers(
                policy, tables, decisions, goal, own, total - own
            )
            asked += seconds
            starts, unknown_starts, seconds = _start_agreement(policy, own, total - own)
            asked += seconds
            decisions_asked += len(observations) + len(own)
            opp_act, opp_prob, opp_mixes, seconds = _fixed_answers(
                opponent, tables, decisions, goal, total - own, own
            )
            asked += seconds
            k = len(observations)
            row_losses = np.zeros(k)
            row_reach = np.zeros(k)
            row_optimal = np.zeros(k, dtype=np.int64)
            _chunk(
                goal, total, first, last, others,
                raw_act if raw_act is not None else np.zeros(k, np.int64),
                raw_prob if raw_prob is not None else np.zeros((1, NUM_ACTIONS)),
                mixes, act, prob if prob is not None else np.zeros((last - first, 1, 1, 1)),
                FIXED_PROBABILITIES if mixes else FIXED_ACTIONS,
                opp_act, opp_prob, FIXED_PROBABILITIES if opp_mixes else FIXED_ACTIONS,
                decisions.below, decisions.tau, decisions.position, tables.legal,
                TIE_TOLERANCE, flows, row_losses, row_optimal, tallies, tables.positions[:, 1],
                starts, losses_by_scores, row_reach, pair_reach, *arrays,
            )  # fmt: skip
            _check_reached(unknown, row_reach, observations)
            starts_at = np.column_stack(
                (own, total - own, np.zeros((len(own), 2), int), 5 + 0 * own)
            )
            _check_reached(unknown_starts, pair_reach[own, total - own], starts_at)
            if k:
                top = _largest(row_losses, keep_losses)
                played = raw_act[top] if raw_act is not None else raw_prob[top].argmax(axis=1)
                kept.append((row_losses[top], observations[top], played, row_optimal[top]))
                if len(kept) > 16:
                    kept = [_merged(kept, keep_losses)]
    return _evaluation(
        goal, agent_starts, response, tallies, losses_by_scores, kept, keep_losses,
        time.perf_counter() - start, asked, decisions_asked,
    )  # fmt: skip


def _merged(kept: list[tuple], count: int) -> tuple:
    """The `count` largest losses of the kept parts (losses, observations, actions played,
    optimal actions), largest first; among equal losses the earlier part's first."""
    parts = [np.concatenate([part[column] for part in kept]) for column in range(4)]
    order = np.argsort(-parts[0], kind="stable")[:count]
    return tuple(column[order] for column in parts)


def _evaluation(
    goal, agent_starts, response, tallies, losses_by_scores, kept, keep_losses, seconds, asked,
    decisions_asked,
) -> RaceEvaluation:  # fmt: skip
    first = float(response.seat_values[0, 0, 0])
    second = 1.0 - float(response.seat_values[1, 0, 0])
    optimal = {True: first, False: second, None: (first + second) / 2}[agent_starts]
    value = float(tallies[0])
    gap = optimal - value
    top_losses: list[Loss] = []
    if kept:
        losses, observations, played, optimal_actions = _merged(kept, keep_losses)
        top_losses = [
            Loss(float(loss), tuple(int(v) for v in obs), int(p), int(o))
            for loss, obs, p, o in zip(losses, observations, played, optimal_actions, strict=True)
        ]
    return RaceEvaluation(
        value=value,
        optimal_value=optimal,
        gap=gap,
        relative_gap=gap / optimal if optimal > 0 else gap,
        agreement=float(tallies[2] / tallies[3]) if tallies[3] > 0 else 1.0,
        seconds=seconds,
        policy_seconds=asked,
        decisions_asked=decisions_asked,
        losses_by_scores=losses_by_scores,
        top_losses=top_losses,
        losses_kept=keep_losses,
    )


def evaluate_race_policy(
    policy: Any,
    obs_transform: Any = None,
    deterministic: bool = True,
    goal: int = 10_000,
    allowed_moves: Any = None,
    opponent: Any = "crocce-mordecki",
    agent_starts: bool | None = None,
    keep_losses: int = KEEP_LOSSES,
) -> RaceEvaluation:
    """`baselines.evaluate` of `dice_envs/TenThousandDuel-v0` (its `structure_evaluator`):
    the exact score of `policy` (any form `dice_envs.policies.as_policy` takes, asked in
    batches of decisions; `obs_transform` and `deterministic` as there) against `opponent`,
    at any goal. The best response to the opponent is solved once per game arguments and
    kept (at the full goal about 20 s, 0.3 GB); the pass itself takes about as long again,
    plus the time inside the policies."""
    from dice_envs.games.seat_policy import opponent_spec
    from dice_envs.games.ten_thousand_duel import TenThousandDuel, TenThousandDuelVersus
    from dice_envs.policies import as_policy

    if not (agent_starts is None or isinstance(agent_starts, bool)):
        raise ValueError(f"agent_starts must be True, False or None, got {agent_starts!r}")
    model = TenThousandDuel(goal, allowed_moves)
    spec = opponent_spec(model, opponent)
    opposing = _optimum_policy(model) if _is_optimum(spec) else as_policy(spec, model)
    key = None
    if isinstance(spec, str):
        key = (model.goal_chips, model.allowed_moves, spec)
    response = _RESPONSES.get(key) if key is not None else None
    if response is None:
        response = solve_seats(model.goal_chips, (None, opposing), model.allowed_moves)
        if key is not None:
            _RESPONSES.clear()  # one game's kept: a full-goal response holds 0.6 MB of values
            _RESPONSES[key] = response
    if _is_optimum(policy):
        asked: Any = _optimum_policy(model)
    else:  # the agent's names are the env's (its fold's), as the tables' evaluation reads them
        fold = TenThousandDuelVersus(goal=goal, allowed_moves=allowed_moves)
        asked = as_policy(policy, fold, obs_transform=obs_transform, deterministic=deterministic)
    return evaluate_seats(
        model.goal_chips, asked, opposing, agent_starts, model.allowed_moves, response,
        keep_losses,
    )  # fmt: skip


__all__ = ["KEEP_LOSSES", "RaceEvaluation", "evaluate_race_policy", "evaluate_seats"]

"""Exact evaluation of any policy that can be asked in batches on solitaire Yahtzee.

The game has about 400 million decision states (536,320 turn-start states, each with 756
situations inside its turn: 252 dice multisets with 2, 1 or 0 rolls left), too many for tables
or per-state arrays. The evaluation sweeps the turn-start states forward, layer by layer (a
turn fills one box), `CHUNK` at a time, and asks the policy for every decision of the chunk
(`ASK_STATES` turn-start states per call). Inside each turn, solved again from the solution's
turn-start values by compiled loops (`baselines.yahtzee_compiled`; the same sweep in plain
numpy, ``method="numpy"``, is their test oracle), it follows the policy's choices as the env
plays them (`Yahtzee.played_actions`: a duplicate reroll plays as its legal twin, any other
forbidden action scores in the first legal box), giving per turn-start state the policy's expected
points this turn and its distribution over the next turn-start states. Then:

- the policy's value: backward induction over the turn-start states with those turns,
  ``V(s) = R(s) + sum_s' P(s'|s) V(s')``, exact up to float64 round-off;
- where it loses (the performance difference lemma): at each decision x the policy gives up
  ``V*(x) - sum_a pi(a|x) Q*(x, a)`` (the optimal values inside the turn, recomputed from the
  solution's turn-start values), weighted by the policy's own probability of reaching x. These
  losses are >= 0 and sum to the gap; they are only kept summed by turn and decision, and by
  what the policy played against what the optimum plays;
- agreement as `baselines.Evaluation` defines it: the share of the optimal policy's expected
  decisions in which the policy plays an optimal action, by the optimal policy's occupancies,
  swept forward alongside. The optimal policy followed is `YahtzeeSolution.actions`' (the
  lowest-numbered of the best actions on exact ties).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse

import baselines.yahtzee_compiled as compiled
from baselines.kept_losses import KeptLosses
from baselines.protocols import Loss, check_count
from baselines.yahtzee import (
    _POSITION,
    DICE_ROWS,
    NUM_ACTIONS,
    YahtzeeSolution,
    _popcount,
    optimal_solution,
    registered_id,
    roll_levels,
)
from baselines.yahtzee_compiled import (
    NUM_SLOTS,
    SLOT_BOX,
    SLOT_OF,
    SLOT_POINTS,
    TIE_TOLERANCE,
    BoxRows,
    TurnTables,
    turn_tables,
)
from dice_envs import progress, sizes
from dice_envs.envs.yahtzee import OBSERVATION_NVEC
from dice_envs.games.yahtzee import (
    BOX_NAMES,
    DICE,
    FULL_CARD,
    IS_YAHTZEE,
    KEEP_OUTCOMES,
    NUM_BOXES,
    NUM_DICE_SETS,
    NUM_KEEPS,
    NUM_STATE_SLOTS,
    REROLL_KEEP,
    REROLL_LEGAL,
    ROLL_PROBABILITIES,
    UPPER_BONUS,
    UPPER_TARGET,
    YAHTZEE_FACE,
    Yahtzee,
    state_index,
)
from dice_envs.policies import BatchedPolicy, PolicyError, as_policy, checked_answer

CHUNK = 256  # turn-start states per batch inside the sweep
KEEP_LOSSES = 20  # the largest single-decision losses an evaluation keeps (`where_lost`)
ASK_STATES = 64  # turn-start states per call of the policy (756 observations each): 8.5 MB of
# observations stay in the processor's cache, where 34 MB (256 states) did not: twice as fast
CHOICES = ("reroll",) + BOX_NAMES
"""The rows and columns of `YahtzeeEvaluation.losses_by_choice`: a reroll, or a box."""
DECISIONS = ("2 rolls left", "1 roll left", "0 rolls left")
"""The columns of `YahtzeeEvaluation.losses_by_turn`, in the order a turn meets them."""
_KEEP_ROLLS = sparse.csr_matrix(KEEP_OUTCOMES.T)  # (252, 462): mass on keeps -> dice
_FLAGS = (np.arange(FULL_CARD + 1)[:, None] >> np.arange(NUM_BOXES)) & 1


@dataclass(repr=False)
class YahtzeeEvaluation(KeptLosses):
    """The exact score of a policy on Yahtzee, with aggregates of where it loses.

    Attributes:
        value: the policy's expected final score, bonuses included.
        optimal_value: the optimum's.
        gap: optimal_value - value (>= 0 up to round-off).
        relative_gap: gap / optimal_value.
        agreement: the share of the optimal policy's expected decisions in which the policy
            plays an optimal action (a stochastic policy: its probability of one), in [0, 1].
        seconds: the evaluation's wall time (the optimum's solve, kept per game arguments,
            excluded), `policy_seconds` of it inside the policy's calls.
        policy_seconds: the time inside the policy's calls (its own inference; building its
            observations and masks is the evaluation's own work, outside it).
        decisions_asked: how many observations the policy was asked about.
        losses_by_turn: (turns, 3): the expected points lost at the decisions of turn t + 1
            (columns `DECISIONS`: with 2, 1, 0 rolls left), weighted by the policy's
            probability of reaching them. Sums to `gap`.
        losses_by_choice: (14, 14): the same losses by what the policy played (rows
            `CHOICES`: a reroll, or the box it scored in) against what the optimal policy
            plays there (columns). Sums to `gap`; its diagonal holds rerolls of other dice.
        fills: (turns, 13): the probability that the policy fills each box at turn t + 1.
        optimal_fills: the same for the optimal policy.
        upper_bonus_probability: the probability that the policy's upper total reaches 63
            (the upper bonus), from its occupancies of the end states.
        yahtzee_probability: the probability that it ends with 50 in the Yahtzee box (it
            scored a Yahtzee there).
        optimal_upper_bonus_probability: the optimal policy's `upper_bonus_probability`.
        optimal_yahtzee_probability: the optimal policy's `yahtzee_probability`.
        turn_start_states: how many turn-start states were swept (those the policy or the
            optimum reaches).
        top_losses: the `losses_kept` largest single-decision losses of the policy (`Loss`
            records, largest first), kept during the sweep: `where_lost` reads them.
        losses_kept: how many the sweep kept (`evaluate_yahtzee`'s `keep_losses`).
    """

    evaluator = "evaluate_yahtzee"

    value: float
    optimal_value: float
    gap: float
    relative_gap: float
    agreement: float
    seconds: float
    policy_seconds: float
    decisions_asked: int
    losses_by_turn: np.ndarray = field(repr=False)
    losses_by_choice: np.ndarray = field(repr=False)
    fills: np.ndarray = field(repr=False)
    optimal_fills: np.ndarray = field(repr=False)
    upper_bonus_probability: float = 0.0
    yahtzee_probability: float = 0.0
    optimal_upper_bonus_probability: float = 0.0
    optimal_yahtzee_probability: float = 0.0
    turn_start_states: int = 0
    top_losses: list[Loss] = field(repr=False, default_factory=list)
    losses_kept: int = 0

    def lost_by_choice(self, count: int = 10) -> list[tuple[str, str, float]]:
        """The `count` largest entries of `losses_by_choice`: (what the policy played, what
        the optimum plays, expected points lost), largest first."""
        flat = self.losses_by_choice.ravel()
        order = np.argsort(-flat, kind="stable")[: check_count(count)]
        n = len(CHOICES)
        return [(CHOICES[i // n], CHOICES[i % n], float(flat[i])) for i in order]

    def losses_by_box(self) -> tuple[np.ndarray, np.ndarray]:
        """(14,) the gap split by what the policy played (a reroll, then the 13 boxes: the
        rows of `losses_by_choice` summed) and (14,) by what the optimal policy plays there
        (its columns summed); each sums to `gap`."""
        return self.losses_by_choice.sum(axis=1), self.losses_by_choice.sum(axis=0)


# -- the policy, asked in batches -------------------------------------------------------------


def policy_asker(
    policy: Any, model: Yahtzee, obs_transform: Any = None, deterministic: bool = True
) -> BatchedPolicy:
    """`policy` (any form `dice_envs.policies.as_policy` takes) as Yahtzee's sweep asks it:
    in batches; a form asked once per observation is refused (the sweep makes about 400
    million decisions)."""
    asked = as_policy(policy, model, obs_transform=obs_transform, deterministic=deterministic)
    if asked.per_observation:
        raise PolicyError(
            "policy for Yahtzee must be asked in batches (about 400 million decisions): a "
            "name, a YahtzeeSolution, an SB3 model, a run folder, or a function of a batch of "
            f"observations marked with dice_envs.policies.batched; got {asked.name}"
        )
    return asked


# -- one batch of turns: the optimum inside, the policy's answers ----------------------------


@dataclass
class _Turns:
    """The optimum inside a batch of B turns (arrays (rows, B), dice in `DICE` order, keeps
    in `KEEPS` order): `tables` the scorings, `box_worth` (13, 252, B) reward + V* of
    scoring (-inf where illegal), `legal_bits` (252, B), `dice_values[r]` V* with r rolls
    left, `keep_values[r]` a keep's value with r rolls left after the roll, `best[r]` the
    lowest-numbered optimal action (0..44: as `YahtzeeSolution.actions`)."""

    tables: TurnTables
    box_worth: np.ndarray
    legal_bits: np.ndarray
    dice_values: list = field(default_factory=list)
    keep_values: list = field(default_factory=list)
    best: list = field(default_factory=list)
    joker_rows: np.ndarray | None = None  # (252 * B,) dice-major: the jokers


def _turns_of(tables: TurnTables, rows: BoxRows) -> _Turns:
    """The batch's scorings spread to every box and dice multiset."""
    turns = _Turns(tables, tables.box_worth(rows), tables.legal_bits())
    turns.joker_rows = (IS_YAHTZEE[:, None] & tables.joker[None, :]).ravel()
    return turns


def _solve_inside(turns: _Turns) -> None:
    """The optimal values and actions inside the turns, from their scoring worth: every
    action's value, then the first of the best (plain numpy, the compiled loops' oracle)."""
    worth = turns.box_worth.transpose(1, 0, 2)  # (252, 13, B)
    turns.dice_values = [worth.max(axis=1)]
    turns.best = [32 + worth.argmax(axis=1)]
    for _ in range(2):
        internal = np.empty_like(turns.dice_values[-1])
        internal[DICE_ROWS] = turns.dice_values[-1]
        keeps = np.concatenate(roll_levels(internal))[_POSITION]  # (462, B), `KEEPS` order
        turns.keep_values.append(keeps)
        rerolls = np.where(REROLL_LEGAL[..., None], keeps[REROLL_KEEP], -np.inf)
        values = np.concatenate((rerolls, worth), axis=1)  # (252, 45, B)
        turns.dice_values.append(values.max(axis=1))
        turns.best.append(values.argmax(axis=1))


def _observations(filled, upper, flag) -> np.ndarray:
    """Every decision of a batch of turns as env observations, (B * 3 * 252, 22), ordered by
    state, then rolls left 0..2, then dice: the dice part plus the score card's part."""
    card = np.zeros((len(filled), len(OBSERVATION_NVEC)), dtype=np.int64)
    card[:, 7:20] = _FLAGS[filled]
    card[:, 20], card[:, 21] = upper, flag
    obs = np.add(card[:, None, :], _DICE_PARTS[None, :, :])
    return obs.reshape(-1, len(OBSERVATION_NVEC))


_DICE_PARTS = np.zeros((3 * NUM_DICE_SETS, len(OBSERVATION_NVEC)), dtype=np.int64)
_DICE_PARTS[:, :6] = np.tile(DICE, (3, 1))
_DICE_PARTS[:, 6] = np.repeat(np.arange(3), NUM_DICE_SETS)


def _masks(legal_bits: np.ndarray) -> np.ndarray:
    """The env's action masks of `_observations`' rows."""
    masks = np.empty((len(legal_bits), 3, NUM_DICE_SETS, NUM_ACTIONS), dtype=bool)
    masks[:, 0, :, :32] = False
    masks[:, 1:, :, :32] = REROLL_LEGAL
    masks[..., 32:] = _FLAGS[legal_bits][:, None] == 1
    return masks.reshape(-1, NUM_ACTIONS)


# -- the sweep ---------------------------------------------------------------------------------


def next_slots(model: Yahtzee, filled, upper, flag) -> np.ndarray:
    """(n, 44): the `state_index` each scoring slot leads to from n turn-start states."""
    _, next_upper, next_flag = model.score_result(
        upper[:, None], flag[:, None], SLOT_BOX[None, :], SLOT_POINTS[None, :], False
    )
    return state_index(filled[:, None] | 1 << SLOT_BOX, next_upper, next_flag)


def _decision_buffers(masks: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """An observation buffer for `ASK_STATES` turn-start states with the dice and rolls left
    written (the card's columns are written per call), and a mask buffer likewise if `masks`."""
    empty = np.zeros(ASK_STATES, dtype=np.int64)
    rows = ASK_STATES * 3 * NUM_DICE_SETS
    obs = np.empty((rows, len(OBSERVATION_NVEC)), dtype=np.int64)
    compiled.fill_observations(empty, empty, empty, obs, False)
    if not masks:
        return obs, None
    mask = np.empty((rows, NUM_ACTIONS), dtype=bool)
    compiled.fill_masks(
        empty,
        np.zeros(ASK_STATES, dtype=bool),
        np.zeros((ASK_STATES, 6), dtype=np.int64),
        mask,
        False,
    )
    return obs, mask


class _Sweep:
    """The forward sweep of one evaluation: occupancies of the policy (`reach`) and of the
    optimum (`optimal_reach`) over the turn-start states, the aggregates, and per swept state
    the policy's turn (expected reward and slot probabilities) for the backward induction.
    This one follows the turns inside with the compiled loops of `baselines.yahtzee_compiled`;
    `_NumpySweep` is the same in plain numpy (their test oracle)."""

    def __init__(self, solution: YahtzeeSolution, asker: BatchedPolicy, keep: int) -> None:
        self.solution, self.model, self.asker = solution, solution.model, asker
        self.keep = keep
        self.top = np.zeros((0, 8))  # loss, filled, upper, flag, rolls left, dice, played, best
        self.rows = BoxRows(self.model)
        turns = self.model.num_turns
        self.reach = np.zeros(NUM_STATE_SLOTS)
        self.optimal_reach = np.zeros(NUM_STATE_SLOTS)
        start = state_index(*self.model.start)
        self.reach[start] = self.optimal_reach[start] = 1.0
        self.losses_by_turn = np.zeros((turns, 3))
        self.losses_by_choice = np.zeros(len(CHOICES) ** 2)
        self.fills = np.zeros((turns, NUM_BOXES))
        self.optimal_fills = np.zeros((turns, NUM_BOXES))
        self.agreeing = self.optimal_decisions = 0.0
        self.policy_seconds, self.asked = 0.0, 0
        self.stored: list[tuple[np.ndarray, ...]] = []
        self.buffers: tuple[np.ndarray, np.ndarray | None] | None = None

    def ask(self, tables: TurnTables, filled, upper, flag) -> np.ndarray:
        """The policy's answers for every decision of the batch: (B, 3, 252) actions or
        (B, 3, 252, 45) probabilities (rolls left 0..2), asked `ASK_STATES` turn-start
        states at a time. `policy_seconds` counts the time inside the policy's calls only."""
        answers = []
        for lo in range(0, len(filled), ASK_STATES):
            part = slice(lo, lo + ASK_STATES)
            obs, masks = self.observations(tables, filled, upper, flag, part)
            start = time.perf_counter()
            answer = self.asker.ask(obs, masks)
            self.policy_seconds += time.perf_counter() - start
            answers.append(checked_answer(answer, obs, NUM_ACTIONS))
            self.asked += len(obs)
        answer = answers[0] if len(answers) == 1 else np.concatenate(answers)
        return answer.reshape((len(upper), 3, NUM_DICE_SETS) + answer.shape[1:])

    def observations(self, tables: TurnTables, filled, upper, flag, part: slice) -> tuple:
        """The decisions of the batch's states `part` as observations (read-only: they are
        views of one buffer, reused by the next call) and their masks if the policy takes them.
        Only the card's columns are written per call; fresh arrays per call cost twice as much
        as the writing itself (page faults on every new allocation)."""
        filled, upper, flag = filled[part], upper[part], flag[part].astype(np.int64)
        rows = len(filled) * 3 * NUM_DICE_SETS
        if self.buffers is None:
            self.buffers = _decision_buffers(self.asker.needs_legal)
        obs_buffer, mask_buffer = self.buffers
        compiled.fill_observations(filled, upper, flag, obs_buffer, True)
        obs = obs_buffer[:rows]
        obs.flags.writeable = False
        if mask_buffer is None:
            return obs, None
        bits = (tables.open_bits[part], tables.joker[part], tables.joker_bits[part])
        compiled.fill_masks(*bits, mask_buffer, True)
        masks = mask_buffer[:rows]
        masks.flags.writeable = False
        return obs, masks

    def chunk(self, turn: int, filled, upper, flag) -> None:
        """Sweep one batch of turn-start states of one layer (turn index `turn`)."""
        values = self.solution.state_values
        tables = turn_tables(self.model, self.rows, values, filled, upper, flag)
        answer = self.ask(tables, filled, upper, flag)
        slots = state_index(filled, upper, flag)
        reach, optimal_reach = self.reach[slots], self.optimal_reach[slots]
        rewards, slot_mass, optimal_slot_mass, top = self.turns(
            turn, tables, answer, reach, optimal_reach
        )
        self.keep_largest(top, filled, upper, flag)
        after = next_slots(self.model, filled, upper, flag).ravel()
        np.add.at(self.reach, after, (reach[:, None] * slot_mass).ravel())
        np.add.at(self.optimal_reach, after, (optimal_reach[:, None] * optimal_slot_mass).ravel())
        np.add.at(self.fills[turn], SLOT_BOX, reach @ slot_mass)
        np.add.at(self.optimal_fills[turn], SLOT_BOX, optimal_reach @ optimal_slot_mass)
        self.stored.append((filled, upper, flag, rewards, slot_mass))

    def turns(self, turn, tables, answer, reach, optimal_reach) -> tuple[np.ndarray, ...]:
        """Inside the batch's turns: the policy's expected reward (B,), its and the optimum's
        probabilities of each scoring slot (B, 44); adds the losses and the agreement."""
        batch = len(reach)
        if answer.ndim == 3:
            actions, weights = answer[..., None], np.ones((1, 1, 1, 1))
            weights = np.broadcast_to(weights, actions.shape)
        else:
            actions = np.broadcast_to(np.arange(NUM_ACTIONS), answer.shape)
            weights = answer
        out = np.empty((batch, 1 + 2 * NUM_SLOTS))
        choices = len(CHOICES) ** 2
        per_state = np.zeros((batch, 3 + choices + 2))
        top = np.zeros((batch, self.keep, 5))
        args = (*compiled.fields(tables), self.rows.rows, actions, weights, reach, optimal_reach)
        compiled.sweep_turns(*args, out, per_state, top, compiled.sweep_blocks())
        sums = per_state.sum(axis=0)
        self.losses_by_turn[turn] += sums[:3]
        self.losses_by_choice += sums[3 : 3 + choices]
        self.agreeing += sums[-2]
        self.optimal_decisions += sums[-1]
        states = np.repeat(np.arange(batch), self.keep)
        top = np.column_stack([states, top.reshape(-1, 5)])
        return out[:, 0], out[:, 1 : 1 + NUM_SLOTS], out[:, 1 + NUM_SLOTS :], top

    def keep_largest(self, top: np.ndarray, filled, upper, flag) -> None:
        """Merge a batch's candidate decision losses (rows: state in the batch, loss, rolls
        left, dice, played, best) into the `keep` largest so far."""
        top = top[top[:, 1] > 0.0]
        state = top[:, 0].astype(np.int64)
        rows = np.column_stack(
            [top[:, 1], filled[state], upper[state], flag[state], top[:, 2:]]
        )  # fmt: skip
        merged = np.concatenate([self.top, rows])
        order = np.argsort(-merged[:, 0], kind="stable")[: self.keep]
        self.top = merged[order]

    def losses(self) -> list[Loss]:
        """The kept decision losses as `Loss` records, largest first."""
        found = []
        for loss, filled, upper, flag, rolls_left, dice, played, best in self.top:
            obs = np.zeros(len(OBSERVATION_NVEC), dtype=np.int64)
            obs[:6], obs[6] = DICE[int(dice)], int(rolls_left)
            obs[7:20], obs[20], obs[21] = _FLAGS[int(filled)], int(upper), int(flag)
            found.append(Loss(float(loss), tuple(obs.tolist()), int(played), int(best)))
        return found

    def forward(self, chunk: int) -> None:
        """Sweep the turn-start states either policy reaches, layer by layer."""
        filled, upper, flag = self.model.turn_start_states()
        layer = _popcount(filled) - _popcount(self.model.absent)
        bounds = np.searchsorted(layer, np.arange(self.model.num_turns + 1))
        # The turns get wider, then narrower: counted in turn-start states, the bar moves at
        # about the speed of the work.
        with progress.task("evaluating", total=len(filled), unit="turn starts") as report:
            for turn in range(self.model.num_turns):
                lo, hi = bounds[turn], bounds[turn + 1]
                slots = state_index(filled[lo:hi], upper[lo:hi], flag[lo:hi])
                live = (self.reach[slots] > 0) | (self.optimal_reach[slots] > 0)
                live = lo + np.flatnonzero(live)
                for first in range(0, len(live), chunk):
                    rows = live[first : first + chunk]
                    self.chunk(turn, filled[rows], upper[rows], flag[rows])
                    report.advance(len(rows))
                report.advance(hi - lo - len(live))  # states neither policy reaches

    def end_probabilities(self, reach: np.ndarray) -> tuple[float, float]:
        """From occupancies `reach` after the sweep: the probability of ending with the upper
        bonus, and with 50 in the Yahtzee box (the end states' upper totals and flags)."""
        uppers = np.arange(UPPER_TARGET + 1)
        ends = state_index(FULL_CARD, uppers[:, None], np.array([0, 1]))  # (64, 2)
        at_end = reach[ends]
        return float(at_end[UPPER_TARGET].sum()), float(at_end[:, 1].sum())

    def backward(self) -> np.ndarray:
        """The policy's value of every swept turn-start state (dense, `state_index`; 0
        elsewhere), by backward induction over the turns it plays."""
        values = np.zeros(NUM_STATE_SLOTS)
        for filled, upper, flag, rewards, slot_mass in reversed(self.stored):
            after = next_slots(self.model, filled, upper, flag)
            values[state_index(filled, upper, flag)] = rewards + (slot_mass * values[after]).sum(1)
        return values


class _NumpySweep(_Sweep):
    """`_Sweep` in plain numpy: the oracle of the compiled loops. Inside a batch the
    decisions are laid out dice-major: row ``d * B + s`` is dice d in state s."""

    def observations(self, tables: TurnTables, filled, upper, flag, part: slice) -> tuple:
        obs = _observations(filled[part], upper[part], flag[part])
        masks = _masks(tables.legal_bits().T[part]) if self.asker.needs_legal else None
        return obs, masks

    def turns(self, turn, tables, answer, reach, optimal_reach) -> tuple[np.ndarray, ...]:
        turns = _turns_of(tables, self.rows)
        _solve_inside(turns)
        batch = len(reach)
        grid = _Grid.of(batch)
        occupancy = np.repeat(ROLL_PROBABILITIES, batch)
        optimal = occupancy
        rewards = np.zeros(batch)
        slot_mass = np.zeros(batch * NUM_SLOTS)
        optimal_slot_mass = np.zeros(batch * NUM_SLOTS)
        self.candidates: list[np.ndarray] = []
        for rolls_left in (2, 1, 0):
            level = answer[:, rolls_left].swapaxes(0, 1)  # dice-major
            level = level.reshape(batch * NUM_DICE_SETS, *answer.shape[3:])
            args = (turns, grid, rolls_left, reach, optimal_reach)
            occupancy = self._policy_level(
                *args, level, occupancy, optimal, turn, rewards, slot_mass
            )
            optimal = self._optimal_level(*args, optimal, optimal_slot_mass)
        return (
            rewards,
            slot_mass.reshape(batch, NUM_SLOTS),
            optimal_slot_mass.reshape(batch, NUM_SLOTS),
            np.concatenate(self.candidates),
        )

    def _policy_level(
        self, turns, grid, rolls_left, reach, optimal_reach, answer, occupancy, optimal, turn,
        rewards, slot_mass,
    ) -> np.ndarray | None:  # fmt: skip
        """The policy's decisions with `rolls_left`: their losses, agreement, rewards and
        slots; returns the occupancy of the dice after its rerolls (None with no roll left)."""
        batch = len(reach)
        if answer.ndim == 1:  # actions: one entry per decision
            rows, actions, weight = None, answer, 1.0
            dice, states, index = grid.dice, grid.states, grid.index
        else:  # probabilities: an entry per action with some
            rows, actions = np.nonzero(answer)
            weight = answer[rows, actions]
            dice, states = np.divmod(rows, batch)
            index = rows

        def pick(values: np.ndarray) -> np.ndarray:
            return values.ravel() if rows is None else values.ravel().take(rows)

        played = Yahtzee.played_actions(dice, rolls_left, pick(turns.legal_bits), actions)
        mass = pick(occupancy) * weight
        reroll = played < 32
        box = np.maximum(played - 32, 0)
        worth = turns.box_worth.take(box * (NUM_DICE_SETS * batch) + index)
        box_dice = box * NUM_DICE_SETS + dice
        following = None
        if rolls_left:
            keep = REROLL_KEEP.take(dice * 32 + (played & 31))
            kept = turns.keep_values[rolls_left - 1].take(keep * batch + states)
            worth = np.where(reroll, kept, worth)
            following = _rolled(keep[reroll], states[reroll], mass[reroll], batch)
        scored = mass if not rolls_left else np.where(reroll, 0.0, mass)
        reward = turns.tables.pair_reward[states, self.rows.rows.take(box_dice)]
        joker = np.flatnonzero(turns.joker_rows if rows is None else turns.joker_rows.take(rows))
        if len(joker):
            where = (states[joker], YAHTZEE_FACE[dice[joker]], box[joker])
            reward[joker] = turns.tables.joker_reward[where]
        rewards += np.bincount(states, scored * reward, minlength=batch)
        slot = SLOT_OF.take(box_dice)
        slot_mass += np.bincount(states * NUM_SLOTS + slot, scored, minlength=batch * NUM_SLOTS)
        value = pick(turns.dice_values[rolls_left])
        lost = reach.take(states) * mass * (value - worth)
        self.losses_by_turn[turn, 2 - rolls_left] += lost.sum()
        best = pick(turns.best[rolls_left])
        kind = np.where(reroll, 0, box + 1) * len(CHOICES) + np.where(best < 32, 0, best - 31)
        self.losses_by_choice += np.bincount(kind, lost, minlength=len(CHOICES) ** 2)
        found = _decision_losses(index, lost, weight, played, best, rolls_left, batch)
        self.candidates.append(found)
        good = worth >= value - TIE_TOLERANCE * np.maximum(1.0, np.abs(value))
        self.agreeing += float((optimal_reach.take(states) * pick(optimal) * weight) @ good)
        return following

    def _optimal_level(self, turns, grid, rolls_left, reach, optimal_reach, optimal, slot_mass):
        """The optimal policy's decisions with `rolls_left` (`reach` unused): the decisions
        it makes, its slots; returns the occupancy of the dice after its rerolls (None with
        no roll left)."""
        batch = len(optimal_reach)
        self.optimal_decisions += float(
            optimal.reshape(NUM_DICE_SETS, batch).sum(0) @ optimal_reach
        )
        best = turns.best[rolls_left].ravel()
        rerolls = best < 32
        scoring = np.where(rerolls, 0.0, optimal)
        following = None
        if rolls_left:
            keep = REROLL_KEEP.take(grid.dice * 32 + (best & 31))
            following = _rolled(keep[rerolls], grid.states[rerolls], optimal[rerolls], batch)
        slot = SLOT_OF.take(np.maximum(best - 32, 0) * NUM_DICE_SETS + grid.dice)
        slot_mass += np.bincount(
            grid.states * NUM_SLOTS + slot, scoring, minlength=batch * NUM_SLOTS
        )
        return following


def _decision_losses(row, lost, weight, played, best, rolls_left, batch) -> np.ndarray:
    """`_Sweep.keep_largest`'s candidate rows (state in the batch, loss, rolls left, dice,
    played, best) of one level of the numpy sweep: per decision (row ``d * B + s``, one entry
    per action it plays) its loss summed over its actions, the action it plays with the
    highest probability (the first on ties) and the optimal one."""
    weight = np.broadcast_to(weight, row.shape)
    order = np.lexsort((-weight, row))
    first = order[np.r_[0, np.flatnonzero(np.diff(row[order])) + 1]] if len(row) else order
    decisions = row[first]
    loss = np.bincount(row, lost, minlength=NUM_DICE_SETS * batch)[decisions]
    dice, state = np.divmod(decisions, batch)
    return np.column_stack(
        [state, loss, np.full(len(first), rolls_left), dice, played[first], best[first]]
    )


def _rolled(keeps: np.ndarray, states: np.ndarray, mass: np.ndarray, batch: int) -> np.ndarray:
    """(252 * B,) dice-major: the occupancy of the dice after rolling what `keeps` leave out,
    from the `mass` on each (keep, state) pair."""
    on_keeps = np.bincount(keeps * batch + states, mass, minlength=NUM_KEEPS * batch)
    return np.asarray(_KEEP_ROLLS @ on_keeps.reshape(NUM_KEEPS, batch)).ravel()


@dataclass
class _Grid:
    """The dice and state of each decision row ``d * B + s`` of a batch of B states."""

    dice: np.ndarray
    states: np.ndarray
    index: np.ndarray

    @classmethod
    def of(cls, batch: int) -> _Grid:
        if batch not in _GRIDS:
            dice = np.repeat(np.arange(NUM_DICE_SETS), batch)
            states = np.tile(np.arange(batch), NUM_DICE_SETS)
            _GRIDS[batch] = cls(dice, states, np.arange(batch * NUM_DICE_SETS))
        return _GRIDS[batch]


_GRIDS: dict[int, _Grid] = {}


class _OptimalBoxSweep(_NumpySweep):
    """The optimum alone, followed through the numpy sweep (its policy is the optimum, so
    both occupancies are the optimum's), adding up the points it scores in each box."""

    def __init__(self, solution: YahtzeeSolution) -> None:
        super().__init__(solution, policy_asker(solution, solution.model), 0)
        self.moments = np.zeros((2, NUM_BOXES))  # sum of probability x points, x points^2
        self.bonuses = 0.0  # the upper and Yahtzee bonuses the scorings earn

    def ask(self, tables, filled, upper, flag) -> None:
        return None  # nothing to ask: the optimum's actions are solved inside the turns

    def chunk(self, turn: int, filled, upper, flag) -> None:
        self.card = (filled, upper, flag)
        super().chunk(turn, filled, upper, flag)

    def turns(self, turn, tables, answer, reach, optimal_reach) -> tuple[np.ndarray, ...]:
        turns = _turns_of(tables, self.rows)
        _solve_inside(turns)
        batch = len(reach)
        grid = _Grid.of(batch)
        optimal = np.repeat(ROLL_PROBABILITIES, batch)
        slot_mass = np.zeros(batch * NUM_SLOTS)
        for rolls_left in (2, 1, 0):
            self._score(turns.best[rolls_left].ravel(), grid, optimal, optimal_reach)
            args = (turns, grid, rolls_left, reach, optimal_reach, optimal, slot_mass)
            optimal = self._optimal_level(*args)
        slot_mass = slot_mass.reshape(batch, NUM_SLOTS)
        return np.zeros(batch), slot_mass, slot_mass, np.zeros((0, 6))

    def _score(self, best, grid, occupancy, optimal_reach) -> None:
        """Add the scorings among the optimum's actions `best` (rows ``d * B + s``)."""
        rows = np.flatnonzero(best >= 32)
        weight = occupancy[rows] * optimal_reach[grid.states[rows]]
        dice, state, box = grid.dice[rows], grid.states[rows], best[rows] - 32
        filled, upper, flag = (part[state] for part in self.card)
        _, points = self.model.scoring(filled, dice)
        points = points[np.arange(len(rows)), box]
        reward, _, _ = self.model.score_result(upper, flag == 1, box, points, IS_YAHTZEE[dice])
        self.moments += [np.bincount(box, weight * points**k, NUM_BOXES) for k in (1, 2)]
        self.bonuses += float(weight @ (reward - points))


@dataclass
class BoxMoments:
    """What the optimal policy scores, box by box (the table of Verhoeff's "trivia" page).

    Attributes:
        means: (13,) the expected points written in each box (0 for boxes out of play).
        variances: (13,) their variances.
        upper_bonus: the expected upper bonus.
        yahtzee_bonus: the expected Yahtzee bonuses.
    """

    means: np.ndarray
    variances: np.ndarray
    upper_bonus: float
    yahtzee_bonus: float


def optimal_box_moments(
    joker: str | None = None,
    boxes: Sequence[str] | None = None,
    *,
    solution: YahtzeeSolution | None = None,
    chunk: int = CHUNK,
) -> BoxMoments:
    """The mean and variance of the points the optimal policy writes in each box, and its
    expected bonuses (they add up to the optimum): a forward sweep of the optimum alone, in
    plain numpy (a few minutes on the full game).

    Args:
        joker: the joker rule (default the solution's, else ``"forced"``).
        boxes: the boxes in play (default all 13).
        solution: the solved game, if at hand (then `joker` and `boxes` are its own).
        chunk: turn-start states swept at once.
    """
    solution = _checked_solution(joker, boxes, solution)
    sweep = _OptimalBoxSweep(solution)
    sweep.forward(chunk)
    means, squares = sweep.moments
    ends = state_index(FULL_CARD, UPPER_TARGET, np.array([0, 1]))
    upper_bonus = UPPER_BONUS * float(sweep.optimal_reach[ends].sum())
    return BoxMoments(means, squares - means**2, upper_bonus, sweep.bonuses - upper_bonus)


SWEEPS = {"compiled": _Sweep, "numpy": _NumpySweep}


# -- the entry point -----------------------------------------------------------------------------


def evaluate_yahtzee(
    policy: Any,
    joker: str | None = None,
    boxes: Sequence[str] | None = None,
    *,
    obs_transform: Callable | None = None,
    deterministic: bool = True,
    solution: YahtzeeSolution | None = None,
    chunk: int = CHUNK,
    method: str = "compiled",
    keep_losses: int = KEEP_LOSSES,
) -> YahtzeeEvaluation:
    """The exact expected final score of `policy` on Yahtzee, its gap and where it loses.

    Args:
        policy: a named policy of the game, a `YahtzeeSolution` (its optimal policy), an SB3
            model (asked with `predict(obs, deterministic=True)`, with `action_masks=` where
            its `predict` takes them, as MaskablePPO's does; with `deterministic=False`, its
            action probabilities), or a batched callable (`dice_envs.policies.batched`, a
            `Rule`): int64 observations (n, 22) -> (n,) actions or (n, 45) probabilities.
            Actions the mask forbids play as the env plays them. The observations it gets are
            read-only views of one buffer that the next call overwrites: copy what you keep.
        joker: the joker rule (`dice_envs/Yahtzee-v0`'s argument); defaults to `solution`'s,
            else "forced".
        boxes: the boxes in play (`dice_envs/Yahtzee-v0`'s argument).
        obs_transform: maps a batch of raw observations to what the policy was trained on.
        deterministic: False to score an SB3 model by its action probabilities.
        solution: the game's optimum if already solved (else solved once and kept).
        chunk: turn-start states per batch (the policy is asked 756 observations per state,
            for at most `ASK_STATES` states at once).
        method: "compiled" (numba loops inside each turn) or "numpy" (the same sweep in plain
            numpy, several times slower: the test oracle of the compiled one).
        keep_losses: how many of the largest single-decision losses the sweep keeps for
            `where_lost`.

    Raises:
        ValueError: a policy in a form that cannot be asked in batches, answers outside the
            action space, arguments that disagree with `solution`.
    """
    given = {name: v for name, v in (("joker", joker), ("boxes", boxes)) if v is not None}
    sizes.check(registered_id(), "evaluate", given)
    solution = _checked_solution(joker, boxes, solution)
    if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
        raise ValueError(f"chunk must be an integer >= 1, got {chunk!r}")
    if method not in SWEEPS:
        raise ValueError(f"method must be one of {sorted(SWEEPS)}, got {method!r}")
    keep_losses = check_count(keep_losses)
    asker = policy_asker(policy, solution.model, obs_transform, deterministic)
    start = time.perf_counter()
    sweep = SWEEPS[method](solution, asker, keep_losses)
    sweep.forward(chunk)
    value = float(sweep.backward()[state_index(*solution.model.start)])
    gap = solution.value - value
    bonus, yahtzee = sweep.end_probabilities(sweep.reach)
    optimal_bonus, optimal_yahtzee = sweep.end_probabilities(sweep.optimal_reach)
    return YahtzeeEvaluation(
        value=value,
        optimal_value=solution.value,
        gap=gap,
        relative_gap=gap / abs(solution.value) if solution.value else gap,
        agreement=sweep.agreeing / sweep.optimal_decisions,
        seconds=time.perf_counter() - start,
        policy_seconds=sweep.policy_seconds,
        decisions_asked=sweep.asked,
        losses_by_turn=sweep.losses_by_turn,
        losses_by_choice=sweep.losses_by_choice.reshape(len(CHOICES), len(CHOICES)),
        fills=sweep.fills,
        optimal_fills=sweep.optimal_fills,
        upper_bonus_probability=bonus,
        yahtzee_probability=yahtzee,
        optimal_upper_bonus_probability=optimal_bonus,
        optimal_yahtzee_probability=optimal_yahtzee,
        turn_start_states=sum(len(part[0]) for part in sweep.stored),
        top_losses=sweep.losses(),
        losses_kept=keep_losses,
    )


def _checked_solution(joker, boxes, solution) -> YahtzeeSolution:
    if solution is None:
        return optimal_solution("forced" if joker is None else joker, boxes)
    if not isinstance(solution, YahtzeeSolution):
        raise ValueError(f"solution must be a YahtzeeSolution, got {type(solution).__name__}")
    model = solution.model
    wanted = Yahtzee(joker=model.joker if joker is None else joker, boxes=boxes)
    if boxes is not None and wanted.boxes != model.boxes or wanted.joker != model.joker:
        raise ValueError(
            f"joker={joker!r}, boxes={boxes!r} disagree with the solution's game {model!r}"
        )
    return solution

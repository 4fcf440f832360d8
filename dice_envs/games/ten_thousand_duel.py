"""Competitive Ten Thousand: two players race to 10,000 points, each turn the solitaire turn.

The turn is `dice_envs.games.ten_thousand.TenThousand`'s (Crocce and Mordecki's scoring,
configurations, hot dice and give-back moves), read from that model and not written again:
this module adds only the race around it (whose turn it is, the banked scores, the goal).
"""

from __future__ import annotations

import functools
from bisect import bisect_right
from collections.abc import Callable, Iterable
from operator import itemgetter

import numpy as np

from dice_envs.games.base import TableSize, Transition, check_int, reachable_states
from dice_envs.games.fold import fold_factory
from dice_envs.games.rule import Rule
from dice_envs.games.ten_thousand import (
    ACTION_NAMES,
    CONFIGS,
    MOVE_LABELS,
    ROLL,
    STOP,
    TenThousand,
    scoring_dice,
)

# (player to move, banked chips of player 0, of player 1, turn score, configuration index,
# dice in hand); the turn's part is TenThousand's state.
DuelState = tuple[int, int, int, int, int, int]
CHIP = 50  # points per chip
FRESH = (0, 0, 5)  # a turn's start: no score, fresh dice


class TenThousandDuel:
    """Competitive Ten Thousand (Farkle): the first to bank 10,000 points wins.

    ## Description
    Two players take turns; a turn is the solitaire turn of `dice_envs/TenThousand-v0`
    (Crocce and Mordecki's scoring, in chips of 50 points: each 5 scores 1 chip, each 1
    scores 2, three 2s, 3s, 4s, 5s, 6s score 4, 6, 8, 10, 12 and three 1s 20; scoring dice
    are set aside, five fresh dice when all five scored, and scoring combinations of the last
    roll may be given back and rolled again). A roll with no scoring die ends the turn with
    nothing banked; stopping banks the turn score. A player whose banked score plus turn
    score reaches the goal wins at once. No opening minimum, no penalty for repeated busts,
    no last round for the other player. Crocce and Mordecki (2016) solved the solitaire turn
    and left the race open; `dice_envs/TenThousandDuel-v0` seats the agent against a fixed
    opponent, whose whole turn is played inside `step`.

    ## Action Space
    `Discrete(15)`, as `dice_envs/TenThousand-v0`: 0 stop (bank the turn score), 1 roll the
    dice in hand, 2..14 give back scoring combinations of the last roll ("5", "1", "55",
    "51", "11", "551", "511", "t1", "t2", "t3", "t4", "t5", "t6") and roll them with the
    dice in hand. `info["action_mask"]` and `action_masks()` give the legal ones (stop not
    before the first roll of a turn, give-backs as the solitaire game allows them); an
    illegal action is played as a roll, by the agent and by every opponent alike.

    ## Observation Space
    `MultiDiscrete([G + 1, G + 1, G, 45, 6])` with G = goal / 50: (own banked chips,
    opponent's banked chips, turn score in chips, configuration index of the last roll in
    `dice_envs.games.ten_thousand.CONFIGS`, dice in hand); the last three are
    `dice_envs/TenThousand-v0`'s observation of the turn. The opponent's turn shows as the
    opponent's turn score. A final observation shows the winner's banked score as G and
    turn score 0.

    ## Rewards
    1 when the agent wins, 0 otherwise: the expected return is the win probability.

    ## Starting State
    Banked scores 0, five fresh dice. If the opponent starts (`agent_starts=False`, or the
    coin says so), its first turn is played in `reset`.

    ## Episode End
    Termination when either player reaches the goal. No truncation: whatever the players
    do, every turn reaches the goal with positive probability, so the game ends with
    probability 1.

    ## Info
    `info["dice"]`: the agent's dice this step (empty on a stop); `info["opponent_dice"]`:
    the opponent's dice in the turn it played this step (empty if it did not play).

    ## Arguments
    - `goal=10000`: points to win, a positive multiple of 50 (smaller goals, 300 to 1,000,
      make fast experiments and have tables).
    - `allowed_moves=None`: the give-back labels allowed, as `dice_envs/TenThousand-v0`'s
      (default all; `[]` gives stop-or-roll play).
    - `opponent="crocce-mordecki"`: `"crocce-mordecki"` (the optimal solitaire turn of
      Crocce and Mordecki, maximising the turn's expected score, whatever the scores;
      supplied by `baselines`), `"stop-at-K"` (rolls, never giving back, until the turn score
      reaches K chips), `"random"` (each legal action evenly), `"two-player-optimal"` (the
      two-player optimum, supplied by `baselines`), or any policy form of
      `dice_envs.policies` on the opponent's own observation (a batched callable is asked in
      batches; a table over the grid only fits small goals).
    - `agent_starts=None`: None flips a fair coin per episode; True or False fixes who starts.
    - `render_mode=None`: `"ansi"` (one line of text), `"rgb_array"` (the dice and scores) or
      `"human"` (that picture in a pygame window).

    ## Version History
    - v0: initial version.
    """

    num_actions = len(ACTION_NAMES)
    action_names = ACTION_NAMES
    event_keys = ("dice",)
    observation_names = (
        "own score",
        "opponent score",
        "turn score",
        "configuration",
        "dice to roll",
    )
    policy_names = ("crocce-mordecki", "stop-at-K", "random")
    policy_descriptions = {
        "crocce-mordecki": "Crocce and Mordecki's optimal solitaire turn: maximises the turn's "
        "expected score, whatever the banked scores (baselines.ten_thousand)",
        "stop-at-K": "rolls, never giving dice back, until the turn score reaches K chips",
        "random": "each legal action with the same probability",
    }
    picture_size = (5, 3)

    def __init__(self, goal: int = 10_000, allowed_moves: Iterable[str] | None = None) -> None:
        goal = check_int("goal", goal, CHIP)
        if goal % CHIP:
            raise ValueError(f"goal must be a positive multiple of {CHIP} points, got {goal}")
        self.goal = goal
        self.goal_chips = goal // CHIP
        # The solitaire turn, uncapped within the race (a turn score reaching the goal wins
        # before any cap could matter).
        self.turn = TenThousand(allowed_moves=allowed_moves, max_turn_score=self.goal_chips)
        self.allowed_moves = self.turn.allowed_moves
        chips = self.goal_chips
        self.observation_nvec = (chips + 1, chips + 1, chips, len(CONFIGS), 6)
        self.state_bounds = (2, chips + 1, chips + 1, chips, len(CONFIGS), 6)
        self._batch_rules = _BatchRules(self.turn)
        self._opening = self.turn.legal_actions(FRESH)
        self._legal_by_position: dict[int, tuple[int, ...]] = {}
        self._quick = _QuickRules(self.turn)

    def __repr__(self) -> str:
        moves = "all" if len(self.allowed_moves) == len(MOVE_LABELS) else list(self.allowed_moves)
        return f"TenThousandDuel(goal={self.goal}, allowed_moves={moves})"

    def table_size(self, view: str = "two-player", opponent: object = None) -> TableSize:
        """How large the tables are: per pair of banked scores (a, b), the turn's positions
        with a turn score under G - a (counted on the solitaire turn, about 47 per chip of
        turn score from 26 chips on: exact for both seats, as enumerated), each with at most
        about 118 outcome rows (the solitaire turn's measure; the race merges its wins, so
        both seats' tables measured 49 rows a state at goal 300, 81 at 1,000 and 92 at
        1,500); in the fold, the agent's pairs only, a stop summing the opponent's whole turn
        (taken as 40 rows more: measured 98 rows a state at goal 500, 179 at 1,000 against
        crocce-mordecki, on 15 % fewer states than counted)."""
        chips = self.goal_chips
        below = _positions_below(self.allowed_moves, chips)  # [r]: positions under r chips
        positions = float(chips * below[1:].sum())  # every b, every a (r = G - a)
        if view == "fold":
            return TableSize(positions, positions * (118 + 40), "goal")
        return TableSize(2 * positions, 2 * positions * 118, "goal")

    # -- rules ---------------------------------------------------------------------------------
    def initial_states(self) -> list[tuple[float, DuelState]]:
        return [(1.0, (0, 0, 0, *FRESH))]

    to_move = itemgetter(0)

    def swap_seats(self, state: DuelState) -> DuelState:
        mover, first, second, *turn = state
        return (1 - mover, second, first, *turn)

    def legal_actions(self, state: DuelState) -> tuple[int, ...]:
        if state[3] == 0:  # a turn's start: the solitaire turn's only move, a roll
            return self._opening
        # With a turn score, the solitaire turn's moves depend on the configuration and dice.
        position = state[4] * 6 + state[5]
        legal = self._legal_by_position.get(position)
        if legal is None:
            legal = self._legal_by_position[position] = self.turn.legal_actions(state[3:])
        return legal

    def transitions(self, state: DuelState, action: int) -> list[Transition]:
        mover, first, second, tau, _, _ = state
        if action == STOP and tau > 0:
            banked = (first + tau, second) if mover == 0 else (first, second + tau)
            return [Transition(1.0, (1 - mover, *banked, *FRESH), 0.0, False)]
        start, dice = self.turn.rolled_from(state[3:], action)
        merged: dict[DuelState, list] = {}
        for prob, config in self.turn.roll_table(dice):
            next_state, reward, terminal = self._landed(state, start, dice, config)
            if next_state in merged:
                merged[next_state][0] += prob
            else:
                merged[next_state] = [prob, reward, terminal]
        return [Transition(p, s, r, t) for s, (p, r, t) in merged.items()]

    def _landed(self, state: DuelState, start: int, dice: int, config) -> tuple:
        """The state, player 0's reward and whether the game ended, after the mover rolls
        `dice` dice from turn score `start` and they show `config`."""
        mover, first, second = state[:3]
        after = self.turn.after_roll(start, dice, config)
        if after is None:  # no scoring die: the turn is lost
            return (1 - mover, first, second, *FRESH), 0.0, False
        own = first if mover == 0 else second
        if own + after[0] >= self.goal_chips:  # the goal reached: won at once
            won = (self.goal_chips, second) if mover == 0 else (first, self.goal_chips)
            return (mover, *won, 0, 0, 0), float(mover == 0), True
        return (mover, first, second, *after), 0.0, False

    def sample_step(
        self, state: DuelState, action: int, uniform: Callable[[], float]
    ) -> tuple[DuelState, float, bool, dict]:
        """One step with the dice thrown: the same law as `transitions` (a chi-square test)."""
        next_state, reward, terminal, thrown = self._thrown_step(state, action, uniform)
        return next_state, reward, terminal, {"dice": thrown}

    def _thrown_step(self, state: DuelState, action: int, uniform: Callable[[], float]):
        """`sample_step` with the faces thrown as a list (empty on a stop), read from the
        turn's moves and throws laid out per position (`_quick`: the same `rolled_from`,
        `throw` and `after_roll`, a test holds it to `batch_sample_step`)."""
        mover, first, second, tau, config_index, dice = state
        if action == STOP and tau > 0:
            if mover == 0:
                return (1, first + tau, second, 0, 0, 5), 0.0, False, []
            return (0, first, second + tau, 0, 0, 5), 0.0, False, []
        chips_back, thrown = self._quick.rolled[(config_index * 6 + dice) * 15 + action]
        faces, gain, left, kept = self._quick.throws[thrown][int(uniform() * 6**thrown)]
        if gain < 0:  # no scoring die: the turn is lost
            return (1 - mover, first, second, 0, 0, 5), 0.0, False, list(faces)
        tau += gain - chips_back
        if (first if mover == 0 else second) + tau >= self.goal_chips:
            if mover == 0:
                return (0, self.goal_chips, second, 0, 0, 0), 1.0, True, list(faces)
            return (1, first, self.goal_chips, 0, 0, 0), 0.0, True, list(faces)
        return (mover, first, second, tau, kept, left), 0.0, False, list(faces)

    def sample_turn(
        self,
        state: DuelState,
        choices: dict,
        choose: Callable[[DuelState], object],
        uniform: Callable[[], float],
    ) -> tuple[DuelState, float, bool, list[int]]:
        """The mover's whole turn from `state`: its action at each position is
        `choices[position]`, or `choose(position)` where missing (an action, or cumulative
        bounds to draw one from). Returns the end state, player 0's reward, whether the game
        ended, and the faces thrown: the same draws in the same order as repeated
        `sample_step` calls (a test), in one loop (the env plays opponents here)."""
        mover, faces = state[0], []
        while True:
            choice = choices.get(state)
            if choice is None:
                choice = choose(state)
            if choice.__class__ is not int:
                choice = bisect_right(choice, uniform())
            state, reward, terminal, thrown = self._thrown_step(state, choice, uniform)
            faces += thrown
            if terminal or state[0] != mover:
                return state, reward, terminal, faces

    # -- the same rules for a batch of states (the fast table builder; a test holds them equal)
    def batch_transitions(self, states: np.ndarray, action: int):
        """(source row, probability, next state, reward, terminal) arrays for `action` in each
        row of `states` (an (n, 6) int array); equal next states of a row are merged."""
        rules = self._batch_rules
        mover, first, second, tau, config_index, dice = np.asarray(states, np.int64).T
        rows = np.arange(len(mover))
        stopping = (action == STOP) & (tau > 0)
        parts = []
        held = rows[stopping]
        if len(held):
            banked = _banked(mover[held], first[held], second[held], tau[held])
            parts.append((held, np.ones(len(held)), banked, np.zeros(len(held))))
        rolled = rows[~stopping]
        given_chips, given_dice = rules.given_back(config_index[rolled], dice[rolled], action)
        start, thrown = tau[rolled] - given_chips, dice[rolled] + given_dice
        for n in range(1, 6):
            src = rolled[thrown == n]
            if not len(src):
                continue
            prob, gain, left, kept = rules.rolls[n]
            count = len(src)
            src = np.repeat(src, len(prob))
            new_tau = np.repeat(start[thrown == n], len(prob)) + np.tile(gain, count)
            nxt, reward = self._batch_landed(
                mover[src],
                first[src],
                second[src],
                new_tau,
                np.tile(left, count),
                np.tile(kept, count),
            )
            parts.append((src, np.tile(prob, count), nxt, reward))
        source, prob, nxt, reward = (np.concatenate(c) for c in zip(*parts, strict=True))
        return self._merge_rows(source, prob, nxt, reward)

    def batch_sample_step(self, states: np.ndarray, actions: np.ndarray, uniforms: np.ndarray):
        """One step of every row of `states` ((n, 6) ints), the dice thrown with `uniforms`
        (one in [0, 1) a row, as `sample_step`'s `uniform()`): (next states, player 0's
        rewards, terminal). The same law as `batch_transitions` (a chi-square test), and row
        by row `sample_step`'s (a test); compiled for speed, as the vector env steps here."""
        from dice_envs.games.ten_thousand_duel_compiled import sample_steps

        return sample_steps(
            np.ascontiguousarray(states, np.int64),
            np.ascontiguousarray(actions, np.int64),
            np.ascontiguousarray(uniforms, np.float64),
            self.goal_chips,
            self.num_actions,
            self._batch_rules.compiled,
        )

    def batch_sample_turns(
        self,
        states: np.ndarray,
        ended: np.ndarray,
        player: int,
        policy: np.ndarray,
        reads: tuple[int, ...],
        rng: np.random.Generator,
    ) -> None:
        """Play `player`'s whole turn in every row of `states` ((n, 6) ints, in place) where
        it is to move and `ended` is False, marking in `ended` the games it wins. Its action
        at a position with a turn score is the deterministic `policy` (actions over the grid
        of its observation's components `reads`, C order), a roll at a turn's start. The dice
        come from `rng`, round by round: every row still in its turn steps once a round, in
        row order, with one `rng.random()` (as `batch_sample_step` fed one block of uniforms
        a round would: a test holds them equal draw for draw)."""
        from dice_envs.games.ten_thousand_duel_compiled import sample_turns

        if not states.flags.c_contiguous or states.dtype != np.int64:
            raise ValueError("states must be a C-contiguous int64 array (stepped in place)")
        columns = np.array([self.observation_columns(player)[i] for i in reads], np.int64)
        grid = [self.observation_nvec[i] for i in reads]
        strides = np.array([int(np.prod(grid[k + 1 :])) for k in range(len(grid))], np.int64)
        if policy.shape != (int(np.prod(grid)),):
            raise ValueError(f"policy must hold one action per cell of {grid}, got {policy.shape}")
        sample_turns(
            states,
            ended,
            player,
            np.ascontiguousarray(policy, np.int64),
            columns,
            strides,
            rng,
            self.goal_chips,
            self.num_actions,
            self._batch_rules.compiled,
        )

    def _batch_landed(self, mover, first, second, new_tau, left, kept):
        """(next states, player 0's rewards) after rolls that reached turn score `new_tau` with
        `left` dice left (-1: no scoring die) and configuration `kept` (0 on hot dice)."""
        bust = left < 0
        won = ~bust & (np.where(mover == 0, first, second) + new_tau >= self.goal_chips)
        going = ~bust & ~won
        # A bust hands fresh dice over; a win ends with the goal banked and no dice.
        nxt = np.column_stack(
            (
                np.where(bust, 1 - mover, mover),
                np.where(won & (mover == 0), self.goal_chips, first),
                np.where(won & (mover == 1), self.goal_chips, second),
                np.where(going, new_tau, 0),
                np.where(going, kept, 0),
                np.where(bust | (going & (left == 0)), 5, np.where(won, 0, left)),
            )
        )
        return nxt, (won & (mover == 0)).astype(float)

    def _merge_rows(self, source, prob, nxt, reward):
        """Rows of one source with the same next state summed (hot dice reached by two
        configurations, wins by many)."""
        keys = source * int(np.prod(self.state_bounds)) + np.ravel_multi_index(
            tuple(nxt.T), self.state_bounds
        )
        unique, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        summed = np.bincount(inverse.ravel(), weights=prob, minlength=len(unique))
        nxt, reward = nxt[first], reward[first]
        terminal = nxt[:, 5] == 0
        return source[first], summed, nxt, reward, terminal

    def batch_to_move(self, states: np.ndarray) -> np.ndarray:
        return states[:, 0]

    def batch_legal(self, states: np.ndarray) -> np.ndarray:
        rules = self._batch_rules
        rows = np.where(states[:, 3] == 0, rules.opening_row, states[:, 4] * 6 + states[:, 5])
        return rules.legal_rows.take(rows, axis=0)

    @staticmethod
    def observation_columns(player: int) -> tuple[int, ...]:
        """The state's columns that make `player`'s observation, in its order."""
        return _COLUMNS[player]

    def batch_observation(self, states: np.ndarray, player: int) -> np.ndarray:
        if player == 0:
            return states[:, 1:].copy()
        return states[:, list(_COLUMNS[1])]

    def batch_state_of(self, observations: np.ndarray, player: int) -> np.ndarray:
        """`state_of` for an (n, 5) batch of valid observations (not checked)."""
        observations = np.asarray(observations, np.int64)
        own, other = observations[:, 0], observations[:, 1]
        first, second = (own, other) if player == 0 else (other, own)
        movers = np.full(len(observations), player)
        return np.column_stack((movers, first, second, observations[:, 2:]))

    # -- views ---------------------------------------------------------------------------------
    def observation(self, state: DuelState, player: int) -> tuple[int, ...]:
        return _OBSERVERS[player](state)

    @staticmethod
    def observer(player: int) -> Callable[[DuelState], tuple[int, ...]]:
        """`observation(., player)` as one fast callable (the env calls it every step)."""
        return _OBSERVERS[player]

    def state_of(self, observation: object, player: int) -> DuelState:
        try:
            own, other, *turn = observation  # type: ignore[misc]
            if len(turn) != 3:
                raise ValueError
        except (TypeError, ValueError):
            raise ValueError(
                "state must be (own score, opponent score, turn score, configuration, dice to "
                f"roll), got {observation!r}"
            ) from None
        chips = self.goal_chips
        own = check_int("own score", own, 0, chips - 1)
        other = check_int("opponent score", other, 0, chips - 1)
        tau, config_index, dice = self.turn.validate_state(tuple(turn))
        if own + tau >= chips:
            raise ValueError(f"own score {own} plus turn score {tau} reaches the goal")
        first, second = (own, other) if player == 0 else (other, own)
        return (player, first, second, tau, config_index, dice)

    def validate_state(self, state: object) -> DuelState:
        try:
            mover, first, second, *turn = state  # type: ignore[misc]
            mover = check_int("player to move", mover, 0, 1)
        except (TypeError, ValueError):
            raise ValueError(
                "state must be (player to move, score 0, score 1, turn score, configuration, "
                f"dice to roll), got {state!r}"
            ) from None
        own, other = (first, second) if mover == 0 else (second, first)
        return self.state_of((own, other, *turn), mover)

    def render_text(self, state: DuelState, player: int) -> str:
        own, other, tau, config_index, dice = self.observation(state, player)
        whose = "your" if state[0] == player else "their"
        config = CONFIGS[config_index]
        last = f"last roll [{config[0]},{config[1]},{config[2]}]" if config_index else "fresh dice"
        return (
            f"you {own * CHIP}, opponent {other * CHIP} (goal {self.goal}); {whose} turn "
            f"score {tau * CHIP}, {last}, {dice} dice in hand"
        )

    def picture(self, state: DuelState, player: int, info: dict):
        own, other, tau, config_index, dice = self.observation(state, player)
        _f, _o, triple_face = CONFIGS[config_index] if dice else (0, 0, 0)
        shown = [
            (face, face not in (1, 5) and face != triple_face) for face in info.get("dice", [])
        ]
        shown += [(face, True) for face in info.get("opponent_dice", [])][-4:]
        lines = [
            f"YOU {own * CHIP}  OPPONENT {other * CHIP}",
            f"TURN {tau * CHIP}  GOAL {self.goal}",
        ]
        if max(own, other) >= self.goal_chips:
            lines.append("YOU WIN" if own >= self.goal_chips else "YOU LOSE")
        return shown[:5], lines

    # -- opponents -----------------------------------------------------------------------------
    def named_policy(self, name: str) -> Rule | None:
        """stop-at-K (K chips, as `dice_envs/TenThousand-v0`'s) on the turn's part of the
        observation; "crocce-mordecki" comes from `baselines` (entry point
        `dice_envs.policies`), as the two-player optimum does; "random" mixes the legal
        actions evenly (self-play's first opponent)."""
        if name == "random":
            return Rule.from_batch(self._random_batch, name, reads=(2, 3, 4))
        turn_rule = self.turn.named_policy(name)
        if turn_rule is None:
            return None

        def batch(observations: np.ndarray) -> np.ndarray:
            rows = np.asarray(observations).reshape(-1, 5)
            return turn_rule.batch(rows[:, 2:])

        return Rule.from_batch(batch, name, reads=(2, 3, 4))

    def _random_batch(self, observations: np.ndarray) -> np.ndarray:
        rows = np.asarray(observations, np.int64).reshape(-1, 5)
        legal = self.batch_legal(self.batch_state_of(rows, 0)).astype(np.float64)
        legal[legal.sum(axis=1) == 0, ROLL] = 1.0  # no decision there: a roll, as elsewhere
        return legal / legal.sum(axis=1, keepdims=True)


# The state's columns each player observes: own banked chips first, then the other's, the turn.
_COLUMNS = ((1, 2, 3, 4, 5), (2, 1, 3, 4, 5))
_OBSERVERS = tuple(itemgetter(*columns) for columns in _COLUMNS)


def _banked(mover: np.ndarray, first: np.ndarray, second: np.ndarray, tau: np.ndarray):
    """The states after the movers of a batch stop: the turn score banked, the other
    player's turn with fresh dice."""
    fresh = np.broadcast_to(FRESH, (len(mover), 3))
    return np.column_stack(
        (1 - mover, first + tau * (mover == 0), second + tau * (mover == 1), fresh)
    )


class _BatchRules:
    """The solitaire turn's rules as arrays, for `TenThousandDuel`'s batch rules: the same
    tables `TenThousand` plays from (its moves and roll tables), laid out for numpy."""

    def __init__(self, turn: TenThousand) -> None:
        shape = (len(CONFIGS), 6, len(ACTION_NAMES))
        self.chips_back = np.zeros(shape, np.int64)
        self.dice_back = np.zeros(shape, np.int64)
        self.legal = np.zeros(shape, bool)
        for config_index, config in enumerate(CONFIGS):
            for n in range(1, 6):
                self.legal[config_index, n, [STOP, ROLL]] = True
                for action, (chips, dice) in turn.moves(config, n).items():
                    self.chips_back[config_index, n, action] = chips
                    self.dice_back[config_index, n, action] = dice
                    self.legal[config_index, n, action] = True
        # Per number of dice: each configuration's probability, chips scored, dice left (-1
        # for no score) and the configuration kept (0 when every die scored: hot dice).
        self.rolls = {}
        for n in range(1, 6):
            prob, gain, left, kept = [], [], [], []
            for p, config in turn.roll_table(n):
                after = turn.after_roll(0, n, config)
                prob.append(p)
                gain.append(0 if after is None else after[0])
                left.append(-1 if after is None else n - scoring_dice(config))
                kept.append(0 if after is None else after[1])
            self.rolls[n] = tuple(np.array(column) for column in (prob, gain, left, kept))
        # For sampling: the outcomes of every number of dice in one table each ("gain",
        # "left", "kept"), and `ordered[n, r]`, the outcome of the r-th ordered roll of n dice.
        offsets = np.cumsum([0] + [len(self.rolls[n][0]) for n in range(1, 6)])
        self.flat = {
            name: np.concatenate([self.rolls[n][i] for n in range(1, 6)])
            for i, name in ((1, "gain"), (2, "left"), (3, "kept"))
        }
        self.ordered = np.zeros((6, 6**5), np.int64)
        for n in range(1, 6):
            where = {config: offsets[n - 1] + i for i, (_, config) in enumerate(turn.roll_table(n))}
            for r in range(6**n):
                self.ordered[n, r] = where[turn.throw(n, lambda r=r, n=n: (r + 0.5) / 6**n)[1]]
        # The same, laid out for `batch_sample_step`: flat, row 0 (no dice: a final state
        # stepped, whose outcome is thrown away) as one die, and per outcome whether it is a
        # bust and the dice in hand after it when the turn goes on (five on hot dice).
        self.ordered[0] = self.ordered[1]
        self.ordered_width = self.ordered.shape[1]
        self.ordered_flat = self.ordered.ravel()
        self.sixes = 6.0 ** np.maximum(np.arange(11), 1)
        self.bust = self.flat["left"] < 0
        self.next_dice = np.where(self.flat["left"] > 0, self.flat["left"], 5)
        self.chips_back_flat = self.chips_back.ravel()
        # `legal` by row configuration x 6 + dice, then a last row for a turn's start, where
        # only a roll is legal.
        self.opening_row = len(CONFIGS) * 6
        opening = np.zeros((1, len(ACTION_NAMES)), bool)
        opening[0, ROLL] = True
        self.legal_rows = np.concatenate((self.legal.reshape(-1, len(ACTION_NAMES)), opening))
        self.dice_back_flat = self.dice_back.ravel()
        # The same, in the order the compiled sampler takes them.
        self.compiled = (
            self.dice_back_flat,
            self.chips_back_flat,
            self.sixes,
            self.ordered_flat,
            self.ordered_width,
            self.flat["gain"].astype(np.int64),
            self.bust,
            self.next_dice.astype(np.int64),
            self.flat["kept"].astype(np.int64),
        )

    def given_back(self, config_index: np.ndarray, dice: np.ndarray, action):
        """(chips, dice) that `action` gives back at each position: 0 for a stop or a roll
        (an illegal action plays as a roll)."""
        return self.chips_back[config_index, dice, action], self.dice_back[
            config_index, dice, action
        ]


class _QuickRules:
    """The solitaire turn's rules as lists, for `TenThousandDuel.sample_step`: per (last
    configuration x 6 + dice in hand) x 15 + action, what `rolled_from` gives back (chips
    given back, dice thrown); per number of dice and ordered roll, what `throw` and
    `after_roll` give (faces, chips scored or -1 for no score, dice left or five on hot dice,
    configuration kept)."""

    def __init__(self, turn: TenThousand) -> None:
        self.rolled: list[tuple[int, int]] = []
        for config_index in range(len(CONFIGS)):
            for dice in range(6):
                for action in range(len(ACTION_NAMES)):
                    if dice == 0:  # no position: a final state is never stepped
                        self.rolled.append((0, 0))
                        continue
                    start, thrown = turn.rolled_from((0, config_index, dice), action)
                    self.rolled.append((-start, thrown))
        self.throws: list[list[tuple[tuple[int, ...], int, int, int]]] = [[]]
        for n in range(1, 6):
            rows = []
            for r in range(6**n):
                faces, config = turn.throw(n, lambda r=r, n=n: (r + 0.5) / 6**n)
                after = turn.after_roll(0, n, config)
                if after is None:
                    rows.append((faces, -1, 0, 0))
                else:
                    gain, kept, left = after
                    rows.append((faces, gain, left, kept))
            self.throws.append(rows)


# Turn positions are counted exactly up to this turn score; past it, each chip adds as many
# as the last one did (the count per chip is flat from 26 chips on).
COUNTED_CHIPS = 40


def _positions_below(allowed_moves: tuple[str, ...], chips: int) -> np.ndarray:
    """[r] for r = 0..chips: the solitaire turn's reachable decision positions with a turn
    score under r chips."""
    per_chip = _positions_per_chip(allowed_moves)
    if chips > COUNTED_CHIPS:
        per_chip = np.concatenate((per_chip, np.full(chips - COUNTED_CHIPS, per_chip[-1])))
    return np.concatenate(([0.0], np.cumsum(per_chip[:chips])))


@functools.cache
def _positions_per_chip(allowed_moves: tuple[str, ...]) -> np.ndarray:
    """The solitaire turn's reachable decision positions at each turn score up to
    COUNTED_CHIPS."""
    turn = TenThousand(allowed_moves=allowed_moves, max_turn_score=COUNTED_CHIPS)
    taus = [tau for tau, _, dice in reachable_states(turn) if dice and tau <= COUNTED_CHIPS]
    return np.bincount(taus, minlength=COUNTED_CHIPS + 1).astype(float)


# The single-agent game of dice_envs/TenThousandDuel-v0: the race against a fixed opponent.
TenThousandDuelVersus = fold_factory(TenThousandDuel, default_opponent="crocce-mordecki")

__all__ = ["STOP", "ROLL", "TenThousandDuel", "TenThousandDuelVersus"]

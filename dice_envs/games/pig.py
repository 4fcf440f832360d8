"""Pig, the two-player dice race: its rules, once, as a two-player model.

Sources: H. Tijms, "Stochastic games and dynamic programming", Asia Pacific Mathematics
Newsletter (2012): the rules and the optimality equations (a turn starts with a roll); and
E. Johnston, A. Mata, J. Tavarez and J. Lai, "Dynamic programming game (STA 372-6, project 5)",
a student project report (undated): the same equations, and dice with unequal faces. Also
J. Haigh and M. Roters, "Optimal strategy in a dice game", Journal of Applied Probability 37
(2000), M. Roters, "Optimal stopping in a dice game", Journal of Applied Probability 35 (1998),
and F. Crocce and E. Mordecki, "A finite exact algorithm to solve a dice game", Journal of
Applied Probability (2016), for the solitaire games.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from operator import itemgetter

import numpy as np

from dice_envs.games.base import (
    TableSize,
    Transition,
    check_die,
    check_int,
    check_size,
    cumulative,
    uniform_die,
)
from dice_envs.games.fold import fold_factory
from dice_envs.games.views import Solitaire

HOLD, ROLL = 0, 1
PigState = tuple[int, int, int, int]  # (player to move, score of player 0, of player 1, turn total)


class Pig:
    """Two-player Pig: roll for points, but a 1 loses the turn.

    ## Description
    Two players race to `goal` points. On a turn a player rolls a die repeatedly: face 1 loses
    the turn total and ends the turn; any other face adds to the turn total; holding banks the
    turn total and ends the turn. A player whose score plus turn total reaches the goal wins at
    once. `dice_envs/Pig-v0` seats the agent against a fixed opponent, whose whole turn is
    played inside `step`, die by die. Neller and Presser (2004) computed optimal play: with both
    players optimal the first player wins 0.5306 of games at goal 100.
    `baselines.solve("dice_envs/Pig-v0", ...)` gives the exact best response to the opponent.

    ## Action Space
    `Discrete(2)`: 0 hold, 1 roll. A turn starts with a roll: at turn total 0 hold is masked
    out (`info["action_mask"]`, `action_masks()`), and if taken anyway it is played as a roll,
    by the agent and by every opponent alike.

    ## Observation Space
    `MultiDiscrete([goal + 1, goal + 1, goal])`: (own score, opponent score, turn total). A
    final observation shows the winner's score as `goal`.

    ## Rewards
    1 when the agent wins, 0 otherwise: the expected return is the win probability.

    ## Starting State
    Scores 0. If the opponent starts (`agent_starts=False`, or the coin says so), its first
    turn is played in `reset`. In the rare case it reaches the goal in that turn (only possible
    when one turn can reach it), the first observation is (0, goal, 0) and any action ends the
    episode with reward 0.

    ## Episode End
    Termination when either player reaches the goal. No truncation; every opponent offered
    ends its turns, and the game ends with probability 1.

    ## Info
    `info["rolls"]`: the agent's die this step (empty on a hold); `info["opponent_rolls"]`:
    the opponent's dice in the turn it played this step (empty if it did not play).

    ## Arguments
    - `goal=100`: points to win; an integer >= 1. Smaller goals (20, 30, 50) make fast
      experiments.
    - `sides=None`, `die_probs=None`: the die: `sides` faces of a fair die (6 if neither is
      given), or `die_probs` a probability per face (face 1 first, the losing face) for a
      loaded die. Both may be given only if they agree on the number of faces.
    - `opponent="hold-at-20"`: `"hold-at-K"` (hold once the turn total reaches K, K >= 1),
      `"keep-pace"` (Neller and Presser's "keep pace and end race"), `"random"` (rolls or holds
      with probability 1/2), `"two-player-optimal"` (the two-player optimum, supplied by
      `baselines`; `"optimal"`, its name before 0.7, is deprecated), a callable
      `f(observation) -> 0 hold / 1 roll` on the opponent's own observation (its score, the
      agent's, its turn total), a numpy table of actions or of action probabilities over the
      observation grid, or any other policy form of `dice_envs.policies` (a batched callable,
      a mapping, a solution).
    - `agent_starts=None`: None flips a fair coin per episode; True or False fixes who starts.
    - `render_mode=None`: `"ansi"` (one line of text), `"rgb_array"` (the dice and scores) or
      `"human"` (that picture in a pygame window).

    ## Version History
    - v0: initial version.
    """

    num_actions = 2
    action_names = ("hold", "roll")
    event_keys = ("rolls",)
    observation_names = ("own score", "opponent score", "turn total")
    policy_names = ("hold-at-K", "keep-pace", "random")
    policy_descriptions = {
        "hold-at-K": "rolls until the turn total reaches K, then holds",
        "keep-pace": 'Neller and Presser\'s "keep pace and end race": rolls to the goal once '
        "either score is 71 or more, else holds at 21 + (opponent - own) / 8 (scaled to the goal)",
        "random": "rolls or holds with probability 1/2 each",
    }
    picture_size = (5, 3)

    def __init__(
        self,
        goal: int = 100,
        sides: int | None = None,
        die_probs: Sequence[float] | None = None,
    ) -> None:
        self.goal = check_int("goal", goal, 1)
        has_length = hasattr(die_probs, "__len__") and not isinstance(die_probs, str | bytes)
        if has_length:  # check_die says what is wrong with the probabilities themselves
            faces = len(die_probs)  # type: ignore[arg-type]
        else:
            faces = 6 if sides is None else check_int("sides", sides, 2)
        check_size(
            {"goal": self.goal, "sides": faces},
            2 * (self.goal + 1) ** 2 * self.goal * (self._roll_outcomes(faces) + 2),
            "the tables' outcome rows (2 x (goal + 1)^2 x goal positions x the outcomes of a roll)",
        )
        self.face_probs = check_die(sides, die_probs)
        if self.face_probs[0] >= 1.0:
            raise ValueError("die_probs gives face 1 probability 1: no turn could ever score")
        self.sides = len(self.face_probs)
        self.observation_nvec = (self.goal + 1, self.goal + 1, self.goal)
        self.state_bounds = (2, self.goal + 1, self.goal + 1, self.goal)
        self._face_bounds = cumulative(self.face_probs)
        self._roll_law()

    @staticmethod
    def _roll_outcomes(sides: int) -> int:
        """How many outcomes a roll of the game's dice lists (at most): one per face."""
        return sides

    def table_size(self, view: str = "two-player", opponent: object = None) -> TableSize:
        """About how large the tables of `view` are ("two-player", "fold": the agent's seat
        against `opponent`, "solitaire"): the positions where the mover's score and turn
        total stay under the goal (half the grid), a roll's outcomes and a hold each.

        In the fold, an opponent "hold-at-K" reaches few scores below a few K (its turns add
        K or more): measured against hold-at-20 at goal 80 to 200, the agent meets 1 - 49 /
        goal of the positions (0.39 to 0.75); taken as at least half. A hold sums the
        opponent's turn: about 10 rows for an opponent that holds at a total (15 to 18 rows
        a state against hold-at-20 with one die, 29 to 39 with two), about `goal` for
        "random", which may hold at any total (105 rows a state at goal 100)."""
        goal, roll = self.goal, self._roll_outcomes(self.sides)
        positions = (goal + 1) ** 2 * goal / 2  # own score, opponent's score, turn total
        if view == "fold":
            held = re.fullmatch(r"hold-at-(\d+)", opponent) if isinstance(opponent, str) else None
            reach = max(0.5, 1 - 2.5 * int(held.group(1)) / goal) if held else 1.0
            turn_ends = goal if isinstance(opponent, str) and opponent == "random" else 10
            states = positions * reach
            return TableSize(states, states * (roll + turn_ends), "goal")
        if view == "solitaire":
            states = goal * goal / 2
            return TableSize(states, states * (roll + 1), "goal")
        return TableSize(2 * positions, 2 * positions * (roll + 1), "goal")

    def _roll_law(self) -> None:
        """What one roll does: `bust_prob` (the turn total is lost and the turn ends),
        `wipe_prob` (the mover's whole score is lost too), and `gains`, the (points, prob)
        pairs of a roll that adds to the turn total. `min_gain` is the smallest possible gain.
        A variant with other dice overrides this, and its samplers."""
        self.bust_prob, self.wipe_prob = self.face_probs[0], 0.0
        self.gains = tuple(
            (face, prob) for face, prob in enumerate(self.face_probs[1:], start=2) if prob > 0
        )
        self.min_gain = 2

    def __repr__(self) -> str:
        fair = self.face_probs == uniform_die(self.sides)
        die = f"sides={self.sides}" if fair else f"die_probs={self.face_probs}"
        return f"Pig(goal={self.goal}, {die})"

    # -- rules ---------------------------------------------------------------------------------
    def initial_states(self) -> list[tuple[float, PigState]]:
        return [(1.0, (0, 0, 0, 0))]

    # The player to move: the state's first field (a C-level getter: the env asks every step).
    to_move = itemgetter(0)

    def swap_seats(self, state: PigState) -> PigState:
        mover, first, second, turn = state
        return (1 - mover, second, first, turn)

    def legal_actions(self, state: PigState) -> tuple[int, ...]:
        return (ROLL,) if state[3] == 0 else (HOLD, ROLL)

    def _banked(self, state: PigState, points: int) -> tuple[int, int]:
        mover, first, second, _ = state
        return (first + points, second) if mover == 0 else (first, second + points)

    def transitions(self, state: PigState, action: int) -> list[Transition]:
        mover, first, second, turn = state
        if action == HOLD and turn > 0:
            return [Transition(1.0, (1 - mover, *self._banked(state, turn), 0), 0.0, False)]
        own = first if mover == 0 else second
        outcomes = []
        if self.bust_prob > 0:  # the turn ends with nothing
            outcomes.append(Transition(self.bust_prob, (1 - mover, first, second, 0), 0.0, False))
        if self.wipe_prob > 0:  # the turn ends and the mover's score is lost
            wiped = (1, 0, second, 0) if mover == 0 else (0, first, 0, 0)
            outcomes.append(Transition(self.wipe_prob, wiped, 0.0, False))
        win = 0.0
        for gain, prob in self.gains:
            if own + turn + gain >= self.goal:
                win += prob
            else:
                outcomes.append(Transition(prob, (mover, first, second, turn + gain), 0.0, False))
        if win > 0:
            final = (mover, *self._banked(state, self.goal - own), 0)
            outcomes.append(Transition(win, final, float(mover == 0), True))
        return outcomes

    def sample_step(
        self, state: PigState, action: int, uniform: Callable[[], float]
    ) -> tuple[PigState, float, bool, dict]:
        """One step with the die thrown: the same law as `transitions` (a chi-square test)."""
        mover, first, second, turn = state
        if action == HOLD and turn > 0:
            if mover == 0:
                return (1, first + turn, second, 0), 0.0, False, {"rolls": []}
            return (0, first, second + turn, 0), 0.0, False, {"rolls": []}
        face = bisect_right(self._face_bounds, uniform()) + 1
        if face == 1:
            return (1 - mover, first, second, 0), 0.0, False, {"rolls": [face]}
        turn += face
        if (first if mover == 0 else second) + turn >= self.goal:
            final = (0, self.goal, second, 0) if mover == 0 else (1, first, self.goal, 0)
            return final, float(mover == 0), True, {"rolls": [face]}
        return (mover, first, second, turn), 0.0, False, {"rolls": [face]}

    def sample_turn(
        self,
        state: PigState,
        choices: dict,
        choose: Callable[[PigState], object],
        uniform: Callable[[], float],
    ) -> tuple[PigState, float, bool, list[int]]:
        """The mover's whole turn from `state`, die by die: its action at each position is
        `choices[position]`, or `choose(position)` where missing (an action, or cumulative
        bounds to draw one from). Returns the end state, player 0's reward, whether the game
        ended, and the faces thrown. The same law as repeated `sample_step` calls (the env's
        chi-square test checks the fold that uses it); a loop over ints, for speed."""
        mover, first, second, turn = state
        own = first if mover == 0 else second
        bounds, goal, faces = self._face_bounds, self.goal, []
        while True:
            position = (mover, first, second, turn)
            choice = choices.get(position)
            if choice is None:
                choice = choose(position)
            if choice.__class__ is not int:
                choice = bisect_right(choice, uniform())
            if choice == HOLD and turn > 0:
                if mover == 0:
                    return (1, first + turn, second, 0), 0.0, False, faces
                return (0, first, second + turn, 0), 0.0, False, faces
            face = bisect_right(bounds, uniform()) + 1
            faces.append(face)
            if face == 1:
                return (1 - mover, first, second, 0), 0.0, False, faces
            turn += face
            if own + turn >= goal:
                final = (0, goal, second, 0) if mover == 0 else (1, first, goal, 0)
                return final, float(mover == 0), True, faces

    # -- the same rules for a batch of states (the fast table builder; a test holds them equal)
    def batch_transitions(self, states: np.ndarray, action: int):
        """(source row, probability, next state, reward, terminal) arrays for `action` in each
        row of `states` (an (n, 4) int array)."""
        mover, first, second, turn = states.T
        holding = (action == HOLD) & (turn > 0)
        rows = np.arange(len(states))
        parts = []
        held = rows[holding]
        if len(held):
            points = turn[held]
            parts.append(
                (
                    held,
                    np.ones(len(held)),
                    np.column_stack(
                        (
                            1 - mover[held],
                            first[held] + points * (mover[held] == 0),
                            second[held] + points * (mover[held] == 1),
                            np.zeros(len(held), np.int64),
                        )
                    ),
                    np.zeros(len(held)),
                    np.zeros(len(held), bool),
                )
            )
        rolled = rows[~holding]
        if len(rolled):
            m, a, b, k = mover[rolled], first[rolled], second[rolled], turn[rolled]
            own = np.where(m == 0, a, b)
            count = len(rolled)
            zero = np.zeros(count, np.int64)
            for prob, after in (
                (self.bust_prob, (1 - m, a, b, zero)),
                (self.wipe_prob, (1 - m, a * (m == 1), b * (m == 0), zero)),
            ):
                if prob > 0:
                    parts.append(
                        (
                            rolled,
                            np.full(count, prob),
                            np.column_stack(after),
                            np.zeros(count),
                            np.zeros(count, bool),
                        )
                    )
            win = np.zeros(count)
            for face, prob in self.gains:
                wins = own + k + face >= self.goal
                win += prob * wins
                go = ~wins
                parts.append(
                    (
                        rolled[go],
                        np.full(int(go.sum()), prob),
                        np.column_stack((m[go], a[go], b[go], k[go] + face)),
                        np.zeros(int(go.sum())),
                        np.zeros(int(go.sum()), bool),
                    )
                )
            won = win > 0
            gain = self.goal - own[won]
            mw = m[won]
            parts.append(
                (
                    rolled[won],
                    win[won],
                    np.column_stack(
                        (mw, a[won] + gain * (mw == 0), b[won] + gain * (mw == 1), 0 * mw)
                    ),
                    (mw == 0).astype(float),
                    np.ones(len(mw), bool),
                )
            )
        return tuple(np.concatenate(column) for column in zip(*parts, strict=True))

    def batch_to_move(self, states: np.ndarray) -> np.ndarray:
        return states[:, 0]

    def batch_legal(self, states: np.ndarray) -> np.ndarray:
        return np.column_stack((states[:, 3] > 0, np.ones(len(states), bool)))

    def batch_observation(self, states: np.ndarray, player: int) -> np.ndarray:
        own, other = (states[:, 1], states[:, 2]) if player == 0 else (states[:, 2], states[:, 1])
        return np.column_stack((own, other, states[:, 3]))

    def batch_state_of(self, observations: np.ndarray, player: int) -> np.ndarray:
        """`state_of` for an (n, 3) batch of valid observations (not checked)."""
        own, other, turn = observations.T
        first, second = (own, other) if player == 0 else (other, own)
        return np.column_stack((np.full(len(own), player), first, second, turn))

    # -- views ---------------------------------------------------------------------------------
    def observation(self, state: PigState, player: int) -> tuple[int, int, int]:
        return self.observer(player)(state)

    @staticmethod
    def observer(player: int) -> Callable[[PigState], tuple[int, int, int]]:
        """`observation(., player)` as one fast callable (the env calls it every step)."""
        return itemgetter(1, 2, 3) if player == 0 else itemgetter(2, 1, 3)

    def state_of(self, observation: object, player: int) -> PigState:
        try:
            own, other, turn = observation  # type: ignore[misc]
        except (TypeError, ValueError):
            raise ValueError(
                f"state must be (own, opponent, turn_total), got {observation!r}"
            ) from None
        own = check_int("own score", own, 0, self.goal - 1)
        other = check_int("opponent score", other, 0, self.goal - 1)
        turn = check_int("turn total", turn, 0, self.goal - 1)
        if own + turn >= self.goal:
            raise ValueError(f"own score {own} plus turn total {turn} reaches the goal")
        if 0 < turn < self.min_gain:
            raise ValueError(
                f"a turn total of {turn} can not happen: a roll scores {self.min_gain} or more"
            )
        return (0, own, other, turn) if player == 0 else (1, other, own, turn)

    def validate_state(self, state: object) -> PigState:
        try:
            mover, first, second, turn = state  # type: ignore[misc]
            mover = check_int("player to move", mover, 0, 1)
        except (TypeError, ValueError):
            raise ValueError(
                f"state must be (player to move, score 0, score 1, turn total), got {state!r}"
            ) from None
        own, other = (first, second) if mover == 0 else (second, first)
        return self.state_of((own, other, turn), mover)

    def render_text(self, state: PigState, player: int) -> str:
        own, other, turn = self.observation(state, player)
        whose = "your" if state[0] == player else "their"
        return f"you {own}, opponent {other}, {whose} turn total {turn} (goal {self.goal})"

    def picture(self, state: PigState, player: int, info: dict):
        own, other, turn = self.observation(state, player)
        dice = [(face, False) for face in info.get("rolls", [])]
        dice += [(face, True) for face in info.get("opponent_rolls", [])][-4:]
        lines = [f"YOU {own}  OPPONENT {other}", f"TURN TOTAL {turn}  GOAL {self.goal}"]
        if own >= self.goal or other >= self.goal:
            lines.append("YOU WIN" if own >= self.goal else "YOU LOSE")
        return dice[:5], lines

    # -- opponents -----------------------------------------------------------------------------
    def named_policy(self, name: str) -> np.ndarray | None:
        """Action probabilities [own, other, turn, action] of the game's named policies."""
        match = re.fullmatch(r"hold-at-(-?\d+)", name)
        if match:
            threshold = int(match.group(1))
            if threshold < 1:
                raise ValueError(f"hold-at-K needs K >= 1, got K={threshold}")
            return self._roll_table(np.arange(self.goal)[None, None, :] < threshold)
        if name == "keep-pace":
            return self._roll_table(keep_pace_rolls(self.goal))
        if name == "random":
            return self._roll_table(np.full((1, 1, 1), 0.5))
        return None

    def _roll_table(self, roll: np.ndarray) -> np.ndarray:
        table = np.empty(self.observation_nvec + (2,))
        table[..., ROLL] = 1.0
        table[: self.goal, : self.goal, :, ROLL] = np.broadcast_to(
            roll, (self.goal, self.goal, self.goal)
        )
        table[..., HOLD] = 1.0 - table[..., ROLL]
        return table


def keep_pace_rolls(goal: int) -> np.ndarray:
    """[own, other, turn] True where Neller and Presser's "keep pace and end race" rolls: if
    either score is 71 or more, roll until the goal; else hold at a turn total of
    21 + round((other - own) / 8). For other goals 71 and 21 scale with goal / 100 (halves up).
    """
    own, other, turn = np.ogrid[:goal, :goal, :goal]
    end_race = math.floor(0.71 * goal + 0.5)
    race = (own >= end_race) | (other >= end_race)
    threshold = np.floor(0.21 * goal + (other - own) / 8 + 0.5)
    return race | (turn < threshold)


# The single-agent game of dice_envs/Pig-v0: Pig against a fixed opponent.
PigVersus = fold_factory(Pig, default_opponent="hold-at-20")


class PigSolitaire(Solitaire):
    """Pig alone: reach the goal in the fewest turns, or make one turn score as much as it can.

    ## Description
    One player and Pig's turn rules, read from the two-player model `Pig` (seat 0 plays, the
    other seat never moves), so the rules are written once. With `objective="turns"` the
    player races to `goal` in as few turns as possible (Tijms, 2012, after Haigh and Roters,
    2000: 12.545 turns to 100 at best, 12.637 holding at 20, or at what is still needed).
    With `objective="turn_score"` the game is a single turn whose banked total is the payoff
    (Crocce and Mordecki, 2016, section 5.2, after Roters, 1998: V(0) = 8.14, hold at 20).

    ## Action Space
    `Discrete(2)`: 0 hold, 1 roll. A turn starts with a roll: at turn total 0 hold is masked
    out and, taken anyway, played as a roll (as in `Pig`).

    ## Observation Space
    `MultiDiscrete([goal + 1, goal])`: (score, turn total). A final observation of a game won
    shows the score as `goal`.

    ## Rewards
    `turns`: -1 for each turn when it ends (by a hold, a 1, or reaching the goal), so the
    return is minus the number of turns. `turn_score`: the banked turn total when the turn
    ends (0 after a 1; a turn that reaches the goal banks what the goal still needed).

    ## Starting State
    Score 0, turn total 0.

    ## Episode End
    Termination when the goal is reached (`turns`) or when the first turn ends
    (`turn_score`). No truncation; every turn ends with probability 1.

    ## Arguments
    - `goal=100`: points to reach; an integer >= 1. For `turn_score` it caps the turn total
      (optimal play holds far below it).
    - `sides=None`, `die_probs=None`: the die, as for `Pig`.
    - `objective="turns"`: `"turns"` or `"turn_score"`.
    - `render_mode=None`: `"ansi"` (one line of text), `"rgb_array"` (the dice and score) or
      `"human"` (that picture in a pygame window).

    ## Version History
    - v0: initial version.
    """

    objectives = ("turns", "turn_score")

    def __init__(
        self,
        goal: int = 100,
        sides: int | None = None,
        die_probs: Sequence[float] | None = None,
        objective: str = "turns",
    ) -> None:
        super().__init__(Pig(goal, sides, die_probs), objective)

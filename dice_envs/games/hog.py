"""Hog (fast Pig): one roll a turn, of as many dice as the player chooses.

Source: H. Tijms, "Stochastic games and dynamic programming", Asia Pacific Mathematics Newsletter
(2012): the rules, D = 10 dice at most, and the solitaire numbers 13.039 optimal and 13.623 for
"the five-dice rule", which is five dice on every throw (the named policy "dice-5"); the rule as
the text states it, fewer dice for the last points, is the policy "five-dice".
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Callable
from itertools import product
from operator import itemgetter

import numpy as np

from dice_envs.games.base import TableSize, Transition, check_int, check_size, uniform_die
from dice_envs.games.fold import fold_factory
from dice_envs.games.views import Solitaire

HogState = tuple[int, int, int]  # (player to move, score of player 0, of player 1)


def check_hog_size(goal: int, max_dice: int, sides: int, outcomes: int) -> None:
    """Refuse arguments whose tables (2 x (goal + 1)^2 positions x max_dice actions x
    `outcomes` a move) or point laws (`turn_scores`: about (max_dice x sides)^2 / 2 steps)
    would pass SIZE_LIMIT."""
    check_size(
        {"goal": goal, "max_dice": max_dice, "sides": sides},
        max(2 * (goal + 1) ** 2 * max_dice * outcomes, (max_dice * sides) ** 2 // 2),
        "the tables' outcome rows (2 x (goal + 1)^2 positions x max_dice actions x the "
        "outcomes of a move), or the steps of the point laws ((max_dice x sides)^2 / 2)",
    )


# Rows of the fold per row of a throw: the opponent's throw that follows, its points capped by
# the goal (measured: 3,120 rows a state against five-dice at goal 100, 3,970 against random at
# goal 60, for 295 distinct throws: about 11).
FOLD_SPREAD = 11


def turn_scores(dice: int, sides: int) -> list[tuple[int, float]]:
    """(points, probability) of one throw of `dice` fair dice: 0 if any shows 1, else the sum."""
    face = uniform_die(sides)
    law = {0: 1.0}  # the sum of the dice thrown so far, none showing 1
    for _ in range(dice):
        following: dict[int, float] = {}
        for total, prob in law.items():
            for value in range(2, sides + 1):
                key = total + value
                following[key] = following.get(key, 0.0) + prob * face[value - 1]
        law = following
    scored = sorted(law.items())
    return [(0, 1.0 - sum(prob for _, prob in scored))] + scored


class Hog:
    """Hog: each turn, throw as many dice as you like, once; any 1 scores the turn nothing.

    ## Description
    Two players race to `goal` points. A turn is one throw of 1 to `max_dice` dice, chosen by
    the player: it scores 0 if any die shows 1, else the sum of the faces, and the move passes
    (Tijms, 2012). The first to reach the goal wins. `dice_envs/Hog-v0` seats
    the agent against a fixed opponent, whose turn is played inside `step`.
    `baselines.solve("dice_envs/Hog-v0", ...)` gives the exact best response.

    ## Action Space
    `Discrete(max_dice)`: action a throws a + 1 dice. Every action is legal.

    ## Observation Space
    `MultiDiscrete([goal + 1, goal + 1])`: (own score, opponent score). A final observation
    shows the winner's score as `goal`.

    ## Rewards
    1 when the agent wins, 0 otherwise: the expected return is the win probability.

    ## Starting State
    Scores 0. If the opponent starts (`agent_starts=False`, or the coin says so), its first
    turn is played in `reset` (should it reach the goal at once, the first observation is
    (0, goal) and any action ends the episode with reward 0).

    ## Episode End
    Termination when either player reaches the goal. No truncation; every throw can score, so
    the game ends with probability 1.

    ## Info
    `info["rolls"]`: the agent's dice this step; `info["opponent_rolls"]`: the opponent's.

    ## Arguments
    - `goal=100`: points to win; an integer >= 1.
    - `max_dice=10`: the most dice a turn may throw (Tijms's D); an integer >= 1.
    - `sides=6`: faces of each (fair) die; an integer >= 2.
    - `opponent="five-dice"`: `"five-dice"` (Tijms's rule: five dice, or trunc(l / 2) when
      l <= 9 points are still needed, at least one), `"dice-K"` (always K dice, K <=
      `max_dice`), `"random"` (uniform over the dice counts), `"two-player-optimal"` (the
      two-player optimum, from `baselines`), a callable `f(observation) -> action` on the
      opponent's own observation, a table over the observation grid, or any other policy form
      of `dice_envs.policies`.
    - `agent_starts=None`: None flips a fair coin per episode; True or False fixes who starts.
    - `render_mode=None`: `"ansi"`, `"rgb_array"` or `"human"` (that picture in a pygame window).

    ## Version History
    - v0: initial version.
    """

    event_keys = ("rolls",)
    observation_names = ("own score", "opponent score")
    policy_names = ("five-dice", "dice-K", "random")
    policy_descriptions = {
        "five-dice": "Tijms's rule: five dice, or half the points still needed (rounded down, "
        "at least one) when 9 or fewer are",
        "dice-K": "throws K dice every turn",
        "random": "throws a number of dice drawn uniformly",
    }
    picture_size = (10, 3)

    def __init__(self, goal: int = 100, max_dice: int = 10, sides: int = 6) -> None:
        self.goal = check_int("goal", goal, 1)
        self.max_dice = check_int("max_dice", max_dice, 1)
        self.sides = check_int("sides", sides, 2)
        check_hog_size(self.goal, self.max_dice, self.sides, (self.max_dice * self.sides + 1))
        self.face_probs = uniform_die(self.sides)
        self.num_actions = self.max_dice
        self.action_names = tuple(f"{d} {'die' if d == 1 else 'dice'}" for d in self._counts())
        self.observation_nvec = (self.goal + 1, self.goal + 1)
        self.state_bounds = (2, self.goal + 1, self.goal + 1)
        self.scores = [turn_scores(dice, self.sides) for dice in self._counts()]
        # The sampler's throws: every sequence of `count` faces, for count up to `_chunk`,
        # with whether it shows a 1, its sum, and what it scores. int(u * sides**count)
        # picks one uniformly up to float round-off (u takes 2**53 values; sides**count <=
        # 10,000, so no sequence is off by more than 1e-12 of its probability).
        self._chunk = max(1, int(math.log(10_000) / math.log(self.sides)))
        self._throws = {
            count: (
                self.sides**count,
                [
                    (faces, 1 in faces, sum(faces), 0 if 1 in faces else sum(faces))
                    for faces in product(range(1, self.sides + 1), repeat=count)
                ],
            )
            for count in range(1, min(self._chunk, self.max_dice) + 1)
        }
        self._all_actions = tuple(range(self.max_dice))
        self._throw_tables = [None, *(self._throws[c] for c in sorted(self._throws))]

    def _counts(self) -> range:
        return range(1, self.max_dice + 1)

    def table_size(self, view: str = "two-player") -> TableSize:
        """About how large the tables of `view` are ("two-player", "fold", "solitaire"): a
        state per pair of scores (per score alone), each throw's distinct points a row; in the
        fold a throw is followed by the opponent's, whose spread `FOLD_SPREAD` is measured."""
        throws = sum(len(law) for law in self.scores)  # rows of one state, all dice counts
        if view == "solitaire":
            return TableSize(self.goal + 1, (self.goal + 1) * throws, "goal")
        positions = (self.goal + 1) ** 2
        if view == "fold":
            return TableSize(positions, positions * throws * FOLD_SPREAD, "goal")
        return TableSize(2 * positions, 2 * positions * throws, "goal")

    def __repr__(self) -> str:
        return f"Hog(goal={self.goal}, max_dice={self.max_dice}, sides={self.sides})"

    # -- rules ---------------------------------------------------------------------------------
    def initial_states(self) -> list[tuple[float, HogState]]:
        return [(1.0, (0, 0, 0))]

    to_move = itemgetter(0)

    def swap_seats(self, state: HogState) -> HogState:
        mover, first, second = state
        return (1 - mover, second, first)

    def legal_actions(self, state: HogState) -> tuple[int, ...]:
        return self._all_actions

    def transitions(self, state: HogState, action: int) -> list[Transition]:
        mover, first, second = state
        own = first if mover == 0 else second
        outcomes, win = [], 0.0
        for points, prob in self.scores[action]:
            if own + points >= self.goal:
                win += prob
            else:
                after = (1, first + points, second) if mover == 0 else (0, first, second + points)
                outcomes.append(Transition(prob, after, 0.0, False))
        if win > 0:
            final = (0, self.goal, second) if mover == 0 else (1, first, self.goal)
            outcomes.append(Transition(win, final, float(mover == 0), True))
        return outcomes

    def sample_step(
        self, state: HogState, action: int, uniform: Callable[[], float]
    ) -> tuple[HogState, float, bool, dict]:
        """One throw, die by die: the same law as `transitions` (a chi-square test)."""
        end, reward, terminal, faces = self._throw(state, action, uniform)
        return end, reward, terminal, {"rolls": faces}

    def throw(self, count: int, uniform: Callable[[], float]) -> tuple[list[int], int]:
        """Throw `count` dice with as few `uniform()` draws as the sampler's tables allow: the
        faces, and the points they score (0 if any shows 1)."""
        if count <= self._chunk:  # one uniform draw
            size, table = self._throw_tables[count]
            faces, _bust, _sum, points = table[int(uniform() * size)]
            return list(faces), points
        if count <= 2 * self._chunk:  # two draws
            size, table = self._throw_tables[self._chunk]
            first_faces, first_bust, first_sum, _ = table[int(uniform() * size)]
            size, table = self._throw_tables[count - self._chunk]
            faces, bust, total, _ = table[int(uniform() * size)]
            return [*first_faces, *faces], 0 if first_bust or bust else first_sum + total
        faces, bust, points = [], False, 0
        while count:  # up to `_chunk` dice from each uniform draw
            size, table = self._throws[min(count, self._chunk)]
            thrown, one, total, _ = table[int(uniform() * size)]
            faces.extend(thrown)
            bust, points, count = bust or one, points + total, count - len(thrown)
        return faces, 0 if bust else points

    def _throw(self, state: HogState, action: int, uniform: Callable[[], float]):
        mover, first, second = state
        faces, points = self.throw(action + 1, uniform)
        if mover == 0:
            if first + points >= self.goal:
                return (0, self.goal, second), 1.0, True, faces
            return (1, first + points, second), 0.0, False, faces
        if second + points >= self.goal:
            return (1, first, self.goal), 0.0, True, faces
        return (0, first, second + points), 0.0, False, faces

    def sample_turn(
        self,
        state: HogState,
        choices: dict,
        choose: Callable[[HogState], object],
        uniform: Callable[[], float],
    ) -> tuple[HogState, float, bool, list[int]]:
        """The mover's turn (one throw): its action is `choices[state]`, or `choose(state)`
        where missing (an action, or cumulative bounds to draw one from)."""
        choice = choices.get(state)
        if choice is None:
            choice = choose(state)
        if choice.__class__ is not int:
            choice = bisect_right(choice, uniform())
        return self._throw(state, choice, uniform)

    # -- the same rules for a batch of states (the fast table builder; a test holds them equal)
    def batch_transitions(self, states: np.ndarray, action: int):
        """(source row, probability, next state, reward, terminal) for `action` in each row."""
        mover, first, second = states.T
        own = np.where(mover == 0, first, second)
        rows = np.arange(len(states))
        parts, win = [], np.zeros(len(states))
        for points, prob in self.scores[action]:
            wins = own + points >= self.goal
            win += prob * wins
            go = ~wins
            m = mover[go]
            after = np.column_stack(
                (1 - m, first[go] + points * (m == 0), second[go] + points * (m == 1))
            )
            parts.append(
                (rows[go], np.full(len(m), prob), after, np.zeros(len(m)), np.zeros(len(m), bool))
            )
        won = win > 0
        m, gain = mover[won], self.goal - own[won]
        final = np.column_stack((m, first[won] + gain * (m == 0), second[won] + gain * (m == 1)))
        parts.append((rows[won], win[won], final, (m == 0).astype(float), np.ones(len(m), bool)))
        return tuple(np.concatenate(column) for column in zip(*parts, strict=True))

    def batch_to_move(self, states: np.ndarray) -> np.ndarray:
        return states[:, 0]

    def batch_legal(self, states: np.ndarray) -> np.ndarray:
        return np.ones((len(states), self.max_dice), bool)

    def batch_observation(self, states: np.ndarray, player: int) -> np.ndarray:
        return states[:, [1, 2]] if player == 0 else states[:, [2, 1]]

    def batch_state_of(self, observations: np.ndarray, player: int) -> np.ndarray:
        """`state_of` for an (n, 2) batch of valid observations (not checked)."""
        own, other = observations.T
        first, second = (own, other) if player == 0 else (other, own)
        return np.column_stack((np.full(len(own), player), first, second))

    # -- views ---------------------------------------------------------------------------------
    def observation(self, state: HogState, player: int) -> tuple[int, int]:
        return self.observer(player)(state)

    @staticmethod
    def observer(player: int) -> Callable[[HogState], tuple[int, int]]:
        return itemgetter(1, 2) if player == 0 else itemgetter(2, 1)

    def state_of(self, observation: object, player: int) -> HogState:
        try:
            own, other = observation  # type: ignore[misc]
        except (TypeError, ValueError):
            raise ValueError(f"state must be (own, opponent), got {observation!r}") from None
        own = check_int("own score", own, 0, self.goal - 1)
        other = check_int("opponent score", other, 0, self.goal - 1)
        return (0, own, other) if player == 0 else (1, other, own)

    def validate_state(self, state: object) -> HogState:
        try:
            mover, first, second = state  # type: ignore[misc]
            mover = check_int("player to move", mover, 0, 1)
        except (TypeError, ValueError):
            raise ValueError(
                f"state must be (player to move, score 0, score 1), got {state!r}"
            ) from None
        own, other = (first, second) if mover == 0 else (second, first)
        return self.state_of((own, other), mover)

    def render_text(self, state: HogState, player: int) -> str:
        own, other = self.observation(state, player)
        whose = "your" if state[0] == player else "their"
        return f"you {own}, opponent {other}, {whose} throw (goal {self.goal})"

    def picture(self, state: HogState, player: int, info: dict):
        own, other = self.observation(state, player)
        dice = [(face, False) for face in info.get("rolls", [])]
        dice += [(face, True) for face in info.get("opponent_rolls", [])]
        lines = [f"YOU {own}  OPPONENT {other}", f"GOAL {self.goal}"]
        if own >= self.goal or other >= self.goal:
            lines.append("YOU WIN" if own >= self.goal else "YOU LOSE")
        return dice[: self.picture_size[0]], lines

    # -- opponents -----------------------------------------------------------------------------
    def named_policy(self, name: str) -> np.ndarray | None:
        """Action probabilities [own, other, action] of the game's named policies."""
        if name == "five-dice":
            return self._dice_table(five_dice_rule(self.goal, self.max_dice)[:, None])
        match = re.fullmatch(r"dice-(-?\d+)", name)
        if match:
            dice = int(match.group(1))
            if not 1 <= dice <= self.max_dice:
                raise ValueError(f"dice-K needs 1 <= K <= {self.max_dice} (max_dice), got K={dice}")
            return self._dice_table(np.full((self.goal, 1), dice))
        if name == "random":
            table = np.full(self.observation_nvec + (self.max_dice,), 1.0 / self.max_dice)
            return table
        return None

    def _dice_table(self, dice: np.ndarray) -> np.ndarray:
        """Probabilities from a number of dice per [own, other] (broadcast over the grid)."""
        table = np.zeros(self.observation_nvec + (self.max_dice,))
        counts = np.ones(self.observation_nvec, np.int64)
        counts[: self.goal, : self.goal] = np.broadcast_to(dice, (self.goal, self.goal))
        np.put_along_axis(table, (counts - 1)[..., None], 1.0, axis=-1)
        return table


def five_dice_rule(goal: int, max_dice: int, dice: int = 5) -> np.ndarray:
    """Dice thrown per own score 0..goal-1 by Tijms's five-dice rule (Tijms, 2012): five, or
    trunc(l / 2) when the l points still needed are 9 or fewer; at least one die (Tijms's
    trunc(1 / 2) = 0 can not be thrown), and never more than `max_dice`."""
    needed = goal - np.arange(goal)
    count = np.where(needed <= 2 * dice - 1, needed // 2, dice)
    return np.clip(count, 1, min(dice, max_dice))


# The single-agent game of dice_envs/Hog-v0: Hog against a fixed opponent.
HogVersus = fold_factory(Hog, default_opponent="five-dice")


class HogSolitaire(Solitaire):
    """Hog alone: reach the goal in the fewest turns, one throw a turn.

    ## Description
    One player and Hog's turn rule, read from the two-player model `Hog` (seat 0 plays, the
    other seat never moves). Tijms (2012) gives 13.039 turns to 100 at best
    and 13.623 for "the five-dice rule": five dice on every throw, the named policy "dice-5"
    (the policy "five-dice", with fewer dice for the last points as his text states, takes
    fewer turns).

    ## Action Space
    `Discrete(max_dice)`: action a throws a + 1 dice.

    ## Observation Space
    `MultiDiscrete([goal + 1])`: the score; a won game shows it as `goal`.

    ## Rewards
    -1 for each turn (every step is one turn): the return is minus the number of turns.

    ## Starting State
    Score 0.

    ## Episode End
    Termination when the goal is reached. No truncation.

    ## Arguments
    - `goal=100`: points to reach; an integer >= 1.
    - `max_dice=10`: the most dice a throw may use; an integer >= 1.
    - `sides=6`: faces of each die; an integer >= 2.
    - `render_mode=None`: `"ansi"`, `"rgb_array"` or `"human"` (that picture in a pygame window).

    ## Version History
    - v0: initial version.
    """

    def __init__(self, goal: int = 100, max_dice: int = 10, sides: int = 6) -> None:
        super().__init__(Hog(goal, max_dice, sides))

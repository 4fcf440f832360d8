"""Simultaneous Hog: Tijms and van der Wal's television game, both players choosing at once.

Sources: H. Tijms, "Stochastic games and dynamic programming", Asia Pacific Mathematics
Newsletter (2012), the end of the Pig section, after H. C. Tijms and J. van der Wal, "A
real-world stochastic two-person game", Probability in the Engineering and Informational
Sciences (2006): two contestants each press one
of the buttons 1..D (D = 10) at the same moment, without seeing the other's choice, and throw
that many dice, Hog's way; the first to 100 wins, the larger total if both reach it in the same
move, and a fair coin on a tie. Tijms gives the rules and no numbers; the optimum is mixed.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import itemgetter

import numpy as np

from dice_envs.games.base import TableSize, Transition, check_int
from dice_envs.games.fold import fold_factory
from dice_envs.games.hog import FOLD_SPREAD, Hog, check_hog_size

SimultaneousHogState = tuple[int, int]  # (score of player 0, score of player 1)


class SimultaneousHog:
    """Simultaneous Hog (the television game): both players choose how many dice at once.

    ## Description
    Two players race to `goal` points (Tijms, 2012; Tijms and van der Wal's
    television game). Every move, both choose 1 to `max_dice` dice at the same moment, neither
    seeing the other's choice, and throw them: a throw scores 0 if any die shows 1, else the sum
    of its faces. The first to reach the goal wins; if both reach it in the same move, the larger
    total wins, and a tie is decided by a fair coin. (So whenever a move takes anyone to the
    goal, the larger total wins.) Optimal play is randomised: every position is a matrix game.
    `dice_envs/SimultaneousHog-v0` seats the agent against a fixed opponent, who chooses from its
    own observation without seeing the agent's choice; `baselines.equilibrium` gives the exact
    equilibrium, and `dice_envs.pettingzoo.parallel_env("simultaneous_hog")` both seats.

    ## Action Space
    `Discrete(max_dice)`: action a throws a + 1 dice. Every action is legal.

    ## Observation Space
    `MultiDiscrete([goal + 1, goal + 1])`: (own score, opponent score). A final observation
    shows the scores capped at `goal`.

    ## Rewards
    1 when the agent wins (a tie's coin included), 0 otherwise: the expected return is the win
    probability.

    ## Starting State
    Scores (0, 0).

    ## Episode End
    Termination when a move takes either player to the goal. No truncation: the game ends with
    probability 1 (a throw scores with positive probability, and scores never fall). When both
    throws score nothing, the position repeats.

    ## Info
    `info["rolls"]`: the agent's dice this move; `info["opponent_rolls"]`: the opponent's.

    ## Arguments
    - `goal=100`: points to win; an integer >= 1.
    - `max_dice=10`: the most dice a move may throw (Tijms's D); an integer >= 1.
    - `sides=6`: faces of each (fair) die; an integer >= 2.
    - `opponent="five-dice"`: `"five-dice"` (Tijms's solitaire rule: five dice, or trunc(l / 2)
      when l <= 9 points are still needed, at least one), `"dice-K"` (always K dice), `"random"`
      (uniform over the dice counts), `"equilibrium"` (the equilibrium's mixed strategy, from
      `baselines`), a table of actions or of action probabilities over the observation grid, a
      callable `f(observation) -> action` on the opponent's own observation, or any other
      policy form of `dice_envs.policies` (an equilibrium plays its mixtures).
    - `render_mode=None`: `"ansi"`, `"rgb_array"` or `"human"` (that picture in a pygame window).

    ## Version History
    - v0: initial version.
    """

    simultaneous = True
    event_keys = ("rolls",)
    observation_names = ("own score", "opponent score")
    policy_names = Hog.policy_names
    policy_descriptions = Hog.policy_descriptions

    def __init__(self, goal: int = 100, max_dice: int = 10, sides: int = 6) -> None:
        self.goal = check_int("goal", goal, 1)
        self.max_dice = check_int("max_dice", max_dice, 1)
        self.sides = check_int("sides", sides, 2)
        # A joint move lists up to (max_dice x sides + 1)^2 pairs of scores.
        check_hog_size(self.goal, self.max_dice, self.sides, (self.max_dice * self.sides + 1) ** 2)
        self.hog = Hog(self.goal, self.max_dice, self.sides)  # one throw, and the named policies
        self.face_probs = self.hog.face_probs
        self.num_actions = self.max_dice
        self.action_names = self.hog.action_names
        self.observation_nvec = (self.goal + 1, self.goal + 1)
        self.state_bounds = self.observation_nvec
        self.picture_size = (min(2 * self.max_dice, 20), 3)
        # point_law[p, a]: the probability that a + 1 dice score p points.
        self.point_law = np.zeros((self.sides * self.max_dice + 1, self.max_dice))
        for action, law in enumerate(self.hog.scores):
            for points, prob in law:
                self.point_law[points, action] += prob
        self._all_actions = tuple(range(self.max_dice))

    def table_size(self, view: str = "fold") -> TableSize:
        """About how large the fold's tables are: a state per pair of scores, each joint
        throw's distinct pairs of points a row (as `Hog`'s fold, both throwing at once)."""
        throws = sum(len(law) for law in self.hog.scores)
        positions = (self.goal + 1) ** 2
        return TableSize(positions, positions * throws * FOLD_SPREAD, "goal")

    def __repr__(self) -> str:
        return f"SimultaneousHog(goal={self.goal}, max_dice={self.max_dice}, sides={self.sides})"

    # -- rules ---------------------------------------------------------------------------------
    def initial_states(self) -> list[tuple[float, SimultaneousHogState]]:
        return [(1.0, (0, 0))]

    def legal_actions(self, state: SimultaneousHogState, player: int = 0) -> tuple[int, ...]:
        return self._all_actions

    def first_wins(self, first: np.ndarray | int, second: np.ndarray | int):
        """Player 0's win probability once a move has taken either total to the goal: the
        larger total wins, a tie is a fair coin (1, 0 or 1/2)."""
        return (np.sign(np.subtract(first, second)) + 1) / 2

    def end_of_move(self, first: int, second: int) -> list[tuple[float, Transition]]:
        """Where totals (first, second) after a move lead: (share, outcome) pairs."""
        if first < self.goal and second < self.goal:
            return [(1.0, Transition(1.0, (first, second), 0.0, False))]
        final = (min(first, self.goal), min(second, self.goal))
        win = float(self.first_wins(first, second))
        if 0.0 < win < 1.0:  # the coin
            return [
                (win, Transition(1.0, final, 1.0, True)),
                (1.0 - win, Transition(1.0, final, 0.0, True)),
            ]
        return [(1.0, Transition(1.0, final, win, True))]

    def joint_transitions(
        self, state: SimultaneousHogState, actions: tuple[int, int]
    ) -> list[Transition]:
        first, second = state
        ours, theirs = actions
        totals: dict[tuple, float] = {}
        for points, prob in self.hog.scores[ours]:
            for their_points, their_prob in self.hog.scores[theirs]:
                for share, outcome in self.end_of_move(first + points, second + their_points):
                    key = outcome[1:]
                    totals[key] = totals.get(key, 0.0) + prob * their_prob * share
        return [Transition(p, s, r, t) for (s, r, t), p in totals.items()]

    def sample_joint(
        self,
        state: SimultaneousHogState,
        actions: tuple[int, int],
        uniform: Callable[[], float],
    ) -> tuple[SimultaneousHogState, float, bool, dict]:
        """Both throws, die by die (player 0's first), and the coin on a tie: the same law as
        `joint_transitions` (a chi-square test). The info's "rolls" holds both players' faces."""
        first_faces, first_points = self.hog.throw(actions[0] + 1, uniform)
        second_faces, second_points = self.hog.throw(actions[1] + 1, uniform)
        first, second = state[0] + first_points, state[1] + second_points
        if first < self.goal and second < self.goal:  # end_of_move's one live outcome
            return (first, second), 0.0, False, {"rolls": (first_faces, second_faces)}
        outcomes = self.end_of_move(first, second)
        share, outcome = outcomes[0]
        if len(outcomes) == 2 and uniform() >= share:
            outcome = outcomes[1][1]
        _, next_state, reward, terminal = outcome
        return next_state, reward, terminal, {"rolls": (first_faces, second_faces)}

    # -- the same rules for a batch of states (the fast table builder; a test holds them equal)
    def batch_transitions_against(self, states: np.ndarray, action: int, opponent: np.ndarray):
        """The fold's outcomes of `action` in each row of `states` (n, 2), the opponent playing
        probabilities `opponent` (n, max_dice): (source row, prob, next state, reward, terminal),
        terminal outcomes of one row with equal final state and reward summed."""
        theirs = opponent @ self.point_law.T  # (n, points): the opponent's points law per row
        ours = self.point_law[:, action]
        parts = []
        for points in np.flatnonzero(ours):
            rows, their_points = np.nonzero(theirs)
            prob = ours[points] * theirs[rows, their_points]
            first = states[rows, 0] + points
            second = states[rows, 1] + their_points
            live = (first < self.goal) & (second < self.goal)
            parts.append((rows[live], prob[live], first[live], second[live], np.zeros(live.sum())))
            done = ~live
            rows, prob, first, second = rows[done], prob[done], first[done], second[done]
            win = self.first_wins(first, second)
            for reward, share in ((1.0, win), (0.0, 1.0 - win)):
                some = share > 0
                parts.append(
                    (
                        rows[some],
                        prob[some] * share[some],
                        np.minimum(first[some], self.goal),
                        np.minimum(second[some], self.goal),
                        np.full(some.sum(), reward),
                    )
                )
        rows, prob, first, second, reward = (np.concatenate(c) for c in zip(*parts, strict=True))
        terminal = (first >= self.goal) | (second >= self.goal)
        # Sum the terminal rows of a source with the same final scores and reward.
        key = ((rows * (self.goal + 1) + first) * (self.goal + 1) + second) * 2 + (reward > 0)
        key = np.where(terminal, key, -1 - np.arange(len(key)))
        unique, first_index, inverse = np.unique(key, return_index=True, return_inverse=True)
        prob = np.bincount(inverse, weights=prob, minlength=len(unique))
        rows, first, second = rows[first_index], first[first_index], second[first_index]
        reward, terminal = reward[first_index], terminal[first_index]
        return rows, prob, np.column_stack((first, second)), reward, terminal

    def batch_legal(self, states: np.ndarray) -> np.ndarray:
        return np.ones((len(states), self.max_dice), bool)

    def batch_observation(self, states: np.ndarray, player: int) -> np.ndarray:
        return states[:, [0, 1]] if player == 0 else states[:, [1, 0]]

    # -- views ---------------------------------------------------------------------------------
    @staticmethod
    def observer(player: int) -> Callable[[SimultaneousHogState], tuple[int, int]]:
        return itemgetter(0, 1) if player == 0 else itemgetter(1, 0)

    def observation(self, state: SimultaneousHogState, player: int) -> tuple[int, int]:
        return self.observer(player)(state)

    def swap_seats(self, state: SimultaneousHogState) -> SimultaneousHogState:
        return (state[1], state[0])

    def state_of(self, observation: object, player: int) -> SimultaneousHogState:
        _mover, first, second = self.hog.state_of(observation, player)  # Hog's scores, checked
        return (first, second)

    def validate_state(self, state: object) -> SimultaneousHogState:
        return self.state_of(state, 0)

    def render_text(self, state: SimultaneousHogState, player: int) -> str:
        own, other = self.observation(state, player)
        return f"you {own}, opponent {other} (goal {self.goal}, both throw at once)"

    def picture(self, state: SimultaneousHogState, player: int, info: dict):
        own, other = self.observation(state, player)
        dice = [(face, False) for face in info.get("rolls", [])]
        dice += [(face, True) for face in info.get("opponent_rolls", [])]
        lines = [f"YOU {own}  OPPONENT {other}", f"GOAL {self.goal}"]
        if own >= self.goal and other >= self.goal:  # capped: the reward says who won
            lines.append("BOTH REACHED THE GOAL")
        elif own >= self.goal or other >= self.goal:
            lines.append("YOU WIN" if own > other else "YOU LOSE")
        return dice[: self.picture_size[0]], lines

    # -- opponents -----------------------------------------------------------------------------
    def named_policy(self, name: str) -> np.ndarray | None:
        """Action probabilities [own, other, action] of the game's named policies (Hog's)."""
        return self.hog.named_policy(name)


# The single-agent game of dice_envs/SimultaneousHog-v0: against a fixed opponent.
SimultaneousHogVersus = fold_factory(SimultaneousHog, default_opponent="five-dice")

"""Two-dice Pig: Pig's race with two dice a roll, where a double 1 loses the whole score.

Source: H. Tijms, "Stochastic games and dynamic programming", Asia Pacific Mathematics Newsletter
(2012): the rules, and the solitaire numbers 16.923 optimal and 17.164 for his heuristic.
Everything but the roll is Pig's: the model is `Pig` with another
roll law (and samplers that throw two dice).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Sequence

import numpy as np

from dice_envs.games.base import cumulative
from dice_envs.games.fold import fold_factory
from dice_envs.games.pig import HOLD, Pig, PigState
from dice_envs.games.views import Solitaire


class TwoDicePig(Pig):
    """Two-dice Pig: roll two dice for points; a 1 loses the turn, a double 1 the whole score.

    ## Description
    Two players race to `goal` points. On a turn a player rolls two dice repeatedly: a single
    1 loses the turn total and ends the turn; a double 1 loses the turn total and the player's
    whole score and ends the turn; otherwise both faces add to the turn total. Holding banks
    the turn total and ends the turn. A player whose score plus turn total reaches the goal
    wins at once (Tijms, 2012). `dice_envs/TwoDicePig-v0` seats the agent
    against a fixed opponent, whose whole turn is played inside `step`, roll by roll.
    `baselines.solve("dice_envs/TwoDicePig-v0", ...)` gives the exact best response.

    ## Action Space
    `Discrete(2)`: 0 hold, 1 roll. A turn starts with a roll: at turn total 0 hold is masked
    out (`info["action_mask"]`, `action_masks()`), and if taken anyway it is played as a roll.

    ## Observation Space
    `MultiDiscrete([goal + 1, goal + 1, goal])`: (own score, opponent score, turn total). A
    final observation shows the winner's score as `goal`. Turn totals 1 to 3 never occur.

    ## Rewards
    1 when the agent wins, 0 otherwise: the expected return is the win probability.

    ## Starting State
    Scores 0. If the opponent starts (`agent_starts=False`, or the coin says so), its first
    turn is played in `reset`; should it reach the goal in that turn, the first observation
    is (0, goal, 0) and any action ends the episode with reward 0.

    ## Episode End
    Termination when either player reaches the goal. No truncation; the game ends with
    probability 1 for every opponent offered (a double 1 can send a score back to 0, so a
    game has no bound on its length).

    ## Info
    `info["rolls"]`: the agent's dice this step, two per roll (empty on a hold);
    `info["opponent_rolls"]`: the opponent's dice in the turn it played this step.

    ## Arguments
    - `goal=100`: points to win; an integer >= 1.
    - `sides=None`, `die_probs=None`: both dice, as for `Pig-v0` (a fair d6 by default).
    - `opponent="hold-at-20"`: `"hold-at-K"` (hold once the turn total reaches K),
      `"tijms"` (Tijms's rule: hold when the expected loss of a roll, single-1 probability
      times the turn total plus double-1 probability times score plus turn total, is at
      least its expected gain; for two d6, 10/36 k + 1/36 (i + k) >= 25/36 x 8), `"random"`,
      `"two-player-optimal"` (the two-player optimum, from `baselines`), a callable
      `f(observation)` on the opponent's own observation, a table over the observation grid,
      or any other policy form of `dice_envs.policies`.
    - `agent_starts=None`: None flips a fair coin per episode; True or False fixes who starts.
    - `render_mode=None`: `"ansi"`, `"rgb_array"` or `"human"` (that picture in a pygame window).

    ## Version History
    - v0: initial version.
    """

    policy_names = ("hold-at-K", "tijms", "random")
    policy_descriptions = {
        "hold-at-K": "rolls until the turn total reaches K, then holds",
        "tijms": "Tijms's rule: holds once a roll's expected loss is at least its expected gain",
        "random": "rolls or holds with probability 1/2 each",
    }

    def __repr__(self) -> str:
        return "TwoDicePig" + super().__repr__()[3:]

    @staticmethod
    def _roll_outcomes(sides: int) -> int:
        """A roll's outcomes are listed pair by pair of faces (the sampler's table too)."""
        return sides * sides

    def _roll_law(self) -> None:
        one = self.face_probs[0]
        self.bust_prob, self.wipe_prob = 2.0 * one * (1.0 - one), one * one
        sums: dict[int, float] = {}
        for a, pa in enumerate(self.face_probs[1:], start=2):
            for b, pb in enumerate(self.face_probs[1:], start=2):
                if pa * pb > 0:
                    sums[a + b] = sums.get(a + b, 0.0) + pa * pb
        self.gains = tuple(sorted(sums.items()))
        self.min_gain = 4
        self._pair_law()

    # -- sampling: two dice thrown (the same law as `transitions`; a chi-square test) --------
    def _pair_law(self) -> None:
        """Both dice from one uniform draw: every pair of faces and its cumulative bound."""
        probs = self.face_probs
        self._pairs = [(a, b) for a in range(1, self.sides + 1) for b in range(1, self.sides + 1)]
        self._pair_bounds = cumulative([probs[a - 1] * probs[b - 1] for a, b in self._pairs])

    @staticmethod
    def _held(state: PigState) -> PigState:
        mover, first, second, turn = state
        return (1, first + turn, second, 0) if mover == 0 else (0, first, second + turn, 0)

    def sample_step(
        self, state: PigState, action: int, uniform: Callable[[], float]
    ) -> tuple[PigState, float, bool, dict]:
        if action == HOLD and state[3] > 0:
            return self._held(state), 0.0, False, {"rolls": []}
        end, reward, terminal, done = self._roll(state, uniform)
        return end, reward, terminal, {"rolls": list(done)}

    def _roll(self, state: PigState, uniform: Callable[[], float]):
        """One roll from `state`: (next state, reward, terminal, the two faces)."""
        mover, first, second, turn = state
        a, b = self._pairs[bisect_right(self._pair_bounds, uniform())]
        if a == 1 and b == 1:
            wiped = (1, 0, second, 0) if mover == 0 else (0, first, 0, 0)
            return wiped, 0.0, False, (a, b)
        if a == 1 or b == 1:
            return (1 - mover, first, second, 0), 0.0, False, (a, b)
        turn += a + b
        if (first if mover == 0 else second) + turn >= self.goal:
            final = (0, self.goal, second, 0) if mover == 0 else (1, first, self.goal, 0)
            return final, float(mover == 0), True, (a, b)
        return (mover, first, second, turn), 0.0, False, (a, b)

    def sample_turn(
        self,
        state: PigState,
        choices: dict,
        choose: Callable[[PigState], object],
        uniform: Callable[[], float],
    ) -> tuple[PigState, float, bool, list[int]]:
        """The mover's whole turn, roll by roll (see `Pig.sample_turn`)."""
        mover, faces = state[0], []
        while True:
            choice = choices.get(state)
            if choice is None:
                choice = choose(state)
            if choice.__class__ is not int:
                choice = bisect_right(choice, uniform())
            if choice == HOLD and state[3] > 0:
                return self._held(state), 0.0, False, faces
            state, reward, terminal, thrown = self._roll(state, uniform)
            faces.extend(thrown)
            if terminal or state[0] != mover:
                return state, reward, terminal, faces

    # -- opponents -----------------------------------------------------------------------------
    def named_policy(self, name: str) -> np.ndarray | None:
        """Action probabilities [own, other, turn, action]: hold-at-K, tijms, random."""
        if re.fullmatch(r"hold-at-(-?\d+)", name) or name == "random":
            return super().named_policy(name)
        if name == "tijms":
            return self._roll_table(~tijms_holds(self, *np.ogrid[: self.goal, :1, : self.goal]))
        return None


def tijms_holds(model: TwoDicePig, own: np.ndarray, _other, turn: np.ndarray) -> np.ndarray:
    """Where Tijms's two-dice rule holds (Tijms, 2012): when a roll's expected loss, the turn total
    times the single-1 probability plus score and turn total times the double-1 probability,
    is at least its expected gain (10/36 k + 1/36 (i + k) >= 25/36 x 8 for two d6). Compared
    to 1e-12 so that the exact ties (11 k + i = 200) hold, as Tijms's >= says."""
    loss = model.bust_prob * turn + model.wipe_prob * (own + turn)
    gain = sum(points * prob for points, prob in model.gains)
    return (turn > 0) & (loss >= gain - 1e-12)


# The single-agent game of dice_envs/TwoDicePig-v0: two-dice Pig against a fixed opponent.
TwoDicePigVersus = fold_factory(TwoDicePig, default_opponent="hold-at-20")


class TwoDicePigSolitaire(Solitaire):
    """Two-dice Pig alone: reach the goal in the fewest turns.

    ## Description
    One player and two-dice Pig's turn rules, read from the two-player model `TwoDicePig`
    (seat 0 plays, the other seat never moves). Tijms (2012) gives 16.923
    turns to 100 at best and 17.164 under his rule (the named policy "tijms"). A double
    1 sends the score back to 0, so the game has no bound on its length.

    ## Action Space
    `Discrete(2)`: 0 hold, 1 roll; at turn total 0 hold is masked out and played as a roll.

    ## Observation Space
    `MultiDiscrete([goal + 1, goal])`: (score, turn total); a won game shows the score as
    `goal`.

    ## Rewards
    -1 for each turn when it ends (a hold, a 1, a double 1, or reaching the goal): the return
    is minus the number of turns.

    ## Starting State
    Score 0, turn total 0.

    ## Episode End
    Termination when the goal is reached. No truncation.

    ## Arguments
    - `goal=100`: points to reach; an integer >= 1.
    - `sides=None`, `die_probs=None`: both dice, as for `TwoDicePig`.
    - `render_mode=None`: `"ansi"`, `"rgb_array"` or `"human"` (that picture in a pygame window).

    ## Version History
    - v0: initial version.
    """

    def __init__(
        self,
        goal: int = 100,
        sides: int | None = None,
        die_probs: Sequence[float] | None = None,
    ) -> None:
        super().__init__(TwoDicePig(goal, sides, die_probs))

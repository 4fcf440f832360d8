"""Sum-avoid-N: roll a die and add; stop for the sum, unless the sum hits a multiple of N.

Source: "Rolling dice game and value functions", a question with a worked answer (anonymous web
page, undated): the Bellman equation, value iteration with a cap S_max beyond which the player
stops, and its printed V(S) for N = 10.
"""

from __future__ import annotations

import numpy as np

from dice_envs.games.base import TableSize, Transition, check_int, check_size, uniform_die
from dice_envs.games.rule import Rule, parse_threshold

STOP, ROLL = 0, 1


def default_max_sum(N: int, sides: int) -> int:
    """A cap that leaves the optimal value of the uncapped game unchanged from any sum below it.

    In the uncapped game a sum whose remainder r (mod N) satisfies 1 <= r < N - sides can not bust
    on the next roll, so rolling there always beats stopping. From any other sum S, one roll
    followed by the safe rolls loses everything with probability at least 1/sides and otherwise
    gains less than N + sides, so stopping beats it once S >= (sides - 1) * (N + sides); that set
    of sums is closed under such moves, hence stopping is optimal there (monotone stopping
    problem). Optimal play from a sum below that bound therefore never sees a sum above
    (sides - 1) * (N + sides) + sides + N = sides * (N + sides), and the cap at that sum changes
    nothing. tests/test_sum_avoid.py checks it against far larger caps.
    """
    return sides * (N + sides)


class SumAvoid:
    """Roll a die and add the faces; stop whenever you like, but never hit a multiple of N.

    ## Description
    The sum starts at 0. Each step the player either stops, and is paid the sum, or rolls a fair
    die with `sides` faces and adds the face. A sum that is a positive multiple of `N` ends the
    game with nothing. With N=10 and a six-sided die the optimal expected payoff is 13.217
    ("Rolling dice game and value functions"); the exact optimal policy comes from
    `baselines.solve`.

    ## Model
    State: the current sum (an int). Actions: 0 stop (the sum is paid and the game ends), 1 roll
    (a face of 1..sides is added; a positive multiple of N ends the game paying 0, a sum above
    `max_sum` ends it paying that sum, as if the player stopped). Both actions are always legal.

    ## Action Space
    `Discrete(2)`: 0 stop, 1 roll. Both are always legal; `info["action_mask"]` is all ones.

    ## Observation Space
    `Discrete(max_sum + sides + 1)`: the current sum.

    ## Rewards
    The sum when the player stops (or passes `max_sum`), 0 on a bust; nothing before the end.

    ## Starting State
    The sum is 0.

    ## Episode End
    Termination: the player stops, the sum hits a positive multiple of N, or the sum exceeds
    `max_sum` (paid as a stop). No truncation: at most `max_sum` rolls can happen.

    ## Arguments
    - `N=10`: the sums to avoid are its positive multiples; an integer >= 2.
    - `sides=6`: faces of the fair die, 1..sides; an integer >= 2.
    - `max_sum=None`: the cap; `None` gives `sides * (N + sides)`, which optimal play of the
      uncapped game never passes, so the optimal value is the uncapped game's (see
      `dice_envs.games.sum_avoid.default_max_sum`). An integer >= 1.
    - `render_mode=None`: `"ansi"` (one line of text), `"rgb_array"` (the die and the sum) or
      `"human"` (that picture in a pygame window).

    ## Version History
    - v0: initial version.
    """

    num_actions = 2
    action_names = ("stop", "roll")
    observation_names = ("sum",)
    picture_size = (1, 2)

    def __init__(self, N: int = 10, sides: int = 6, max_sum: int | None = None) -> None:
        self.N = check_int("N", N, 2)
        self.sides = check_int("sides", sides, 2)
        if max_sum is None:
            max_sum = default_max_sum(self.N, self.sides)
        self.max_sum = check_int("max_sum", max_sum, 1)
        check_size(
            {"N": self.N, "sides": self.sides, "max_sum": self.max_sum},
            (self.max_sum + self.sides + 1) * 2 * self.sides,
            "the tables' outcome rows ((max_sum + sides + 1) sums x 2 actions x sides faces)",
        )
        self.face_probs = uniform_die(self.sides)
        # Sums seen after a roll reach at most max_sum + sides.
        self.observation_nvec = (self.max_sum + self.sides + 1,)
        self.state_bounds = self.observation_nvec

    def table_size(self) -> TableSize:
        """Every sum below the cap, each with a stop row and a roll of `sides` rows."""
        states = self.max_sum + self.sides + 1
        return TableSize(states, states * (self.sides + 1), "max_sum")

    def __repr__(self) -> str:
        return f"SumAvoid(N={self.N}, sides={self.sides}, max_sum={self.max_sum})"

    policy_names = ("stop-at-K",)
    policy_descriptions = {"stop-at-K": "rolls until the sum is at least K, then stops"}

    def named_policy(self, name: str) -> Rule | None:
        """stop-at-K: roll until the sum is at least K, then stop."""
        threshold = parse_threshold("stop-at-{K}", name)
        return None if threshold is None else stop_at(threshold)

    def is_bust(self, total: int) -> bool:
        return total > 0 and total % self.N == 0

    def initial_states(self) -> list[tuple[float, int]]:
        return [(1.0, 0)]

    def legal_actions(self, state: int) -> tuple[int, ...]:
        return (STOP, ROLL)

    def transitions(self, state: int, action: int) -> list[Transition]:
        if action == STOP:
            return [Transition(1.0, state, float(state), True)]
        outcomes = []
        for face, prob in enumerate(self.face_probs, start=1):
            total = state + face
            if self.is_bust(total):
                outcomes.append(Transition(prob, total, 0.0, True))
            elif total > self.max_sum:
                outcomes.append(Transition(prob, total, float(total), True))
            else:
                outcomes.append(Transition(prob, total, 0.0, False))
        return outcomes

    # The same rules for a batch of states (the fast table builder; a test holds them equal).
    def batch_transitions(self, states: np.ndarray, action: int):
        """(source row, probability, next state, reward, terminal) for `action` in each row of
        `states` (an (n, 1) int array of sums)."""
        total = states[:, 0]
        count = len(total)
        if action == STOP:
            every = np.ones(count, dtype=bool)
            return np.arange(count), np.ones(count), states.copy(), total.astype(float), every
        source = np.repeat(np.arange(count), self.sides)
        reached = total[source] + np.tile(np.arange(1, self.sides + 1), count)
        bust = (reached > 0) & (reached % self.N == 0)
        over = ~bust & (reached > self.max_sum)
        prob = np.tile(np.asarray(self.face_probs), count)
        reward = np.where(over, reached, 0).astype(float)
        return source, prob, reached[:, None], reward, bust | over

    def batch_legal(self, states: np.ndarray) -> np.ndarray:
        return np.ones((len(states), 2), dtype=bool)

    def batch_observation(self, states: np.ndarray) -> np.ndarray:
        return states[:, :1]

    def observation(self, state: int) -> int:
        return state

    def validate_state(self, state: object) -> int:
        total = check_int("state", state, 0, self.max_sum)
        if self.is_bust(total):
            raise ValueError(f"state {total} is a bust (a positive multiple of N={self.N})")
        return total

    def render_text(self, state: int) -> str:
        return f"sum {state} (avoid multiples of {self.N}, d{self.sides})"

    def picture(self, state: int, context: dict) -> tuple[list[tuple[int, bool]], list[str]]:
        rolled = context["last_action"] == ROLL
        status = "BUST" if self.is_bust(state) else ("GAME OVER" if context["done"] else "")
        lines = [
            f"SUM {state}  {status}",
            f"AVOID X{self.N}  RETURN {context['episode_return']:g}",
        ]
        return ([(state - context["previous_state"], False)] if rolled else []), lines


def stop_at(threshold: int) -> Rule:
    """Roll until the sum is at least `threshold`, then stop."""
    return Rule.from_batch(
        lambda sums: np.where(np.asarray(sums).reshape(-1) >= threshold, STOP, ROLL),
        f"stop-at-{threshold}",
    )

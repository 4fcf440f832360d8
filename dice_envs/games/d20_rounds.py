"""D20 rounds: each round take the money the die shows, or reroll it for the next round.

Source: "Random dice game: simulations and optimal strategy using dynamic programming", a blog
post (anonymous, 2025): the d20 game, its heuristic strategies and its backward induction.
"""

from __future__ import annotations

import numpy as np

from dice_envs.games.base import TableSize, Transition, check_int, check_size, uniform_die
from dice_envs.games.rule import Rule, parse_threshold

TAKE, REROLL = 0, 1


class D20Rounds:
    """A d20 showing 1 and a number of rounds: each round take its face in dollars, or reroll.

    ## Description
    The game lasts `rounds` rounds. A die with `sides` faces starts showing `start_face`. Each
    round the player either takes money equal to the face (the die keeps showing it) or rerolls
    (no money this round; the new face shows in the next round). The question of the blog post
    "Random dice game" (2025): which faces are worth taking, given the rounds left? The exact
    answer is `baselines.solve("dice_envs/D20Rounds-v0")`.

    ## Model
    State: (rounds left, face showing), rounds left >= 1 while the game goes on. Actions: 0 take
    (earn the face; the die keeps it), 1 reroll (earn nothing; the new face shows next round).
    Both are always legal. The game ends when no rounds are left; a reroll in the last round
    earns nothing.

    ## Action Space
    `Discrete(2)`: 0 take, 1 reroll. Both are always legal; `info["action_mask"]` is all ones.

    ## Observation Space
    `MultiDiscrete([rounds + 1, sides + 1])`: (rounds left including the current one, face
    showing). The face is 1..sides; rounds left is 0 only in the final observation.

    ## Rewards
    The face on a take, 0 on a reroll.

    ## Starting State
    (rounds, start_face).

    ## Episode End
    Termination after `rounds` steps. No truncation.

    ## Arguments
    - `rounds=100`: the number of rounds; an integer >= 1.
    - `sides=20`: faces of the fair die; an integer >= 2.
    - `start_face=1`: the face showing at the start; an integer in 1..sides.
    - `render_mode=None`: `"ansi"` (one line of text), `"rgb_array"` (the die and the money) or
      `"human"` (that picture in a pygame window).

    ## Version History
    - v0: initial version.
    """

    num_actions = 2
    action_names = ("take", "reroll")
    observation_names = ("rounds left", "face showing")
    picture_size = (1, 2)

    def __init__(self, rounds: int = 100, sides: int = 20, start_face: int = 1) -> None:
        self.rounds = check_int("rounds", rounds, 1)
        self.sides = check_int("sides", sides, 2)
        self.start_face = check_int("start_face", start_face, 1, self.sides)
        check_size(
            {"rounds": self.rounds, "sides": self.sides},
            self.rounds * self.sides * (self.sides + 1),
            "the tables' outcome rows (rounds x sides faces x (sides + 1) outcomes)",
        )
        self.face_probs = uniform_die(self.sides)
        self.observation_nvec = (self.rounds + 1, self.sides + 1)

    def table_size(self) -> TableSize:
        """A state per (round, face showing), a take row and a reroll of `sides` rows each."""
        states = self.rounds * self.sides
        return TableSize(states, states * (self.sides + 1), "rounds")

    def __repr__(self) -> str:
        return f"D20Rounds(rounds={self.rounds}, sides={self.sides}, start_face={self.start_face})"

    def initial_states(self) -> list[tuple[float, tuple[int, int]]]:
        return [(1.0, (self.rounds, self.start_face))]

    def legal_actions(self, state: tuple[int, int]) -> tuple[int, ...]:
        return (TAKE, REROLL)

    def transitions(self, state: tuple[int, int], action: int) -> list[Transition]:
        rounds_left, face = state
        last = rounds_left == 1
        if action == TAKE:
            return [Transition(1.0, (rounds_left - 1, face), float(face), last)]
        return [
            Transition(prob, (rounds_left - 1, new_face), 0.0, last)
            for new_face, prob in enumerate(self.face_probs, start=1)
        ]

    def observation(self, state: tuple[int, int]) -> tuple[int, int]:
        return state

    def validate_state(self, state: object) -> tuple[int, int]:
        try:
            rounds_left, face = state  # type: ignore[misc]
        except (TypeError, ValueError):
            raise ValueError(f"state must be (rounds_left, face), got {state!r}") from None
        return (
            check_int("rounds_left", rounds_left, 1, self.rounds),
            check_int("face", face, 1, self.sides),
        )

    def render_text(self, state: tuple[int, int]) -> str:
        rounds_left, face = state
        if rounds_left == 0:
            return f"all {self.rounds} rounds played, die shows {face}"
        return f"round {self.rounds - rounds_left + 1}/{self.rounds}, die shows {face}"

    policy_names = ("take-anything", "roll-once", "reroll-below-max", "take-above-K")
    policy_descriptions = {
        "take-anything": "takes the face showing every round",
        "roll-once": "rerolls in the first round only, then takes every face",
        "reroll-below-max": "rerolls every face but the highest",
        "take-above-K": "takes a face above K, rerolls the rest",
    }

    def named_policy(self, name: str) -> Rule | None:
        """The strategies the d20 write-up simulates: take-anything, roll-once (reroll in the
        first round only), reroll-below-max (reroll every face but the highest), take-above-K
        (take a face above K, reroll the rest)."""
        limit = parse_threshold("take-above-{K}", name)
        if limit is not None:
            return _rule(lambda rounds_left, face: face > limit, name)
        rules = {
            "take-anything": lambda rounds_left, face: np.ones_like(face, bool),
            "roll-once": lambda rounds_left, face: rounds_left != self.rounds,
            "reroll-below-max": lambda rounds_left, face: face == self.sides,
        }
        return _rule(rules[name], name) if name in rules else None

    def picture(self, state: tuple[int, int], context: dict):
        rounds_left, face = state
        lines = [f"ROUNDS LEFT {rounds_left}", f"MONEY {context['episode_return']:g}"]
        return [(face, False)], lines


def _rule(takes, name: str) -> Rule:
    """A rule from `takes(rounds_left, face) -> bool array` (True: take)."""

    def batch(observations: np.ndarray) -> np.ndarray:
        observations = np.asarray(observations).reshape(-1, 2)
        return np.where(takes(observations[:, 0], observations[:, 1]), TAKE, REROLL)

    return Rule.from_batch(batch, name)

"""D20 rounds: each round take the money the die shows, or reroll it for the next round.

Source: ../shared/seeds/001 (the d20 game, its heuristic strategies and its backward induction).
"""

from __future__ import annotations

from dice_envs.games.base import Transition, check_int, uniform_die

TAKE, REROLL = 0, 1


class D20Rounds:
    """The pure model of the d20 rounds game.

    State: (rounds left, face showing), rounds left >= 1 while the game goes on. Actions: 0 take
    (earn the face; the die keeps it), 1 reroll (earn nothing; the new face shows next round).
    Both are always legal. The game ends when no rounds are left; a reroll in the last round
    earns nothing.
    """

    num_actions = 2
    action_names = ("take", "reroll")

    def __init__(self, rounds: int = 100, sides: int = 20, start_face: int = 1) -> None:
        self.rounds = check_int("rounds", rounds, 1)
        self.sides = check_int("sides", sides, 2)
        self.start_face = check_int("start_face", start_face, 1, self.sides)
        self.face_probs = uniform_die(self.sides)
        self.observation_nvec = (self.rounds + 1, self.sides + 1)

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
        return f"round {self.rounds - rounds_left + 1}/{self.rounds}, die shows {face}"

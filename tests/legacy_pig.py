"""The Pig model as it stood before the two-player model and the fold (a test oracle only).

Two-player Pig against a fixed opponent, the opponent's whole turn folded into the model.

Sources: H. Tijms, "Stochastic games and dynamic programming", Asia Pacific Mathematics
Newsletter (2012): the rules and the optimality equations, a turn starts with a roll; and
E. Johnston, A. Mata, J. Tavarez and J. Lai, "Dynamic programming game (STA 372-6, project 5)",
a student project report: the same equations, and dice with unequal faces.

Rules: two players race to `goal`. On a turn a player rolls repeatedly; face 1 loses the turn
total and ends the turn; any other face f adds f to the turn total; holding banks the turn
total and ends the turn. A player whose score plus turn total reaches the goal wins at once.
A turn starts with a roll: holding at turn total 0 is illegal and, if chosen anyway, is played
as a roll (the same in the model, the env and every opponent).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections.abc import Callable, Sequence
from functools import cached_property
from itertools import accumulate

import numpy as np

from dice_envs.games.base import Transition, check_int, uniform_die

HOLD, ROLL = 0, 1
OPPONENTS = ('"hold-at-K" (K >= 1)', '"keep-pace"', '"optimal"', '"random"', "a callable")
PigState = tuple[int, int, int]


def validate_die(sides: int, die_probs: Sequence[float] | None) -> tuple[float, ...]:
    """The face probabilities (face 1 first): a fair die of `sides` faces, or `die_probs`."""
    if die_probs is None:
        return uniform_die(check_int("sides", sides, 2))
    try:
        probs = tuple(float(p) for p in die_probs)
    except (TypeError, ValueError):
        raise ValueError(
            f"die_probs must be a sequence of probabilities, got {die_probs!r}"
        ) from None
    if len(probs) < 2:
        raise ValueError(f"die_probs needs at least 2 faces, got {len(probs)}")
    if sides != 6 and len(probs) != sides:
        raise ValueError(f"die_probs has {len(probs)} faces but sides={sides}")
    if any(not math.isfinite(p) or p < 0 for p in probs):
        raise ValueError(f"die_probs must be non-negative and finite, got {probs}")
    if not math.isclose(sum(probs), 1.0, abs_tol=1e-9):
        raise ValueError(f"die_probs must sum to 1, got a sum of {sum(probs)!r}")
    if probs[0] >= 1.0:
        raise ValueError("die_probs gives face 1 probability 1: no turn could ever score")
    return probs


def hold_at_policy(goal: int, threshold: int) -> np.ndarray:
    """Roll probabilities [own, other, turn] of "hold at `threshold` or at the goal"."""
    turn = np.arange(goal)
    return np.broadcast_to((turn < threshold).astype(float), (goal, goal, goal)).copy()


def keep_pace_policy(goal: int) -> np.ndarray:
    """Neller and Presser's "keep pace and end race" rule, for goal 100: if either score is 71 or
    more, roll until the goal; else hold at a turn total of 21 + round((other - own) / 8).

    For other goals the constants 71 and 21 scale with goal / 100 (halves round up).
    """
    own, other, turn = np.ogrid[:goal, :goal, :goal]
    race = (own >= math.floor(0.71 * goal + 0.5)) | (other >= math.floor(0.71 * goal + 0.5))
    threshold = np.floor(0.21 * goal + (other - own) / 8 + 0.5)
    return np.where(race, 1.0, (turn < threshold).astype(float))


def callable_policy(goal: int, policy: Callable[[int, int, int], int]) -> np.ndarray:
    """Tabulate `policy(own, other, turn_total) -> 0 hold / 1 roll` over every position."""
    table = np.ones((goal, goal, goal))
    for own in range(goal):
        for other in range(goal):
            for turn in range(2, goal - own):
                action = policy(own, other, turn)
                if action not in (HOLD, ROLL):
                    raise ValueError(
                        f"opponent({own}, {other}, {turn}) returned {action!r}; it must return "
                        "0 (hold) or 1 (roll)"
                    )
                table[own, other, turn] = float(action)
    return table


def parse_opponent(opponent: object) -> tuple[str, object]:
    """("hold-at", K), ("keep-pace", None), ("random", None), ("optimal", None) or
    ("callable", f); ValueError for anything else."""
    if callable(opponent):
        return "callable", opponent
    if isinstance(opponent, str):
        match = re.fullmatch(r"hold-at-(-?\d+)", opponent)
        if match:
            threshold = int(match.group(1))
            if threshold < 1:
                raise ValueError(f"opponent hold-at-K needs K >= 1, got K={threshold}")
            return "hold-at", threshold
        if opponent in ("keep-pace", "random", "optimal"):
            return opponent, None
    raise ValueError(f"opponent must be one of {', '.join(OPPONENTS)}; got {opponent!r}")


def turn_distribution(
    roll_prob: np.ndarray, face_probs: Sequence[float], goal: int
) -> tuple[np.ndarray, np.ndarray]:
    """How a whole turn ends, for every (own score, other score) at once.

    Args:
        roll_prob: [own, other, turn] probability that the player rolls (turn total 0 always
            rolls, whatever the table says).

    Returns:
        bank: [own, other, b] probability that the turn banks b points (b = 0: a 1 was rolled);
        win: [own, other] probability that the player reaches the goal during the turn.
    """
    sides = len(face_probs)
    mass = np.zeros((goal, goal, goal + sides + 1))
    mass[:, :, 0] = 1.0
    bank = np.zeros((goal, goal, goal))
    win = np.zeros((goal, goal))
    own = np.arange(goal)[:, None]
    for turn in range(goal):
        at = mass[:, :, turn]
        if not at.any():
            continue
        rolls = at if turn == 0 else at * roll_prob[:, :, turn]
        if turn > 0:
            bank[:, :, turn] += at - rolls
        bank[:, :, 0] += rolls * face_probs[0]
        for face in range(2, sides + 1):
            moved = rolls * face_probs[face - 1]
            wins = own + turn + face >= goal
            win += np.where(wins, moved, 0.0)
            mass[:, :, turn + face] += np.where(wins, 0.0, moved)
    return bank, win


class Pig:
    """The pure model of Pig from the agent's side, the opponent playing inside each step.

    State: (own score, opponent score, turn total) with the agent to move; own + turn < goal.
    One more state, (0, goal, 0), is the game the opponent won before the agent's first move
    (possible only when one turn can reach the goal): any action ends it with reward 0.
    Actions: 0 hold, 1 roll; at turn total 0 only roll is legal, and hold plays as a roll.
    Reward 1 when the agent wins, 0 when it loses. Final states: (goal, opponent, 0) for a win,
    (own, goal, 0) for a loss.
    """

    num_actions = 2
    action_names = ("hold", "roll")

    def __init__(
        self,
        goal: int = 100,
        sides: int = 6,
        die_probs: Sequence[float] | None = None,
        opponent: str | Callable[[int, int, int], int] = "hold-at-20",
        agent_starts: bool | None = None,
    ) -> None:
        self.goal = check_int("goal", goal, 1)
        self.face_probs = validate_die(sides, die_probs)
        self.sides = len(self.face_probs)
        if agent_starts not in (None, True, False):
            raise ValueError(
                f"agent_starts must be None (coin flip), True or False, got {agent_starts!r}"
            )
        self.agent_starts = agent_starts
        self.opponent = opponent
        self._opponent_kind = parse_opponent(opponent)
        self.observation_nvec = (self.goal + 1, self.goal + 1, self.goal)
        self.lost_state: PigState = (0, self.goal, 0)
        self._face_bounds = list(accumulate(self.face_probs))
        self._face_bounds[-1] = 1.0
        self._turn_cache: dict[tuple[int, int], tuple[float, list[tuple[int, float]]]] = {}

    def __repr__(self) -> str:
        die = (
            f"sides={self.sides}"
            if self.face_probs == uniform_die(self.sides)
            else f"die_probs={self.face_probs}"
        )
        opponent = self.opponent if isinstance(self.opponent, str) else "<callable>"
        return (
            f"Pig(goal={self.goal}, {die}, opponent={opponent!r}, agent_starts={self.agent_starts})"
        )

    @cached_property
    def opponent_roll_prob(self) -> np.ndarray:
        """[own, other, turn]: the probability that the opponent rolls, from its own side."""
        kind, parameter = self._opponent_kind
        if kind == "hold-at":
            return hold_at_policy(self.goal, parameter)
        if kind == "keep-pace":
            return keep_pace_policy(self.goal)
        if kind == "random":
            return np.full((self.goal,) * 3, 0.5)
        if kind == "optimal":
            raise ValueError("the legacy oracle has no solver")
        return callable_policy(self.goal, parameter)

    @cached_property
    def opponent_turns(self) -> tuple[np.ndarray, np.ndarray]:
        """`turn_distribution` of the opponent: (bank[opp, agent, b], win[opp, agent])."""
        return turn_distribution(self.opponent_roll_prob, self.face_probs, self.goal)

    def opponent_turn(
        self, opponent_score: int, agent_score: int
    ) -> tuple[float, list[tuple[int, float]]]:
        """(probability the opponent wins its turn, [(points banked, probability), ...])."""
        key = (opponent_score, agent_score)
        cached = self._turn_cache.get(key)
        if cached is None:
            bank, win = self.opponent_turns
            row = bank[opponent_score, agent_score]
            cached = (float(win[key]), [(int(b), float(row[b])) for b in np.flatnonzero(row)])
            self._turn_cache[key] = cached
        return cached

    def initial_states(self) -> list[tuple[float, PigState]]:
        agent_first = [(1.0, (0, 0, 0))]
        if self.agent_starts is True:
            return agent_first
        win, banks = self.opponent_turn(0, 0)
        opponent_first = [(win, self.lost_state)] if win > 0 else []
        opponent_first += [(p, (0, b, 0)) for b, p in banks]
        if self.agent_starts is False:
            return opponent_first
        return [(0.5 * p, state) for p, state in agent_first + opponent_first]

    def _after_opponent(self, own: int, opponent: int, prob: float = 1.0) -> list[Transition]:
        """The agent, at `own`, has ended its turn; the opponent, at `opponent`, plays its turn."""
        win, banks = self.opponent_turn(opponent, own)
        outcomes = [Transition(prob * win, (own, self.goal, 0), 0.0, True)] if win > 0 else []
        outcomes += [Transition(prob * p, (own, opponent + b, 0), 0.0, False) for b, p in banks]
        return outcomes

    def legal_actions(self, state: PigState) -> tuple[int, ...]:
        return (ROLL,) if state[2] == 0 and state != self.lost_state else (HOLD, ROLL)

    def transitions(self, state: PigState, action: int) -> list[Transition]:
        own, opponent, turn = state
        if state == self.lost_state:
            return [Transition(1.0, state, 0.0, True)]
        if action == HOLD and turn > 0:
            return self._after_opponent(own + turn, opponent)
        outcomes = self._after_opponent(own, opponent, self.face_probs[0])
        win = 0.0
        for face in range(2, self.sides + 1):
            prob = self.face_probs[face - 1]
            if prob == 0:
                continue
            if own + turn + face >= self.goal:
                win += prob
            else:
                outcomes.append(Transition(prob, (own, opponent, turn + face), 0.0, False))
        if win > 0:
            outcomes.append(Transition(win, (self.goal, opponent, 0), 1.0, True))
        return outcomes

    def roll_die(self, uniform: Callable[[], float]) -> int:
        return bisect_right(self._face_bounds, uniform()) + 1

    def sample_step(
        self, state: PigState, action: int, uniform: Callable[[], float]
    ) -> tuple[PigState, float, bool, dict]:
        """Play one step die by die, drawing from `uniform()` in [0, 1): the same law as
        `transitions` (a chi-square test holds them together), with what happened on the way.
        """
        own, opponent, turn = state
        if state == self.lost_state:
            return state, 0.0, True, {"rolls": [], "opponent_rolls": []}
        rolls: list[int] = []
        if not (action == HOLD and turn > 0):
            face = self.roll_die(uniform)
            rolls.append(face)
            if face != 1:
                turn += face
                if own + turn >= self.goal:
                    return (
                        (self.goal, opponent, 0),
                        1.0,
                        True,
                        {"rolls": rolls, "opponent_rolls": []},
                    )
                return (own, opponent, turn), 0.0, False, {"rolls": rolls, "opponent_rolls": []}
        else:
            own += turn
        opponent_rolls, opponent = self.play_opponent_turn(opponent, own, uniform)
        events = {"rolls": rolls, "opponent_rolls": opponent_rolls}
        if opponent >= self.goal:
            return (own, self.goal, 0), 0.0, True, events
        return (own, opponent, 0), 0.0, False, events

    def play_opponent_turn(
        self, opponent: int, agent: int, uniform: Callable[[], float]
    ) -> tuple[list[int], int]:
        """The opponent's turn die by die: (its rolls, its score after the turn, >= goal if won)."""
        table = self.opponent_roll_prob
        rolls: list[int] = []
        turn = 0
        while True:
            if turn > 0 and uniform() >= table[opponent, agent, turn]:
                return rolls, opponent + turn
            face = self.roll_die(uniform)
            rolls.append(face)
            if face == 1:
                return rolls, opponent
            turn += face
            if opponent + turn >= self.goal:
                return rolls, opponent + turn

    def observation(self, state: PigState) -> PigState:
        return state

    def validate_state(self, state: object) -> PigState:
        try:
            own, opponent, turn = state  # type: ignore[misc]
        except (TypeError, ValueError):
            raise ValueError(f"state must be (own, opponent, turn_total), got {state!r}") from None
        candidate = (
            check_int("own score", own, 0, self.goal),
            check_int("opponent score", opponent, 0, self.goal),
            check_int("turn total", turn, 0, self.goal),
        )
        if candidate == self.lost_state:
            return candidate
        if candidate[0] + candidate[2] >= self.goal or candidate[1] >= self.goal:
            raise ValueError(f"state {candidate} is over: a score plus turn total reached the goal")
        if candidate[2] == 1:
            raise ValueError("a turn total of 1 can not happen: face 1 ends the turn")
        return candidate

    def render_text(self, state: PigState) -> str:
        own, opponent, turn = state
        if state == self.lost_state:
            return f"opponent reached {self.goal} before your first move"
        return f"you {own}, opponent {opponent}, turn total {turn} (goal {self.goal})"

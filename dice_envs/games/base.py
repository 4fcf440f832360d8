"""The interface every game model implements, and helpers shared by the models.

A model is the whole game: its start distribution, the legal actions of a state, and every
outcome of an action with its exact probability. Environments sample from it and solvers read
it, so the two can never disagree about the rules. Nothing here imports gymnasium.
"""

from __future__ import annotations

import numbers
from collections import deque
from collections.abc import Hashable, Iterator
from typing import NamedTuple, Protocol, runtime_checkable

State = Hashable
Observation = int | tuple[int, ...]


class Transition(NamedTuple):
    """One outcome of taking an action: it happens with probability `prob`."""

    prob: float
    next_state: State
    reward: float
    terminal: bool


@runtime_checkable
class GameModel(Protocol):
    """What a game model provides.

    Attributes:
        num_actions: actions are the integers ``0 .. num_actions - 1``.
        action_names: one short name per action, for renders and tables.
        observation_nvec: the size of each observation component (one entry for a scalar
            observation, which is then an ``int``; several for a tuple observation).

    Every action of ``0 .. num_actions - 1`` has transitions in every non-terminal state, even
    one that `legal_actions` leaves out: the model documents what such an action does, and the
    environment does the same, so unmasked agents can take any action.
    """

    num_actions: int
    action_names: tuple[str, ...]
    observation_nvec: tuple[int, ...]

    def initial_states(self) -> list[tuple[float, State]]:
        """The start distribution as (probability, state) pairs."""
        ...

    def legal_actions(self, state: State) -> tuple[int, ...]:
        """The actions the rules allow in a non-terminal state."""
        ...

    def transitions(self, state: State, action: int) -> list[Transition]:
        """Every outcome of `action` in `state`; the probabilities sum to 1."""
        ...

    def observation(self, state: State) -> Observation:
        """What the agent sees of a state; it identifies the state uniquely."""
        ...

    def validate_state(self, state: State) -> State:
        """Return `state` as a model state, or raise ValueError if it is not one."""
        ...

    def render_text(self, state: State) -> str:
        """A one-line description of the state."""
        ...


def reachable_states(model: GameModel) -> Iterator[State]:
    """Yield every non-terminal state reachable from the start, in breadth-first order."""
    start = list(dict.fromkeys(state for prob, state in model.initial_states() if prob > 0))
    seen = set(start)
    queue = deque(start)
    while queue:
        state = queue.popleft()
        yield state
        for action in range(model.num_actions):
            for prob, next_state, _reward, terminal in model.transitions(state, action):
                if not terminal and prob > 0 and next_state not in seen:
                    seen.add(next_state)
                    queue.append(next_state)


def uniform_die(sides: int) -> tuple[float, ...]:
    """Face probabilities of a fair die with `sides` faces (face i has index i - 1)."""
    return (1.0 / sides,) * sides


def check_int(name: str, value: object, minimum: int, maximum: int | None = None) -> int:
    """`value` as an int if it is an integer in range, else ValueError naming `name`."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    number = int(value)
    if number < minimum or (maximum is not None and number > maximum):
        allowed = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"
        raise ValueError(f"{name} must be an integer {allowed}, got {number}")
    return number

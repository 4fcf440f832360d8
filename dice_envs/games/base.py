"""The interface every game model implements, and helpers shared by the models.

A model is the whole game: its start distribution, the legal actions of a state, and every
outcome of an action with its exact probability. Environments sample from it and solvers read
it, so the two can never disagree about the rules. Nothing here imports gymnasium.
"""

from __future__ import annotations

import importlib
import inspect
import math
import numbers
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Hashable, Iterator, Sequence
from itertools import accumulate
from typing import Any, NamedTuple, Protocol, runtime_checkable

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

    Optional, picked up where present: `sample_step(state, action, uniform)` (a faster or more
    telling sampler, with an info dict; a chi-square test holds it to `transitions`),
    `picture(state, info) -> (dice, lines)` and `picture_size` for the rgb_array render,
    `batch_transitions` and friends for the fast table builder (see `dice_envs.tables`), and
    the class docstring, which the environment shows as its own.
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


def check_die(sides: int | None, die_probs: Sequence[float] | None) -> tuple[float, ...]:
    """Face probabilities (face 1 first): a fair die of `sides` faces (6 if None), or
    `die_probs`; ValueError if they disagree or are not a distribution."""
    if die_probs is None:
        return uniform_die(6 if sides is None else check_int("sides", sides, 2))
    if isinstance(die_probs, str | bytes):
        raise ValueError(f"die_probs must be a sequence of probabilities, got {die_probs!r}")
    try:
        if any(isinstance(p, bool | str | bytes) for p in die_probs):
            raise TypeError
        probs = tuple(float(p) for p in die_probs)
    except (TypeError, ValueError):
        raise ValueError(
            f"die_probs must be a sequence of probabilities, got {die_probs!r}"
        ) from None
    if len(probs) < 2:
        raise ValueError(f"die_probs needs at least 2 faces, got {len(probs)}")
    if sides is not None and check_int("sides", sides, 2) != len(probs):
        raise ValueError(
            f"die_probs has {len(probs)} faces but sides={sides}; give one of them, or both equal"
        )
    if any(not math.isfinite(p) or p < 0 for p in probs):
        raise ValueError(f"die_probs must be non-negative and finite, got {probs}")
    if not math.isclose(sum(probs), 1.0, abs_tol=1e-9):
        raise ValueError(f"die_probs must sum to 1, got a sum of {sum(probs)!r}")
    return probs


def check_choice(name: str, value: object, allowed: tuple) -> object:
    """`value` if it is one of `allowed` (compared by identity for None/True/False)."""
    for option in allowed:
        if value is option or (
            type(value) is type(option) and not isinstance(value, bool) and value == option
        ):
            return option
    raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}; got {value!r}")


def cumulative(probs: Sequence[float]) -> list[float]:
    """Cumulative bounds for `draw`; the last is forced to 1 so round-off never falls off."""
    bounds = list(accumulate(probs))
    bounds[-1] = 1.0
    return bounds


def draw(bounds: Sequence[float], uniform: Callable[[], float]) -> int:
    """The index drawn by one `uniform()` in [0, 1) against cumulative `bounds`."""
    return bisect_right(bounds, uniform())


def sample_transition(outcomes: Sequence[Transition], uniform: Callable[[], float]) -> Transition:
    """One outcome of a `transitions` list, drawn with one `uniform()`."""
    return outcomes[draw(cumulative([t.prob for t in outcomes]), uniform)]


def check_int(name: str, value: object, minimum: int, maximum: int | None = None) -> int:
    """`value` as an int if it is an integer in range, else ValueError naming `name`."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    number = int(value)
    if number < minimum or (maximum is not None and number > maximum):
        allowed = f">= {minimum}" if maximum is None else f"in {minimum}..{maximum}"
        raise ValueError(f"{name} must be an integer {allowed}, got {number}")
    return number


class TableSize(NamedTuple):
    """About how large a game's tables are, from its arguments alone (nothing built).

    A model may offer `table_size()` returning one (a two-player model: `table_size(view)`
    with view "two-player", "fold" or "solitaire"); `dice_envs.sizes` turns it into memory and
    time. An estimate errs on the large side where the reachable share is unknown.

    Attributes:
        states: the reachable non-terminal states.
        rows: the outcome rows (one per (state, action, outcome)).
        argument: the argument that drives the size, the one to lower.
    """

    states: float
    rows: float
    argument: str


SIZE_LIMIT = 1_000_000_000
"""The most outcome rows a game's tables may hold, estimated from its arguments before anything
is built (a model also counts the Python steps its making takes, where those are more). Each
row of the tables holds a probability, a next-state index, a reward and a terminal flag: at
least 25 bytes, so 10^9 rows are 25 GB before the builder's temporaries, more than the 24 GiB
of memory this project is built and tested on; and 10^9 Python steps take the better part of
an hour. A game beyond it is refused with a ValueError instead of a MemoryError or a long run.
"""


def check_size(
    arguments: dict[str, object], estimate: int, what: str, limit: int = SIZE_LIMIT
) -> None:
    """ValueError naming `arguments` (name -> value), the `estimate` of `what` and the `limit`
    when the estimate exceeds the limit (see SIZE_LIMIT)."""
    if estimate > limit:
        named = ", ".join(f"{name}={value!r}" for name, value in arguments.items())
        raise ValueError(
            f"{named}: {what} would be about {float(estimate):.3g}, over the limit of "
            f"{float(limit):.3g} (SIZE_LIMIT); choose smaller values"
        )


def load(path: str | Callable[..., GameModel]) -> Callable[..., GameModel]:
    if not isinstance(path, str):
        return path
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def build_model(
    model: str | Callable[..., GameModel], kwargs: dict[str, Any], game: str | None = None
) -> GameModel:
    """`model(**kwargs)`, refusing unknown argument names with a ValueError that lists the
    allowed ones; `game` names the game in it (its registered id), never a class."""
    factory = load(model)
    parameters = inspect.signature(factory).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        unknown = sorted(set(kwargs) - set(parameters))
        if unknown:
            raise ValueError(
                f"unknown argument(s) {unknown}; {game or 'the game'} takes "
                f"{[name for name in parameters if name != 'self']}"
            )
    return factory(**kwargs)


@runtime_checkable
class TwoPlayerModel(Protocol):
    """What a two-player model provides beyond a `GameModel`'s attributes.

    `transitions(state, action)` lists the outcomes of the mover's action, rewards for player 0.
    `observation(state, player)` is what `player` sees; `state_of(observation, player)` is its
    inverse for the states where `player` is to move. `named_policy(name)` returns a policy in a
    form `policy` accepts, or None for a name the game does not know.
    """

    num_actions: int
    action_names: tuple[str, ...]
    observation_nvec: tuple[int, ...]
    policy_names: tuple[str, ...]

    def initial_states(self) -> list[tuple[float, State]]: ...

    def to_move(self, state: State) -> int: ...

    def legal_actions(self, state: State) -> tuple[int, ...]: ...

    def transitions(self, state: State, action: int) -> list[Transition]: ...

    def observation(self, state: State, player: int) -> Observation: ...

    def state_of(self, observation: object, player: int) -> State: ...

    def named_policy(self, name: str) -> Any: ...

    def render_text(self, state: State, player: int) -> str: ...

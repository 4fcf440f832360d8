"""Two-player models, opponent policies, and the fold of a two-player model with a fixed opponent.

A two-player model is a `GameModel` whose states say whose turn it is (`to_move`), seen by either
player (`observation(state, player)`). Player 0 moves first in `initial_states`. Rewards are
player 0's; a game pays 1 to its winner at the end, so player 1 earns 1 minus player 0's final
reward, and every value is a win probability. A symmetric game (both seats play by the same
rules) also has `swap_seats(state)`, the same position with the players' seats exchanged.

The single-agent game "against a fixed opponent" is not written by hand for any game: it is
`Fold(model, opponent, agent_starts)`, which sums over the opponent's whole turn. The agent
always sits in seat 0 of the folded states (a symmetric game's seats are swapped when the
opponent starts), so an observation identifies its state whoever started.
"""

from __future__ import annotations

import inspect
import numbers
import warnings
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dice_envs.games.base import (
    GameModel,
    Observation,
    State,
    Transition,
    check_choice,
    cumulative,
    draw,
    sample_transition,
)

AGENT, OPPONENT = 0, 1
# Opponent names that a package outside dice_envs supplies (baselines: "optimal"), so that the
# games never import a solver. Each entry point is f(model) -> any opponent form `policy` takes.
POLICY_ENTRY_POINTS = "dice_envs.policies"
# A Python callable asked once per observation on a grid of more observations than this is
# slow; the opponent's constructor says so, and names the fast forms.
SLOW_CALLS = 100_000
# A batched opponent is asked once on the whole grid (and kept as a table) up to this many
# observations.
BATCHED_GRID_LIMIT = 16_000_000
# The exact fold refuses an opponent's turn longer than this many steps.
MAX_TURN_STEPS = 100_000
# How far a row of action probabilities may sum from 1 before it is refused: a network's float32
# softmax is off by about 1e-7.
PROBABILITY_TOLERANCE = 1e-6


def normalised_probabilities(probs: object, name: str) -> np.ndarray:
    """`probs` (the last axis over actions) divided by its row sums, after checking that every
    entry is finite and >= 0 and every row sums to 1 within PROBABILITY_TOLERANCE: what is
    evaluated as exact is then a probability measure."""
    probs = np.asarray(probs, dtype=float)
    if not np.isfinite(probs).all() or (probs < 0).any():
        raise ValueError(f"{name} must hold finite probabilities >= 0")
    sums = probs.sum(axis=-1, keepdims=True)
    if (np.abs(sums - 1.0) > PROBABILITY_TOLERANCE).any():
        raise ValueError(
            f"{name} must sum to 1 over its last axis (within {PROBABILITY_TOLERANCE})"
        )
    return probs / sums


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


class Policy:
    """A policy of one seat of a two-player model: action probabilities per observation.

    Built by `policy` from a name, a table, a callable or a solution object. `probs(obs)` gives
    one observation's probabilities, `batch_probs(observations)` a whole (n, d) batch.
    """

    def __init__(
        self,
        num_actions: int,
        table: np.ndarray | None = None,
        function: Callable[[Observation], int] | None = None,
        name: str = "policy",
    ) -> None:
        self.num_actions, self.table, self.function, self.name = num_actions, table, function, name
        self._cache: dict[Observation, np.ndarray] = {}

    def choice(self, obs: Observation) -> int | list[float]:
        """The action for `obs` where the policy is deterministic there, else the cumulative
        bounds to draw one from (see `draw`)."""
        probs = self.probs(obs)
        best = int(probs.argmax())
        return best if probs[best] == 1.0 else cumulative(probs.tolist())

    def __repr__(self) -> str:
        return f"Policy({self.name})"

    def probs(self, obs: Observation) -> np.ndarray:
        if self.table is not None:
            return self.table[obs]
        cached = self._cache.get(obs)
        if cached is None:
            try:
                action = self.function(obs)
            except KeyError:
                raise ValueError(
                    f"opponent {self.name} has no action for observation {obs}"
                ) from None
            if isinstance(action, bool) or not isinstance(action, numbers.Integral):
                action = np.asarray(action)
                if action.shape == (self.num_actions,) and np.issubdtype(action.dtype, np.floating):
                    cached = normalised_probabilities(action, f"opponent {self.name}'s row")
                    self._cache[obs] = cached
                    return cached
                if action.shape != () or not np.issubdtype(action.dtype, np.integer):
                    raise ValueError(
                        f"opponent {self.name} returned {action!r} for {obs}; it must return "
                        f"an action in 0..{self.num_actions - 1}"
                    )
            if not 0 <= int(action) < self.num_actions:
                raise ValueError(
                    f"opponent {self.name} returned {action!r} for {obs}; actions are "
                    f"0..{self.num_actions - 1}"
                )
            cached = self._cache[obs] = np.eye(self.num_actions)[int(action)]
        return cached

    def batch_probs(self, observations: np.ndarray) -> np.ndarray:
        if self.table is not None:
            return self.table[tuple(observations.T)]
        if observations.shape[1] == 1:
            return np.array([self.probs(int(o)) for o in observations[:, 0]])
        return np.array([self.probs(tuple(int(v) for v in o)) for o in observations])


def policy(model: TwoPlayerModel, spec: object) -> Policy:
    """A seat's policy from any accepted form, checked against the model.

    Accepted: a name (the game's own `policy_names`, or one a package registers under the
    `dice_envs.policies` entry points, such as "optimal" from baselines); a numpy table over the
    observation grid holding actions, or with a last axis of `num_actions` probabilities; a
    batched callable (`dice_envs.policies.batched`: all observations at once, the fast form); a
    callable taking the observation (an int, or an int64 array) and returning an action or a
    probability vector; an object with `action(observation)` (a solution); a mapping from
    observation to action; a `Policy`. The older callable form `f(own, other, turn_total)`, one
    argument per component, is still taken, with a DeprecationWarning.
    """
    if isinstance(spec, Policy):
        return spec
    nvec, actions = tuple(model.observation_nvec), model.num_actions
    if isinstance(spec, str):
        named = model.named_policy(spec)
        if named is None:
            plugin = _plugins().get(spec)
            if plugin is None:
                names = list(model.policy_names) + sorted(_plugins())
                raise ValueError(f"opponent must be one of {', '.join(names)}; got {spec!r}")
            named = plugin.load()(model)
        resolved = policy(model, named)
        resolved.name = repr(spec)
        return resolved
    if isinstance(spec, np.ndarray):
        return Policy(actions, table=_probability_table(spec, nvec, actions), name="<table>")
    if callable(getattr(spec, "batch", None)):
        return _batched(spec, nvec, actions)
    if hasattr(spec, "action") and callable(spec.action):
        return Policy(actions, function=spec.action, name="<solution>")
    if isinstance(spec, Mapping):
        return Policy(actions, function=spec.__getitem__, name="<mapping>")
    if callable(spec):
        if len(nvec) > 1 and _takes_components(spec, len(nvec)):
            warnings.warn(
                "an opponent callable now takes the observation, f(observation); the form "
                "f(own, other, ...) with one argument per component goes in the next version",
                DeprecationWarning,
                stacklevel=3,
            )
            return Policy(actions, function=_Unpacked(spec), name="<callable>")
        if int(np.prod(nvec)) > SLOW_CALLS:
            warnings.warn(
                f"the opponent is a Python callable asked once per observation, of up to "
                f"{int(np.prod(nvec)):,} here; dice_envs.policies.batched(f) (all observations "
                "at once) or a table over the observation grid is much faster",
                stacklevel=3,
            )
        return Policy(actions, function=_OnObservation(spec, len(nvec)), name="<callable>")
    raise ValueError(
        "opponent must be a name, a numpy table, a callable, a mapping or an object with "
        f"action(observation); got {type(spec).__name__}"
    )


def _batched(spec: Any, nvec: tuple[int, ...], actions: int) -> Policy:
    """A batched policy asked once on the whole observation grid (a table from then on), or,
    on a grid too large for that, one observation at a time."""
    cells = int(np.prod(nvec))
    name = f"<batched {getattr(spec, 'name', 'policy')}>"
    if cells > BATCHED_GRID_LIMIT:
        return Policy(actions, function=_OnObservation(spec, len(nvec)), name=name)
    grid = np.indices(nvec).reshape(len(nvec), -1).T.astype(np.int64)
    output = np.asarray(spec.batch(grid[:, 0] if len(nvec) == 1 else grid))
    if output.shape == (cells,):
        table = output.reshape(nvec)
    elif output.shape == (cells, actions):
        table = output.reshape(nvec + (actions,)).astype(float)
    else:
        raise ValueError(
            f"a batched policy must return ({cells},) actions or ({cells}, {actions}) "
            f"probabilities for the {cells} observations of the grid, got shape {output.shape}"
        )
    return Policy(actions, table=_probability_table(table, nvec, actions), name=name)


def _takes_components(function: Callable[..., Any], components: int) -> bool:
    """Whether `function` takes one positional argument per observation component."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    return len(required) == components


class _OnObservation:
    """Calls `function(observation)` with the observation as the env shows it (an int, or an
    int64 array); a class, not a lambda, so that envs pickle."""

    def __init__(self, function: Callable[..., Any], components: int) -> None:
        self.function, self.components = function, components

    def __call__(self, observation: tuple[int, ...]):
        if self.components == 1:
            return self.function(int(np.asarray(observation).reshape(-1)[0]))
        return self.function(np.asarray(observation, dtype=np.int64))


class _Unpacked:
    """Calls `function(*observation)` (a class, not a lambda, so that envs pickle)."""

    def __init__(self, function: Callable[..., int]) -> None:
        self.function = function

    def __call__(self, observation: tuple[int, ...]) -> int:
        return self.function(*observation)


def _plugins() -> dict[str, Any]:
    return {point.name: point for point in entry_points(group=POLICY_ENTRY_POINTS)}


def _probability_table(table: np.ndarray, nvec: tuple[int, ...], actions: int) -> np.ndarray:
    if not (np.issubdtype(table.dtype, np.integer) or np.issubdtype(table.dtype, np.floating)):
        raise ValueError(
            f"an opponent table must hold numbers (actions or probabilities), got {table.dtype}"
        )
    if table.shape == nvec:
        if not np.issubdtype(table.dtype, np.integer) and not np.all(table == np.round(table)):
            raise ValueError("an opponent table of actions must hold whole numbers")
        if table.min() < 0 or table.max() >= actions:
            raise ValueError(f"an opponent table of actions must hold 0..{actions - 1}")
        return np.eye(actions, dtype=np.float32)[table.astype(np.int64)]
    if table.shape == nvec + (actions,):
        probs = normalised_probabilities(table, "an opponent table of probabilities")
        single = probs.astype(np.float32)  # half the memory where nothing is lost
        return single if np.array_equal(single, probs) else probs
    raise ValueError(
        f"an opponent table must have shape {nvec} (actions) or {nvec + (actions,)} "
        f"(probabilities), got {table.shape}"
    )


def _game_parameter(view, name: str):
    """A view's `__getattr__`: the wrapped game's own public attributes (goal, sides, ...)."""
    model = view.__dict__.get("model")
    if model is not None and name in vars(model) and not name.startswith("_"):
        return vars(model)[name]
    raise AttributeError(name)


def named_table(model: TwoPlayerModel, name: str) -> np.ndarray | None:
    """The named policy `name` of a two-player (or simultaneous) model over its observation
    grid: a table of actions where it is deterministic, else of action probabilities; None for
    a name the model does not know. "optimal" (alias "two-player-optimal") comes from the
    package that registers it under the `dice_envs.policies` entry points (baselines)."""
    name = "optimal" if name == "two-player-optimal" else name
    table = model.named_policy(name)
    if table is None:
        plugin = _plugins().get(name)
        if plugin is None:
            return None
        table = plugin.load()(model)
    probs = _probability_table(np.asarray(table), tuple(model.observation_nvec), model.num_actions)
    actions = probs.argmax(axis=-1)
    return actions if np.all(probs.max(axis=-1) == 1.0) else probs


def named_policy_names(model: TwoPlayerModel) -> tuple[str, ...]:
    """The names `named_table` takes for `model`."""
    return (*model.policy_names, *sorted(_plugins()))


class AgentSeat:
    """What a fold shows of its game from the agent's seat (seat 0): its picture and its named
    policies (the two-player model's, played from seat 0)."""

    model: TwoPlayerModel

    @property
    def policy_names(self) -> tuple[str, ...]:
        return named_policy_names(self.model)

    def named_policy(self, name: str) -> np.ndarray | None:
        """The two-player model's named policy for the agent's seat, over the observation
        grid (actions, or action probabilities where it mixes)."""
        return named_table(self.model, name)

    def picture(self, state: State, info: dict) -> tuple[list[tuple[int, bool]], list[str]]:
        return self.model.picture(state, AGENT, info)

    @property
    def picture_size(self) -> tuple[int, int]:
        return self.model.picture_size


class Fold(AgentSeat):
    """A two-player model against a fixed opponent, as a single-agent `GameModel`.

    The agent sits in seat 0. `agent_starts`: True (the agent moves first), False (the
    opponent does; needs a symmetric model), None (a fair coin). A step is the agent's action
    and, when it hands over the move, the opponent's whole turn: its outcomes are summed
    exactly in `transitions` and played action by action in `sample_step`.

    When the opponent starts and ends the game in its first turn (small goals), the final
    position becomes a start state of its own: every action ends it, paying its reward.

    Limits: the opponent's turn must end (no position of its turn may recur). The exact sum
    over a turn takes one Python frame a step: a turn too long for the recursion limit
    (about a thousand steps) raises ValueError, and so does one of over `MAX_TURN_STEPS`
    steps in the vectorised sum.
    """

    def __init__(
        self, model: TwoPlayerModel, opponent: object, agent_starts: bool | None = None
    ) -> None:
        self.model = model
        self.__doc__ = type(model).__doc__
        self.agent_starts = check_choice("agent_starts", agent_starts, (None, True, False))
        if agent_starts is not True and not hasattr(model, "swap_seats"):
            raise ValueError(f"agent_starts={agent_starts} needs a symmetric game")
        self.opponent = opponent
        self.opponent_policy = policy(model, opponent)
        self.num_actions = model.num_actions
        self.action_names = model.action_names
        self.observation_nvec = model.observation_nvec
        self.observation_names = getattr(model, "observation_names", None)
        self.face_probs = getattr(model, "face_probs", None)
        self._all_actions = tuple(range(model.num_actions))
        self._sampler = getattr(model, "sample_step", None)
        self._one_step = self._sampler or self._step
        self._to_move = model.to_move
        self._opponent_choices: dict[State, int | list[float]] = {}
        self._event_pairs = tuple(
            (key, "opponent_" + key) for key in getattr(model, "event_keys", ())
        )
        self._single_event = self._event_pairs[0] if len(self._event_pairs) == 1 else None
        # A model may play a whole turn at once (what it threw being its one event key).
        self._turn_sampler = getattr(model, "sample_turn", None) if self._single_event else None
        self._exits: dict[State, list[Transition]] = {}
        self._over: dict[State, float] = {}  # games the opponent ended before the agent moved
        self._start = self._initial_states()
        # Fast paths the env calls every step: the model's own answers where they are the
        # fold's (no game ends before the agent moves), and its observer of seat 0.
        if not self._over:
            self.legal_actions = model.legal_actions  # type: ignore[method-assign]
        observer = getattr(model, "observer", None)
        if observer is not None:
            self.observation = observer(AGENT)  # type: ignore[method-assign]
        self.batchable = hasattr(model, "batch_transitions")
        if self.batchable:
            self.state_bounds = model.state_bounds
            self._bounds = tuple(int(b) for b in model.state_bounds)
            self._exit_slot: dict[int, int] = {}  # start key -> its place in the exit rows
            self._exit_ptr = np.zeros(1, dtype=np.int64)
            self._exit_columns: list[np.ndarray] | None = None

    def __repr__(self) -> str:
        opponent = self.opponent if isinstance(self.opponent, str) else self.opponent_policy.name
        return f"{self.model!r} vs {opponent}, agent_starts={self.agent_starts}"

    __getattr__ = _game_parameter  # the game's own parameters (goal, sides, ...) read through

    # -- the single-agent model --------------------------------------------------------------
    def _initial_states(self) -> list[tuple[float, State]]:
        firsts = self.model.initial_states()
        starts: list[tuple[float, State]] = []
        if self.agent_starts in (True, None):
            starts += [(p, state) for p, state in firsts]
        if self.agent_starts in (False, None):
            for p, state in firsts:
                for q, next_state, reward, terminal in self._arrive(
                    self.model.swap_seats(state), 0.0
                ):
                    if terminal:
                        self._over[next_state] = reward
                    starts.append((p * q, next_state))
        if self.agent_starts is None:
            starts = [(0.5 * p, state) for p, state in starts]
        return starts

    def initial_states(self) -> list[tuple[float, State]]:
        return list(self._start)

    def legal_actions(self, state: State) -> tuple[int, ...]:
        if self._over and state in self._over:
            return self._all_actions
        return self.model.legal_actions(state)

    def transitions(self, state: State, action: int) -> list[Transition]:
        if self._over and state in self._over:
            return [Transition(1.0, state, self._over[state], True)]
        outcomes: list[Transition] = []
        for prob, next_state, reward, terminal in self.model.transitions(state, action):
            outcomes += [
                Transition(prob * q, s, r, t)
                for q, s, r, t in self._arrive(next_state, reward, terminal)
            ]
        return outcomes

    def _arrive(self, state: State, reward: float, terminal: bool = False) -> list[Transition]:
        """Where a position leads before the agent moves again: itself if the game is over or
        the agent is to move, else every end of the opponent's turn."""
        if terminal or self.model.to_move(state) == AGENT:
            return [Transition(1.0, state, reward, terminal)]
        return [Transition(q, s, reward + r, t) for q, s, r, t in self.opponent_turn(state)]

    def opponent_turn(self, state: State) -> list[Transition]:
        """Every end of the opponent's turn from `state` (the opponent to move): the agent's
        next position or the end of the game, with its probability and the reward on the way.
        """
        cached = self._exits.get(state)
        if cached is not None:
            return cached
        self._exits[state] = []  # a marker: meeting it again means the turn loops
        try:
            result = self._opponent_turn_from(state)
        except RecursionError:
            del self._exits[state]
            raise ValueError(
                f"the opponent's turn from {state} is too long for the exact fold "
                "(one Python frame a step)"
            ) from None
        except BaseException:
            del self._exits[state]  # no half-made marker stays behind
            raise
        self._exits[state] = result
        return result

    def _opponent_turn_from(self, state: State) -> list[Transition]:
        totals: dict[tuple[State, float, bool], float] = {}
        probs = self.opponent_policy.probs(self.model.observation(state, OPPONENT))
        for action in np.flatnonzero(probs):
            for prob, next_state, reward, terminal in self.model.transitions(state, int(action)):
                if not terminal and self.model.to_move(next_state) == OPPONENT:
                    ends = self._exits.get(next_state)
                    if ends == []:
                        raise ValueError(f"the opponent's turn can return to {next_state}")
                    ends = self.opponent_turn(next_state)
                else:
                    ends = [Transition(1.0, next_state, 0.0, terminal)]
                for q, end, r, t in ends:
                    key = (end, reward + r, t)
                    totals[key] = totals.get(key, 0.0) + float(probs[action]) * prob * q
        return [Transition(p, s, r, t) for (s, r, t), p in totals.items()]

    def observation(self, state: State) -> Observation:
        return self.model.observation(state, AGENT)

    def validate_state(self, state: object) -> State:
        """A folded state, given as one (the agent to move) or as the agent's observation."""
        if isinstance(state, tuple) and state in self._over:
            return state
        try:
            key = tuple(int(v) for v in np.asarray(state).reshape(-1))
        except (TypeError, ValueError):
            raise ValueError(f"state must be the agent's observation, got {state!r}") from None
        for over in self._over:
            if self.model.observation(over, AGENT) == key:
                return over
        try:
            return self.model.state_of(state, AGENT)
        except ValueError as as_observation:
            try:
                full = self.model.validate_state(state)
            except ValueError:
                raise as_observation from None
            if self.model.to_move(full) != AGENT:
                raise ValueError(f"state {state} has the opponent to move") from None
            return full

    def render_text(self, state: State) -> str:
        if state in self._over:
            return "the opponent won before your first move"
        return self.model.render_text(state, AGENT)

    # -- sampling, action by action ------------------------------------------------------------
    def _step(self, state, action, uniform):
        if self._sampler is not None:
            return self._sampler(state, action, uniform)
        next_state, reward, terminal = sample_transition(
            self.model.transitions(state, action), uniform
        )[1:]
        return next_state, reward, terminal, {}

    def sample_step(self, state: State, action: int, uniform: Callable[[], float]):
        """The agent's action, then the opponent's turn action by action, drawn with
        `uniform()`; the info lists what each side threw (the opponent's keys get the prefix
        "opponent_")."""
        if self._over and state in self._over:
            return state, self._over[state], True, self._events({}, None)
        state, reward, terminal, info = self._one_step(state, action, uniform)
        if terminal or self._to_move(state) == AGENT:
            return state, reward, terminal, self._events(info, None)
        if self._turn_sampler is not None:  # the model plays the opponent's whole turn
            state, more, terminal, faces = self._turn_sampler(
                state, self._opponent_choices, self._choice, uniform
            )
            key, theirs_key = self._single_event
            return state, reward + more, terminal, {key: info.get(key, []), theirs_key: faces}
        state, more, terminal, theirs = self.play_opponent(state, uniform)
        return state, reward + more, terminal, self._events(info, theirs)

    def play_opponent(self, state: State, uniform: Callable[[], float]):
        """Play the opponent's turn (it is to move): (state, reward, terminal, what it threw,
        as {"opponent_<key>": [...]})."""
        if self._turn_sampler is not None:  # the model plays a whole turn at once
            state, reward, terminal, faces = self._turn_sampler(
                state, self._opponent_choices, self._choice, uniform
            )
            return state, reward, terminal, {self._event_pairs[0][1]: faces}
        reward, terminal, thrown = 0.0, False, self._nothing_thrown()
        to_move, sample = self.model.to_move, self._sampler or self._step
        while not terminal and to_move(state) == OPPONENT:
            choice = self._opponent_choices.get(state)
            if choice is None:
                choice = self._choice(state)
            action = choice if choice.__class__ is int else draw(choice, uniform)
            state, r, terminal, info = sample(state, action, uniform)
            reward += r
            for key, theirs_key in self._event_pairs:
                thrown[theirs_key].extend(info.get(key, ()))
        return state, reward, terminal, thrown

    def _choice(self, state: State) -> int | list[float]:
        """The opponent's action at `state`, or the bounds to draw it from (looked up once)."""
        choice = self.opponent_policy.choice(self.model.observation(state, OPPONENT))
        self._opponent_choices[state] = choice
        return choice

    def no_events(self) -> dict:
        """The info of a step in which nobody threw anything (a reset to a given state)."""
        return self._events({}, None)

    def _nothing_thrown(self) -> dict:
        return {theirs_key: [] for _key, theirs_key in self._event_pairs}

    def _events(self, info: dict, theirs: dict | None) -> dict:
        if self._single_event is not None:
            key, theirs_key = self._single_event
            return {key: info.get(key, []), theirs_key: theirs[theirs_key] if theirs else []}
        events = {}
        for key, theirs_key in self._event_pairs:
            events[key] = info.get(key, [])
            events[theirs_key] = theirs[theirs_key] if theirs else []
        return events

    def sample_start(self, uniform: Callable[[], float]) -> tuple[State, dict]:
        """A start position; when the opponent starts, its first turn is played die by die."""
        firsts = self.model.initial_states()
        state = firsts[draw(cumulative([p for p, _ in firsts]), uniform)][1]
        agent_first = self.agent_starts
        if agent_first is None:
            agent_first = uniform() < 0.5
        if agent_first:
            return state, self._events({}, None)
        state, reward, terminal, theirs = self.play_opponent(self.model.swap_seats(state), uniform)
        if terminal:
            self._over.setdefault(state, reward)
        return state, self._events({}, theirs)

    # -- the same fold for a batch of states (the fast table builder; tests hold them equal) ----
    def _encode(self, states: np.ndarray) -> np.ndarray:
        return np.ravel_multi_index(tuple(states.T), self._bounds)

    def batch_legal(self, states: np.ndarray) -> np.ndarray:
        legal = self.model.batch_legal(states)
        legal[self._over_rows(states)] = True
        return legal

    def batch_observation(self, states: np.ndarray) -> np.ndarray:
        return self.model.batch_observation(states, AGENT)

    def _over_rows(self, states: np.ndarray) -> np.ndarray:
        if not self._over:
            return np.zeros(len(states), dtype=bool)
        over = self._encode(np.array(list(self._over), dtype=np.int64))
        return np.isin(self._encode(states), over)

    def batch_transitions(self, states: np.ndarray, action: int):
        """`transitions` for an (n, d) batch: (source row, prob, next state, reward, terminal)."""
        over = self._over_rows(states)
        parts = []
        if over.any():
            rows = np.flatnonzero(over)
            rewards = [self._over[tuple(s)] for s in states[rows].tolist()]
            parts.append(
                (
                    rows,
                    np.ones(len(rows)),
                    states[rows],
                    np.array(rewards),
                    np.ones(len(rows), bool),
                )
            )
            live = np.flatnonzero(~over)
            source, prob, nxt, reward, terminal = self.model.batch_transitions(states[live], action)
            source = live[source]
        else:
            source, prob, nxt, reward, terminal = self.model.batch_transitions(states, action)
        handing = ~terminal & (self.model.batch_to_move(nxt) == OPPONENT)
        keep = ~handing
        parts.append((source[keep], prob[keep], nxt[keep], reward[keep], terminal[keep]))
        if handing.any():
            row, q, end, r, t = self.batch_opponent_turn(nxt[handing])
            src = source[handing][row]
            parts.append((src, prob[handing][row] * q, end, reward[handing][row] + r, t))
        return tuple(np.concatenate(column) for column in zip(*parts, strict=True))

    def batch_opponent_turn(self, starts: np.ndarray):
        """`opponent_turn` for each row of `starts`: (row, prob, end state, reward, terminal)."""
        keys = self._encode(starts)
        unique, inverse = np.unique(keys, return_inverse=True)
        slots = np.array([self._exit_slot.get(k, -1) for k in unique.tolist()], dtype=np.int64)
        if (slots < 0).any():
            self._propagate(unique[slots < 0])
            slots = np.array([self._exit_slot[k] for k in unique.tolist()], dtype=np.int64)
        slot = slots[inverse]
        lo = self._exit_ptr[slot]
        per_row = self._exit_ptr[slot + 1] - lo
        row = np.repeat(np.arange(len(starts)), per_row)
        positions = np.repeat(lo - np.cumsum(per_row) + per_row, per_row)
        positions += np.arange(per_row.sum())
        return (row, *(column[positions] for column in self._exit_columns))

    def _propagate(self, start_keys: np.ndarray) -> None:
        """The opponent's turns from many starts at once, step by step until every path has
        ended; the ends of each start go into the exit cache."""
        states = np.column_stack(np.unravel_index(start_keys, self._bounds)).astype(np.int64)
        origin = np.arange(len(start_keys))
        mass, gained = np.ones(len(states)), np.zeros(len(states))
        ended = []
        for _ in range(MAX_TURN_STEPS):
            if not len(states):
                break
            probs = self.opponent_policy.batch_probs(self.model.batch_observation(states, OPPONENT))
            going = []
            for action in range(self.num_actions):
                chosen = np.flatnonzero(probs[:, action] > 0)
                if not len(chosen):
                    continue
                source, prob, nxt, reward, terminal = self.model.batch_transitions(
                    states[chosen], action
                )
                rows = chosen[source]
                weight = mass[rows] * probs[rows, action] * prob
                total = gained[rows] + reward
                done = terminal | (self.model.batch_to_move(nxt) == AGENT)
                ended.append(
                    (origin[rows][done], weight[done], nxt[done], total[done], terminal[done])
                )
                going.append((origin[rows][~done], weight[~done], nxt[~done], total[~done]))
            origin, mass, states, gained = _merged(
                [np.concatenate(column) for column in zip(*going, strict=True)]
                if going
                else [
                    np.zeros(0, np.int64),
                    np.zeros(0),
                    np.zeros((0, len(self._bounds)), np.int64),
                    np.zeros(0),
                ],
                self._encode,
            )
        else:
            raise ValueError(f"the opponent's turn lasted over {MAX_TURN_STEPS} steps")
        origin, prob, end, reward, terminal = (np.concatenate(c) for c in zip(*ended, strict=True))
        keys = self._encode(end)
        order = np.lexsort((terminal, reward, keys, origin))
        origin, prob, end, reward, terminal, keys = (
            a[order] for a in (origin, prob, end, reward, terminal, keys)
        )
        same = (
            (np.diff(origin) == 0)
            & (np.diff(keys) == 0)
            & (np.diff(reward) == 0)
            & (np.diff(terminal.astype(np.int8)) == 0)
        )
        first = np.concatenate(([True], ~same))
        group = np.cumsum(first) - 1
        prob = np.bincount(group, weights=prob)
        origin, end, reward, terminal = origin[first], end[first], reward[first], terminal[first]
        counts = np.bincount(origin, minlength=len(start_keys))
        first_slot = len(self._exit_ptr) - 1
        self._exit_ptr = np.concatenate((self._exit_ptr, self._exit_ptr[-1] + np.cumsum(counts)))
        new = (prob, end, reward, terminal)
        self._exit_columns = (
            list(new)
            if self._exit_columns is None
            else [np.concatenate(pair) for pair in zip(self._exit_columns, new, strict=True)]
        )
        for i, key in enumerate(start_keys.tolist()):
            self._exit_slot[key] = first_slot + i


def _merged(columns, encode):
    """Positions of a turn in progress with equal (origin, state, reward so far) summed."""
    origin, mass, states, gained = columns
    if not len(origin):
        return origin, mass, states, gained
    keys = encode(states)
    order = np.lexsort((gained, keys, origin))
    origin, mass, states, gained, keys = (a[order] for a in (origin, mass, states, gained, keys))
    same = (np.diff(origin) == 0) & (np.diff(keys) == 0) & (np.diff(gained) == 0)
    first = np.concatenate(([True], ~same))
    mass = np.bincount(np.cumsum(first) - 1, weights=mass)
    return origin[first], mass, states[first], gained[first]


class MoverView:
    """A two-player model seen by whoever is to move: the single-agent game that self-play
    learns from (one policy plays both seats).

    Its states are the model's; its observation is (player to move,) + that player's own
    observation, and a step pays the mover: at the end 1 if the mover won, 0 if it lost (the
    model's reward for player 0, or one minus it for player 1). A learner sees from the first
    component whether the next observation is still its own turn or the other player's.
    """

    def __init__(
        self, model: TwoPlayerModel, starts: list[tuple[float, State]] | None = None
    ) -> None:
        """`starts`: the start distribution, (probability, state) pairs; None: the game's.
        Self-play learners start games anywhere ("exploring starts") to learn every
        position an opponent can lead to, not only those their own play reaches."""
        self.model = model
        if starts is not None and abs(sum(p for p, _ in starts) - 1.0) > 1e-9:
            raise ValueError("starts must be (probability, state) pairs summing to 1")
        self._starts = None if starts is None else list(starts)
        self.num_actions, self.action_names = model.num_actions, model.action_names
        self.observation_nvec = (2, *model.observation_nvec)
        self.observation_names = ("player to move", *getattr(model, "observation_names", ()))
        bounds = getattr(model, "state_bounds", None)
        self.batchable = hasattr(model, "batch_transitions") and bounds is not None
        if bounds is not None:
            self.state_bounds = tuple(bounds)

    def __repr__(self) -> str:
        return f"MoverView({self.model!r})"

    __getattr__ = _game_parameter

    def initial_states(self) -> list[tuple[float, State]]:
        return self.model.initial_states() if self._starts is None else list(self._starts)

    def legal_actions(self, state: State) -> tuple[int, ...]:
        return self.model.legal_actions(state)

    def transitions(self, state: State, action: int) -> list[Transition]:
        mover = self.model.to_move(state)
        return [
            Transition(p, s, r if mover == AGENT else float(t) - r, t)
            for p, s, r, t in self.model.transitions(state, action)
        ]

    def observation(self, state: State) -> Observation:
        mover = self.model.to_move(state)
        return (mover, *np.atleast_1d(self.model.observation(state, mover)).tolist())

    def validate_state(self, state: object) -> State:
        return self.model.validate_state(state)

    def render_text(self, state: State) -> str:
        mover = self.model.to_move(state)
        return f"player {mover} to move: " + self.model.render_text(state, mover)

    def batch_transitions(self, states: np.ndarray, action: int):
        source, prob, nxt, reward, terminal = self.model.batch_transitions(states, action)
        mover = self.model.batch_to_move(states)[source]
        return source, prob, nxt, np.where(mover == AGENT, reward, terminal - reward), terminal

    def batch_legal(self, states: np.ndarray) -> np.ndarray:
        return self.model.batch_legal(states)

    def batch_observation(self, states: np.ndarray) -> np.ndarray:
        mover = self.model.batch_to_move(states)
        seen = np.where(
            (mover == AGENT)[:, None],
            self.model.batch_observation(states, AGENT).reshape(len(states), -1),
            self.model.batch_observation(states, OPPONENT).reshape(len(states), -1),
        )
        return np.column_stack((mover, seen))


OWN, OTHER = "own score", "opponent score"


class Solitaire:
    """A two-player race played alone: seat 0 plays every turn and seat 1 never moves.

    The rules are the two-player model's; its `observation_names` must name the components
    "own score" and "opponent score". A state is seat 0's observation without the opponent's
    score (which stays 0). Objectives: "turns" (-1 for each turn when it ends, by the model's
    handing the move over or by reaching the goal: the return is minus the number of turns)
    and "turn_score" (one turn only; the reward is what the turn added to the score).
    """

    objectives: tuple[str, ...] = ("turns",)

    @property
    def policy_names(self) -> tuple[str, ...]:
        return tuple(self.model.policy_names)

    def named_policy(self, name: str) -> np.ndarray | None:
        """The two-player model's named policy with the opponent's score at 0 (hold-at-K alone
        holds at the lesser of K and the points still needed, as in the race)."""
        if name not in ("optimal", "two-player-optimal"):
            table = named_table(self.model, name)
            if table is not None:
                return np.take(table, 0, axis=self._other)
        return None

    def __init__(self, model: TwoPlayerModel, objective: str = "turns") -> None:
        self.objective = check_choice("objective", objective, self.objectives)
        names = tuple(getattr(model, "observation_names", ()))
        if OWN not in names or OTHER not in names:
            raise ValueError(f"{model!r} names no {OWN!r} and {OTHER!r} in its observation")
        self.model = model
        self._own, self._other = names.index(OWN), names.index(OTHER)
        keep = [i for i in range(len(names)) if i != self._other]
        self._keep = keep
        self._scalar = len(keep) == 1  # a scalar observation is an int
        self.observation_names = tuple("score" if i == self._own else names[i] for i in keep)
        self.observation_nvec = tuple(model.observation_nvec[i] for i in keep)
        self.num_actions, self.action_names = model.num_actions, model.action_names
        self.goal = model.goal
        for name in ("face_probs", "sides", "picture_size"):
            if hasattr(model, name):
                setattr(self, name, getattr(model, name))
        self._start = [(p, self._solo(state)) for p, state in model.initial_states()]
        self._sampler = getattr(model, "sample_step", None)
        self._fulls: dict[Observation, State] = {}
        self._steps: dict[tuple, tuple[Observation, float, bool]] = {}
        # The batch form of the rules (the fast table builder), where the model has one.
        self.batchable = hasattr(model, "batch_transitions") and hasattr(model, "batch_state_of")
        self.state_bounds = self.observation_nvec

    def __repr__(self) -> str:
        inner = repr(self.model).split("(", 1)[1][:-1]
        extra = f", objective={self.objective!r}" if len(self.objectives) > 1 else ""
        return f"{type(self).__name__}({inner}{extra})"

    # -- seat 0's position <-> the solitaire state ---------------------------------------------
    def _solo(self, state: State) -> Observation:
        obs = self.model.observation(state, AGENT)
        return obs[self._own] if self._scalar else tuple(obs[i] for i in self._keep)

    def _full(self, solo: Observation) -> State:
        obs = [solo] if self._scalar else list(solo)
        obs.insert(self._other, 0)
        return self.model.state_of(tuple(obs), AGENT)

    def initial_states(self) -> list[tuple[float, tuple[int, ...]]]:
        return list(self._start)

    def legal_actions(self, state: tuple[int, ...]) -> tuple[int, ...]:
        return self.model.legal_actions(self._cached_full(state))

    def _cached_full(self, state: Observation) -> State:
        full = self._fulls.get(state)
        if full is None:
            full = self._fulls[state] = self._full(state)
        return full

    def _outcome(self, score: int, after: State, terminal: bool) -> Transition:
        """Seat 0's step to `after`: the solitaire state, reward and end."""
        turn_over = terminal or self.model.to_move(after) != AGENT
        solo = self._solo(after)
        if self.objective == "turns":
            return Transition(1.0, solo, -1.0 if turn_over else 0.0, terminal)
        reward = float(self._score(solo) - score) if turn_over else 0.0
        return Transition(1.0, solo, reward, turn_over)

    def transitions(self, state: tuple[int, ...], action: int) -> list[Transition]:
        score = self._score(state)
        outcomes = []
        for prob, after, _reward, terminal in self.model.transitions(self._full(state), action):
            _, solo, reward, end = self._outcome(score, after, terminal)
            outcomes.append(Transition(prob, solo, reward, end))
        return outcomes

    def sample_step(self, state: tuple[int, ...], action: int, uniform: Callable[[], float]):
        """One step drawn with the model's own sampler (so the info lists the dice). The
        conversions to and from the model's states are looked up once each (the env steps
        here: the states of a game are few)."""
        full = self._fulls.get(state)
        if full is None:
            full = self._cached_full(state)
        if self._sampler is not None:
            after, _reward, terminal, info = self._sampler(full, action, uniform)
        else:
            after, _reward, terminal = sample_transition(
                self.model.transitions(full, action), uniform
            )[1:]
            info = {}
        key = (state, after, terminal)
        step = self._steps.get(key)
        if step is None:
            step = self._steps[key] = self._outcome(self._score(state), after, terminal)[1:]
        return (*step, info)

    def _score(self, solo: Observation) -> int:
        return solo if self._scalar else solo[self._own]  # type: ignore[index,return-value]

    def _values(self, solo: Observation) -> tuple[int, ...]:
        return (solo,) if self._scalar else solo  # type: ignore[return-value]

    def observation(self, state: Observation) -> Observation:
        return state

    # -- the same, for a batch of states (a test holds the tables of both builders equal) -----
    def _batch_full(self, states: np.ndarray) -> np.ndarray:
        observations = np.insert(states.reshape(len(states), -1), self._other, 0, axis=1)
        return self.model.batch_state_of(observations, AGENT)

    def batch_transitions(self, states: np.ndarray, action: int):
        """`transitions` for an (n, d) batch: (source row, prob, next state, reward, terminal)."""
        source, prob, after, _reward, terminal = self.model.batch_transitions(
            self._batch_full(states), action
        )
        solo = self.model.batch_observation(after, AGENT)[:, self._keep]
        turn_over = terminal | (self.model.batch_to_move(after) != AGENT)
        if self.objective == "turns":
            return source, prob, solo, -turn_over.astype(float), terminal
        before = states.reshape(len(states), -1)[source, self._keep.index(self._own)]
        gained = solo[:, self._keep.index(self._own)] - before
        return source, prob, solo, np.where(turn_over, gained, 0).astype(float), turn_over

    def batch_legal(self, states: np.ndarray) -> np.ndarray:
        return self.model.batch_legal(self._batch_full(states))

    def batch_observation(self, states: np.ndarray) -> np.ndarray:
        return states

    def validate_state(self, state: object) -> tuple[int, ...]:
        names = ", ".join(self.observation_names)
        try:
            solo = tuple(int(v) for v in np.asarray(state).reshape(-1))
        except (TypeError, ValueError):
            raise ValueError(f"state must be ({names}), got {state!r}") from None
        if len(solo) != len(self._keep):
            raise ValueError(f"state must be ({names}), got {state!r}")
        solo = self._solo(self._full(solo[0] if self._scalar else solo))  # the model checks it
        if self.objective == "turn_score" and self._score(solo) != 0:
            raise ValueError("the turn_score game is one turn from score 0: score must be 0")
        return solo

    def render_text(self, state: tuple[int, ...]) -> str:
        parts = [
            f"{name} {value}"
            for name, value in zip(self.observation_names, self._values(state), strict=True)
        ]
        return ", ".join(parts) + f" (goal {self.goal}, {self.objective})"

    def picture(self, state: tuple[int, ...], context: dict):
        dice = [(face, False) for face in context.get("rolls", [])]
        size = getattr(self, "picture_size", (5, 2))
        values = "  ".join(
            f"{n.upper()} {v}"
            for n, v in zip(self.observation_names, self._values(state), strict=True)
        )
        lines = [f"{values}  GOAL {self.goal}", f"RETURN {context['episode_return']:g}"]
        return dice[-size[0] :], lines


def fold_factory(model_class: type, default_opponent: str) -> Callable[..., Any]:
    """The single-agent model of a two-player game: `model_class`'s keyword arguments plus
    `opponent` (default `default_opponent`) and, for alternating moves, `agent_starts`. A
    simultaneous-move model (`simultaneous = True`) is folded by `SimultaneousFold`."""
    extra = [
        inspect.Parameter("opponent", inspect.Parameter.KEYWORD_ONLY, default=default_opponent)
    ]
    if getattr(model_class, "simultaneous", False):
        from dice_envs.games.simultaneous import SimultaneousFold  # it imports this module

        def make(opponent: object = default_opponent, **kwargs):
            return SimultaneousFold(model_class(**kwargs), opponent)

    else:

        def make(opponent: object = default_opponent, agent_starts: bool | None = None, **kwargs):
            return Fold(model_class(**kwargs), opponent, agent_starts)

        extra.append(
            inspect.Parameter("agent_starts", inspect.Parameter.KEYWORD_ONLY, default=None)
        )
    make.__doc__ = model_class.__doc__
    make.__name__ = make.__qualname__ = f"{model_class.__name__}Versus"
    make.model_class = model_class  # type: ignore[attr-defined]
    parameters = [p for p in inspect.signature(model_class).parameters.values() if p.name != "self"]
    make.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [*(p.replace(kind=p.KEYWORD_ONLY) for p in parameters), *extra]
    )
    return make


__all__ = [
    "AGENT",
    "OPPONENT",
    "Fold",
    "GameModel",
    "MoverView",
    "Policy",
    "Solitaire",
    "TwoPlayerModel",
    "fold_factory",
    "policy",
]

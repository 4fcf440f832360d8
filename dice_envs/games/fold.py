"""The fold of a two-player model with a fixed opponent: the single-agent game against it.

The single-agent game "against a fixed opponent" is not written by hand for any game: it is
`Fold(model, opponent, agent_starts)`, which sums over the opponent's whole turn. The agent
always sits in seat 0 of the folded states (a symmetric game's seats are swapped when the
opponent starts), so an observation identifies its state whoever started. `fold_factory`
makes the registered model of a two-player game (a simultaneous one's is `SimultaneousFold`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from dice_envs.games.base import (
    Observation,
    State,
    Transition,
    check_choice,
    cumulative,
    draw,
    sample_transition,
)
from dice_envs.games.seat_policy import opponent_spec, policy
from dice_envs.games.simultaneous import SimultaneousFold
from dice_envs.games.two_player import AGENT, OPPONENT, AgentSeat, TwoPlayerModel, _game_parameter
from dice_envs.progress import task as progress_task

# The exact fold refuses an opponent's turn longer than this many steps.
MAX_TURN_STEPS = 100_000


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
        self.opponent = opponent = opponent_spec(model, opponent)
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
        firsts = model.initial_states()
        self._first_draw = (cumulative([p for p, _ in firsts]), [s for _, s in firsts])
        # Fast paths the env calls every step: the model's own answers where they are the
        # fold's (no game ends before the agent moves), and its observer of seat 0.
        if not self._over:
            self.legal_actions = model.legal_actions  # type: ignore[method-assign]
        observer = getattr(model, "observer", None)
        if observer is not None:
            self.observation = observer(AGENT)  # type: ignore[method-assign]
        if self._turn_sampler is not None and self._sampler is not None:
            self._theirs_key = self._single_event[1]
            self.sample_step = self._sample_by_turns  # type: ignore[method-assign]
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
        if state in self._over:  # the game ended in the opponent's turn
            return f"{self.model.render_text(state, AGENT)}: the opponent won"
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

    def _sample_by_turns(self, state: State, action: int, uniform: Callable[[], float]):
        """`sample_step` for a model that samples its own steps (a fresh info dict holding its
        one event key) and the opponent's whole turn (Pig, Hog): the same draws in the same
        order as `play_opponent`, with fewer calls (the env steps here)."""
        if self._over and state in self._over:
            return state, self._over[state], True, self._events({}, None)
        state, reward, terminal, info = self._sampler(state, action, uniform)
        if terminal or self._to_move(state) == AGENT:
            info[self._theirs_key] = []
            return state, reward, terminal, info
        state, more, terminal, info[self._theirs_key] = self._turn_sampler(
            state, self._opponent_choices, self._choice, uniform
        )
        return state, reward + more, terminal, info

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
        bounds, firsts = self._first_draw
        state = firsts[draw(bounds, uniform)]
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
        report = progress_task("the opponent's turns", unit="steps")
        for _ in range(MAX_TURN_STEPS):
            report.advance()
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
        report.finish()
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


def fold_factory(model_class: type, default_opponent: str) -> Callable[..., Any]:
    """The single-agent model of a two-player game: `model_class`'s keyword arguments plus
    `opponent` (default `default_opponent`) and, for alternating moves, `agent_starts`. A
    simultaneous-move model (`simultaneous = True`) is folded by `SimultaneousFold`."""
    extra = [
        inspect.Parameter("opponent", inspect.Parameter.KEYWORD_ONLY, default=default_opponent)
    ]
    if getattr(model_class, "simultaneous", False):

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

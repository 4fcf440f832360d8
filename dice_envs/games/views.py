"""Single-agent views of a two-player model other than the fold: the mover's view (both seats
as one agent, for self-play and the two-player optimum) and the solitaire game (one seat, the
other never moving)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dice_envs.games.base import (
    Observation,
    State,
    TableSize,
    Transition,
    check_choice,
    sample_transition,
)
from dice_envs.games.policy_forms import SEAT_SOLUTIONS
from dice_envs.games.seat_policy import seat_policy
from dice_envs.games.two_player import AGENT, OPPONENT, TwoPlayerModel, _game_parameter


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

    @property
    def policy_descriptions(self) -> dict[str, str]:
        return dict(getattr(self.model, "policy_descriptions", {}))

    def named_policy(self, name: str) -> np.ndarray | None:
        """The two-player model's named policy with the opponent's score at 0 (hold-at-K alone
        holds at the lesser of K and the points still needed, as in the race)."""
        if name in SEAT_SOLUTIONS:
            return None  # the race's optimum is not the solitaire game's
        own = self.model.named_policy(name)
        if own is None:
            return None
        if isinstance(own, np.ndarray):  # probabilities over the race's grid: its slice
            table = own.take(0, axis=self._other)
        else:  # asked on the slice where the opponent has 0 only, not the race's whole grid
            nvec = [int(n) for n in self.model.observation_nvec]
            nvec[self._other] = 1
            grid = np.indices(nvec).reshape(len(nvec), -1).T
            probs = seat_policy(self.model, name).batch_probs(grid)
            table = probs.reshape(tuple(nvec) + probs.shape[1:]).take(0, axis=self._other)
        actions = table.argmax(axis=-1)
        return actions if np.all(table.max(axis=-1) == 1.0) else table

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

    def table_size(self) -> TableSize | None:
        """The two-player model's estimate of its solitaire's tables (None if it has none)."""
        sizer = getattr(self.model, "table_size", None)
        return None if sizer is None else sizer("solitaire")

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

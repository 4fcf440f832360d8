"""Simultaneous-move two-player models, and their fold with a fixed opponent.

A simultaneous-move model is a two-player model in which both players choose at once, each
seeing only its own observation of the position: `joint_transitions(state, (a0, a1))` lists
the outcomes of the joint move, rewards for player 0 (1 to the winner at the end, so every
value is a win probability). It has the two-player model's `observation(state, player)`,
`state_of`, `named_policy` and `render_text`, and `legal_actions(state, player)`.

`SimultaneousFold(model, opponent)` is the single-agent game against a fixed opponent: the agent
is player 0, and each step the opponent chooses from its policy at its own observation, never
seeing the agent's choice; its mixture is summed exactly in `transitions`. It is the analogue
of `Fold` for alternating games, and the same opponent forms are accepted (`policy`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from dice_envs.games.base import Observation, State, Transition, cumulative, draw
from dice_envs.games.seat_policy import Policy, opponent_spec, policy
from dice_envs.games.two_player import AGENT, OPPONENT, AgentSeat, _game_parameter


@runtime_checkable
class SimultaneousModel(Protocol):
    """What a simultaneous-move model provides (see the module docstring)."""

    simultaneous: bool
    num_actions: int
    action_names: tuple[str, ...]
    observation_nvec: tuple[int, ...]
    policy_names: tuple[str, ...]

    def initial_states(self) -> list[tuple[float, State]]: ...

    def legal_actions(self, state: State, player: int) -> tuple[int, ...]: ...

    def joint_transitions(self, state: State, actions: tuple[int, int]) -> list[Transition]: ...

    def observation(self, state: State, player: int) -> Observation: ...

    def state_of(self, observation: object, player: int) -> State: ...

    def named_policy(self, name: str) -> Any: ...

    def render_text(self, state: State, player: int) -> str: ...


class SimultaneousFold(AgentSeat):
    """A simultaneous-move model against a fixed opponent, as a single-agent `GameModel`.

    The agent is player 0. A step is one joint move: the agent's action, and the opponent's,
    drawn from its policy at its own observation of the same position (it does not see the
    agent's). `transitions` sums over the opponent's mixture exactly; `sample_step` draws the
    opponent's action, then the model's joint outcome. The info of a step lists what each side
    threw (the opponent's keys get the prefix "opponent_").
    """

    def __init__(self, model: SimultaneousModel, opponent: object) -> None:
        self.model = model
        self.__doc__ = type(model).__doc__
        self.opponent = opponent = opponent_spec(model, opponent)
        self.opponent_policy: Policy = policy(model, opponent)
        self.num_actions = model.num_actions
        self.action_names = model.action_names
        self.observation_nvec = model.observation_nvec
        self.observation_names = getattr(model, "observation_names", None)
        self.face_probs = getattr(model, "face_probs", None)
        self._opponent_view = model.observer(OPPONENT)
        self.observation = model.observer(AGENT)  # type: ignore[method-assign]
        self._choices: dict[State, int | list[float]] = {}
        self._event_keys = tuple(getattr(model, "event_keys", ()))
        self.batchable = hasattr(model, "batch_transitions_against")
        if self.batchable:
            self.state_bounds = model.state_bounds

    def __repr__(self) -> str:
        opponent = self.opponent if isinstance(self.opponent, str) else self.opponent_policy.name
        return f"{self.model!r} vs {opponent}"

    __getattr__ = _game_parameter  # the game's own parameters (goal, max_dice, ...) read through

    def initial_states(self) -> list[tuple[float, State]]:
        return self.model.initial_states()

    def legal_actions(self, state: State) -> tuple[int, ...]:
        return self.model.legal_actions(state, AGENT)

    def sample_start(self, uniform: Callable[[], float]) -> tuple[State, dict]:
        starts = self.model.initial_states()
        state = starts[draw(cumulative([p for p, _ in starts]), uniform)][1]
        return state, self.no_events()

    def opponent_probs(self, state: State) -> np.ndarray:
        """The opponent's action probabilities at `state` (from its own observation)."""
        return self.opponent_policy.probs(self._opponent_view(state))

    def transitions(self, state: State, action: int) -> list[Transition]:
        probs = self.opponent_probs(state)
        totals: dict[tuple[State, float, bool], float] = {}
        for theirs in np.flatnonzero(probs).tolist():
            weight = float(probs[theirs])
            for prob, next_state, reward, terminal in self.model.joint_transitions(
                state, (action, theirs)
            ):
                key = (next_state, reward, terminal)
                totals[key] = totals.get(key, 0.0) + weight * prob
        return [Transition(p, s, r, t) for (s, r, t), p in totals.items()]

    def sample_step(self, state: State, action: int, uniform: Callable[[], float]):
        """The opponent's action is drawn first, then the joint move, all with `uniform()`."""
        choice = self._choices.get(state)
        if choice is None:
            choice = self._choices[state] = self.opponent_policy.choice(self._opponent_view(state))
        theirs = choice if choice.__class__ is int else draw(choice, uniform)
        next_state, reward, terminal, info = self.model.sample_joint(
            state, (action, theirs), uniform
        )
        return next_state, reward, terminal, self._events(info)

    def _events(self, info: dict) -> dict:
        if len(self._event_keys) == 1:  # the common case, on every step
            key = self._event_keys[0]
            ours, theirs = info.get(key, ([], []))
            return {key: ours, "opponent_" + key: theirs}
        events = {}
        for key in self._event_keys:
            ours, theirs = info.get(key, ([], []))
            events[key], events["opponent_" + key] = ours, theirs
        return events

    def no_events(self) -> dict:
        """The info of a step in which nobody threw anything (a reset)."""
        return self._events({})

    def validate_state(self, state: object) -> State:
        """A position, given as the agent's observation or as the model's state."""
        try:
            return self.model.state_of(state, AGENT)
        except ValueError as as_observation:
            try:
                return self.model.validate_state(state)
            except ValueError:
                raise as_observation from None

    def render_text(self, state: State) -> str:
        return self.model.render_text(state, AGENT)

    # -- the same fold for a batch of states (the fast table builder; tests hold them equal) ----
    def batch_legal(self, states: np.ndarray) -> np.ndarray:
        return self.model.batch_legal(states)

    def batch_observation(self, states: np.ndarray) -> np.ndarray:
        return self.model.batch_observation(states, AGENT)

    def batch_transitions(self, states: np.ndarray, action: int):
        """`transitions` for an (n, d) batch: (source row, prob, next state, reward, terminal)."""
        probs = self.opponent_policy.batch_probs(self.model.batch_observation(states, OPPONENT))
        return self.model.batch_transitions_against(states, action, probs)


__all__ = ["SimultaneousFold", "SimultaneousModel"]

"""Two-player models: the protocol, the seats, and what a single-agent view shows of its seat.

A two-player model is a `GameModel` whose states say whose turn it is (`to_move`), seen by either
player (`observation(state, player)`). Player 0 moves first in `initial_states`. Rewards are
player 0's; a game pays 1 to its winner at the end, so player 1 earns 1 minus player 0's final
reward, and every value is a win probability. A symmetric game (both seats play by the same
rules) also has `swap_seats(state)`, the same position with the players' seats exchanged.

The single-agent game against a fixed opponent is its fold (`dice_envs.games.fold`); the other
views (the mover's, the solitaire game) are in `dice_envs.games.views`; the policies of a seat
in `dice_envs.games.seat_policy`.
"""

from __future__ import annotations

import numpy as np

from dice_envs.games.base import (
    State,
    TwoPlayerModel,
)
from dice_envs.games.seat_policy import (
    named_policy_descriptions,
    named_policy_names,
    named_table,
)

AGENT, OPPONENT = 0, 1


def _game_parameter(view, name: str):
    """A view's `__getattr__`: the wrapped game's own public attributes (goal, sides, ...)."""
    model = view.__dict__.get("model")
    if model is not None and name in vars(model) and not name.startswith("_"):
        return vars(model)[name]
    raise AttributeError(name)


class AgentSeat:
    """What a fold shows of its game from the agent's seat (seat 0): its picture and its named
    policies (the two-player model's, played from seat 0)."""

    model: TwoPlayerModel

    @property
    def policy_names(self) -> tuple[str, ...]:
        return named_policy_names(self.model)

    @property
    def policy_descriptions(self) -> dict[str, str]:
        return named_policy_descriptions(self.model)

    def named_policy(self, name: str) -> np.ndarray | None:
        """The two-player model's named policy for the agent's seat, over the observation
        grid (actions, or action probabilities where it mixes)."""
        return named_table(self.model, name)

    def picture(self, state: State, info: dict) -> tuple[list[tuple[int, bool]], list[str]]:
        return self.model.picture(state, AGENT, info)

    @property
    def picture_size(self) -> tuple[int, int]:
        return self.model.picture_size


__all__ = ["AGENT", "OPPONENT", "AgentSeat", "TwoPlayerModel"]

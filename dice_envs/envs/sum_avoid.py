from __future__ import annotations

import numpy as np

from dice_envs.envs.base import DiceEnv
from dice_envs.envs.rendering import render_scene
from dice_envs.games.sum_avoid import SumAvoid


class SumAvoidEnv(DiceEnv):
    """Roll a die and add the faces; stop whenever you like, but never hit a multiple of N.

    ## Description
    The sum starts at 0. Each step the player either stops, and is paid the sum, or rolls a fair
    die with `sides` faces and adds the face. A sum that is a positive multiple of `N` ends the
    game with nothing. With N=10 and a six-sided die the optimal expected payoff is 13.217
    (../shared/seeds/000); the exact optimal policy comes from `baselines.solve`.

    ## Action Space
    `Discrete(2)`: 0 stop, 1 roll. Both are always legal; `info["action_mask"]` is all ones.

    ## Observation Space
    `Discrete(max_sum + sides + 1)`: the current sum.

    ## Rewards
    The sum when the player stops (or passes `max_sum`), 0 on a bust; nothing before the end.

    ## Starting State
    The sum is 0.

    ## Episode End
    Termination: the player stops, the sum hits a positive multiple of N, or the sum exceeds
    `max_sum` (paid as a stop). No truncation: at most `max_sum` rolls can happen.

    ## Arguments
    - `N=10`: the sums to avoid are its positive multiples; an integer >= 2.
    - `sides=6`: faces of the fair die, 1..sides; an integer >= 2.
    - `max_sum=None`: the cap; `None` gives `sides * (N + sides)`, which optimal play of the
      uncapped game never passes, so the optimal value is the uncapped game's (see
      `dice_envs.games.sum_avoid.default_max_sum`). An integer >= 1.
    - `render_mode=None`: `"ansi"` (one line of text) or `"rgb_array"` (the die and the sum).

    ## Version History
    - v0: initial version.
    """

    def __init__(
        self,
        render_mode: str | None = None,
        N: int = 10,
        sides: int = 6,
        max_sum: int | None = None,
    ) -> None:
        super().__init__(SumAvoid(N=N, sides=sides, max_sum=max_sum), render_mode)

    def _picture(self) -> np.ndarray:
        total, model = self.state, self.model
        rolled = self.last_action == 1
        status = "BUST" if model.is_bust(total) else ("GAME OVER" if self.done else "")
        lines = [f"SUM {total}  {status}", f"AVOID X{model.N}  RETURN {self.episode_return:g}"]
        die = [(total - self.previous_state, False)] if rolled else []
        return render_scene(die, lines, pips=model.sides <= 6)

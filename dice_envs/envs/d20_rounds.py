from __future__ import annotations

import numpy as np

from dice_envs.envs.base import DiceEnv
from dice_envs.envs.rendering import render_scene
from dice_envs.games.d20_rounds import D20Rounds


class D20RoundsEnv(DiceEnv):
    """A d20 showing 1 and a number of rounds: each round take its face in dollars, or reroll.

    ## Description
    The game lasts `rounds` rounds. A die with `sides` faces starts showing `start_face`. Each
    round the player either takes money equal to the face (the die keeps showing it) or rerolls
    (no money this round; the new face shows in the next round). The question of
    ../shared/seeds/001: which faces are worth taking, given the rounds left? The exact answer
    is `baselines.solve("dice_envs/D20Rounds-v0")`.

    ## Action Space
    `Discrete(2)`: 0 take, 1 reroll. Both are always legal; `info["action_mask"]` is all ones.

    ## Observation Space
    `MultiDiscrete([rounds + 1, sides + 1])`: (rounds left including the current one, face
    showing). The face is 1..sides; rounds left is 0 only in the final observation.

    ## Rewards
    The face on a take, 0 on a reroll.

    ## Starting State
    (rounds, start_face).

    ## Episode End
    Termination after `rounds` steps. No truncation.

    ## Arguments
    - `rounds=100`: the number of rounds; an integer >= 1.
    - `sides=20`: faces of the fair die; an integer >= 2.
    - `start_face=1`: the face showing at the start; an integer in 1..sides.
    - `render_mode=None`: `"ansi"` (one line of text) or `"rgb_array"` (the die and the money).

    ## Version History
    - v0: initial version.
    """

    def __init__(
        self,
        render_mode: str | None = None,
        rounds: int = 100,
        sides: int = 20,
        start_face: int = 1,
    ) -> None:
        super().__init__(D20Rounds(rounds=rounds, sides=sides, start_face=start_face), render_mode)

    def _picture(self) -> np.ndarray:
        rounds_left, face = self.state
        lines = [f"ROUNDS LEFT {rounds_left}", f"MONEY {self.episode_return:g}"]
        return render_scene([(face, False)], lines, pips=self.model.sides <= 6)

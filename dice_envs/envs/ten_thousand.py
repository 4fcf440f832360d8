from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from dice_envs.envs.base import DiceEnv
from dice_envs.envs.rendering import render_scene
from dice_envs.games.ten_thousand import CONFIGS, TenThousand


class TenThousandEnv(DiceEnv):
    """One turn of solitaire Ten Thousand (Farkle), scored in chips, as Crocce and Mordecki
    model it.

    ## Description
    Roll five dice. Each 5 scores 1 chip (50 points), each 1 scores 2, three 2s, 3s, 4s, 5s,
    6s score 4, 6, 8, 10, 12 and three 1s score 20 (nothing else scores: no straights, no
    three pairs). After a roll every scoring die is set aside; a roll without one ends the
    turn with nothing; when every rolled die scores, five dice are rolled anew (hot dice).
    Between rolls the player stops and banks the turn score, rolls the dice in hand, or gives
    back scoring combinations of the last roll and rolls those dice too. The optimal expected
    turn score is 5.872019 chips (`baselines.solve("dice_envs/TenThousand-v0")`).

    ## Action Space
    `Discrete(15)`: 0 stop, 1 roll, 2..14 give back and roll, in the order of the paper's
    labels "5", "1", "55", "51", "11", "551", "511", "t1", "t2", "t3", "t4", "t5", "t6"
    (one 5; one 1; two 5s; a 5 and a 1; two 1s; two 5s and a 1; a 5 and two 1s; three 1s; the
    triple of 2s, 3s, 4s; three 5s; the triple of 6s). `info["action_mask"]` and
    `action_masks()` give the legal ones: stop not before the first roll; a give-back only of
    combinations the last roll scored, keeping at least one, with fewer than five dice in hand,
    and only for labels in `allowed_moves`. An illegal action is played as a roll.

    ## Observation Space
    `MultiDiscrete([max_turn_score + 25, 45, 6])`: (turn score in chips, index of the last
    roll's configuration [fives, ones, triple face] in `dice_envs.games.ten_thousand.CONFIGS`,
    dice in hand). Configuration 0 means five fresh dice (the start, or after hot dice); dice
    in hand 0 appears only in the final observation after a non-scoring roll.

    ## Rewards
    The turn score in chips on a stop (or when the score passes `max_turn_score`), 0 after a
    non-scoring roll; nothing before the end.

    ## Starting State
    Turn score 0, five dice in hand.

    ## Episode End
    Termination on a stop, a non-scoring roll, or a turn score above `max_turn_score`.

    ## Info
    `info["dice"]`: the faces just rolled (empty on a stop).

    ## Arguments
    - `allowed_moves=None`: the give-back labels allowed (default all); `[]` gives the
      stop-or-roll game of the paper's section 5.1, `["5", "1"]` a restricted game of its
      Table 4.
    - `max_turn_score=100`: a turn score above it (in chips) ends the turn as a stop; any cap
      of 55 or more leaves the optimal value unchanged (stopping is optimal from 56 on, the
      paper's Lemma 4.3). An integer >= 1.
    - `render_mode=None`: `"ansi"` or `"rgb_array"` (the dice, scoring ones bright).

    ## Version History
    - v0: initial version.
    """

    def __init__(
        self,
        render_mode: str | None = None,
        allowed_moves: Iterable[str] | None = None,
        max_turn_score: int = 100,
    ) -> None:
        model = TenThousand(allowed_moves=allowed_moves, max_turn_score=max_turn_score)
        super().__init__(model, render_mode)

    def _text(self) -> str:
        dice = self.last_info.get("dice")
        text = super()._text()
        return text + (" | rolled " + " ".join(map(str, dice)) if dice else "")

    def _picture(self) -> np.ndarray:
        tau, config_index, n = self.state
        dice = self.last_info.get("dice", [])
        f, o, t = CONFIGS[config_index] if n else (0, 0, 0)
        triple = 3 if t else 0
        shown = []
        for face in dice:  # scoring dice bright, the rest dim
            scoring = face in (1, 5) or (face == t and triple > 0)
            if face == t and triple > 0:
                triple -= 1
            shown.append((face, not scoring))
        lines = [f"TURN SCORE {tau} CHIPS ({50 * tau} PTS)", f"DICE IN HAND {n}"]
        if self.done:
            lines.append("BUST" if n == 0 else "BANKED")
        return render_scene(shown, lines, width=max(320, 12 + 60 * len(shown)))

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from dice_envs.envs.base import DiceEnv
from dice_envs.envs.rendering import render_scene
from dice_envs.games.pig import Pig


class PigEnv(DiceEnv):
    """Two-player Pig against a fixed opponent: roll for points, but a 1 loses the turn.

    ## Description
    Two players race to `goal` points. On a turn a player rolls a die repeatedly: face 1 loses
    the turn total and ends the turn; any other face adds to the turn total; holding banks the
    turn total. A player whose score plus turn total reaches the goal wins at once. The agent
    plays one side; the opponent's whole turn is played inside `step`, die by die. Neller and
    Presser (2004) computed optimal play: with both players optimal the first player wins
    0.5306 of games at goal 100. `baselines.solve("dice_envs/Pig-v0", ...)` gives the exact
    best response to the configured opponent.

    ## Action Space
    `Discrete(2)`: 0 hold, 1 roll. A turn starts with a roll: at turn total 0 hold is masked
    out (`info["action_mask"]`, `action_masks()`), and if taken anyway it is played as a roll.

    ## Observation Space
    `MultiDiscrete([goal + 1, goal + 1, goal])`: (own score, opponent score, turn total). A
    final observation shows the winner's score as `goal`.

    ## Rewards
    1 when the agent wins, 0 otherwise: the expected return is the win probability.

    ## Starting State
    Scores 0. If the opponent starts (`agent_starts=False`, or the coin says so), its first
    turn is played in `reset`. In the rare case it reaches the goal in that turn (only possible
    when one turn can reach it), the first observation is (0, goal, 0) and any action ends the
    episode with reward 0.

    ## Episode End
    Termination when either player reaches the goal. No truncation; every opponent offered
    ends its turns, and the game ends with probability 1.

    ## Info
    `info["rolls"]`: the agent's die this step (empty on a hold); `info["opponent_rolls"]`:
    the opponent's dice in the turn it played this step (empty if it did not play).

    ## Arguments
    - `goal=100`: points to win; an integer >= 1. Smaller goals (20, 30, 50) make fast
      experiments.
    - `sides=6`: faces of a fair die; `die_probs` (a probability per face, face 1 first, the
      losing face) replaces it for loaded dice.
    - `opponent="hold-at-20"`: `"hold-at-K"` (hold once the turn total reaches K, K >= 1),
      `"keep-pace"` (Neller and Presser's "keep pace and end race"), `"optimal"` (the
      two-player optimum), `"random"` (rolls or holds with probability 1/2), or a callable
      `f(own, other, turn_total) -> 0 hold / 1 roll` seen from the opponent's side.
    - `agent_starts=None`: None flips a fair coin per episode; True or False fixes who starts.
    - `render_mode=None`: `"ansi"` (one line of text) or `"rgb_array"` (the dice and scores).

    ## Version History
    - v0: initial version.
    """

    def __init__(
        self,
        render_mode: str | None = None,
        goal: int = 100,
        sides: int = 6,
        die_probs: Sequence[float] | None = None,
        opponent: str | Callable[[int, int, int], int] = "hold-at-20",
        agent_starts: bool | None = None,
    ) -> None:
        model = Pig(
            goal=goal,
            sides=sides,
            die_probs=die_probs,
            opponent=opponent,
            agent_starts=agent_starts,
        )
        super().__init__(model, render_mode)

    def _text(self) -> str:
        text = super()._text()
        rolls, theirs = self.last_info.get("rolls"), self.last_info.get("opponent_rolls")
        if rolls:
            text += f" | you rolled {rolls[0]}"
        if theirs:
            text += " | opponent rolled " + " ".join(map(str, theirs))
        return text

    def _picture(self) -> np.ndarray:
        own, opponent, turn = self.state
        pips = self.model.sides <= 6
        dice = [(face, False) for face in self.last_info.get("rolls", [])]
        dice += [(face, True) for face in self.last_info.get("opponent_rolls", [])][-4:]
        lines = [f"YOU {own}  OPPONENT {opponent}", f"TURN TOTAL {turn}  GOAL {self.model.goal}"]
        if self.done:
            lines.append("YOU WIN" if self.episode_return > 0 else "YOU LOSE")
        return render_scene(dice[:5], lines, pips=pips)

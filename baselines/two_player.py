"""Two-player optima offered to dice_envs as opponents (the "optimal" name of every fold).

`dice_envs` resolves opponent names it does not know through the `dice_envs.policies` entry
points (pyproject.toml), so the games never import a solver.
"""

from __future__ import annotations

import numpy as np

from dice_envs.games.pig import HOLD, ROLL, Pig


def optimal_policy(model) -> np.ndarray:
    """Action probabilities over the model's observation grid of its two-player optimum."""
    if isinstance(model, Pig):
        from baselines.pig import two_player_optimum

        roll = two_player_optimum(model.goal, model.face_probs).roll
        goal = model.goal
        table = np.zeros(tuple(model.observation_nvec) + (2,))
        table[..., ROLL] = 1.0
        table[:goal, :goal, :, ROLL] = roll
        table[..., HOLD] = 1.0 - table[..., ROLL]
        return table
    raise ValueError(f"no two-player solver for {model!r} yet")

"""Gymnasium environments for dice games whose exact optimum is known.

Importing the package registers the ids of `dice_envs.registration.GAMES`:

    import gymnasium as gym
    import dice_envs

    env = gym.make("dice_envs/SumAvoid-v0", N=10)
"""

from dice_envs.registration import (
    GAMES,
    Game,
    GameSpec,
    Reference,
    env_ids,
    find_game,
    game,
    make_model,
    register_game,
    unregister_game,
)

# The one place the version is written: pyproject.toml reads it (dynamic = ["version"]).
__version__ = "0.6.0"
__all__ = [
    "GAMES",
    "Game",
    "GameSpec",
    "Reference",
    "__version__",
    "env_ids",
    "find_game",
    "game",
    "make_model",
    "register_game",
    "unregister_game",
]

"""Gymnasium environments for dice games whose exact optimum is known.

Importing the package registers the ids of `dice_envs.registration.GAMES`:

    import gymnasium as gym
    import dice_envs

    env = gym.make("dice_envs/SumAvoid-v0", N=10)
"""

from typing import Any

from dice_envs import registration
from dice_envs.registration import (
    GAMES,
    Game,
    Reference,
    env_ids,
    game,
    make_model,
    register_game,
    unregister_game,
)

# The one place the version is written: pyproject.toml reads it (dynamic = ["version"]).
__version__ = "0.5.0"
__all__ = [
    "ENV_IDS",
    "GAMES",
    "Game",
    "Reference",
    "__version__",
    "env_ids",
    "game",
    "make_model",
    "register_game",
    "unregister_game",
]


def __getattr__(name: str) -> Any:
    # ENV_IDS reads the live registry (a game registered after import is in it).
    if name == "ENV_IDS":
        return registration.env_ids()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

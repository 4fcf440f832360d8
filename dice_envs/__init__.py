"""Gymnasium environments for dice games whose exact optimum is known.

Importing the package registers the ids of `dice_envs.registration.GAMES`:

    import gymnasium as gym
    import dice_envs

    env = gym.make("dice_envs/SumAvoid-v0", N=10)
"""

from dice_envs.registration import ENV_IDS, GAMES, make_model, register_game

# The one place the version is written: pyproject.toml reads it (dynamic = ["version"]).
__version__ = "0.3.0"
__all__ = ["ENV_IDS", "GAMES", "make_model", "register_game", "__version__"]

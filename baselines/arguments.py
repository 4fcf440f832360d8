"""Game arguments from a command line (`dice_envs.arguments`, here for `python -m baselines`)."""

from dice_envs.arguments import parse_kwargs

__all__ = ["parse_kwargs"]

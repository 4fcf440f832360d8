"""Every environment id, registered in this one place, with the model behind it.

The optimal expected return at the default arguments stands beside each id; `make demo`
recomputes them.
"""

from __future__ import annotations

import importlib
from typing import Any

import gymnasium as gym

from dice_envs.games.base import GameModel

# id -> (env entry point, model class). The env and the model take the same keyword arguments.
GAMES: dict[str, tuple[str, str]] = {
    # optimum 13.2172 (N=10, sides=6); seed 000 prints 13.217
    "dice_envs/SumAvoid-v0": (
        "dice_envs.envs.sum_avoid:SumAvoidEnv",
        "dice_envs.games.sum_avoid:SumAvoid",
    ),
    # optimum 1773.3399 (rounds=100, sides=20, start_face=1)
    "dice_envs/D20Rounds-v0": (
        "dice_envs.envs.d20_rounds:D20RoundsEnv",
        "dice_envs.games.d20_rounds:D20Rounds",
    ),
    # optimum 0.5549 (goal=100, sides=6, opponent="hold-at-20", coin flip): the win probability
    # of the exact best response; both players optimal, the first player wins 0.5306
    "dice_envs/Pig-v0": ("dice_envs.envs.pig:PigEnv", "dice_envs.games.pig:Pig"),
    # optimum 5.872019 chips (all moves); 5.576326 with allowed_moves=[] (Crocce and Mordecki)
    "dice_envs/TenThousand-v0": (
        "dice_envs.envs.ten_thousand:TenThousandEnv",
        "dice_envs.games.ten_thousand:TenThousand",
    ),
}

ENV_IDS = tuple(GAMES)


def _load(path: str):
    module, name = path.split(":")
    return getattr(importlib.import_module(module), name)


def make_model(env_id: str, **kwargs: Any) -> GameModel:
    """The game model behind `env_id`, built from the same keyword arguments as the env."""
    if env_id not in GAMES:
        raise ValueError(f"env_id must be one of {list(ENV_IDS)}, got {env_id!r}")
    kwargs.pop("render_mode", None)
    return _load(GAMES[env_id][1])(**kwargs)


def register_envs() -> None:
    for env_id, (entry_point, _model) in GAMES.items():
        if env_id not in gym.registry:
            gym.register(id=env_id, entry_point=entry_point)

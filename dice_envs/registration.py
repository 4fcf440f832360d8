"""Every environment id, registered in this one place, with the model behind it.

A game is one entry: its id, the model (a class or factory taking the env's keyword
arguments, as an import path), and a few small argument sets that exercise it (the
conformance tests run every id with each). The optimal expected return at the default
arguments stands beside each id; `make demo` recomputes them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from dice_envs.games.base import GameModel, build_model

ENV_ENTRY_POINT = "dice_envs.envs.base:DiceEnv"
VECTOR_ENTRY_POINT = "dice_envs.envs.vector:DiceVectorEnv"


@dataclass(frozen=True)
class Game:
    """One registered game: its model (import path or callable) and small example arguments."""

    env_id: str
    model: str | Callable[..., GameModel]
    examples: tuple[dict[str, Any], ...] = field(default=({},))


GAMES: dict[str, Game] = {}


def register_game(
    env_id: str,
    model: str | Callable[..., GameModel],
    examples: tuple[dict[str, Any], ...] | list[dict[str, Any]] = ({},),
) -> None:
    """Register `env_id` with Gymnasium: the one env class over `model(**kwargs)`, and the one
    native vector env over its tables (`gym.make_vec(env_id, num_envs=n, **kwargs)`)."""
    GAMES[env_id] = Game(env_id, model, tuple(examples))
    if env_id not in gym.registry:
        gym.register(
            id=env_id,
            entry_point=ENV_ENTRY_POINT,
            vector_entry_point=VECTOR_ENTRY_POINT,
            kwargs={"model": model},
        )


# optimum 13.2172 (N=10, sides=6); seed 000 prints 13.217
register_game(
    "dice_envs/SumAvoid-v0",
    "dice_envs.games.sum_avoid:SumAvoid",
    [{}, {"N": 7, "sides": 4}, {"N": 3, "sides": 8, "max_sum": 30}],
)
# optimum 1773.3399 (rounds=100, sides=20, start_face=1)
register_game(
    "dice_envs/D20Rounds-v0",
    "dice_envs.games.d20_rounds:D20Rounds",
    [{"rounds": 12}, {"rounds": 5, "sides": 6, "start_face": 3}, {"rounds": 1}],
)
# optimum 0.5549 (goal=100, fair d6, opponent="hold-at-20", coin flip): the win probability
# of the exact best response; both players optimal, the first player wins 0.5306
register_game(
    "dice_envs/Pig-v0",
    "dice_envs.games.pig:PigVersus",
    [
        {"goal": 20},
        {"goal": 12, "opponent": "keep-pace", "agent_starts": False},
        {"goal": 10, "die_probs": (0.3, 0.1, 0.1, 0.1, 0.2, 0.2), "opponent": "optimal"},
        {"goal": 3, "opponent": "random", "agent_starts": False},
    ],
)
# optimum 5.872019 chips (all moves); 5.576326 with allowed_moves=[] (Crocce and Mordecki)
register_game(
    "dice_envs/TenThousand-v0",
    "dice_envs.games.ten_thousand:TenThousand",
    [
        {},
        {"allowed_moves": [], "max_turn_score": 30},
        {"allowed_moves": ["5", "1", "t2"], "max_turn_score": 60},
    ],
)

# optimum -12.545 turns to 100 (objective="turns"); 8.14 for one turn (objective="turn_score")
register_game(
    "dice_envs/PigSolitaire-v0",
    "dice_envs.games.pig:PigSolitaire",
    [{"goal": 20}, {"goal": 12, "objective": "turn_score"}, {"goal": 10, "sides": 4}],
)
# optimum 0.6095 (goal=100, two fair d6, opponent="hold-at-20", coin flip): the best response
register_game(
    "dice_envs/TwoDicePig-v0",
    "dice_envs.games.two_dice_pig:TwoDicePigVersus",
    [
        {"goal": 20},
        {"goal": 12, "opponent": "tijms", "agent_starts": False},
        {"goal": 9, "sides": 4, "opponent": "optimal"},
        {"goal": 3, "opponent": "random", "agent_starts": False},
    ],
)
# optimum -16.923 turns to 100 (seed 002)
register_game(
    "dice_envs/TwoDicePigSolitaire-v0",
    "dice_envs.games.two_dice_pig:TwoDicePigSolitaire",
    [{"goal": 20}, {"goal": 9, "sides": 4}, {"goal": 1}],
)
# optimum 0.5 (goal=100, max_dice=10, opponent="five-dice", coin flip): the best response
register_game(
    "dice_envs/Hog-v0",
    "dice_envs.games.hog:HogVersus",
    [
        {"goal": 20},
        {"goal": 15, "max_dice": 4, "opponent": "dice-2", "agent_starts": False},
        {"goal": 12, "max_dice": 3, "sides": 4, "opponent": "optimal"},
        {"goal": 5, "opponent": "random", "agent_starts": False},
    ],
)
# optimum -13.039 turns to 100 (seed 002)
register_game(
    "dice_envs/HogSolitaire-v0",
    "dice_envs.games.hog:HogSolitaire",
    [{"goal": 20}, {"goal": 12, "max_dice": 3, "sides": 4}, {"goal": 1}],
)
# optimum 0.549986 (goal=100, max_dice=10, opponent="five-dice"): the best response; the
# equilibrium (baselines.equilibrium) is worth 1/2 to both. The television game.
register_game(
    "dice_envs/SimultaneousHog-v0",
    "dice_envs.games.simultaneous_hog:SimultaneousHogVersus",
    [
        {"goal": 12, "max_dice": 3},
        {"goal": 8, "max_dice": 2, "sides": 4, "opponent": "random"},
        {"goal": 5, "max_dice": 3, "opponent": "dice-2"},
    ],
)
# Tijms's stopping games (seed 002). optimum 5.129 (rolls=5, sides=6)
register_game(
    "dice_envs/DieStopping-v0",
    "dice_envs.games.stopping:DieStopping",
    [{}, {"rolls": 1}, {"rolls": 8, "sides": 4}],
)
# optimum 2.6245 (red=26, black=26)
register_game(
    "dice_envs/RedBlackCards-v0",
    "dice_envs.games.stopping:RedBlackCards",
    [{"red": 6, "black": 6}, {"red": 5, "black": 0}, {"red": 3, "black": 9}],
)
# optimum 0.7839 at horizon=100; any horizon steps, the tables need about horizon^2 / 2 states
register_game(
    "dice_envs/ChowRobbins-v0",
    "dice_envs.games.stopping:ChowRobbins",
    [{"horizon": 30}, {"horizon": 1}, {"horizon": 7}],
)


def env_ids() -> tuple[str, ...]:
    """Every registered id, those registered after import included."""
    return tuple(GAMES)


ENV_IDS = env_ids()


def make_model(env_id: str, **kwargs: Any) -> GameModel:
    """The game model behind `env_id`, built from the same keyword arguments as the env."""
    if env_id not in GAMES:
        raise ValueError(f"env_id must be one of {list(GAMES)}, got {env_id!r}")
    kwargs.pop("render_mode", None)
    return build_model(GAMES[env_id].model, kwargs)


def game_slug(env_id: str) -> str:
    """dice_envs/SumAvoid-v0 -> sum_avoid: the name of its configs/ folder and docs page."""
    name = env_id.split("/")[-1].split("-")[0]
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()

"""`dice-envs play`: a person plays a game in the terminal, with the exact solution beside.

Before each move it shows the position, every legal action with its exact value (what the
optimal policy gets from here after taking it), and after the move what that choice gave up
against the best one. The regrets add up to what the player's choices cost in expectation.
Yahtzee, too large for tables, has a player of its own (`dice_envs_cli.play_yahtzee`). A game may
be named by its id or its short name (`yahtzee`, `pig`, `sum_avoid`).
"""

from __future__ import annotations

from typing import Any, TextIO

import gymnasium as gym
import numpy as np

import baselines
from dice_envs import env_ids, game
from dice_envs_cli.prompt import QUIT, read_reply


def game_id(name: str) -> str:
    """The registered id a game's short name means, case, `_` and `-` aside ("yahtzee",
    "sum_avoid"); an id, or a name that matches none, comes back unchanged."""

    def squeeze(text: str) -> str:
        return text.lower().replace("_", "").replace("-", "")

    for env_id in env_ids():
        short = env_id.split("/")[-1].rsplit("-v", 1)[0]
        if squeeze(name) == squeeze(short):
            return env_id
    return name


def play(env_id: str, kwargs: dict[str, Any], seed: int | None, stdin: TextIO, out: TextIO) -> int:
    """Play one episode of `env_id` (an id or a short name) from `stdin` (an action's number or
    name per line; q quits), writing to `out`. Returns 0, or 1 when the input ends before the
    episode does."""
    env_id = game_id(env_id)
    if not game(env_id).tables:  # Yahtzee: played turn by turn on its structure-aware optimum
        from dice_envs_cli.play_yahtzee import play_yahtzee

        return play_yahtzee(kwargs, seed, stdin, out, env_id)
    solution = baselines.solve(env_id, **kwargs)
    env = gym.make(env_id, render_mode="ansi", **kwargs)
    names = env.unwrapped.model.action_names
    obs, info = env.reset(seed=seed)
    print(
        f"{env_id}: optimal expected return {solution.value:.6g}, averaged over how a game "
        "starts (who moves first, the first roll); each position below shows its own",
        file=out,
    )
    given_up, episode_return, done = 0.0, 0.0, False
    while not done:
        values = solution.action_values(_key(obs))
        legal = np.flatnonzero(info["action_mask"])
        print("", env.render().strip(), sep="\n", file=out)
        for action in legal:
            mark = " (best)" if values[action] >= np.nanmax(values[legal]) - 1e-12 else ""
            print(f"  {action}: {names[action]:<14} worth {values[action]:.6g}{mark}", file=out)
        action = _read_action(stdin, out, legal, names)
        if action is None:
            print("input ended before the game did", file=out)
            return 1
        if action < 0:
            print(f"quit; your choices gave up {given_up:.6g} in expectation", file=out)
            return 0
        regret = float(np.nanmax(values[legal]) - values[action])
        given_up += regret
        obs, reward, terminated, truncated, info = env.step(action)
        episode_return += float(reward)
        done = terminated or truncated
        print(f"you chose {names[action]}: gave up {regret:.6g}; reward {reward:g}", file=out)
    print("", env.render().strip(), sep="\n", file=out)
    print(
        f"game over: return {episode_return:g}; your choices gave up {given_up:.6g} in "
        f"expectation against optimal play (optimum from the start {solution.value:.6g})",
        file=out,
    )
    return 0


def _key(obs) -> Any:
    """The observation as solutions take it: an int, or a tuple of ints."""
    array = np.asarray(obs).reshape(-1)
    return int(array[0]) if array.size == 1 else tuple(int(v) for v in array)


def _read_action(stdin: TextIO, out: TextIO, legal: np.ndarray, names) -> int | None:
    """The next legal action from `stdin` by number or name; -1 to quit; None at the end."""
    while (text := read_reply(stdin, out, "your move> ")) is not None and text not in QUIT:
        for action in legal:
            if text in (str(action), names[action].lower()):
                return int(action)
        choices = ", ".join(f"{a} ({names[a]})" for a in legal)
        print(f"not a legal move: {text!r}; choose one of {choices}, or q", file=out)
    return None if text is None else -1

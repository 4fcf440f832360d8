"""`dice-envs play`: a person plays a game in the terminal, with the exact solution beside.

Before each move it shows the position (the env's own text render, laid out in 80 columns),
the few best legal actions with their exact worth (what optimal play gets after taking them)
and what each gives up against the best; `?` lists them all. After the move it says what the
choice gave up, and, where a roll cost the points at stake, that they were lost. What the
choices gave up adds up to what they cost in expectation. A move is typed by its name in the
game (`model.action_names`: `roll`, `hold`, `5 dice`), by the first letters of one, or, where
the actions are counts (Hog's dice), by the count. The commands (`?`, `help`, `hint`, `best`,
`quit`) are `dice_envs_cli.prompt`'s, shared with Yahtzee, which has a player of its own
(`dice_envs_cli.play_yahtzee`). A solve of over a second is kept on disk
(`dice_envs_cli.solve_cache`). A game may be named by its id or its short name (`yahtzee`,
`pig`, `sum_avoid`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

import numpy as np

from dice_envs import find_game, game
from dice_envs_cli.prompt import QUIT, Option, action_table, ranked, read_move, verdict, wrap


def play(env_id: str, kwargs: dict[str, Any], seed: int | None, stdin: TextIO, out: TextIO) -> int:
    """Play one episode of `env_id` (an id or a short name) with game arguments `kwargs`,
    reading moves and commands from `stdin` and writing to `out`. Returns 0 (the game ended,
    or the person quit), or 1 when the input ends before the game does."""
    env_id = find_game(env_id)
    if not game(env_id).tables:  # Yahtzee: played turn by turn on its structure-aware optimum
        from dice_envs_cli.play_yahtzee import play_yahtzee

        return play_yahtzee(kwargs, seed, stdin, out, env_id)
    import gymnasium as gym

    from dice_envs_cli.solve_cache import cached_solution

    env = gym.make(env_id, render_mode="ansi", **kwargs)  # bad arguments fail before a solve
    model = env.unwrapped.model
    names = model.action_names

    def say(text: str) -> None:
        print(*wrap(text), sep="\n", file=out, flush=True)

    say(f"{env_id}" + "".join(f" {key}={value!r}" for key, value in kwargs.items()))
    solution = cached_solution(env_id, kwargs, say)
    say(what_the_values_mean(env_id, model, solution.value))
    say(how_to_move(names))
    obs, info = env.reset(seed=seed)
    given_up, moves = 0.0, 0
    while True:
        values = solution.action_values(_key(obs))
        options = ranked(
            [
                Option(int(a), names[a], float(values[a]))
                for a in np.flatnonzero(info["action_mask"])
            ]
        )
        state = state_lines(env.render())
        print("", *state, *action_table(options, show), sep="\n", file=out)
        action = read_move(
            stdin,
            out,
            options,
            lambda text, legal=options: parse_move(text, names, [o.action for o in legal]),
            help_lines(names),
            show,
            lambda state=state: state,
        )
        if action is None:
            print("input ended before the game did", file=out)
            return 1
        if action == QUIT:
            say(f"quit: your {moves} moves gave up {show(given_up)} in expectation")
            return 0
        chosen = next(option for option in options if option.action == action)
        line, lost = verdict(chosen, options[0], show)
        before = obs
        obs, reward, terminated, truncated, info = env.step(action)
        given_up, moves = given_up + lost, moves + 1
        stake = lost_stake(model, before, obs, float(reward), terminated)
        say(
            line
            + ("" if stake is None else f"; {stake}")
            + (f"; reward {reward:g}" if reward else "")
        )
        if terminated or truncated:
            break
    print("", *state_lines(env.render()), sep="\n", file=out)
    total = env.unwrapped.episode_return
    outcome = (
        "" if game(env_id).players == "one" else (" (you win)" if total > 0 else " (you lose)")
    )
    say(
        f"game over: return {total:g}{outcome}; your {moves} moves gave up "
        f"{show(given_up)} in expectation against optimal play (whose expected return from "
        f"the start is {show(solution.value)})"
    )
    return 0


def show(value: float) -> str:
    """A worth as the tables print it: six significant digits."""
    return f"{value:.6g}"


def what_the_values_mean(env_id: str, model: Any, value: float) -> str:
    """One line saying what the worths are, from what the game is (the registry's
    `players`): a win probability against the opponent, or the expected return alone."""
    players = game(env_id).players
    if players == "one":
        averaged = " (averaged over how it starts)" if len(model.initial_states()) > 1 else ""
        return (
            f"Optimal play expects a return of {show(value)} from the start{averaged}; "
            "a move's worth is its expected return with optimal play after it."
        )
    opponent = getattr(model, "opponent", None)
    if not isinstance(opponent, str):
        opponent = getattr(getattr(model, "opponent_policy", None), "name", "the opponent")
    if players == "simultaneous":
        who = "you both move at once, each unseen by the other"
    else:
        who = {
            None: "a fair coin says who moves first",
            True: "you move first",
            False: "the opponent moves first",
        }[getattr(model, "agent_starts", None)]
    return (
        f"Against {opponent} ({who}) optimal play wins with probability {show(value)}; "
        "a move's worth is the probability of winning with optimal play after it."
    )


def state_lines(render: str) -> list[str]:
    """The env's text render in lines of 80 columns: the position first, then the rest
    (what was rolled, the return so far) packed a few parts a line."""
    position, *rest = render.split(" | ")
    lines = wrap(position)
    line = ""
    for part in rest:
        if line and len(line) + 3 + len(part) > 78:
            lines += wrap(line)
            line = ""
        line = f"{line} | {part}" if line else part
    return lines + wrap(line) if line else lines


def how_to_move(names: Sequence[str]) -> str:
    """The one line that says how to type a move, before the first one."""
    counts = _counts(names)
    if counts:
        return (
            f"Type a move: a number from {min(counts)} to {max(counts)} ({max(counts)} means "
            f"{names[counts[max(counts)]]}), or help."
        )
    shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
    return f"Type a move ({shown}), or help."


def help_lines(names: Sequence[str]) -> list[str]:
    """How to type a move: by name, by the first letters of one, or by its count."""
    lines = [f"Type a move by its name ({', '.join(names)}) or the first letters of one."]
    counts = _counts(names)
    if counts:
        number, action = max(counts.items())
        lines.append(f"A number is a count: {number} means {names[action]}.")
    return lines


def _counts(names: Sequence[str]) -> dict[int, int]:
    """Count -> action, for actions named by a count ("5 dice")."""
    counts = {}
    for action, name in enumerate(names):
        first = name.split()[0] if name.split() else ""
        if first.isdigit():
            counts[int(first)] = action
    return counts


def parse_move(text: str, names: Sequence[str], legal: Sequence[int]) -> int | str:
    """The legal action a person's line names, or (a str) why it names none: an action's
    name, the first letters of a legal one, or a count ("5" for "5 dice")."""
    words = " ".join(text.lower().split())
    matches = [a for a, name in enumerate(names) if name.lower() == words]
    if not matches and words.isdigit():
        matches = [a for number, a in _counts(names).items() if number == int(words)]
    if not matches:  # the first letters of a legal move, else of any (to say it is not legal)
        matches = [a for a in legal if names[a].lower().startswith(words)] or [
            a for a, name in enumerate(names) if name.lower().startswith(words)
        ]
    allowed = ", ".join(names[a] for a in legal)
    if len(matches) > 1:
        return f"{text!r} could be {' or '.join(names[a] for a in matches)}"
    if not matches:
        return f"{text!r} is no move here; the moves now: {allowed}"
    if matches[0] not in legal:
        return f"{names[matches[0]]} is not allowed now; the moves now: {allowed}"
    return matches[0]


def lost_stake(model: Any, before: Any, after: Any, reward: float, terminal: bool) -> str | None:
    """What a step lost of the points at stake, in words (None if nothing), read from the
    observations before and after it and the model's `observation_names`: the turn total
    ("turn total", "turn score") was lost if it fell to nothing without the player's score
    ("score", "own score") rising (a game without one: without being paid as reward), and
    the score too if it fell (two-dice Pig's double 1)."""
    names = tuple(getattr(model, "observation_names", None) or ())
    turn = next((i for i, name in enumerate(names) if name.startswith("turn")), None)
    score = next((i for i, name in enumerate(names) if name in ("score", "own score")), None)
    if turn is None:
        return None
    before, after = np.atleast_1d(before), np.atleast_1d(after)
    stake = int(before[turn])
    if stake <= 0 or (not terminal and after[turn] > 0):
        return None
    if score is None:
        if not terminal or reward >= stake:
            return None
    elif after[score] > before[score]:
        return None
    text = f"your {names[turn]} of {stake} is lost"
    if score is not None and after[score] < before[score]:
        text += f", and your {names[score]} fell from {before[score]} to {after[score]}"
    return text


def _key(obs: Any) -> Any:
    """The observation as solutions take it: an int, or a tuple of ints."""
    array = np.asarray(obs).reshape(-1)
    return int(array[0]) if array.size == 1 else tuple(int(v) for v in array)

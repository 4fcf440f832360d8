"""What both players of `dice-envs play` share: the commands a person may type at every move,
the short table of the best actions, reading a move and saying what a choice gave up.

The words, the same in every game:
    ? or all   every legal action with its worth and what it gives up
    help       how to type a move in this game, and these words
    hint       the best action, without playing it
    best       play the best action
    quit       stop (q and exit too)
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TextIO

QUIT = -1  # what `read_move` returns when the person quits
PROMPT = "your move (? all, help, hint, best, quit)> "
COMMANDS = {
    "?": "all",
    "all": "all",
    "help": "help",
    "hint": "hint",
    "best": "best",
    "quit": "quit",
    "q": "quit",
    "exit": "quit",
}
COMMAND_HELP = [
    "? or all: every legal move with its worth; hint: the best move; best: play it; quit: stop.",
    "worth: what the move is worth with optimal play after it; gives up: the best move's "
    "worth minus this one's. The sum of what your moves gave up is what they cost you "
    "in expectation.",
]
SHOWN = 5  # the best actions listed before each move; `?` lists them all
WIDTH = 80  # the terminal width every line is kept within
TIE = 1e-9  # actions whose worths differ by at most this are equally good


@dataclass(frozen=True)
class Option:
    """One legal action as a person sees it: what it does and what it is worth."""

    action: int
    label: str
    worth: float


def ranked(options: Sequence[Option]) -> list[Option]:
    """The options best first (ties: the lower action number first)."""
    return sorted(options, key=lambda option: (-option.worth, option.action))


def action_table(
    options: Sequence[Option], show: Callable[[float], str], count: int | None = SHOWN
) -> list[str]:
    """The lines of a table of `options` (ranked), the first `count` of them (None: all),
    each with its worth and what it gives up against the best (`show` formats a number)."""
    best = options[0].worth
    listed = options if count is None else options[:count]
    label_width = min(max(len(o.label) for o in listed), WIDTH - 30)
    lines = [f"  {'move':<{label_width}}  {'worth':>12}  {'gives up':>12}"]
    for option in listed:
        lost = best - option.worth
        gives_up = "best" if lost <= TIE else show(lost)
        label = option.label[:label_width]
        lines.append(f"  {label:<{label_width}}  {show(option.worth):>12}  {gives_up:>12}")
    if len(listed) < len(options):
        lines.append(f"  and {len(options) - len(listed)} more: ? lists them all")
    return lines


def verdict(chosen: Option, best: Option, show: Callable[[float], str]) -> tuple[str, float]:
    """What a choice gave up against the best move, in words, and as a number."""
    lost = best.worth - chosen.worth
    if lost <= TIE:
        return f"you chose {chosen.label}: the best move", 0.0
    return f"you chose {chosen.label}: gave up {show(lost)} against {best.label}", lost


def wrap(text: str) -> list[str]:
    """`text` as lines of at most `WIDTH` - 1 columns (a full last column makes some
    terminals wrap)."""
    lines = textwrap.wrap(
        text, WIDTH - 1, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
    )
    return lines or [""]


def read_reply(stdin: TextIO, out: TextIO, prompt: str) -> str | None:
    """The next line a person types after `prompt`, stripped and in lower case; None at the
    end of the input."""
    print(prompt, end="", file=out, flush=True)
    line = stdin.readline()
    return line.strip().lower() if line else None


def read_move(
    stdin: TextIO,
    out: TextIO,
    options: Sequence[Option],
    parse: Callable[[str], int | str],
    help_lines: Sequence[str],
    show: Callable[[float], str],
    reminder: Callable[[], Sequence[str]],
) -> int | None:
    """The person's next legal action; `QUIT` if they quit; None at the end of the input.

    `options` are the legal actions, ranked; `parse` turns a line into an action or (a str)
    says why it is none; `help_lines` say how to type a move in this game; `reminder()` gives
    the state's lines, shown again under a long listing so that the state stays on screen.
    """
    best = options[0]
    while (text := read_reply(stdin, out, PROMPT)) is not None:
        command = COMMANDS.get(text)
        if command == "quit":
            return QUIT
        if command == "best":
            return best.action
        if command == "all":
            print(*action_table(options, show, count=None), *reminder(), sep="\n", file=out)
        elif command == "help":
            lines = [line for text in (*help_lines, *COMMAND_HELP) for line in wrap(text)]
            print(*lines, sep="\n", file=out)
        elif command == "hint":
            print(f"hint: {best.label}, worth {show(best.worth)}; best plays it", file=out)
        elif text == "":
            print("type a move, or help", file=out)
        else:
            action = parse(text)
            if not isinstance(action, str):
                return action
            print(*wrap(f"{action}; help says how to type a move"), sep="\n", file=out)
    return None

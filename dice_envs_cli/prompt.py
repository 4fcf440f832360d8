"""What the play commands share: reading a person's replies."""

from __future__ import annotations

from typing import TextIO

QUIT = ("q", "quit", "exit")


def read_reply(stdin: TextIO, out: TextIO, prompt: str) -> str | None:
    """The next line a person types after `prompt`, stripped and in lower case; None at the
    end of the input."""
    print(prompt, end="", file=out, flush=True)
    line = stdin.readline()
    return line.strip().lower() if line else None

"""`dice-envs play` in a real 80 x 24 terminal (tmux): after each move the 24 visible lines
hold the state and the best move, and `?`, `help`, `hint` and `best` work in every game."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from dice_envs_cli.prompt import PROMPT

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
PROMPTS_BEFORE_GIVING_UP = 180.0  # seconds a screen may take to show (a full solve, busy)


class Terminal:
    """A tmux pane of 80 x 24 running `dice-envs play ...` on a server of its own."""

    def __init__(self, args: list[str], cache: Path) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="tmux"))  # a short socket path
        self.socket = str(self.folder / "socket")
        environment = {
            "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
            "DICE_ENVS_CACHE": str(cache),
        }
        command = [
            "env",
            *(f"{key}={value}" for key, value in environment.items()),
            sys.executable,
            "-m",
            "dice_envs_cli",
            "play",
            *args,
        ]
        self.tmux(
            "-f", "/dev/null", "new-session", "-d", "-x", "80", "-y", "24", "-s", "play",
            " ".join(_quoted(word) for word in command),
            ";", "set-option", "-g", "status", "off",
            ";", "set-option", "-g", "remain-on-exit", "on",
            ";", "set-option", "-g", "history-limit", "10000",
        )  # fmt: skip
        self.prompts = 0

    def tmux(self, *args: str) -> str:
        env = {**os.environ, "TERM": os.environ.get("TERM") or "xterm"}
        env.pop("TMUX", None)
        done = subprocess.run(
            ["tmux", "-S", self.socket, *args], capture_output=True, text=True, env=env
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def screen(self) -> list[str]:
        """The 24 visible lines."""
        return self.tmux("capture-pane", "-p", "-t", "play").split("\n")[:24]

    def history(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "play")

    def size(self) -> str:
        return self.tmux("display-message", "-p", "-t", "play", "#{pane_width}x#{pane_height}")

    def wait(self, pattern: str, count: int = 1) -> list[str]:
        """The screen once `pattern` (a regex) shows `count` times in the pane's whole output
        (or the command has ended)."""
        deadline = time.monotonic() + PROMPTS_BEFORE_GIVING_UP
        while time.monotonic() < deadline:
            history = self.history()
            if len(re.findall(pattern, history, re.MULTILINE)) >= count or re.search(
                r"^(game over|quit|input ended)", history, re.MULTILINE
            ):
                return self.screen()
            time.sleep(0.05)
        raise AssertionError(f"{pattern!r} never showed; the pane:\n{self.history()}")

    def next_prompt(self) -> list[str]:
        """The screen once the next prompt (or the game's end) has shown."""
        self.prompts += 1
        return self.wait(re.escape(PROMPT.rstrip()), self.prompts)

    def type(self, text: str) -> list[str]:
        """Type a line; the screen at the next prompt."""
        self.tmux("send-keys", "-t", "play", "-l", text)
        self.tmux("send-keys", "-t", "play", "Enter")
        return self.next_prompt()

    def close(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True)
        shutil.rmtree(self.folder, ignore_errors=True)


def _quoted(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"


@pytest.fixture
def terminal(tmp_path):
    """Opens `Terminal(args)` panes in this test's cache folder; closes them at the end."""
    opened: list[Terminal] = []

    def open_terminal(*args: str, cache: Path | None = None) -> Terminal:
        opened.append(Terminal(list(args), cache or tmp_path / "cache"))
        return opened[-1]

    yield open_terminal
    for pane in opened:
        pane.close()


def visible(screen: list[str], *patterns: str) -> None:
    """Every regex of `patterns` on one of the 24 lines of `screen`."""
    assert len(screen) <= 24 and all(len(line) <= 80 for line in screen)
    text = "\n".join(screen)
    for pattern in patterns:
        assert re.search(pattern, text, re.MULTILINE), f"{pattern!r} not on screen:\n{text}"


BEST_ROW = r"^  \S.*\s{2}\S+\s+best$"  # a row of the moves' table: the best one
TABLE = r"^  move\s+worth\s+gives up$"


def test_pig_in_80_by_24(terminal):
    pane = terminal("pig", "goal=20", "--seed", "3")
    state = [r"^you \d+, opponent \d+, your turn total \d+ \(goal 20\)$", TABLE, BEST_ROW]
    screen = pane.next_prompt()
    assert pane.size().strip() == "80x24"
    visible(screen, "a fair coin says who moves first", *state, r"^  roll\s+0\.615559\s+best$")
    visible(pane.type("roll"), "you chose roll: the best move", *state, r"rolls 5")
    visible(pane.type("help"), r"^Type a move by its name \(hold, roll\)", "quit: stop", *state)
    visible(pane.type("?"), r"^  hold\s", r"^  roll\s", r"your turn total 5")
    visible(pane.type("hint"), r"^hint: roll, worth 0\.674031; best plays it$", *state)
    visible(pane.type("best"), "you chose roll: the best move", r"your turn total 9", *state)
    screen = pane.type("r")  # roll, by its first letter: a 1
    visible(screen, "you chose roll: the best move; your turn total of 9 is lost", *state)
    visible(screen, r"rolls 1 \| opponent rolls")
    visible(pane.type("h"), r"hold is not allowed now; the moves now: roll", *state)
    visible(pane.type("quit"), r"^quit: your 3 moves gave up 0 in expectation")


def test_hog_takes_the_number_of_dice_in_80_by_24(terminal):
    pane = terminal("hog", "goal=20", "--seed", "4")
    state = [r"^you \d+, opponent \d+, your throw \(goal 20\)$", TABLE, BEST_ROW]
    visible(pane.next_prompt(), "a fair coin says who moves first", *state, r"and 5 more")
    visible(pane.type("help"), r"^A number is a count: 10 means 10 dice\.$", *state)
    visible(pane.type("?"), *(rf"^  {n} dice\s" for n in range(2, 11)), r"^  1 die\s")
    visible(pane.type("hint"), r"^hint: 6 dice, worth 0\.612787", *state)
    screen = pane.type("5")
    visible(screen, r"you chose 5 dice: gave up 0\.00653008 against 6 dice", *state)
    visible(screen, r"last action 5 dice \| rolls \d \d \d \d \d \|")  # five dice thrown
    visible(pane.type("best"), r"you chose \d+ dice?: the best move")


def test_simultaneous_hog_in_80_by_24(terminal):
    pane = terminal("simultaneous_hog", "goal=20", "--seed", "0")
    state = [r"^you \d+, opponent \d+ \(goal 20, both throw at once\)$", TABLE, BEST_ROW]
    screen = pane.next_prompt()
    visible(screen, r"Against five-dice \(you both move at once", *state)
    assert "moves first" not in pane.history()
    visible(pane.type("help"), r"^A number is a count", *state)
    visible(pane.type("?"), *(rf"^  {n} dice\s" for n in range(2, 11)))
    visible(pane.type("hint"), r"^hint: 6 dice, worth 0\.568595", *state)
    visible(pane.type("3"), r"you chose 3 dice: gave up", r"rolls \d \d \d \| opponent rolls")
    visible(pane.type("best"), r"you chose \d+ dice?: the best move")


def test_ten_thousand_in_80_by_24(terminal):
    pane = terminal("ten_thousand", "--seed", "4")
    state = [r"^turn score \d+ chips \(\d+ points\), .* dice in hand$", TABLE, BEST_ROW]
    screen = pane.next_prompt()
    visible(screen, r"^Optimal play expects a return of 5\.87202 from the start", *state)
    assert "first" not in pane.history()  # a solitaire game: nobody moves first
    visible(pane.type("roll"), "you chose roll: the best move", *state, r"dice \d \d \d \d \d")
    visible(pane.type("help"), r"^Type a move by its name \(stop, roll, give back 5", *state)
    visible(pane.type("?"), r"^  stop\s", r"^  roll\s", r"turn score 3 chips")
    visible(pane.type("hint"), r"^hint: give back 5, worth 5\.02058", *state)
    visible(pane.type("best"), r"you chose give back 5: the best move", *state)


def test_yahtzee_reduced_in_80_by_24(terminal):
    pane = terminal("yahtzee", "boxes=['sixes','full_house','chance']", "--seed", "4")
    state = [
        r"^turn \d/3, rolls left \d, score \d+; best play expects \d+\.\d{4} in all$",
        r"^dice: \d \d \d \d \d$",
        r"^  sixes\s+\S+\s+yahtzee\s+\.$",
        r"^  upper \d+/63\s+chance\s+\S+$",
        TABLE,
        BEST_ROW,
    ]
    visible(pane.next_prompt(), "solving dice_envs/Yahtzee-v0 exactly", *state)
    visible(pane.type("keep 6 6"), r"you chose keep 6 6: gave up \d\.\d{4}", *state)
    visible(pane.type("help"), r"^Type the faces to keep", r"^  \S")  # the help, then below:
    visible(pane.type("?"), r"^  score full house for 0\s", r"^turn 1/3, rolls left 1")
    # Under the long listing the state again (the card too), then the hint: the best move.
    visible(pane.type("hint"), r"^hint: keep 6 6, worth \d+\.\d{4}; best plays it$", *state[:4])
    visible(pane.type("best"), r"you chose keep 6 6: the best move", *state)
    visible(pane.type("chance"), r"you chose score chance for \d+", *state)


def test_the_full_game_of_yahtzee_fits_80_by_24_and_starts_from_its_kept_solve(terminal):
    # The one full solve of the suite: the first launch solves (and says how long it
    # expects), the second reads what the first kept.
    pane = terminal("yahtzee", "--seed", "2")
    solving = r"^solving dice_envs/Yahtzee-v0 exactly: about \d.* \(536,320 turn-start states"
    state = [
        r"^turn \d+/13, rolls left \d, score \d+; best play expects \d+\.\d{4} in all$",
        r"^dice: \d \d \d \d \d$",
        r"^  ones\s+\S+\s+3 kind\s+\S+$",
        r"^  upper \d+/63\s+chance\s+\S+$",
        TABLE,
        BEST_ROW,
        r"^  and \d+ more: \? lists them all$",
    ]
    visible(pane.next_prompt(), solving, r"kept on disk for next time", *state)
    for _ in range(3):
        visible(pane.type("best"), "you chose .*: the best move", *state)
    visible(pane.type("quit"), r"^quit with a score of")
    again = terminal("yahtzee", "--seed", "2")
    screen = again.next_prompt()
    visible(screen, r"^the exact solution, solved before, read from", *state)
    assert "solving" not in again.history()
    visible(again.type("keep"), r"you chose keep nothing \(reroll all\)", *state)
    visible(again.type("?"), r"^turn 1/13, rolls left 1", r"^dice: ")  # the state again

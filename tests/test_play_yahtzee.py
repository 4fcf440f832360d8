"""`dice-envs play yahtzee`: what a person types becomes the right action, a scripted game
reaches its end with the sum of its rewards, and every value shown is the solution's."""

from __future__ import annotations

import io
import re
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import dice_envs  # noqa: F401  (registers the ids)
import dice_envs_cli as cli
from baselines.yahtzee import solve_yahtzee
from dice_envs.games.yahtzee import (
    BOX_NAMES,
    FULL_CARD,
    YAHTZEE,
    PlayState,
    TurnState,
    Yahtzee,
    dice_index,
)
from dice_envs_cli.play_yahtzee import action_label, parse_choice, play_yahtzee
from dice_envs_cli.prompt import PROMPT

YAHTZEE_ID = "dice_envs/Yahtzee-v0"

ROOT = Path(__file__).resolve().parent.parent
BOXES = ["sixes", "full_house", "chance"]  # a game of three turns, solved in a blink
ROW = re.compile(r"^  (\S.*?)\s{2,}(-?\d+\.\d{4})\s+(best|\d+\.\d{4})$")


def mask_of(model: Yahtzee, state: PlayState) -> np.ndarray:
    """The env's action mask at `state`."""
    boxes = [BOX_NAMES[b] for b in model.boxes]
    env = gym.make(YAHTZEE_ID, joker=model.joker, boxes=boxes)
    return env.reset(options={"state": state})[1]["action_mask"]


def test_what_a_person_types_becomes_the_action_it_means():
    model = Yahtzee()
    # The dice in ascending order: 1 3 5 5 6 (bit i rerolls the i-th lowest die).
    state = PlayState(0, 0, False, dice_index([5, 1, 6, 5, 3]), 2)
    mask = mask_of(model, state)
    keep_355 = 0b10001  # reroll the 1 and the 6
    keep_5 = 0b10111  # reroll 1, 3, the lower 5 and 6: the legal twin of 0b11011
    expected = {
        "keep 5 5 3": keep_355, "keep 553": keep_355, "k 3,5,5": keep_355,
        "reroll 1 6": keep_355, "r 6 1": keep_355, "17": keep_355,
        "keep 5": keep_5, "Keep 5": keep_5,
        "keep": 31, "keep nothing": 31, "reroll all": 31, "roll": 31, "reroll": 31,
        "full house": 40, "Full_House": 40, "fh": 40, "score sixes": 37, "6s": 37,
        "3 kind": 38, "three of a kind": 38, "3k": 38, "chance": 44, "sm straight": 41,
    }  # fmt: skip
    assert {text: parse_choice(text, model, state, mask) for text in expected} == expected
    refused = {
        "keep 2": "no 2 to keep",
        "keep 5 5 5": "no 5 to keep",
        "keep 1 3 5 5 6": "keeping all five dice is no reroll",
        "reroll nothing": "keeping all five dice is no reroll",
        "keep 7": "name faces 1 to 6",
        "fly": "neither a keep, a box nor an action number",
        "0": "not the number of a legal action",  # rerolling nothing is not legal
        "27": "not the number of a legal action",  # the illegal twin of keep 5
        "45": "not the number of a legal action",
    }
    for text, message in refused.items():
        answer = parse_choice(text, model, state, mask)
        assert isinstance(answer, str) and message in answer, (text, answer)


def test_each_action_is_shown_as_what_it_does():
    model = Yahtzee()
    state = PlayState(0, 60, False, dice_index([5, 1, 6, 5, 3]), 2)
    assert action_label(model, state, 0b10001) == "keep 3 5 5"
    assert action_label(model, state, 0b10111) == "keep 5"
    assert action_label(model, state, 31) == "keep nothing (reroll all)"
    assert action_label(model, state, 32 + 8) == "score full house for 0"
    assert action_label(model, state, 32 + 12) == "score chance for 20"
    assert action_label(model, state, 32 + 4) == "score fives for 10 (+35 bonus)"  # 60 + 10
    full_house = state._replace(dice=dice_index([2, 2, 4, 4, 4]))
    assert action_label(model, full_house, 32 + 8) == "score full house for 25"


def test_a_box_that_can_not_take_the_dice_is_refused_with_the_reason():
    last_roll = PlayState(1 << 12, 0, False, dice_index([1, 3, 5, 5, 6]), 0)
    model = Yahtzee()
    mask = mask_of(model, last_roll)
    assert "no rolls left" in parse_choice("keep 5", model, last_roll, mask)
    assert "filled already" in parse_choice("chance", model, last_roll, mask)
    reduced = Yahtzee(boxes=["sixes", "chance"])
    start = PlayState(reduced.absent, 0, False, dice_index([1, 3, 5, 5, 6]), 2)
    assert "not in play" in parse_choice("ones", reduced, start, mask_of(reduced, start))
    # A Yahtzee of fives with the Yahtzee box filled: the forced joker rule wants the fives.
    joker = PlayState(1 << YAHTZEE, 0, False, dice_index([5] * 5), 0)
    joker_mask = mask_of(model, joker)
    assert "joker rule (forced)" in parse_choice("chance", model, joker, joker_mask)
    assert parse_choice("fives", model, joker, joker_mask) == 36


class Typist:
    """A person at the keyboard: each line is text, or a function of what the screen shows."""

    def __init__(self, lines, screen: io.StringIO) -> None:
        self.lines, self.screen = list(lines), screen

    def readline(self) -> str:
        if not self.lines:
            return ""
        line = self.lines.pop(0)
        return (line(self.screen.getvalue()) if callable(line) else line) + "\n"


def keep_the_highest_die(screen: str) -> str:
    dice = re.findall(r"^dice: (.*)$", screen, re.MULTILINE)[-1].split()
    return f"keep {dice[-1]}"


def legal_options(env, solution) -> dict[str, tuple[int, float]]:
    """Label -> (action, value to go) of every legal action at the env's state."""
    state = env.unwrapped.state
    values = solution.turn_action_values(TurnState(*state[:3]), state.dice, state.rolls_left)
    mask = env.unwrapped.action_masks()
    model = env.unwrapped.model
    return {action_label(model, state, a): (a, values[a]) for a in np.flatnonzero(mask)}


def test_a_scripted_game_ends_with_the_sum_of_its_rewards_and_the_solutions_values():
    lines = [
        "fly", "keep", "?", "", "reroll all", "keep 1", "chance",  # turn 1 (fly, keep 1: refused)
        keep_the_highest_die, "?", "keep nothing", "score sixes",  # turn 2
        "keep 9", "31", "3k", "keep", "best",  # turn 3 (keep 9, 3k: refused)
    ]  # fmt: skip
    screen = io.StringIO()
    assert (
        play_yahtzee(
            {"joker": "free", "boxes": BOXES}, 7, Typist(lines, screen), screen, YAHTZEE_ID
        )
        == 0
    )
    out = screen.getvalue()
    refused = out.replace("\n  ", " ").count("help says how to type a move")
    assert refused == 4  # fly, keep 1, keep 9, 3k
    chosen = re.findall(r"> you chose (.*?): (?:the best move|gave up)", out)
    assert len(chosen) == 9
    # Replay the choices on the env with the same seed: the same dice, and at every decision
    # the table lists the best legal actions with the solution's values, best first, and `?`
    # lists them all.
    solution = solve_yahtzee(joker="free", boxes=BOXES)
    env = gym.make(YAHTZEE_ID, joker="free", boxes=BOXES)
    env.reset(seed=7)
    blocks = out.split("\n\nturn ")[1:]  # a ? listing repeats the turn line, unspaced
    rewards, lost, listed_all = [], 0.0, 0
    for block, label in zip(blocks, chosen, strict=True):
        legal = legal_options(env, solution)
        best = max(value for _a, value in legal.values())
        tables = block.split("  move ")[1:]  # the table before the move, then each ? listing
        for table in tables:
            rows = [ROW.match(line).groups() for line in table.splitlines() if ROW.match(line)]
            shown = [(name, float(value)) for name, value, _ in rows]
            assert all(abs(value - legal[name][1]) < 5.1e-5 for name, value in shown)
            ranked = sorted(legal, key=lambda name: (-legal[name][1], legal[name][0]))
            assert [name for name, _ in shown] == ranked[: len(shown)]
            assert len(shown) == min(5, len(legal)) or len(shown) == len(legal)
            listed_all += len(shown) == len(legal) > 5
            losses = [0.0 if loss == "best" else float(loss) for _n, _v, loss in rows]
            assert losses == pytest.approx([best - legal[name][1] for name, _ in shown], abs=1e-4)
        action, value = legal[label]
        lost += best - value
        _obs, reward, terminated, _truncated, _info = env.step(action)
        rewards.append(reward)
    assert listed_all == 2  # the two ? listings
    assert terminated
    assert f"game over: final score {sum(rewards):g}\n" in out
    verdicts = [v.replace("\n  ", " ") for v in re.findall(r"> you chose .*(?:\n  .*)*", out)]
    shown_scores = [float(m[1]) for v in verdicts if (m := re.search(r"; score (\S+)$", v))]
    scored = np.array([label.startswith("score") for label in chosen])
    assert shown_scores == np.cumsum(rewards)[scored].tolist()
    assert re.search(r"your 9 moves gave up (\S+) in expectation", out).group(1) == f"{lost:.4f}"
    assert f"optimal play expects a final score of {solution.value:.4f} from the start" in out
    assert env.unwrapped.state.filled == FULL_CARD


def test_the_input_ending_or_a_quit_stops_the_game_cleanly():
    screen = io.StringIO()
    assert play_yahtzee({"boxes": BOXES}, 0, io.StringIO("keep\n"), screen, YAHTZEE_ID) == 1
    assert "input ended before the game did" in screen.getvalue()
    screen = io.StringIO()
    assert play_yahtzee({"boxes": BOXES}, 0, io.StringIO("best\nq\n"), screen, YAHTZEE_ID) == 0
    assert "quit with a score of" in screen.getvalue()
    assert "your 1 moves gave up 0.0000" in screen.getvalue()


def test_every_command_works_in_yahtzee():
    screen = io.StringIO()
    lines = ["help", "hint", "?", "best", "quit"]
    assert play_yahtzee({"boxes": BOXES}, 0, Typist(lines, screen), screen, YAHTZEE_ID) == 0
    blocks = screen.getvalue().split(PROMPT)
    assert "Type the faces to keep ('keep 5 5 3'" in blocks[1]
    assert "? or all: every legal move" in blocks[1]
    best = re.search(r"^  (keep [\d ]+?)\s{2,}\S+\s+best$", blocks[0], re.MULTILINE).group(1)
    assert blocks[2].startswith(f"hint: {best}, worth ")
    assert len(blocks[3].splitlines()) > 20 and "and " not in blocks[3]  # every action
    assert re.search(r"^turn 1/3, rolls left 2, score 0; .*\ndice: ", blocks[3], re.MULTILINE)
    assert blocks[4].startswith(f"you chose {best}: the best move")
    assert blocks[5].startswith("quit with a score of 0")


def test_the_command_plays_yahtzee_by_its_short_name_and_checks_joker(capsys):
    stdin = io.StringIO("best\n" * 9)
    out = io.StringIO()
    argv = ["play", "yahtzee", "joker=verhoeff", f"boxes={BOXES}", "--seed", "1"]
    assert cli.main(argv, stdin=stdin, out=out) == 0
    assert "Yahtzee (joker=verhoeff, boxes sixes, full_house, chance)" in out.getvalue()
    assert "your 0 moves" not in out.getvalue() and "game over" in out.getvalue()
    for argv, message in [
        (["play", "yahtzee", "joker=wild"], "joker"),
        (["play", "pig", "joker=free"], "joker"),
        (["play", "yahtzee", "jokers=free"], "jokers"),
    ]:
        with pytest.raises(SystemExit) as stopped:
            cli.main(argv, stdin=io.StringIO(""), out=io.StringIO())
        assert stopped.value.code == 2 and message in capsys.readouterr().err, argv


def test_the_command_in_a_process_of_its_own_plays_a_game_of_yahtzee():
    # `python -m dice_envs_cli` from the repository's root: this checkout's code, as the
    # `dice-envs` script runs it once installed.
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "dice_envs_cli",
            "play",
            "yahtzee",
            "boxes=['chance']",
            "--seed",
            "0",
        ],
        input="keep\nbest\nbest\n",
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    assert "solving dice_envs/Yahtzee-v0 exactly" in result.stdout
    assert "game over: final score" in result.stdout

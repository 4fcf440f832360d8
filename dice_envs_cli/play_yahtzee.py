"""`dice-envs play yahtzee`: a person plays solitaire Yahtzee, the exact solution beside.

At each decision it shows the dice, the rolls left, the score card and every legal action with
its exact expected final score to go (this action's points included), best first, with what
each loses against the best. The person types the faces to keep ("keep 5 5 3"), the faces to
reroll ("reroll 1 2"), a box to score ("full house", "score sixes"), an action's number, or
"best". The losses of the person's choices add up to their expected cost: by the performance
difference lemma, the expected final score of a way of playing is the optimum minus the
expected sum of its losses.
"""

from __future__ import annotations

import functools
import re
import time
from collections import Counter
from typing import Any, TextIO

import gymnasium as gym
import numpy as np

from baselines.yahtzee import YahtzeeSolution, solve_yahtzee
from dice_envs.envs.yahtzee import BOX_LABELS
from dice_envs.games.yahtzee import (
    BOX_NAMES,
    DICE_FACES,
    IS_YAHTZEE,
    NUM_BOXES,
    REROLL_KEEP,
    UPPER_TARGET,
    PlayState,
    TurnState,
    Yahtzee,
    keep_index,
)
from dice_envs_cli.prompt import QUIT, read_reply

HELP = (
    "type the faces to keep ('keep 5 5 3', 'keep' alone rerolls all), the faces to reroll "
    "('reroll 1 2'), a box to score ('full house', 'score sixes', '3k'), an action's number "
    "in brackets, 'best' for the best action, or q to quit"
)
# Short names of boxes a person may type, besides their names and labels.
BOX_ALIASES = {"1s": 0, "2s": 1, "3s": 2, "4s": 3, "5s": 4, "6s": 5, "3k": 6, "4k": 7, "fh": 8}
BOX_ALIASES |= {"ss": 9, "ls": 10, "y": 11, "c": 12}


def _squeeze(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", text.lower())


BOX_WORDS = {
    _squeeze(word): box for box in range(NUM_BOXES) for word in (BOX_NAMES[box], BOX_LABELS[box])
}
BOX_WORDS |= BOX_ALIASES


@functools.lru_cache(maxsize=4)
def solution_of(joker: str, boxes: tuple[str, ...] | None) -> YahtzeeSolution:
    """The exact solution of one rule set, solved once per process."""
    return solve_yahtzee(joker=joker, boxes=None if boxes is None else list(boxes))


def faces(state: PlayState) -> list[int]:
    """The five dice showing, in ascending order (the order reroll bits count in)."""
    return DICE_FACES[state.dice].tolist()


def action_label(model: Yahtzee, state: PlayState, action: int) -> str:
    """What an action does, in words: "keep 3 5 5" or "score full_house for 25"."""
    if action < 32:
        kept = [f for i, f in enumerate(faces(state)) if not action >> i & 1]
        return "keep " + (" ".join(map(str, kept)) if kept else "nothing (reroll all)")
    box = action - 32
    points = model.scoring_one(state.filled, state.dice)[1][box]
    reward = Yahtzee.score_result(
        state.upper, state.yahtzee50, box, points, bool(IS_YAHTZEE[state.dice])
    )[0]
    bonus = f" (+{reward - points} bonus)" if reward > points else ""
    return f"score {BOX_NAMES[box]} for {points}{bonus}"


def ranked_actions(
    solution: YahtzeeSolution, state: PlayState, mask: np.ndarray
) -> list[tuple[int, float]]:
    """The legal actions (`mask`) with their exact values to go, best first (ties: the lower
    action number first)."""
    card = TurnState(state.filled, state.upper, state.yahtzee50)
    values = solution.turn_action_values(card, state.dice, state.rolls_left)
    legal = np.flatnonzero(mask)
    return sorted(((int(a), float(values[a])) for a in legal), key=lambda pair: (-pair[1], pair[0]))


def parse_choice(text: str, model: Yahtzee, state: PlayState, mask: np.ndarray) -> int | str:
    """The legal action a person's line means, or (a str) why it means none.

    Forms: an action's number; "keep F F ..." (faces to keep; "keep" alone rerolls all);
    "reroll F ..." (faces to reroll; "reroll all"); a box's name or label, optionally after
    "score" (case, spaces and underscores aside); a short name (BOX_ALIASES).
    """
    text = text.strip().lower()
    if re.fullmatch(r"\d+", text):
        action = int(text)
        if action < len(mask) and mask[action]:
            return action
        return f"{text} is not the number of a legal action"
    words = text.split(maxsplit=1)
    verb, rest = (words[0], words[1] if len(words) > 1 else "") if words else ("", "")
    if verb in ("keep", "k", "reroll", "r", "roll"):
        return _keep_choice(verb, rest, state, mask)
    if verb in ("score", "s"):
        text = rest
    box = BOX_WORDS.get(_squeeze(text))
    if box is None:
        return f"{text!r} is neither a keep, a box nor an action number"
    if not mask[32 + box]:
        if box not in model.boxes:
            return f"{BOX_NAMES[box]} is not in play in this game"
        if state.filled >> box & 1:
            return f"{BOX_NAMES[box]} is filled already"
        return f"the joker rule ({model.joker}) does not allow {BOX_NAMES[box]} for these dice"
    return 32 + box


def _keep_choice(verb: str, rest: str, state: PlayState, mask: np.ndarray) -> int | str:
    """The legal reroll that keeps (verb "keep", "k") or rerolls (the others) the faces named
    in `rest` ("" or "all": every die for a reroll, none for a keep)."""
    if state.rolls_left == 0:
        return "no rolls left: score a box"
    showing = faces(state)
    keeping = verb in ("keep", "k")
    rest = rest.strip()
    if rest in ("", "nothing", "none", "all"):
        named = showing if rest == "all" or (rest == "" and not keeping) else []
    elif re.fullmatch(r"[1-6][1-6\s,]*", rest):
        named = [int(c) for c in rest if c.isdigit()]
    else:
        return f"{rest!r}: name faces 1 to 6, as in 'keep 5 5 3'"
    missing = Counter(named) - Counter(showing)
    if missing:
        return (
            f"the dice show {' '.join(map(str, showing))}: there is no "
            f"{' '.join(map(str, sorted(missing.elements())))} to {verb}"
        )
    kept = named if keeping else sorted((Counter(showing) - Counter(named)).elements())
    if len(kept) == len(showing):
        return "keeping all five dice is no reroll: score a box instead"
    wanted = keep_index(kept)
    for action in np.flatnonzero(mask[:32]):
        if REROLL_KEEP[state.dice][action] == wanted:
            return int(action)
    raise AssertionError(f"no legal reroll keeps {kept}")  # every keep has its legal reroll


def play_yahtzee(
    kwargs: dict[str, Any], seed: int | None, stdin: TextIO, out: TextIO, env_id: str
) -> int:
    """Play one game of Yahtzee registered as `env_id` (game arguments `kwargs`: `joker`,
    `boxes`) from `stdin`, writing to `out`. Returns 0, or 1 when the input ends before the
    game."""
    env = gym.make(env_id, **kwargs)
    game = env.unwrapped
    model = game.model
    in_play = None if len(model.boxes) == NUM_BOXES else tuple(BOX_NAMES[b] for b in model.boxes)
    rules = f"joker={model.joker}" + ("" if in_play is None else f", boxes {', '.join(in_play)}")
    print(f"Yahtzee ({rules}): solving it exactly, once per process ...", file=out, flush=True)
    start = time.perf_counter()
    solution = solution_of(model.joker, in_play)
    print(
        f"solved in {time.perf_counter() - start:.1f} s: optimal play expects a final score of "
        f"{solution.value:.4f}\n{HELP}",
        file=out,
    )
    _obs, info = env.reset(seed=seed)
    score, lost, choices = 0.0, 0.0, 0
    while True:
        state, mask = game.state, info["action_mask"]
        ranked = ranked_actions(solution, state, mask)
        _show_decision(game, score, ranked, out)
        action = _ask(stdin, out, model, state, mask, ranked[0][0])
        if action is None:
            print("input ended before the game did", file=out)
            return 1
        if action < 0:
            _summary(score, solution.value, lost, choices, out, over=False)
            return 0
        loss = ranked[0][1] - dict(ranked)[action]
        label = action_label(model, state, action)
        _obs, reward, terminated, truncated, info = env.step(action)
        score, lost, choices = score + reward, lost + loss, choices + 1
        verdict = "the best" if action == ranked[0][0] else f"loses {loss:.4f} against the best"
        print(f"you chose [{action}] {label}: {verdict}", file=out)
        if action >= 32:
            print(f"reward {reward:g}; score {score:g}", file=out)
        if terminated or truncated:
            break
    print("", *_card_lines(game), sep="\n", file=out)
    _summary(score, solution.value, lost, choices, out, over=True)
    return 0


def _show_decision(game, score: float, ranked: list[tuple[int, float]], out: TextIO) -> None:
    """The dice, rolls left, the card and every legal action's value to go, best first."""
    state, model = game.state, game.model
    turn = bin(state.filled & ~model.absent).count("1") + 1
    best = ranked[0][1]
    print(
        "",
        f"turn {turn}/{model.num_turns}, rolls left {state.rolls_left}, score {score:g}; "
        f"best play from here expects a final score of {score + best:.4f}",
        f"dice: {' '.join(map(str, faces(state)))}",
        *_card_lines(game),
        f"  {'action':<38}{'to go':>10}{'loses':>10}",
        sep="\n",
        file=out,
    )
    for action, value in ranked:
        loses = "best" if action == ranked[0][0] else f"{best - value:.4f}"
        text = f"[{action}] {action_label(model, state, action)}"
        print(f"  {text:<38}{value:>10.4f}{loses:>10}", file=out)


def _card_lines(game) -> list[str]:
    """The score card in two columns: upper boxes with the upper total, lower boxes."""
    state, model = game.state, game.model

    def cell(box: int) -> str:
        points = game.card[box]
        text = "." if box not in model.boxes else "-" if points is None else str(points)
        return f"{BOX_LABELS[box]:<12}{text:>4}"

    upper = f"upper {state.upper}/{UPPER_TARGET}" + (" (bonus)" if state.upper >= 63 else "")
    lines = [f"  {cell(box)}      {cell(box + 6)}" for box in range(6)]
    lines.append(f"  {upper:<16}      {cell(NUM_BOXES - 1)}")
    if state.yahtzee50:
        lines.append("  yahtzee box holds 50: each further yahtzee earns 100")
    return lines


def _ask(stdin: TextIO, out: TextIO, model: Yahtzee, state, mask, best: int) -> int | None:
    """The person's next legal action; -1 to quit; None at the end of the input."""
    while (text := read_reply(stdin, out, "your choice> ")) is not None and text not in QUIT:
        if text in ("best", "b"):
            return best
        if text in ("", "?", "h", "help"):
            print(HELP, file=out)
            continue
        choice = parse_choice(text, model, state, mask)
        if isinstance(choice, int):
            return choice
        print(f"{choice}; type ? for help", file=out)
    return None if text is None else -1


def _summary(score: float, optimum: float, lost: float, choices: int, out: TextIO, over: bool):
    head = f"game over: final score {score:g}" if over else f"quit with a score of {score:g}"
    print(
        head,
        f"optimal play expects a final score of {optimum:.4f} from the start",
        f"your {choices} choices lost {lost:.4f} in expectation against optimal play",
        file=out,
        sep="\n",
    )
    if over:
        luck = score - (optimum - lost)
        print(f"the dice: {luck:+.4f} (final score - optimum + what the choices lost)", file=out)

"""`dice-envs play yahtzee`: a person plays solitaire Yahtzee, the exact solution beside.

At each decision it shows, within 80 x 24, the turn, the dice, the rolls left, the score card
and the few best legal actions with their exact expected final score to go (this action's
points included) and what each gives up against the best; `?` lists every action. The person
types the faces to keep ("keep 5 5 3"), the faces to reroll ("reroll 1 2"), a box to score
("full house", "score sixes"), an action's number, or one of the commands every game takes
(`dice_envs_cli.prompt`: `?`, `help`, `hint`, `best`, `quit`). What the person's choices gave
up adds up to their expected cost: by the performance difference lemma, the expected final
score of a way of playing is the optimum minus the expected sum of its losses. The solution
is read from the disk cache where a launch before solved it (`dice_envs_cli.solve_cache`).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Any, TextIO

import gymnasium as gym
import numpy as np

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
from dice_envs_cli.prompt import QUIT, Option, action_table, ranked, read_move, verdict, wrap

if TYPE_CHECKING:
    from baselines.yahtzee import YahtzeeSolution

HELP = [
    "Type the faces to keep ('keep 5 5 3'; 'keep' alone rerolls all), the faces to reroll "
    "('reroll 1 2'), or a box to score ('full house', 'score sixes', '3k', 'fh'); an "
    "action's number in the env (0-31 rerolls by bit mask, 32-44 the boxes) works too."
]
# The rate behind the first solve's announced time, until this machine has solved the game
# once (then its own rate is used): `make bench` solved the full game (536,320 turn-start
# states) in 4.4 to 4.9 s on the reference machine (docs/bench_yahtzee.json); the slowest.
REFERENCE_RATE = (536_320 / 4.87, "the full game's solve in `make bench`")
# Short names of boxes a person may type, besides their names and labels.
BOX_ALIASES = {"1s": 0, "2s": 1, "3s": 2, "4s": 3, "5s": 4, "6s": 5, "3k": 6, "4k": 7, "fh": 8}
BOX_ALIASES |= {"ss": 9, "ls": 10, "y": 11, "c": 12}


def _squeeze(text: str) -> str:
    return re.sub(r"[\s_\-]+", "", text.lower())


BOX_WORDS = {
    _squeeze(word): box for box in range(NUM_BOXES) for word in (BOX_NAMES[box], BOX_LABELS[box])
}
BOX_WORDS |= BOX_ALIASES


def faces(state: PlayState) -> list[int]:
    """The five dice showing, in ascending order (the order reroll bits count in)."""
    return DICE_FACES[state.dice].tolist()


def action_label(model: Yahtzee, state: PlayState, action: int) -> str:
    """What an action does, in words: "keep 3 5 5" or "score full house for 25" (the box's
    label on the card)."""
    if action < 32:
        kept = [f for i, f in enumerate(faces(state)) if not action >> i & 1]
        return "keep " + (" ".join(map(str, kept)) if kept else "nothing (reroll all)")
    box = action - 32
    points = model.scoring_one(state.filled, state.dice)[1][box]
    reward = Yahtzee.score_result(
        state.upper, state.yahtzee50, box, points, bool(IS_YAHTZEE[state.dice])
    )[0]
    bonus = f" (+{reward - points} bonus)" if reward > points else ""
    return f"score {BOX_LABELS[box]} for {points}{bonus}"


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
    `boxes`) from `stdin`, writing to `out`. Returns 0 (the game ended, or the person quit),
    or 1 when the input ends before the game does."""
    from dice_envs_cli.solve_cache import cached_solution

    env = gym.make(env_id, **kwargs)  # bad arguments fail before a solve
    game = env.unwrapped
    model = game.model
    in_play = None if len(model.boxes) == NUM_BOXES else [BOX_NAMES[b] for b in model.boxes]
    rules = f"joker={model.joker}" + ("" if in_play is None else f", boxes {', '.join(in_play)}")

    def say(text: str) -> None:
        print(*wrap(text), sep="\n", file=out, flush=True)

    say(f"Yahtzee ({rules})")
    solution = cached_solution(env_id, kwargs, say, reference_rate=REFERENCE_RATE)
    say(
        f"Optimal play expects a final score of {solution.value:.4f}; a move's worth is the "
        "score it expects from there on, its own points included."
    )
    say("Type 'keep 5 5 3', 'reroll 1 2' or a box ('full house', 'chance'), or help.")
    _obs, info = env.reset(seed=seed)
    score, lost, moves = 0.0, 0.0, 0
    while True:
        state, mask = game.state, info["action_mask"]
        options = ranked_options(solution, model, state, mask)
        lines = decision_lines(game, score, options[0].worth)
        print("", *lines, *action_table(options, show), sep="\n", file=out)
        action = read_move(
            stdin,
            out,
            options,
            lambda text, state=state, mask=mask: parse_choice(text, model, state, mask),
            HELP,
            show,
            lambda lines=lines: lines,
        )
        if action is None:
            print("input ended before the game did", file=out)
            return 1
        if action == QUIT:
            _summary(score, solution.value, lost, moves, out, over=False)
            return 0
        chosen = next(option for option in options if option.action == action)
        line, loss = verdict(chosen, options[0], show)
        _obs, reward, terminated, truncated, info = env.step(action)
        score, lost, moves = score + reward, lost + loss, moves + 1
        say(line + (f"; score {score:g}" if action >= 32 else ""))
        if terminated or truncated:
            break
    print("", *_card_lines(game), sep="\n", file=out)
    _summary(score, solution.value, lost, moves, out, over=True)
    return 0


def show(value: float) -> str:
    """A worth in points, to four decimals."""
    return f"{value:.4f}"


def ranked_options(
    solution: YahtzeeSolution, model: Yahtzee, state: PlayState, mask: np.ndarray
) -> list[Option]:
    """The legal actions (`mask`) with what they do and their exact worth (the expected final
    score to go, their own points included), best first."""
    card = TurnState(state.filled, state.upper, state.yahtzee50)
    values = solution.turn_action_values(card, state.dice, state.rolls_left)
    return ranked(
        [
            Option(int(a), action_label(model, state, int(a)), float(values[a]))
            for a in np.flatnonzero(mask)
        ]
    )


def decision_lines(game, score: float, best: float) -> list[str]:
    """The state at a decision: the turn, the rolls left, the score and what best play
    expects in all; the dice; the score card."""
    state, model = game.state, game.model
    turn = bin(state.filled & ~model.absent).count("1") + 1
    return [
        f"turn {turn}/{model.num_turns}, rolls left {state.rolls_left}, score {score:g}; "
        f"best play expects {score + best:.4f} in all",
        f"dice: {' '.join(map(str, faces(state)))}",
        *_card_lines(game),
    ]


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


def _summary(score: float, optimum: float, lost: float, moves: int, out: TextIO, over: bool):
    head = f"game over: final score {score:g}" if over else f"quit with a score of {score:g}"
    print(
        head,
        f"optimal play expects a final score of {optimum:.4f} from the start",
        f"your {moves} moves gave up {lost:.4f} in expectation against optimal play",
        file=out,
        sep="\n",
    )
    if over:
        luck = score - (optimum - lost)
        print(f"the dice: {luck:+.4f} (final score - optimum + what the moves gave up)", file=out)

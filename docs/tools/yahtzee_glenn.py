"""Glenn's Yahtzee strategies (J. Glenn, "An Optimal Strategy for Yahtzee", CS-TR-0002, 2006,
section 7 and Table 3) against his published values: the named policies as implemented, and
the other readings of the report tried, each scored exactly.

    python -m docs.tools.yahtzee_glenn [--docs docs] [--only-section] [--recompute]

Every reading (`READINGS`: data, built into an `EstimatePlan` by `reading_plan`) is scored
with `baselines.evaluate` on the full game (2 to 5 minutes each on a quiet machine), under
Verhoeff's rules (Glenn's), and the named policies also under the forced joker rule. The
results go to docs/results/yahtzee_glenn.json, one entry per (reading, strategy, joker) with
its value and the definition that made it (and its hash); an entry whose definition is
unchanged is not computed again (after a change to the code the readings are built with,
`--recompute`), and each is written as soon as it is done, so a stopped run keeps what it
finished. The optimum's per-box means and variances
(`baselines.yahtzee_evaluation.optimal_box_moments`) are kept there too. Then the
"yahtzee-glenn" section of docs/games/yahtzee.md is written from the JSON alone
(`--only-section`: that only, nothing computed).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import baselines
from baselines.yahtzee_evaluation import optimal_box_moments, optimal_solution
from dice_envs.files import atomic_write_bytes
from dice_envs.games.rule import Rule
from dice_envs.games.yahtzee import (
    BOX_NAMES,
    GLENN_NAMES,
    GREEDY_TIE_ORDER,
    LOWER_BOXES,
    OPTIMAL_BOX_MEANS,
    OPTIMAL_BOX_VARIANCES,
    UPPER_BONUS,
    UPPER_BOXES,
    UPPER_LEVELS,
    UPPER_TARGET,
    YAHTZEE,
    EstimatePlan,
    Yahtzee,
    plain_game_values,
    state_index,
    upper_bonus_estimates,
)
from docs.tools.game_pages import markdown_table, page_path
from docs.tools.readme import DOCS, replace_marked_section

ENV_ID = "dice_envs/Yahtzee-v0"
SECTION = "yahtzee-glenn"
JSON_PATH = Path("results") / "yahtzee_glenn.json"  # under the docs folder
GREEDY, HEURISTIC, BETTER = GLENN_NAMES
# Glenn's Table 3 (his rules: joker="verhoeff").
TABLE_3 = {GREEDY: 218.05, HEURISTIC: 240.67, BETTER: 244.87, "optimal": 254.59}
VERHOEFF_OPTIMUM = 254.5896  # Verhoeff's published optimum (1999), which the heuristics read
TITLES = {GREEDY: "greedy", HEURISTIC: "heuristic", BETTER: "better heuristic"}
GLENN_RULES, FORCED = "verhoeff", "forced"
MOMENTS = "optimal-box-moments"
AS_IMPLEMENTED = "as-implemented"

# What each option means when absent: the named policies as implemented.
DEFAULTS: dict[str, Any] = {
    # greedy's box order for ties (box names); None: `GREEDY_TIE_ORDER` for greedy, box
    # order for the heuristics
    "tie_order": None,
    # greedy: E' counts the upper bonus once the total reaches 63 (in the turn it does)
    "upper_bonus_now": False,
    # the bonus estimate's normal mean: "optimal-means" (the optimum's means of the open upper
    # boxes summed) or "upper-game" (the optimum of the open upper boxes alone, no bonus)
    "bonus_mean": "optimal-means",
    # its standard deviation: "variances" (the root of the summed variances), "summed-sds"
    # (the boxes' standard deviations summed), "variance-as-sd" (the summed variance itself)
    "bonus_spread": "variances",
    # the heuristic's mean of the Yahtzee box: "box" (its points) or "with-bonus" (plus the
    # optimum's expected Yahtzee bonuses)
    "yahtzee_mean": "box",
    # the better heuristic's lower table: "plain" (no bonus, no joker) or "bonus-and-joker"
    # (the optimum of the open lower boxes alone with the Yahtzee bonus and the joker rules,
    # by the Yahtzee flag)
    "lower_game": "plain",
    # whether a scoring's points include its Yahtzee bonus (Glenn's s(S, r, c))
    "count_yahtzee_bonus": True,
    # E' adds the upper total scored so far (capped at 63) again
    "upper_total_again": False,
}
_CHOICES = {
    "bonus_mean": ("optimal-means", "upper-game"),
    "bonus_spread": ("variances", "summed-sds", "variance-as-sd"),
    "yahtzee_mean": ("box", "with-bonus"),
    "lower_game": ("plain", "bonus-and-joker"),
}


@dataclass(frozen=True)
class Reading:
    """One reading of the report: options (keys of `DEFAULTS`) read for some strategies.

    Attributes:
        key: its name in the JSON.
        label: the readings table's row; None for a greedy tie order (its order is named).
        strategies: the strategies (of `GLENN_NAMES`) it is scored for.
        options: what differs from the named policies (`DEFAULTS`).
        literal: whether it is a reading of the report's text as written (False: a slip the
            published numbers might hide, which loses points).
    """

    key: str
    label: str | None
    strategies: tuple[str, ...]
    options: Mapping[str, Any] = field(default_factory=dict)
    literal: bool = True


def _names(*boxes: int) -> tuple[str, ...]:
    return tuple(BOX_NAMES[box] for box in boxes)


SIXES_TO_ONES = _names(5, 4, 3, 2, 1, 0)
_LOWER_BY_DIFFICULTY = _names(*GREEDY_TIE_ORDER[:6])  # Yahtzee .. Three of a kind
_STRAIGHTS_DOWN = ("large_straight", "small_straight", "full_house")
_KINDS_DOWN = ("four_of_a_kind", "three_of_a_kind")

READINGS = (
    Reading(AS_IMPLEMENTED, "as implemented (above)", GLENN_NAMES),
    Reading("greedy-box-order", None, (GREEDY,), {"tie_order": BOX_NAMES}),
    Reading(
        "greedy-yahtzee-chance-first",
        None,
        (GREEDY,),
        {"tie_order": ("yahtzee", "chance", *_STRAIGHTS_DOWN, *_KINDS_DOWN, *SIXES_TO_ONES)},
    ),
    Reading(
        "greedy-chance-before-upper",
        None,
        (GREEDY,),
        {"tie_order": (*_LOWER_BY_DIFFICULTY, "chance", *SIXES_TO_ONES)},
    ),
    Reading(
        "greedy-lower-upper-chance",
        None,
        (GREEDY,),
        {"tie_order": (*_LOWER_BY_DIFFICULTY, *SIXES_TO_ONES[::-1], "chance")},
    ),
    Reading(
        "greedy-upper-bonus-now",
        "greedy counting the upper bonus in the turn it is reached (ties in box order)",
        (GREEDY,),
        {"tie_order": BOX_NAMES, "upper_bonus_now": True},
    ),
    Reading(
        "bonus-mean-upper-game",
        "bonus estimate's mean from the upper table, not Verhoeff's means",
        (BETTER,),
        {"bonus_mean": "upper-game"},
    ),
    Reading(
        "lower-game-bonus-and-joker",
        "lower table with the Yahtzee bonus and joker rules",
        (BETTER,),
        {"lower_game": "bonus-and-joker"},
    ),
    Reading(
        "bonus-summed-sds",
        "standard deviations summed, not variances",
        (HEURISTIC, BETTER),
        {"bonus_spread": "summed-sds"},
        literal=False,
    ),
    Reading(
        "bonus-variance-as-sd",
        "the summed variance taken as the standard deviation",
        (HEURISTIC, BETTER),
        {"bonus_spread": "variance-as-sd"},
        literal=False,
    ),
    Reading(
        "yahtzee-mean-with-bonus",
        "the Yahtzee box's mean with the Yahtzee bonuses",
        (HEURISTIC,),
        {"yahtzee_mean": "with-bonus"},
        literal=False,
    ),
    Reading(
        "without-yahtzee-bonus",
        "scorings valued without the Yahtzee bonus",
        (BETTER,),
        {"count_yahtzee_bonus": False},
        literal=False,
    ),
    Reading(
        "upper-total-again",
        "the upper total counted again in E'",
        (BETTER,),
        {"upper_total_again": True},
        literal=False,
    ),
)


# -- the readings as policies ------------------------------------------------------------------


def check_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """`options` with the defaults filled in, or ValueError naming what is not allowed."""
    unknown = sorted(set(options) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"options must be among {sorted(DEFAULTS)}; got {unknown}")
    full = {**DEFAULTS, **options}
    for name, allowed in _CHOICES.items():
        if full[name] not in allowed:
            raise ValueError(f"option {name} must be one of {allowed}; got {full[name]!r}")
    order = full["tie_order"]
    if order is not None:
        if sorted(order) != sorted(BOX_NAMES):
            raise ValueError(f"option tie_order must name each of {BOX_NAMES} once; got {order!r}")
        full["tie_order"] = list(order)
    return full


def _open_boxes(count: int) -> np.ndarray:
    """(2**count, count): whether each box is open, by the filled mask."""
    return (np.arange(1 << count)[:, None] >> np.arange(count) & 1) == 0


def bonus_estimates(options: Mapping[str, Any]) -> np.ndarray:
    """(64, 64): the upper bonus estimate of a heuristic under `options` (checked)."""
    open_upper = _open_boxes(6)
    if options["bonus_mean"] == "upper-game":
        mean = plain_game_values(UPPER_BOXES)
    else:
        mean = open_upper @ OPTIMAL_BOX_MEANS[:6]
    variances = OPTIMAL_BOX_VARIANCES[:6]
    spread = {
        "variances": lambda: np.sqrt(open_upper @ variances),
        "summed-sds": lambda: open_upper @ np.sqrt(variances),
        "variance-as-sd": lambda: open_upper @ variances,
    }[options["bonus_spread"]]()
    return upper_bonus_estimates(mean=mean, spread=spread)


def lower_game_with_bonus(model: Yahtzee) -> np.ndarray:
    """(128, 2): the optimum of the game of the model's lower boxes alone under its joker
    rule (with the Yahtzee bonus), by the filled lower boxes and the Yahtzee flag."""
    lower = [BOX_NAMES[box] for box in model.boxes if box in LOWER_BOXES]
    values = np.zeros((128, 2))
    if not lower:
        return values
    solution = optimal_solution(model.joker, lower)
    filled = solution.model.absent | np.arange(128) << 6
    values[:, 0] = solution.state_values[state_index(filled, 0, 0)]
    has_flag = (filled >> YAHTZEE & 1 == 1) & solution.model.has_yahtzee_box
    values[:, 1] = np.where(
        has_flag, solution.state_values[state_index(filled, 0, 1)], values[:, 0]
    )
    return values


def reading_plan(
    model: Yahtzee, strategy: str, options: Mapping[str, Any], yahtzee_bonus: float | None = None
) -> EstimatePlan:
    """Strategy `strategy` (of `GLENN_NAMES`) of `model` read with `options` (of `DEFAULTS`);
    `yahtzee_bonus`: the optimum's expected Yahtzee bonuses, for ``yahtzee_mean="with-bonus"``."""
    if strategy not in GLENN_NAMES:
        raise ValueError(f"strategy must be one of {GLENN_NAMES}; got {strategy!r}")
    options = check_options(options)
    order = options["tie_order"]
    if order is None:
        box_order = GREEDY_TIE_ORDER if strategy == GREEDY else tuple(range(len(BOX_NAMES)))
    else:
        box_order = tuple(BOX_NAMES.index(name) for name in order)
    lower: np.ndarray
    if strategy == GREEDY:
        upper = np.zeros((UPPER_LEVELS, 64))
        lower = np.zeros(128)
        if options["upper_bonus_now"]:
            upper += UPPER_BONUS * (np.arange(UPPER_LEVELS) >= UPPER_TARGET)[:, None]
    else:
        if strategy == HEURISTIC:
            means = OPTIMAL_BOX_MEANS.copy()
            if options["yahtzee_mean"] == "with-bonus":
                if yahtzee_bonus is None:
                    raise ValueError('yahtzee_mean="with-bonus" needs yahtzee_bonus (a number)')
                means[YAHTZEE] += yahtzee_bonus
            upper = _open_boxes(6) @ means[:6]
            lower = _open_boxes(7) @ means[6:]
        else:
            upper = plain_game_values(UPPER_BOXES)
            if options["lower_game"] == "bonus-and-joker":
                lower = lower_game_with_bonus(model)
            else:
                lower = plain_game_values(LOWER_BOXES)
        upper = upper[None, :] + bonus_estimates(options)
    if options["upper_total_again"]:
        upper = upper + np.arange(UPPER_LEVELS)[:, None]
    return EstimatePlan(
        model, upper, lower, box_order, count_yahtzee_bonus=options["count_yahtzee_bonus"]
    )


# -- the results -------------------------------------------------------------------------------


def definition(
    reading: Reading,
    strategy: str,
    joker: str,
    boxes: Sequence[str] | None = None,
    yahtzee_bonus: float | None = None,
) -> dict[str, Any]:
    """What makes a result: the strategy, the game and every option (defaults filled in;
    the Yahtzee bonus that ``yahtzee_mean="with-bonus"`` adds, as a number)."""
    options = check_options(reading.options)
    if options["yahtzee_mean"] == "with-bonus":
        options["yahtzee_bonus"] = yahtzee_bonus
    return {
        "strategy": strategy,
        "joker": joker,
        "boxes": None if boxes is None else list(boxes),
        "options": options,
    }


def definition_hash(made_of: Mapping[str, Any]) -> str:
    text = json.dumps(made_of, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def result_key(reading: str, strategy: str, joker: str) -> str:
    return f"{reading}/{strategy}/{joker}"


def tasks(yahtzee_bonus: float | None, boxes: Sequence[str] | None = None) -> list[tuple]:
    """(key, reading, strategy, joker, definition) of every result the section shows: each
    reading under Glenn's rules, the named policies also under the forced rule."""
    found = []
    for reading in READINGS:
        jokers = (GLENN_RULES, FORCED) if reading.key == AS_IMPLEMENTED else (GLENN_RULES,)
        for joker in jokers:
            for strategy in reading.strategies:
                made_of = definition(reading, strategy, joker, boxes, yahtzee_bonus)
                key = result_key(reading.key, strategy, joker)
                found.append((key, reading, strategy, joker, made_of))
    return found


def load_results(path: Path) -> dict[str, Any]:
    return json.loads(Path(path).read_text()) if Path(path).is_file() else {}


def save_results(path: Path, results: Mapping[str, Any]) -> None:
    data = json.dumps(dict(sorted(results.items())), indent=1) + "\n"
    atomic_write_bytes(Path(path), data.encode())


def _fresh(results: Mapping[str, Any], key: str, made_of: Mapping[str, Any]) -> bool:
    return key in results and results[key].get("hash") == definition_hash(made_of)


def compute(
    path: Path,
    boxes: Sequence[str] | None = None,
    recompute: bool = False,
    log: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Fill the JSON at `path` with every result missing or made by another definition (all,
    with `recompute`), writing it after each; returns the results."""
    results = load_results(path)
    moments_of = {"what": "optimal_box_moments", "joker": GLENN_RULES, "boxes": boxes}
    if recompute or not _fresh(results, MOMENTS, moments_of):
        start = time.perf_counter()
        moments = optimal_box_moments(GLENN_RULES, boxes)
        results[MOMENTS] = {
            "definition": moments_of,
            "hash": definition_hash(moments_of),
            "means": moments.means.tolist(),
            "variances": moments.variances.tolist(),
            "upper_bonus": moments.upper_bonus,
            "yahtzee_bonus": moments.yahtzee_bonus,
            "seconds": time.perf_counter() - start,
        }
        save_results(path, results)
        log(f"{MOMENTS}: {time.perf_counter() - start:.0f} s")
    yahtzee_bonus = results[MOMENTS]["yahtzee_bonus"]
    for key, reading, strategy, joker, made_of in tasks(yahtzee_bonus, boxes):
        if not recompute and _fresh(results, key, made_of):
            continue
        start = time.perf_counter()
        model = Yahtzee(joker=joker, boxes=boxes)
        plan = reading_plan(model, strategy, reading.options, yahtzee_bonus)
        game = {"joker": joker} if boxes is None else {"joker": joker, "boxes": list(boxes)}
        evaluation = baselines.evaluate(Rule.from_batch(plan, key), ENV_ID, **game)
        results[key] = {
            "definition": made_of,
            "hash": definition_hash(made_of),
            "value": evaluation.value,
            "optimal_value": evaluation.optimal_value,
            "seconds": time.perf_counter() - start,
        }
        save_results(path, results)
        log(f"{key}: {evaluation.value:.4f} ({time.perf_counter() - start:.0f} s)")
    return results


# -- the section -------------------------------------------------------------------------------


def box_title(name: str) -> str:
    return name.replace("_", " ").capitalize()


def order_text(order: Sequence[str]) -> str:
    """Box names in order, runs of three or more upper boxes in steps of one shortened
    ("Sixes .. Ones")."""
    boxes = [BOX_NAMES.index(name) for name in order]
    parts: list[str] = []
    i = 0
    while i < len(boxes):
        j = i + 1
        if boxes[i] in UPPER_BOXES and j < len(boxes) and boxes[j] in UPPER_BOXES:
            step = boxes[j] - boxes[i]
            while j < len(boxes) and boxes[j] in UPPER_BOXES and boxes[j] - boxes[j - 1] == step:
                j += 1
            if abs(step) != 1 or j - i < 3:
                j = i + 1
        if j - i >= 3:
            parts.append(
                f"{box_title(BOX_NAMES[boxes[i]])} .. {box_title(BOX_NAMES[boxes[j - 1]])}"
            )
        else:
            parts.append(box_title(BOX_NAMES[boxes[i]]))
        i = j
    return ", ".join(parts)


def reading_label(reading: Reading) -> str:
    if reading.label is not None:
        return reading.label
    return f"greedy ties: {order_text(reading.options['tie_order'])}"


def _value(results: Mapping, reading: str, strategy: str, joker: str = GLENN_RULES):
    entry = results.get(result_key(reading, strategy, joker))
    return None if entry is None else entry["value"]


def _cell(value: float | None, digits: int) -> str:
    return "not computed yet" if value is None else f"{value:.{digits}f}"


def _signed(value: float) -> str:
    return f"{value:+.2f}"


def _same_digits(value: float, published: float) -> bool:
    return round(value, 2) == published


def values_table(results: Mapping) -> str:
    rows = []
    for strategy in GLENN_NAMES:
        rows.append(
            [
                strategy,
                *(
                    _cell(_value(results, AS_IMPLEMENTED, strategy, j), 4)
                    for j in (GLENN_RULES, FORCED)
                ),
                f"{TABLE_3[strategy]:.2f}",
            ]
        )
    optima = [_optimum(results, joker) for joker in (GLENN_RULES, FORCED)]
    rows.append(["optimal", *(_cell(v, 4) for v in optima), f"{TABLE_3['optimal']:.2f}"])
    header = ["policy", 'joker="verhoeff" (Glenn\'s rules)', 'joker="forced"', "Glenn's Table 3"]
    return markdown_table(header, rows)


def _optimum(results: Mapping, joker: str) -> float | None:
    for key, entry in results.items():
        if key.endswith(f"/{joker}") and "optimal_value" in entry:
            return entry["optimal_value"]
    return None


def readings_table(results: Mapping) -> str:
    rows = []
    for reading in READINGS:
        label = reading_label(reading)
        if reading.options.get("yahtzee_mean") == "with-bonus" and MOMENTS in results:
            mean = OPTIMAL_BOX_MEANS[YAHTZEE] + results[MOMENTS]["yahtzee_bonus"]
            label += f" ({mean:.2f})"
        cells = [
            _cell(_value(results, reading.key, s), 2) if s in reading.strategies else ""
            for s in GLENN_NAMES
        ]
        rows.append([label, *cells])
    return markdown_table(["reading", *(TITLES[s] for s in GLENN_NAMES)], rows)


def _tie_order_readings() -> list[Reading]:
    """The greedy readings that differ from the named policy only by the tie order."""
    return [r for r in READINGS if GREEDY in r.strategies and set(r.options) <= {"tie_order"}]


def greedy_text(results: Mapping) -> str:
    """What greedy's tie order alone does, against Table 3."""
    values = [
        (value, reading)
        for reading in _tie_order_readings()
        if (value := _value(results, reading.key, GREEDY)) is not None
    ]
    if len(values) < 2:
        return "Greedy's tie orders are not all computed yet."
    (low, low_reading), (high, high_reading) = (
        min(values, key=lambda v: v[0]),
        max(values, key=lambda v: v[0]),
    )
    published = TABLE_3[GREEDY]

    def named(reading: Reading) -> str:
        if reading.key == AS_IMPLEMENTED:
            return "as implemented"
        return order_text(reading.options["tie_order"])

    text = (
        f"greedy's tie order, given only by one example, alone moves its value over "
        f"{low:.2f} ({named(low_reading)}) to {high:.2f} ({named(high_reading)})"
    )
    if low <= published <= high:
        return (
            f"{text}, a span that holds {published:.2f}, so the published number pins no "
            "order (and keep ties, which the report does not mention, could move it further)."
        )
    side, gap = ("above", published - high) if published > high else ("below", low - published)
    return (
        f"{text}, a span that misses {published:.2f} (it lies {gap:.2f} {side} it), so the tie "
        "order alone does not explain it."
    )


def heuristics_text(results: Mapping) -> str:
    """Where the heuristics' readings land against ours and Table 3: the literal ones in a
    sentence, the others as a list."""
    heuristics = (HEURISTIC, BETTER)
    ours = {s: _value(results, AS_IMPLEMENTED, s) for s in heuristics}
    literal: dict[str, list[float]] = {s: [] for s in heuristics}
    others: list[str] = []
    hits: list[str] = []
    for reading in READINGS:
        shown = [s for s in heuristics if s in reading.strategies]
        values = {s: _value(results, reading.key, s) for s in shown}
        if not shown or None in values.values():
            continue
        if reading.literal:
            for s, value in values.items():
                literal[s].append(value)
            continue
        cells = [
            f"{TITLES[s]} {values[s]:.2f} ({_signed(values[s] - ours[s])} against the named "
            f"policy, {_signed(values[s] - TABLE_3[s])} against Table 3)"
            for s in shown
        ]
        others.append(f"- {reading_label(reading)}: {'; '.join(cells)}")
        hits += [
            f"{reading_label(reading)} on the {TITLES[s]}'s {TABLE_3[s]:.2f}"
            for s in shown
            if _same_digits(values[s], TABLE_3[s])
        ]
    if not all(literal.values()) or None in ours.values():
        return "The heuristics' readings are not all computed yet."
    margins = {s: min(v) - TABLE_3[s] for s, v in literal.items()}
    if all(m > 0 for m in margins.values()):
        text = (
            "Every literal reading of the text scores above Table 3 (by at least "
            f"{margins[HEURISTIC]:.2f} and {margins[BETTER]:.2f} points)."
        )
    else:
        below = [TITLES[s] for s, m in margins.items() if m <= 0]
        text = (
            "A literal reading of the text scores at or below Table 3 for the "
            f"{' and '.join(below)}."
        )
    if not others:
        return text
    if not hits:
        verdict = "none lands on a published number"
    else:
        verdict = f"{'; '.join(hits)}, but no reading lands on both published numbers at once"
    return (
        f"{text} The other readings tried (slips the published numbers might hide): {verdict}.\n\n"
        + "\n".join(others)
    )


def moments_text(results: Mapping) -> str:
    """The optimum's per-box table the heuristics read, from the JSON."""
    if MOMENTS not in results:
        return "recomputed exactly by `baselines.yahtzee_evaluation.optimal_box_moments`"
    entry = results[MOMENTS]
    means, variances = np.array(entry["means"]), np.array(entry["variances"])
    total = means.sum() + entry["upper_bonus"] + entry["yahtzee_bonus"]
    drift = max(
        np.abs(means - OPTIMAL_BOX_MEANS).max(), np.abs(variances - OPTIMAL_BOX_VARIANCES).max()
    )
    return (
        "recomputed exactly by `baselines.yahtzee_evaluation.optimal_box_moments`: it adds "
        f"up to {total:.4f} with the upper bonus {entry['upper_bonus']:.4f} and Yahtzee "
        f"bonuses {entry['yahtzee_bonus']:.4f}; the code's `OPTIMAL_BOX_MEANS` and "
        f"`OPTIMAL_BOX_VARIANCES` are within {drift:.0e} of it"
    )


def _minutes(results: Mapping) -> str:
    seconds = [e["seconds"] for k, e in results.items() if k != MOMENTS and "seconds" in e]
    if not seconds:
        return ""
    low, high = round(min(seconds) / 60), round(max(seconds) / 60)
    span = f"about {low}" if low == high else f"{low} to {high}"
    return f", {span} minutes each when computed"


def conclusion_text(results: Mapping) -> str:
    implemented = [_value(results, AS_IMPLEMENTED, s) for s in GLENN_NAMES]
    reproduced = [
        s for s, v in zip(GLENN_NAMES, implemented, strict=True)
        if v is not None and _same_digits(v, TABLE_3[s])
    ]  # fmt: skip
    optimum = _optimum(results, GLENN_RULES)
    parts = []
    if optimum is not None:
        verb = "reproduces" if _same_digits(optimum, TABLE_3["optimal"]) else "does not reproduce"
        parts.append(f"The optimum {verb} Table 3's {TABLE_3['optimal']:.2f}")
    if None in implemented:
        parts.append("the strategies are not all computed yet")
    elif reproduced:
        parts.append(f"of the strategies, {', '.join(reproduced)} reproduces its published digits")
    else:
        parts.append("the three strategies do not")
    hits = [
        reading_label(r)
        for r in READINGS
        if r.key != AS_IMPLEMENTED
        for s in r.strategies
        if (v := _value(results, r.key, s)) is not None and _same_digits(v, TABLE_3[s])
    ]
    others = (
        f"and of the other readings tried, these land on a published number: {'; '.join(hits)}"
        if hits
        else "and no other reading tried does"
    )
    return f"{'; '.join(parts)}, {others} (each evaluated exactly under Verhoeff's rules):"


def closing_text(results: Mapping) -> str:
    """Why the published digits cannot be reproduced, from the numbers."""
    implemented = [_value(results, AS_IMPLEMENTED, s) for s in (HEURISTIC, BETTER)]
    if None in implemented:
        return ""
    above = all(v > TABLE_3[s] for v, s in zip(implemented, (HEURISTIC, BETTER), strict=True))
    what = "weaker" if above else "score as published"
    moments = results.get(MOMENTS)
    total = None
    if moments is not None:
        total = sum(moments["means"]) + moments["upper_bonus"] + moments["yahtzee_bonus"]
    if total is not None and round(total, 4) == VERHOEFF_OPTIMUM:
        ours = f"ours are recomputed exactly, to the digit of his {VERHOEFF_OPTIMUM}"
    elif total is not None:
        ours = f"ours, recomputed exactly, add up to {total:.4f} against his {VERHOEFF_OPTIMUM}"
    else:
        ours = "ours are not computed yet"
    return (
        f"Why the published digits cannot be reproduced from the text: {greedy_text(results)}"
        "\n\nThe heuristics' estimate reads Verhoeff's per-box means and variances from a page "
        f"we could not see ({ours}). {heuristics_text(results)}\n\nGlenn's evaluation code "
        f"and tables are not published, so what makes his two heuristics {what} cannot be "
        "told from the report."
    )


def section_text(results: Mapping) -> str:
    """The page's section, from the results alone."""
    greedy_order = order_text(_names(*GREEDY_TIE_ORDER))
    return "\n\n".join(
        part
        for part in [
            "## Glenn's strategies (2006)",
            "Three more named policies (`Yahtzee.named_policy`, not in the registered list the "
            "generated tables above score) follow J. Glenn's report (CS-TR-0002, section 7, "
            "Table 3), from its own definitions. Each plays every turn exactly (keep, roll, "
            "keep, roll, score) for the points the scoring writes (with any Yahtzee bonus, "
            "without the upper bonus) plus an estimate E' of the future score of the "
            "turn-start state it leads to:",
            "- `glenn-greedy`: E' = 0 (the upper bonus is never sought); boxes of equal points "
            f"go to the more difficult one: {greedy_order} (the report names only Four before "
            "Three of a kind).\n"
            "- `glenn-heuristic`: E' is the sum of the optimum's expected points in each open "
            f"box (the table of Verhoeff's trivia page, {moments_text(results)}), plus "
            f"{UPPER_BONUS} times the chance that a normal variable with the open upper boxes' "
            f"summed means and summed variances makes up what {UPPER_TARGET} still needs, plus "
            "0 for the Yahtzee bonus.\n"
            "- `glenn-better-heuristic`: E' is the optimum of the game of the open upper boxes "
            "alone (no bonus) plus that of the open lower boxes alone (no bonus, no joker), "
            "plus the same two bonus estimates.",
            "Choices the report leaves open: the per-box tables are Verhoeff's rules' under "
            "every joker rule; no continuity correction; the bonus counts "
            f"{UPPER_BONUS} once the upper total reaches {UPPER_TARGET}; the Yahtzee box's mean "
            "excludes the Yahtzee bonuses; keeps of equal worth go to the lowest-numbered "
            "reroll, and scoring now to rerolling of equal worth.",
            f'Exact values (`baselines.evaluate(name, "{ENV_ID}", joker=...)`{_minutes(results)}):',
            values_table(results),
            conclusion_text(results),
            readings_table(results),
            closing_text(results),
            "Made by `python -m docs.tools.yahtzee_glenn` from docs/results/yahtzee_glenn.json "
            "(each reading's definition is `READINGS` there, built by `reading_plan`).",
        ]
        if part
    )


def write_section(results: Mapping, docs: Path) -> Path:
    """The Yahtzee page's section from `results` (refusing a page without its markers)."""
    page = page_path(ENV_ID, docs)
    replace_marked_section(page, SECTION, section_text(results))
    return page


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docs.tools.yahtzee_glenn")
    parser.add_argument("--docs", type=Path, default=DOCS, help="the docs folder")
    parser.add_argument("--only-section", action="store_true",
                        help="write the section from the JSON, computing nothing")  # fmt: skip
    parser.add_argument("--recompute", action="store_true",
                        help="compute every result again, even those in the JSON")  # fmt: skip
    args = parser.parse_args(argv)
    path = args.docs / JSON_PATH
    if args.only_section:
        results = load_results(path)
    else:
        try:
            results = compute(path, recompute=args.recompute)
        except KeyboardInterrupt:
            print(f"stopped: {path} keeps every finished result; run again to go on")
            return 130
    print(write_section(results, args.docs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Write docs/results/tuning.md from the committed search records (docs/training/tuning/*.json).

    python -m docs.tools.tuning

Run from the repository's root. A record is what `python -m training.tune CONFIG --record FILE`
writes; each gets a section: its space, budget and seed, every trial (those that ran the whole
budget first, each group by final score), the winner and the runner-up, the committed setting's
score and whether tuning helped. Nothing here is timed or trained, so the page is the same on
every run (a test holds the committed page to what this tool writes now).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from training.tune import (
    DEFAULT_GRACE,
    RELATIVE,
    SAMPLED,
    budget_text,
    final_score,
    percent,
    ranked,
    record_seeds,
    seeds_text,
    settle,
)

ROOT = Path(__file__).resolve().parents[2]
RECORDS = ROOT / "docs" / "training" / "tuning"
PAGE = ROOT / "docs" / "results" / "tuning.md"

INTRO = """\
# Tuning searches

Each section below is one hyperparameter search by `training.tune`: Ray Tune with ASHA, every
trial a run of a committed config with sampled hyperparameters, scored by its exact relative
gap at every evaluation point (a self-play config: its exact exploitability), so the objective
has no sampling noise. The searches use a seed that no config's own runs use (1000 unless
stated), so a setting is never chosen on the runs that then report it. The winner is the best
trial that ran the whole budget (ties: the lower mean score over the evaluation points, then
the parameters' order); the config's setting at the time of the search is scored at the same
budget and seeds (`--baseline`) to say whether tuning helped. Where the curves have eight or
more evaluation points, the verdict also holds the two settings' mean over the last quarter of
them: a final point can be one lucky evaluation of an oscillating learner, so a winner that
ends lower but is not lower on that mean makes the search inconclusive. A search of one seed
scores each setting by one run: a difference smaller than the spread between seeds (the
training report gives it per config) is not evidence that one setting is better. A search with
`--seeds K` scores each by the mean of K runs (`--seed` to `--seed`+K-1) at every evaluation
point. Where the winner scored lower, its setting went into the config (its floats rounded to
three significant digits); the last line of each section says what the config holds now.

Record a search and rewrite this page (from the repository's root):

```
python -m training.tune configs/GAME/ALGO.yaml --budget quick --samples 8 --baseline \\
    --record docs/training/tuning/GAME_ALGO_quick.json
python -m docs.tools.tuning
```
"""

NO_RECORDS = "No search has been recorded yet.\n"
# The summary's word for each verdict (see `verdict`); any other verdict is "not measured".
VERDICT_WORDS = {
    "Tuning helped": "helped",
    "Tuning did not help": "did not help",
    "Tuning was inconclusive": "inconclusive",
}
OBJECTIVE_NAMES = {
    "relative_gap": "relative gap",
    "exploitability": "exploitability",
    SAMPLED: "relative gap (sampled at ASHA's rungs, exact at the end)",
}
BASELINE_SOURCES = {
    "run": "a run beside the trials",
    "trial": "one of the trials, which sampled it",
    "store": "its finished run, read from the run store",
}


def records(folder: Path = RECORDS) -> list[tuple[str, dict[str, Any]]]:
    """(file name, record) of every record in `folder`, by file name."""
    return [(path.name, json.loads(path.read_text())) for path in sorted(folder.glob("*.json"))]


def page(folder: Path = RECORDS) -> str:
    """The whole page from the records in `folder`."""
    found = records(folder)
    if not found:
        return INTRO + "\n" + NO_RECORDS
    sections = "".join("\n" + search_section(name, record) for name, record in found)
    return INTRO + "\n" + summary(found) + shared_settings(found) + sections


def summary(found: list[tuple[str, dict[str, Any]]]) -> str:
    """One row per search: the setting searched from against the best trial, whether tuning
    helped, and where ASHA's first rung ranked the setting searched from."""
    lines = [
        "## All searches",
        "",
        "| config | budget | setting searched from | best trial | tuning | searched-from at "
        "ASHA's first rung |",
        "|---|---|---|---|---|---|",
    ]
    helped = 0
    for _, record in found:
        objective, winner, baseline = record["objective"], record["winner"], record["baseline"]
        said = verdict(record)
        helped += said.startswith("Tuning helped")
        word = next(
            (w for start, w in VERDICT_WORDS.items() if said.startswith(start)), "not measured"
        )
        rank = rung_rank(record)
        lines.append(
            f"| `{_config_name(record)}` | "
            f"{budget_text(record)}{heading_tail(record)} | "
            f"{score(final_score(baseline or {}, objective), objective)} | "
            f"{score(final_score(winner or {}, objective), objective)} | {word} | "
            f"{'-' if rank is None else f'behind {rank[0]} of {rank[1]}'} |"
        )
    lines += ["", f"Tuning helped in {helped} of the {len(found)} searches.", ""]
    return "\n".join(lines)


def shared_settings(found: list[tuple[str, dict[str, Any]]]) -> str:
    """The searches that tried the same settings (one space, one sampler seed), and the setting
    with the best median place in their trial orders (`sorted_trials`); "" if none did."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for _, record in found:
        settings = tuple(sorted(_setting(trial) for trial in record["trials"]))
        groups.setdefault(settings, []).append(record)
    lines = []
    for settings, group in groups.items():
        if len(group) < 2 or len(settings) < 2:  # a check of one setting searched nothing
            continue
        places: dict[tuple, list[int]] = {setting: [] for setting in settings}
        for record in group:
            for place, trial in enumerate(sorted_trials(record), start=1):
                places[_setting(trial)].append(place)
        best = min(settings, key=lambda s: (np.median(places[s]), np.mean(places[s]), s))
        shown = ", ".join(f"`{key}` {_cell(value)}" for key, value in best)
        names = ", ".join(
            f"`{_config_name(record)}`"
            + (f" ({tail.removeprefix(', ')})" if (tail := heading_tail(record)) else "")
            for record in group
        )
        lines.append(
            f"- {len(group)} searches tried the same {len(settings)} settings: {names}. The "
            f"setting with the best median place in their orders ({shown}) has median place "
            f"{np.median(places[best]):g} of {len(settings)}; it won {places[best].count(1)} "
            f"of the {len(group)} searches."
        )
    if not lines:
        return ""
    head = (
        "\n## The same settings in several searches\n\nRay Tune's sampler is seeded by the "
        "search's `--seed`, so searches of one space with one seed try the same settings; a "
        "search with another `--seed` would try others.\n\n"
    )
    return head + "\n".join(lines) + "\n"


def _setting(trial: dict[str, Any]) -> tuple:
    """A trial's params as a key; floats to 12 significant digits, since the same seeded sampler
    has given values one unit in the last place apart in two searches."""
    return tuple(
        sorted(
            (k, float(f"{v:.12g}") if isinstance(v, float) else v)
            for k, v in trial["params"].items()
        )
    )


def _config_name(record: dict[str, Any]) -> str:
    return record["config"]["path"].removeprefix("configs/")


def score(value: float | None, objective: str) -> str:
    """A final score as the page writes it: a relative gap in %, an exploitability as is."""
    if value is None:
        return "none"
    return percent(value) if objective in RELATIVE else f"{settle(value):.4g}"


def _cell(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def _config_value(value: Any) -> str:
    """A hyperparameter as the page writes it: a number, a schedule, or not set."""
    if value is None:
        return "not set (the library's default)"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_config_value(v)}" for key, v in value.items()) + "}"
    return _cell(value)


def search_section(name: str, record: dict[str, Any]) -> str:
    """One search: its settings, space, trials, winner and runner-up, and the verdict."""
    objective = record["objective"]
    asha = record["asha"]
    trials = f"{record['samples']} trial" + ("s" if record["samples"] != 1 else "")
    lines = [
        f"## `{record['config']['path']}`, {budget_text(record)}{heading_tail(record)}",
        "",
        f"Record: [`{name}`](../training/tuning/{name}). {record['env_id']} "
        f"{_kwargs(record['env_kwargs'])}, {record['algo']}; {trials} of "
        f"{record['timesteps']:,} steps (an exact evaluation every {record['eval_every']:,}), "
        f"{seeds_text(record)}, minimising the {OBJECTIVE_NAMES[objective]}; ASHA with grace "
        f"{asha['grace_period']} evaluations and reduction factor {asha['reduction_factor']}; "
        f"search space {_space_source(record)}. "
        f"Config sha256 `{record['config']['sha256'][:12]}`, dice-envs "
        f"{record['package']['version']} (code `{record['package']['code']}`), Ray "
        f"{record['libraries']['ray']}; {record['wall_seconds']:.0f} s of wall time.",
        "",
        "| hyperparameter | sampled from | value at the search |",
        "|---|---|---|",
    ]
    for key, spec in record["space"].items():
        kind, values = next(iter(spec.items()))
        committed = _setting_at(record["base_hyperparams"], key)
        lines.append(f"| `{key}` | {kind} {values} | {committed} |")
    lines += ["", *trials_table(record), "", *outcome(record)]
    return "\n".join(lines) + "\n"


def _space_source(record: dict[str, Any]) -> str:
    """`built in (algo)`, or the space file as a link from this page."""
    source = record.get("space_source", "")
    if source.startswith("built in") or not source:
        return source or "not recorded"
    path = Path(source)
    if path.parts[:1] != ("docs",):
        return f"`{source}`"  # not in the site: named, not linked
    return f"[`{path.name}`](../{path.relative_to('docs').as_posix()})"


def _kwargs(kwargs: dict[str, Any]) -> str:
    return "(" + ", ".join(f"{k}={v}" for k, v in kwargs.items()) + ")" if kwargs else ""


def sorted_trials(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The trials that ran the whole budget in the winner's order, then those ASHA stopped by
    final score, then those that failed."""
    objective = record["objective"]
    done = ranked(record["trials"], objective)
    stopped = [t for t in record["trials"] if t["stopped_by_asha"]]
    stopped.sort(key=lambda t: (settle(final_score(t, objective)), -t["steps"], t["trial"]))
    return done + stopped + [t for t in record["trials"] if t["error"] is not None]


def trials_table(record: dict[str, Any]) -> list[str]:
    """The trials as a Markdown table."""
    objective, space = record["objective"], list(record["space"])
    extra = {"exploitability": ["final exploitability"], SAMPLED: ["final sampled relative gap"]}
    extra = extra.get(objective, [])
    header = ["trial", *[f"`{key}`" for key in space], *extra]
    header += ["final relative gap", "final gap", "steps reached", "stopped early"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for trial in sorted_trials(record):
        params = [_cell(trial["params"][key]) for key in space]
        if trial["error"] is not None:
            results = [*["failed"] * (len(extra) + 2), f"{trial['steps']:,}", "failed"]
        else:
            results = [score(trial[f"final_{objective}"], objective)] if extra else []
            gap = trial.get("final_gap")  # none for a game too large for tables stopped early
            results += [
                score(trial.get("final_relative_gap"), "relative_gap"),
                "none" if gap is None else f"{settle(gap):.4g}",
                f"{trial['steps']:,}",
                "yes" if trial["stopped_by_asha"] else "no",
            ]
        lines.append("| " + " | ".join([str(trial["trial"]), *params, *results]) + " |")
    return lines


def _described(label: str, summary: dict[str, Any] | None, record: dict[str, Any]) -> str:
    if summary is None:
        finished = sum(trial["finished"] for trial in record["trials"])
        return (
            f"- {label}: none (only {finished} of the {len(record['trials'])} trials ran the "
            "whole budget)."
        )
    params = ", ".join(f"`{key}` = {_cell(value)}" for key, value in summary["params"].items())
    objective = record["objective"]
    return (
        f"- {label}: trial {summary['trial']}, {params}: "
        f"{OBJECTIVE_NAMES[objective]} {score(final_score(summary, objective), objective)}."
    )


def outcome(record: dict[str, Any]) -> list[str]:
    """The winner, the runner-up, the committed setting's score and the verdict."""
    objective, baseline = record["objective"], record["baseline"]
    lines = [
        _described("Winner", record["winner"], record),
        _described("Runner-up", record["runner_up"], record),
    ]
    if baseline is not None:
        lines.append(
            f"- The setting searched from ({BASELINE_SOURCES[baseline['source']]}): "
            f"{OBJECTIVE_NAMES[objective]} {score(final_score(baseline, objective), objective)}"
            f" at {baseline['steps']:,} steps."
        )
    said, rung = verdict(record), first_rung(record)
    if rung and said.startswith("Tuning did not"):
        said += " " + rung
    return [*lines, "", said, "", adoption(record)]


def rung_rank(record: dict[str, Any]) -> tuple[int, int] | None:
    """(trials that scored better, trials there) at ASHA's first rung for the setting searched
    from; None without a baseline curve that reaches the rung."""
    objective, baseline = record["objective"], record["baseline"]
    index = record["asha"]["grace_period"] - 1  # evaluation i is training iteration i + 1
    if baseline is None or len(baseline.get("curve") or []) <= index:
        return None
    there = [t["curve"][index][objective] for t in record["trials"] if len(t["curve"]) > index]
    own = settle(baseline["curve"][index][objective])
    return sum(settle(value) < own for value in there), len(there)


def first_rung(record: dict[str, Any]) -> str | None:
    """Where the setting searched from would have ranked at ASHA's first rung (after `grace`
    evaluations) among the trials there: a setting that starts slow and ends best is one that
    ASHA stops. None without a baseline curve that reaches the rung."""
    rank = rung_rank(record)
    if rank is None:
        return None
    behind, trials = rank
    objective, baseline = record["objective"], record["baseline"]
    own = baseline["curve"][record["asha"]["grace_period"] - 1]
    kept = record["asha"]["reduction_factor"]
    return (
        f"At ASHA's first rung ({own['steps']:,} steps) it had {OBJECTIVE_NAMES[objective]} "
        f"{score(own[objective], objective)}, behind {behind} of the {trials} trials there; "
        f"ASHA lets about the best 1/{kept} of a rung go on."
    )


def adoption(record: dict[str, Any]) -> str:
    """Whether the config file holds the winner now, the setting searched from, or another:
    then the settings that changed, as the page writes them (four significant digits), and
    which of them took the winner's value."""
    path = ROOT / record["config"]["path"]
    if not path.exists():
        return f"`{record['config']['path']}` is no longer in the repository."
    current = yaml.safe_load(path.read_text()).get("hyperparams", {})
    keys = list(record["space"])
    base = {key: _setting_at(record["base_hyperparams"], key) for key in keys}
    now = {key: _setting_at(current, key) for key in keys}
    if now == base:
        return "The config keeps the setting the search started from."
    winner = record["winner"]
    taken = {
        key
        for key in keys
        if winner is not None and _close(_value(current, key), winner["params"][key])
    }
    if taken == set(keys):
        return "The config now holds the winner's setting (rounded to three significant digits)."
    shown = ", ".join(
        f"`{key}` {base[key]} → {now[key]}" + (" (the winner's)" if key in taken else "")
        for key in keys
        if now[key] != base[key]
    )
    since = "since this search" + (", not to its winner" if winner is not None else "")
    return f"The config has changed {since}: {shown}."


def _setting_at(hyperparams: dict[str, Any], dotted: str) -> str:
    """The setting at a dotted key as the page writes it; where a part of the path holds a
    value instead of a mapping (a constant where a schedule was searched), that value."""
    node: Any = hyperparams
    parts = dotted.split(".")
    for depth, key in enumerate(parts):
        if not isinstance(node, dict):
            return f"{_config_value(node)} (the whole `{'.'.join(parts[:depth])}`)"
        if key not in node:
            return _config_value(None)
        node = node[key]
    return _config_value(node)


def _value(hyperparams: dict[str, Any], dotted: str) -> Any:
    node: Any = hyperparams
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _close(value: Any, searched: Any) -> bool:
    if isinstance(searched, float) and isinstance(value, int | float):
        # Three significant digits: a learning rate of 3e-4 is not "close" to 7e-4.
        return abs(value - searched) <= 5e-3 * abs(searched)
    return value == searched


def heading_tail(record: dict[str, Any]) -> str:
    """What a heading adds to the budget: `, seeds 1000-1002` for a search of several seeds per
    trial, `, ASHA grace 4` where the grace was not the default; else nothing."""
    seeds = record_seeds(record)
    tail = f", seeds {seeds[0]}-{seeds[-1]}" if len(seeds) > 1 else ""
    grace = record.get("asha", {}).get("grace_period", DEFAULT_GRACE)
    return tail + (f", ASHA grace {grace}" if grace != DEFAULT_GRACE else "")


def verdict(record: dict[str, Any]) -> str:
    """Whether tuning helped, in one plain sentence, from the winner and the baseline."""
    objective, winner, baseline = record["objective"], record["winner"], record["baseline"]
    name = OBJECTIVE_NAMES[objective]
    if winner is None:
        return "No trial ran the whole budget, so the search found no setting."
    if baseline is None or final_score(baseline, objective) is None:
        return (
            "The setting searched from was not scored at this budget and seeds (no `--baseline`), "
            "so whether tuning helped is not measured."
        )
    committed, best = final_score(baseline, objective), final_score(winner, objective)
    scores = (
        f"the setting searched from had {name} {score(committed, objective)} and the best "
        f"trial {score(best, objective)}"
    )
    if settle(best) >= settle(committed):
        return f"Tuning did not help: {scores}."
    late = late_means(record)
    if late is not None:
        count, start, committed_mean, best_mean = late
        if settle(best_mean) >= settle(committed_mean):
            return (
                f"Tuning was inconclusive: at the final evaluation {scores}, but over the last "
                f"{count} evaluations (from {start:,} steps on) their means were "
                f"{score(committed_mean, objective)} and {score(best_mean, objective)}."
            )
    by = settle(committed) - settle(best)
    amount = f"{100 * by:.4g} percentage points" if objective in RELATIVE else f"{by:.4g}"
    return f"Tuning helped by {amount}: {scores}."


def late_means(record: dict[str, Any]) -> tuple[int, int, float, float] | None:
    """(points, first step, the setting searched from's mean, the winner's mean) over the last
    quarter of the evaluation points after the start; None where either curve is missing,
    they differ in length, or a quarter is fewer than two points (then it is the final)."""
    winner, baseline = record["winner"], record["baseline"]
    own = (baseline or {}).get("curve")
    best = next(
        (t["curve"] for t in record["trials"] if t["trial"] == (winner or {}).get("trial")), None
    )
    if not own or not best or len(own) != len(best):
        return None
    count = (len(own) - 1) // 4
    if count < 2:
        return None
    objective = record["objective"]
    means = [sum(p[objective] for p in curve[-count:]) / count for curve in (own, best)]
    return count, own[-count]["steps"], means[0], means[1]


def main() -> int:
    PAGE.write_text(page())
    print(f"wrote {PAGE.relative_to(ROOT)} from {len(records())} search record(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The report's targets: bounds on a measure of named configs, checked on finished runs.

A targets file (`configs/targets.yaml`) is a YAML list; each entry has a `name`, the
`configs` it judges (`<game>/<config>`), the `measure` (`gap`, `relative_gap` or
`exploitability`), the `bound` the measure must not exceed, and `of`: `best` (the config with
the smallest mean over its seeds must meet it) or `every` (each config's mean must). The
targets table says, for every target with a config in a report, what was measured, whether it
is met, by how much it is missed, and what it cost; for a missed target, what the learner's own
value errors show at the end. A target some of whose configs have no runs in the report names
them, and is judged only where they cannot change the verdict: `best` met by a config there,
`every` missed by one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

MEASURES = ("gap", "relative_gap", "exploitability")
OF = ("best", "every")


@dataclass(frozen=True)
class Target:
    name: str
    configs: tuple[str, ...]
    measure: str
    bound: float
    of: str


def load_targets(path: str | Path) -> list[Target]:
    """The targets of a YAML file; a ValueError names the entry and field that is wrong."""
    entries = yaml.safe_load(Path(path).read_text())
    if not isinstance(entries, list):
        raise ValueError(f"targets file {path}: must be a YAML list of targets")
    return [_target(entry, f"{path}, target {i}") for i, entry in enumerate(entries)]


def _target(entry: Any, where: str) -> Target:
    fields = {"name", "configs", "measure", "bound", "of"}
    if not isinstance(entry, dict) or set(entry) != fields:
        got = sorted(entry) if isinstance(entry, dict) else entry
        raise ValueError(f"{where}: must have exactly the fields {sorted(fields)}; got {got}")
    configs = entry["configs"]
    if (
        not isinstance(configs, list)
        or not configs
        or not all(isinstance(c, str) and c.count("/") == 1 for c in configs)
    ):
        raise ValueError(f"{where}: configs must be a list of <game>/<config>; got {configs!r}")
    if entry["measure"] not in MEASURES:
        raise ValueError(f"{where}: measure must be one of {MEASURES}; got {entry['measure']!r}")
    if entry["of"] not in OF:
        raise ValueError(f"{where}: of must be one of {OF}; got {entry['of']!r}")
    bound = entry["bound"]
    if isinstance(bound, bool) or not isinstance(bound, int | float) or not bound > 0:
        raise ValueError(f"{where}: bound must be a positive number; got {bound!r}")
    return Target(str(entry["name"]), tuple(configs), entry["measure"], float(bound), entry["of"])


def config_name(path: Path) -> str:
    """configs/pig/ppo_goal100.yaml -> pig/ppo_goal100."""
    return f"{path.parent.name}/{path.stem}"


def _text(measure: str, value: float) -> str:
    return f"{100 * value:.3g} %" if measure == "relative_gap" else f"{value:.4g}"


def _miss_text(measure: str, value: float) -> str:
    """How far past its bound a measure is: a relative gap's miss in percentage points (8.5 %
    against a 5 % bound misses by 3.5 of them, not by 3.5 % of anything)."""
    if measure == "relative_gap":
        return f"{100 * value:.3g} percentage points"
    return _text(measure, value)


def _judged(target: Target, groups: dict[Path, dict[str, Any]]) -> list[tuple[str, list[dict]]]:
    """(config name, its results) of the target's configs that `groups` holds, in the target's
    order."""
    by_name = {config_name(path): group["results"] for path, group in groups.items()}
    return [(name, by_name[name]) for name in target.configs if name in by_name]


def _mean(results: list[dict], measure: str) -> float:
    return float(np.mean([r[measure] for r in results]))


def verdict(target: Target, groups: dict[Path, dict[str, Any]]) -> tuple[bool, float, str]:
    """(met, the judged mean, the config it belongs to): for `best` the smallest config mean,
    for `every` the largest."""
    means = {name: _mean(results, target.measure) for name, results in _judged(target, groups)}
    pick = min if target.of == "best" else max
    name = pick(means, key=means.get)
    return means[name] <= target.bound, means[name], name


def _minutes(results: list[dict]) -> str:
    seconds = [r["timing"].get("final", {}).get("seconds") for r in results]
    if any(s is None for s in seconds):
        return "not recorded"
    return f"{np.mean(seconds) / 60:.1f}"


def targets_table(groups: dict[Path, dict[str, Any]], targets: list[Target]) -> str:
    """Markdown: the table of every target with a config in `groups` (one whose other configs
    are not there is not judged, and says which are missing), then one line per missed target
    with the value errors of the config that decides it; "" if no target has a config there."""
    names = {config_name(path) for path in groups}
    shown = [t for t in targets if set(t.configs) & names]
    if not shown:
        return ""
    header = [
        "target", "agent (config)", "mean over seeds", "worst seed", "bound", "verdict",
        "steps per run", "training min per run",
    ]  # fmt: skip
    rows, missed = [], []
    for target in shown:
        absent = [name for name in target.configs if name not in names]
        met, value, decider = verdict(target, groups)
        # Without a config, `best` can still be met (the others cannot undo it) and `every`
        # missed (by at least as much); anything else waits for the missing runs.
        decided = not absent or met == (target.of == "best")
        without = f"; {', '.join(absent)} not in this report" if absent else ""
        if not decided:
            judged = "not judged: no runs of " + ", ".join(absent) + " in this report"
        elif met:
            judged = f"met ({target.of} agent: {_text(target.measure, value)}{without})"
        else:
            at_least = "at least " if absent else ""
            judged = (
                f"**missed by {at_least}{_miss_text(target.measure, value - target.bound)}**"
                f"{without}"
            )
            missed.append(_missed_line(target, value, decider, groups, at_least))
        for i, (name, results) in enumerate(_judged(target, groups)):
            values = [r[target.measure] for r in results]
            rows.append(
                [
                    target.name if i == 0 else "",
                    f"{results[0]['agent']} ({name})",
                    _text(target.measure, float(np.mean(values))),
                    f"{_text(target.measure, max(values))} (seed "
                    f"{results[int(np.argmax(values))]['seed']})",
                    _text(target.measure, target.bound) if i == 0 else "",
                    judged if i == 0 else "",
                    f"{int(np.mean([r['steps'] for r in results])):,}",
                    _minutes(results),
                ]
            )
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + ("\n\n" + "\n".join(missed) if missed else "")


def _missed_line(target: Target, value: float, decider: str, groups, at_least: str = "") -> str:
    """What the deciding config's own value estimates say at the end of its runs."""
    results = _judged(Target(target.name, (decider,), "", 0, ""), groups)[0][1]
    measured, bound = _text(target.measure, value), _text(target.measure, target.bound)
    text = (
        f"- {target.name}: missed by {at_least}{_miss_text(target.measure, value - target.bound)} "
        f"({decider}: {measured} against {bound})."
    )
    if not all("value_error" in r for r in results):
        return text + f" Its runs keep no value errors{_why_no_value_errors(decider, groups)}."
    error = np.mean([r["value_error"] for r in results])
    return text + (
        f" At the end its own value estimates are off by {error:+.3g} on average over the "
        f"states its policy visits ({'optimistic' if error > 0 else 'pessimistic'}), "
        f"{np.mean([r['value_abs_error'] for r in results]):.3g} in absolute value, and the "
        f"error changes the greedy action at "
        f"{100 * np.mean([r['value_changed_share'] for r in results]):.3g} % of those visits "
        "(the error map shows where)."
    )


def _why_no_value_errors(decider: str, groups) -> str:
    """Why the runs of config `decider` hold no value errors, as " (...)", or "" if not known."""
    import dice_envs

    config = next(g["config"] for path, g in groups.items() if config_name(path) == decider)
    if config.get("selfplay") is not None:
        return " (self-play tables value the mover's seat)"
    env_id = config.get("env_id")
    if env_id in dice_envs.GAMES and not dice_envs.game(env_id).tables:
        return " (a game too large for tables has no per-state values to hold them against)"
    return ""

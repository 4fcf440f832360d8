"""The repository's training report: the library's results table (`training.report`) with
the heuristics and Monte Carlo beside it, the best agents, the targets, the figures of gap
and agreement, value errors, loss and error maps, Monte Carlo against exact evaluation and
exploitability, the time taken, and each trained game's training section; from the run store
or from a run archive, for exactly the runs that the configs and the budget define.

    python -m docs.tools.report [--budget quick] [--configs configs] [--runs runs]
                                [--archive FOLDER] [--out dice-envs-report/<budget>]
                                [--games pig ...]

Ad-hoc runs (another seed, an edited config) live in the same store but never enter the
report: it looks up each planned run by its identity and refuses to build while one is
missing. With `--archive` it reads an archive of runs instead (`docs.tools.archive`: what the
report needs of each run, by config name and seed, small enough to commit), refuses an
archived run made from another config than the config file's, and says when the runs were
made by another package version or code than this one. Everything goes under `--out`:
`report.md`, the figures, and each trained game's training section in `games/<game>.md`;
nothing else is written. The repository's pages are written by `docs.tools.training_report`.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import textwrap
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

import baselines
import training.report
from dice_envs import GAMES, env_ids
from dice_envs.policies import named_policy
from docs.tools import yahtzee_agents
from docs.tools.archive import Archive, current_maker, run_arrays
from docs.tools.game_pages import page_path, write_page_section
from docs.tools.plots import (
    REFERENCE_STYLES,
    ZERO_RELATIVE_GAP,
    episodes_to_resolve,
    plot_error_maps,
    plot_losses,
    plot_monte_carlo,
    plot_training,
    plot_value_errors,
    steps_formatter,
)
from docs.tools.targets import Target, load_targets, targets_table
from training.config import has_budget, load_config
from training.evaluation import game_arguments, has_tables
from training.report import (
    ReportError,
    agent_label,
    default_out,
    figure_groups,
    game_title,
    kwargs_text,
    markdown_table,
    score_row,
    slug,
    spread,
)
from training.runs import read_json

TARGETS_FILE = "targets.yaml"  # in the configs folder


def collect(configs, budget: str, runs, games=None) -> dict[Path, dict[str, Any]]:
    """The library's `collect` (`runs`: a run store or an `Archive`), each result also with
    its `timing` and `made_by` (by which package version and code fingerprint: an archived
    run's own, possibly other code; a run store's runs are made by the current code)."""
    groups = training.report.collect(configs, budget, runs, games)
    for group in groups.values():
        for result in group["results"]:
            result.setdefault("made_by", current_maker())
            result["timing"] = read_json(Path(result["directory"]) / "timing.json", {})
    return groups


@functools.cache
def _heuristic_scores(env_id: str, kwargs_json: str) -> dict[str, Any]:
    """The exact score of each of the game's named heuristics, by name; a name that does not
    fit these arguments (five dice where at most three are allowed) is left out."""
    kwargs = json.loads(kwargs_json)
    scores = {}
    for name in GAMES[env_id].policies:
        try:
            policy = named_policy(env_id, name, **kwargs)
        except ValueError:
            continue
        scores[name] = baselines.evaluate(policy, env_id, **kwargs)
    return scores


def heuristic_scores(env_id: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    return _heuristic_scores(env_id, json.dumps(kwargs, sort_keys=True))


def _mean_gap_text(results: list[dict[str, Any]]) -> str:
    if all(abs(r["relative_gap"]) <= ZERO_RELATIVE_GAP for r in results):
        return "0, every seed optimal up to round-off"
    return f"{np.mean([r['gap'] for r in results]):.4g}"


def _gap_text(result: dict[str, Any]) -> str:
    if abs(result["relative_gap"]) <= ZERO_RELATIVE_GAP:
        return "0 (optimal, up to round-off)"
    return f"{result['gap']:.4g}"


def best_agents(groups: dict[Path, dict[str, Any]]) -> str:
    """Per game and arguments, the agent with the smallest mean gap, its best seed, and the
    largest relative gap of any seed of any agent there."""
    by_setting: dict[tuple[str, str], list[Path]] = defaultdict(list)
    for path, group in groups.items():
        config = group["config"]
        by_setting[(config["env_id"], json.dumps(config["env_kwargs"]))].append(path)
    lines = []
    for (env_id, kwargs_json), paths in by_setting.items():

        def mean_gap(path: Path) -> float:
            return float(np.mean([r["gap"] for r in groups[path]["results"]]))

        best = min(paths, key=mean_gap)
        results = groups[best]["results"]
        top = min(results, key=lambda r: r["gap"])
        worst = max((r for p in paths for r in groups[p]["results"]),
                    key=lambda r: r["relative_gap"])  # fmt: skip
        lines.append(
            f"- {env_id.split('/')[-1]} ({kwargs_text(json.loads(kwargs_json))}): best agent "
            f"{agent_label(best, results[0])}, mean gap {_mean_gap_text(results)} (value "
            f"{np.mean([r['value'] for r in results]):.6g} against the optimum "
            f"{results[0]['optimal_value']:.6g}); its best seed {top['seed']} has gap "
            f"{_gap_text(top)}. The largest relative gap of any seed here: "
            f"{100 * worst['relative_gap']:.3g} % ({worst['agent']}, seed {worst['seed']})."
        )
    return "Best agents (greedy policies):\n\n" + "\n".join(lines)


def results_table(groups: dict[Path, dict[str, Any]]) -> str:
    header = [
        "game", "agent", "optimal value", "agent value", "gap", "relative gap", "agreement",
        "steps", "Monte Carlo mean ± s.e. per seed",
    ]  # fmt: skip
    rows = []
    by_game: dict[tuple, list[Path]] = defaultdict(list)
    for path, group in groups.items():
        config = group["config"]
        game = (path.parent.name, config["env_id"], json.dumps(config["env_kwargs"]))
        by_game[game].append(path)
    for (game, env_id, kwargs_json), paths in by_game.items():
        kwargs = json.loads(kwargs_json)
        where = f"{game} ({kwargs_text(kwargs)})"
        for path in paths:
            results = groups[path]["results"]
            label = f"{agent_label(path, results[0])}, {len(results)} seeds"
            rows.append([*score_row(where, label, results), ""])
            rows[-1][-1] = "; ".join(_episodes_cell(r) for r in results)
            if "stochastic_value" in results[0]:
                stochastic = score_row(where, f"{label}, stochastic policy", results, "stochastic_")
                rows.append([*stochastic, ""])
        for policy_name, score in heuristic_scores(env_id, kwargs).items():
            rows.append(
                [
                    where,
                    f"heuristic: {policy_name}",
                    f"{score.optimal_value:.6g}",
                    f"{score.value:.4g}",
                    f"{score.gap:.4g}",
                    f"{100 * score.relative_gap:.4g} %",
                    f"{100 * score.agreement:.4g} %",
                    "",
                    "",
                ]
            )
    return markdown_table(header, rows)


def _episodes_cell(result: dict[str, Any]) -> str:
    """The mean score of the last evaluation point's episodes ± its standard error: the Monte
    Carlo episodes, or on a game without tables the sampled gap's episodes."""
    if "sampled_score_mean" in result:
        return f"{result['sampled_score_mean']:.4g} ± {result['sampled_score_stderr']:.2g}"
    return f"{result['mc_mean']:.4g} ± {result['mc_stderr']:.2g}"


ZERO = 1e-12  # an exploitability this small is 0 up to round-off (exact optima give +-1e-16)


def _exploitable(groups: dict[Path, dict[str, Any]]) -> dict[Path, dict[str, Any]]:
    """The configs whose curves hold the exact exploitability (two-player games)."""
    return {
        path: group
        for path, group in groups.items()
        if group["config"]["evaluation"].get("exploitability")
    }


def _trained_against(config: dict[str, Any], short: bool = False) -> str:
    """Who the agent of `config` trained against: for the table, or `short` for a legend."""
    selfplay = config.get("selfplay")
    if selfplay is None:
        opponent = config["env_kwargs"].get("opponent", "the default opponent")
        return f"vs {opponent}" if short else f"{opponent}"
    if "pool" in selfplay:
        played = selfplay.get("policies") == "stochastic"
        if short:
            return f"self-play (pool of {selfplay['pool']}{', as played' if played else ''})"
        kept = "the probabilities it played at its" if played else "its"
        return f"itself (pool of {kept} {selfplay['pool']} latest policies)"
    anywhere = selfplay["starts"] == "anywhere"
    if short:
        return "self-play (exploring starts)" if anywhere else "self-play"
    return (
        f"itself (one table for both seats, {'exploring starts' if anywhere else 'from the start'})"
    )


def exploitability_table(groups: dict[Path, dict[str, Any]]) -> str:
    """Per two-player config: exploitability at the end and its lowest point, and the value
    against the fixed opponent of the env (what the other tables score)."""
    header = [
        "game", "agent", "trained against", "exploitability at the end",
        "lowest on the curve", "first step at 0", "value against the env's opponent",
    ]  # fmt: skip
    rows = []
    for path, group in _exploitable(groups).items():
        config, results = group["config"], group["results"]
        kinds = [("exploitability", "value", "")]
        if all("stochastic_exploitability" in p for r in results for p in r["curve"]):
            kinds.append(("stochastic_exploitability", "stochastic_value", ", stochastic policy"))
        for key, value, suffix in kinds:
            zeros = [
                next((p["steps"] for p in r["curve"] if p[key] <= ZERO), None) for r in results
            ]
            rows.append(
                [
                    f"{path.parent.name} ({kwargs_text(config['env_kwargs'])})",
                    f"{agent_label(path, results[0])}, {len(results)} seeds{suffix}",
                    _trained_against(config),
                    spread([r[key] for r in results]),
                    spread([min(p[key] for p in r["curve"]) for r in results]),
                    ", ".join("never" if z is None else f"{z:,}" for z in zeros),
                    spread([r[value] for r in results]),
                ]
            )
    return markdown_table(header, rows)


def timing_table(groups: dict[Path, dict[str, Any]]) -> str:
    header = [
        "game", "agent", "runs", "training s per run", "steps/s (training)",
        "evaluation s per run", "wall s per run",
    ]  # fmt: skip
    rows = []
    for path, group in groups.items():
        results = group["results"]
        finals = [r["timing"].get("final", {}) for r in results]
        evaluation = [
            sum(p["evaluation_seconds"] for p in r["timing"].get("evaluations", []))
            + r["timing"].get("exact_evaluation", {}).get("seconds", 0.0)
            for r in results
        ]
        rows.append(
            [
                path.parent.name,
                agent_label(path, results[0]),
                str(len(results)),
                f"{np.mean([f['seconds'] for f in finals]):.1f}",
                f"{np.mean([f['steps_per_second'] for f in finals]):,.0f}",
                f"{np.mean(evaluation):.1f}",
                f"{np.mean([f['wall_seconds'] for f in finals]):.1f}",
            ]
        )
    return markdown_table(header, rows)


def _count(number: int, noun: str) -> str:
    """The number and the noun, plural unless 1: `1 config`, `3 configs`."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def _sweep_lines(root: Path, groups: dict[Path, dict[str, Any]] | None = None) -> list[str]:
    """One line per recorded sweep under `root`, linking the reports of other folders; with
    `groups`, only the sweeps of configs they hold (a sweep's `games` are game folders or
    `<game>/<config>` names), so that a report of some configs leaves out the sweeps of
    others."""
    held = None
    if groups is not None:
        held = {f"{path.parent.name}/{path.stem}" for path in groups}
        held |= {name.split("/")[0] for name in held}
    lines = []
    for path in sorted(root.glob("**/sweep.json")):
        link = ""
        if path.parent != root and (path.parent / "report.md").exists():
            target = os.path.relpath(path.parent / "report.md", root)
            link = f" Its report: [{path.parent / 'report.md'}]({target})."
        for record in read_json(path, {}).values():
            if held is not None and not set(record["games"]) <= held:
                continue
            lines.append(
                f"- `{record['budget']}` budget, {', '.join(record['games'])}: "
                f"{record['runs']} runs in {record['wall_seconds'] / 60:.1f} min wall time "
                f"({record['backend']} backend, {record['workers']} workers, "
                f"{record['date']}).{link}"
            )
    return lines


def _budget_lines(groups: dict[Path, dict[str, Any]], budget: str) -> list[str]:
    """What the budget is, per config, from the configs themselves."""
    lines = []
    for path, group in groups.items():
        config = group["config"]
        episodes = (
            "Monte Carlo episodes per evaluation"
            if has_tables(config["env_id"])
            else "episodes per sampled gap, the exact evaluation at the end only"
        )
        lines.append(
            f"`{path.parent.name}/{path.name}`: {config['timesteps']:,} steps, evaluated every "
            f"{config['eval_every']:,}, seeds {', '.join(map(str, config['seeds']))}, "
            f"{config['evaluation']['episodes']} {episodes}"
        )
    return lines


def write_game_pages(report: Report, docs: Path) -> None:
    """Each trained game's page (`docs`/games/<game>.md): its rows of the results table, its
    figures (linked relative to the page), the wall time of its runs, and for a two-player
    game its exploitability rows and curves."""
    by_env: dict[str, list[Path]] = defaultdict(list)
    for path, group in report.groups.items():
        by_env[group["config"]["env_id"]].append(path)
    for env_id, paths in by_env.items():
        pages = page_path(env_id, docs).parent
        text = _page_text(report, paths, pages)
        write_page_section(env_id, f"training-{report.budget}", _headed(report.budget, text), docs)


def _headed(budget: str, text: str) -> str:
    """A game page's training section under its own heading (else it reads as part of the
    references above it, and the page's contents leave it out)."""
    return f"## Training at the `{budget}` budget\n\n{text}"


def _page_text(report: Report, paths: list[Path], pages: Path) -> str:
    """One game's training section: `paths` are its configs, `pages` the pages' folder."""
    mine = {path: report.groups[path] for path in paths}
    out = report.out
    figures = []
    for game, members in report.by_game.items():
        if set(members) <= set(paths):
            shown = [(f"{game}.png", "gap and agreement")]
            if game in report.valued:
                shown.append((f"{game}_values.png", "the learners' value errors"))
            if game in report.drawn:
                shown.append((f"{game}_losses.png", "where the gap is lost"))
            if game in report.mapped:
                shown.append((f"{game}_errors.png", ERRORS_WHAT))
            for name, what in shown:
                link = os.path.relpath(out / name, pages)
                figures.append(f"![{report.titles[game]}: {what}]({link})")
    minutes = _wall_seconds(mine) / 60
    link = os.path.relpath(out / "report.md", pages)
    text = (
        f"The `{report.budget}` budget ({_count(len(paths), 'config')}, {minutes:.1f} min of "
        "runs on this "
        f"machine); exact scores of the final greedy policy (and of the stochastic policy "
        f"PPO plays), mean ± standard deviation over seeds. All games: [the report]"
        f"({link}).\n\n" + results_table(mine) + "\n\n" + "\n".join(figures)
    )
    if _exploitable(mine):
        curves = "\n".join(
            f"![{title}: exact exploitability against steps]"
            f"({os.path.relpath(out / f'{slug}_exploitability.png', pages)})"
            for slug, (members, title) in report.exploit_figures.items()
            if members <= set(paths)
        )
        text += (
            "\n\nExploitability, exact (what the best response to the policy wins beyond "
            "1/2):\n\n" + exploitability_table(mine) + "\n\n" + curves
        )
    return text


def write_untrained_pages(configs: str | Path, budget: str, docs: Path) -> None:
    """The pages (under `docs`/games) of games no config trains at `budget` say so."""
    trained = {
        load_config(path, budget)["env_id"]
        for path in sorted(Path(configs).glob("*/*.yaml"))
        if has_budget(path, budget)
    }
    for env_id in env_ids():
        if env_id not in trained:
            why = " (a `quick` one would lengthen `make demo`)" if budget == "quick" else ""
            write_page_section(
                env_id,
                f"training-{budget}",
                _headed(budget, f"No config of this game has a `{budget}` budget{why}."),
                docs,
            )


def write_unreported_pages(configs: str | Path, report: Report, docs: Path) -> None:
    """The pages (under `docs`/games) of games with configs at the report's budget but no runs
    in it (none trained yet by the current code) say so, with the command that trains them:
    for a report of every run archived, so that no page keeps an older report's section."""
    reported = {group["config"]["env_id"] for group in report.groups.values()}
    waiting: dict[str, list[Path]] = defaultdict(list)
    for path in sorted(Path(configs).glob("*/*.yaml")):
        if has_budget(path, report.budget):
            env_id = load_config(path, report.budget)["env_id"]
            if env_id not in reported:
                waiting[env_id].append(path)
    for env_id, paths in waiting.items():
        names = ", ".join(f"`{path.parent.name}/{path.name}`" for path in paths)
        games = " ".join(sorted({f"{path.parent.name}/{path.stem}" for path in paths}))
        write_page_section(
            env_id,
            f"training-{report.budget}",
            _headed(
                report.budget,
                f"Not yet trained at the `{report.budget}` budget by the current code: no runs "
                f"of {names} are archived. `python -m training.sweep --budget {report.budget} "
                f"--games {games}` trains them.",
            ),
            docs,
        )


def _wall_seconds(groups: dict[Path, dict[str, Any]]) -> float:
    """The wall time of every run of `groups`, summed."""
    return sum(
        r["timing"].get("final", {}).get("wall_seconds", 0.0)
        for group in groups.values()
        for r in group["results"]
    )


def _final_actions(directory: Path, tables) -> np.ndarray | None:
    """A finished run's final greedy action per state of `tables` (in their order), from its
    actions.npy: a table over the observation grid (read at every state's observation), or,
    as runs saved before the grid form kept it, one action per state already in that order."""
    actions = run_arrays(directory).get("actions")
    if actions is None:
        return None
    grid = tuple(int(n) for n in tables.model.observation_nvec)
    if actions.shape == grid:
        return actions[tuple(tables.observation_array.T)]
    if actions.shape == (tables.num_states,):
        return actions
    raise ReportError(
        f"the actions of {directory} have shape {actions.shape}: neither the observation grid "
        f"{grid} nor one action for each of the {tables.num_states} states"
    )


def _config_label(config: tuple[int, int, int]) -> str:
    """A Ten Thousand configuration (fives, ones, triple face) in words."""
    fives, ones, triple = config
    if config == (0, 0, 0):
        return "nothing scored yet (start or hot dice)"
    words = [f"{fives} five{'s' * (fives != 1)}", f"{ones} one{'s' * (ones != 1)}"]
    return ", ".join(words) + (f", three {triple}s" if triple else "")


def _final_arrays(results: list[dict], mdp, optimum) -> tuple[list, list] | None:
    """Each seed's final greedy evaluation (from its saved actions) and its value errors per
    state of `mdp` (None where the run saved none); None if a seed saved no actions."""
    evaluations, errors = [], []
    rows = tuple(mdp.observation_array.T)
    for result in results:
        directory = Path(result["directory"])
        actions = _final_actions(directory, mdp)
        if actions is None:
            return None
        evaluations.append(baselines.score_actions(actions, mdp, optimum))
        grid = run_arrays(directory).get("value_errors")
        errors.append(None if grid is None else grid[rows].astype(float))
    return evaluations, errors


def _observation_names(mdp) -> tuple[str, ...]:
    names = tuple(getattr(mdp.model, "observation_names", None) or ())
    if len(names) != mdp.observation_array.shape[1]:
        names = tuple(f"observation[{i}]" for i in range(mdp.observation_array.shape[1]))
    return names


def _loss_figures(groups, by_game, titles, budget: str, out: Path):
    """Per game and arguments, where each agent's final greedy policy loses its gap (mean
    over seeds of `Evaluation.losses`, which sum to the gap), from the saved actions, and
    beside it where each learner's own value estimate is wrong (its saved value errors, mean
    over seeds); return the section's text, the stems with a loss map and those with an
    error map."""
    lines, drawn, mapped = [], set(), set()
    for game, paths in by_game.items():
        config = groups[next(iter(paths))]["config"]
        env_id, kwargs = config["env_id"], config["env_kwargs"]
        if not has_tables(env_id):
            continue  # no per-state arrays: `_turn_losses_text` says where it loses instead
        mdp, optimum = baselines.enumerated(env_id, **kwargs)
        panels, gaps, error_panels, headings = {}, {}, {}, {}
        for path, results in paths.items():
            arrays = _final_arrays(results, mdp, optimum)
            if arrays is None:
                continue
            evaluations, errors = arrays
            label = agent_label(path, results[0])
            panels[label] = np.mean([e.losses for e in evaluations], axis=0)
            gaps[label] = float(np.mean([r["gap"] for r in results]))
            if all(e is not None for e in errors):
                error_panels[label] = np.mean(errors, axis=0)
                mean = np.mean([r["value_error"] for r in results])
                headings[label] = f"{label}: visit-weighted mean error {mean:.3g}"
        if not panels:
            continue
        names = _observation_names(mdp)
        labels = None
        if env_id == "dice_envs/TenThousand-v0":
            from dice_envs.games.ten_thousand import CONFIGS

            labels = [_config_label(config) for config in CONFIGS]
        plot_losses(
            f"{titles[game]}, {budget} budget: where the final greedy policy loses its gap "
            "(mean over seeds)",
            names, mdp.observation_array, panels, gaps, out / f"{game}_losses.png", labels,
        )  # fmt: skip
        lines.append(f"![{titles[game]}: where the agents lose their gap]({game}_losses.png)")
        drawn.add(game)
        if error_panels:
            plot_error_maps(
                f"{titles[game]}, {budget} budget: the final error of each learner's own value "
                "estimate (mean over seeds)",
                names, mdp.observation_array, error_panels, headings, out / f"{game}_errors.png",
            )  # fmt: skip
            lines.append(f"![{titles[game]}: {ERRORS_WHAT}]({game}_errors.png)")
            mapped.add(game)
    turns = _turn_losses_text(groups, by_game, titles)
    if not lines:
        text = "No run saved its final actions (runs older than package version 0.3.0)."
        return (turns or text), drawn, mapped
    return (
        (turns + "\n\n" if turns else "")
        + (
            "Per state, the agent's expected visits times the value its action gives up there "
            "(V* - Q* of that action): the cells of each panel sum to the agent's gap "
            "(`Evaluation.losses`), recomputed from each run's final greedy actions "
            f"(`actions.npy`).{_error_map_text(groups) if mapped else ''}\n\n" + "\n".join(lines)
        ),
        drawn,
        mapped,
    )


def _turn_losses_text(groups, by_game, titles) -> str:
    """For the games without tables (Yahtzee), where each agent loses its gap: the exact final
    evaluation's losses by turn (mean over seeds), in place of loss and error maps."""
    parts = []
    for game, paths in by_game.items():
        config = groups[next(iter(paths))]["config"]
        if has_tables(config["env_id"]):
            continue
        rows = []
        for path, results in paths.items():
            losses = np.mean([np.sum(r["losses_by_turn"], axis=1) for r in results], axis=0)
            rows.append([agent_label(path, results[0])] + [f"{loss:.3g}" for loss in losses])
        turns = len(rows[0]) - 1
        header = ["agent"] + [f"turn {t + 1}" for t in range(turns)]
        parts.append(f"{titles[game]}:\n\n{markdown_table(header, rows)}")
    if not parts:
        return ""
    return (
        "Yahtzee has no loss or error maps: a per-state array would need a cell for each of "
        "its about 400 million decision states, so its runs save none. Where each agent "
        "loses instead, from the exact evaluation at the end of each run: the expected points "
        "lost at the decisions of each turn (`YahtzeeEvaluation.losses_by_turn`, summed over "
        "the turn's three decisions, mean over seeds; a row sums to the agent's gap).\n\n"
        + "\n\n".join(parts)
    )


ERRORS_WHAT = "where the learners' own value estimates are wrong"
ERROR_MAP_TEXT = (
    " Beside each loss map, the error map: per state, the learner's own estimate at the end "
    "of training minus the exact value it estimates (Q-learning: Q(s, a) - Q*(s, a) of its "
    "greedy action a; PPO: the critic's V(s) - v_pi(s) of the policy it plays), in the "
    "game's units, mean over seeds (`value_errors.npy`); red where the estimate is too high, "
    "blue where too low; every reachable state counts, visited or not (a panel's title gives "
    "the mean error weighted by the acting policy's visits). Where an observation has more "
    "than two components, a cell is the mean over the others."
)
SELFPLAY_ERRORS_TEXT = (
    " Self-play agents have no error map: their table estimates the two-player game from the "
    "mover's seat, not the env's game against its opponent."
)


def _error_map_text(groups: dict[Path, dict[str, Any]]) -> str:
    selfplay = any(group["config"].get("selfplay") is not None for group in groups.values())
    return ERROR_MAP_TEXT + (SELFPLAY_ERRORS_TEXT if selfplay else "")


def _monte_carlo_figure(groups, by_game, titles, budget: str, out: Path) -> str:
    """What Monte Carlo evaluation would have needed to see the exact gaps."""
    needed, example = [], None
    for game, paths in by_game.items():
        for path, results in paths.items():
            episodes = groups[path]["config"]["evaluation"]["episodes"]
            if episodes < 2 or "mc_stderr" not in results[0]:  # no Monte Carlo (Yahtzee)
                continue
            # The example run: the first Pig config's (the game a reader knows), else the first.
            candidate = (titles[game], groups[path]["config"], results)
            if example is None or (path.parent.name == "pig" and not example[0].startswith("Pig")):
                example = candidate
            median = sorted(results, key=lambda r: r["gap"])[len(results) // 2]
            sd = median["mc_stderr"] * np.sqrt(episodes)
            label = f"{titles[game]}: {agent_label(path, results[0])}"
            needed.append(
                (label, episodes_to_resolve(median["gap"], median["relative_gap"], sd), episodes)
            )
    if example is None:
        return "No config plays Monte Carlo episodes."
    plot_monte_carlo(example, needed, budget, out / "monte_carlo.png")
    finite = [(n, played) for _, n, played in needed if np.isfinite(n)]
    optimal = len(needed) - len(finite)
    image = "![Monte Carlo against exact evaluation](monte_carlo.png)"
    if not finite:
        return (
            "In every config the median seed ends exactly optimal (gap 0 up to round-off), "
            f"which no number of episodes can show.\n\n{image}"
        )
    beyond = sum(n > played for n, played in finite)
    return (
        f"Each evaluation point also played seeded episodes. Take each config's median seed: "
        f"of the {len(finite)} whose final gap is not 0, {beyond} have a gap smaller than the "
        f"half-width of the 95 % interval of those episodes' mean, so Monte Carlo with them "
        f"could not have told these agents from optimal. Narrowing the interval to the final "
        f"gap would take from {min(n for n, _ in finite):,.0f} to "
        f"{max(n for n, _ in finite):,.0f} episodes; that is a lower bound (telling the agent "
        f"from optimal with 80 % power takes about twice as many). In {optimal} configs the "
        f"median seed ends exactly optimal (gap 0 up to round-off), which no number of "
        f"episodes can show.\n\n{image}"
    )


@dataclass
class Report:
    """A built report: its runs, its figures (in `out`) and its Markdown parts, whose image
    links are relative to `out`."""

    budget: str
    out: Path
    groups: dict[Path, dict[str, Any]]
    by_game: dict[str, dict[Path, list[dict]]]  # figure name stem -> its configs' results
    titles: dict[str, str]  # figure name stem -> title
    drawn: set[str]  # the stems with a loss figure
    mapped: set[str]  # the stems with an error-map figure
    valued: set[str]  # the stems with a value-error figure
    exploit_figures: dict[str, tuple[set[Path], str]]  # stem -> (its configs, its title)
    description: str
    table: str
    plots: str
    monte_carlo: str
    losses: str
    exploitability: str  # empty when no config is of a two-player game
    timing: str
    sweeps: list[str]  # the recorded sweeps under `out`, as Markdown lines
    targets: str = ""  # the targets table; empty when no target's configs are all here
    studies: str = ""  # sections of their own commands' results (`docs.tools.yahtzee_agents`)

    def markdown(self) -> str:
        """The whole report, as `report.md` holds it."""
        exploit = (
            f"## Two players: exploitability\n\n{self.exploitability}\n\n"
            if self.exploitability
            else ""
        )
        targets = f"## Targets\n\n{self.targets}\n\n" if self.targets else ""
        return (
            f"# Training report (`{self.budget}` budget)\n\n{self.description}\n\n{self.table}"
            f"\n\n{targets}{self.plots}\n\n## Monte Carlo against exact evaluation\n\n"
            f"{self.monte_carlo}\n\n## Where the agents lose their gap\n\n{self.losses}\n\n"
            f"{exploit}{self.studies}## Time\n\n{self.timing}\n"
        )


def _gap_figures(groups, by_game, budget: str, out: Path) -> tuple[dict[str, str], set[str]]:
    """Draw `out`/<stem>.png (relative gap and agreement against steps) per figure group,
    and `out`/<stem>_values.png (the learners' value errors) of the configs whose runs all
    recorded them (self-play runs do not);
    return the titles by stem and the stems with a value-error figure."""
    titles, valued = {}, set()
    for game, paths in by_game.items():
        config = groups[next(iter(paths))]["config"]
        titles[game] = game_title(config)
        references = {
            f"heuristic {name}": (score.relative_gap, score.agreement)
            for name, score in heuristic_scores(config["env_id"], config["env_kwargs"]).items()
        }
        series = {agent_label(path, results[0]): results for path, results in paths.items()}
        if not has_tables(config["env_id"]):
            _plot_sampled(titles[game], budget, series, references, out / f"{game}.png")
            continue
        plot_training(titles[game], budget, series, references, out / f"{game}.png")
        recorded = {
            label: results
            for label, results in series.items()
            if all("value_abs_error" in r["curve"][-1] for r in results)
        }
        if recorded:
            plot_value_errors(titles[game], budget, recorded, out / f"{game}_values.png")
            valued.add(game)
    return titles, valued


EXPLOITABILITY_TEXT = (
    "Exploitability is exact: the best response to the agent's greedy policy (its play "
    "in either seat) is solved on the game's model, and its win probability with a coin "
    "flip for the first move, minus 1/2, is the exploitability; 0 means the policy "
    "plays the two-player optimum wherever its games can go. In a simultaneous game "
    "(no first move; its optimum mixes) PPO's action probabilities are scored too, in "
    'the rows marked "stochastic policy". An agent trained against '
    "a fixed opponent beats that opponent and stays exploitable; a tabular learner learns "
    "nothing in the positions that opponent never brings about (grey in its error map) "
    "and keeps its initial values there, and a best response can steer the game into "
    "them. Self-play aims at exploitability 0 instead."
)


def _plot_sampled(title: str, budget: str, series, references, path: Path) -> None:
    """A game without tables (Yahtzee): per agent the sampled relative gap against steps
    (median over seeds, the band spanning the seeds' 95 % intervals), the exact final
    relative gap of each seed as a cross, and the heuristics' exact gaps as lines."""
    fig, ax = plt.subplots(figsize=(7, 4.8))
    for label, results in series.items():
        length = min(len(r["curve"]) for r in results)
        steps = np.array([p["steps"] for p in results[0]["curve"][:length]])
        optimum = abs(results[0]["optimal_value"]) or 1.0
        percent = {
            key: np.array([[100 * p[key] / optimum for p in r["curve"][:length]] for r in results])
            for key in ("sampled_gap", "sampled_gap_low", "sampled_gap_high")
        }
        median = np.median(percent["sampled_gap"], axis=0)
        name = f"{label}: sampled gap, median of {len(results)} seeds"
        line = ax.plot(steps, median, marker="o", ms=3, label=name)[0]
        low, high = percent["sampled_gap_low"].min(0), percent["sampled_gap_high"].max(0)
        ax.fill_between(steps, low, high, alpha=0.2, color=line.get_color())
        ax.plot([r["steps"] for r in results], [100 * r["relative_gap"] for r in results], "x",
                ms=9, color=line.get_color(), label=f"{label}: exact, end of each run")  # fmt: skip
    for (name, (gap, _)), (ls, color) in zip(references.items(), REFERENCE_STYLES, strict=False):
        ax.axhline(100 * gap, ls=ls, color=color, lw=1.2, label=f"{name} (exact)")
    ax.set(xlabel="environment steps", ylabel="relative gap to the optimum (%)")
    ax.set_ylim(bottom=0.0)
    ax.xaxis.set_major_formatter(steps_formatter())
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    ax.set_title(
        f"{title}, {budget} budget\nsampled gap (band: the seeds' 95 % intervals) between "
        "exact evaluations",
        fontsize=9,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _exploitability_figures(groups, budget: str, out: Path) -> tuple[str, dict]:
    """One exploitability figure per two-player game and arguments (exploitability compares
    only within one game); return the section's text ("" without such a config) and the
    figures (stem -> (its configs, its title))."""
    exploitable = _exploitable(groups)
    if not exploitable:
        return "", {}
    by_stem: dict[str, dict[Path, list[dict]]] = defaultdict(dict)
    titles: dict[str, str] = {}
    for path, group in exploitable.items():
        kwargs = game_arguments(group["config"]["env_kwargs"])
        stem = slug(path.parent.name, kwargs)
        by_stem[stem][path] = group["results"]
        titles[stem] = f"{group['config']['env_id'].split('/')[-1]} ({kwargs_text(kwargs)})"
    for stem, paths in by_stem.items():
        config = groups[next(iter(paths))]["config"]
        references = _reference_exploitability(
            config["env_id"], game_arguments(config["env_kwargs"])
        )
        against = {path: _trained_against(groups[path]["config"], short=True) for path in paths}
        _plot_exploitability(
            titles[stem], budget, paths, out / f"{stem}_exploitability.png", references, against
        )
    plots = "\n".join(
        f"![{title}: exact exploitability against steps]({stem}_exploitability.png)"
        for stem, title in titles.items()
    )
    text = f"{EXPLOITABILITY_TEXT}\n\n{exploitability_table(groups)}\n\n{plots}"
    return text, {stem: (set(paths), titles[stem]) for stem, paths in by_stem.items()}


def _versions_text(groups: dict[Path, dict[str, Any]]) -> str:
    """The libraries the runs were made with, or a note that they differ between runs."""
    versions = {json.dumps(r.get("libraries", {}), sort_keys=True) for g in groups.values()
                for r in g["results"]}  # fmt: skip
    if len(versions) != 1:
        return "mixed library versions (see each run's result.json)"
    return ", ".join(f"{name} {v}" for name, v in json.loads(versions.pop()).items())


def describe(groups: dict[Path, dict[str, Any]], budget: str, reproduce: str | None = None) -> str:
    """What every row of the results table is, the budget per config, and how to reproduce
    it (`reproduce`: the command, Markdown; by default the sweep of this budget)."""
    if reproduce is None:
        reproduce = f"`python -m training.sweep --budget {budget}` (with the same `--games`)"
    budget_text = "\n".join(f"- {line}" for line in _budget_lines(groups, budget))
    return (
        f"Every row is exact: at each evaluation point the greedy action of every reachable "
        f"observation is evaluated by a sparse linear solve (value, gap to the optimum, "
        f"agreement with the optimal action weighted by how often optimal play visits each "
        f"state); mean ± standard deviation over seeds. PPO's rows marked \"stochastic "
        f'policy" score what PPO actually plays, its action distribution, by the same solve. '
        f"The Monte Carlo column is what each seed's evaluation episodes would have said "
        f"instead.{_sampled_text(groups)} The `{budget}` budget:\n\n"
        f"{budget_text}\n\nThe runs were produced with {_versions_text(groups)}; with these "
        f"versions {reproduce} reproduces this table digit for digit on this machine; other "
        f"versions, or another CPU, may differ in the last digits or more.{_maker_text(groups)}"
    )


def _sampled_text(groups: dict[Path, dict[str, Any]]) -> str:
    """How the rows of a game without tables (Yahtzee) are made, or "" without one."""
    if all(has_tables(group["config"]["env_id"]) for group in groups.values()):
        return ""
    return (
        " Yahtzee's rows come from one exact evaluation at the end of each run (its "
        "structure-aware evaluator, minutes per policy); between evaluation points its curves "
        "show the sampled gap (the exact regrets of the actions taken, summed along sampled "
        "episodes: an unbiased estimate of the gap, with a 95 % interval), and its Monte Carlo "
        "column gives the last point's episodes. Its stochastic policy is not scored."
    )


def _maker_text(groups: dict[Path, dict[str, Any]]) -> str:
    """A note (with a leading blank line) when some runs were made by another package version
    or code than the current ones, as archived runs can be; "" when every run is current."""
    current = current_maker()
    makers: dict[tuple[str, str], int] = defaultdict(int)
    for group in groups.values():
        for result in group["results"]:
            maker = result.get("made_by", current)
            makers[(maker["version"], maker["code"])] += 1
    if set(makers) == {(current["version"], current["code"])}:
        return ""
    if all(not code for _, code in makers):  # other versions, proven to run the same code
        made = "; ".join(
            f"{count} by dice-envs {version}" for (version, _), count in sorted(makers.items())
        )
        return (
            f"\n\nOf these runs, {made}: every module they used is unchanged in the code here "
            f"(dice-envs {current['version']})."
        )
    made = "; ".join(
        f"{count} by dice-envs {version}, "
        + ("by the current code" if not code else f"by code that has changed since in {code}")
        for (version, code), count in sorted(makers.items())
    )
    return (
        f"\n\n**Not made by the current code.** Of these runs, {made}. The code here is "
        f"dice-envs {current['version']}: the numbers are those of the code that made the "
        "runs, and training again may change them."
    )


def timing_text(groups: dict[Path, dict[str, Any]], where: str, sweeps: list[str]) -> str:
    """The time section: the timing table, the recorded sweeps (`sweeps`, Markdown lines) and
    the runs' wall time summed (`where`: which runs, e.g. "of this report")."""
    run_count = sum(len(group["results"]) for group in groups.values())
    sweep_text = "\n".join(sweeps) or "No sweep recorded."
    return (
        "Measured on this machine (2 cores; times differ from run to run, unlike every other "
        "number in this section). Training time excludes the exact evaluations; wall time "
        f"includes them.\n\n{timing_table(groups)}\n\n{sweep_text}\n\nThe {run_count} runs "
        f"{where} took {_wall_seconds(groups) / 60:.1f} min of wall time, summed over runs (on 2 "
        "workers a sweep takes about half of that, and more when other work shares the "
        "machine)."
    )


def gap_plots(report: Report, stems=None) -> str:
    """Markdown links to the gap figures (of `stems`, default all), each followed by its
    value-error figure where there is one, relative to the report."""
    lines = []
    for game in report.by_game:
        if stems is not None and game not in stems:
            continue
        title = report.titles[game]
        lines.append(f"![{title}: relative gap and agreement against steps]({game}.png)")
        if game in report.valued:
            lines.append(f"![{title}: the learners' value errors against steps]({game}_values.png)")
    return "\n".join(lines)


def make_report(
    configs: str | Path,
    budget: str,
    runs: str | Path,
    out: str | Path,
    games: list[str] | None = None,
    reproduce: str | None = None,
    targets: list[Target] | None = None,
) -> Report:
    """Draw the figures into `out`, write `out`/report.md and return the report's parts.
    `targets`: what the targets table checks (default: at the full budget,
    `configs`/targets.yaml if there is one; none at another budget)."""
    out = Path(out)
    groups = collect(configs, budget, runs, games)
    if targets is None:
        # The targets are the full budget's: a shorter budget's runs are not held to them.
        targets_file = Path(configs) / TARGETS_FILE
        targets = load_targets(targets_file) if budget == "full" and targets_file.exists() else []
    out.mkdir(parents=True, exist_ok=True)
    by_game = figure_groups(groups)
    titles, valued = _gap_figures(groups, by_game, budget, out)
    losses, drawn, mapped = _loss_figures(groups, by_game, titles, budget, out)
    exploitability, exploit_figures = _exploitability_figures(groups, budget, out)
    report = Report(
        budget=budget,
        out=out,
        groups=groups,
        by_game=by_game,
        titles=titles,
        drawn=drawn,
        mapped=mapped,
        valued=valued,
        exploit_figures=exploit_figures,
        description=describe(groups, budget, reproduce),
        table=results_table(groups) + "\n\n" + best_agents(groups),
        plots="",
        monte_carlo=_monte_carlo_figure(groups, by_game, titles, budget, out),
        losses=losses,
        exploitability=exploitability,
        timing=timing_text(groups, "of this report", _sweep_lines(out, groups)),
        sweeps=_sweep_lines(out, groups),
        targets=targets_table(groups, targets),
        studies=yahtzee_agents.report_section(out),
    )
    report.plots = gap_plots(report)
    (out / "report.md").write_text(report.markdown())
    return report


def build_report(
    configs: str | Path = "configs",
    budget: str = "quick",
    runs: str | Path = "runs",
    out: str | Path | None = None,
    games: list[str] | None = None,
) -> str:
    """Write `out`/report.md, its figures, and each trained game's training section in
    `out`/games/<game>.md; return the results table. Nothing is written outside `out`
    (default: `default_out(budget)`, under the current directory)."""
    out = default_out(budget) if out is None else Path(out)
    report = make_report(configs, budget, runs, out, games)
    write_game_pages(report, out)
    return report.table


SYMLOG_LINEAR = 1e-3  # exploitability axis: linear below this, so that 0 is drawn as 0


REFERENCE_POLICIES = ("hold-at-20", "hold-at-25", "keep-pace", "five-dice", "tijms")


def _reference_exploitability(env_id: str, kwargs: dict[str, Any]) -> dict[str, float]:
    """The exploitability of the game's named policies, drawn beside the agents' curves; for
    Pig also always rolling (hold at the goal), optimal itself up to goal 38."""
    names = list(REFERENCE_POLICIES)
    if env_id == "dice_envs/Pig-v0":
        names.append(f"hold-at-{kwargs.get('goal', 100)}")
    references = {}
    for name in names:
        try:
            value = baselines.exploitability(name, env_id, **kwargs).value
        except ValueError:
            continue  # not a policy of this game
        label = "always roll" if name == f"hold-at-{kwargs.get('goal', 100)}" else name
        references[label] = value
    return references


def _plot_exploitability(
    game: str,
    budget: str,
    by_path: dict[Path, list[dict]],
    path: Path,
    references: dict[str, float],
    against: dict[Path, str],
) -> None:
    """One panel per algorithm (their budgets differ by ten times), self-play and not."""
    by_algo: dict[str, dict[Path, list[dict]]] = defaultdict(dict)
    for config_path, results in by_path.items():
        by_algo[results[0]["agent"]][config_path] = results
    fig, axes = plt.subplots(
        1, len(by_algo), figsize=(5.5 * len(by_algo), 5), sharey=True, squeeze=False
    )
    for ax, (algo, paths) in zip(axes[0], sorted(by_algo.items()), strict=True):
        markers = iter("osD^vP")
        for config_path, results in paths.items():
            length = min(len(r["curve"]) for r in results)
            steps = np.array([p["steps"] for p in results[0]["curve"][:length]])
            values = np.array([[p["exploitability"] for p in r["curve"][:length]] for r in results])
            label = f"{results[0]['agent']} {against[config_path]}: median of {len(results)} seeds"
            line = ax.plot(
                steps, np.median(values, axis=0), marker=next(markers), ms=3, label=label
            )[0]
            ax.fill_between(
                steps, values.min(axis=0), values.max(axis=0), alpha=0.2, color=line.get_color()
            )
            if all("stochastic_exploitability" in p for r in results for p in r["curve"]):
                played = np.array(
                    [[p["stochastic_exploitability"] for p in r["curve"][:length]] for r in results]
                )
                ax.plot(
                    steps,
                    np.median(played, axis=0),
                    ls="--",
                    color=line.get_color(),
                    label=f"{label.split(':')[0]}, the policy it plays (stochastic)",
                )
        styles = iter(REFERENCE_STYLES)
        for label, value in references.items():
            ls, color = next(styles)
            ax.axhline(max(value, 0.0), color=color, lw=1.2, ls=ls, label=f"{label}: {value:.3g}")
        ax.set_yscale("symlog", linthresh=SYMLOG_LINEAR)
        ax.set_ylim(bottom=0.0, top=0.5)
        ax.xaxis.set_major_formatter(steps_formatter())
        ax.set(xlabel="environment steps", title=algo)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=1)
    axes[0][0].set_ylabel("exploitability (exact, win probability)")
    lines = (
        f"{game}, {budget} budget: exploitability of the greedy policy (dashed: of the "
        "stochastic policy, where scored)",
        f"band = min..max over seeds; symlog axis, linear below {SYMLOG_LINEAR:g} (0 is optimal)",
    )
    # About 14 characters of a 9-point title per inch: one panel is too narrow for a line.
    width = int(14 * 5.5 * len(by_algo))
    fig.suptitle("\n".join(textwrap.fill(line, width) for line in lines), fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docs.tools.report", description=__doc__)
    parser.add_argument("--configs", default="configs")
    parser.add_argument("--runs", default="runs")
    parser.add_argument("--budget", default="quick", choices=("quick", "full"))
    parser.add_argument(
        "--out", default=None, help="where the report goes (default: dice-envs-report/<budget>)"
    )
    parser.add_argument(
        "--archive",
        default=None,
        help="report from this run archive (its <budget>/ folder; see docs.tools.archive) "
        "instead of the run store",
    )
    parser.add_argument("--games", nargs="+", default=None)
    args = parser.parse_args(argv)
    out = default_out(args.budget) if args.out is None else Path(args.out)
    runs = args.runs if args.archive is None else Archive(Path(args.archive) / args.budget)
    try:
        print(build_report(args.configs, args.budget, runs, out, args.games))
    except (ReportError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"report in {out}/", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

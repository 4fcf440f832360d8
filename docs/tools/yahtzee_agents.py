"""Why the learned Yahtzee agents fall short of the optimum, exactly: the best archived agent
beside `greedy-turn`, Glenn's heuristics and the optimum.

    python -m docs.tools.yahtzee_agents [--budget full] [--agent RUN] [--games 100000]
                                        [--seed 0] [--docs docs] [--out FOLDER]

The agent is the archived Yahtzee run (`docs/training/runs/<budget>/yahtzee/`) of best exact
value among those that kept their policy (`policy.zip`), or the run folder `--agent` names.
Each policy is scored exactly (`baselines.evaluate`: value, gap, the losses by turn, decision
and box, the chances of the upper bonus and of 50 in the Yahtzee box) and played `--games`
times in the native vector env (`baselines.estimate_gap`: the final-score distribution, its
median with a 95 % interval, and the sampled gap beside the exact one). The optimum's own
row comes from the same sweeps (`optimal_*`) and from games of its batched policy. The
archived runs of the other PPO configs (the first, 20M-step ones) are set beside the agent
from their archived results.

Writes `yahtzee_agents.json` and the figures into OUT (default: the budget's report folder,
docs/training/<budget>), and, when OUT is that folder of the repository's docs, the
"yahtzee-agents" section of the Yahtzee page; the report (`docs.tools.training_report`)
shows a summary read from the JSON. Minutes per policy on the full game.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import time
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import yaml

import baselines
from baselines.sampled_gap import Z_95
from baselines.yahtzee_evaluation import CHOICES, DECISIONS, optimal_solution
from dice_envs.files import atomic_write_bytes
from docs.tools.game_pages import markdown_table, page_path, replace_section
from docs.tools.readme import DOCS, ROOT
from docs.tools.yahtzee import draw_losses_by_turn
from training.config import BUDGETS
from training.runs import planned_runs, run_identity

YAHTZEE = "dice_envs/Yahtzee-v0"
YAHTZEE_CONFIGS = "yahtzee"  # the folder of configs/ that holds its configs
SECTION = "yahtzee-agents"
JSON_FILE = "yahtzee_agents.json"
LOSSES_PNG = "yahtzee_agents_losses.png"
BOXES_PNG = "yahtzee_agents_boxes.png"
SCORES_PNG = "yahtzee_agents_scores.png"
HAND_WRITTEN = ("greedy-turn", "glenn-heuristic", "glenn-better-heuristic")
GAMES = 100_000
SEED = 0
OPTIMAL = "optimal"
# Pape, "Yahtzee: Reinforcement Learning Techniques for Stochastic Combinatorial Games"
# (arXiv 2601.00007, 2025): the median final score of its A2C agent over 100,000 games.
PAPE_MEDIAN = 241.78


def median_interval(scores: np.ndarray) -> tuple[float, float, float]:
    """The sample median and a distribution-free 95 % interval for the true median: the
    order statistics of ranks n/2 -+ 1.96 sqrt(n)/2 (the binomial's normal approximation)."""
    ordered = np.sort(np.asarray(scores, dtype=float))
    n = len(ordered)
    half = Z_95 * np.sqrt(n) / 2
    low = int(np.clip(np.floor(n / 2 - half), 0, n - 1))
    high = int(np.clip(np.ceil(n / 2 + half), 0, n - 1))
    return float(np.median(ordered)), float(ordered[low]), float(ordered[high])


def score_summary(scores: np.ndarray) -> dict[str, Any]:
    """The simulated final scores (integers on Yahtzee) as the JSON keeps them: their counts
    by score, and their mean, standard error, median with its interval and percentiles."""
    scores = np.asarray(scores, dtype=float)
    whole = np.rint(scores).astype(np.int64)
    if not np.array_equal(whole, scores) or whole.min() < 0:
        raise ValueError("final scores must be integers >= 0")
    values, counts = np.unique(whole, return_counts=True)
    median, low, high = median_interval(scores)
    return {
        "games": len(scores),
        "mean": float(scores.mean()),
        "standard_error": float(scores.std(ddof=1) / np.sqrt(len(scores))),
        "standard_deviation": float(scores.std(ddof=1)),
        "median": median,
        "median_low": low,
        "median_high": high,
        "percentiles": {str(q): float(np.percentile(scores, q)) for q in (5, 25, 75, 95)},
        "counts": {str(v): int(c) for v, c in zip(values, counts, strict=True)},
    }


def profile(policy: Any, label: str, games: int, seed: int, env_kwargs: dict) -> dict:
    """One policy's exact evaluation and simulated games, as the JSON keeps them."""
    start = time.perf_counter()
    evaluation = baselines.evaluate(policy, YAHTZEE, **env_kwargs)
    seconds = time.perf_counter() - start
    played, optimal = evaluation.losses_by_box()
    sampled = baselines.estimate_gap(policy, YAHTZEE, episodes=games, seed=seed, **env_kwargs)
    return {
        "label": label,
        "value": evaluation.value,
        "optimal_value": evaluation.optimal_value,
        "gap": evaluation.gap,
        "relative_gap": evaluation.relative_gap,
        "agreement": evaluation.agreement,
        "upper_bonus_probability": evaluation.upper_bonus_probability,
        "yahtzee_probability": evaluation.yahtzee_probability,
        "losses_by_turn": evaluation.losses_by_turn.tolist(),
        "losses_by_played": played.tolist(),
        "losses_by_optimal": optimal.tolist(),
        "evaluation_seconds": seconds,
        "sampled_gap": sampled.mean,
        "sampled_gap_standard_error": sampled.standard_error,
        "scores": score_summary(sampled.episode_scores),
        "optimal_upper_bonus_probability": evaluation.optimal_upper_bonus_probability,
        "optimal_yahtzee_probability": evaluation.optimal_yahtzee_probability,
    }


def optimal_profile(reference: dict, games: int, seed: int, env_kwargs: dict) -> dict:
    """The optimum's row: its end probabilities from a policy's sweep (`optimal_*`), its
    games from its batched policy."""
    solution = optimal_solution(**env_kwargs)
    sampled = baselines.estimate_gap(solution, YAHTZEE, episodes=games, seed=seed, **env_kwargs)
    turns = len(reference["losses_by_turn"])
    return {
        "label": "the optimum",
        "value": solution.value,
        "optimal_value": solution.value,
        "gap": 0.0,
        "relative_gap": 0.0,
        "agreement": 1.0,
        "upper_bonus_probability": reference["optimal_upper_bonus_probability"],
        "yahtzee_probability": reference["optimal_yahtzee_probability"],
        "losses_by_turn": [[0.0] * 3] * turns,
        "losses_by_played": [0.0] * len(CHOICES),
        "losses_by_optimal": [0.0] * len(CHOICES),
        "evaluation_seconds": 0.0,
        "sampled_gap": sampled.mean,
        "sampled_gap_standard_error": sampled.standard_error,
        "scores": score_summary(sampled.episode_scores),
    }


# -- the agents of the archive -------------------------------------------------------------


def archived_agents(archive: Path) -> list[dict]:
    """The archive's Yahtzee PPO runs: config, seed, folder, exact value, gap, losses by turn,
    whether it kept its policy; best value first."""
    found = []
    for result_path in sorted(Path(archive).glob("yahtzee/*/seed*/result.json")):
        entry = result_path.parent
        config = yaml.safe_load((entry / "config.yaml").read_text())
        result = json.loads(result_path.read_text())
        if config.get("algo") != "ppo" or "value" not in result:
            continue
        found.append(
            {
                "config": entry.parent.name,
                "seed": int(config["seed"]),
                "folder": entry,
                "value": float(result["value"]),
                "gap": float(result["gap"]),
                "relative_gap": float(result["relative_gap"]),
                "agreement": float(result["agreement"]),
                "steps": int(result["steps"]),
                "losses_by_turn": result.get("losses_by_turn"),
                "env_kwargs": dict(config.get("env_kwargs") or {}),
                "hyperparams": config.get("hyperparams", {}),
                "has_policy": (entry / "policy.zip").is_file(),
            }
        )
    return sorted(found, key=lambda run: -run["value"])


def agent_label(config: str, seed: int, steps: int) -> str:
    shown = f"{steps / 1e6:.0f}M" if steps >= 1_000_000 else f"{steps:,}"
    return f"MaskablePPO `{config}` seed {seed} ({shown} steps)"


def game_title(analysis: dict) -> str:
    """The game as the figures' titles name it, with its arguments."""
    kwargs = analysis["env_kwargs"]
    shown = ", ".join(f"{k}={v!r}" for k, v in sorted(kwargs.items())) or "joker='forced'"
    return f"Yahtzee ({shown})"


def full_game(analysis: dict) -> bool:
    """Whether the analysis is of the whole game (all 13 boxes), where Pape's median applies."""
    return "boxes" not in analysis["env_kwargs"]


def committed_config(identity: dict) -> str | None:
    """The name of the committed Yahtzee config (`ppo_wide`) one of whose runs, at either
    budget, has this identity (a run-store folder's config.yaml); None if none has."""
    for budget in BUDGETS:
        for path, config, seed in planned_runs(ROOT / "configs", budget, [YAHTZEE_CONFIGS]):
            if run_identity(config, seed) == identity:
                return path.stem
    return None


def analyse(
    agent: Path | None,
    archive: Path,
    games: int = GAMES,
    seed: int = SEED,
    hand_written: tuple[str, ...] = HAND_WRITTEN,
) -> dict:
    """Everything the section shows, as the JSON keeps it."""
    agents = archived_agents(archive)
    if agent is None:
        kept = [run for run in agents if run["has_policy"]]
        if not kept:
            raise ValueError(
                f"no Yahtzee PPO run in {archive} kept its policy (policy.zip): archive one "
                "(python -m docs.tools.training_report --budget full --runs STORE), or name a "
                "run folder with --agent"
            )
        agent = kept[0]["folder"]
    agent = Path(agent)
    missing = [
        name
        for name in ("config.yaml", "result.json", "policy.zip")
        if not (agent / name).is_file()
    ]
    if missing:
        raise ValueError(
            f"agent must be a finished Yahtzee PPO run folder; {agent} has no {', '.join(missing)}"
        )
    config = yaml.safe_load((agent / "config.yaml").read_text())
    if config.get("env_id") != YAHTZEE:
        raise ValueError(f"--agent {agent} is not a run of {YAHTZEE}")
    env_kwargs = dict(config.get("env_kwargs") or {})
    result = json.loads((agent / "result.json").read_text())
    # An archive entry is <config>/seed<n>; a run-store folder is named by its identity's hash.
    if re.fullmatch(r"seed\d+", agent.name):
        name = agent.parent.name
    else:
        name = committed_config(config) or agent.name
    label = agent_label(name, int(config["seed"]), int(result["steps"]))
    policies = {"agent": profile(agent, label, games, seed, env_kwargs)}
    for policy in hand_written:
        policies[policy] = profile(policy, f"`{policy}`", games, seed, env_kwargs)
    policies[OPTIMAL] = optimal_profile(policies["agent"], games, seed, env_kwargs)
    others = [
        {key: value for key, value in run.items() if key != "folder"}
        for run in agents
        if run["folder"].resolve() != agent.resolve() and run["losses_by_turn"] is not None
    ]
    return {
        "env_kwargs": env_kwargs,
        "games": games,
        "seed": seed,
        "agent": {
            "folder": _shown_path(agent),
            "config": name,
            "seed": int(config["seed"]),
            "steps": int(result["steps"]),
            "archived_value": float(result["value"]),
            "hyperparams": config.get("hyperparams", {}),
        },
        "policies": policies,
        "other_agents": others,
    }


def _shown_path(folder: Path) -> str:
    """The folder relative to the repository where it is inside it, else as given."""
    resolved = folder.resolve()
    return resolved.relative_to(ROOT).as_posix() if resolved.is_relative_to(ROOT) else str(folder)


# -- the section -------------------------------------------------------------------------------


def _percent(value: float) -> str:
    return f"{100 * value:.2f} %"


def summary_table(analysis: dict) -> str:
    """One row per policy: exact value, gap, agreement, end probabilities, simulated median."""
    rows = []
    for entry in analysis["policies"].values():
        scores = entry["scores"]
        rows.append(
            [
                entry["label"],
                f"{entry['value']:.4f}",
                f"{entry['gap']:.4f}",
                _percent(entry["relative_gap"]),
                f"{100 * entry['agreement']:.1f} %",
                _percent(entry["upper_bonus_probability"]),
                _percent(entry["yahtzee_probability"]),
                f"{scores['median']:.0f} [{scores['median_low']:.0f}, {scores['median_high']:.0f}]",
                f"{scores['mean']:.2f} ± {scores['standard_error']:.2f}",
                f"{entry['sampled_gap']:.2f} ± {entry['sampled_gap_standard_error']:.2f}",
            ]
        )
    header = [
        "policy",
        "exact value",
        "gap",
        "relative gap",
        "agreement",
        "upper bonus",
        "50 in Yahtzee box",
        "median [95 %]",
        "simulated mean ± s.e.",
        "sampled gap ± s.e.",
    ]
    return markdown_table(header, rows)


def decision_table(analysis: dict) -> str:
    """The exact losses by decision of every policy, and of the other archived agents."""
    rows = []

    def add(label: str, losses: Any, gap: float) -> None:
        by_decision = np.asarray(losses).sum(axis=0)
        rows.append([label, *(f"{v:.2f}" for v in by_decision), f"{gap:.2f}"])

    for key, entry in analysis["policies"].items():
        if key != OPTIMAL:
            add(entry["label"], entry["losses_by_turn"], entry["gap"])
    for run in analysis["other_agents"]:
        add(agent_label(run["config"], run["seed"], run["steps"]), run["losses_by_turn"],
            run["gap"])  # fmt: skip
    return markdown_table(["policy", *DECISIONS, "gap"], rows)


def box_table(analysis: dict) -> str:
    """The exact losses by box: per policy, split by what it played and by what the optimum
    plays there."""
    shown = {k: e for k, e in analysis["policies"].items() if k != OPTIMAL}
    header = ["choice"] + [
        f"{entry['label']}: {side}" for entry in shown.values() for side in ("played", "optimum")
    ]
    rows = []
    for row, choice in enumerate(CHOICES):
        cells = []
        for entry in shown.values():
            cells += [f"{entry['losses_by_played'][row]:.2f}",
                      f"{entry['losses_by_optimal'][row]:.2f}"]  # fmt: skip
        rows.append([choice.replace("_", " "), *cells])
    return markdown_table(header, rows)


def changes_text(analysis: dict) -> str:
    """What changed between the other archived agents (the best of each config) and this
    one, by decision: generated from the numbers."""
    agent = analysis["policies"]["agent"]
    now = np.asarray(agent["losses_by_turn"]).sum(axis=0)
    best_of: dict[str, dict] = {}
    for run in analysis["other_agents"]:
        if run["config"] == analysis["agent"]["config"]:
            continue  # its own seeds: the decision table shows them
        if run["config"] not in best_of or run["value"] > best_of[run["config"]]["value"]:
            best_of[run["config"]] = run
    parts = []
    for run in best_of.values():
        settings = _changed_settings(run, analysis["agent"])
        before = np.asarray(run["losses_by_turn"]).sum(axis=0)
        moved = ", ".join(
            f"{d} {b:.2f} -> {a:.2f}" for d, b, a in zip(DECISIONS, before, now, strict=True)
        )
        gained = run["gap"] - agent["gap"]
        text = (
            f"Against {agent_label(run['config'], run['seed'], run['steps'])} (exact "
            f"{run['value']:.4f}; what differs: {settings}), the gap "
            f"{'fell' if gained > 0 else 'rose'} from {run['gap']:.2f} to {agent['gap']:.2f} "
            f"points; by decision: {moved}"
        )
        if gained > 0:
            share = (before - now) / gained
            text += (
                f"; the most of it ({100 * share.max():.0f} %) with "
                f"{DECISIONS[int(np.argmax(share))]}"
            )
        parts.append(text + ".")
    return " ".join(parts)


def _changed_settings(before: dict, after: dict) -> str:
    """The steps and the hyperparameters that differ between two runs' configs."""
    changes = [f"steps {before['steps']:,} -> {after['steps']:,}"]
    old, new = before.get("hyperparams", {}), after.get("hyperparams", {})
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            changes.append(f"{key} {old.get(key, 'unset')} -> {new.get(key, 'unset')}")
    return "; ".join(changes)


def pape_text(analysis: dict) -> str:
    """The agent's median against Pape's (on the whole game; "" on a reduced one)."""
    if not full_game(analysis):
        return ""
    scores = analysis["policies"]["agent"]["scores"]
    low, high = scores["median_low"], scores["median_high"]
    where = (
        "above"
        if low > PAPE_MEDIAN
        else "below"
        if high < PAPE_MEDIAN
        else "not distinguishable from"
    )
    return (
        f"A median to a median: the agent's simulated median {scores['median']:.0f} "
        f"(95 % interval [{low:.0f}, {high:.0f}], {scores['games']:,} games) is {where} the "
        f'median {PAPE_MEDIAN} that Pape reports for A2C over 100,000 games ("Yahtzee: '
        'Reinforcement Learning Techniques for Stochastic Combinatorial Games", arXiv '
        "2601.00007, 2025). Final scores are integers, so a median moves in whole points."
    )


def section_text(analysis: dict, images: str) -> str:
    """The Yahtzee page's section: the tables, the figures (links relative to the page)."""
    agent = analysis["agent"]
    kwargs = analysis["env_kwargs"] or "the defaults (forced joker)"
    parts = [
        "## Why the learned agent falls short, exactly",
        f"The best archived agent ({analysis['policies']['agent']['label']}, at {kwargs}) "
        "beside the hand-written `greedy-turn`, Glenn's heuristics (2006) and the optimum. "
        "Values, gaps, agreement, the chances of the upper bonus and of 50 in the Yahtzee "
        "box and every loss below are exact (`baselines.evaluate`); the medians and means "
        f"are of {analysis['games']:,} games per policy in the native vector env "
        f"(`baselines.estimate_gap`, seed {analysis['seed']}), whose sampled gap stands "
        "beside the exact one. Made by `python -m docs.tools.yahtzee_agents` from "
        f"{Path(agent['folder']).as_posix()}.",
        summary_table(analysis),
        pape_text(analysis),
        "### Where the points go: by decision",
        "The expected points lost at the decisions with 2, 1 and 0 rolls left, weighted by "
        "the policy's chance of reaching them (`losses_by_turn` summed over turns); each "
        "row sums to its gap. The other archived agents come from their archived results.",
        decision_table(analysis),
        changes_text(analysis),
        f"![Yahtzee: the exact losses by turn]({images}/{LOSSES_PNG})",
        "### By box",
        "The same losses split by what the policy played (a reroll or the box it scored "
        "in) and by what the optimum plays there (`YahtzeeEvaluation.losses_by_box`).",
        box_table(analysis),
        f"![Yahtzee: the exact losses by box]({images}/{BOXES_PNG})",
        "### The final score",
        f"![Yahtzee: final-score distributions]({images}/{SCORES_PNG})",
    ]
    return "\n\n".join(part for part in parts if part)


def report_text(analysis: dict, page: str) -> str:
    """The report's summary: the table, the median against Pape's, a link to the page."""
    parts = [
        "## Yahtzee: why the learned agent falls short",
        f"Made by `python -m docs.tools.yahtzee_agents` from "
        f"{analysis['agent']['folder']}{_staleness(analysis)}.",
        summary_table(analysis),
        pape_text(analysis),
        f"By turn, decision and box, with figures: [the Yahtzee page]({page}#why-the-learned"
        "-agent-falls-short-exactly).",
    ]
    return "\n\n".join(part for part in parts if part)


def _staleness(analysis: dict) -> str:
    """ "" if the analysed run is still where it was with the same exact value, else why not."""
    folder = Path(analysis["agent"]["folder"])
    folder = folder if folder.is_absolute() else ROOT / folder
    try:
        value = json.loads((folder / "result.json").read_text())["value"]
    except (OSError, KeyError, ValueError):
        return " (that run is not there any more: run the command again)"
    if value != analysis["agent"]["archived_value"]:
        return f" (that run's exact value is now {value!r}: run the command again)"
    return ""


def report_section(out: Path) -> str:
    """The report's section from `out`/yahtzee_agents.json ("" where there is none), its link
    to the Yahtzee page relative to `out`."""
    path = Path(out) / JSON_FILE
    if not path.is_file():
        return ""
    page = Path(os.path.relpath(page_path(YAHTZEE, DOCS), Path(out).resolve())).as_posix()
    return report_text(json.loads(path.read_text()), page) + "\n\n"


# -- the figures ---------------------------------------------------------------------------------


def plot_losses(analysis: dict, path: Path) -> None:
    """Per policy, the exact points lost at each turn, stacked by decision; one y scale."""
    shown = [e for k, e in analysis["policies"].items() if k != OPTIMAL]
    fig, axes = plt.subplots(1, len(shown), figsize=(4.2 * len(shown), 4.0), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, entry in zip(axes, shown, strict=True):
        draw_losses_by_turn(ax, entry["losses_by_turn"])
        ax.set_xlabel("turn")
        ax.set_title(f"{entry['label'].replace('`', '')}\ngap {entry['gap']:.2f} points",
                     fontsize=9)  # fmt: skip
    axes[0].set_ylabel("expected points lost (exact)")
    axes[0].legend(fontsize=8, title="decision", title_fontsize=8)
    fig.suptitle(
        f"{game_title(analysis)}: where each policy loses, by turn (each panel sums to its gap)",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_boxes(analysis: dict, path: Path) -> None:
    """Grouped bars: the exact losses by what each policy played, and by what the optimum
    plays there."""
    shown = [e for k, e in analysis["policies"].items() if k != OPTIMAL]
    names = [c.replace("_", " ") for c in CHOICES]
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2), sharey=True)
    width = 0.8 / len(shown)
    y = np.arange(len(CHOICES))
    for ax, key, title in (
        (axes[0], "losses_by_played", "by what the policy played"),
        (axes[1], "losses_by_optimal", "by what the optimum plays there"),
    ):
        for i, entry in enumerate(shown):
            ax.barh(y + (i - (len(shown) - 1) / 2) * width, entry[key], height=width,
                    label=entry["label"].replace("`", ""))  # fmt: skip
        ax.set_yticks(y, names)
        ax.invert_yaxis()
        ax.set(xlabel="expected points lost (exact)", title=title)
        ax.title.set_fontsize(10)
    axes[0].legend(fontsize=8)
    fig.suptitle(
        f"{game_title(analysis)}: where each policy loses, by choice (a reroll or a box)",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_scores(analysis: dict, path: Path) -> None:
    """The simulated final-score distributions (bins of 5 points), exact means marked."""
    fig, ax = plt.subplots(figsize=(11, 5))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for colour, entry in zip(colours, analysis["policies"].values(), strict=False):
        counts = entry["scores"]["counts"]
        values = np.array([int(v) for v in counts])
        weights = np.array(list(counts.values()), dtype=float)
        edges = np.arange(0, 405, 5)
        shares = np.histogram(values, bins=edges, weights=weights)[0] * 100 / weights.sum()
        label = entry["label"].replace("`", "")
        ax.stairs(shares, edges, color=colour, lw=1.4, label=f"{label}: exact mean "
                  f"{entry['value']:.2f}, median {entry['scores']['median']:.0f}")  # fmt: skip
        ax.axvline(entry["value"], color=colour, ls="--", lw=1)
    if full_game(analysis):
        ax.axvline(PAPE_MEDIAN, color="black", ls=":", lw=1.2,
                   label=f"Pape's A2C median {PAPE_MEDIAN}")  # fmt: skip
    ax.set(
        xlabel="final score (points; bins of 5, up to 400)",
        ylabel="share of games (%)",
        title=f"{game_title(analysis)}: final score, {analysis['games']:,} simulated games "
        f"per policy (seed {analysis['seed']}); dashed: each exact mean",
    )
    ax.title.set_fontsize(10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write(analysis: dict, out: Path, docs: Path | None) -> list[Path]:
    """The JSON and the figures into `out`; the page's section when `docs` is given."""
    out.mkdir(parents=True, exist_ok=True)
    plot_losses(analysis, out / LOSSES_PNG)
    plot_boxes(analysis, out / BOXES_PNG)
    plot_scores(analysis, out / SCORES_PNG)
    data = json.dumps(analysis, indent=1, default=str) + "\n"
    atomic_write_bytes(out / JSON_FILE, data.encode())
    written = [out / JSON_FILE, out / LOSSES_PNG, out / BOXES_PNG, out / SCORES_PNG]
    if docs is not None:
        page = page_path(YAHTZEE, docs)
        images = Path("..", out.relative_to(docs)).as_posix()
        if not replace_section(SECTION, section_text(analysis, images), page):
            raise ValueError(f"{page} has no {SECTION} markers")
        written.append(page)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m docs.tools.yahtzee_agents")
    parser.add_argument("--budget", default="full", choices=("quick", "full"))
    parser.add_argument("--agent", type=Path, help="a Yahtzee PPO run folder (default: the "
                        "archive's best with a kept policy)")  # fmt: skip
    parser.add_argument("--games", type=int, default=GAMES, help="games simulated per policy")
    parser.add_argument("--seed", type=int, default=SEED, help="the simulations' seed")
    parser.add_argument("--docs", type=Path, default=DOCS, help="the docs folder")
    parser.add_argument("--out", type=Path, help="where to write (default: the budget's "
                        "report folder in --docs, with the Yahtzee page's section)")  # fmt: skip
    args = parser.parse_args(argv)
    # Here, not at the top: the report module imports this one, and training_report imports it.
    from docs.tools.training_report import report_folder as budget_folder

    report_folder = budget_folder(args.budget, args.docs)
    out = report_folder if args.out is None else args.out
    archive = args.docs / "training" / "runs" / args.budget
    start = time.perf_counter()
    analysis = analyse(args.agent, archive, args.games, args.seed)
    same = out.resolve() == report_folder.resolve()
    for path in write(analysis, out, args.docs if same else None):
        print(path)
    print(f"({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

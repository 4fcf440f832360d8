"""Yahtzee's page: when the optimal strategy fills each box, the final score under optimal play
by simulation, and where the named policies lose (the maintainer's `make solve` draws them).

    python -m docs.tools.yahtzee [--out docs] [--games 100000] [--seed 0]

Run alone, it rewrites only the "game" section of OUT/games/yahtzee.md (with these sections in
it) and its figures in OUT/images/; `make solve` (`python -m docs.tools.solve`) writes the same
section among every game's. The named policies are scored by the full-game exact evaluation
(`baselines.evaluate`, minutes each); the simulation plays the batched optimal policy
(`YahtzeeSolution.batched_policy()`) in the native vector env.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from baselines.yahtzee import YahtzeeSolution
from baselines.yahtzee_evaluation import DECISIONS, optimal_solution
from dice_envs import GAMES
from dice_envs.envs.yahtzee_vector import YahtzeeVectorEnv
from dice_envs.games.yahtzee import BOX_NAMES, NUM_BOXES
from docs.tools.game_pages import (
    game_page,
    markdown_table,
    named_policy_evaluation,
    write_page_section,
)
from docs.tools.readme import DOCS

YAHTZEE = "dice_envs/Yahtzee-v0"
GAMES_SIMULATED = 100_000
SEED = 0
BATCH = 4096  # games played at once in the vector env
FILLS_PNG = "yahtzee_optimal_fills.png"
SCORES_PNG = "yahtzee_optimal_scores.png"
LOSSES_PNG = "yahtzee_losses_by_turn.png"


def simulate_optimal_scores(
    solution: YahtzeeSolution, games: int, seed: int, batch: int = BATCH
) -> np.ndarray:
    """(games,) final scores of `games` games of the batched optimal policy in the native
    vector env, `batch` at a time, each copy playing one game per batch; the vector env is
    seeded once with `seed` and later batches continue its generator."""
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"games must be an integer >= 1, got {games!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an integer >= 0, got {seed!r}")
    model = solution.model
    boxes = [BOX_NAMES[b] for b in model.boxes]
    width = min(games, batch)
    env = YahtzeeVectorEnv(num_envs=width, joker=model.joker, boxes=boxes)
    policy = solution.batched_policy()
    scores = np.zeros(games)
    for lo in range(0, games, width):
        count = min(width, games - lo)
        obs, _ = env.reset(seed=seed if lo == 0 else None)
        active = np.arange(width) < count
        score = np.zeros(width)
        actions = np.full(width, 32, dtype=np.int64)  # copies not counted: any action
        while active.any():
            rows = np.flatnonzero(active)
            actions[rows] = policy.batch(obs[rows])
            obs, reward, terminated, truncated, _ = env.step(actions)
            score[rows] += reward[rows]
            active[rows] = ~(terminated[rows] | truncated[rows])
        scores[lo : lo + count] = score[:count]
    env.close()
    return scores


def plot_fills(fills: np.ndarray, boxes: tuple[int, ...], game: str, path: Path) -> None:
    """Heat map of `fills` (turns, 13): the probability of filling each box in play (`boxes`)
    at each turn."""
    turns = fills.shape[0]
    fig, ax = plt.subplots(figsize=(9, 2.2 + 0.31 * len(boxes)))
    top = float(fills[:, boxes].max())  # the colour scale up to the largest probability
    image = ax.imshow(fills[:, boxes].T, cmap="viridis", vmin=0.0, vmax=top, aspect="auto")
    for row, box in enumerate(boxes):
        for turn in range(turns):
            p = fills[turn, box]
            if p >= 0.005:
                colour = "black" if p > 0.6 * top else "white"
                ax.text(turn, row, f"{100 * p:.0f}", ha="center", va="center", fontsize=7,
                        color=colour)  # fmt: skip
    ax.set_xticks(range(turns), [str(t + 1) for t in range(turns)])
    ax.set_yticks(range(len(boxes)), [BOX_NAMES[b].replace("_", " ") for b in boxes])
    ax.set(
        xlabel="turn",
        ylabel="box",
        title=f"{game}: where the optimal strategy fills each box, by turn\n"
        "(exact forward pass; cell labels in %, blank below 0.5 %)",
    )
    ax.title.set_fontsize(10)
    bar = fig.colorbar(image, ax=ax)
    bar.set_label("probability that the box is filled at this turn")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_scores(scores: np.ndarray, exact: float, game: str, seed: int, path: Path) -> None:
    """Histograms of the simulated final scores, linear (the bulk) and logarithmic (the whole
    range, Yahtzee bonuses included), with the exact mean and the sample mean marked."""
    mean, error = scores.mean(), scores.std(ddof=1) / np.sqrt(len(scores))
    fig, (bulk, tail) = plt.subplots(1, 2, figsize=(12, 4.6))
    edges = np.arange(np.floor(scores.min() / 5) * 5, scores.max() + 10, 5)
    for ax, log in ((bulk, False), (tail, True)):
        ax.hist(scores, bins=edges, weights=np.full(len(scores), 100 / len(scores)),
                color="tab:blue", alpha=0.8, log=log, label="simulated games")  # fmt: skip
        ax.axvline(exact, color="black", lw=1.5, label=f"exact mean {exact:.4f} (solver)")
        ax.axvline(mean, color="tab:red", ls="--", lw=1.2,
                   label=f"sample mean {mean:.2f} ± {error:.2f} (SE)")  # fmt: skip
        ax.set(xlabel="final score (points)", ylabel="share of games (%, bins of 5 points)")
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.legend(fontsize=8)
    high = np.percentile(scores, 99.5)
    bulk.set_xlim(edges[0], high)
    bulk.set_title(f"up to the 99.5th percentile ({high:.0f} points)", fontsize=10)
    tail.set_title("every game, logarithmic share", fontsize=10)
    fig.suptitle(
        f"{game}: final score under optimal play, {len(scores):,} games "
        f"simulated in the native vector env (seed {seed})",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_losses_by_turn(evaluations: dict, game: str, path: Path) -> None:
    """Per named policy, the expected points it loses at each turn, stacked by decision."""
    fig, axes = plt.subplots(1, len(evaluations), figsize=(6 * len(evaluations), 4.2))
    axes = np.atleast_1d(axes)
    for ax, (name, evaluation) in zip(axes, evaluations.items(), strict=True):
        draw_losses_by_turn(ax, evaluation.losses_by_turn)
        ax.set(
            xlabel="turn",
            ylabel="expected points lost",
            title=f"{name}: gap {evaluation.gap:.2f} points",
        )
        ax.title.set_fontsize(10)
        ax.legend(fontsize=8, title="decision", title_fontsize=8)
    fig.suptitle(
        f"{game}: where the named policies lose, by turn (exact; each panel sums to its gap)",
        fontsize=11,
    )
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def draw_losses_by_turn(ax: Any, losses: Any) -> None:
    """Bars of the points lost at each turn (rows of `losses`), stacked by decision."""
    losses = np.asarray(losses)
    turns = np.arange(1, len(losses) + 1)
    bottom = np.zeros(len(losses))
    for column, decision in enumerate(DECISIONS):
        ax.bar(turns, losses[:, column], bottom=bottom, label=decision)
        bottom += losses[:, column]
    ax.set_xticks(turns)


def where_lost_table(evaluations: dict, count: int = 4) -> str:
    """The `count` largest entries of each policy's `losses_by_choice`, and its losses by
    decision, as a Markdown table."""
    rows = []
    for name, evaluation in evaluations.items():
        by_decision = evaluation.losses_by_turn.sum(axis=0)
        split = ", ".join(f"{d}: {v:.2f}" for d, v in zip(DECISIONS, by_decision, strict=True))
        rows.append([name, "(every decision)", "", f"{evaluation.gap:.2f}", "100 %", split])
        for played, optimal, lost in evaluation.lost_by_choice(count):
            if lost < 0.005:  # shown as 0.00: nothing lost there
                break
            share = f"{100 * lost / evaluation.gap:.1f} %"
            if played == optimal == "reroll":
                played, optimal = "reroll", "reroll (other dice)"
            rows.append([name, _choice(played), _choice(optimal), f"{lost:.2f}", share, ""])
    header = ["policy", "it played", "the optimum plays", "points lost", "share", "by decision"]
    return markdown_table(header, rows)


def _choice(choice: str) -> str:
    return choice if choice.startswith("reroll") else f"score in {choice.replace('_', ' ')}"


def game_label(solution: YahtzeeSolution) -> str:
    """The game as the figures' titles name it: its joker rule, and its boxes if reduced."""
    model = solution.model
    label = f"Yahtzee (joker={model.joker!r}"
    if len(model.boxes) < NUM_BOXES:
        label += ", boxes " + ", ".join(BOX_NAMES[b].replace("_", " ") for b in model.boxes)
    return label + ")"


def yahtzee_sections(
    images: Path, games: int = GAMES_SIMULATED, seed: int = SEED, **kwargs: Any
) -> list[tuple[str, str]]:
    """The page's Yahtzee sections as (heading, Markdown; image links relative to the docs
    folder), the figures drawn into `images`; `kwargs`: the env's arguments (the page's are
    the defaults, so that the named policies' evaluations are those of the other tables)."""
    solution = optimal_solution(**kwargs)
    game = game_label(solution)
    names = GAMES[YAHTZEE].policies
    evaluations = {name: named_policy_evaluation(YAHTZEE, name, **kwargs) for name in names}
    if not evaluations:
        raise ValueError(f"{YAHTZEE} registers no named policies to score")
    fills = next(iter(evaluations.values())).optimal_fills
    plot_fills(fills, solution.model.boxes, game, images / FILLS_PNG)
    start = time.perf_counter()
    scores = simulate_optimal_scores(solution, games, seed)
    seconds = time.perf_counter() - start
    plot_scores(scores, solution.value, game, seed, images / SCORES_PNG)
    plot_losses_by_turn(evaluations, game, images / LOSSES_PNG)
    fills_text = (
        f"The optimal strategy's chance of filling each box at each turn ({game}), from the "
        "exact forward pass of its occupancies over the turn-start states "
        "(`YahtzeeEvaluation.optimal_fills`, the same whichever policy is evaluated); each "
        "turn fills one box and each box is filled once, so every column and every row of "
        "boxes in play sums to 1.\n\n"
        f"![Yahtzee: where the optimal strategy fills each box]({_image(FILLS_PNG)})"
    )
    losses_text = (
        "Where each named policy (above) loses its gap: the expected points given up at each "
        "decision (the optimum's value there minus the value of the policy's choice under "
        "optimal play afterwards), weighted by the policy's chance of reaching it "
        "(`losses_by_turn`, `losses_by_choice`; both sum to the gap). The table gives each "
        "policy's losses by decision and its largest losses by what it played against what "
        "the optimum plays there.\n\n"
        f"![Yahtzee: where the named policies lose]({_image(LOSSES_PNG)})\n\n"
        + where_lost_table(evaluations)
    )
    return [
        ("Where the optimal strategy fills each box", fills_text),
        ("The final score under optimal play", _scores_text(scores, solution, seed, seconds)),
        ("Where the named policies lose", losses_text),
    ]


def _scores_text(scores: np.ndarray, solution: YahtzeeSolution, seed: int, seconds: float) -> str:
    mean, error = scores.mean(), scores.std(ddof=1) / np.sqrt(len(scores))
    levels = (5, 25, 50, 75, 95)
    quantiles = ", ".join(
        f"{q}th {v:.0f}" for q, v in zip(levels, np.percentile(scores, levels), strict=True)
    )
    return (
        f"{len(scores):,} games of the batched optimal policy "
        f"(`YahtzeeSolution.batched_policy()`) in the native vector env "
        f"({game_label(solution)}, seed {seed}, {seconds:.0f} s): "
        f"sample mean {mean:.3f} ± {error:.3f} (standard error) against the exact "
        f"{solution.value:.4f} ({(mean - solution.value) / error:+.1f} standard errors); "
        f"standard deviation {scores.std(ddof=1):.1f} points; percentiles {quantiles}; "
        f"{100 * np.mean(scores >= 300):.1f} % of games reach 300 points.\n\n"
        f"![Yahtzee: final score under optimal play]({_image(SCORES_PNG)})"
    )


def _image(name: str) -> str:
    return f"images/{name}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DOCS, help="the docs folder (default: docs)")
    parser.add_argument("--games", type=int, default=GAMES_SIMULATED, help="games simulated")
    parser.add_argument("--seed", type=int, default=SEED, help="the simulation's seed")
    args = parser.parse_args(argv)
    images = args.out / "images"
    images.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    sections = yahtzee_sections(images, args.games, args.seed)
    shown = [f"## {heading}\n\n{text}" for heading, text in sections]
    path = write_page_section(YAHTZEE, "game", game_page(YAHTZEE, shown), args.out)
    print(f"{path} and its figures in {images}/ ({time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

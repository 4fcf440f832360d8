"""Simultaneous Hog: the television game's equilibrium, named policies against it, and
fictitious play."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D

import baselines
from baselines.simultaneous import best_response, fictitious_play, pair_values
from dice_envs import make_model
from docs.tools.common import SIMULTANEOUS_HOG, exploitability_cell
from docs.tools.game_pages import markdown_table

# Named policies of Simultaneous Hog scored against the equilibrium and its best response.
SIMULTANEOUS_POLICIES = ("five-dice", "dice-5", "dice-6", "random")
FICTITIOUS_PLAY_ITERATIONS = 100
# The score pairs of the value and strategy tables, mixed ones among them.
SHOWN_SCORES = (0, 25, 50, 75, 90, 95, 99)


def _strategy_cell(probs: np.ndarray) -> str:
    """'6' for a pure strategy, '5: 0.64, 6: 0.36' for a mixed one (dice: probability)."""
    used = np.flatnonzero(probs > 0)
    if len(used) == 1:
        return str(int(used[0]) + 1)
    return ", ".join(f"{a + 1}: {probs[a]:.2f}" for a in used)


def _equilibrium_figure(solved, title: str, path: Path) -> None:
    """The expected dice at equilibrium (mixed positions marked) and the value, per position."""
    goal, dice_max = solved.goal, solved.max_dice
    probs = solved.strategies[:goal, :goal]
    expected = probs @ np.arange(1, dice_max + 1)
    own, other = np.nonzero((probs > 0).sum(axis=-1) > 1)
    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    image = axes[0].imshow(
        expected.T, origin="lower", cmap="viridis", vmin=0.5, vmax=dice_max + 0.5,
        interpolation="nearest",
    )  # fmt: skip
    bar = fig.colorbar(image, ax=axes[0], ticks=range(1, dice_max + 1))
    bar.set_label("expected number of dice")
    axes[0].scatter(own, other, s=6, c="white", edgecolors="black", linewidths=0.3)
    axes[0].legend(
        handles=[Line2D([], [], ls="", marker="o", mfc="white", mec="black", label="mixes")],
        loc="lower left", fontsize=8,
    )  # fmt: skip
    axes[0].set(xlabel="own score", ylabel="opponent score", title=f"{title}: dice at equilibrium")
    image = axes[1].imshow(
        solved.values[:goal, :goal].T, origin="lower", cmap="RdBu", vmin=0, vmax=1,
        interpolation="nearest",
    )  # fmt: skip
    fig.colorbar(image, ax=axes[1]).set_label("win probability (both at equilibrium)")
    axes[1].set(xlabel="own score", ylabel="opponent score", title=f"{title}: value")
    for ax in axes:
        ax.title.set_fontsize(10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _mixing_row_figure(solved, title: str, path: Path) -> None:
    """Where it mixes most: the opponent score with the most mixed positions, as stacked bars."""
    goal, dice_max = solved.goal, solved.max_dice
    probs = solved.strategies[:goal, :goal]
    mixed = (probs > 0).sum(axis=-1) > 1
    row = int(np.argmax(mixed.sum(axis=0)))
    scores = np.arange(goal)
    shown = scores[scores >= max(0, int(np.nonzero(mixed)[0].min()) - 5)]
    fig, ax = plt.subplots(figsize=(12, 4))
    bottom = np.zeros(len(shown))
    colours = plt.get_cmap("tab10")
    for a in range(dice_max):
        share = probs[shown, row, a]
        if share.any():
            ax.bar(shown, share, bottom=bottom, color=colours(a), label=f"{a + 1} dice")
            bottom += share
    ax.set(
        xlabel="own score",
        ylabel="probability",
        title=f"{title}: the equilibrium strategy with the opponent at {row}",
    )
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), title="throw")
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.title.set_fontsize(10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _named_policy_rows(model, solved) -> tuple[list[list[str]], dict[str, float]]:
    """Each named policy (and the equilibrium) against the equilibrium and against its best
    response: the table's rows and the exploitability by name."""
    rows, exploitable = [], {}
    for name in (*SIMULTANEOUS_POLICIES, "equilibrium"):
        table = model.named_policy(name) if name != "equilibrium" else solved.strategies
        against = pair_values(model, table, solved.strategies)[0, 0]
        response = best_response(model, table)[0, 0].max()
        exploitable[name] = response - 0.5
        rows.append(
            [name, f"{against:.6f}", f"{response:.6f}", exploitability_cell(response - 0.5)]
        )
    return rows, exploitable


def _fictitious_play_figure(learned, exploitable: dict[str, float], title: str, path: Path):
    """Fictitious play's exact exploitability by iteration, beside some named policies'."""
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    steps = np.arange(1, FICTITIOUS_PLAY_ITERATIONS + 1)  # the start (0) is off a log axis
    ax.loglog(
        steps, learned.exploitability[1:], marker=".", ms=3, label="fictitious play (average)"
    )
    for name, style in zip(("five-dice", "dice-6", "random"), ("--", ":", "-."), strict=True):
        ax.axhline(exploitable[name], color="grey", ls=style, lw=1, label=name)
    ax.set(
        xlabel="iterations (best responses averaged into the start)",
        ylabel="exploitability (win probability, log scale)",
        title=f"{title}\nfictitious play from the uniform strategy, scored exactly",
    )
    ax.title.set_fontsize(10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _value_and_strategy_tables(solved) -> tuple[str, str]:
    """The value and the equilibrium strategy at the score pairs of `SHOWN_SCORES`."""
    value_rows, strategy_rows = [], []
    for own in SHOWN_SCORES:
        value_rows.append([own, *(f"{solved.value_at((own, o)):.4f}" for o in SHOWN_SCORES)])
        strategy_rows.append(
            [own, *(_strategy_cell(solved.strategy((own, o))) for o in SHOWN_SCORES)]
        )
    header = ["own \\ opponent", *map(str, SHOWN_SCORES)]
    return markdown_table(header, value_rows), markdown_table(header, strategy_rows)


def _solve_text(solved) -> str:
    """How the equilibrium was solved, where it starts and where it mixes."""
    goal, dice_max = solved.goal, solved.max_dice
    support = (solved.strategies[:goal, :goal] > 0).sum(axis=-1)
    mixed = support > 1
    own, other = np.nonzero(mixed)
    start = solved.strategy((0, 0))
    sizes = np.bincount(support[mixed], minlength=dice_max + 1)
    spread = ", ".join(
        f"{sizes[k]} over {k} dice counts" for k in range(2, dice_max + 1) if sizes[k]
    )
    return (
        f"`baselines.equilibrium` solved all {goal * goal:,} positions in {solved.seconds:.1f} s "
        f"({1e3 * solved.seconds / goal**2:.2f} ms a position; {solved.linear_programs:,} linear "
        f"programs, at most {solved.steps} fixed-point steps a position; the strategies are a "
        f"saddle point of every position's matrix game to {solved.saddle_gap:.1e}). At the "
        f"start both throw {int(np.argmax(start)) + 1} dice "
        f"(probability {start.max():.3g}), and the value is {solved.value:.6f}. "
        f"{int(mixed.sum())} positions mix ({spread}), every one with a score sum of at least "
        f"{int((own + other).min())}; everywhere else the equilibrium is pure."
    )


def _fictitious_play_text(learned) -> str:
    return (
        "**Fictitious play** (`baselines.simultaneous.fictitious_play`): self-play with "
        "exact best responses. Each iteration answers the average of the past answers and the "
        "start; the game is symmetric, so one average plays both seats. The average is of "
        "behaviour strategies, position by position with equal weights (not weighted by how "
        "often each answer reaches a position), so no theorem promises convergence: the exact "
        "exploitability after every iteration measures it. From the uniform strategy "
        f"({learned.exploitability[0]:.4f}) it is "
        + ", ".join(
            f"{learned.exploitability[k]:.4f} after {k}"
            for k in (1, 10, FICTITIOUS_PLAY_ITERATIONS)
        )
        + f" iterations ({learned.seconds:.1f} s)."
    )


def simultaneous_hog_section(out: Path) -> str:
    """The television game's equilibrium: its solve, where it mixes, its value, and named
    policies scored exactly against it and against their best responses."""
    solved = baselines.equilibrium(SIMULTANEOUS_HOG)
    model = make_model(SIMULTANEOUS_HOG).model
    title = f"Simultaneous Hog (goal={solved.goal}, max_dice={solved.max_dice})"
    _equilibrium_figure(solved, title, out / "simultaneous_hog.png")
    _mixing_row_figure(solved, title, out / "simultaneous_hog_strategy.png")
    rows, exploitable = _named_policy_rows(model, solved)
    learned = fictitious_play(model, FICTITIOUS_PLAY_ITERATIONS)
    _fictitious_play_figure(
        learned, exploitable, title, out / "simultaneous_hog_fictitious_play.png"
    )
    values, strategies = _value_and_strategy_tables(solved)
    return (
        f"![{title}: the equilibrium](images/simultaneous_hog.png)\n\n"
        f"![{title}: a row of mixed strategies](images/simultaneous_hog_strategy.png)\n\n"
        f"{_solve_text(solved)}\n\n"
        "The value (the win probability of the player whose score heads the row, both at "
        f"equilibrium):\n\n{values}\n\n"
        "The equilibrium strategy there (dice: probability; one number where it is pure):"
        f"\n\n{strategies}\n\n"
        "Named policies, played by one player against the other at equilibrium (its win "
        "probability from the start), and against its exact best response (the best "
        "response's win probability; exploitability is that minus 1/2):\n\n"
        + markdown_table(
            ["policy", "against the equilibrium", "best response wins", "exploitability"], rows
        )
        + f"\n\n{_fictitious_play_text(learned)}\n\n"
        f"![{title}: fictitious play](images/simultaneous_hog_fictitious_play.png)"
    )

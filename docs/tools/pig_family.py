"""The Pig family: Pig's hold boundary, the solitaires, the races, and Hog's dice.

Source of the solitaire numbers: H. Tijms, "Stochastic games and dynamic programming", Asia
Pacific Mathematics Newsletter (2012).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import baselines
from baselines.pig import best_response
from baselines.pig import two_player_optimum as pig_optimum
from baselines.specialised import pig_opponent_turns
from baselines.two_player import two_player_optimum
from dice_envs import make_model
from dice_envs.games.base import uniform_die
from dice_envs.games.hog import Hog
from dice_envs.games.pig import Pig
from dice_envs.games.two_dice_pig import TwoDicePig
from dice_envs.policies import named_policy
from docs.tools.common import (
    PIG,
    save_integer_plot,
)
from docs.tools.game_pages import (
    markdown_table,
)


def pig_hold_boundary(roll: np.ndarray, goal: int) -> np.ndarray:
    """[own, other]: the least turn total at which the policy holds (goal - own if never)."""
    boundary = np.full((goal, goal), np.nan)
    for own in range(goal - 2):
        holds = ~roll[own, :, 2 : goal - own]
        first = np.argmax(holds, axis=1) + 2
        boundary[own] = np.where(holds.any(axis=1), first, goal - own)
    boundary[goal - 2 :] = 2
    return boundary


def plot_pig(out: Path) -> str:
    goal = 100
    optimum = pig_optimum(goal, uniform_die(6))
    response_roll = best_response(pig_opponent_turns(make_model(PIG, goal=goal))).roll_decision
    fig, axes = plt.subplots(1, 2, figsize=(12, 5), sharey=True)
    panels = [
        (optimum.roll, "two-player optimum (both play it)"),
        (response_roll, "best response to hold-at-20"),
    ]
    for ax, (roll, title) in zip(axes, panels, strict=True):
        boundary = pig_hold_boundary(roll, goal)
        image = ax.imshow(
            boundary.T, origin="lower", cmap="viridis", vmin=0, vmax=goal, aspect="equal",
            interpolation="nearest",
        )  # fmt: skip
        ax.contour(boundary.T, levels=[20, 25, 30], colors="w", linewidths=0.8)
        ax.set(xlabel="own score i", title=title)
        ax.xaxis.get_major_locator().set_params(integer=True)
    axes[0].set_ylabel("opponent score j")
    fig.colorbar(
        image, ax=axes, shrink=0.85,
        label="turn total to hold at (white lines: 20, 25, 30)",
    )  # fmt: skip
    fig.suptitle(
        f"Pig-v0 (goal={goal}, 6-sided die): the least turn total at which to hold\n"
        "(where it equals goal - own score, the player rolls on to the goal)",
        fontsize=10,
    )
    fig.savefig(out / "pig_policy.png", dpi=100, bbox_inches="tight")
    plt.close(fig)
    rows = []
    for g in (30, 50, 100):
        two = pig_optimum(g, uniform_die(6))
        response = baselines.solve(PIG, goal=g, opponent="hold-at-20", agent_starts=None)
        rows.append([g, f"{two.value:.6f}", f"{response.value:.6f}"])
    return markdown_table(
        ["goal", "first player wins, both optimal", "best response to hold-at-20 (coin flip)"],
        rows,
    )


# Tijms (2012)'s solitaire numbers: (env id, heuristic, optimal turns, the heuristic's turns).
SEED_SOLITAIRES = [
    ("dice_envs/PigSolitaire-v0", "hold-at-20", "12.545", "12.637"),
    ("dice_envs/TwoDicePigSolitaire-v0", "tijms", "16.923", "17.164"),
    # Tijms's 13.623 for "the five-dice rule" is five dice on every throw (dice-5); the rule
    # as the text states it ("five-dice": fewer dice for the last points) takes fewer turns.
    ("dice_envs/HogSolitaire-v0", "five-dice", "13.039", "— (see dice-5)"),
    ("dice_envs/HogSolitaire-v0", "dice-5", "13.039", '13.623 ("five-dice rule")'),
]


RACES = [("Pig", Pig), ("two-dice Pig", TwoDicePig), ("Hog", Hog)]


def hold_thresholds(policy, reachable: set, goal: int) -> np.ndarray:
    """Per score, the least turn total at which a solitaire policy holds: goal - score if it
    rolls to the goal, NaN for a score the game never reaches. `policy`: a callable on the
    observation, or a table indexed by it."""
    if isinstance(policy, np.ndarray):
        policy = policy.__getitem__
    first = np.full(goal, np.nan)
    for score in range(goal):
        turns = [t for t in range(1, goal - score) if (score, t) in reachable]
        if (score, 0) not in reachable:
            continue
        holds = [t for t in turns if policy((score, t)) == 0]
        first[score] = holds[0] if holds else goal - score
    return first


def pig_family_section(out: Path) -> str:
    """Tijms's solitaire numbers, the first player's chances in each race, and two plots:
    where to hold alone, and how many dice to throw in Hog."""
    rows = []
    for env_id, name, seed_best, seed_rule in SEED_SOLITAIRES:
        best = baselines.solve(env_id)
        rule = baselines.evaluate(name, env_id)
        rows.append(
            [
                f"`{env_id}`",
                f"{-best.value:.4f}",
                seed_best,
                f"{best.seconds * 1000:.0f} ms",
                name,
                f"{-rule.value:.4f}",
                seed_rule,
            ]
        )
    solo = markdown_table(
        ["game (goal 100)", "optimal turns", "Tijms (2012)", "solve", "rule", "its turns",
         "Tijms (2012)"],
        rows,
    )  # fmt: skip
    race_rows = []
    for goal in (30, 50, 100):
        row: list[object] = [goal]
        for _name, game in RACES:
            pig_optimum.cache_clear()  # time Pig's solve, not a lookup
            solution = two_player_optimum(game(goal=goal))
            row += [f"{solution.value:.6f}", f"{solution.seconds * 1000:.0f} ms"]
        race_rows.append(row)
    header = ["goal"]
    for name, _game in RACES:
        header += [f"{name}: first player wins", "solve"]
    races = markdown_table(header, race_rows)
    two_dice = two_player_optimum(TwoDicePig(goal=100))
    rounds = (
        f"Two-dice Pig at goal 100: {two_dice.iterations} rounds of the outer iteration on the "
        f"wipe values, the last moving them by {two_dice.residual:.1e}."
    )
    plot_solitaire_holds(out)
    hog_two = plot_hog_dice(out)
    return (
        "Alone, to 100 (expected turns; the rules evaluated exactly):\n\n"
        + solo
        + '\n\nTijms\'s 13.623 turns for "the five-dice rule" is what five dice on every '
        "throw take (`dice-5`); the rule as his text states it (`five-dice`: for the last "
        "points, half as many dice as points still needed) takes fewer."
        + "\n\nBoth players optimal (layered solvers of `baselines.two_player`), the first "
        "player's win probability:\n\n"
        + races
        + "\n\n"
        + rounds
        + "\n\n![where to hold alone](images/solitaire_holds.png)\n\n"
        + hog_two
    )


def plot_solitaire_holds(out: Path) -> None:
    goal = 100
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.2))
    panels = [
        ("dice_envs/PigSolitaire-v0", "hold-at-20", "Pig alone (goal=100, one d6)"),
        ("dice_envs/TwoDicePigSolitaire-v0", "tijms", "Two-dice Pig alone (goal=100, two d6)"),
    ]
    scores = np.arange(goal)
    for ax, (env_id, name, title) in zip(axes, panels, strict=True):
        solution = baselines.solve(env_id)
        reachable = set(solution.tables.observations)
        best = hold_thresholds(solution, reachable, goal)
        rule = hold_thresholds(named_policy(env_id, name), reachable, goal)
        ax.plot(scores, goal - scores, color="0.6", lw=1, label="points still needed")
        ax.step(scores, best, where="mid", label="optimal (fewest turns)")
        ax.step(scores, rule, where="mid", ls="--", label=f"{name} rule")
        ax.set(
            xlabel="score before the turn",
            ylabel="hold at turn total",
            title=f"{title}: roll below the line, hold on it\n"
            "(on the grey line: roll until the goal)",
            ylim=(0, 40),
        )
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.legend(fontsize=8)
        ax.title.set_fontsize(10)
    fig.tight_layout()
    fig.savefig(out / "solitaire_holds.png", dpi=100)
    plt.close(fig)


def plot_hog_dice(out: Path) -> str:
    goal = 100
    optimum = two_player_optimum(Hog(goal=goal))
    dice = optimum.policy[:goal, :goal] + 1
    alone = baselines.solve("dice_envs/HogSolitaire-v0")
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), gridspec_kw={"width_ratios": [1.25, 1]})
    image = axes[0].imshow(
        dice.T, origin="lower", cmap="viridis", vmin=0.5, vmax=10.5, interpolation="nearest"
    )
    bar = fig.colorbar(image, ax=axes[0], ticks=range(1, 11))
    bar.set_label("dice to throw")
    axes[0].set(
        xlabel="own score",
        ylabel="opponent score",
        title="Hog (goal=100, max_dice=10), both optimal: dice to throw",
    )
    axes[0].title.set_fontsize(10)
    scores = np.arange(goal)
    reached = set(alone.tables.observations)  # a score of 1 never occurs alone
    alone_dice = [alone.action(int(s)) + 1 if int(s) in reached else np.nan for s in scores]
    axes[1].step(scores, alone_dice, where="mid", label="alone: fewest turns")
    axes[1].step(scores, dice[:, 0], where="mid", ls="--", label="race, opponent at 0")
    axes[1].step(scores, dice[:, 75], where="mid", ls=":", label="race, opponent at 75")
    axes[1].set(
        xlabel="own score",
        ylabel="dice to throw",
        title="Hog (goal=100, max_dice=10): alone and in the race",
    )
    save_integer_plot(fig, axes[1], out / "hog_dice.png")
    counts = np.bincount(dice.ravel(), minlength=11)[1:]
    common = int(np.argmax(counts)) + 1
    return (
        "![Hog: dice to throw](images/hog_dice.png)\n\n"
        f"In the race, {common} dice is the most common optimal throw ({counts[common - 1]} of "
        f"{goal * goal} score pairs); alone, the optimum throws "
        f"{alone.action(0) + 1} dice from 0."
    )

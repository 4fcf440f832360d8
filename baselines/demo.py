"""The main job for now: solve every registered game, score the source documents' heuristics
exactly, and draw the optimal policies.

    python -m baselines.demo [--out docs]

Prints Markdown tables and writes them to OUT/demo_results.md, with PNG plots in OUT/images/.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

import baselines
from baselines.game_pages import (
    game_page,
    heuristic_table,
    markdown_table,
    optimum_table,
    page_path,
    write_page_section,
)
from baselines.heuristics import (
    SEED_RED_BLACK_THRESHOLDS,
    heuristic,
    remainder_thresholds,
    stop_at,
    stop_thresholds,
)
from baselines.pig import best_response
from baselines.pig import two_player_optimum as pig_optimum
from baselines.readme import replace_section
from baselines.solvers import optimal_action_mask
from baselines.specialised import pig_opponent_turns
from baselines.ten_thousand import critical_threshold, policy_table
from baselines.two_player import two_player_optimum
from dice_envs import GAMES, make_model
from dice_envs import env_ids as registry_ids
from dice_envs.games.base import uniform_die
from dice_envs.games.hog import Hog
from dice_envs.games.pig import Pig
from dice_envs.games.ten_thousand import CONFIG_INDEX, ROLL
from dice_envs.games.two_dice_pig import TwoDicePig

SUM_AVOID = "dice_envs/SumAvoid-v0"
PIG = "dice_envs/Pig-v0"
TEN_THOUSAND = "dice_envs/TenThousand-v0"
D20 = "dice_envs/D20Rounds-v0"


def games_table() -> str:
    """The README's opening table: every id (linking its page), what it is, its optimum at
    the defaults."""
    rows = [
        [
            f"[`{env_id}`]({page_path(env_id)})",
            GAMES[env_id].summary,
            f"{baselines.solve(env_id).value:.6f}",
        ]
        for env_id in registry_ids()
    ]
    return markdown_table(["id", "game", "optimum at the defaults"], rows)


def plot_sum_avoid(out: Path) -> str:
    solution = baselines.solve(SUM_AVOID)
    model = make_model(SUM_AVOID)
    sums = [s for s in range(model.max_sum + 1) if not model.is_bust(s)]
    values = np.array([solution.state_value(s) for s in sums])
    stop = np.array([solution.action(s) == 0 for s in sums])
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.plot(sums, sums, color="0.7", lw=1, label="stop now (V = S)")
    ax.scatter(np.array(sums)[~stop], values[~stop], s=12, color="tab:blue", label="roll")
    ax.scatter(np.array(sums)[stop], values[stop], s=12, color="tab:red", label="stop")
    ax.set(
        xlabel="sum S",
        ylabel="optimal value V(S)",
        title=f"SumAvoid-v0 (N={model.N}, sides={model.sides}): optimal value and action",
    )
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "sum_avoid_policy.png", dpi=110)
    plt.close(fig)

    # Seed 000's thresholds per remainder class, for several N; and stop-at-K rules against them.
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    lines = []
    sides = model.sides
    for N, marker, offset in ((7, "o", -0.15), (10, "s", 0.0), (13, "D", 0.15)):
        sol = baselines.solve(SUM_AVOID, N=N)
        found = stop_thresholds(sol, make_model(SUM_AVOID, N=N))
        classes = [r for r in range(N) if found[r] is not None]
        line = left.plot(
            np.array(classes) + offset, [found[r] for r in classes], ls="-", marker=marker,
            ms=5, label=f"N={N}: stop once S >= T_r",
        )[0]  # fmt: skip
        never = [r for r in range(N) if found[r] is None]
        # Classes that never stop, at the foot, shifted apart so that no marker hides another.
        left.plot(
            np.array(never) + offset, [-2] * len(never), ls="none", marker=marker, mfc="none",
            ms=5, color=line.get_color(), label=f"N={N}: never stop",
        )  # fmt: skip
        lines.append(f"N={N}: " + ", ".join(f"{r}:{found[r]}" for r in range(N)))
    left.set(
        xlabel="remainder class r = S mod N",
        ylabel="threshold T_r (sum S)",
        title=f"SumAvoid-v0 (sides={sides}): optimal stop thresholds per remainder class",
    )
    left.title.set_fontsize(9)
    left.xaxis.get_major_locator().set_params(integer=True)
    left.yaxis.get_major_locator().set_params(integer=True)
    left.legend(fontsize=7, ncol=2)
    ks = np.arange(1, 61)
    rule_values = [baselines.evaluate(stop_at(int(k)), SUM_AVOID).value for k in ks]
    best = int(ks[int(np.argmax(rule_values))])
    right.plot(ks, rule_values, marker=".", label="stop once S >= K")
    right.axhline(solution.value, color="k", ls="--", label=f"optimum {solution.value:.3f}")
    right.set(
        xlabel="threshold K (sum)",
        ylabel="exact expected payoff",
        title=f"SumAvoid-v0 (N={model.N}, sides={sides}): one threshold for every sum",
    )
    right.title.set_fontsize(9)
    right.xaxis.get_major_locator().set_params(integer=True)
    right.legend()
    fig.tight_layout()
    fig.savefig(out / "sum_avoid_thresholds.png", dpi=110)
    plt.close(fig)
    per_class = remainder_thresholds(10, stop_thresholds(solution, model))
    per_class_value = baselines.evaluate(per_class, SUM_AVOID).value
    return (
        "Optimal thresholds T_r (r: T_r, None = never stop):\n"
        + "\n".join(f"- {line}" for line in lines)
        + f"\n\nBest single threshold rule for N=10: stop once S >= {best}, exact value "
        f"{max(rule_values):.4f} (gap {solution.value - max(rule_values):.4f}); the per-class "
        f"thresholds of N=10 are worth {per_class_value:.4f}, the optimum {solution.value:.4f}."
    )


def plot_d20(out: Path) -> None:
    rounds = 100
    solution = baselines.solve(D20, rounds=rounds)
    grid = np.array([[solution.action((r, f)) for f in range(1, 21)] for r in range(1, rounds + 1)])
    threshold = [int(np.argmin(row)) + 1 for row in grid]  # least face worth taking
    fig, ax = plt.subplots(figsize=(8, 4))
    colours = ListedColormap(["tab:blue", "tab:red"])
    ax.imshow(
        grid.T, origin="lower", aspect="auto", cmap=colours, vmin=0, vmax=1,
        extent=(0.5, rounds + 0.5, 0.5, 20.5), interpolation="nearest",
    )  # fmt: skip
    ax.step(range(1, rounds + 1), np.array(threshold) - 0.5, where="mid", color="k")
    ax.legend(
        handles=[
            Patch(color="tab:blue", label="take the face"),
            Patch(color="tab:red", label="reroll"),
            Line2D([], [], color="k", label="least face worth taking"),
        ],
        loc="lower right", fontsize=8,
    )  # fmt: skip
    ax.set(
        xlabel="rounds left",
        ylabel="face showing",
        title=f"D20Rounds-v0 (rounds={rounds}, sides=20): the optimal policy",
    )
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.tight_layout()
    fig.savefig(out / "d20_policy.png", dpi=110)
    plt.close(fig)

    counts = np.arange(1, rounds + 1)
    optimum = [solution.state_value((r, 1)) for r in counts]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name in GAMES[D20].policies:
        values = [
            baselines.evaluate(heuristic(D20, name, rounds=int(r)), D20, rounds=int(r)).value
            for r in counts
        ]
        ax.plot(counts, values, label=name)
    ax.plot(counts, optimum, "k--", label="optimal")
    ax.set(
        xlabel="number of rounds",
        ylabel="exact expected money",
        title="D20Rounds-v0 (sides=20): seed 001's strategies, evaluated exactly",
    )
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "d20_strategies.png", dpi=110)
    plt.close(fig)


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


# Seed 002's solitaire numbers: (env id, heuristic, optimal turns, the heuristic's turns).
SEED_SOLITAIRES = [
    ("dice_envs/PigSolitaire-v0", "hold-at-20", "12.545", "12.637"),
    ("dice_envs/TwoDicePigSolitaire-v0", "tijms", "16.923", "17.164"),
    ("dice_envs/HogSolitaire-v0", "five-dice", "13.039", "13.623 (five-dice rule)"),
    ("dice_envs/HogSolitaire-v0", "dice-5", "13.039", "13.623 (five-dice rule)"),
]
RACES = [("Pig", Pig), ("two-dice Pig", TwoDicePig), ("Hog", Hog)]


def hold_thresholds(policy, reachable: set, goal: int) -> np.ndarray:
    """Per score, the least turn total at which a solitaire policy holds: goal - score if it
    rolls to the goal, NaN for a score the game never reaches."""
    first = np.full(goal, np.nan)
    for score in range(goal):
        turns = [t for t in range(1, goal - score) if (score, t) in reachable]
        if (score, 0) not in reachable:
            continue
        holds = [t for t in turns if policy((score, t)) == 0]
        first[score] = holds[0] if holds else goal - score
    return first


def pig_family_section(out: Path) -> str:
    """Seed 002's solitaire numbers, the first player's chances in each race, and two plots:
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
        ["game (goal 100)", "optimal turns", "seed 002", "solve", "rule", "its turns", "seed 002"],
        rows,
    )
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
        reachable = set(solution.mdp.observations)
        best = hold_thresholds(solution, reachable, goal)
        rule = hold_thresholds(heuristic(env_id, name), reachable, goal)
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
    reached = set(alone.mdp.observations)  # a score of 1 never occurs alone
    alone_dice = [alone.action(int(s)) + 1 if int(s) in reached else np.nan for s in scores]
    axes[1].step(scores, alone_dice, where="mid", label="alone: fewest turns")
    axes[1].step(scores, dice[:, 0], where="mid", ls="--", label="race, opponent at 0")
    axes[1].step(scores, dice[:, 75], where="mid", ls=":", label="race, opponent at 75")
    axes[1].set(
        xlabel="own score",
        ylabel="dice to throw",
        title="Hog (goal=100, max_dice=10): alone and in the race",
    )
    _save_integer_plot(fig, axes[1], out / "hog_dice.png")
    counts = np.bincount(dice.ravel(), minlength=11)[1:]
    common = int(np.argmax(counts)) + 1
    return (
        "![Hog: dice to throw](images/hog_dice.png)\n\n"
        f"In the race, {common} dice is the most common optimal throw ({counts[common - 1]} of "
        f"{goal * goal} score pairs); alone, the optimum throws "
        f"{alone.action(0) + 1} dice from 0."
    )


SIMULTANEOUS_HOG = "dice_envs/SimultaneousHog-v0"
# Named policies of Simultaneous Hog scored against the equilibrium and its best response.
SIMULTANEOUS_POLICIES = ("five-dice", "dice-5", "dice-6", "random")
FICTITIOUS_PLAY_ITERATIONS = 100


def _strategy_cell(probs: np.ndarray) -> str:
    """'6' for a pure strategy, '5: 0.64, 6: 0.36' for a mixed one (dice: probability)."""
    used = np.flatnonzero(probs > 0)
    if len(used) == 1:
        return str(int(used[0]) + 1)
    return ", ".join(f"{a + 1}: {probs[a]:.2f}" for a in used)


def simultaneous_hog_section(out: Path) -> str:
    """The television game's equilibrium: its solve, where it mixes, its value, and named
    policies scored exactly against it and against their best responses."""
    from baselines.simultaneous import best_response, fictitious_play, pair_values

    solved = baselines.equilibrium(SIMULTANEOUS_HOG)
    model = make_model(SIMULTANEOUS_HOG).model
    goal, dice_max = solved.goal, solved.max_dice
    title = f"Simultaneous Hog (goal={goal}, max_dice={dice_max})"
    probs = solved.strategies[:goal, :goal]
    counts = np.arange(1, dice_max + 1)
    expected = probs @ counts
    support = (probs > 0).sum(axis=-1)
    mixed = support > 1
    fig, axes = plt.subplots(1, 2, figsize=(13, 5))
    image = axes[0].imshow(
        expected.T, origin="lower", cmap="viridis", vmin=0.5, vmax=dice_max + 0.5,
        interpolation="nearest",
    )  # fmt: skip
    bar = fig.colorbar(image, ax=axes[0], ticks=range(1, dice_max + 1))
    bar.set_label("expected number of dice")
    own, other = np.nonzero(mixed)
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
    fig.savefig(out / "simultaneous_hog.png", dpi=100)
    plt.close(fig)

    # Where it mixes most: the opponent score with the most mixed positions, as stacked bars.
    row = int(np.argmax(mixed.sum(axis=0)))
    scores = np.arange(goal)
    shown = scores[scores >= max(0, int(own.min()) - 5)]
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
    fig.savefig(out / "simultaneous_hog_strategy.png", dpi=100)
    plt.close(fig)

    rows, exploitable = [], {}
    for name in (*SIMULTANEOUS_POLICIES, "optimal"):
        table = model.named_policy(name) if name != "optimal" else solved.strategies
        against = pair_values(model, table, solved.strategies)[0, 0]
        response = best_response(model, table)[0, 0].max()
        exploitable[name] = response - 0.5
        rows.append(
            [name, f"{against:.6f}", f"{response:.6f}", _exploitability_cell(response - 0.5)]
        )

    learned = fictitious_play(model, FICTITIOUS_PLAY_ITERATIONS)
    fig, ax = plt.subplots(figsize=(7.5, 4.5))
    steps = np.arange(
        1, FICTITIOUS_PLAY_ITERATIONS + 1
    )  # the start (0 iterations) is off a log axis
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
    fig.savefig(out / "simultaneous_hog_fictitious_play.png", dpi=100)
    plt.close(fig)
    # The value table and the strategies at a few score pairs, mixed ones among them.
    shown_scores = sorted({0, 25, 50, 75, 90, 95, 99})
    value_rows, strategy_rows = [], []
    for own_score in shown_scores:
        value_rows.append(
            [own_score, *(f"{solved.value_at((own_score, o)):.4f}" for o in shown_scores)]
        )
        strategy_rows.append(
            [own_score, *(_strategy_cell(solved.strategy((own_score, o))) for o in shown_scores)]
        )
    header = ["own \\ opponent", *map(str, shown_scores)]
    start = solved.strategy((0, 0))
    sizes = np.bincount(support[mixed], minlength=dice_max + 1)
    spread = ", ".join(
        f"{sizes[k]} over {k} dice counts" for k in range(2, dice_max + 1) if sizes[k]
    )
    return (
        f"![{title}: the equilibrium](images/simultaneous_hog.png)\n\n"
        f"![{title}: a row of mixed strategies](images/simultaneous_hog_strategy.png)\n\n"
        f"`baselines.equilibrium` solved all {goal * goal:,} positions in {solved.seconds:.1f} s "
        f"({1e3 * solved.seconds / goal**2:.2f} ms a position; {solved.linear_programs:,} linear "
        f"programs, at most {solved.steps} fixed-point steps a position; the strategies are a "
        f"saddle point of every position's matrix game to {solved.saddle_gap:.1e}). At the "
        f"start both throw {int(np.argmax(start)) + 1} dice "
        f"(probability {start.max():.3g}), and the value is {solved.value:.6f}. "
        f"{int(mixed.sum())} positions mix ({spread}), every one with a score sum of at least "
        f"{int((own + other).min())}; everywhere else the equilibrium is pure.\n\n"
        "The value (the win probability of the player whose score heads the row, both at "
        "equilibrium):\n\n"
        + markdown_table(header, value_rows)
        + "\n\nThe equilibrium strategy there (dice: probability; one number where it is pure):"
        "\n\n"
        + markdown_table(header, strategy_rows)
        + "\n\nNamed policies, played by one player against the other at equilibrium (its win "
        "probability from the start), and against its exact best response (the best "
        "response's win probability; exploitability is that minus 1/2):\n\n"
        + markdown_table(
            ["policy", "against the equilibrium", "best response wins", "exploitability"], rows
        )
        + "\n\n**Fictitious play** (`baselines.simultaneous.fictitious_play`): self-play with "
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
        + f" iterations ({learned.seconds:.1f} s).\n\n"
        f"![{title}: fictitious play](images/simultaneous_hog_fictitious_play.png)"
    )


def ten_thousand_section(out: Path, docs: Path) -> str:
    optimum = baselines.solve(TEN_THOUSAND)
    generic = baselines.solve(TEN_THOUSAND, method="generic")
    reachable = set(generic.mdp.observations)
    table = policy_table(optimum, reachable)
    (docs / "ten_thousand_policy.md").write_text(
        "# Solitaire Ten Thousand: the optimal play\n\n"
        "Written by `make demo` (`python -m baselines.demo`). Turn score tau in chips (50 points"
        " each); columns as in Crocce and Mordecki's Table 6: n = dice in hand, then the last"
        " roll's configuration [fives, ones, triple face]. A cell is the optimal value and action"
        " (r roll, m5 give back a 5 and roll, m1 a 1, m55 two 5s, m51 a 5 and a 1); s = stop"
        " (worth tau); - = no reachable position. From 56 chips on, stop everywhere.\n\n"
        + table
        + "\n"
    )
    taus = np.arange(0, 71)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(taus, taus, color="0.6", lw=1, label="stop (tau)")
    single_five = CONFIG_INDEX[(1, 0, 0)]  # any position with n dice in hand rolls alike
    for n in range(5, 0, -1):
        xs = taus if n == 5 else taus[1:]
        values = [optimum.q_values((int(t), 0 if n == 5 else single_five, n))[ROLL] for t in xs]
        ax.plot(xs, values, label=f"roll {n} dice")
    ax.axvline(critical_threshold(), color="k", ls=":", label="critical threshold 56")
    ax.set(
        xlabel="turn score tau (chips)",
        ylabel="expected final turn score",
        title="Ten Thousand: value of rolling n dice, and of stopping",
    )
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "ten_thousand_values.png", dpi=110)
    plt.close(fig)
    rows = []
    for allowed in ([], ["5"], ["5", "1"], ["5", "1", "55"], ["5", "1", "55", "51"], None):
        value = baselines.solve(TEN_THOUSAND, allowed_moves=allowed).value
        label = "all 13" if allowed is None else (", ".join(allowed) or "none (stop or roll)")
        rows.append([label, f"{value:.10f}"])
    never = ", ".join(_never_optimal(generic))
    return (
        markdown_table(["moves allowed", "value (chips)"], rows)
        + f"\n\nMoves never strictly better than every other action: {never}.\n\n"
        + f"Generic solver: {len(generic.state_values)} reachable positions, value "
        f"{generic.value:.10f}; the paper's algorithm: {optimum.value:.10f}."
    )


def _save_integer_plot(fig, ax, path: Path) -> None:
    """Integer ticks on both axes, a small title and legend; save and close."""
    ax.title.set_fontsize(10)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# Seed 002's published values: the die rolled at most k times, k = 1..5.
SEED_DIE_VALUES = {1: 3.5, 2: 4.25, 3: 4.67, 4: 4.944, 5: 5.129}


def die_and_cards_section(out: Path) -> str:
    """Seed 002's die game (values and rule per rolls left) and card game (E(26, 26) and the
    thresholds beta_k, next to the seed's), with a plot of the thresholds."""
    from baselines.stopping import (
        CARDS,
        DIE,
        die_stop_faces,
        effective_thresholds,
        red_black_stop_leads,
    )

    rows = [
        [k, f"{baselines.solve(DIE, rolls=k).value:.6f}", seed]
        for k, seed in SEED_DIE_VALUES.items()
    ]
    die = markdown_table(["rolls permitted", "optimal value", "seed 002"], rows)
    rule = die_stop_faces(5)
    rule_rows = [[left, f"{face} or more" if face else "never"] for left, face in rule.items()]
    die_rule = markdown_table(["rolls left after this one", "stop on a face of"], rule_rows)
    cards = baselines.solve(CARDS)
    leads = red_black_stop_leads()
    seed = effective_thresholds(SEED_RED_BLACK_THRESHOLDS, len(leads))
    differ = [k for k, (ours, theirs) in enumerate(zip(leads, seed, strict=True), 1)
              if (ours if ours is not None else -1) != theirs]  # fmt: skip
    printed = baselines.evaluate(heuristic(CARDS, "seed-thresholds"), CARDS)
    k = np.arange(1, len(leads) + 1)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ours = np.array([np.nan if v is None else v for v in leads], dtype=float)
    ax.step(k, ours, where="mid", label="exact: least lead at which stopping is optimal")
    theirs = np.where(seed < 0, np.nan, seed).astype(float)
    ax.plot(k, theirs, "o", ms=3.5, mfc="none", label="seed 002's beta_k, read as a least lead")
    ax.set(
        xlabel="cards drawn k",
        ylabel="red minus black drawn",
        title="Red and black cards (red=26, black=26): stop once the lead reaches the line",
    )
    _save_integer_plot(fig, ax, out / "red_black_thresholds.png")
    return (
        f"The die rolled at most k times (fair d6):\n\n{die}\n\nThe optimal rule with five "
        f"rolls, by the rolls still permitted after the face showing:\n\n{die_rule}\n\n"
        f"Red and black cards: E(26, 26) = {cards.value:.6f} (seed 002: 2.6245). After k "
        f"draws the lead has the parity of k, so the seed's 'stop once the lead is beta_k or "
        f"more' is a least lead of beta_k or beta_k + 1. Read so, the seed's thresholds are the "
        f"exact ones at every k but {', '.join(map(str, differ)) or 'none'} (there the exact "
        f"least lead is {', '.join(str(leads[d - 1]) for d in differ)}; the printed "
        f"value is likely garbled). Played as printed they win {printed.value:.6f}, "
        f"{printed.gap:.2e} below the optimum.\n\n"
        f"![red and black thresholds](images/red_black_thresholds.png)"
    )


# Seed 002: f_N(0) for horizons N, and beta_n of the unbounded game for some n <= 185.
SEED_COIN_VALUES = {
    25: "0.7679", 50: "0.7780", 100: "0.7839", 1_000: "0.7912", 2_500: "0.79206",
    10_000: "0.79263", 100_000: "0.79289", 1_000_000: "0.79294",
}  # fmt: skip
SEED_COIN_THRESHOLDS = {
    1: 1, 2: 2, 3: 3, 4: 2, 5: 3, 8: 2, 10: 4, 15: 3, 25: 5, 50: 6, 75: 7, 99: 9, 100: 8,
}  # fmt: skip


def chow_robbins_section(out: Path) -> str:
    """Seed 002's Chow–Robbins numbers by the banded solver: f_N(0) up to N = 10^6, the
    thresholds beta_n for n <= 185 at the longest horizon, and the heads-exceed-tails rule."""
    from baselines.chow_robbins import banded_backward, heads_exceed_tails

    rows, longest = [], None
    for horizon, printed in SEED_COIN_VALUES.items():
        result = banded_backward(horizon)
        digits = len(printed.split(".")[1])
        rows.append(
            [f"{horizon:,}", f"{result.value:.8f}", f"{result.value:.{digits}f}", printed,
             f"{result.band:,}", f"{result.seconds:.2f} s"]
        )  # fmt: skip
        longest = result
    values = markdown_table(
        ["horizon N", "f_N(0), banded solver", "rounded as the seed", "seed 002", "band D",
         "time"],
        rows,
    )  # fmt: skip
    beta = longest.thresholds
    quoted = [[n, int(beta[n]), seed] for n, seed in SEED_COIN_THRESHOLDS.items()]
    differ = [str(n) for n, ours, seed in quoted if ours != seed]
    threshold_table = markdown_table(
        ["n", f"beta_n at N = {longest.horizon:,}", "seed 002"], quoted
    )
    rule_rows = []
    for horizon in (100, 10_000, 1_000_000):
        rule = heads_exceed_tails(horizon)
        rule_rows.append([f"{horizon:,}", f"{rule.value:.7f}", f"{np.pi / 4 - rule.value:.2e}"])
    rule_table = markdown_table(
        ["horizon N", "stop once heads exceed tails", "pi/4 minus it"], rule_rows
    )
    n = np.arange(1, 186)
    fig, ax = plt.subplots(figsize=(7, 3.8))
    # Dots, not steps: beta_n alternates with the parity of n.
    ax.plot(n, beta[1:186], ".", ms=3, label=f"exact beta_n, horizon {longest.horizon:,}")
    ax.plot(list(SEED_COIN_THRESHOLDS), list(SEED_COIN_THRESHOLDS.values()), "o", mfc="none",
            ms=8, label="values seed 002 quotes")  # fmt: skip
    ax.plot(n, 0.83992 * np.sqrt(n), "--", lw=1, label="0.83992 sqrt(n) (the limit, seed 002)")
    ax.set(
        xlabel="tosses n",
        ylabel="heads minus tails",
        title="Chow–Robbins: stop after n tosses once heads minus tails reaches beta_n",
    )
    _save_integer_plot(fig, ax, out / "chow_robbins_thresholds.png")
    return (
        f"f_N(0), the value with at most N tosses, by the banded solver (`baselines/"
        f"chow_robbins.py`: only heads minus tails within the band D is kept, which changes "
        f"the value by less than {longest.eps:g}):\n\n{values}\n\nThe thresholds the seed "
        f"quotes (of the unbounded game, after Medina and Zeilberger), next to the horizon "
        f"{longest.horizon:,} game's; they differ at "
        f"{', '.join(differ) if differ else 'no n'}:\n\n{threshold_table}\n\n"
        f"The seed's heuristic, stop as soon as heads exceed tails, is worth pi/4 = "
        f"{np.pi / 4:.7f} in the unbounded game; exactly, with a horizon:\n\n{rule_table}"
        f"\n\n![Chow–Robbins thresholds](images/chow_robbins_thresholds.png)"
    )


def gap_decomposition_section(out: Path) -> str:
    """Where a heuristic loses its gap (`Evaluation.losses`): Pig by score pair, sum-avoid by
    sum."""
    goal = 100
    pig = baselines.evaluate("hold-at-20", PIG, goal=goal, opponent="hold-at-20")
    tables = baselines.enumerated(PIG, goal=goal, opponent="hold-at-20")[0]
    obs = tables.observation_array
    grid = np.zeros((goal + 1, goal + 1))
    np.add.at(grid, (obs[:, 0], obs[:, 1]), pig.losses)
    grid = grid[:goal, :goal]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), gridspec_kw={"width_ratios": [1.1, 1]})
    image = axes[0].imshow(
        grid.T, origin="lower", cmap="magma_r", aspect="equal", interpolation="nearest"
    )
    fig.colorbar(image, ax=axes[0], label="win probability lost there (summed over turn totals)")
    axes[0].set(
        xlabel="own score", ylabel="opponent score",
        title=f"Pig-v0 (goal={goal}, opponent=hold-at-20): where hold-at-20 loses\n"
        f"its gap of {pig.gap:.4f} to the best response (the cells sum to it)",
    )  # fmt: skip
    axes[0].title.set_fontsize(9)
    sum_avoid = baselines.evaluate("stop-at-25", "dice_envs/SumAvoid-v0", N=10)
    sums_tables = baselines.enumerated("dice_envs/SumAvoid-v0", N=10)[0]
    sums = sums_tables.observation_array[:, 0]
    axes[1].bar(sums, sum_avoid.losses, width=0.8, color="tab:red")
    axes[1].set(
        xlabel="sum so far", ylabel="expected payoff lost there",
        title=f"SumAvoid-v0 (N=10, sides=6): where stop-at-25 loses\n"
        f"its gap of {sum_avoid.gap:.4f} to the optimum (the bars sum to it)",
    )  # fmt: skip
    axes[1].title.set_fontsize(9)
    visited = sums[sum_avoid.visits > 1e-12]
    axes[1].set_xlim(-0.5, visited.max() + 0.5)  # the sums stop-at-25 ever plays from
    axes[1].xaxis.get_major_locator().set_params(integer=True)  # sums are whole numbers
    fig.tight_layout()
    fig.savefig(out / "gap_decomposition.png", dpi=100)
    plt.close(fig)
    own, other = np.unravel_index(int(np.argmax(grid)), grid.shape)
    late = grid[:, 80:].sum() / pig.gap
    worst = int(sums[int(np.argmax(sum_avoid.losses))])
    return (
        "`Evaluation.losses`: per state, the policy's expected visits times what its action "
        "gives up there (V* - Q* of the action); they sum to the gap (the performance "
        "difference lemma; a test holds it to 1e-9 for every game).\n\n"
        "![Where the gap is lost](images/gap_decomposition.png)\n\n"
        f"Against hold-at-20, holding at 20 loses most at own score {own}, opponent {other}; "
        f"{100 * late:.1f} % of its gap is lost once the opponent has 80 or more. Stop-at-25 "
        f"loses most at sum {worst}."
    )


EXPLOITABILITY_CASES = (
    ("dice_envs/Pig-v0", {"goal": 100}, ("hold-at-20", "hold-at-25", "keep-pace", "random")),
    ("dice_envs/TwoDicePig-v0", {"goal": 50}, ("hold-at-20", "tijms", "random")),
    ("dice_envs/Hog-v0", {"goal": 50}, ("five-dice", "dice-4", "random")),
    (SIMULTANEOUS_HOG, {"goal": 100}, ("five-dice", "dice-6", "random")),
)


ALWAYS_ROLL_GOALS = (20, 30, 38, 39, 40, 50, 100)


def _exploitability_cell(value: float) -> str:
    # Below a millionth the digits are round-off; show it as it is.
    return f"{value:.6f}" if abs(value) >= 5e-7 else f"{value:.1e}"


def exploitability_section() -> str:
    """The named policies of every two-player game, scored by exact exploitability."""
    rows = []
    for env_id, kwargs, names in EXPLOITABILITY_CASES:
        for name in (*names, "optimal"):
            score = baselines.exploitability(name, env_id, **kwargs)
            rows.append(
                [
                    f"`{env_id}` ({', '.join(f'{k}={v}' for k, v in kwargs.items())})",
                    name,
                    _exploitability_cell(score.value),
                    f"{score.best_response_value:.6f}",
                    f"{score.seconds:.2f}",
                ]
            )
    # Always rolling (until the goal) is optimal in small Pig games: where does that stop?
    always = []
    for goal in ALWAYS_ROLL_GOALS:
        table = np.ones((goal + 1, goal + 1, goal), dtype=np.int64)
        score = baselines.exploitability(table, "dice_envs/Pig-v0", goal=goal)
        always.append(
            [f"`dice_envs/Pig-v0` (goal={goal})", "always roll", _exploitability_cell(score.value)]
        )
    return (
        "`baselines.exploitability(policy, env_id, **kwargs)`: the best response's win "
        "probability against the policy (playing either seat, a coin flip for the first move; "
        "Simultaneous Hog has none) minus 1/2. Time: the whole call, the best-response solve "
        'included (the two-player optimum, for "optimal", is solved once per game and '
        "kept).\n\n"
        + markdown_table(
            ["game", "policy", "exploitability", "best response wins", "seconds"], rows
        )
        + "\n\nIn small Pig games always rolling until the goal is itself optimal (its "
        "exploitability is 0 up to round-off), so a self-play agent there shows nothing; the "
        "self-play configs use a goal where it is not:\n\n"
        + markdown_table(["game", "policy", "exploitability"], always)
    )


D20_IMAGES = (
    "![D20 rounds: the optimal policy](images/d20_policy.png)\n\n"
    "![D20 rounds: seed 001's strategies against the optimum](images/d20_strategies.png)"
)


def _never_optimal(solution) -> list[str]:
    mask = optimal_action_mask(solution.q, solution.mdp.legal)
    names = solution.mdp.model.action_names
    return [
        names[a].split()[-1]
        for a in range(2, len(names))
        if not (mask[:, a] & ~mask[:, ROLL]).any()
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("docs"), help="where results go")
    args = parser.parse_args(argv)
    images = args.out / "images"
    images.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    overview = [
        "## Optimal values at the default arguments\n\n"
        "Time: the solve (a generic solve's includes building the tables; a specialised one's"
        " does not, and its tables are built only to measure the residual, up to "
        f"{baselines.TABLE_ROWS_LIMIT:,} outcome rows; Simultaneous Hog's would have more, so"
        " it has neither the generic solve nor the residual here).\n\n" + optimum_table(),
        "## The source documents' heuristics, evaluated exactly\n\n" + heuristic_table(),
    ]
    plot_d20(images)
    pig_family = [
        "dice_envs/PigSolitaire-v0", "dice_envs/TwoDicePig-v0", "dice_envs/TwoDicePigSolitaire-v0",
        "dice_envs/Hog-v0", "dice_envs/HogSolitaire-v0",
    ]  # fmt: skip
    # (heading, text, the ids whose pages show it)
    per_game = [
        ("Sum-avoid thresholds", plot_sum_avoid(images), [SUM_AVOID]),
        ("D20 rounds: the optimal policy", D20_IMAGES, [D20]),
        ("Pig: win probabilities", plot_pig(images), [PIG]),
        ("The Pig family: alone and raced", pig_family_section(images), [PIG, *pig_family]),
        (
            "Ten Thousand: restricted games (the paper's Table 4)",
            ten_thousand_section(images, args.out),
            [TEN_THOUSAND],
        ),
        (
            "Tijms's die and card games",
            die_and_cards_section(images),
            ["dice_envs/DieStopping-v0", "dice_envs/RedBlackCards-v0"],
        ),
        ("Chow–Robbins", chow_robbins_section(images), ["dice_envs/ChowRobbins-v0"]),
        (
            "Simultaneous Hog: the television game's equilibrium",
            simultaneous_hog_section(images),
            [SIMULTANEOUS_HOG],
        ),
    ]
    closing = [
        "## Two players: how exploitable are the named policies?\n\n" + exploitability_section(),
        "## Where a policy loses its gap\n\n" + gap_decomposition_section(images),
    ]
    sections = overview + [f"## {h}\n\n{text}" for h, text, _ in per_game] + closing
    report = "\n\n".join(sections) + "\n"
    print(report)
    (args.out / "demo_results.md").write_text(report)
    for env_id in registry_ids():
        shown = [f"## {h}\n\n{text}" for h, text, ids in per_game if env_id in ids]
        write_page_section(env_id, "game", game_page(env_id, shown), args.out)
    if args.out == Path("docs"):
        replace_section("games", games_table())
        # The README keeps the overview; each game's own sections are on its page. The README
        # sits one folder up from the report: its image links need docs/.
        pages = "\n".join(
            f"- [{env_id.split('/')[-1]}]({page_path(env_id, args.out)}): {GAMES[env_id].summary}"
            for env_id in registry_ids()
        )
        readme = "\n\n".join(
            overview
            + [f"## Each game's page\n\nRules, spaces, optimum, heuristics, pictures and "
               f"training results, one page per game:\n\n{pages}"]
            + closing
        ).replace("](images/", f"]({args.out}/images/")  # fmt: skip
        replace_section("demo", readme.replace("\n## ", "\n### ").replace("## ", "### ", 1))
    print(
        f"plots in {images}/, tables in {args.out / 'demo_results.md'} "
        f"({time.perf_counter() - start:.1f} s)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

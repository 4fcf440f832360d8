"""The single-agent games' figures: sum-avoid's thresholds and D20 rounds' policy."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

import baselines
from dice_envs import GAMES, make_model
from dice_envs.games.sum_avoid import stop_at
from dice_envs.policies import named_policy
from docs.tools.common import (
    D20,
    SUM_AVOID,
)
from docs.tools.sum_avoid_rules import remainder_thresholds, stop_thresholds


def _sum_avoid_policy_figure(solution, model, path: Path) -> None:
    """The optimal value and action at every sum that is not bust."""
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
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_sum_avoid(out: Path) -> str:
    """Sum-avoid's optimal policy, its thresholds per remainder class, and single-threshold
    rules against the optimum; return the section's text."""
    solution = baselines.solve(SUM_AVOID)
    model = make_model(SUM_AVOID)
    _sum_avoid_policy_figure(solution, model, out / "sum_avoid_policy.png")
    # The write-up's thresholds per remainder class, for several N; stop-at-K rules against them.
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
    """D20 rounds' optimal policy, and the named strategies against the optimum by rounds."""
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
            baselines.evaluate(named_policy(D20, name, rounds=int(r)), D20, rounds=int(r)).value
            for r in counts
        ]
        ax.plot(counts, values, label=name)
    ax.plot(counts, optimum, "k--", label="optimal")
    ax.set(
        xlabel="number of rounds",
        ylabel="exact expected money",
        title="D20Rounds-v0 (sides=20): the 2025 blog post's strategies, evaluated exactly",
    )
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "d20_strategies.png", dpi=110)
    plt.close(fig)


D20_IMAGES = (
    "![D20 rounds: the optimal policy](images/d20_policy.png)\n\n"
    "![D20 rounds: the blog post's strategies against the optimum](images/d20_strategies.png)"
)

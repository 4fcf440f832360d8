"""The training report's figures: gap and agreement curves, where the agents lose their gap,
and what Monte Carlo evaluation would have needed to see it. Every figure is drawn from the
saved runs (curves, final actions) and the game's exact model only."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import PowerNorm, SymLogNorm
from matplotlib.ticker import FuncFormatter, MaxNLocator, StrMethodFormatter, SymmetricalLogLocator

# The relative-gap axis is symlog: linear below this, so that a gap of exactly 0 is drawn at 0.
GAP_LINEAR_BELOW = 1e-4
MARKERS = "osD^vP*X"
REFERENCE_STYLES = [
    (":", "0.3"),
    ("--", "tab:brown"),
    ("-.", "tab:purple"),
    ((0, (5, 2, 1, 2)), "tab:olive"),
    ((0, (1, 1)), "tab:gray"),
    ((0, (3, 1)), "tab:pink"),
]
Z95 = 1.959964  # two-sided 95 % normal quantile


def steps_formatter() -> FuncFormatter:
    return FuncFormatter(
        lambda x, _: f"{x / 1e6:g}M" if x >= 1e6 else f"{x / 1e3:g}k" if x else "0"
    )


class _SymlogTicksAwayFromZero(SymmetricalLogLocator):
    """Symlog major ticks without those strictly inside the linear band around 0: at
    linscale 0.5 a decade tick below the threshold sits a few points from the 0 tick and
    their labels overprint."""

    def __init__(self, linthresh: float, base: float = 10.0):
        super().__init__(linthresh=linthresh, base=base)
        self.linear_below = linthresh

    def tick_values(self, vmin: float, vmax: float) -> np.ndarray:
        ticks = np.asarray(super().tick_values(vmin, vmax))
        return ticks[(ticks == 0) | (np.abs(ticks) >= self.linear_below * (1 - 1e-9))]


def _curves(results: list[dict], key: str) -> tuple[np.ndarray, np.ndarray]:
    """Steps and a (seeds, points) array of `key`, cut to the shortest curve."""
    length = min(len(r["curve"]) for r in results)
    steps = np.array([p["steps"] for p in results[0]["curve"][:length]])
    return steps, np.array([[p[key] for p in r["curve"][:length]] for r in results])


def _median_and_band(ax, steps: np.ndarray, values: np.ndarray, marker: str, label: str):
    """The median over seeds (rows of `values`) as a line, its min..max as a band; the line."""
    line = ax.plot(
        steps, np.median(values, axis=0), marker=marker, ms=4,
        markevery=max(1, len(steps) // 12), label=f"{label}: median of {len(values)} seeds",
    )[0]  # fmt: skip
    ax.fill_between(
        steps, values.min(axis=0), values.max(axis=0), alpha=0.15, color=line.get_color()
    )
    return line


def plot_training(
    title: str,
    budget: str,
    series: dict[str, list[dict]],
    references: dict[str, tuple[float, float]],
    path: Path,
) -> None:
    """Relative gap (symlog, 0 drawn at 0) and agreement against steps: per agent the median
    over seeds with a min..max band, its stochastic policy dashed where it has one, and the
    game's heuristics as horizontal reference lines."""
    fig, (gap_ax, agree_ax) = plt.subplots(1, 2, figsize=(12, 4.8))
    for marker, (label, results) in zip(MARKERS, series.items(), strict=False):
        for key, ax, scale in (("relative_gap", gap_ax, 100.0), ("agreement", agree_ax, 100.0)):
            steps, values = _curves(results, key)
            values = np.maximum(values * scale, 0.0)  # round-off gaps of -1e-16 are 0
            every = max(1, len(steps) // 12)
            line = _median_and_band(ax, steps, values, marker, f"{label} (greedy)")
            stochastic = f"stochastic_{key}"
            if stochastic in results[0]["curve"][-1]:
                steps, values = _curves(results, stochastic)
                ax.plot(
                    steps, np.maximum(np.median(values * scale, axis=0), 0.0), ls="--",
                    marker=marker, ms=4, mfc="none", markevery=every, color=line.get_color(),
                    label=f"{label} (stochastic): median",
                )  # fmt: skip
    for (name, (gap, agreement)), (ls, color) in zip(
        references.items(), REFERENCE_STYLES, strict=False
    ):
        gap_ax.axhline(max(100 * gap, 0.0), ls=ls, color=color, lw=1.2, label=name)
        agree_ax.axhline(100 * agreement, ls=ls, color=color, lw=1.2, label=name)
    gap_ax.set_yscale("symlog", linthresh=100 * GAP_LINEAR_BELOW, linscale=0.5)
    highest = max([100 * gap for gap, _ in references.values()] + [1e-3]
                  + [float(np.max(line.get_ydata())) for line in gap_ax.get_lines()])  # fmt: skip
    gap_ax.set_ylim(0.0, 2 * highest)  # room above the highest curve on a log scale
    gap_ax.set(xlabel="environment steps", ylabel="relative gap to the optimum (%, exact)")
    gap_ax.set_title(
        f"relative gap: symlog axis, linear below {100 * GAP_LINEAR_BELOW:g} % (0 = optimal)",
        fontsize=9,
    )
    agree_ax.set(xlabel="environment steps", ylabel="agreement with optimal actions (%)")
    agree_ax.set_title(
        "agreement, weighted by how often optimal play visits each state", fontsize=9
    )
    agree_ax.set_ylim(top=100.5)
    lengths = [max(p["steps"] for p in r["curve"]) for rs in series.values() for r in rs]
    firsts = [r["curve"][1]["steps"] for rs in series.values() for r in rs if len(r["curve"]) > 1]
    # Budgets ten times apart (PPO and Q-learning) share a symlog step axis, linear up to the
    # first evaluation interval, so that the shorter curve is not squeezed against 0.
    wide = bool(firsts) and max(lengths) > 10 * min(lengths)
    for ax in (gap_ax, agree_ax):
        if wide:
            ax.set_xscale("symlog", linthresh=min(firsts))
            ax.set_xlim(left=0)
        ax.xaxis.set_major_formatter(steps_formatter())
        ax.grid(alpha=0.3)
    if wide:
        agree_ax.set_xlabel(f"environment steps (symlog axis, linear below {min(firsts):,})")
        gap_ax.set_xlabel(f"environment steps (symlog axis, linear below {min(firsts):,})")
    handles, labels = gap_ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.suptitle(f"{title}, {budget} budget (band: min..max over seeds)", fontsize=10)
    rows = (len(labels) + 1) // 2
    fig.tight_layout(rect=(0, 0.035 * rows + 0.01, 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_value_errors(title: str, budget: str, series: dict[str, list[dict]], path: Path) -> None:
    """The learners' own value estimates against the exact ones over training: the
    visit-weighted mean absolute error (left) and mean signed error (right: above 0 the
    estimates are optimistic where the agent goes), per agent the median over seeds with a
    min..max band; both on symlog axes, in the game's reward units."""
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    for marker, (label, results) in zip(MARKERS, series.items(), strict=False):
        for key, ax in (("value_abs_error", axes[0]), ("value_error", axes[1])):
            steps, values = _curves(results, key)
            _median_and_band(ax, steps, values, marker, label)
    for ax, what, heading in (
        (axes[0], "mean |estimate - exact value|", "mean absolute error"),
        (axes[1], "mean (estimate - exact value)", "mean error (> 0: optimistic)"),
    ):
        ys = np.concatenate([np.abs(line.get_ydata()) for line in ax.get_lines()] + [[1e-12]])
        linear = max(float(np.max(ys)) * 1e-3, 1e-12)
        ax.set_yscale("symlog", linthresh=linear, linscale=0.5)
        ax.yaxis.set_major_locator(_SymlogTicksAwayFromZero(linear))
        ax.set(xlabel="environment steps", ylabel=f"{what}\n(the game's reward units)")
        ax.set_title(f"{heading}, visit-weighted (symlog, linear below {linear:.2g})", fontsize=9)
        ax.xaxis.set_major_formatter(steps_formatter())
        ax.grid(alpha=0.3)
    axes[1].axhline(0.0, color="black", lw=0.8)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False)
    fig.suptitle(
        f"{title}, {budget} budget: the learner's own values against the exact ones\n"
        "(Q-learning: Q against Q*; PPO: critic against its policy's value)",
        fontsize=10,
    )
    rows = (len(labels) + 1) // 2
    fig.tight_layout(rect=(0, 0.035 * rows + 0.01, 1, 1))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _integer_axis(axis) -> None:
    axis.set_major_locator(MaxNLocator(integer=True))


# A loss map summing to no more than this is drawn as "no value lost": round-off of the
# solves (about 1e-16 times the game's values, which reach a few thousand), not a choice.
ROUND_OFF_LOSS = 1e-9


def plot_losses(
    title: str,
    names: tuple[str, ...],
    observations: np.ndarray,
    panels: dict[str, np.ndarray],
    gaps: dict[str, float],
    path: Path,
    labels: list[str] | None = None,
) -> None:
    """Where each agent loses its gap: per panel, the losses (mean over seeds) summed onto the
    first two observation components as a heat map with a colour bar, onto the only one as
    bars, or onto `labels` (one per value of component 1, as Ten Thousand's configurations)
    as the largest bars."""
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.8), squeeze=False)
    for ax, (label, losses) in zip(axes[0], panels.items(), strict=True):
        heading = f"{label}: gap {gaps[label]:.4g} (the cells or bars sum to it)"
        # The value given up in a state is >= 0; below 0 it is the solve's round-off.
        losses = np.clip(np.asarray(losses, dtype=float), 0.0, None)
        if losses.sum() <= ROUND_OFF_LOSS:
            ax.set_title(f"{label}: gap 0 (optimal, up to round-off)", fontsize=9)
            ax.text(0.5, 0.5, "no value lost in any state", ha="center", va="center",
                    transform=ax.transAxes)  # fmt: skip
            ax.set(xlabel=names[0], ylabel=names[1] if len(names) > 1 else "value lost there",
                   xticks=[], yticks=[])  # fmt: skip
            continue
        if labels is not None:
            by_label = np.bincount(observations[:, 1], losses, minlength=len(labels))
            top = [i for i in np.argsort(by_label)[::-1][:12] if by_label[i] > 0]
            heights = [*by_label[top], by_label.sum() - by_label[top].sum()]
            shown = [labels[i] for i in top] + [f"the other {len(labels) - len(top)}"]
            ax.barh(range(len(heights))[::-1], heights, color="tab:red")
            ax.set_yticks(range(len(heights))[::-1], shown, fontsize=7)
            ax.set(xlabel="value lost there", ylabel=f"{names[1]} of the last roll")
        elif observations.shape[1] == 1:
            ax.bar(observations[:, 0], losses, width=0.8, color="tab:red")
            ax.set(xlabel=names[0], ylabel="value lost there")
            _integer_axis(ax.xaxis)
        else:
            size = observations[:, :2].max(axis=0) + 1
            grid = np.zeros(size)
            np.add.at(grid, (observations[:, 0], observations[:, 1]), losses)
            # A square-root colour scale: a few cells hold much of the gap, and the rest,
            # spread thin, would vanish on a linear one.
            image = ax.imshow(
                grid.T, origin="lower", cmap="magma_r", aspect="auto", interpolation="nearest",
                norm=PowerNorm(0.5, vmin=0.0),
            )  # fmt: skip
            rest = f", summed over {', '.join(names[2:])}" if len(names) > 2 else ""
            scale = textwrap.fill(f"(square-root scale{rest})", 36)
            bar = fig.colorbar(image, ax=ax, label=f"value lost there\n{scale}")
            # Each tick its own number: a shared "1e-5" multiplier sits on the panel's title.
            bar.ax.yaxis.set_major_formatter(StrMethodFormatter("{x:.2g}"))
            ax.set(xlabel=names[0], ylabel=names[1])
            _integer_axis(ax.xaxis)
            _integer_axis(ax.yaxis)
        ax.set_title(heading, fontsize=9)
    fig.suptitle(textwrap.fill(title, 55 * len(panels)), fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.95))  # the title above the panels' own
    fig.savefig(path, dpi=100)
    plt.close(fig)


def collapse_errors(observations: np.ndarray, errors: np.ndarray) -> np.ndarray:
    """Per-state errors onto the first two observation components (a grid of their sizes;
    of the only one's, for one component): the state's own error where the two are the whole
    observation, else the mean over the states that differ only in the other components.
    NaN where no state is."""
    errors = np.asarray(errors, dtype=float)
    width = min(observations.shape[1], 2)
    size = tuple(int(n) for n in observations[:, :width].max(axis=0) + 1)
    cells = tuple(observations[:, :width].T)
    sums, counts = np.zeros(size), np.zeros(size)
    np.add.at(sums, cells, errors)
    np.add.at(counts, cells, 1.0)
    grid = np.full(size, np.nan)
    np.divide(sums, counts, out=grid, where=counts > 0)
    return grid


def _symmetric_ticks(largest: float) -> list[float]:
    """Ticks of a symmetric log scale up to `largest`, linear below a hundredth of it."""
    return [-largest, -largest / 10, -largest / 100, 0.0, largest / 100, largest / 10, largest]


def plot_error_maps(
    title: str,
    names: tuple[str, ...],
    observations: np.ndarray,
    panels: dict[str, np.ndarray],
    headings: dict[str, str],
    path: Path,
) -> None:
    """Where each learner's own value estimate is wrong at the end of training: per panel
    (label -> the error per state, in the tables' state order) the errors on the first two
    observation components as a heat map (`collapse_errors`), or on the only one as bars;
    a diverging colour map centred on 0 (red: the estimate is too high, blue: too low) on a
    symmetric log scale, linear below a hundredth of the largest error, in the game's reward
    units."""
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.8), squeeze=False)
    for ax, (label, errors) in zip(axes[0], panels.items(), strict=True):
        grid = collapse_errors(observations, errors)
        largest = float(np.nanmax(np.abs(grid), initial=0.0)) or 1.0
        norm = SymLogNorm(linthresh=largest / 100, linscale=0.5, vmin=-largest, vmax=largest)
        ticks = _symmetric_ticks(largest)
        units = "estimate - exact value (the game's units)"
        if grid.ndim == 1:
            shown = ~np.isnan(grid)
            colours = plt.get_cmap("RdBu_r")(norm(grid[shown]))
            ax.bar(np.flatnonzero(shown), grid[shown], width=0.8, color=colours)
            ax.axhline(0.0, color="black", lw=0.8)
            ax.set_yscale("symlog", linthresh=largest / 100, linscale=0.5)
            ax.set_yticks(ticks, [f"{t:.2g}" for t in ticks])
            ax.set_ylim(-largest * 1.5, largest * 1.5)
            ax.set(xlabel=names[0], ylabel=f"{units}\n(symlog axis)")
            _integer_axis(ax.xaxis)
        else:
            image = ax.imshow(
                grid.T, origin="lower", cmap="RdBu_r", norm=norm, aspect="auto",
                interpolation="nearest",
            )  # fmt: skip
            ax.set_facecolor("0.85")  # cells of no state: grey
            rest = f"; mean over {', '.join(names[2:])}" if len(names) > 2 else ""
            scale = textwrap.fill(f"(symlog scale{rest})", 44)
            bar = fig.colorbar(image, ax=ax, label=f"{units}\n{scale}")
            bar.set_ticks(ticks, labels=[f"{t:.2g}" for t in ticks])
            ax.set(xlabel=names[0], ylabel=names[1])
            _integer_axis(ax.xaxis)
            _integer_axis(ax.yaxis)
        ax.set_title(headings[label], fontsize=9)
    fig.suptitle(textwrap.fill(title, 55 * len(panels)), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# A relative gap below this is 0 up to round-off: the optimum's own solve gives +-1e-16, but a
# policy that differs from it only where actions tie is solved by another factorisation, and
# on Two-Dice Pig (100k states) its gap came out at -3e-12 (relative).
ZERO_RELATIVE_GAP = 1e-10


def episodes_to_resolve(gap: float, relative_gap: float, return_std: float) -> float:
    """Episodes a Monte Carlo estimate needs for its 95 % interval's half-width to equal the
    gap (so that the gap is seen at all): (1.96 sd / gap)^2; infinite for a gap of 0."""
    if relative_gap <= ZERO_RELATIVE_GAP:
        return float("inf")
    return (Z95 * return_std / gap) ** 2


def plot_monte_carlo(
    example: tuple[str, dict[str, Any], list[dict]],
    needed: list[tuple[str, float, int]],
    budget: str,
    path: Path,
) -> None:
    """Left: one run's exact value against its Monte Carlo estimates (95 % intervals) at every
    evaluation point. Right: per agent, the episodes a Monte Carlo estimate would need to see
    its final gap, against the episodes each evaluation point played."""
    title, config, results = example
    height = max(4.8, 0.22 * len(needed) + 1.5)
    fig, (left, right) = plt.subplots(
        1, 2, figsize=(13, height), gridspec_kw={"width_ratios": [1, 1.2]}
    )
    run = results[0]
    steps = np.array([p["steps"] for p in run["curve"]])
    exact = np.array([p["value"] for p in run["curve"]])
    mc = np.array([p["mc_mean"] for p in run["curve"]])
    half = Z95 * np.array([p["mc_stderr"] for p in run["curve"]])
    left.plot(steps, exact, marker="o", ms=4, label="exact value (sparse linear solve)")
    left.errorbar(
        steps, mc, yerr=half, fmt="s", ms=3, capsize=2, color="tab:orange",
        label=f"Monte Carlo, {config['evaluation']['episodes']} episodes, 95 % interval",
    )  # fmt: skip
    left.axhline(run["optimal_value"], color="k", ls="--", lw=1, label="optimum")
    left.xaxis.set_major_formatter(steps_formatter())
    left.set(xlabel="environment steps", ylabel="value of the greedy policy")
    left.set_title(f"{title}: {run['agent']}, seed {run['seed']}", fontsize=9)
    left.legend(fontsize=8)
    left.grid(alpha=0.3)
    finite = [(label, n, played) for label, n, played in needed if np.isfinite(n)]
    ys = np.arange(len(finite))[::-1]
    right.barh(ys, [n for _, n, _ in finite], color="tab:blue", label="episodes needed")
    right.scatter(
        [played for _, _, played in finite], ys, marker="|", s=120, color="tab:orange",
        label="episodes played per evaluation point", zorder=3,
    )  # fmt: skip
    right.set_yticks(ys, [label for label, _, _ in finite], fontsize=7)
    if finite:  # a log axis needs something on it
        right.set_xscale("log")
    right.set(xlabel="episodes (log axis)")
    never = [label for label, n, _ in needed if not np.isfinite(n)]
    right.set_title(
        "episodes for a 95 % Monte Carlo interval as narrow as the final gap\n"
        "(median seed; sd of a return estimated from its episodes)",
        fontsize=8,
    )
    if never:
        note = textwrap.fill(
            "Not drawn, the median seed exactly optimal (gap 0): " + "; ".join(never), 70
        )
        right.set_xlabel(f"episodes (log axis)\n\n{note}", fontsize=8)
    right.grid(alpha=0.3, axis="x")
    fig.suptitle(f"Monte Carlo against exact evaluation, {budget} budget", fontsize=10)
    # Under the right panel, outside it: inside, it covered the end of a bar.
    fig.tight_layout(rect=(0, 0.4 / height, 1, 1))
    box = right.get_position()
    handles, labels = right.get_legend_handles_labels()
    fig.legend(
        handles, labels, fontsize=8, ncol=2, loc="lower center", frameon=False,
        bbox_to_anchor=(box.x0 + box.width / 2, 0), bbox_transform=fig.transFigure,
    )  # fmt: skip
    fig.savefig(path, dpi=100)
    plt.close(fig)

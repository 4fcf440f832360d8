"""Tijms's die and card games, and Chow–Robbins: the published numbers beside the exact ones.

Source: H. Tijms, "Stochastic games and dynamic programming", Asia Pacific Mathematics
Newsletter (2012).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import baselines
from dice_envs.games.stopping import TIJMS_RED_BLACK_THRESHOLDS
from dice_envs.policies import named_policy
from docs.tools.common import (
    save_integer_plot,
)
from docs.tools.game_pages import (
    markdown_table,
)

# Tijms (2012)'s published values: the die rolled at most k times, k = 1..5.
SEED_DIE_VALUES = {1: 3.5, 2: 4.25, 3: 4.67, 4: 4.944, 5: 5.129}


def die_and_cards_section(out: Path) -> str:
    """Tijms's die game (values and rule per rolls left) and card game (E(26, 26) and the
    thresholds beta_k, next to his), with a plot of the thresholds."""
    from docs.tools.stopping_rules import (
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
    die = markdown_table(["rolls permitted", "optimal value", "Tijms (2012)"], rows)
    rule = die_stop_faces(5)
    rule_rows = [[left, f"{face} or more" if face else "never"] for left, face in rule.items()]
    die_rule = markdown_table(["rolls left after this one", "stop on a face of"], rule_rows)
    cards = baselines.solve(CARDS)
    leads = red_black_stop_leads()
    seed = effective_thresholds(TIJMS_RED_BLACK_THRESHOLDS, len(leads))
    differ = [k for k, (ours, theirs) in enumerate(zip(leads, seed, strict=True), 1)
              if (ours if ours is not None else -1) != theirs]  # fmt: skip
    printed = baselines.evaluate(named_policy(CARDS, "tijms-thresholds"), CARDS)
    k = np.arange(1, len(leads) + 1)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    ours = np.array([np.nan if v is None else v for v in leads], dtype=float)
    ax.step(k, ours, where="mid", label="exact: least lead at which stopping is optimal")
    theirs = np.where(seed < 0, np.nan, seed).astype(float)
    ax.plot(k, theirs, "o", ms=3.5, mfc="none", label="Tijms's beta_k, read as a least lead")
    ax.set(
        xlabel="cards drawn k",
        ylabel="red minus black drawn",
        title="Red and black cards (red=26, black=26): stop once the lead reaches the line",
    )
    save_integer_plot(fig, ax, out / "red_black_thresholds.png")
    return (
        f"The die rolled at most k times (fair d6):\n\n{die}\n\nThe optimal rule with five "
        f"rolls, by the rolls still permitted after the face showing:\n\n{die_rule}\n\n"
        f"Red and black cards: E(26, 26) = {cards.value:.6f} (Tijms, 2012: 2.6245). After k "
        f"draws the lead has the parity of k, so Tijms's 'stop once the lead is beta_k or "
        f"more' is a least lead of beta_k or beta_k + 1. Read so, his thresholds are the "
        f"exact ones at every k but {', '.join(map(str, differ)) or 'none'} (there the exact "
        f"least lead is {', '.join(str(leads[d - 1]) for d in differ)}; the printed "
        f"value is likely garbled). Played as printed they win {printed.value:.6f}, "
        f"{printed.gap:.2e} below the optimum.\n\n"
        f"![red and black thresholds](images/red_black_thresholds.png)"
    )


# Tijms (2012): f_N(0) for horizons N, and beta_n of the unbounded game for some n <= 185.
SEED_COIN_VALUES = {
    25: "0.7679", 50: "0.7780", 100: "0.7839", 1_000: "0.7912", 2_500: "0.79206",
    10_000: "0.79263", 100_000: "0.79289", 1_000_000: "0.79294",
}  # fmt: skip


SEED_COIN_THRESHOLDS = {
    1: 1, 2: 2, 3: 3, 4: 2, 5: 3, 8: 2, 10: 4, 15: 3, 25: 5, 50: 6, 75: 7, 99: 9, 100: 8,
}  # fmt: skip


def chow_robbins_section(out: Path) -> str:
    """Tijms's Chow–Robbins numbers by the banded solver: f_N(0) up to N = 10^6, the
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
        ["horizon N", "f_N(0), banded solver", "rounded as published", "Tijms (2012)", "band D",
         "time"],
        rows,
    )  # fmt: skip
    beta = longest.thresholds
    quoted = [[n, int(beta[n]), seed] for n, seed in SEED_COIN_THRESHOLDS.items()]
    differ = [str(n) for n, ours, seed in quoted if ours != seed]
    threshold_table = markdown_table(
        ["n", f"beta_n at N = {longest.horizon:,}", "Tijms (2012)"], quoted
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
            ms=8, label="values Tijms (2012) quotes")  # fmt: skip
    ax.plot(n, 0.83992 * np.sqrt(n), "--", lw=1, label="0.83992 sqrt(n) (the limit, Tijms 2012)")
    ax.set(
        xlabel="tosses n",
        ylabel="heads minus tails",
        title="Chow–Robbins: stop after n tosses once heads minus tails reaches beta_n",
    )
    save_integer_plot(fig, ax, out / "chow_robbins_thresholds.png")
    return (
        f"f_N(0), the value with at most N tosses, by the banded solver (`baselines/"
        f"chow_robbins.py`: only heads minus tails within the band D is kept, which changes "
        f"the value by less than {longest.eps:g}):\n\n{values}\n\nThe thresholds Tijms "
        f"quotes (of the unbounded game, after Medina and Zeilberger, 2010), next to the horizon "
        f"{longest.horizon:,} game's; they differ at "
        f"{', '.join(differ) if differ else 'no n'}:\n\n{threshold_table}\n\n"
        f"The rule Tijms quotes, stop as soon as heads exceed tails, is worth pi/4 = "
        f"{np.pi / 4:.7f} in the unbounded game; exactly, with a horizon:\n\n{rule_table}"
        f"\n\n![Chow–Robbins thresholds](images/chow_robbins_thresholds.png)"
    )

"""Ten Thousand: the optimal play's table, the value of rolling, the restricted games."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import baselines
from baselines.solvers import optimal_action_mask
from baselines.ten_thousand import critical_threshold, policy_table
from dice_envs.games.ten_thousand import CONFIG_INDEX, ROLL
from docs.tools.common import (
    TEN_THOUSAND,
)
from docs.tools.game_pages import (
    markdown_table,
)


def ten_thousand_section(out: Path, docs: Path) -> str:
    optimum = baselines.solve(TEN_THOUSAND)
    generic = baselines.solve(TEN_THOUSAND, method="generic")
    reachable = set(generic.tables.observations)
    table = policy_table(optimum, reachable)
    (docs / "ten_thousand_policy.md").write_text(
        "# Solitaire Ten Thousand: the optimal play\n\n"
        "Written by `make solve` (`python -m docs.tools.solve`). Turn score tau in chips (50 points"
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


def _never_optimal(solution) -> list[str]:
    mask = optimal_action_mask(solution.q, solution.tables.legal)
    names = solution.tables.model.action_names
    return [
        names[a].split()[-1]
        for a in range(2, len(names))
        if not (mask[:, a] & ~mask[:, ROLL]).any()
    ]

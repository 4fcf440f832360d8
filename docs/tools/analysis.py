"""The analysis sections: how exploitable the named policies are, and where a policy loses its
gap."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import baselines
from dice_envs import GAMES
from docs.tools.common import (
    PIG,
    SIMULTANEOUS_HOG,
    exploitability_cell,
)
from docs.tools.game_pages import (
    markdown_table,
)

EXPLOITABILITY_CASES = (
    ("dice_envs/Pig-v0", {"goal": 100}, ("hold-at-20", "hold-at-25", "keep-pace", "random")),
    ("dice_envs/TwoDicePig-v0", {"goal": 50}, ("hold-at-20", "tijms", "random")),
    ("dice_envs/Hog-v0", {"goal": 50}, ("five-dice", "dice-4", "random")),
    (SIMULTANEOUS_HOG, {"goal": 100}, ("five-dice", "dice-6", "random")),
)


ALWAYS_ROLL_GOALS = (20, 30, 38, 39, 40, 50, 100)


def exploitability_section() -> str:
    """The named policies of every two-player game, scored by exact exploitability."""
    rows = []
    for env_id, kwargs, names in EXPLOITABILITY_CASES:
        own = "equilibrium" if GAMES[env_id].players == "simultaneous" else "two-player-optimal"
        for name in (*names, own):
            score = baselines.exploitability(name, env_id, **kwargs)
            rows.append(
                [
                    f"`{env_id}` ({', '.join(f'{k}={v}' for k, v in kwargs.items())})",
                    name,
                    exploitability_cell(score.value),
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
            [f"`dice_envs/Pig-v0` (goal={goal})", "always roll", exploitability_cell(score.value)]
        )
    return (
        "`baselines.exploitability(policy, env_id, **kwargs)`: the best response's win "
        "probability against the policy (playing either seat, a coin flip for the first move; "
        "Simultaneous Hog has none) minus 1/2. Time: the whole call, the best-response solve "
        'included (the two-player optimum, for "two-player-optimal", is solved once per game and '
        "kept).\n\n"
        + markdown_table(
            ["game", "policy", "exploitability", "best response wins", "seconds"], rows
        )
        + "\n\nIn small Pig games always rolling until the goal is itself optimal (its "
        "exploitability is 0 up to round-off), so a self-play agent there shows nothing; the "
        "self-play configs use a goal where it is not:\n\n"
        + markdown_table(["game", "policy", "exploitability"], always)
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

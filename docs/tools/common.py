"""What the maintainer's docs tools share: the ids they draw, and small plot and cell helpers."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

SUM_AVOID = "dice_envs/SumAvoid-v0"
PIG = "dice_envs/Pig-v0"
TEN_THOUSAND = "dice_envs/TenThousand-v0"
D20 = "dice_envs/D20Rounds-v0"
SIMULTANEOUS_HOG = "dice_envs/SimultaneousHog-v0"


def save_integer_plot(fig, ax, path: Path) -> None:
    """Integer ticks on both axes, a small title and legend; save and close."""
    ax.title.set_fontsize(10)
    ax.xaxis.get_major_locator().set_params(integer=True)
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def exploitability_cell(value: float) -> str:
    """An exploitability as a table cell."""
    # Below a millionth the digits are round-off; show it as it is.
    return f"{value:.6f}" if abs(value) >= 5e-7 else f"{value:.1e}"

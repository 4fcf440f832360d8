"""The report's figure helpers on edge cases: a gap of 0, every config optimal, Ten
Thousand's configurations summed with the rest."""

import json
from pathlib import Path

import numpy as np
import pytest

from docs.tools.plots import episodes_to_resolve, plot_losses, plot_monte_carlo, plot_value_errors


def test_episodes_to_resolve_a_gap():
    # (1.96 sd / gap)^2 with sd 1 and gap 0.1: 384.15 episodes.
    assert episodes_to_resolve(0.1, 0.01, 1.0) == pytest.approx((1.959964 / 0.1) ** 2)
    assert episodes_to_resolve(1e-17, 1e-16, 1.0) == float("inf")  # round-off is a gap of 0


def _run(seed, gap):
    curve = [
        {"steps": s, "value": 0.5 - gap, "mc_mean": 0.49, "mc_stderr": 0.03} for s in (0, 100, 200)
    ]
    return {"agent": "PPO", "seed": seed, "optimal_value": 0.5, "curve": curve}


def test_the_monte_carlo_figure_when_every_config_is_optimal(tmp_path):
    example = ("Game-v0 (goal=3)", {"evaluation": {"episodes": 300}}, [_run(0, 0.0)])
    plot_monte_carlo(example, [("Game-v0: PPO", float("inf"), 300)], "quick", tmp_path / "a.png")
    assert (tmp_path / "a.png").stat().st_size > 0


def test_ten_thousand_bars_sum_to_the_gap(tmp_path, monkeypatch):
    labels = [f"configuration {i}" for i in range(20)]
    observations = np.array([[t, c, 5] for c in range(20) for t in range(3)])
    losses = np.linspace(0.0, 1.0, len(observations))
    drawn = {}

    import matplotlib.axes

    def record(self, y, width, *args, **kwargs):
        drawn["widths"] = np.asarray(width, dtype=float)
        return original(self, y, width, *args, **kwargs)

    original = matplotlib.axes.Axes.barh
    monkeypatch.setattr(matplotlib.axes.Axes, "barh", record)
    plot_losses(
        "TenThousand-v0", ("turn score", "configuration", "dice to roll"), observations,
        {"Q-learning": losses}, {"Q-learning": losses.sum()}, tmp_path / "t.png", labels,
    )  # fmt: skip
    assert len(drawn["widths"]) == 13  # the 12 largest and the other 8 together
    assert drawn["widths"].sum() == pytest.approx(losses.sum(), abs=1e-12)


def test_a_loss_map_of_round_off_is_drawn_as_no_loss(tmp_path, monkeypatch):
    """A policy optimal up to round-off gets no heat map (a colour scale of 1e-14 would show
    noise as a pattern); a real loss does."""
    import matplotlib.axes

    maps = []
    original = matplotlib.axes.Axes.imshow
    monkeypatch.setattr(
        matplotlib.axes.Axes,
        "imshow",
        lambda self, *a, **k: maps.append(1) or original(self, *a, **k),
    )
    observations = np.array([[i, j] for i in range(4) for j in range(3)])
    noise = np.full(len(observations), 2e-15)
    noise[0] = -1e-16
    real = np.zeros(len(observations))
    real[5] = 0.01
    plot_losses(
        "Game-v0", ("rolls left", "face"), observations, {"Q-learning": noise, "PPO": real},
        {"Q-learning": noise.sum(), "PPO": 0.01}, tmp_path / "l.png",
    )  # fmt: skip
    assert maps == [1]


def test_round_off_gaps_read_as_zero():
    from docs.tools.report import _mean_gap_text

    # Two-Dice Pig's seed 0 came out at -1.9e-12: a policy equal to the optimum up to ties.
    tied = [{"relative_gap": -3.2e-12, "gap": -1.9e-12}, {"relative_gap": 0.0, "gap": 0.0}]
    assert _mean_gap_text(tied) == "0, every seed optimal up to round-off"
    real = [{"relative_gap": 4e-6, "gap": 2.4e-6}, {"relative_gap": 0.0, "gap": 0.0}]
    assert _mean_gap_text(real) == "1.2e-06"


def test_the_value_error_figure_draws_each_agents_median_over_seeds(tmp_path, monkeypatch):
    """Per agent, the median over seeds of the visit-weighted absolute and signed errors."""
    import matplotlib.axes

    drawn = []
    original = matplotlib.axes.Axes.plot

    def record(self, x, y, *args, **kwargs):
        drawn.append((kwargs.get("label"), np.asarray(y, dtype=float)))
        return original(self, x, y, *args, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "plot", record)

    def run(errors):
        curve = [{"steps": 100 * i, "value_error": -e, "value_abs_error": e}
                 for i, e in enumerate(errors)]  # fmt: skip
        return {"curve": curve}

    seeds = [run([3.0, 2.0, 1.0]), run([5.0, 1.0, 0.5]), run([10.0, 3.0, 0.0])]
    plot_value_errors("Game-v0", "quick", {"Q-learning": seeds}, tmp_path / "v.png")
    assert (tmp_path / "v.png").stat().st_size > 0
    absolute, signed = drawn[0][1], drawn[1][1]
    assert drawn[0][0] == "Q-learning: median of 3 seeds"
    np.testing.assert_allclose(absolute, [5.0, 2.0, 0.5])
    np.testing.assert_allclose(signed, [-5.0, -2.0, -0.5])


def test_a_report_lists_only_the_sweeps_of_its_own_configs(tmp_path):
    from docs.tools.report import _sweep_lines

    def record(games: list[str], runs: int) -> dict:
        return {"budget": "full", "games": games, "runs": runs, "backend": "local",
                "workers": 2, "wall_seconds": 60.0 * runs, "date": "2026-11-24"}  # fmt: skip

    (tmp_path / "sweep.json").write_text(json.dumps({
        "a": record(["pig/ppo_goal100", "d20_rounds/ppo_rounds100"], 10),
        "b": record(["yahtzee/qlearning"], 3),
        "c": record(["yahtzee"], 6),
    }))  # fmt: skip
    groups = {Path(f"configs/yahtzee/{name}.yaml"): {} for name in ("ppo", "qlearning")}
    lines = _sweep_lines(tmp_path, groups)
    assert [line.split(":")[0] for line in lines] == [
        "- `full` budget, yahtzee/qlearning",
        "- `full` budget, yahtzee",
    ]
    assert "3 runs in 3.0 min" in lines[0]
    assert len(_sweep_lines(tmp_path)) == 3  # without groups: every sweep


def test_symlog_ticks_leave_out_the_linear_band_around_zero():
    from docs.tools.plots import _SymlogTicksAwayFromZero

    ticks = _SymlogTicksAwayFromZero(0.0043).tick_values(-2.0, 0.2)
    assert 0.0 in ticks and 0.1 in ticks and -1.0 in ticks
    assert not any(0 < abs(t) < 0.0043 for t in ticks)  # 1e-3 would overprint 0's label

"""docs/tools/ten_thousand_race: the answer page's computations (thresholds, the sweep)."""

from __future__ import annotations

import numpy as np
import pytest

import baselines
from baselines.ten_thousand_duel import solve_race
from dice_envs.games.ten_thousand import STOP
from docs.tools import ten_thousand_race as race

DUEL = "dice_envs/TenThousandDuel-v0"


def test_a_threshold_is_the_least_stop_and_a_later_roll_breaks_it():
    totals = np.array([2, 3, 5, 8])
    assert race.threshold_of(totals, np.array([False, True, True, True]), 9) == (3, False)
    assert race.threshold_of(totals, np.array([False, True, False, True]), 9) == (3, True)
    assert race.threshold_of(totals, np.array([False, False, False, False]), 9) == (9, False)


def test_the_thresholds_are_the_optimal_actions_read_directly():
    """Goal 1,000 (20 chips): at every pair, for five fresh dice and for each number of dice
    in hand at a position with no give-back, the least total where `actions` stops."""
    solution = solve_race(20)
    thresholds, broken = race.threshold_maps(solution)
    reachable = race.reachable_totals()
    turn = solution.turn
    # A position of each number of dice in hand with no move: there the choice is stop or roll.
    plain = {5: 0}
    for p, (_config, n) in enumerate(turn.positions):
        if n < 5 and turn.mv_count[p] == 0 and n not in plain:
            plain[int(n)] = p
    assert sorted(plain) == [1, 2, 3, 4, 5]
    checked = 0
    for n, p in plain.items():
        config = int(turn.positions[p, 0])
        least = max(1, int(turn.position_score[p]))
        for a in range(20):
            for b in range(20):
                totals = [t for t in range(least, 20 - a) if reachable[t, n]]
                if not totals:
                    continue
                obs = np.array([[a, b, t, config, n] for t in totals])
                stops = solution.actions(obs) == STOP
                expected = race.threshold_of(np.array(totals), stops, 20 - a)
                if totals[0] == max(1, min(t for t in range(1, 20) if reachable[t, n])):
                    assert (thresholds[n - 1, a, b], broken[n - 1, a, b]) == expected
                    checked += 1
    assert checked > 1000
    assert broken.any() and (thresholds[4] == 20 - np.arange(20)[:, None]).any()


def test_the_sweep_scores_exploitability_as_baselines_does(tmp_path, monkeypatch):
    entry = race._response_entry("stop-at-4", goal=500)
    exploited = baselines.exploitability("stop-at-4", DUEL, goal=500)
    assert entry["exploitability"] == pytest.approx(exploited.value, abs=1e-12)
    assert entry["coin"] == pytest.approx((entry["first"] + entry["second"]) / 2, abs=1e-15)
    # A small archive, filled then resumed with nothing left to do.
    monkeypatch.setattr(race, "GOALS", (300,))
    monkeypatch.setattr(race, "FULL_GOAL", 300)
    monkeypatch.setattr(race, "THRESHOLDS", range(1, 4))
    path = tmp_path / "race.json"
    archive = race.compute(path)
    assert set(archive["best_responses"]) == {"crocce-mordecki", "stop-at-1", "stop-at-2",
                                              "stop-at-3"}  # fmt: skip
    assert archive["optimum"]["300"]["first_player_wins"] == pytest.approx(0.7098520518, abs=1e-10)
    assert set(archive["optimum_against"]) == {"crocce-mordecki", race.least_exploitable(archive)}

    def refuse(*args, **kwargs):
        raise AssertionError("a finished part was computed again")

    for name in ("_optimum_entry", "_response_entry", "_against_optimum"):
        monkeypatch.setattr(race, name, refuse)
    assert race.compute(path) == archive

"""Yahtzee's page (docs/tools/yahtzee.py, docs/tools/game_pages.py): the simulation of optimal
play, the figures and tables it draws, the named policies' exact scores kept per process, and
the committed page's sections. On a reduced game: the full game's evaluations take minutes and
belong to `make solve`."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import baselines
from baselines.yahtzee_evaluation import optimal_solution
from docs.tools import game_pages
from docs.tools import yahtzee as page
from docs.tools.game_pages import named_policy_evaluation, page_path

ROOT = Path(__file__).resolve().parent.parent
YAHTZEE = "dice_envs/Yahtzee-v0"
SMALL = {"boxes": ["sixes", "yahtzee", "chance"]}


@pytest.mark.parametrize("boxes", [["chance"], SMALL["boxes"]])
def test_simulated_optimal_play_averages_to_the_exact_optimum(boxes):
    """Chance alone: games of one to three steps, so a game's score that took in the next
    game's rewards would be far off."""
    solution = optimal_solution(boxes=boxes)
    scores = page.simulate_optimal_scores(solution, 5000, seed=3, batch=2048)
    assert len(scores) == 5000 and (scores >= 0).all()
    if boxes == ["chance"]:  # one scoring of five dice: 5 to 30 points, never two games'
        assert scores.min() >= 5 and scores.max() <= 30
    error = scores.std(ddof=1) / np.sqrt(len(scores))
    assert abs(scores.mean() - solution.value) < 4 * error
    assert np.array_equal(scores, page.simulate_optimal_scores(solution, 5000, 3, batch=2048))
    assert not np.array_equal(scores, page.simulate_optimal_scores(solution, 5000, 4, batch=2048))


def test_simulation_counts_each_game_once_across_batches():
    """A last, smaller batch: its idle copies are not counted, and the first games are those
    of a single batch of the same seed (later batches continue the generator)."""
    solution = optimal_solution(**SMALL)
    split = page.simulate_optimal_scores(solution, 250, seed=1, batch=100)
    whole = page.simulate_optimal_scores(solution, 100, seed=1, batch=100)
    assert len(split) == 250 and (split > 0).all()  # Chance alone scores at least 5
    np.testing.assert_array_equal(split[:100], whole)


@pytest.mark.parametrize(("argument", "value"), [("games", 0), ("games", 1.5), ("seed", -1)])
def test_simulation_refuses_bad_arguments(argument, value):
    call = {"games": 10, "seed": 0, argument: value}
    with pytest.raises(ValueError, match=argument):
        page.simulate_optimal_scores(optimal_solution(**SMALL), **call)


def test_sections_draw_their_figures_and_state_measured_numbers(tmp_path):
    sections = dict(page.yahtzee_sections(tmp_path, games=3000, seed=0, **SMALL))
    assert list(sections) == [
        "Where the optimal strategy fills each box",
        "The final score under optimal play",
        "Where the named policies lose",
    ]
    for name in (page.FILLS_PNG, page.SCORES_PNG, page.LOSSES_PNG):
        assert (tmp_path / name).stat().st_size > 10_000, name
        assert f"(images/{name})" in "".join(sections.values())
    solution = optimal_solution(**SMALL)
    scores = page.simulate_optimal_scores(solution, 3000, 0)
    text = sections["The final score under optimal play"]
    assert f"sample mean {scores.mean():.3f}" in text and f"exact {solution.value:.4f}" in text
    losses = sections["Where the named policies lose"]
    for name in ("score-at-once", "greedy-turn"):
        gap = named_policy_evaluation(YAHTZEE, name, **SMALL).gap
        assert f"| {name} | (every decision) |  | {gap:.2f} | 100 % |" in losses


def test_where_lost_table_sums_by_decision_and_skips_nothing_lost():
    evaluation = named_policy_evaluation(YAHTZEE, "score-at-once", **SMALL)
    table = page.where_lost_table({"score-at-once": evaluation}, count=14 * 14)
    lines = table.splitlines()[2:]
    by_decision = evaluation.losses_by_turn.sum(axis=0)
    assert f"2 rolls left: {by_decision[0]:.2f}" in lines[0]
    shown = [float(line.split(" | ")[3]) for line in lines[1:]]
    assert shown == sorted(shown, reverse=True) and min(shown) >= 0.005
    assert len(shown) == (evaluation.losses_by_choice >= 0.005).sum()
    assert shown[0] == pytest.approx(evaluation.losses_by_choice.max(), abs=0.005)


def test_named_policy_evaluations_are_kept_per_process(monkeypatch):
    calls = []
    original = baselines.evaluate

    def counted(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(game_pages.baselines, "evaluate", counted)
    game_pages._evaluation.cache_clear()
    first = named_policy_evaluation("dice_envs/SumAvoid-v0", "stop-at-20", N=6)
    again = named_policy_evaluation("dice_envs/SumAvoid-v0", "stop-at-20", N=6)
    other = named_policy_evaluation("dice_envs/SumAvoid-v0", "stop-at-20", N=7)
    assert first is again and other is not first and len(calls) == 2


def test_a_structure_page_scores_its_named_policies(monkeypatch):
    """The Yahtzee page's table of named policies, from the evaluations kept per process
    (here a reduced game's, to stay within the test budget)."""
    monkeypatch.setattr(
        game_pages,
        "named_policy_evaluation",
        lambda env_id, name: named_policy_evaluation(env_id, name, **SMALL),
    )
    text = game_pages._structure_policies_text(YAHTZEE)
    for name in ("score-at-once", "greedy-turn"):
        score = named_policy_evaluation(YAHTZEE, name, **SMALL)
        assert f"| {name} | {score.value:.4f} | {score.optimal_value:.4f} |" in text
        assert f"{100 * score.agreement:.1f}%" in text


def test_the_committed_page_shows_the_figures_and_the_named_policies():
    text = page_path(YAHTZEE, ROOT / "docs").read_text()
    game = text.split("<!-- game:start -->")[1].split("<!-- game:end -->")[0]
    for heading in (
        "## The optimum",
        "## Named policies, evaluated exactly",
        "## Where the optimal strategy fills each box",
        "## The final score under optimal play",
        "## Where the named policies lose",
    ):
        assert heading in game
    for name in (page.FILLS_PNG, page.SCORES_PNG, page.LOSSES_PNG):
        assert f"(../images/{name})" in game
    assert "| score-at-once |" in game and "| greedy-turn |" in game

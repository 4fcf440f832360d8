"""One meaning per policy name: "optimal" is the optimum of the game as registered (its
opponent included), never an opponent; "two-player-optimal" and "equilibrium" are a two-player
game's own optimum, as policies and as opponents; every name says what it is in one line."""

from __future__ import annotations

import io
import json
import warnings

import pytest

import baselines
from baselines.simultaneous import equilibrium
from baselines.two_player import two_player_optimum
from dice_envs import GAMES, env_ids, make_model
from dice_envs.policies import describe_policy, policy_descriptions, policy_names
from dice_envs_cli import main as cli_main

PIG, HOG, SIM = "dice_envs/Pig-v0", "dice_envs/Hog-v0", "dice_envs/SimultaneousHog-v0"


def test_optimal_is_the_optimum_of_the_game_as_registered_with_its_opponent():
    solution = baselines.solve(PIG, goal=30)
    optimal = baselines.evaluate("optimal", PIG, goal=30)
    assert optimal.value == pytest.approx(solution.value, abs=1e-12)
    assert optimal.gap == pytest.approx(0.0, abs=1e-12)
    # As a policy of either seat it is the best response to hold-at-20, which a best response
    # exploits: the number the command line printed before, now the library's too.
    assert baselines.exploitability("optimal", PIG, goal=30).value == pytest.approx(
        0.0786822917, abs=1e-9
    )
    # The two-player optimum is another policy, named apart: it loses to the best response
    # against hold-at-20 what the issue measured (0.0217), and nothing is exploitable in it.
    assert baselines.evaluate("two-player-optimal", PIG, goal=30).gap == pytest.approx(
        0.02173798059, abs=1e-9
    )
    assert baselines.exploitability("two-player-optimal", PIG, goal=30).value == pytest.approx(
        0.0, abs=1e-12
    )


def test_a_simultaneous_games_own_optimum_is_its_equilibrium_as_policy_and_opponent():
    kwargs = {"goal": 8, "max_dice": 2}
    assert baselines.exploitability("equilibrium", SIM, **kwargs).value == pytest.approx(
        0.0, abs=1e-12
    )
    against = baselines.solve(SIM, opponent="equilibrium", **kwargs)
    assert against.value == pytest.approx(equilibrium(SIM, **kwargs).value, abs=1e-9)
    with pytest.raises(ValueError, match='not a policy of this game .*use "equilibrium"'):
        baselines.solve(SIM, opponent="two-player-optimal", **kwargs)
    with pytest.raises(ValueError, match="must be one of .*two-player-optimal, optimal"):
        baselines.evaluate("equilibrium", PIG, goal=10)


@pytest.mark.parametrize(
    "env_id, kwargs, replacement",
    [(PIG, {"goal": 12}, "two-player-optimal"), (SIM, {"goal": 8, "max_dice": 2}, "equilibrium")],
)
def test_the_old_opponent_name_optimal_warns_and_plays_its_replacement(env_id, kwargs, replacement):
    with pytest.warns(FutureWarning, match=f'opponent="optimal" is deprecated.*"{replacement}"'):
        old = baselines.solve(env_id, opponent="optimal", **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the new name: no warning
        new = baselines.solve(env_id, opponent=replacement, **kwargs)
    assert old.value == pytest.approx(new.value, abs=1e-15)
    assert f"vs {replacement}" in repr(make_model(env_id, opponent=replacement, **kwargs))


def test_optimal_is_never_an_opponent_name():
    first = two_player_optimum(make_model(HOG, goal=12, max_dice=3).model).value
    with pytest.warns(FutureWarning):
        fold = make_model(HOG, goal=12, max_dice=3, opponent="optimal", agent_starts=True)
    assert fold.opponent == "two-player-optimal"  # not the fold's own optimum
    with pytest.warns(FutureWarning):
        best = baselines.solve(HOG, goal=12, max_dice=3, opponent="optimal", agent_starts=True)
    assert best.value == pytest.approx(first, abs=1e-9)


@pytest.mark.parametrize("env_id", list(env_ids()))
def test_every_name_of_every_game_says_what_it_is(env_id):
    described = policy_descriptions(env_id)
    assert list(described) == list(policy_names(env_id))
    assert described["optimal"].endswith("(baselines.solve)")
    seat = {"two": "two-player-optimal", "simultaneous": "equilibrium"}.get(GAMES[env_id].players)
    if seat is not None:
        assert seat in described and described["optimal"].startswith(
            "the best response to its opponent "
        )
    for name, text in described.items():
        assert text and text != name and "\n" not in text and len(text) < 300, (name, text)
    for name in GAMES[env_id].policies:  # the pages' names, patterns filled in
        text = describe_policy(make_model(env_id), name)
        assert "K" not in text.replace("Keep", ""), (name, text)


def test_a_patterns_description_says_its_number():
    model = make_model(PIG, goal=30, opponent="hold-at-25")
    assert (
        describe_policy(model, "hold-at-25") == "rolls until the turn total reaches 25, then holds"
    )
    assert "opponent hold-at-25 (rolls until the turn total reaches 25" in describe_policy(
        model, "optimal"
    )
    with pytest.raises(ValueError, match="must be one of"):
        describe_policy(model, "hold-at-twenty")


def test_every_game_argument_has_its_default_and_what_it_allows():
    for env_id, entry in GAMES.items():
        for argument in entry.arguments:
            assert argument.description, (env_id, argument.name)
    goal = next(a for a in GAMES[HOG].arguments if a.name == "goal")
    assert (goal.default, goal.description) == (100, "points to win; an integer >= 1.")


def test_solve_prints_the_two_player_value_beside_the_value_against_the_opponent():
    out = io.StringIO()
    assert cli_main(["solve", "hog", "goal=12", "max_dice=3", "--json"], out=out) == 0
    found = json.loads(out.getvalue())
    expected = two_player_optimum(make_model(HOG, goal=12, max_dice=3).model).value
    assert found["two_player_value"] == pytest.approx(expected, abs=1e-15)
    assert found["value"] == pytest.approx(baselines.solve(HOG, goal=12, max_dice=3).value)
    assert "first player's win probability" in found["two_player_value_is"]
    for one in (["sum_avoid"], ["simultaneous_hog", "goal=6"]):  # the latter: `equilibrium`
        out = io.StringIO()
        assert cli_main(["solve", *one, "--json"], out=out) == 0
        assert "two_player_value" not in json.loads(out.getvalue())

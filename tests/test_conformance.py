"""Every registered id answers through one interface: its solution is a `GameSolution`, its
evaluations are `GameEvaluation`s, one observation and a batch agree, and every subcommand of
the command line runs on it. Games too large for the test budget run on their registration's
last (smallest) example; the full Yahtzee solve through the command line runs once."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest

import baselines
from baselines.protocols import GameEvaluation, GameSolution, Loss
from dice_envs import GAMES, env_ids, make_model
from dice_envs.policies import SOLVED_POLICIES, policy_names

IDS = list(env_ids())
SCRIPT = Path(sys.executable).parent / "dice-envs"


def small(env_id: str) -> dict:
    return dict(GAMES[env_id].examples[-1])


def visited_observations(env_id: str, kwargs: dict, count: int = 40) -> np.ndarray:
    """Observations of states a random legal player reaches (never a finished game's)."""
    env = gym.make(env_id, **kwargs)
    rng = np.random.default_rng(0)
    found = []
    obs, info = env.reset(seed=0)
    while len(found) < count:
        found.append(np.atleast_1d(np.asarray(obs, dtype=np.int64)))
        legal = np.flatnonzero(info["action_mask"])
        obs, _, terminated, truncated, info = env.step(int(rng.choice(legal)))
        if terminated or truncated:
            obs, info = env.reset()
    return np.array(found)


def one(row: np.ndarray):
    return int(row[0]) if len(row) == 1 else tuple(int(v) for v in row)


@pytest.mark.parametrize("env_id", IDS)
def test_every_solution_answers_one_observation_and_a_batch_alike(env_id):
    kwargs = small(env_id)
    solution = baselines.solve(env_id, **kwargs)
    assert isinstance(solution, GameSolution)
    batch = visited_observations(env_id, kwargs)
    actions = solution.actions(batch)
    values = solution.values_at(batch)
    worth = solution.action_values_batch(batch)
    assert actions.shape == values.shape == (len(batch),) and worth.shape[0] == len(batch)
    np.testing.assert_array_equal(solution.batched_policy().batch(batch), actions)
    for i, row in enumerate(batch):
        obs = one(row)
        assert solution.action(obs) == actions[i]
        assert solution.value_at(obs) == pytest.approx(values[i], abs=1e-12)
        np.testing.assert_allclose(solution.action_values(obs), worth[i], atol=1e-12)
        legal = ~np.isnan(worth[i])
        assert legal.any()
        # The optimum's value is its best action's, and its action is a best one.
        assert np.nanmax(worth[i]) == pytest.approx(values[i], abs=1e-9)
        assert worth[i, actions[i]] == pytest.approx(values[i], abs=1e-9)


@pytest.mark.parametrize("env_id", IDS)
def test_every_evaluation_says_where_it_loses_in_one_record_type(env_id):
    kwargs = small(env_id)
    optimum = baselines.solve(env_id, **kwargs)
    exact = baselines.evaluate(optimum, env_id, **kwargs)
    assert isinstance(exact, GameEvaluation)
    assert exact.gap == pytest.approx(0.0, abs=1e-9) and exact.where_lost(5) == []
    names = GAMES[env_id].policies or policy_names(env_id, **kwargs)
    name = next(n for n in names if "K" not in n and n not in SOLVED_POLICIES)
    scored = baselines.evaluate(name, env_id, **kwargs)
    assert isinstance(scored, GameEvaluation)
    lost = scored.where_lost(3)
    assert all(isinstance(loss, Loss) for loss in lost)
    assert [loss.loss for loss in lost] == sorted((loss.loss for loss in lost), reverse=True)
    assert sum(loss.loss for loss in lost) <= scored.gap + 1e-9
    for loss in lost:
        assert loss.action != loss.optimal_action or env_id == "dice_envs/Yahtzee-v0"
        worth = optimum.action_values(loss.observation)
        assert worth[loss.optimal_action] == pytest.approx(np.nanmax(worth), abs=1e-9)


@pytest.mark.parametrize(
    "env_id", [i for i in IDS if GAMES[i].players != "one" and GAMES[i].two_player_solver]
)
def test_two_player_optima_answer_the_same_interface(env_id):
    from baselines.two_player import two_player_optimum

    solution = two_player_optimum(make_model(env_id, **small(env_id)).model)
    assert isinstance(solution, GameSolution)
    batch = visited_observations(env_id, small(env_id), count=10)
    np.testing.assert_array_equal(solution.actions(batch), [solution.action(one(r)) for r in batch])


def test_the_equilibrium_answers_the_same_interface():
    (env_id,) = [i for i in IDS if GAMES[i].equilibrium_solver]
    found = baselines.equilibrium(env_id, **small(env_id))
    assert isinstance(found, GameSolution)
    batch = visited_observations(env_id, small(env_id), count=10)
    np.testing.assert_allclose(found.values_at(batch), [found.value_at(one(r)) for r in batch])


@pytest.mark.parametrize("env_id", IDS)
def test_every_model_names_its_game_and_arguments_in_its_repr(env_id):
    """Pages, reports and messages print models: an object address would leak into them."""
    for kwargs in GAMES[env_id].examples:
        shown = repr(make_model(env_id, **kwargs))
        assert " at 0x" not in shown and "(" in shown, shown


# One process runs every subcommand on each game in turn (importing the command line takes
# seconds): JSON in (the games as [id, arguments, named policy, every policy name], whether to
# register the toy games first), by game each subcommand's exit status and output out (an
# exception as status None and its traceback; a usage error as its exit status and stderr).
EVERY_SUBCOMMAND = """
import contextlib, io, json, sys, traceback
sys.path.insert(0, sys.argv[2])
from dice_envs_cli import main
games, toy = json.loads(sys.argv[1])
if toy:
    from dice_envs import register_game
    from toy_games import CoinRaceVersus, ToyStop
    register_game("toy/ToyStop-v0", ToyStop, [{}], policies=["stop-at-1"])
    register_game("toy/CoinRace-v0", CoinRaceVersus, [{}], policies=["walk"])
from dice_envs import GAMES


def run(argv, stdin=None):
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            status = main(argv, out=out) if stdin is None else main(argv, stdin=stdin, out=out)
        return [status, out.getvalue() if status == 0 else err.getvalue()]
    except SystemExit as exit_:
        return [exit_.code, err.getvalue()]
    except BaseException:  # noqa: B036 (a defect: its traceback)
        return [None, traceback.format_exc()]


every = {}
for env_id, pairs, named, names in games:
    players = GAMES[env_id].players
    runs = {
        "games": ["games", "--json"],
        "solve": ["solve", env_id, *pairs, "--json"],
        "optimal": ["evaluate", env_id, *pairs, "--policy", "optimal", "--where-lost", "3",
                    "--json"],
        "named": ["evaluate", env_id, *pairs, "--policy", named, "--where-lost", "3", "--json"],
    }
    game_pairs = [pair for pair in pairs if not pair.startswith("opponent=")]  # the policy's
    for name in names:
        runs[f"evaluate {name}"] = ["evaluate", env_id, *pairs, "--policy", name, "--json"]
        if players != "one":
            runs[f"exploitability {name}"] = ["exploitability", env_id, *game_pairs,
                                              "--policy", name, "--json"]
    if GAMES[env_id].equilibrium_solver:
        runs["equilibrium"] = ["equilibrium", env_id, *game_pairs, "--json"]
    found = {name: run(argv) for name, argv in runs.items()}
    found["play"] = run(["play", env_id, *pairs, "--seed", "0"], stdin=io.StringIO("q\\n"))
    every[env_id] = found
print(json.dumps(every))
"""


def _pairs(kwargs: dict) -> list[str]:
    return [f"{key}={value!r}" for key, value in kwargs.items()]


def _named(env_id: str, kwargs: dict) -> str:
    names = GAMES[env_id].policies or policy_names(env_id, **kwargs)
    return next(n for n in names if "K" not in n and n not in SOLVED_POLICIES)


def every_name(env_id: str, kwargs: dict) -> list[str]:
    """Every policy name of the game at `kwargs`: its registration's (patterns filled in) and
    its own without a K ("optimal", "two-player-optimal", "random", ...)."""
    names = [*GAMES[env_id].policies, *policy_names(env_id, **kwargs)]
    return [name for name in dict.fromkeys(names) if "K" not in name]


def every_subcommand(games: dict[str, tuple[dict, str]], toy: bool = False) -> dict:
    """Game id -> (keyword arguments, named policy) in; game id -> subcommand -> its raw
    result (exit status, output) out, from one process."""
    cases = [
        [env_id, _pairs(kwargs), named, every_name(env_id, kwargs) if not toy else [named]]
        for env_id, (kwargs, named) in games.items()
    ]
    done = subprocess.run(
        [sys.executable, "-c", EVERY_SUBCOMMAND, json.dumps([cases, toy]),
         str(Path(__file__).parent)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def outputs(found: dict) -> dict:
    """Each subcommand's output (its JSON, or the text `play` showed), once each has exited 0."""
    for name, (status, text) in found.items():
        assert status == 0, (name, text)
    return {
        name: (text if name == "play" else json.loads(text.strip().splitlines()[-1]))
        for name, (_, text) in found.items()
    }


@pytest.fixture(scope="module")
def every_game() -> dict:
    """Every subcommand on every registered game (its smallest example), in one process."""
    return every_subcommand({i: (small(i), _named(i, small(i))) for i in IDS})


@pytest.mark.parametrize("env_id", IDS)
def test_every_subcommand_runs_on_every_game(env_id, every_game):
    kwargs = small(env_id)
    found = every_game[env_id]
    found = outputs(
        {k: v for k, v in found.items() if k.split()[0] not in ("evaluate", "exploitability")}
    )
    solution = baselines.solve(env_id, **kwargs)
    assert found["solve"]["value"] == pytest.approx(solution.value, abs=1e-9)
    assert found["optimal"]["gap"] == pytest.approx(0.0, abs=1e-9)
    assert found["optimal"]["where_lost"] == []
    named, name = found["named"], _named(env_id, kwargs)
    library = baselines.evaluate(name, env_id, **kwargs)
    assert named["value"] == pytest.approx(library.value, abs=1e-9)
    lost = json.loads(json.dumps([loss.as_dict() for loss in library.where_lost(3)]))
    assert [row.pop("loss") for row in named["where_lost"]] == pytest.approx(
        [row.pop("loss") for row in lost], abs=1e-9
    )
    assert named["where_lost"] == lost  # the same decisions: observation, action, optimal one
    assert env_id in {game["env_id"] for game in found["games"]["games"]}
    assert found["play"]  # it showed the game before the person quit


@pytest.mark.parametrize("env_id", IDS)
def test_python_and_the_command_line_agree_on_every_policy_name(env_id, every_game):
    """One meaning per name: `baselines.evaluate(name, ...)` and `exploitability(name, ...)`
    are what `dice-envs evaluate|exploitability --policy name` print, to 1e-12, for every
    name of every game; a name a game refuses at these arguments is refused by both."""
    kwargs = small(env_id)
    game_kwargs = {k: v for k, v in kwargs.items() if k != "opponent"}
    found = every_game[env_id]
    names = every_name(env_id, kwargs)
    assert "optimal" in names
    checked = 0
    for command, call, arguments in (
        ("evaluate", baselines.evaluate, kwargs),
        ("exploitability", baselines.exploitability, game_kwargs),
    ):
        if command == "exploitability" and GAMES[env_id].players == "one":
            assert not any(key.startswith(command) for key in found)
            continue
        for name in names:
            status, text = found[f"{command} {name}"]
            try:
                expected = call(name, env_id, **arguments).as_dict()
            except ValueError as error:  # refused: so is it on the command line, as a usage error
                assert status == 2 and f"--policy {name}" in text, (name, error, text)
                continue
            assert status == 0, (command, name, text)
            printed = json.loads(text.strip().splitlines()[-1])
            assert printed["policy"] == name and printed["policy_is"]
            for key, value in expected.items():
                if key != "seconds":
                    assert printed[key] == pytest.approx(value, abs=1e-12), (command, name, key)
            checked += 1
    assert checked >= len(names) - 1  # at most one name (tijms-thresholds) refused here


def test_a_toy_game_registered_outside_the_packages_runs_every_subcommand():
    games = {"toy/ToyStop-v0": ({}, "stop-at-1"), "toy/CoinRace-v0": ({}, "walk")}
    every = every_subcommand(games, toy=True)
    found = outputs(every["toy/ToyStop-v0"])
    # ToyStop by hand: the optimum stops on a 3 (else rolls: mean 2): (1/3) 3 + (2/3) 2 = 7/3.
    assert found["solve"]["value"] == pytest.approx(7 / 3, abs=1e-12)
    assert found["named"]["value"] == pytest.approx(2.0, abs=1e-12)  # stops on anything
    race = outputs(every["toy/CoinRace-v0"])
    assert race["exploitability walk"]["value"] >= 0
    assert race["named"]["policy_is"].startswith("a policy the game names")  # undescribed


def test_the_full_yahtzee_solve_through_the_command_line():
    done = subprocess.run(
        [str(SCRIPT), "solve", "dice_envs/Yahtzee-v0", "joker='verhoeff'", "--json"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    # T. Verhoeff, "Optimal solitaire Yahtzee player" (1999), and J. Glenn, "An optimal
    # strategy for Yahtzee" (2006): 254.5896 under Verhoeff's joker reading.
    assert round(found["value"], 4) == 254.5896
    assert found["states"] == 536_320 and found["seconds"] > 0

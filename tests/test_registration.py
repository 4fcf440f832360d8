"""One `register_game` entry is all a new game needs: toy games registered from this test module
are solved, evaluated, stepped (single, vector, PettingZoo) and given a page, and leave no
trace in the registry or the repository."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from repository import repository_state
from toy_games import CoinRaceVersus, ToyStop

import baselines
import dice_envs
from dice_envs import GAMES, Reference, register_game, unregister_game
from dice_envs.policies import named_policy
from docs.tools.game_pages import write_game_page

pettingzoo = pytest.importorskip("dice_envs.pettingzoo")

STOP_ID, RACE_ID = "toy/ToyStop-v0", "toy/CoinRace-v0"
TOY_REFERENCE = Reference("A. Tester", "Toy games for tests", "this test module", 2026)


@pytest.fixture
def toy_games():
    register_game(
        STOP_ID,
        ToyStop,
        [{}, {"sides": 2}],
        summary="roll a d3 at most twice; stop for the face",
        references=[TOY_REFERENCE],
        policies=["stop-at-1", "stop-at-3"],
    )
    register_game(
        RACE_ID,
        CoinRaceVersus,
        [{}, {"goal": 2, "agent_starts": False}],
        summary="race to 3 points: walk for 1 or gamble for 2 on a coin",
        policies=["walk", "gamble"],
    )
    try:
        yield
    finally:
        unregister_game(STOP_ID)
        unregister_game(RACE_ID)


def test_toy_single_agent_game_is_solved_evaluated_and_stepped(toy_games):
    assert STOP_ID in dice_envs.env_ids()
    assert GAMES[STOP_ID].players == "one"
    # By hand: after the first roll stop on 3, either on 2, roll on 1: E[max(face, 2)] = 7/3.
    assert baselines.solve(STOP_ID).value == pytest.approx(7 / 3, abs=1e-12)
    taking_first = baselines.evaluate("stop-at-1", STOP_ID)
    assert taking_first.value == pytest.approx(2.0, abs=1e-12)
    assert taking_first.gap == pytest.approx(1 / 3, abs=1e-12)
    assert baselines.evaluate("stop-at-3", STOP_ID).gap == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="must be one of stop-at-K"):
        named_policy(STOP_ID, "hold-at-20")

    env = gym.make(STOP_ID)
    obs, info = env.reset(seed=0)
    assert tuple(obs) == (2, 0) and info["action_mask"].tolist() == [0, 1]
    obs, reward, terminated, truncated, _ = env.step(1)
    assert obs[0] == 1 and 1 <= obs[1] <= 3 and not terminated and reward == 0.0
    vector = gym.make_vec(STOP_ID, num_envs=3)
    observations, _ = vector.reset(seed=0)
    assert observations.tolist() == [[2, 0]] * 3


def test_toy_two_player_game_folds_and_plays_in_pettingzoo(toy_games):
    assert GAMES[RACE_ID].players == "two"
    # By hand against an opponent who always walks: starting, walking three times wins surely;
    # second, the agent has two moves to make 3 points and wins 1/2 (gamble once); a coin
    # decides who starts.
    assert baselines.solve(RACE_ID, agent_starts=True).value == pytest.approx(1.0)
    assert baselines.solve(RACE_ID, agent_starts=False).value == pytest.approx(0.5)
    assert baselines.solve(RACE_ID).value == pytest.approx(0.75)
    # Always gambling: two successes in three coins first (1/2), both of two second (1/4).
    assert baselines.evaluate("gamble", RACE_ID).value == pytest.approx(0.375)
    # Walking is exploitable: the best response wins 3/4 where the game's value is 1/2.
    assert baselines.exploitability("walk", RACE_ID).value == pytest.approx(0.25)

    # Both optimal at goal 2, by hand: V(0, 0) = max(1/2, 1/2 + (1 - V(0, 0)) / 2) = 2/3 (a
    # walk hands the other a position worth 1/2 to it; a failed gamble hands it (0, 0)). The
    # toy game gives no state_bounds: the generic solver spans its reachable states.
    optimum = baselines.solve(
        RACE_ID, goal=2, opponent="two-player-optimal", agent_starts=True
    ).value
    assert optimum == pytest.approx(2 / 3, abs=1e-12)

    env = gym.make(RACE_ID, agent_starts=True)
    obs, _ = env.reset(seed=1)
    assert tuple(obs) == (0, 0)
    obs, reward, terminated, _, _ = env.step(0)  # walk; the opponent walks too
    assert tuple(obs) == (1, 1) and reward == 0.0 and not terminated
    vector = gym.make_vec(RACE_ID, num_envs=4, agent_starts=True)
    observations, _ = vector.reset(seed=0)
    assert observations.tolist() == [[0, 0]] * 4

    assert "coin_race" in pettingzoo.names()
    aec = pettingzoo.env("coin_race", first_player="player_1")
    aec.reset(seed=0)
    final = {}
    for agent in aec.agent_iter():
        _, reward, terminated, truncated, _ = aec.last()
        if terminated or truncated:
            final[agent] = reward
        aec.step(None if terminated or truncated else 0)  # both walk: the first to move wins
    assert final == {"player_0": -1, "player_1": 1}


def test_toy_game_page_goes_where_asked_and_nowhere_else(toy_games, tmp_path):
    before = repository_state()
    path = write_game_page(STOP_ID, tmp_path)
    assert path == tmp_path / "games" / "toy_stop.md"
    page = path.read_text()
    assert "`toy/ToyStop-v0`: Roll a d3 at most twice" in page and str(TOY_REFERENCE) in page
    assert "| stop-at-1 | 2.0000 | 2.3333 | 0.3333 |" in page
    assert repository_state() == before


def test_registration_checks_its_arguments():
    with pytest.raises(ValueError, match="env_id must look like"):
        register_game("NoNamespace", ToyStop)
    with pytest.raises(ValueError, match="references must be Reference"):
        register_game("toy/Bad-v0", ToyStop, references=["a paper"])
    with pytest.raises(ValueError, match="env_id must be a registered game"):
        unregister_game("toy/Never-v0")
    assert "toy/Bad-v0" not in GAMES and "toy/Bad-v0" not in gym.registry


def test_registrations_do_not_leak_between_tests():
    # Runs after the tests above: their fixture took the toy games out of both registries.
    for env_id in (STOP_ID, RACE_ID):
        assert env_id not in GAMES and env_id not in gym.registry
        assert env_id not in dice_envs.env_ids()
    assert not np.isin(["coin_race"], list(pettingzoo.names())).any()


def test_a_game_says_where_its_tables_can_not_be_built():
    def refused(kwargs):
        sides = kwargs.get("sides", 3)
        return f"{sides} sides would need more memory than this test allows" if sides > 5 else None

    register_game("toy/BigStop-v0", ToyStop, [{}], tables_refused=refused)
    try:
        assert baselines.solve("toy/BigStop-v0", sides=4).value > 0
        with pytest.raises(ValueError, match="6 sides would need more memory"):
            baselines.tabulate("toy/BigStop-v0", sides=6)
        with pytest.raises(ValueError, match="6 sides would need more memory"):
            baselines.evaluate("stop-at-2", "toy/BigStop-v0", sides=6)
    finally:
        unregister_game("toy/BigStop-v0")


def test_pig_registered_under_another_id_solves_with_its_own_solver():
    """Every per-game hook lives in the registration entry: the same entry under another id
    is the same game, its specialised and layered solvers included."""
    from dataclasses import fields

    from baselines.two_player import two_player_optimum

    pig = GAMES["dice_envs/Pig-v0"]
    entry = {field.name: getattr(pig, field.name) for field in fields(pig)}
    entry.pop("env_id")
    hooks = {name: entry.pop(name) for name in dice_envs.registration.HOOKS}
    register_game("test/MyPig-v0", **entry, **hooks)
    try:
        mine = baselines.solve("test/MyPig-v0", goal=40, method="specialised")
        original = baselines.solve("dice_envs/Pig-v0", goal=40, method="specialised")
        assert mine.value == original.value  # the same solver, to the last bit
        np.testing.assert_array_equal(mine.policy, original.policy)
        model = dice_envs.make_model("test/MyPig-v0", goal=20).model
        assert two_player_optimum(model, method="layered").value > 0.5
    finally:
        unregister_game("test/MyPig-v0")
    bare = {k: v for k, v in entry.items() if k not in ("page_variants",)}
    register_game("test/BarePig-v0", **bare)  # no hooks: the generic solver only
    try:
        with pytest.raises(ValueError, match="has no specialised solver"):
            baselines.solve("test/BarePig-v0", goal=20, method="specialised")
    finally:
        unregister_game("test/BarePig-v0")


def test_a_hook_must_be_known_and_an_import_path():
    with pytest.raises(ValueError, match="is not a hook of a game"):
        register_game("test/Nope-v0", "dice_envs.games.pig:PigVersus", solvr="a.b:c")
    with pytest.raises(ValueError, match="solver must be an import path"):
        register_game("test/Nope-v0", "dice_envs.games.pig:PigVersus", solver="a.b")
    assert "test/Nope-v0" not in GAMES

"""Sizes checked up front: huge arguments are refused at once with a ValueError naming them,
and a mapping opponent that misses observations is refused when given."""

import inspect

import gymnasium as gym
import pytest

import dice_envs
from dice_envs.games.base import SIZE_LIMIT, check_size, load

HUGE = (10**7, 10**9)
# Arguments whose models build nothing in proportion to them and whose tables stay under
# SIZE_LIMIT at 10^7 (or that are documented as sampled lazily, ChowRobbins' horizon):
# accepted at once; at 10^9 only the lazy ones are.
ACCEPTED = {
    ("dice_envs/SumAvoid-v0", "N", 10**7),
    ("dice_envs/SumAvoid-v0", "max_sum", 10**7),
    ("dice_envs/DieStopping-v0", "rolls", 10**7),
    ("dice_envs/TenThousand-v0", "max_turn_score", 10**7),
    ("dice_envs/TenThousand-v0", "max_turn_score", 10**9),
    ("dice_envs/ChowRobbins-v0", "horizon", 10**7),
    ("dice_envs/ChowRobbins-v0", "horizon", 10**9),
    # The race asks its opponent lazily and steps its rules: nothing grows with the goal.
    ("dice_envs/TenThousandDuel-v0", "goal", 10**7),
    ("dice_envs/TenThousandDuel-v0", "goal", 10**9),
}


def integer_arguments(env_id):
    parameters = inspect.signature(load(dice_envs.GAMES[env_id].model)).parameters
    integer = {name for name, p in parameters.items() if type(p.default) is int}
    return sorted(integer | ({"sides", "max_sum"} & set(parameters)))  # defaults None


CASES = [
    (env_id, name, value)
    for env_id in dice_envs.GAMES
    for name in integer_arguments(env_id)
    for value in HUGE
]


# Games whose size no argument changes: Yahtzee takes a joker rule and box names only.
NO_INTEGER_ARGUMENTS = {"dice_envs/Yahtzee-v0"}


def test_every_id_has_integer_arguments_to_try():
    assert {env_id for env_id, _, _ in CASES} == set(dice_envs.GAMES) - NO_INTEGER_ARGUMENTS
    assert not any(integer_arguments(env_id) for env_id in NO_INTEGER_ARGUMENTS)
    assert len(CASES) >= 2 * 25


@pytest.mark.parametrize(("env_id", "name", "value"), CASES, ids=str)
def test_huge_arguments_are_refused_at_once_naming_them(env_id, name, value):
    if (env_id, name, value) in ACCEPTED:
        env = gym.make(env_id, **{name: value})
        env.reset(seed=0)
        env.step(1)
    else:
        with pytest.raises(ValueError, match=rf"\b{name}\b") as refused:
            gym.make(env_id, **{name: value})
        message = str(refused.value)
        if "must be an integer in" not in message:  # a range check (start_face) says its own
            assert "SIZE_LIMIT" in message and f"{float(SIZE_LIMIT):.3g}" in message


def test_check_size_names_arguments_estimate_and_limit():
    check_size({"goal": 10}, 100, "rows", limit=100)  # at the limit: accepted
    with pytest.raises(ValueError, match=r"goal=11, sides=6: rows would be about 101, over .*100"):
        check_size({"goal": 11, "sides": 6}, 101, "rows", limit=100)


def test_defaults_and_examples_are_under_the_limit():
    for env_id, game in dice_envs.GAMES.items():
        for kwargs in ({}, *game.examples):
            if "optimal" not in str(kwargs):
                gym.make(env_id, **kwargs)


@pytest.mark.parametrize(
    ("env_id", "opponent"),
    [
        ("dice_envs/SimultaneousHog-v0", {"a": 1}),
        ("dice_envs/SimultaneousHog-v0", {(0, 0): 1}),
        ("dice_envs/Hog-v0", {}),
        ("dice_envs/Pig-v0", {(own, 0, 0): 1 for own in range(20)}),
        ("dice_envs/TwoDicePig-v0", {(0, 0, 0): 1}),
    ],
)
def test_mapping_opponent_missing_observations_is_refused_when_given(env_id, opponent):
    with pytest.raises(ValueError, match=r"^opponent \(a mapping\)"):
        gym.make(env_id, goal=20, opponent=opponent)


def test_mapping_opponent_covering_every_observation_is_accepted():
    goal = 12
    mapping = {(a, b): 1 for a in range(goal + 1) for b in range(goal + 1)}
    env = gym.make("dice_envs/SimultaneousHog-v0", goal=goal, max_dice=3, opponent=mapping)
    env.reset(seed=0)
    env.step(0)
    del mapping[(goal - 1, 0)]  # one position the opponent can meet
    with pytest.raises(ValueError, match=r"observation \(11, 0\)"):
        gym.make("dice_envs/SimultaneousHog-v0", goal=goal, max_dice=3, opponent=mapping)


def test_games_too_large_for_tables_say_so_and_still_solve_and_step():
    import baselines

    # Chow-Robbins at 10^5 tosses: about 1.5e10 table rows, refused for tables; its banded
    # solver needs none, and the env steps.
    with pytest.raises(ValueError, match=r"horizon=100000 gives tables of about 1.5e\+10"):
        baselines.evaluate("heads-exceed-tails", "dice_envs/ChowRobbins-v0", horizon=10**5)
    assert 0.79 < baselines.solve("dice_envs/ChowRobbins-v0", horizon=10**5).value < 0.7930
    env = gym.make("dice_envs/ChowRobbins-v0", horizon=10**5)
    env.reset(seed=0)
    assert env.step(1)[0].tolist()[0] == 1
    with pytest.raises(ValueError, match="max_turn_score=10000000 gives tables"):
        baselines.tabulate("dice_envs/TenThousand-v0", max_turn_score=10**7)

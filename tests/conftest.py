import pytest

import dice_envs

# (env id, keyword arguments): every registered id with each of its registration's small
# argument sets, so a new game is covered by registering it.
CASES = [(env_id, kwargs) for env_id, game in dice_envs.GAMES.items() for kwargs in game.examples]


def case_id(case) -> str:
    env_id, kwargs = case
    return env_id.split("/")[1] + "".join(f"-{k}={v}" for k, v in kwargs.items())


@pytest.fixture(autouse=True)
def registrations_do_not_leak():
    """Every game a test registers is taken out of both registries when the test ends."""
    before = set(dice_envs.GAMES)
    yield
    for env_id in set(dice_envs.GAMES) - before:
        dice_envs.unregister_game(env_id)

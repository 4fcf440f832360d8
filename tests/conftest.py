import dice_envs

# (env id, keyword arguments): every registered id with each of its registration's small
# argument sets, so a new game is covered by registering it.
CASES = [(env_id, kwargs) for env_id, game in dice_envs.GAMES.items() for kwargs in game.examples]


def case_id(case) -> str:
    env_id, kwargs = case
    return env_id.split("/")[1] + "".join(f"-{k}={v}" for k, v in kwargs.items())

import dice_envs  # noqa: F401  (registers the ids)

# (env id, keyword arguments): defaults and a few non-default settings, small enough to enumerate.
CASES = [
    ("dice_envs/SumAvoid-v0", {}),
    ("dice_envs/SumAvoid-v0", {"N": 7, "sides": 4}),
    ("dice_envs/SumAvoid-v0", {"N": 3, "sides": 8, "max_sum": 30}),
    ("dice_envs/D20Rounds-v0", {"rounds": 12}),
    ("dice_envs/D20Rounds-v0", {"rounds": 5, "sides": 6, "start_face": 3}),
    ("dice_envs/D20Rounds-v0", {"rounds": 1}),
]


def case_id(case) -> str:
    env_id, kwargs = case
    return env_id.split("/")[1] + "".join(f"-{k}={v}" for k, v in kwargs.items())

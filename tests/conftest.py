import dice_envs  # noqa: F401  (registers the ids)

# (env id, keyword arguments): defaults and a few non-default settings, small enough to enumerate.
CASES = [
    ("dice_envs/SumAvoid-v0", {}),
    ("dice_envs/SumAvoid-v0", {"N": 7, "sides": 4}),
    ("dice_envs/SumAvoid-v0", {"N": 3, "sides": 8, "max_sum": 30}),
    ("dice_envs/D20Rounds-v0", {"rounds": 12}),
    ("dice_envs/D20Rounds-v0", {"rounds": 5, "sides": 6, "start_face": 3}),
    ("dice_envs/D20Rounds-v0", {"rounds": 1}),
    ("dice_envs/Pig-v0", {"goal": 20}),
    ("dice_envs/Pig-v0", {"goal": 12, "opponent": "keep-pace", "agent_starts": False}),
    (
        "dice_envs/Pig-v0",
        {"goal": 10, "die_probs": (0.3, 0.1, 0.1, 0.1, 0.2, 0.2), "opponent": "optimal"},
    ),
    ("dice_envs/Pig-v0", {"goal": 3, "opponent": "random", "agent_starts": False}),
    ("dice_envs/TenThousand-v0", {}),
    ("dice_envs/TenThousand-v0", {"allowed_moves": [], "max_turn_score": 30}),
    ("dice_envs/TenThousand-v0", {"allowed_moves": ["5", "1", "t2"], "max_turn_score": 60}),
]


def case_id(case) -> str:
    env_id, kwargs = case
    return env_id.split("/")[1] + "".join(f"-{k}={v}" for k, v in kwargs.items())

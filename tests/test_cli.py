"""`python -m baselines` as a user runs it."""

import json
import subprocess
import sys

import pytest

from baselines.arguments import parse_kwargs


def run(*args):
    return subprocess.run(
        [sys.executable, "-m", "baselines", *args], capture_output=True, text=True, timeout=120
    )


def test_solve_json():
    result = run("solve", "dice_envs/SumAvoid-v0", "N=10", "--json")
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert round(data["value"], 3) == 13.217 and data["seconds"] >= 0
    assert data["bellman_residual"] <= 1e-9


def test_evaluate_json():
    result = run(
        "evaluate", "dice_envs/D20Rounds-v0", "rounds=2", "--policy", "take-anything", "--json"
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert data["value"] == pytest.approx(2.0) and data["optimal_value"] == pytest.approx(10.5)
    assert data["gap"] == pytest.approx(8.5)


def test_evaluate_optimal_has_no_gap():
    result = run("evaluate", "dice_envs/SumAvoid-v0", "N=6", "--policy", "optimal", "--json")
    assert abs(json.loads(result.stdout)["gap"]) <= 1e-9


@pytest.mark.parametrize(
    "args, message",
    [
        (("solve", "dice_envs/SumAvoid-v0", "N=1"), "N must be"),
        (("solve", "dice_envs/Nope-v0"), "env_id"),
        (("solve", "dice_envs/SumAvoid-v0", "oops"), "key=value"),
        (("evaluate", "dice_envs/SumAvoid-v0", "--policy", "dance"), "stop-at-K"),
    ],
)
def test_errors_are_clear(args, message):
    result = run(*args)
    assert result.returncode == 2 and message in result.stderr


def test_parse_kwargs():
    assert parse_kwargs(["N=10", "max_sum=None", "opponent=hold-at-20", "p=0.5"]) == {
        "N": 10,
        "max_sum": None,
        "opponent": "hold-at-20",
        "p": 0.5,
    }


def test_options_go_anywhere_in_the_alias():
    result = run("evaluate", "dice_envs/D20Rounds-v0", "--policy", "take-anything", "rounds=2")
    assert result.returncode == 0, result.stderr
    assert "value" in result.stdout

"""What the `dice-envs` command says when something goes wrong: a mistake in what the user
typed exits 2 with the usage line and one error naming the argument as typed; a defect exits 1
with one line saying it is an internal error (its traceback with --debug or DICE_ENVS_DEBUG=1)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import baselines
import dice_envs_cli
import training.report
import training.sweep
import training.train
import training.tune
from dice_envs_cli import main as cli_main

SCRIPT = Path(sys.executable).parent / "dice-envs"
CONFIGS = str(Path(__file__).parents[1] / "configs")
CONFIG = str(Path(CONFIGS) / "sum_avoid" / "qlearning.yaml")
INTERNAL = "(run with --debug or DICE_ENVS_DEBUG=1 for the traceback)"

# Per subcommand: arguments with one mistake, and what the error line must say of it.
USER_ERRORS = {
    "games": (["games", "pigg"], "no game is called 'pigg'; did you mean pig"),
    "solve": (["solve", "pig", "goal=0"], "goal must be an integer >= 1, got 0"),
    "evaluate": (
        ["evaluate", "pig", "goal=10", "--policy", "hold-at-20", "--where-lost", "-3"],
        "--where-lost must be a whole number >= 1",
    ),
    "exploitability": (
        ["exploitability", "pig", "goal=10", "--policy", "dance"],
        "--policy dance: dice_envs/Pig-v0 takes hold-at-K, keep-pace, random, "
        "two-player-optimal, optimal",
    ),
    "equilibrium": (
        ["equilibrium", "simultaneous_hog", "goal=6", "max_dice=2", "--at", "9,9"],
        "--at 9,9: a position is 0..6,0..6",
    ),
    "play": (["play", "sum_avoid", "N=1"], "N must be an integer >= 2, got 1"),
    "train": (["train", CONFIG, "--seed", "-1"], "--seed must be an integer >= 0"),
    "sweep": (["sweep", "--workers", "0"], "--workers must be >= 1, got 0"),
    "tune": (["tune", CONFIG, "--timesteps", "0"], "--timesteps must be in 1.."),
    "report": (["report", "--budget", "huge"], "argument --budget: invalid choice: 'huge'"),
}


@pytest.mark.parametrize("command", list(USER_ERRORS))
def test_a_mistake_exits_2_with_the_usage_and_the_argument_as_typed(command):
    argv, said = USER_ERRORS[command]
    done = subprocess.run(
        [str(SCRIPT), *argv], input="", capture_output=True, text=True, timeout=180
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert lines[0].startswith(f"usage: dice-envs {command} ")
    assert lines[-1].startswith(f"dice-envs {command}: error: ") and said in lines[-1], lines
    assert "Traceback" not in done.stderr


def _broken(*args, **kwargs):
    raise ValueError("too many values to unpack (expected 2)")


# Per subcommand: a function it calls (module, name) made to fail as a defect would, and its
# arguments, which are right.
DEFECTS = {
    "games": (dice_envs_cli, "game_record", ["games", "pig"]),
    "solve": (baselines, "solve", ["solve", "sum_avoid", "N=6"]),
    "evaluate": (baselines, "evaluate", ["evaluate", "sum_avoid", "N=6", "--policy", "optimal"]),
    "exploitability": (
        baselines,
        "exploitability",
        ["exploitability", "pig", "goal=5", "--policy", "hold-at-3"],
    ),
    "equilibrium": (baselines, "equilibrium", ["equilibrium", "simultaneous_hog", "goal=4"]),
    "play": (None, "play", ["play", "sum_avoid", "N=6"]),
    "train": (training.train, "run", ["train", CONFIG, "--runs", "RUNS"]),
    "sweep": (
        training.sweep,
        "sweep",
        ["sweep", "--configs", CONFIGS, "--games", "sum_avoid", "--runs", "RUNS"],
    ),
    "tune": (training.tune, "_fit", ["tune", CONFIG, "--runs", "RUNS"]),
    "report": (training.report, "build_report", ["report", "--configs", CONFIGS, "--runs", "RUNS"]),
}


@pytest.mark.parametrize("command", list(DEFECTS))
def test_a_defect_exits_1_with_one_internal_error_line(command, monkeypatch, capsys, tmp_path):
    module, name, argv = DEFECTS[command]
    if module is None:  # play's module, imported when play starts
        import dice_envs_cli.play as module
    monkeypatch.setattr(module, name, _broken)
    monkeypatch.delenv("DICE_ENVS_DEBUG", raising=False)
    monkeypatch.chdir(tmp_path)
    argv = [str(tmp_path / "runs") if arg == "RUNS" else arg for arg in argv]
    if command == "play":  # play takes a ValueError for the user's: a defect is another error
        monkeypatch.setattr(module, name, _raise(KeyError("turn")))
    assert cli_main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith(f"dice-envs {command}: internal error: ")
    assert err[-1].endswith(INTERNAL) and "Traceback" not in "\n".join(err)
    if command != "play":
        assert "ValueError: too many values to unpack (expected 2)" in err[-1]
    # With --debug (or DICE_ENVS_DEBUG=1) the traceback comes first.
    monkeypatch.setenv("DICE_ENVS_DEBUG", "1")
    assert cli_main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback") and f"dice-envs {command}: internal error: " in err


def _raise(error: BaseException):
    def broken(*args, **kwargs):
        raise error

    return broken


def test_the_debug_option_shows_the_traceback(monkeypatch, capsys):
    monkeypatch.setattr(baselines, "solve", _broken)
    monkeypatch.delenv("DICE_ENVS_DEBUG", raising=False)
    assert cli_main(["solve", "sum_avoid", "--debug"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("Traceback") and "in _broken" in err
    assert err.strip().splitlines()[-1] == (
        "dice-envs solve: internal error: ValueError: too many values to unpack (expected 2)"
    )


def test_a_policy_that_answers_what_the_game_does_not_take_is_the_users(tmp_path, capsys):
    table = np.zeros((3, 21), dtype=np.int64)
    table[1, 5] = 7  # no such action: found while the evaluation asks the table
    np.save(tmp_path / "policy.npy", table)
    with pytest.raises(SystemExit) as exit_:
        cli_main(["evaluate", "d20_rounds", "rounds=2", "--policy", str(tmp_path / "policy.npy")])
    assert exit_.value.code == 2
    assert f"error: --policy {tmp_path / 'policy.npy'}: the policy chose action 7 for " in (
        capsys.readouterr().err
    )


def _object_file(path: Path) -> None:
    np.save(path, np.array([{"hold": 1}], dtype=object), allow_pickle=True)


def _truncated_file(path: Path) -> None:
    np.save(path, np.zeros((3, 21), dtype=np.int64))
    path.write_bytes(path.read_bytes()[:100])


@pytest.mark.parametrize(
    "write, said",
    [
        (lambda path: path.write_bytes(b"not an array, but text " * 20), "is not a .npy file"),
        (_truncated_file, "is truncated or damaged"),
        (_object_file, "holds Python objects, not numbers"),
    ],
    ids=["garbage", "truncated", "objects"],
)
def test_a_bad_npy_policy_gets_one_line_naming_the_file_and_the_option(
    write, said, tmp_path, capsys
):
    path = tmp_path / "policy.npy"
    write(path)
    with pytest.raises(SystemExit) as exit_:
        cli_main(["evaluate", "d20_rounds", "rounds=2", "--policy", str(path)])
    assert exit_.value.code == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line.startswith(f"dice-envs evaluate: error: --policy: {path} {said}")
    assert "integer actions over the game's observation grid" in line
    assert "allow_pickle" not in line and "EOF" not in line


def test_errors_name_the_game_never_its_class(capsys):
    with pytest.raises(SystemExit):
        cli_main(["solve", "pig", "gaol=30"])
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert "dice_envs/Pig-v0 takes ['goal', 'sides'" in line and "PigVersus" not in line
    with pytest.raises(ValueError) as made:
        import gymnasium as gym

        gym.make("dice_envs/Pig-v0", gaol=30)
    assert "Versus" not in str(made.value)


def test_train_prints_its_steps_as_a_count(monkeypatch, capsys, tmp_path):
    result = {
        "value": 0.25, "optimal_value": 0.5, "gap": 0.25, "relative_gap": 0.5,
        "agreement": 0.75, "steps": 2_000_380, "seconds": 12.5, "status": "trained",
        "run_dir": str(tmp_path / "run"),
    }  # fmt: skip
    monkeypatch.setattr(training.train, "run", lambda *args, **kwargs: dict(result))
    assert cli_main(["train", CONFIG, "--runs", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "         steps: 2,000,380" in lines and "         value: 0.25" in lines
    assert lines[0].startswith("trained 2,000,380 steps in ")

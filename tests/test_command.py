"""The `dice-envs` console script, run as a user runs it (a subprocess of the installed
script), on small games."""

from __future__ import annotations

import io
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

import baselines
import dice_envs as dice_envs_package
from dice_envs_cli import main as cli_main
from training.run_policy import load_run_policy

SCRIPT = Path(sys.executable).parent / "dice-envs"
D20 = "dice_envs/D20Rounds-v0"


def dice_envs(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
    if not SCRIPT.exists():
        pytest.fail(f"the console script is not installed at {SCRIPT} (pip install -e .)")
    return subprocess.run(
        [str(SCRIPT), *args], input=stdin, capture_output=True, text=True, timeout=180
    )


def last_json(result: subprocess.CompletedProcess) -> dict:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_games_lists_every_registered_game():
    games = last_json(dice_envs("games", "--json"))["games"]
    ids = [game["env_id"] for game in games]
    assert ids == list(dice_envs_package.env_ids())
    pig = next(game for game in games if game["env_id"] == "dice_envs/Pig-v0")
    assert pig["players"] == "two" and pig["short_name"] == "pig"
    assert any("Neller" in reference for reference in pig["references"])
    policies = {row["name"]: row["description"] for row in pig["policies"]}
    assert list(policies) == ["hold-at-K", "keep-pace", "random", "two-player-optimal", "optimal"]
    assert policies["optimal"].startswith("the best response to its opponent hold-at-20")
    arguments = {row["name"]: row for row in pig["arguments"]}
    assert list(arguments) == ["goal", "sides", "die_probs", "opponent", "agent_starts"]
    assert (
        arguments["goal"]["default"] == 100
        and "an integer >= 1" in arguments["goal"]["description"]
    )
    assert arguments["opponent"]["default"] == "hold-at-20"


def test_games_of_one_game_by_its_short_name_says_what_each_argument_and_policy_is(capsys):
    record = cli_json("games", "hog")
    listed = cli_json("games")["games"]
    assert record == next(game for game in listed if game["env_id"] == "dice_envs/Hog-v0")
    out = io.StringIO()
    assert cli_main(["games", "Hog"], out=out) == 0  # the same game as text, case aside
    text = out.getvalue()
    assert text.startswith("dice_envs/Hog-v0 (hog): Hog to 100")
    # Each argument with its default and what it allows; each policy with its line.
    assert re.search(r"^  max_dice=10 +the most dice a turn may throw .*>= 1", text, re.M)
    assert re.search(r"^  dice-K +throws K dice every turn$", text, re.M)
    assert re.search(r"^  two-player-optimal +the two-player optimum", text, re.M)
    with pytest.raises(SystemExit) as exit_:
        cli_main(["games", "hogg"])
    assert exit_.value.code == 2
    assert "did you mean hog (dice_envs/Hog-v0)?" in capsys.readouterr().err


def test_solve_with_options_in_any_order():
    first = last_json(dice_envs("solve", "dice_envs/SumAvoid-v0", "N=10", "--json"))
    second = last_json(dice_envs("solve", "dice_envs/SumAvoid-v0", "--json", "N=10"))
    assert round(first["value"], 3) == 13.217 and first["value"] == second["value"]
    assert first["bellman_residual"] <= 1e-9


def test_evaluate_a_named_policy_and_a_saved_table(tmp_path):
    named = last_json(dice_envs("evaluate", "--policy", "take-anything", D20, "rounds=2", "--json"))
    # By hand: taking the 1 showing twice pays 2; the optimum rerolls, then takes: 10.5.
    assert named["value"] == pytest.approx(2.0) and named["optimal_value"] == pytest.approx(10.5)
    table = np.zeros((3, 21), dtype=np.int64)  # rounds left, face: take everything...
    table[2, 1] = 1  # ...but reroll the first 1: reroll, then take a fair d20's mean, 10.5
    np.save(tmp_path / "policy.npy", table)
    saved_table = str(tmp_path / "policy.npy")
    saved = last_json(dice_envs("evaluate", D20, "rounds=2", "--policy", saved_table, "--json"))
    assert saved["value"] == pytest.approx(10.5) and saved["gap"] == pytest.approx(0.0, abs=1e-9)
    # Where it loses: the one state the named policy misplays carries the whole gap.
    assert named["where_lost"][0]["observation"] == [2, 1]
    assert named["where_lost"][0]["loss"] == pytest.approx(8.5)


YAHTZEE_THREE_BOXES = ("yahtzee", "boxes=['chance','yahtzee','sixes']")


def cli_json(*argv: str) -> dict:
    out = io.StringIO()
    assert cli_main([*argv, "--json"], out=out) == 0
    return json.loads(out.getvalue().strip().splitlines()[-1])


def test_solve_prints_yahtzees_optimum():
    found = cli_json("solve", *YAHTZEE_THREE_BOXES)
    expected = baselines.solve("dice_envs/Yahtzee-v0", boxes=["chance", "yahtzee", "sixes"])
    assert found["value"] == pytest.approx(expected.value, abs=1e-9)
    assert found["states"] == expected.num_states == 30 and found["seconds"] >= 0


def test_evaluate_on_yahtzee_prints_value_gap_and_where_it_loses():
    found = cli_json("evaluate", *YAHTZEE_THREE_BOXES, "--policy", "greedy-turn")
    expected = baselines.evaluate(
        "greedy-turn", "dice_envs/Yahtzee-v0", boxes=["chance", "yahtzee", "sixes"]
    )
    assert found["value"] == pytest.approx(expected.value, abs=1e-9)
    assert found["gap"] == pytest.approx(expected.gap, abs=1e-9) and found["gap"] > 0.1
    rows = found["where_lost"]
    losses = [row["loss"] for row in rows]
    assert len(rows) == 5 and losses == sorted(losses, reverse=True)
    first = expected.where_lost(1)[0]
    assert (rows[0]["action"], rows[0]["optimal_action"]) == (first.action, first.optimal_action)
    assert rows[0]["observation"] == list(first.observation)
    assert 0 < sum(losses) <= found["gap"] + 1e-9
    optimal = cli_json("evaluate", *YAHTZEE_THREE_BOXES, "--policy", "optimal")
    assert optimal["gap"] == pytest.approx(0.0, abs=1e-9) and optimal["agreement"] == 1.0
    assert optimal["where_lost"] == []  # nothing lost beyond round-off


def test_exploitability_and_equilibrium_agree_with_the_library():
    found = last_json(
        dice_envs(
            "exploitability", "dice_envs/Pig-v0", "goal=10", "--policy", "hold-at-5", "--json"
        )
    )
    expected = baselines.exploitability("hold-at-5", "dice_envs/Pig-v0", goal=10)
    assert found["value"] == pytest.approx(expected.value, abs=1e-9) and found["value"] > 0
    equilibrium = last_json(
        dice_envs(
            "equilibrium", "dice_envs/SimultaneousHog-v0", "goal=6", "max_dice=2",
            "--at", "0,0", "3,4", "--json",
        )
    )  # fmt: skip
    assert equilibrium["value"] == pytest.approx(0.5)
    assert sum(equilibrium["strategy at 3,4"]) == pytest.approx(1.0)


def test_a_short_name_stands_for_its_id_in_every_subcommand(capsys):
    def run(*argv: str) -> dict:
        out = io.StringIO()
        assert cli_main([*argv, "--json"], out=out) == 0
        return json.loads(out.getvalue().strip().splitlines()[-1])

    for command in (["solve"], ["evaluate", "--policy", "stop-at-25"]):
        by_id = run(command[0], "dice_envs/SumAvoid-v0", "N=10", *command[1:])
        for name in ("sum_avoid", "SumAvoid", "sum-avoid"):
            by_name = run(command[0], name, "N=10", *command[1:])
            assert (by_name["env_id"], by_name["value"]) == (
                "dice_envs/SumAvoid-v0",
                by_id["value"],
            )
    with pytest.raises(SystemExit) as exit_:  # a name that is no game's: the closest, in one line
        cli_main(["solve", "sum_avoidd"], out=io.StringIO())
    assert exit_.value.code == 2
    error = capsys.readouterr().err.splitlines()[-1]
    assert error == (
        "dice-envs solve: error: no game is called 'sum_avoidd'; did you mean sum_avoid "
        "(dice_envs/SumAvoid-v0)?"
    )


def test_the_plain_output_aligns_its_fields_and_lists_the_games_in_blocks():
    out = io.StringIO()
    assert cli_main(["exploitability", "pig", "goal=30", "--policy", "hold-at-20"], out=out) == 0
    lines = out.getvalue().splitlines()
    assert "best_response_value: 0.6004202722" in lines
    assert "          policy_is: rolls until the turn total reaches 20, then holds" in lines
    assert len({line.index(": ") for line in lines}) == 1, lines  # one column of colons
    out = io.StringIO()
    assert cli_main(["games"], out=out) == 0
    block = out.getvalue().split("\ndice_envs/Pig-v0\n")[1].split("\n\n")[0].splitlines()
    assert [line.split(":")[0].strip() for line in block] == [
        "short name", "players", "summary", "arguments", "policies"
    ]  # fmt: skip
    assert block[3].endswith(
        ": goal=100, sides=None, die_probs=None, opponent='hold-at-20', agent_starts=None"
    )
    assert block[4].endswith(": hold-at-K; keep-pace; random; two-player-optimal; optimal")


def test_a_gap_of_round_off_prints_as_0_and_nothing_lost_says_none():
    out = io.StringIO()
    assert cli_main(["evaluate", "pig", "goal=30", "--policy", "optimal"], out=out) == 0
    lines = [line.strip() for line in out.getvalue().splitlines()]
    assert "gap: 0" in lines and "relative_gap: 0" in lines
    assert "where_lost: none (no observation loses more than round-off)" in lines
    data = cli_json("evaluate", "pig", "goal=30", "--policy", "optimal")
    assert data["where_lost"] == [] and abs(data["gap"]) <= 1e-12  # the number as computed
    out = io.StringIO()
    assert cli_main(["evaluate", "pig", "goal=30", "--policy", "hold-at-20"], out=out) == 0
    gap = cli_json("evaluate", "pig", "goal=30", "--policy", "hold-at-20")["gap"]
    assert f"gap: {gap:.10g}" in [line.strip() for line in out.getvalue().splitlines()]


def test_a_solve_whose_tables_were_not_built_says_its_count_was_not_measured(monkeypatch):
    solve = baselines.solve

    def unmeasured(*args, **kwargs):  # as a specialised solve past the tables' size
        solution = solve(*args, **kwargs)
        solution.measure_on(lambda: None)
        solution._measure, solution.num_states, solution.bellman_residual = None, -1, math.nan
        return solution

    monkeypatch.setattr(baselines, "solve", unmeasured)
    out = io.StringIO()
    assert cli_main(["solve", "pig", "goal=30"], out=out) == 0
    lines = [line.strip() for line in out.getvalue().splitlines()]
    for key in ("states", "bellman_residual"):
        assert f"{key}: not measured (no tables at these arguments)" in lines
    data = cli_json("solve", "pig", "goal=30")
    assert data["states"] is None and data["bellman_residual"] is None
    assert data["table_seconds"] is None and data["value"] > 0.5


def test_counts_print_with_separators_in_text_and_as_numbers_in_json():
    out = io.StringIO()
    assert cli_main(["solve", "pig", "goal=30"], out=out) == 0
    assert "             states: 2,856" in out.getvalue().splitlines()
    assert cli_json("solve", "pig", "goal=30")["states"] == 2856


def test_output_into_a_pipe_its_reader_closed_ends_quietly():
    # As `dice-envs games | head -1`, with the reader gone before the first write.
    process = subprocess.Popen(
        [str(SCRIPT), "games"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    process.stdout.close()
    stderr = process.communicate(timeout=180)[1]
    assert process.returncode == 1 and stderr == "", stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (("solve", "dice_envs/SumAvoid-v0", "N=1"), "N must be"),
        (("solve", "dice_envs/Nope-v0"), "no game is called 'dice_envs/Nope-v0'"),
        (("solve", "dice_envs/SumAvoid-v0", "oops"), "key=value"),
        (("evaluate", "dice_envs/SumAvoid-v0", "--policy", "dance"), "stop-at-K"),
        (("evaluate", D20, "--policy", "missing.npy"), "does not exist"),
        (("fly",), "invalid choice"),
    ],
)
def test_errors_are_clear(args, message):
    result = dice_envs(*args)
    assert result.returncode == 2 and message in result.stderr


SUBCOMMANDS = "games solve evaluate exploitability equilibrium play train sweep tune report"


@pytest.mark.parametrize("command", SUBCOMMANDS.split())
def test_every_subcommand_has_help(command, capsys):
    # In this process (the script's own `--help` runs as a subprocess below): ten fresh
    # interpreters importing torch cost more than the rest of this file.
    with pytest.raises(SystemExit) as exit_:
        cli_main([command, "--help"])
    assert exit_.value.code == 0 and "usage:" in capsys.readouterr().out, command


def test_the_script_prints_its_help():
    result = dice_envs("--help")
    assert result.returncode == 0 and "usage:" in result.stdout
    assert all(command in result.stdout for command in SUBCOMMANDS.split())


def test_a_run_folder_is_taken_for_its_game_with_the_defaults_named_or_not(tmp_path):
    from dice_envs_cli import load_policy

    tables, optimum = baselines.enumerated(D20, rounds=3)
    config = {"env_id": D20, "env_kwargs": {"rounds": 3, "sides": 20}, "algo": "qlearning"}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    np.save(tmp_path / "actions.npy", optimum.policy.astype(np.int16))
    for kwargs in ({"rounds": 3}, {"rounds": 3, "sides": 20, "start_face": 1}):
        policy = load_policy(str(tmp_path), D20, kwargs)
        assert baselines.evaluate(policy, D20, **kwargs).gap == pytest.approx(0.0, abs=1e-12)
    for env_id, kwargs in ((D20, {"rounds": 4}), (D20, {"rounds": 3, "sides": 12})):
        with pytest.raises(ValueError, match="was trained on .*name the same game"):
            load_policy(str(tmp_path), env_id, kwargs)


def test_a_run_folder_in_the_older_state_order_becomes_a_grid_table(tmp_path):
    tables, optimum = baselines.enumerated(D20, rounds=3)
    (tmp_path / "config.yaml").write_text(
        yaml.safe_dump({"env_id": D20, "env_kwargs": {"rounds": 3}, "algo": "qlearning"})
    )
    np.save(tmp_path / "actions.npy", optimum.policy.astype(np.int16))
    env_id, kwargs, table = load_run_policy(tmp_path)
    assert (env_id, kwargs, table.shape) == (D20, {"rounds": 3}, (4, 21))
    assert baselines.evaluate(table, D20, rounds=3).gap == pytest.approx(0.0, abs=1e-12)
    assert table[0, 0] == -1  # no state has that observation
    run = last_json(dice_envs("evaluate", D20, "rounds=3", "--policy", str(tmp_path), "--json"))
    assert run["gap"] == pytest.approx(0.0, abs=1e-9)


def test_work_over_the_memory_limit_is_refused_before_it_starts(capsys, monkeypatch):
    monkeypatch.delenv("DICE_ENVS_MAX_MEMORY", raising=False)
    with pytest.raises(SystemExit) as stop:
        cli_main(["solve", "pig", "goal=30", "--max-memory", "1M"])
    assert stop.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith("dice-envs solve: error: dice_envs/Pig-v0 goal=30: solve would need")
    assert "over the memory limit of 1 MB (--max-memory 1M)" in error and "lower goal" in error
    assert "DICE_ENVS_MAX_MEMORY" not in os.environ  # the limit held for the command alone
    with pytest.raises(SystemExit):
        cli_main(["play", "pig", "goal=30", "--max-memory", "1M"], stdin=io.StringIO(""))
    assert "play would need" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli_main(["evaluate", "pig", "--policy", "hold-at-20", "--max-memory", "lots"])
    assert "--max-memory must be a size such as 8G or 500M, got 'lots'" in capsys.readouterr().err
    out = io.StringIO()  # raised, the limit lets the same command run
    assert cli_main(["solve", "pig", "goal=30", "--max-memory", "4G"], out=out) == 0
    assert "value: 0.6004202722" in out.getvalue() and capsys.readouterr().err == ""

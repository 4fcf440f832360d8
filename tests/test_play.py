"""`dice-envs play` on the table games: the moves a person types, the numbers shown, what a
roll loses, what the values are said to mean, and the solutions kept on disk."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import baselines
import dice_envs_cli as cli
from dice_envs import make_model
from dice_envs_cli import solve_cache
from dice_envs_cli.play import lost_stake, parse_move, play, what_the_values_mean
from dice_envs_cli.prompt import PROMPT

ROOT = Path(__file__).resolve().parent.parent
PIG, HOG, D20 = "dice_envs/Pig-v0", "dice_envs/Hog-v0", "dice_envs/D20Rounds-v0"
TEN_THOUSAND = "dice_envs/TenThousand-v0"


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    """An empty cache folder of this test's own."""
    monkeypatch.setenv(solve_cache.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def played(env_id: str, kwargs: dict, seed: int, lines: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    status = play(env_id, kwargs, seed, io.StringIO("".join(f"{line}\n" for line in lines)), out)
    return status, out.getvalue()


def test_a_move_is_typed_by_its_name_its_first_letters_or_its_count():
    hog = make_model(HOG).action_names  # "1 die", "2 dice", ... "10 dice"
    every = list(range(10))
    assert parse_move("5", hog, every) == 4  # five dice, not six (actions count from 0)
    assert parse_move("10", hog, every) == 9
    assert parse_move("5 Dice", hog, every) == 4
    assert parse_move("1", hog, every) == 0
    assert "no move here" in parse_move("11", hog, every)
    assert "not allowed now" in parse_move("7", hog, [0, 1, 2])
    pig = make_model(PIG).action_names  # hold, roll
    assert parse_move("r", pig, [0, 1]) == parse_move("ROLL", pig, [0, 1]) == 1
    assert parse_move("ho", pig, [0, 1]) == 0
    assert "hold is not allowed now; the moves now: roll" in parse_move("hold", pig, [1])
    assert "no move here" in parse_move("1", pig, [0, 1])  # no count: numbers mean nothing
    ten = make_model(TEN_THOUSAND).action_names
    assert parse_move("give back 55", ten, range(15)) == ten.index("give back 55")
    assert parse_move("give back 5", ten, range(15)) == ten.index("give back 5")  # not 55
    assert "could be give back 5 or give back 1" in parse_move("give", ten, [2, 3])


def test_a_roll_that_loses_the_turn_total_says_so():
    pig = make_model(PIG, goal=20)  # observations (own, opponent, turn total)
    assert lost_stake(pig, (4, 6, 9), (4, 11, 0), 0.0, False) == "your turn total of 9 is lost"
    assert lost_stake(pig, (4, 6, 9), (13, 11, 0), 0.0, False) is None  # banked: a hold
    assert lost_stake(pig, (4, 6, 9), (4, 6, 12), 0.0, False) is None  # still rolling
    assert lost_stake(pig, (4, 6, 0), (4, 9, 0), 0.0, False) is None  # nothing at stake
    assert lost_stake(pig, (4, 6, 9), (4, 20, 0), 0.0, True) == "your turn total of 9 is lost"
    assert lost_stake(pig, (14, 6, 5), (20, 6, 0), 1.0, True) is None  # won
    two_dice = make_model("dice_envs/TwoDicePig-v0", goal=50)  # a double 1 loses the score
    assert lost_stake(two_dice, (30, 6, 9), (0, 8, 0), 0.0, False) == (
        "your turn total of 9 is lost, and your own score fell from 30 to 0"
    )
    solitaire = make_model("dice_envs/PigSolitaire-v0", goal=20)  # (score, turn total)
    assert lost_stake(solitaire, (4, 9), (4, 0), -1.0, False) == "your turn total of 9 is lost"
    ten = make_model(TEN_THOUSAND)  # no score: a bust ends the turn paying nothing
    assert lost_stake(ten, (7, 2, 1), (7, 0, 0), 0.0, True) == "your turn score of 7 is lost"
    assert lost_stake(ten, (7, 2, 1), (7, 0, 0), 7.0, True) is None  # stopped: paid
    assert lost_stake(make_model(HOG), (4, 6), (4, 9), 0.0, False) is None  # no turn total


def test_pig_says_when_a_roll_of_one_lost_the_turn_total():
    # Seed 3 at goal 20: rolls of 5 and 4, then a 1 with a turn total of 9.
    status, out = played(PIG, {"goal": 20}, 3, ["roll", "roll", "roll", "quit"])
    assert status == 0
    assert "you chose roll: the best move; your turn total of 9 is lost" in out
    after = out.split("your turn total of 9 is lost")[1]
    assert "you 0, opponent 0, your turn total 0 (goal 20)" in after
    assert "last action roll | rolls 1 |" in after


def test_the_values_are_said_to_mean_what_the_game_is():
    def meaning(env_id, **kwargs):
        return what_the_values_mean(env_id, make_model(env_id, **kwargs), 0.5)

    for env_id in (TEN_THOUSAND, "dice_envs/HogSolitaire-v0", "dice_envs/SumAvoid-v0"):
        text = meaning(env_id)
        assert "first" not in text and "win" not in text, env_id
        assert text.startswith("Optimal play expects a return of 0.5 from the start")
    assert "averaged" not in meaning(TEN_THOUSAND)  # one start state

    class TwoStarts:
        def initial_states(self):
            return [(0.5, 1), (0.5, 2)]

    assert "from the start (averaged over how it starts)" in what_the_values_mean(
        TEN_THOUSAND, TwoStarts(), 0.5
    )
    assert "Against hold-at-20 (a fair coin says who moves first)" in meaning(PIG, goal=20)
    assert "(you move first)" in meaning(PIG, goal=20, agent_starts=True)
    assert "(the opponent moves first)" in meaning(PIG, goal=20, agent_starts=False)
    simultaneous = meaning("dice_envs/SimultaneousHog-v0", goal=20)
    assert "Against five-dice (you both move at once" in simultaneous
    assert "who moves first" not in simultaneous
    assert "wins with probability 0.5" in simultaneous


def test_the_numbers_shown_and_what_a_choice_gave_up():
    # D20 Rounds, two rounds, seed 0: round 1 shows a 1. Rerolling is worth 10.5 (the mean
    # of the last round's face); taking it is worth 1 + 1 (the last round keeps the 1 if
    # not rerolled): taking gives up 8.5. The last round takes its 1, the best move.
    status, out = played(D20, {"rounds": 2}, 0, ["take", "fold", "0", "t"])
    assert status == 0
    rows = re.findall(r"^  (take|reroll)\s+(\S+)\s+(\S+)$", out, re.MULTILINE)
    assert rows[:2] == [("reroll", "10.5", "best"), ("take", "2", "8.5")]
    assert rows[2:] == [("take", "1", "best"), ("reroll", "0", "1")]
    assert "you chose take: gave up 8.5 against reroll; reward 1" in out
    assert "'fold' is no move here; the moves now: take, reroll" in out
    assert "'0' is no move here" in out  # names, not numbers
    assert "you chose take: the best move; reward 1" in out
    assert "game over: return 2; your 2 moves gave up 8.5 in expectation" in out
    assert "expected return from\n  the start is 10.5)" in out or "start is 10.5)" in out


def test_every_command_works_in_a_table_game():
    status, out = played(HOG, {"goal": 20}, 4, ["?", "help", "hint", "best", "5", "quit"])
    assert status == 0
    blocks = out.split(PROMPT)
    listing = re.findall(r"^  (\d+ dic?e)\s", blocks[1], re.MULTILINE)
    assert sorted(listing, key=lambda name: int(name.split()[0])) == [
        "1 die",
        *[f"{n} dice" for n in range(2, 11)],
    ]  # ? lists all ten, best first
    assert "you 0, opponent 0, your throw (goal 20)" in blocks[1]  # and the state again
    assert "A number is a count: 10 means 10 dice." in blocks[2]
    assert blocks[3].startswith("hint: 6 dice, worth 0.612787; best plays it")
    assert blocks[4].startswith("you chose 6 dice: the best move")
    # After 6 dice, five dice give up what the solution says they give up there.
    scores = re.search(r"^you (\d+), opponent (\d+), your throw \(goal 20\)$", blocks[4], re.M)
    values = baselines.solve(HOG, goal=20).action_values(tuple(map(int, scores.groups())))
    lost = f"{np.nanmax(values) - values[4]:.6g}"
    best = f"{np.nanargmax(values) + 1} dice"
    assert blocks[5].startswith(f"you chose 5 dice: gave up {lost} against {best}")
    thrown = re.findall(r"last action 5 dice \| rolls ((?:\d ?)+)", blocks[5])[0].split()
    assert len(thrown) == 5  # typing 5 threw five dice
    assert f"your 2 moves gave up {lost} in expectation" in blocks[-1].replace("\n  ", " ")


def test_the_input_ending_or_a_quit_stops_the_game_cleanly():
    assert played(D20, {"rounds": 3}, 0, [])[0] == 1
    assert "input ended before the game did" in played(D20, {"rounds": 3}, 0, [])[1]
    assert played(D20, {"rounds": 3}, 0, ["q"])[0] == 0


def test_solitaire_and_simultaneous_games_play_to_the_end():
    status, out = played(TEN_THOUSAND, {}, 0, ["best"] * 40)
    assert status == 0 and "game over: return" in out and "moves first" not in out
    status, out = played("dice_envs/SimultaneousHog-v0", {"goal": 20}, 0, ["best"] * 40)
    assert status == 0 and re.search(r"game over: return [01] \(you (win|lose)\)", out)
    assert "moves first" not in out


def test_a_cached_solution_gives_the_values_of_a_fresh_one(cache):
    kwargs = {"goal": 20}
    fresh = baselines.solve(PIG, **kwargs)
    path = solve_cache.store(PIG, kwargs, fresh)
    assert path.parent == cache and path.name.startswith("pig-")
    assert [p.name for p in cache.iterdir()] == [path.name]  # no temporary file left
    stored = solve_cache.load(PIG, kwargs)
    assert stored.value == fresh.value
    nvec = make_model(PIG, **kwargs).observation_nvec
    grid = np.stack(np.unravel_index(np.arange(np.prod(nvec)), nvec), axis=1)
    known = grid[fresh.indices_of(grid) >= 0]
    assert len(known) == len(stored.cells) > 0
    expected = fresh.action_values_batch(known)
    found = np.array([stored.action_values(tuple(obs)) for obs in known])
    np.testing.assert_array_equal(found, expected)  # exactly, NaN where illegal
    assert stored.value_at((3, 5, 4)) == fresh.value_at((3, 5, 4))
    with pytest.raises(KeyError):
        stored.action_values((21, 0, 0))
    # The defaults named or not, one file; other arguments, another.
    assert solve_cache.load(PIG, {"goal": 20, "opponent": "hold-at-20"}) is not None
    assert solve_cache.load(PIG, {"goal": 20, "opponent": "hold-at-25"}) is None
    assert solve_cache.cache_key(PIG, {"opponent": lambda obs: 1}) is None  # not plain


def test_a_cached_yahtzee_solution_gives_the_values_of_a_fresh_one(cache):
    from baselines.yahtzee import solve_yahtzee
    from dice_envs.games.yahtzee import TurnState, dice_index

    kwargs = {"joker": "free", "boxes": ["sixes", "full_house", "chance"]}
    fresh = solve_yahtzee(**kwargs)
    solve_cache.store("dice_envs/Yahtzee-v0", kwargs, fresh)
    stored = solve_cache.load("dice_envs/Yahtzee-v0", kwargs)
    assert stored is not fresh and stored.value == fresh.value
    assert stored.num_states == fresh.num_states
    for filled, dice, rolls in [(0, [6, 6, 2, 3, 3], 2), (1 << 12, [2, 2, 2, 5, 5], 1)]:
        card = TurnState(stored.model.absent | filled, 0, False)
        args = (card, dice_index(dice), rolls)
        np.testing.assert_array_equal(
            stored.turn_action_values(*args), fresh.turn_action_values(*args)
        )
    # Arrays under the right key that are not this game's values are not trusted.
    key = solve_cache.cache_key("dice_envs/Yahtzee-v0", kwargs)
    path = solve_cache.cache_path("dice_envs/Yahtzee-v0", key)
    for state_values in (fresh.state_values[:-1], np.full_like(fresh.state_values, np.nan)):
        np.savez(path, key=np.str_(key), value=fresh.value, state_values=state_values,
                 num_states=fresh.num_states)  # fmt: skip
        assert solve_cache.load("dice_envs/Yahtzee-v0", kwargs) is None


def test_a_damaged_cache_file_is_ignored_and_written_again(cache, monkeypatch):
    monkeypatch.setattr(solve_cache, "MIN_SECONDS", 0.0)  # keep even a quick solve
    kwargs = {"goal": 15}
    said: list[str] = []
    solve_cache.cached_solution(PIG, kwargs, said.append)
    path = solve_cache.cache_path(PIG, solve_cache.cache_key(PIG, kwargs))
    good = path.read_bytes()
    damaged = {
        "garbage": b"not a zip file at all",
        "truncated": good[: len(good) // 2],
        "bit flipped": good[:-200] + bytes([good[-200] ^ 0xFF]) + good[-199:],
    }
    for kind, data in damaged.items():
        path.write_bytes(data)
        said.clear()
        solution = solve_cache.cached_solution(PIG, kwargs, said.append)
        assert said[0].startswith("solving dice_envs/Pig-v0 exactly"), kind
        assert solution.value == baselines.solve(PIG, **kwargs).value
        assert path.read_bytes() != data, kind  # written again
        said.clear()
        solve_cache.cached_solution(PIG, kwargs, said.append)
        assert said == [f"the exact solution, solved before, read from {cache}"], kind
    # A file of another game of the same shape (renamed into place) is not trusted either.
    other = {"goal": 15, "opponent": "hold-at-10"}
    solve_cache.cached_solution(PIG, other, said.append)
    path.write_bytes(solve_cache.cache_path(PIG, solve_cache.cache_key(PIG, other)).read_bytes())
    assert solve_cache.load(PIG, kwargs) is None


def test_a_solve_is_announced_with_the_time_its_last_rate_gives(cache, monkeypatch):
    said: list[str] = []
    solve_cache.cached_solution(PIG, {"goal": 15}, said.append)
    assert said[0] == "solving dice_envs/Pig-v0 exactly ..."  # no rate measured yet
    assert not cache.exists()  # a quick solve is not kept
    solve_cache.record_rate(PIG, 1000, 2.0)  # 500 a second
    size, unit = solve_cache.size_of(PIG, {"goal": 16})
    assert (size, unit) == (17 * 17 * 16 * 2, "observation-action pairs")
    said.clear()
    solve_cache.cached_solution(PIG, {"goal": 16}, said.append)
    assert said[0] == (
        f"solving dice_envs/Pig-v0 exactly: about {size / 500:.2g} s ({size:,} "
        "observation-action pairs at 500 a second, the rate of this machine's last solve of "
        "the game) ..."
    )
    (cache / solve_cache.RATES_FILE).write_text("{not json")
    assert solve_cache.recorded_rate(PIG) is None  # a damaged record is no rate


def test_the_cache_folder_and_clearing_it(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(solve_cache.CACHE_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert solve_cache.cache_dir() == tmp_path / "xdg" / "dice-envs"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert solve_cache.cache_dir() == tmp_path / "home" / ".cache" / "dice-envs"
    monkeypatch.setenv(solve_cache.CACHE_ENV, str(tmp_path / "mine"))
    assert solve_cache.cache_dir() == tmp_path / "mine"
    solve_cache.store(PIG, {"goal": 10}, baselines.solve(PIG, goal=10))
    solve_cache.record_rate(PIG, 10, 1.0)
    (tmp_path / "mine" / "notes.txt").write_text("not ours")
    with pytest.raises(SystemExit) as stopped:  # no game needed, as for --help
        cli.main(["play", "--clear-cache"], stdin=io.StringIO(""), out=io.StringIO())
    assert stopped.value.code == 0
    assert capsys.readouterr().out.startswith("removed 2 files (")
    assert [p.name for p in (tmp_path / "mine").iterdir()] == ["notes.txt"]


def test_the_second_launch_reads_the_solution_the_first_kept(cache):
    # Two processes, as a person launches the command twice; the solve is kept whatever it
    # took (the threshold is the cache's MIN_SECONDS: patched through a tiny wrapper).
    wrapper = (
        "import sys; from dice_envs_cli import solve_cache, main; "
        "solve_cache.MIN_SECONDS = 0.0; sys.exit(main())"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", wrapper, "play", "pig", "goal=12", "--seed", "1"],
            input="best\nq\n",
            capture_output=True,
            text=True,
            timeout=180,
            cwd=ROOT,
        )
        for _ in range(2)
    ]
    assert [run.returncode for run in runs] == [0, 0], runs[0].stderr + runs[1].stderr
    assert "solving dice_envs/Pig-v0 exactly" in runs[0].stdout
    assert "kept on disk for next time" in runs[0].stdout
    unwrapped = runs[1].stdout.replace("\n  ", " ")
    assert f"read from {cache}" in unwrapped and "solving" not in unwrapped
    first, second = (run.stdout.split("Type a move", 1)[1] for run in runs)
    assert first == second  # the same values, the same game
    rates = json.loads((cache / solve_cache.RATES_FILE).read_text())
    assert rates[PIG]["size"] == 13 * 13 * 12 * 2


def test_playing_a_cached_game_loads_neither_scipy_stats_nor_torch():
    # What a cached launch imports (the player, the cache, Yahtzee's solution) leaves out the
    # half second of scipy.stats and the seconds of torch: `dice-envs play` starts at once.
    code = (
        "import sys; import dice_envs_cli.play, dice_envs_cli.play_yahtzee, baselines.yahtzee; "
        "print(sorted(m for m in ('scipy.stats', 'torch') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=180, cwd=ROOT
    )
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr + done.stdout
    from scipy.stats import norm

    from baselines.sampled_gap import Z_95

    assert float(norm.ppf(0.975)) == Z_95  # the constant written out for it

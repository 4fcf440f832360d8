"""The library's report and sweep, and the repository's report and page writer (docs/tools),
write only where the user asks: run from any folder, they leave the repository (its README,
its docs, the installed packages) unchanged and put every file under `--out` (default:
dice-envs-report/<budget> of the folder)."""

from pathlib import Path

import pytest
from repository import repository_state
from training_helpers import write_configs

import docs.tools.report
import training.report
import training.sweep
from docs.tools.game_pages import page_path, write_game_page
from training.config import load_config
from training.train import run

# Evaluated (and checkpointed) at the start and the end: the reports need a curve, not its
# length.
BUDGET = {"timesteps": 20_000, "eval_every": 20_000}


@pytest.fixture(scope="module")
def saved_runs(tmp_path_factory):
    """Two tiny Q-learning configs (a one-player game and a two-player one), two seeds each,
    trained into a run store outside the repository."""
    root = tmp_path_factory.mktemp("store")
    configs = write_configs(
        root / "configs",
        {
            "sum_avoid/qlearning": {"algo": "qlearning", "budget": BUDGET},
            "simultaneous_hog/qlearning": {"algo": "qlearning", "budget": BUDGET,
                                           "env_kwargs": {"goal": 8, "max_dice": 3},
                                           "evaluation": {"exploitability": True}},
        },
    )  # fmt: skip
    runs = root / "runs"
    for path in sorted(configs.glob("*/*.yaml")):
        for seed in (0, 1):
            run(load_config(path), seed, runs)
    return configs, runs


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def test_the_report_writes_only_under_its_out_folder(saved_runs, tmp_path, monkeypatch):
    configs, runs = saved_runs
    monkeypatch.chdir(tmp_path)
    before = repository_state()
    assert training.report.main(["--configs", str(configs), "--runs", str(runs)]) == 0
    written = _files(tmp_path)
    out = "dice-envs-report/quick"
    # The results table and one gap figure per game, nothing else.
    assert written == {f"{out}/report.md", f"{out}/sum_avoid.png", f"{out}/simultaneous_hog.png"}
    report = (tmp_path / out / "report.md").read_text()
    assert (
        "| simultaneous_hog (goal=8, max_dice=3, opponent=five-dice) | Q-learning, 2 seeds |"
        in report
    )
    assert "](simultaneous_hog.png)" in report and "](sum_avoid.png)" in report
    # An --out of the user's choice, relative to the folder.
    assert training.report.main(["--configs", str(configs), "--runs", str(runs),
                                 "--out", "mine"]) == 0  # fmt: skip
    assert (tmp_path / "mine/report.md").read_text() == report
    assert repository_state() == before


def test_the_repositorys_report_writes_only_under_its_out_folder(saved_runs, tmp_path, monkeypatch):
    configs, runs = saved_runs
    monkeypatch.chdir(tmp_path)
    before = repository_state()
    assert docs.tools.report.main(["--configs", str(configs), "--runs", str(runs)]) == 0
    written = _files(tmp_path)
    out = "dice-envs-report/quick"
    assert all(name.startswith(f"{out}/") for name in written), written
    assert {f"{out}/report.md", f"{out}/sum_avoid.png", f"{out}/monte_carlo.png"} <= written
    # Each trained game's training section, on its page under the report's folder.
    assert {f"{out}/games/sum_avoid.md", f"{out}/games/simultaneous_hog.md"} <= written
    page = (tmp_path / out / "games/simultaneous_hog.md").read_text()
    assert "(../simultaneous_hog_goal8_max_dice3_exploitability.png)" in page
    assert "| Q-learning, 2 seeds | five-dice |" in page
    assert not (tmp_path / out / "games/pig.md").exists()  # untrained games: no page
    # An --out of the user's choice, relative to the folder.
    assert docs.tools.report.main(["--configs", str(configs), "--runs", str(runs),
                                 "--out", "mine"]) == 0  # fmt: skip
    assert (tmp_path / "mine/report.md").read_text() == (tmp_path / out / "report.md").read_text()
    assert repository_state() == before


def test_the_sweep_and_the_page_writer_write_only_where_asked(
    tmp_path_factory, tmp_path, monkeypatch
):
    store = tmp_path_factory.mktemp("sweep")
    one_run = {"algo": "qlearning", "budget": BUDGET, "seeds": [0]}
    configs = write_configs(store / "configs", {"sum_avoid/qlearning": one_run})
    monkeypatch.chdir(tmp_path)
    before = repository_state()
    arguments = ["--configs", str(configs), "--runs", str(store / "runs"), "--workers", "1"]
    assert training.sweep.main(arguments) == 0
    path = write_game_page("dice_envs/SumAvoid-v0", Path("pages"))
    assert path == page_path("dice_envs/SumAvoid-v0", Path("pages"))
    written = _files(tmp_path)
    assert "pages/games/sum_avoid.md" in written and "dice-envs-report/quick/report.md" in written
    assert all(name.split("/")[0] in ("pages", "dice-envs-report") for name in written), written
    assert repository_state() == before

"""Reports of the run store: the report reads exactly the planned runs, rebuilds every table
and figure from saved runs alone, and writes the results page's sections."""

import json
import shutil

import numpy as np
import pytest
import yaml
from training_helpers import (
    CONFIGS,
    ROOT,
    TINY_PPO,
    changed,
    sweep,
    write_configs,
)

import baselines
import training.train
from docs.tools import report as repository_report
from training.config import load_config
from training.report import ReportError, build_report
from training.train import run


def _tiny_configs(folder):
    # One evaluation (with its checkpoint) besides the start: the reports need a curve, not
    # its length.
    return write_configs(
        folder,
        {
            "sum_avoid/qlearning": {
                "algo": "qlearning",
                "budget": {"timesteps": 20_000, "eval_every": 20_000},
            },
            # A second config of the same game and algorithm, side by side.
            "sum_avoid/qlearning_greedier": {
                "algo": "qlearning",
                "budget": {"timesteps": 20_000, "eval_every": 20_000},
                "hyperparams": {"epsilon": {"start": 0.5, "end": 0.05, "fraction": 0.5}},
            },
            "d20_rounds/qlearning": {
                "algo": "qlearning",
                "budget": {"timesteps": 20_000, "eval_every": 20_000},
            },
        },
    )


def test_the_report_reads_only_the_planned_runs(tmp_path):
    configs, runs, out = _tiny_configs(tmp_path / "configs"), tmp_path / "runs", tmp_path / "out"
    done = sweep("--configs", configs, "--runs", runs, "--out", out)
    assert done.returncode == 0, done.stderr
    assert "6 trained, 0 resumed from a checkpoint, 0 read back" in done.stderr
    report = (out / "report.md").read_text()
    assert "Q-learning, 2 seeds" in report and "Q-learning (qlearning_greedier), 2 seeds" in report
    # The repository's report (docs/tools) of the same store has the heuristics' rows too.
    assert "heuristic: stop-at-25" in repository_report.build_report(
        configs, "quick", runs, tmp_path / "repository"
    )
    assert len(list((runs / "sum_avoid" / "qlearning").iterdir())) == 4  # two configs x 2 seeds
    # Ad hoc: another seed, and an edited config, in the same store.
    config = load_config(configs / "sum_avoid" / "qlearning.yaml")
    run(config, 3, runs)
    run(changed(config, "hyperparams.gamma", 0.9), 0, runs)
    build_report(configs, "quick", runs, out)
    assert (out / "report.md").read_text() == report
    path = configs / "d20_rounds" / "qlearning.yaml"
    raw = yaml.safe_load(path.read_text())
    raw["seeds"] = [0, 1, 2]
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(ReportError, match="1 planned runs are not finished"):
        build_report(configs, "quick", runs, out)


def test_the_report_rebuilds_every_table_and_figure_from_saved_runs_alone(tmp_path, monkeypatch):
    configs = write_configs(
        tmp_path / "configs",
        {
            "sum_avoid/qlearning": {
                "algo": "qlearning",
                "budget": {"timesteps": 20_000, "eval_every": 20_000},
            },
            "sum_avoid/ppo": {
                "algo": "ppo",
                "budget": {"timesteps": 256, "eval_every": 128},
                "hyperparams": TINY_PPO,
            },
        },
    )
    runs, out = tmp_path / "runs", tmp_path / "out"
    done = sweep("--configs", configs, "--runs", runs, "--out", out, "--no-report")
    assert done.returncode == 0, done.stderr
    repository_report.build_report(configs, "quick", runs, out)
    figures = {"sum_avoid.png", "sum_avoid_losses.png", "sum_avoid_values.png", "monte_carlo.png",
               "sum_avoid_errors.png"}  # fmt: skip
    assert figures <= {p.name for p in out.iterdir()}
    report = (out / "report.md").read_text()
    assert "PPO, 2 seeds, stochastic policy" in report
    assert "(sum_avoid_losses.png)" in report and "(monte_carlo.png)" in report
    assert "(sum_avoid_values.png)" in report and "(sum_avoid_errors.png)" in report
    tables, optimum = baselines.enumerated("dice_envs/SumAvoid-v0", N=10)
    from stable_baselines3 import PPO

    observed = tuple(tables.observation_array.T)
    reachable = np.zeros(tuple(tables.model.observation_nvec), dtype=bool)
    reachable[observed] = True
    for directory in sorted(runs.glob("sum_avoid/*/seed*")):
        result = json.loads((directory / "result.json").read_text())
        # The saved actions are the final greedy policy over the observation grid (-1 where
        # no state is): evaluated as they are, they give the run's value.
        table = np.load(directory / "actions.npy")
        assert table.shape == reachable.shape == (103,) and table.dtype == np.int16
        assert (table[reachable] >= 0).all() and (table[~reachable] == -1).all()
        played = baselines.evaluate(table, "dice_envs/SumAvoid-v0", N=10)
        assert played.value == pytest.approx(result["value"], abs=1e-9)
        final = baselines.score_actions(table[observed], tables, optimum)
        assert final.gap == pytest.approx(result["gap"], abs=1e-12)
        assert final.losses.sum() == pytest.approx(result["gap"], abs=1e-9)
        if result["algo"] == "ppo":
            # The stochastic row is the saved model's action distribution, scored exactly.
            model = PPO.load(directory / "policy.zip", device="cpu")
            played = baselines.evaluate(model, "dice_envs/SumAvoid-v0", deterministic=False, N=10)
            assert played.value == pytest.approx(result["stochastic_value"], abs=1e-9)
            assert result["stochastic_value"] != pytest.approx(result["value"], abs=1e-6)
    # From the saved runs alone (and the sweep's record of its wall time): no training, and
    # the same report and figures again.
    pages = (out / "games" / "sum_avoid.md").read_text()
    for path in out.iterdir():
        if path.is_dir():
            shutil.rmtree(path)  # the games' pages
        elif path.name != "sweep.json":
            path.unlink()

    def no_training(*args, **kwargs):
        raise AssertionError("the report trained a run")

    monkeypatch.setattr(training.train, "_train", no_training)
    repository_report.build_report(configs, "quick", runs, out)
    assert (out / "report.md").read_text() == report
    assert figures <= {p.name for p in out.iterdir()}
    assert (out / "games" / "sum_avoid.md").read_text() == pages


def test_the_report_reads_saved_actions_as_a_grid_table_or_in_the_tables_order(tmp_path):
    from docs.tools.report import _final_actions

    tables, optimum = baselines.enumerated("dice_envs/Pig-v0", goal=12)
    rng = np.random.default_rng(0)
    actions = np.where(tables.legal[:, 1], rng.integers(0, 2, tables.num_states), 0)
    grid = np.full(tuple(tables.model.observation_nvec), -1, dtype=np.int16)
    grid[tuple(tables.observation_array.T)] = actions
    assert _final_actions(tmp_path, tables) is None  # no actions.npy: an older run
    np.save(tmp_path / "actions.npy", grid)
    assert np.array_equal(_final_actions(tmp_path, tables), actions)
    np.save(tmp_path / "actions.npy", actions.astype(np.int16))  # a run saved before the grid
    assert np.array_equal(_final_actions(tmp_path, tables), actions)
    np.save(tmp_path / "actions.npy", grid[:, :, :5])
    with pytest.raises(ReportError, match=r"shape \(13, 13, 5\): neither the observation grid"):
        _final_actions(tmp_path, tables)


def test_a_selection_with_no_config_of_the_budget_is_refused(tmp_path):
    # The default games are full-budget configs: asked for `quick` alone, nothing is planned.
    with pytest.raises(ReportError, match="has a `quick` budget"):
        build_report(CONFIGS, "quick", tmp_path / "runs", tmp_path / "out", ["pig/ppo_goal100"])
    assert not (tmp_path / "out").exists()


def test_the_results_full_section_shows_the_default_games_and_links_the_rest(tmp_path, monkeypatch):
    # The maintainer's tool (docs/tools/training_report.py) writes the results page's sections.
    from docs.tools.training_report import write_training_docs

    configs = write_configs(
        tmp_path / "configs",
        {
            "sum_avoid/qlearning": {"algo": "qlearning", "budget": {"timesteps": 20_000,
                                                                    "eval_every": 20_000}},
            "d20_rounds/qlearning": {"algo": "qlearning", "budget": {"timesteps": 20_000,
                                                                     "eval_every": 20_000}},
            "simultaneous_hog/qlearning": {"algo": "qlearning", "env_kwargs": {"goal": 8,
                                           "max_dice": 3}, "evaluation": {"exploitability": True},
                                           "budget": {"timesteps": 20_000, "eval_every": 20_000}},
        },
    )  # fmt: skip
    for path in sorted(configs.glob("*/*.yaml")):  # the same budget, named `full`
        raw = yaml.safe_load(path.read_text())
        raw["budgets"]["full"] = raw["budgets"]["quick"]
        path.write_text(yaml.safe_dump(raw, sort_keys=False))
    (configs / "targets.yaml").write_text(
        "- {name: SumAvoid within 1, configs: [sum_avoid/qlearning], measure: gap, bound: 1.0,"
        " of: every}\n- {name: not here, configs: [pig/qlearning], measure: gap, bound: 1.0,"
        " of: best}\n"
    )
    runs = tmp_path / "runs"
    for path in sorted(configs.glob("*/*.yaml")):
        for seed in (0, 1):
            run(load_config(path, "full"), seed, runs)
    results = tmp_path / "docs/results/training.md"  # the default page under docs
    results.parent.mkdir(parents=True)
    empty = "".join(f"<!-- {name}:start -->\n<!-- {name}:end -->\n" for name in
                    ("training", "training-timing", "training-full"))  # fmt: skip
    results.write_text(empty)
    monkeypatch.chdir(tmp_path)  # docs/ is relative to the folder, as in the repository
    write_training_docs(configs, "full", runs, full_configs=("sum_avoid/qlearning",))
    text = results.read_text()
    section = text.split("<!-- training-full:start -->")[1].split("<!-- training-full:end -->")[0]
    # The results and their times are the default games' alone.
    assert "`sum_avoid/qlearning.yaml`" in section
    assert "`d20_rounds/qlearning.yaml`" not in section and "d20_rounds.png" not in section
    assert "| d20_rounds |" not in section and "The 2 runs shown here took" in section
    assert "The other 2 configs" in section
    assert "(../training/full/report.md)" in section  # relative to docs/results/
    assert "(../training/full/sum_avoid.png)" in section
    # The targets whose configs are all in the report, judged; the others left out.
    assert "### Targets" in section and "| SumAvoid within 1 | Q-learning (sum_avoid/" in section
    assert "not here" not in section
    assert "## Targets" in (tmp_path / "docs/training/full/report.md").read_text()
    assert "<!-- training:start -->\n<!-- training:end -->" in text  # the quick ones untouched
    assert "d20_rounds" in (tmp_path / "docs/training/full/report.md").read_text()
    # A two-player game's page has its exploitability rows and curve.
    page = (tmp_path / "docs/games/simultaneous_hog.md").read_text()
    assert "| Q-learning, 2 seeds | five-dice |" in page, page
    assert "(../training/full/simultaneous_hog_goal8_max_dice3_exploitability.png)" in page
    assert "exploitability" not in (tmp_path / "docs/games/sum_avoid.md").read_text()
    # A game no config trains at this budget says so on its page.
    assert (
        "No config of this game has a `full` budget" in (tmp_path / "docs/games/pig.md").read_text()
    )
    # From the archive alone (`make report`): the report of every config archived.
    report = tmp_path / "docs/training/full/report.md"
    report.unlink()
    write_training_docs(configs, "full", full_configs=("sum_avoid/qlearning",))
    assert all(f"`{game}/qlearning.yaml`" in report.read_text()
               for game in ("sum_avoid", "d20_rounds", "simultaneous_hog"))  # fmt: skip
    # Archiving one config keeps the others archived, and the report is of them all. A
    # default config without archived runs is named in the page's section; its game's page
    # says it waits, and the older report's figures of it go.
    trained = (tmp_path / "docs/games/sum_avoid.md").read_text()
    assert "No config" not in trained and "| sum_avoid (N=10) | Q-learning, 2 seeds |" in trained
    figure = tmp_path / "docs/training/full/sum_avoid.png"
    assert figure.is_file()
    shutil.rmtree(tmp_path / "docs/training/runs/full/sum_avoid")
    results.write_text(empty)
    write_training_docs(configs, "full", runs, ["d20_rounds"], page=results,
                        full_configs=("sum_avoid/qlearning",))  # fmt: skip
    section = results.read_text().split("<!-- training-full:start -->")[1]
    assert "Not yet trained at the full budget by the current code (no archived runs): " \
        "`sum_avoid/qlearning`." in section  # fmt: skip
    assert "| SumAvoid within 1 |" not in section and "(../training/full/report.md)" in section
    assert "`simultaneous_hog/qlearning.yaml`" in report.read_text()
    assert "`sum_avoid/qlearning.yaml`" not in report.read_text()
    assert "Not yet trained at the `full` budget by the current code: no runs of " \
        "`sum_avoid/qlearning.yaml` are archived. `python -m training.sweep --budget full " \
        "--games sum_avoid/qlearning` trains them." in (tmp_path / "docs/games/sum_avoid.md") \
        .read_text()  # fmt: skip
    assert not figure.exists() and (tmp_path / "docs/training/full/d20_rounds.png").is_file()
    # A page without the section's markers is refused before any report is made.
    results.write_text("<!-- training:start -->\n<!-- training:end -->\n")
    with pytest.raises(ValueError, match="no <!-- training-full:start -->"):
        write_training_docs(configs, "full", runs, docs=tmp_path / "elsewhere", page=results)
    assert not (tmp_path / "elsewhere").exists()


def test_the_restamp_tool_checks_an_archived_run_by_evaluating_it_again(tmp_path):
    from docs.tools.restamp import reevaluated

    entry = ROOT / "docs" / "training" / "runs" / "quick" / "pig" / "qlearning" / "seed0"
    identity = yaml.safe_load((entry / "config.yaml").read_text())
    result = json.loads((entry / "result.json").read_text())
    assert reevaluated(entry, identity, result) is None
    result["gap"] += 1e-9
    assert reevaluated(entry, identity, result).startswith("gap ")


def test_a_quick_report_of_a_few_games_keeps_every_archived_config(tmp_path, monkeypatch):
    """`--games` at the quick budget chooses what is archived again; the report and the results
    page's sections stay of every config (not only of the games archived this time)."""
    from docs.tools.training_report import write_training_docs

    budget = {"timesteps": 5_000, "eval_every": 5_000}
    configs = write_configs(
        tmp_path / "configs",
        {
            "sum_avoid/qlearning": {"algo": "qlearning", "budget": budget, "seeds": [0]},
            "d20_rounds/qlearning": {"algo": "qlearning", "budget": budget, "seeds": [0]},
        },
    )
    runs = tmp_path / "runs"
    for path in sorted(configs.glob("*/*.yaml")):
        config = load_config(path, "quick")
        for seed in config["seeds"]:
            run(config, seed, runs)
    results = tmp_path / "docs/results/training.md"
    results.parent.mkdir(parents=True)
    results.write_text(
        "".join(
            f"<!-- {name}:start -->\n<!-- {name}:end -->\n"
            for name in ("training", "training-timing", "training-exploitability")
        )
    )
    monkeypatch.chdir(tmp_path)
    write_training_docs(configs, "quick", runs)
    write_training_docs(configs, "quick", runs, ["d20_rounds"])
    report = (tmp_path / "docs/training/report.md").read_text()
    section = results.read_text().split("<!-- training:start -->")[1]
    for game in ("sum_avoid", "d20_rounds"):
        assert f"`{game}/qlearning.yaml`" in report
        assert f"| {game} " in section or f"`{game}/qlearning.yaml`" in section

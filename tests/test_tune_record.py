"""training.tune without Ray: the search's seed kept apart from the report's, the winner's
order, a trial's record, and the tuning page written from records (the committed page kept
current with the committed records)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from training_helpers import CONFIGS

from docs.tools import tuning
from training.config import ConfigError, resolve_config
from training.runs import read_json, run_dir
from training.train import run
from training.tune import (
    SAMPLED,
    TUNE_SEED,
    check_search_seed,
    curve_point,
    final_score,
    finish_trial,
    main,
    objective,
    ranked,
    read_raw,
    report_seeds,
    seeds_text,
    with_params,
)
from training.tune import trial as tune_trial

SUM_AVOID = CONFIGS / "sum_avoid" / "qlearning.yaml"


def test_the_default_seed_is_one_no_committed_config_uses():
    for path in sorted(CONFIGS.glob("*/*.yaml")):
        assert TUNE_SEED not in report_seeds(read_raw(path), str(path)), path


def test_a_report_seed_is_refused_unless_allowed():
    raw = read_raw(SUM_AVOID)
    assert report_seeds(raw, "c") == [0, 1, 2, 3, 4]  # `seeds` and the full budget's seeds
    for seed in (0, 4):  # 4: only the full budget runs it
        with pytest.raises(ConfigError, match=rf"--seed {seed} is one of .*report seeds"):
            check_search_seed(seed, raw, "c")
    assert check_search_seed(4, raw, "c", allow=True) == 4
    assert check_search_seed(5, raw, "c") == 5
    # A config without `seeds` runs seed 0 (the default), which is then a report seed.
    del raw["seeds"], raw["budgets"]["full"]["seeds"]
    with pytest.raises(ConfigError, match="report seeds"):
        check_search_seed(0, raw, "c")


def test_the_command_refuses_a_report_seed_before_ray_starts(capsys):
    with pytest.raises(SystemExit) as exit_:
        main([str(SUM_AVOID), "--seed", "2"])
    assert exit_.value.code == 2
    error = capsys.readouterr().err
    assert "--seed 2 is one of" in error and "--allow-report-seed" in error


def test_a_tuned_config_needs_a_record(capsys):
    with pytest.raises(SystemExit) as exit_:
        main([str(SUM_AVOID), "--write-config", "tuned.yaml"])
    assert exit_.value.code == 2
    assert "--write-config needs --record" in capsys.readouterr().err


def test_seeds_per_trial_below_one_are_refused_before_ray_starts(capsys):
    with pytest.raises(SystemExit) as exit_:
        main([str(SUM_AVOID), "--seeds", "0"])
    assert exit_.value.code == 2
    assert "--seeds must be >= 1, got 0" in capsys.readouterr().err


def tiny_sum_avoid() -> dict:
    raw = read_raw(SUM_AVOID)
    raw["budgets"]["quick"] = {"timesteps": 3072, "eval_every": 1024}
    raw["evaluation"] = {"episodes": 5}
    return raw


def test_a_trial_of_several_seeds_reports_the_mean_of_their_uninterrupted_runs(tmp_path):
    # The trial trains its runs side by side, stopping each after every checkpoint; each
    # reported point must be the mean over the seeds of the runs trained in one go (two seeds
    # take turns as any number do).
    raw, params, seeds = tiny_sum_avoid(), {"learning_rate.power": 0.7}, [1000, 1001]
    reported = []
    tune_trial(params, raw, "quick", seeds, str(tmp_path / "side"), report=reported.append)
    config = resolve_config(with_params(raw, params), "quick")
    curves = []
    for seed in seeds:
        run(config, seed, tmp_path / "whole")
        curves.append(read_json(run_dir(tmp_path / "whole", config, seed) / "curve.json"))
    assert [p["steps"] for p in reported] == [p["steps"] for p in curves[0]]
    assert len(reported) == 4  # steps 0, 1024, 2048, 3072
    for k, point in enumerate(reported):
        for key in ("relative_gap", "gap", "value"):
            assert point[key] == pytest.approx(np.mean([c[k][key] for c in curves]), abs=1e-12)
    assert len({c[-1]["relative_gap"] for c in curves}) > 1  # the seeds differ: a real mean
    # One seed: its own run's points, as they are.
    single = []
    tune_trial(params, raw, "quick", [1001], str(tmp_path / "whole"), report=single.append)
    assert single == [curve_point(p) for p in curves[1]]
    # Again on finished runs: read back, the same points.
    again = []
    tune_trial(params, raw, "quick", seeds, str(tmp_path / "side"), report=again.append)
    assert again == reported


def test_a_trial_does_not_train_a_run_already_past_the_point_it_reports(tmp_path):
    # An interrupted search run again: one seed's run stopped at its third point. The trial
    # reads the points it has and trains it only past them.
    raw, params, root = tiny_sum_avoid(), {"learning_rate.power": 0.7}, tmp_path / "runs"
    config = resolve_config(with_params(raw, params), "quick")
    run(config, 1001, root, stop_after=2048)
    ahead = run_dir(root, config, 1001) / "curve.json"
    lengths = []
    tune_trial(params, raw, "quick", [1000, 1001], str(root),
               report=lambda point: lengths.append(len(read_json(ahead))))  # fmt: skip
    assert lengths == [3, 3, 3, 4]  # trained on only when the trial reached its fourth point


def test_a_search_whose_later_seeds_are_report_seeds_is_refused(tmp_path, capsys):
    raw = read_raw(SUM_AVOID)
    raw["seeds"] = [0, 1, 1001]
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(raw, sort_keys=False))
    with pytest.raises(SystemExit) as exit_:
        main([str(config), "--seeds", "3"])
    assert exit_.value.code == 2
    assert "--seed 1000 with --seeds 3 runs seeds [1001], report seeds" in capsys.readouterr().err


def test_a_record_names_its_seeds():
    assert seeds_text({"seed": 1000}) == "seed 1000"  # a record from before --seeds
    assert seeds_text({"seed": 1000, "seeds": [1000]}) == "seed 1000"
    assert seeds_text({"seed": 7, "seeds": [7, 8, 9]}) == "seeds 7-9 (their mean)"
    assert tuning.heading_tail({"seed": 1000}) == ""
    assert tuning.heading_tail({"seed": 7, "seeds": [7, 8, 9]}) == ", seeds 7-9"


def test_a_grace_past_the_budget_is_refused_before_ray_starts(capsys):
    with pytest.raises(SystemExit) as exit_:
        main([str(SUM_AVOID), "--grace", "23"])  # 21 evaluation points at the quick budget
    assert exit_.value.code == 2
    assert "--grace must be at most 22 at this budget" in capsys.readouterr().err


def test_a_search_can_run_shorter_than_its_budget_and_its_config_keeps_the_budget(tmp_path):
    """--timesteps: the trials, the baseline and ASHA see the shortened budget; the record
    and the page say so; a written config keeps the budget its file has."""
    from training.tune import Search, _parser, _write_outputs, budget_text

    args = _parser().parse_args([str(SUM_AVOID), "--budget", "full", "--timesteps", "500000"])
    search = Search(args)
    own = resolve_config(read_raw(SUM_AVOID), "full")
    assert search.file_raw == read_raw(SUM_AVOID)
    assert (search.base["timesteps"], search.base["eval_every"]) == (
        500_000, 500_000 * own["eval_every"] // own["timesteps"],
    )  # fmt: skip
    assert search.shortened_from == {"timesteps": own["timesteps"], "eval_every": own["eval_every"]}
    assert resolve_config(search.raw, "full")["hyperparams"] == own["hyperparams"]
    arguments = [str(SUM_AVOID), "--budget", "full", "--timesteps", "500000"]
    explicit = Search(_parser().parse_args([*arguments, "--eval-every", "250000"]))
    assert explicit.base["eval_every"] == 250_000
    assert Search(_parser().parse_args([str(SUM_AVOID)])).shortened_from is None
    found = record(0.2, 0.25)
    found.update(budget="full", timesteps=500_000, shortened_from=search.shortened_from)
    assert budget_text(found) == "full budget shortened to 500,000 steps"
    assert budget_text(record(0.2, 0.25)) == "quick budget"  # also a record from before it
    (tmp_path / "short.json").write_text(json.dumps(found))
    assert "## `configs/sum_avoid/qlearning.yaml`, full budget shortened to 500,000 steps" in (
        tuning.page(tmp_path)
    )
    args.record, args.write_config = str(tmp_path / "r.json"), str(tmp_path / "tuned.yaml")
    assert _write_outputs(args, search, found) == 0
    written = yaml.safe_load((tmp_path / "tuned.yaml").read_text())
    assert written["budgets"] == read_raw(SUM_AVOID)["budgets"]
    assert "at the full budget shortened to 500,000 steps" in (tmp_path / "tuned.yaml").read_text()


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["--eval-every", "1000"], "--eval-every needs --timesteps"),
        (["--timesteps", "0"], "--timesteps must be in 1.."),
        (["--timesteps", "2000000"], "--timesteps must be in 1..1,000,000"),
        (["--timesteps", "1000", "--eval-every", "0"], "eval_every"),
    ],
)
def test_a_bad_shortening_is_refused_before_ray_starts(arguments, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([str(SUM_AVOID), *arguments])
    assert exit_.value.code == 2
    assert message in capsys.readouterr().err


def trial(index: int, gaps: list[float], params: dict | None = None, error=None) -> dict:
    """A trial's record as `trial_records` gives it, with a curve of these relative gaps."""
    curve = [{"steps": 100 * i, "relative_gap": g, "gap": 10 * g} for i, g in enumerate(gaps)]
    params = params or {"x": float(index)}
    return finish_trial({"trial": index, "params": params, "curve": curve, "error": error}, 200)


def test_a_trial_record_says_how_far_it_ran_and_why_it_ended():
    done = trial(0, [1.0, 0.5, 0.2])
    assert (done["steps"], done["finished"], done["stopped_by_asha"]) == (200, True, False)
    assert (done["final_relative_gap"], done["final_gap"]) == (0.2, 2.0)
    stopped = trial(1, [1.0, 0.6])
    assert (stopped["steps"], stopped["finished"], stopped["stopped_by_asha"]) == (100, False, True)
    failed = trial(2, [1.0], error="RuntimeError")
    assert (failed["finished"], failed["stopped_by_asha"]) == (False, False)


def test_the_winner_is_the_best_final_gap_of_the_trials_that_ran_the_whole_budget():
    trials = [
        trial(0, [1.0, 0.5, 0.30]),
        trial(1, [1.0, 0.01]),  # better, but ASHA stopped it: no final at the full budget
        trial(2, [1.0, 0.5, 0.10]),
        trial(3, [1.0, 0.4, 0.20]),
        trial(4, [1.0, 0.0, 0.05], error="boom"),
    ]
    assert [t["trial"] for t in ranked(trials, "relative_gap")] == [2, 3, 0]


def test_ties_break_on_the_mean_gap_then_the_params_whatever_the_order():
    # Round-off (1e-15) is the same final as an exact 0; this trial then wins on its mean.
    quick = trial(0, [1.0, 0.05, 1e-15], {"x": 0.0})
    fast = trial(1, [1.0, 0.1, 0.0], {"x": 1.0})
    twin_b = trial(2, [1.0, 0.1, 0.0], {"x": 3.0})
    twin_a = trial(3, [1.0, 0.1, 0.0], {"x": 2.0})
    slow = trial(4, [1.0, 0.9, 0.0], {"x": 4.0})
    for order in ([quick, fast, twin_b, twin_a, slow], [slow, twin_a, twin_b, fast, quick]):
        assert [t["trial"] for t in ranked(order, "relative_gap")] == [0, 1, 3, 2, 4]


def record(winner_gap: float | None, baseline_gap: float | None) -> dict:
    """A minimal search record with one finished trial per given final gap."""
    trials = [trial(0, [1.0, 0.5, winner_gap if winner_gap is not None else 0.1])]
    if winner_gap is None:
        trials = [trial(0, [1.0, 0.5])]
    summary = None
    if winner_gap is not None:
        summary = {"trial": 0, "params": {"x": 0.0}, "final_relative_gap": winner_gap}
    baseline = None
    if baseline_gap is not None:
        baseline = {"source": "run", "steps": 200, "final_relative_gap": baseline_gap}
    return {
        "config": {"path": "configs/sum_avoid/qlearning.yaml", "sha256": "ab" * 32},
        "env_id": "dice_envs/SumAvoid-v0",
        "env_kwargs": {"N": 10},
        "algo": "qlearning",
        "budget": "quick",
        "timesteps": 200,
        "eval_every": 100,
        "seed": 1000,
        "samples": len(trials),
        "objective": "relative_gap",
        "asha": {"grace_period": 2, "reduction_factor": 4},
        "space": {"x": {"uniform": [0.0, 5.0]}},
        "base_hyperparams": {"x": 2.5},
        "trials": trials,
        "winner": summary,
        "runner_up": None,
        "baseline": baseline,
        "package": {"version": "0", "code": "c"},
        "libraries": {"ray": "2"},
        "wall_seconds": 1.0,
    }


def test_the_verdict_says_plainly_whether_tuning_helped():
    assert tuning.verdict(record(0.02, 0.05)) == (
        "Tuning helped by 3 percentage points: the setting searched from had relative gap 5 % "
        "and the best trial 2 %."
    )
    assert tuning.verdict(record(0.05, 0.05)).startswith("Tuning did not help: the setting")
    assert tuning.verdict(record(0.0, 1e-15)).startswith("Tuning did not help")  # round-off
    assert tuning.verdict(record(0.06, 0.05)).startswith("Tuning did not help")
    assert "not measured" in tuning.verdict(record(0.02, None))
    assert tuning.verdict(record(None, 0.05)).startswith("No trial ran the whole budget")


def test_a_winner_lower_only_at_the_final_point_is_inconclusive():
    """Nine evaluation points: the last quarter is the last two. The winner ends 0.01 below the
    setting searched from, but over the last two points it averages 0.06 against 0.045."""
    search = record(0.03, 0.04)
    winner = [1.0, 0.5, 0.3, 0.2, 0.1, 0.1, 0.1, 0.09, 0.03]
    start = [1.0, 0.5, 0.3, 0.2, 0.1, 0.1, 0.1, 0.05, 0.04]
    search["trials"] = [trial(0, winner)]
    search["baseline"]["curve"] = [
        {"steps": 100 * i, "relative_gap": g} for i, g in enumerate(start)
    ]
    assert tuning.late_means(search) == (2, 700, pytest.approx(0.045), pytest.approx(0.06))
    assert tuning.verdict(search) == (
        "Tuning was inconclusive: at the final evaluation the setting searched from had relative "
        "gap 4 % and the best trial 3 %, but over the last 2 evaluations (from 700 steps on) "
        "their means were 4.5 % and 6 %."
    )
    search["trials"] = [trial(0, [*winner[:7], 0.05, 0.03])]  # lower on the mean too
    assert tuning.verdict(search).startswith("Tuning helped by 1 percentage points")
    search["baseline"]["curve"] = search["baseline"]["curve"][:4]  # too short to average
    assert tuning.late_means(search) is None


def test_the_adoption_line_says_what_the_config_holds_now(tmp_path, monkeypatch):
    monkeypatch.setattr(tuning, "ROOT", tmp_path)
    search = record(0.02, 0.05)
    search["winner"]["params"] = {"x": 1.23456}
    config = tmp_path / search["config"]["path"]
    assert "no longer in the repository" in tuning.adoption(search)
    config.parent.mkdir(parents=True)
    config.write_text("hyperparams: {x: 2.5}\n")
    assert tuning.adoption(search) == "The config keeps the setting the search started from."
    config.write_text("hyperparams: {x: 1.235}\n")
    assert tuning.adoption(search).startswith("The config now holds the winner's setting")
    config.write_text("hyperparams: {x: 1.3}\n")
    changed = "The config has changed since this search, not to its winner:"
    assert tuning.adoption(search) == f"{changed} `x` 2.5 → 1.3."
    # Three significant digits, whatever the scale: a learning rate of 3e-4 is not 7e-4.
    search["winner"]["params"] = {"x": 0.00029136}
    config.write_text("hyperparams: {x: 0.000291}\n")
    assert tuning.adoption(search).endswith("(rounded to three significant digits).")
    config.write_text("hyperparams: {x: 0.0007}\n")
    assert tuning.adoption(search) == f"{changed} `x` 2.5 → 0.0007."
    # Only the keys that changed are named; one that took the winner's value says so.
    search["space"]["y"], search["base_hyperparams"]["y"] = {"choice": [1, 2]}, 1
    search["winner"]["params"]["y"] = 2
    config.write_text("hyperparams: {x: 2.5, y: 3}\n")
    assert tuning.adoption(search) == f"{changed} `y` 1 → 3."
    config.write_text("hyperparams: {x: 2.6, y: 2}\n")
    assert tuning.adoption(search) == f"{changed} `x` 2.5 → 2.6, `y` 1 → 2 (the winner's)."
    # A difference the page cannot show is no change.
    config.write_text("hyperparams: {x: 2.5000000000000004, y: 1}\n")
    assert tuning.adoption(search) == "The config keeps the setting the search started from."
    # A constant where a schedule was searched; a key the config leaves to the library.
    search["space"] = {"rate.power": {"uniform": [0.5, 1.0]}, "rate.offset": {"choice": [1, 9]}}
    search["base_hyperparams"] = {"rate": {"power": 0.8}}
    search["winner"] = None
    config.write_text("hyperparams: {rate: 0.05}\n")
    assert tuning.adoption(search) == (
        "The config has changed since this search: `rate.power` 0.8 → 0.05 (the whole `rate`), "
        "`rate.offset` not set (the library's default) → 0.05 (the whole `rate`)."
    )


def trial_rows(page: str) -> list[str]:
    """The rows of the trials table of trials 0-2."""
    return [line for line in page.splitlines() if line[:4] in ("| 0 ", "| 1 ", "| 2 ")]


def test_the_page_lists_every_trial_best_first_and_the_search_settings(tmp_path):
    assert tuning.page(tmp_path).endswith("No search has been recorded yet.\n")
    search = record(0.2, 0.25)
    search["trials"] = [trial(0, [1.0, 0.5, 0.3]), trial(1, [1.0, 0.6]), trial(2, [1, 0.5, 0.2])]
    (tmp_path / "a_search.json").write_text(json.dumps(search))
    page = tuning.page(tmp_path)
    assert "No search" not in page
    assert "## `configs/sum_avoid/qlearning.yaml`, quick budget" in page
    assert "[`a_search.json`](../training/tuning/a_search.json)" in page
    assert "| `x` | uniform [0.0, 5.0] | 2.5 |" in page
    rows = trial_rows(page)
    assert rows == [
        "| 2 | 2 | 20 % | 2 | 200 | no |",
        "| 0 | 0 | 30 % | 3 | 200 | no |",
        "| 1 | 1 | 60 % | 6 | 100 | yes |",
    ]
    assert "Tuning helped by 5 percentage points" in page


def sampled_trial(index: int, sampled: list[float], exact: float | None) -> dict:
    """A trial of a game too large for tables: sampled relative gaps at every point, the exact
    one at the end of a run that reached its budget."""
    curve = [{"steps": 100 * i, SAMPLED: g, "sampled_gap": 10 * g} for i, g in enumerate(sampled)]
    if exact is not None:
        curve[-1].update(relative_gap=exact, gap=10 * exact)
    return finish_trial({"trial": index, "params": {"x": float(index)}, "curve": curve,
                         "error": None}, 200)  # fmt: skip


def test_a_game_too_large_for_tables_is_searched_on_its_sampled_gap_and_judged_exactly(tmp_path):
    yahtzee = resolve_config(read_raw(CONFIGS / "yahtzee" / "ppo.yaml"), "full", source="test")
    assert (objective(yahtzee), objective(resolve_config(read_raw(SUM_AVOID), "quick"))) == (
        SAMPLED, "relative_gap"
    )  # fmt: skip
    # Trial 0's last sampled gap is lower by luck; its exact final gap is the higher one.
    lucky, sound = sampled_trial(0, [1.0, 0.5, 0.1], 0.3), sampled_trial(1, [1.0, 0.5, 0.2], 0.2)
    stopped = sampled_trial(2, [1.0, 0.9], None)
    assert final_score(lucky, SAMPLED) == 0.3 and final_score(stopped, SAMPLED) == 0.9
    assert [t["trial"] for t in ranked([lucky, sound, stopped], SAMPLED)] == [1, 0]
    search = record(0.2, 0.25)
    search.update(objective=SAMPLED, trials=[lucky, sound, stopped])
    search["winner"] = {"trial": 1, "params": {"x": 1.0}, **{
        k: v for k, v in sound.items() if k.startswith("final_")}}  # fmt: skip
    search["baseline"][f"final_{SAMPLED}"] = 0.2  # sampled lower than its exact 25 %
    (tmp_path / "a_search.json").write_text(json.dumps(search))
    page = tuning.page(tmp_path)
    rows = trial_rows(page)
    assert rows == [
        "| 1 | 1 | 20 % | 20 % | 2 | 200 | no |",
        "| 0 | 0 | 10 % | 30 % | 3 | 200 | no |",
        "| 2 | 2 | 90 % | none | none | 100 | yes |",
    ]
    assert "minimising the relative gap (sampled at ASHA's rungs, exact at the end)" in page
    assert "Tuning helped by 5 percentage points" in page  # the exact 25 % against 20 %


def test_the_last_point_of_a_sampled_game_is_reported_with_its_exact_scores(tmp_path):
    from training.tune import TuneProgress

    sent = []
    progress = TuneProgress(tmp_path, sent.append, hold_last=True)
    progress.start(0, 200)
    first, last = {"steps": 0, SAMPLED: 0.9}, {"steps": 200, SAMPLED: 0.4}
    progress.evaluated(first)
    progress.evaluated(last)  # the run then adds its exact evaluation to this point
    assert sent == [first]
    (tmp_path / "curve.json").write_text(json.dumps([first, {**last, "relative_gap": 0.35}]))
    progress.report_held()
    assert sent == [first, {**last, "relative_gap": 0.35}]


def test_the_committed_page_is_what_the_tool_writes_from_the_committed_records():
    assert tuning.PAGE.read_text() == tuning.page(), "run python -m docs.tools.tuning"


def test_every_committed_record_names_its_config_and_ranks_its_own_trials():
    for name, found in tuning.records():
        assert (CONFIGS.parent / found["config"]["path"]).is_file(), name
        best = ranked(found["trials"], found["objective"])
        for place, key in enumerate(("winner", "runner_up")):
            expected = best[place]["trial"] if len(best) > place else None
            assert (found[key] or {}).get("trial") == expected, (name, key)


def test_a_search_that_did_not_help_says_where_asha_would_have_ranked_the_start():
    """The setting searched from, scored at the first rung (evaluation `grace`) against the
    trials there: behind three of four trials, where ASHA lets one in four go on."""
    search = record(0.05, 0.04)
    search["trials"] = [trial(i, [1.0, gap, 0.05]) for i, gap in enumerate([0.2, 0.3, 0.4, 0.6])]
    search["baseline"]["curve"] = [
        {"steps": 0, "relative_gap": 1.0},
        {"steps": 100, "relative_gap": 0.5},
        {"steps": 200, "relative_gap": 0.04},
    ]
    said = tuning.outcome(search)[-3]
    assert said.endswith(
        "At ASHA's first rung (100 steps) it had relative gap 50 %, behind 3 of the 4 trials "
        "there; ASHA lets about the best 1/4 of a rung go on."
    )
    assert said.startswith("Tuning did not help")
    table = tuning.summary([("a.json", search)])
    assert "| 4 % | 5 % | did not help | behind 3 of 4 |" in table
    assert "Tuning helped in 0 of the 1 searches." in table
    search["winner"]["final_relative_gap"] = 0.01  # tuning helped: no rung line
    table = tuning.summary([("a.json", search)])
    assert "| 4 % | 1 % | helped | behind 3 of 4 |" in table
    assert "Tuning helped in 1 of the 1 searches." in table
    assert "first rung" not in tuning.outcome(search)[-3]
    search["baseline"]["curve"] = search["baseline"]["curve"][:1]  # no point at the rung
    assert tuning.first_rung(search) is None


def test_a_search_space_file_is_named_with_the_search():
    search = record(0.05, 0.04)
    search["space_source"] = "built in (qlearning)"
    assert "search space built in (qlearning)." in tuning.search_section("a.json", search)
    search["space_source"] = "docs/training/tuning/spaces/x.yaml"
    said = tuning.search_section("a.json", search)
    assert "search space [`x.yaml`](../training/tuning/spaces/x.yaml)." in said
    search["space_source"] = "/tmp/space.yaml"
    assert "search space `/tmp/space.yaml`." in tuning.search_section("a.json", search)


def test_searches_that_tried_the_same_settings_are_named_with_the_most_consistent_one(tmp_path):
    """Settings x=0, 1, 2 in two searches (places 1, 2, 3 and 3, 1, 2) and in a third of other
    settings: x=1 has median place 1.5, the best; a one-setting check is no shared search."""
    first, second, other, check = (record(0.1, 0.2) for _ in range(4))
    first["trials"] = [trial(i, [1.0, 0.5, g]) for i, g in enumerate([0.1, 0.2, 0.3])]
    second["trials"] = [trial(i, [1.0, 0.5, g]) for i, g in enumerate([0.2, 0.1, 0.15])]
    second["trials"][1]["params"] = {"x": float(np.nextafter(1.0, 2.0))}  # one ulp from 1
    second["config"] = {**second["config"], "path": "configs/hog/qlearning.yaml"}
    second["seeds"] = [1000, 1001, 1002]
    other["trials"] = [trial(i, [1.0, 0.5, 0.1], {"x": 9.0 + i}) for i in range(3)]
    check["trials"] = check["trials"][:1]
    found = [("a.json", first), ("b.json", second), ("c.json", other), ("d.json", check)]
    said = tuning.shared_settings(found)
    [line] = [line for line in said.splitlines() if line.startswith("- ")]
    assert line == (
        "- 2 searches tried the same 3 settings: `sum_avoid/qlearning.yaml`, "
        "`hog/qlearning.yaml` (seeds 1000-1002). The setting with the best median place in "
        "their orders (`x` 1) has median place 1.5 of 3; it won 1 of the 2 searches."
    )
    assert tuning.shared_settings([("c.json", other), ("d.json", check)]) == ""
    for name, search in found:
        (tmp_path / name).write_text(json.dumps(search))
    assert said in tuning.page(tmp_path)


def test_a_search_with_another_asha_grace_says_so_in_its_heading_and_row():
    search = record(0.05, 0.04)
    assert tuning.heading_tail(search) == ""
    search["asha"] = {**search["asha"], "grace_period": 4}
    search["seeds"] = [1000, 1001, 1002]
    assert tuning.heading_tail(search) == ", seeds 1000-1002, ASHA grace 4"
    assert "| quick budget, seeds 1000-1002, ASHA grace 4 |" in tuning.summary([("a", search)])

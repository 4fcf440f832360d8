"""The report's targets: the file's checks, the verdicts, the table and the missed lines."""

from pathlib import Path

import pytest

from docs.tools.targets import Target, load_targets, targets_table, verdict


def result(seed: int, gap: float, relative_gap: float, **extra) -> dict:
    return {
        "seed": seed, "agent": "Q-learning", "gap": gap, "relative_gap": relative_gap,
        "steps": 1000, "timing": {"final": {"seconds": 120.0}}, **extra,
    }  # fmt: skip


def groups_of(config: dict | None = None, **configs: list[dict]) -> dict:
    """Config name with `__` for `/` -> its results, keyed as the report keys them; every
    config `config` (default {})."""
    return {
        Path("configs") / f"{name.replace('__', '/')}.yaml": {
            "config": config or {},
            "results": results,
        }
        for name, results in configs.items()
    }


GROUPS = groups_of(
    pig__q=[result(0, 0.004, 0.007), result(1, 0.008, 0.014)],  # mean gap 0.006
    pig__ppo=[result(0, 0.05, 0.09), result(1, 0.07, 0.12)],  # mean gap 0.06
)


def test_best_is_judged_by_the_smallest_config_mean_and_every_by_the_largest():
    best = Target("t", ("pig/q", "pig/ppo"), "gap", 0.005, "best")
    assert verdict(best, GROUPS) == (False, pytest.approx(0.006), "pig/q")
    assert verdict(Target("t", ("pig/q", "pig/ppo"), "gap", 0.0061, "best"), GROUPS)[0]
    every = Target("t", ("pig/q", "pig/ppo"), "gap", 0.0061, "every")
    assert verdict(every, GROUPS) == (False, pytest.approx(0.06), "pig/ppo")
    assert verdict(Target("t", ("pig/q", "pig/ppo"), "gap", 0.0601, "every"), GROUPS)[0]


def test_the_table_says_by_how_much_a_target_is_missed_and_what_the_value_errors_show():
    errors = {"value_error": 0.02, "value_abs_error": 0.03, "value_changed_share": 0.05}
    groups = groups_of(
        pig__q=[result(0, 0.004, 0.007, **errors), result(1, 0.008, 0.014, **errors)],
        solo__q=[result(0, 0.1, 0.004), result(3, 0.1, 0.006)],
    )
    targets = [
        Target("Pig within 0.005", ("pig/q",), "gap", 0.005, "best"),
        Target("Solo under 1 %", ("solo/q",), "relative_gap", 0.01, "every"),
        Target("absent", ("other/q",), "gap", 1.0, "best"),
    ]
    table = targets_table(groups, targets)
    lines = table.splitlines()
    assert lines[2] == (
        "| Pig within 0.005 | Q-learning (pig/q) | 0.006 | 0.008 (seed 1) | 0.005 | "
        "**missed by 0.001** | 1,000 | 2.0 |"
    )
    assert lines[3] == (
        "| Solo under 1 % | Q-learning (solo/q) | 0.5 % | 0.6 % (seed 3) | 1 % | "
        "met (every agent: 0.5 %) | 1,000 | 2.0 |"
    )
    assert "absent" not in table
    assert lines[-1] == (
        "- Pig within 0.005: missed by 0.001 (pig/q: 0.006 against 0.005). At the end its own "
        "value estimates are off by +0.02 on average over the states its policy visits "
        "(optimistic), 0.03 in absolute value, and the error changes the greedy action at 5 % "
        "of those visits (the error map shows where)."
    )
    assert targets_table(groups, targets[2:]) == ""


def test_a_target_with_a_config_not_in_the_report_is_judged_only_where_it_cannot_change():
    def verdict_cell(bound: float, of: str) -> str:
        target = Target("t", ("pig/q", "pig/ppo_goal100"), "gap", bound, of)
        return targets_table(GROUPS, [target]).splitlines()[2].split(" | ")[5]

    missing = "pig/ppo_goal100 not in this report"
    assert verdict_cell(0.001, "best") == "not judged: no runs of pig/ppo_goal100 in this report"
    assert verdict_cell(0.007, "best") == f"met (best agent: 0.006; {missing})"
    assert verdict_cell(0.007, "every") == "not judged: no runs of pig/ppo_goal100 in this report"
    assert verdict_cell(0.001, "every") == f"**missed by at least 0.005**; {missing}"
    target = Target("t", ("pig/q", "pig/ppo_goal100"), "gap", 0.001, "every")
    assert (
        targets_table(GROUPS, [target])
        .splitlines()[-1]
        .startswith("- t: missed by at least 0.005 (pig/q: 0.006 against 0.001).")
    )
    target = Target("Pig within 0.005", ("pig/q", "pig/ppo_goal100"), "gap", 0.007, "best")
    assert targets_table(GROUPS, [target]).splitlines()[2] == (
        "| Pig within 0.005 | Q-learning (pig/q) | 0.006 | 0.008 (seed 1) | 0.007 | "
        f"met (best agent: 0.006; {missing}) | 1,000 | 2.0 |"
    )
    target = Target("t", ("pig/q", "pig/ppo_goal100"), "gap", 0.001, "best")
    assert len(targets_table(GROUPS, [target]).splitlines()) == 3  # not judged: no missed line


def test_a_missed_target_without_value_errors_says_why_its_runs_keep_none():
    selfplay = {"selfplay": {"pool": 4}}
    groups = groups_of(selfplay, pig__sp=[result(0, 0.1, 0.1, exploitability=0.02)])
    table = targets_table(groups, [Target("sp", ("pig/sp",), "exploitability", 0.01, "best")])
    assert "**missed by 0.01**" in table
    assert "keep no value errors (self-play tables value the mover's seat)" in table
    groups = groups_of({"env_id": "dice_envs/Yahtzee-v0"}, yahtzee__ppo=[result(0, 20, 0.08)])
    table = targets_table(groups, [Target("y", ("yahtzee/ppo",), "relative_gap", 0.05, "best")])
    assert "**missed by 3 percentage points**" in table
    assert "keep no value errors (a game too large for tables has no per-state values" in table
    # A table game whose runs lack them (an older archive): no reason made up.
    groups = groups_of({"env_id": "dice_envs/Pig-v0"}, pig__q=[result(0, 0.1, 0.1)])
    table = targets_table(groups, [Target("p", ("pig/q",), "gap", 0.05, "best")])
    assert "Its runs keep no value errors." in table


def test_the_committed_targets_name_committed_configs():
    targets = load_targets("configs/targets.yaml")
    names = {f"{p.parent.name}/{p.stem}" for p in Path("configs").glob("*/*.yaml")}
    assert targets and all(set(t.configs) <= names for t in targets)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("{name: x}", "a YAML list"),
        ("- {name: x, configs: [a/b], measure: gap, bound: 1}", "exactly the fields"),
        ("- {name: x, configs: [ab], measure: gap, bound: 1, of: best}", "configs must be"),
        ("- {name: x, configs: [a/b], measure: value, bound: 1, of: best}", "measure must be"),
        ("- {name: x, configs: [a/b], measure: gap, bound: 1, of: all}", "of must be"),
        ("- {name: x, configs: [a/b], measure: gap, bound: 0, of: best}", "bound must be"),
        ("- {name: x, configs: [a/b], measure: gap, bound: yes, of: best}", "bound must be"),
    ],
)
def test_a_bad_targets_file_is_refused_naming_the_field(tmp_path, text, match):
    path = tmp_path / "targets.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        load_targets(path)

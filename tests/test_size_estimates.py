"""Memory and time before work: every game and operation has an estimate from its arguments
alone, the estimate is within 2x of the measured peak memory, what would pass the limit is
refused before any work with one line naming the estimate and the argument to lower, and long
steps report progress to whoever listens (and to nobody by default)."""

import importlib
import io

import numpy as np
import pytest

import baselines
import dice_envs
from baselines.yahtzee import solve_model as solve_yahtzee_model  # before `no_work` patches it
from benchmarks.sizes import measure
from dice_envs import progress, sizes
from dice_envs.games import base

OPERATIONS_OF = {
    "one": ("solve", "evaluate", "play"),
    "two": ("solve", "evaluate", "exploitability", "play"),
    "simultaneous": ("solve", "evaluate", "exploitability", "equilibrium", "play"),
}


@pytest.fixture
def no_work(monkeypatch):
    """Building tables or solving fails the test: a refusal must come before any work."""

    def refuse(*args, **kwargs):
        raise AssertionError("work started before the size check")

    for module, name in (
        ("dice_envs.tables", "build_tables"),
        ("baselines.exact", "build_tables"),
        ("baselines.exact", "make_model"),
        ("baselines.exploitability", "make_model"),
        ("baselines.simultaneous", "make_model"),
        ("baselines.yahtzee", "solve_model"),
    ):
        monkeypatch.setattr(importlib.import_module(module), name, refuse)


def test_every_game_and_operation_has_an_estimate_from_its_arguments_alone(no_work):
    for env_id, entry in dice_envs.GAMES.items():
        for kwargs in ({}, *entry.examples):
            kwargs = {k: v for k, v in kwargs.items() if k != "opponent" or v != "optimal"}
            for operation in OPERATIONS_OF[entry.players]:
                found = sizes.estimate(env_id, operation, **kwargs)
                assert sizes.BASE_BYTES <= found.bytes < 5e9, (env_id, kwargs, operation)
                assert 0 <= found.seconds < 120, (env_id, kwargs, operation)
                assert found.argument, (env_id, operation)


def test_a_larger_argument_gives_a_larger_estimate():
    for env_id, name, small, large in [
        ("dice_envs/Pig-v0", "goal", 50, 100),
        ("dice_envs/Hog-v0", "goal", 50, 100),
        ("dice_envs/PigSolitaire-v0", "goal", 50, 100),
        ("dice_envs/D20Rounds-v0", "rounds", 100, 1000),
        ("dice_envs/ChowRobbins-v0", "horizon", 100, 1000),
        ("dice_envs/TenThousand-v0", "max_turn_score", 100, 200),
    ]:
        little = sizes.estimate(env_id, "evaluate", **{name: small})
        big = sizes.estimate(env_id, "evaluate", **{name: large})
        assert big.bytes > little.bytes and big.seconds > little.seconds, env_id
        assert big.argument == name


def test_pig_table_size_follows_the_measured_tables():
    # The fold's states against hold-at-20 (measured: 104,822 at goal 80, 1,432,182 at 160).
    for goal, states in ((80, 104_822), (160, 1_432_182)):
        size = sizes.table_size(dice_envs.game("dice_envs/Pig-v0").factory, {"goal": goal})[1]
        assert 0.9 < size.states / states < 1.3
    # A random opponent may hold at any total: its fold lists about `goal` rows a hold.
    random = sizes.estimate("dice_envs/Pig-v0", "evaluate", goal=100, opponent="random")
    held = sizes.estimate("dice_envs/Pig-v0", "evaluate", goal=100)
    assert random.size.rows > 5 * held.size.rows


def test_a_new_game_without_table_size_gets_the_observation_grid(monkeypatch):
    class Grid:
        num_actions = 3
        observation_nvec = (10, 20)

    monkeypatch.setattr(sizes, "build_model", lambda factory, kwargs: Grid())
    model, size = sizes.table_size("dice_envs.games.stopping:DieStopping", {"rolls": 7})
    assert size.states == 200 and size.rows == 200 * 3 * sizes.DEFAULT_OUTCOMES
    assert size.argument == "rolls"  # the largest integer argument, given or default


def test_pig_at_goal_300_is_refused_before_any_work_under_an_injected_limit(no_work, monkeypatch):
    monkeypatch.setenv(sizes.MEMORY_VARIABLE, "4G")
    found = sizes.estimate("dice_envs/Pig-v0", "evaluate", goal=300)
    assert found.bytes > 15e9 and found.seconds > 60
    with pytest.raises(ValueError) as refused:
        baselines.evaluate("hold-at-20", "dice_envs/Pig-v0", goal=300)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith("dice_envs/Pig-v0 goal=300: evaluate would need about ")
    assert f"{found.bytes / 1e9:.3g} GB" in message and "min" in message
    assert "memory limit of 4 GB (DICE_ENVS_MAX_MEMORY)" in message
    assert "lower goal" in message
    # The parameter beats the environment variable.
    with pytest.raises(ValueError, match=r"limit of 1 GB \(max_memory\)"):
        baselines.solve("dice_envs/Pig-v0", goal=300, max_memory="1G")


def test_pig_at_goal_300_against_this_machines_real_limit(no_work, monkeypatch):
    monkeypatch.delenv(sizes.MEMORY_VARIABLE, raising=False)
    limit = sizes.memory_limit()
    assert limit == int(0.75 * sizes.physical_memory())
    evaluation = sizes.estimate("dice_envs/Pig-v0", "evaluate", goal=300)
    if evaluation.bytes <= limit:
        pytest.skip(f"this machine's limit {limit:.3g} holds Pig's evaluation at goal 300")
    with pytest.raises(ValueError, match=r"of memory\); lower goal"):
        baselines.evaluate("hold-at-20", "dice_envs/Pig-v0", goal=300)


def test_every_python_entry_point_checks_before_work(no_work, monkeypatch):
    monkeypatch.setenv(sizes.MEMORY_VARIABLE, "50M")  # below the imports alone
    from baselines.yahtzee import solve_yahtzee
    from baselines.yahtzee_evaluation import evaluate_yahtzee

    calls = [
        lambda: baselines.solve("dice_envs/SumAvoid-v0"),
        lambda: baselines.evaluate("stop-at-20", "dice_envs/SumAvoid-v0"),
        lambda: baselines.exploitability("hold-at-20", "dice_envs/Pig-v0", goal=20),
        lambda: baselines.equilibrium("dice_envs/SimultaneousHog-v0", goal=12, max_dice=3),
        lambda: baselines.solve("dice_envs/Yahtzee-v0"),
        lambda: baselines.evaluate("score-at-once", "dice_envs/Yahtzee-v0"),
        lambda: solve_yahtzee(),
        lambda: evaluate_yahtzee("score-at-once"),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=r"over the memory limit of 50 MB"):
            call()


def test_yahtzee_evaluation_checks_with_a_solution_given(no_work, monkeypatch):
    from baselines.yahtzee_evaluation import evaluate_yahtzee
    from dice_envs.games.yahtzee import Yahtzee

    boxes = ["ones", "chance"]
    solution = solve_yahtzee_model(Yahtzee(boxes=boxes))
    monkeypatch.setenv(sizes.MEMORY_VARIABLE, "50M")
    with pytest.raises(ValueError, match=r"Yahtzee-v0 boxes=\['ones', 'chance'\]: evaluate"):
        evaluate_yahtzee("score-at-once", boxes=boxes, solution=solution, method="numpy")


def test_a_raised_limit_lets_the_work_run(monkeypatch):
    monkeypatch.setenv(sizes.MEMORY_VARIABLE, "50M")
    solution = baselines.solve("dice_envs/SumAvoid-v0", max_memory="1G")
    monkeypatch.delenv(sizes.MEMORY_VARIABLE)
    assert solution.value == baselines.solve("dice_envs/SumAvoid-v0").value


@pytest.mark.parametrize(
    ("text", "expected"),
    [("8G", 8e9), ("8 GB", 8e9), ("500M", 5e8), ("1.5T", 1.5e12), ("2GiB", 2e9), (12345, 12345)],
)
def test_memory_sizes_parse(text, expected):
    assert sizes.parse_memory(text) == int(expected)


@pytest.mark.parametrize("text", ["lots", "-1G", "0", "", True, "8 X"])
def test_bad_memory_sizes_are_refused_naming_the_argument(text, monkeypatch):
    with pytest.raises(ValueError, match=r"^max_memory must be a"):
        sizes.parse_memory(text)
    if isinstance(text, str) and text:
        monkeypatch.setenv(sizes.MEMORY_VARIABLE, text)
        with pytest.raises(ValueError, match=rf"^{sizes.MEMORY_VARIABLE} must be a"):
            sizes.memory_limit()


def test_limit_order_parameter_variable_then_physical_memory(monkeypatch):
    monkeypatch.setenv(sizes.MEMORY_VARIABLE, "3G")
    assert sizes.memory_limit() == 3e9
    assert sizes.memory_limit("2G") == 2e9
    monkeypatch.delenv(sizes.MEMORY_VARIABLE)
    physical = sizes.physical_memory()
    assert physical > 1e9
    assert sizes.memory_limit() == int(0.75 * physical)


# -- the estimate against the measured peak memory, each size in a fresh process ----------


def within_twice(cases):
    for case in cases:
        env_id, operation, kwargs, _ = case
        ratio = sizes.estimate(env_id, operation, **kwargs).bytes / measure(case)["peak_bytes"]
        assert 0.5 <= ratio <= 2.0, (case, ratio)


def test_estimate_within_2x_of_the_peak_memory_at_three_sizes():
    # Sizes whose tables are at least twice the imports, a few seconds in all.
    within_twice([("dice_envs/Pig-v0", "solve", {"goal": goal}, None) for goal in (80, 100, 120)])


@pytest.mark.verify
def test_evaluation_estimate_within_2x_of_the_peak_memory_at_three_sizes():
    # Pig's exact evaluation at 0.3, 1 and 2.7 GB (half a minute).
    within_twice(
        [("dice_envs/Pig-v0", "evaluate", {"goal": g}, "hold-at-20") for g in (80, 120, 160)]
    )


# -- progress ------------------------------------------------------------------------------


def test_silent_by_default(capfd):
    baselines.evaluate("hold-at-20", "dice_envs/Pig-v0", goal=25)
    baselines.solve("dice_envs/SumAvoid-v0", method="value_iteration")
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert progress.task("anything") is progress.SILENT


def test_long_steps_report_to_a_listener():
    events, layers = [], []
    with progress.listening(events.append):
        baselines.evaluate("hold-at-20", "dice_envs/Pig-v0", goal=26)
        baselines.solve("dice_envs/PigSolitaire-v0", goal=20)
        with progress.listening(layers.append):
            baselines.solve("dice_envs/Pig-v0", goal=27)
    tasks = {event.task for event in events}
    assert {"making the game", "building tables", "factorising", "solving"} <= tasks
    assert "the opponent's turns" in tasks
    assert "value iteration" in tasks
    layers = [e for e in layers if e.task == "solving"]
    assert layers[0].done == 0 and layers[0].total == 2 * 27 - 1
    assert layers[-1].finished and layers[-1].done == 2 * 27 - 1
    factorised = [e for e in events if e.task == "factorising"]
    assert factorised[-1].finished and factorised[-1].done == factorised[-1].total > 0
    # Outside the `with`, nobody listens any more.
    assert progress.task("after") is progress.SILENT


class Stop(Exception):
    pass


def first_event(call):
    """The first progress event of `call()`, raised out of it before more work is done."""

    def stop(event):
        raise Stop(event)

    with progress.listening(stop), pytest.raises(Stop) as stopped:
        call()
    return stopped.value.args[0]


def test_pig_at_goal_300_reports_before_its_work():
    assert sizes.estimate("dice_envs/Pig-v0", "solve", goal=300).bytes < 8e9  # layered solve
    event = first_event(lambda: baselines.solve("dice_envs/Pig-v0", goal=300))
    assert event.task == "making the game" and event.done == 0


def test_yahtzee_full_game_estimate_and_progress(no_work):
    solve = sizes.estimate("dice_envs/Yahtzee-v0", "solve")
    evaluation = sizes.estimate("dice_envs/Yahtzee-v0", "evaluate")
    assert 150e6 < solve.bytes < 450e6 and solve.seconds > 2  # measured: 214 MB, 5 s
    assert 250e6 < evaluation.bytes < 1e9 and evaluation.seconds > 20  # 510 MB, 45 s
    reduced = sizes.estimate("dice_envs/Yahtzee-v0", "solve", boxes=["ones", "chance"])
    assert reduced.bytes < solve.bytes / 1.5 and reduced.argument == "boxes"


def test_yahtzee_full_game_reports_before_its_work():
    event = first_event(lambda: baselines.solve("dice_envs/Yahtzee-v0"))
    assert (event.task, event.done, event.total) == ("solving", 0, 536_320)


def test_yahtzee_reports_its_solve_and_evaluation():
    from baselines.yahtzee import solve_model
    from baselines.yahtzee_evaluation import evaluate_yahtzee
    from dice_envs.games.yahtzee import Yahtzee

    boxes = ["ones", "yahtzee", "chance"]
    events = []
    with progress.listening(events.append):
        solution = solve_model(Yahtzee(boxes=boxes))
        evaluate_yahtzee("score-at-once", boxes=boxes, solution=solution, method="numpy")
    solving = [e for e in events if e.task == "solving"]
    evaluating = [e for e in events if e.task == "evaluating"]
    assert solving[0].total == solution.num_states == solving[-1].done and solving[-1].finished
    assert evaluating[-1].finished and evaluating[-1].done == evaluating[-1].total


def test_terminal_bars_only_when_asked_or_on_a_terminal():
    stream = io.StringIO()  # not a terminal
    assert not progress.wanted(stream=stream)
    with progress.on_terminal(stream=stream):
        baselines.solve("dice_envs/Pig-v0", goal=30)
    assert stream.getvalue() == ""
    with progress.on_terminal(enabled=True, stream=stream, delay=0):
        baselines.solve("dice_envs/Pig-v0", goal=30)
    assert "solving" in stream.getvalue() and "layers" in stream.getvalue()
    quick = io.StringIO()
    with progress.on_terminal(enabled=True, stream=quick, delay=60):  # no step runs a minute
        baselines.solve("dice_envs/Pig-v0", goal=30)
    assert quick.getvalue() == ""

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    assert progress.wanted(stream=Terminal())
    assert not progress.wanted(json_output=True, stream=Terminal())


def test_results_are_the_same_with_a_listener():
    plain = baselines.evaluate("hold-at-20", "dice_envs/Pig-v0", goal=28)
    with progress.listening(lambda event: None):
        baselines.exact._CACHE.clear()
        heard = baselines.evaluate("hold-at-20", "dice_envs/Pig-v0", goal=28)
    assert heard.value == plain.value
    np.testing.assert_array_equal(heard.state_values, plain.state_values)
    assert base.SIZE_LIMIT == 1_000_000_000  # the row limit of the models stays as it was

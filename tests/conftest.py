import pytest

import dice_envs

# (env id, keyword arguments): every registered id with each of its registration's small
# argument sets, so a new game is covered by registering it.
CASES = [(env_id, kwargs) for env_id, game in dice_envs.GAMES.items() for kwargs in game.examples]


def tables_missing(env_id: str, kwargs: dict | None = None) -> str | None:
    """Why a test that reads the game's tables or its `transitions` can not run on this case
    (a game too large for tables, whose model gives its structure instead), None where it
    can."""
    entry = dice_envs.game(env_id)
    if entry.tables:
        return None
    return (
        f"{env_id} has no tables or transitions: its own tests (tests/test_{entry.slug}_*.py) "
        "cover its env, vector env and solver"
    )


def with_tables(cases: list, spread: bool = False) -> list:
    """`cases` ((env id, kwargs) pairs, or ids), those of games without tables skipped with
    the reason: for tests that need the tables or the model's `transitions`. `spread`: each
    pair fills two parameter names."""
    marked = []
    for case in cases:
        env_id = case if isinstance(case, str) else case[0]
        reason = tables_missing(env_id)
        marked.append(
            case
            if reason is None
            else pytest.param(*(case if spread else (case,)), marks=pytest.mark.skip(reason=reason))
        )
    return marked


def case_id(case) -> str:
    env_id, kwargs = case
    return env_id.split("/")[1] + "".join(f"-{k}={v}" for k, v in kwargs.items())


@pytest.fixture(autouse=True)
def registrations_do_not_leak():
    """Every game a test registers is taken out of both registries when the test ends."""
    before = set(dice_envs.GAMES)
    yield
    for env_id in set(dice_envs.GAMES) - before:
        dice_envs.unregister_game(env_id)


@pytest.fixture(scope="session", autouse=True)
def sb3_logs_in_a_temporary_folder(tmp_path_factory):
    """Tests that call SB3's `learn` on a model of their own (no `silence_logger`) make SB3's
    default logger, which creates an empty `SB3-<date>` folder in the system's temporary
    directory at every call; SB3_LOGDIR points it into pytest's own."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3_logs")))
        yield


@pytest.fixture(scope="session")
def verhoeff_solution():
    """Full-game Yahtzee under the Verhoeff reading, solved once per test session (about 6 s
    of CPU), for every test file that needs the full game."""
    from baselines.yahtzee import solve_yahtzee  # here: most sessions never need it

    return solve_yahtzee(joker="verhoeff")


@pytest.fixture(scope="session", autouse=True)
def solutions_cached_in_a_temporary_folder(tmp_path_factory):
    """`dice-envs play` keeps solves of over a second on disk (`dice_envs_cli.solve_cache`);
    DICE_ENVS_CACHE keeps every test's, and its subprocesses', out of the user's cache."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DICE_ENVS_CACHE", str(tmp_path_factory.mktemp("solve_cache")))
        yield

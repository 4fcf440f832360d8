"""Every environment id, registered in this one place, with everything known about its game.

A game is one `register_game` entry: its id, the model (a class or factory taking the env's
keyword arguments, as an import path), small argument sets that exercise it (the conformance
tests run every id with each), a one-line summary, its references, the named policies its
pages score, and, for a game too large for tables, which arguments are. Every consumer reads
the live registry (`GAMES`, `env_ids()`, `game(env_id)`): the gym ids, the vector env,
PettingZoo, `baselines`, the training config checks, the demo, the pages and the report.
"""

from __future__ import annotations

import difflib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym

from dice_envs.games.base import SIZE_LIMIT, GameModel, build_model, load
from dice_envs.progress import task as progress_task

# What a consumer may need of a game beyond its model, each an import path "module:attribute"
# (imported when first used, so the layers stay intact and no solver loads before it is asked):
#   solver             model -> Solution: a game-specific exact solver (`baselines.solve`)
#   solver_rows        model -> int: its tables' outcome rows (whether to build them for the
#                      Bellman residual of `solver`'s solution)
#   structure_solver   (**kwargs) -> solution: the optimum of a game without tables
#   structure_evaluator (policy, obs_transform=, deterministic=, **kwargs) -> the evaluation
#                      of a policy on a game without tables
#   sampled_player     (policy, env_id, kwargs, options) -> a player of `estimate_gap` on a
#                      game without tables
#   two_player_solver  two-player model -> its two-player optimum (a layered solver)
#   equilibrium_solver simultaneous model -> its equilibrium
#   cost               (operation, game kwargs) -> dice_envs.sizes.Cost, or None: the memory
#                      and time of an operation whose solvers build no tables (None: the
#                      estimate from the model's table size holds)
HOOKS = (
    "solver",
    "solver_rows",
    "structure_solver",
    "structure_evaluator",
    "sampled_player",
    "two_player_solver",
    "equilibrium_solver",
    "cost",
)
ENV_ENTRY_POINT = "dice_envs.envs.base:DiceEnv"
VECTOR_ENTRY_POINT = "dice_envs.envs.vector:DiceVectorEnv"
PLAYERS = ("one", "two", "simultaneous")


@dataclass(frozen=True)
class Reference:
    """A published source: who, what, where, when (`str()` gives "Authors (year). Title.
    Venue.").

    Attributes:
        authors: as the source lists them ("T. W. Neller and C. G. M. Presser").
        title: the title of the article, book or chapter.
        venue: where it appeared (journal with volume and pages, publisher, proceedings).
        year: the year of publication (None: undated, shown as "n.d.").
    """

    authors: str
    title: str
    venue: str
    year: int | None = None

    def __str__(self) -> str:
        when = "n.d." if self.year is None else self.year
        return f"{self.authors} ({when}). {self.title}. {self.venue}."


@dataclass(frozen=True)
class Game:
    """One registered game.

    Attributes:
        env_id: the Gymnasium id ("dice_envs/Pig-v0").
        model: the model class or factory taking the env's keyword arguments (or its import
            path, "module:attribute").
        examples: small argument sets that the conformance tests run.
        summary: one line saying what the game is.
        references: where its rules and published numbers come from.
        policies: the named policies its pages and reports score (the model's `named_policy`
            builds them; its `policy_names` says which names it takes).
        tables_refused: for a game too large for tables: `f(kwargs)` gives why its tables can
            not be built at those arguments (None where they can).
        tables: False for a game that has no tables in general (Yahtzee): its model states
            its structure (the turn-start states and the graph inside a turn), its env and
            vector env are its own (`entry_point`, `vector_entry_point`), and consumers of
            tables skip it; `tables_refused` may still allow tables of small reduced
            games, the oracle of its structure-aware solvers.
        entry_point: the Gymnasium env class ("module:attribute").
        vector_entry_point: the native vector env class ("module:attribute").
        solver: its game-specific exact solver, model -> Solution (an import path, as every
            hook below; `hook(name)` loads one; None: the generic solvers answer).
        solver_rows: model -> the outcome rows of its tables (whether to build them to
            measure `solver`'s Bellman residual).
        structure_solver: (**kwargs) -> the optimum of a game without tables.
        structure_evaluator: (policy, obs_transform=, deterministic=, **kwargs) -> the exact
            evaluation of a policy on a game without tables.
        sampled_player: `estimate_gap`'s player on a game without tables.
        two_player_solver: two-player model -> its two-player optimum (layered).
        equilibrium_solver: simultaneous model -> its equilibrium.
        cost: (operation, game kwargs) -> `dice_envs.sizes.Cost` or None: its own estimate
            of an operation that builds no tables (None: `dice_envs.sizes` estimates from
            the model's `table_size()`).
        page_variants: the argument sets whose optima its page shows side by side (its
            defaults alone if none).
    """

    env_id: str
    model: str | Callable[..., GameModel]
    examples: tuple[dict[str, Any], ...] = field(default=({},))
    summary: str = ""
    references: tuple[Reference, ...] = ()
    policies: tuple[str, ...] = ()
    tables_refused: Callable[[dict[str, Any]], str | None] | None = None
    tables: bool = True
    entry_point: str = ENV_ENTRY_POINT
    vector_entry_point: str = VECTOR_ENTRY_POINT
    solver: str | None = None
    solver_rows: str | None = None
    structure_solver: str | None = None
    structure_evaluator: str | None = None
    sampled_player: str | None = None
    two_player_solver: str | None = None
    equilibrium_solver: str | None = None
    cost: str | None = None
    page_variants: tuple[dict[str, Any], ...] = ()

    def hook(self, name: str) -> Callable[..., Any] | None:
        """The game's hook `name` (one of `HOOKS`), imported; None if it has none."""
        if name not in HOOKS:
            raise ValueError(f"name must be one of {HOOKS}, got {name!r}")
        path = getattr(self, name)
        return None if path is None else load(path)

    @property
    def slug(self) -> str:
        """dice_envs/SumAvoid-v0 -> sum_avoid: the name of its configs/ folder and page."""
        return game_slug(self.env_id)

    @property
    def factory(self) -> Callable[..., GameModel]:
        return load(self.model)

    @property
    def players(self) -> str:
        """ "one" (a single-agent game), "two" (the fold of a two-player model with alternating
        moves: a PettingZoo AEC env) or "simultaneous" (a PettingZoo parallel env)."""
        model_class = getattr(self.factory, "model_class", None)
        if model_class is None:
            return "one"
        return "simultaneous" if getattr(model_class, "simultaneous", False) else "two"

    @property
    def arguments(self) -> tuple[GameArgument, ...]:
        """The game's keyword arguments (the model factory's, `render_mode` aside, which every
        env takes) with their defaults and what each is and allows: the bullet of the
        docstring's "## Arguments" section that names it (the factory's, else the env
        class's), the one place those are written."""
        factory = self.factory
        described = _argument_lines(inspect.getdoc(factory) or "")
        if not described:
            described = _argument_lines(inspect.getdoc(load(self.entry_point)) or "")
        found = []
        for parameter in inspect.signature(factory).parameters.values():
            if parameter.kind in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL):
                continue
            default = None if parameter.default is parameter.empty else parameter.default
            found.append(GameArgument(parameter.name, default, described.get(parameter.name, "")))
        return tuple(found)

    def check_tables(self, kwargs: dict[str, Any]) -> None:
        """Raise ValueError where this game's tables can not be built at `kwargs`."""
        reason = None if self.tables_refused is None else self.tables_refused(kwargs)
        if reason is not None:
            raise ValueError(f"{self.env_id}: no tables at {kwargs}: {reason}")


@dataclass(frozen=True)
class GameArgument:
    """A keyword argument of a game (`Game.arguments`).

    Attributes:
        name: as `gym.make` takes it.
        default: its default value.
        description: what it is and the values it allows, from the game's docstring.
    """

    name: str
    default: Any
    description: str


def _argument_lines(doc: str) -> dict[str, str]:
    """Argument name -> its text, from the bullets of a docstring's "## Arguments" section
    ("- `goal=100`: points to win; an integer >= 1."; a bullet may name several)."""
    section = re.search(r"^## Arguments\n(.*?)(?=^## |\Z)", doc, re.S | re.M)
    if section is None:
        return {}
    found = {}
    for bullet in re.split(r"^- ", section.group(1), flags=re.M)[1:]:
        head, _, text = bullet.partition(": ")
        text = " ".join(text.split())
        for name in re.findall(r"`(\w+)=[^`]*`", head):
            found[name] = text
    return found


GAMES: dict[str, Game] = {}


def register_game(
    env_id: str,
    model: str | Callable[..., GameModel],
    examples: tuple[dict[str, Any], ...] | list[dict[str, Any]] = ({},),
    *,
    summary: str = "",
    references: tuple[Reference, ...] | list[Reference] = (),
    policies: tuple[str, ...] | list[str] = (),
    tables_refused: Callable[[dict[str, Any]], str | None] | None = None,
    tables: bool = True,
    entry_point: str = ENV_ENTRY_POINT,
    vector_entry_point: str = VECTOR_ENTRY_POINT,
    page_variants: tuple[dict[str, Any], ...] | list[dict[str, Any]] = (),
    **hooks: str | None,
) -> Game:
    """Register a game: `gym.make(env_id, **kwargs)` gives the one env class over
    `model(**kwargs)`, `gym.make_vec(env_id, num_envs=n, **kwargs)` the native vector env over
    its tables, and every consumer of the registry (PettingZoo for two-player models,
    `baselines`, training, the pages) finds it. Registering an id again replaces its entry.

    Args:
        env_id: the Gymnasium id, "namespace/Name-v0".
        model: the model class or factory taking the env's keyword arguments, or its import
            path "module:attribute" (imported when first made).
        examples: small argument sets that exercise the game; the conformance tests run the
            id with each.
        summary: one line saying what the game is.
        references: `Reference`s of where its rules and published numbers come from.
        policies: the named policies its pages and reports score (`named_policy` names).
        tables_refused: for a game too large for tables: `f(kwargs)` gives why its tables
            can not be built at those arguments, None where they can.
        tables: False for a game with no tables in general: its model gives its structure
            (turn-start states, the graph inside a turn) and its own env classes, named by
            `entry_point` and `vector_entry_point`, play it. Without `tables_refused` it has
            no tables at any arguments; with it, tables where that allows them.
        entry_point: "module:attribute" of the env (default: the table games' env).
        vector_entry_point: "module:attribute" of the native vector env (default: ditto).
        page_variants: the argument sets whose optima its page shows side by side (its
            defaults alone if none).
        **hooks: the game's own solvers by `HOOKS` name, each an import path
            "module:attribute" (see `HOOKS` for what each takes and gives).

    Returns:
        The registry entry (also `game(env_id)`).
    """
    _check_entry(env_id, model, summary, policies, references, tables, hooks)
    for name, path in (("entry_point", entry_point), ("vector_entry_point", vector_entry_point)):
        if not isinstance(path, str) or not re.fullmatch(r"[\w.]+:\w+", path):
            raise ValueError(f"{name} must be an import path 'module:attribute', got {path!r}")
    if not tables and tables_refused is None:
        tables_refused = _no_tables
    entry = Game(
        env_id,
        model,
        tuple(dict(example) for example in examples),
        summary,
        tuple(references),
        tuple(policies),
        tables_refused,
        tables,
        entry_point,
        vector_entry_point,
        page_variants=tuple(dict(variant) for variant in page_variants),
        **hooks,
    )
    GAMES[env_id] = entry
    if env_id in gym.registry:
        del gym.registry[env_id]
    gym.register(
        id=env_id,
        entry_point=entry_point,
        vector_entry_point=vector_entry_point,
        kwargs={"model": model},
    )
    return entry


def _check_entry(env_id, model, summary, policies, references, tables, hooks) -> None:
    """A ValueError naming the first of `register_game`'s arguments that is not allowed."""
    if not isinstance(env_id, str) or not re.fullmatch(r"[\w.-]+/[A-Z]\w*-v\d+", env_id):
        raise ValueError(f"env_id must look like 'namespace/Name-v0', got {env_id!r}")
    if not isinstance(model, str) and not callable(model):
        raise ValueError(f"model must be a callable or an import path 'module:attr', got {model!r}")
    if not isinstance(summary, str):
        raise ValueError(f"summary must be a string, got {summary!r}")
    for name in policies:
        if not isinstance(name, str):
            raise ValueError(f"policies must be names (strings), got {name!r}")
    for reference in references:
        if not isinstance(reference, Reference):
            raise ValueError(f"references must be Reference objects, got {reference!r}")
    if not isinstance(tables, bool):
        raise ValueError(f"tables must be True or False, got {tables!r}")
    for name, path in hooks.items():
        if name not in HOOKS:
            raise ValueError(f"{name} is not a hook of a game: they are {', '.join(HOOKS)}")
        if path is not None and (
            not isinstance(path, str) or not re.fullmatch(r"[\w.]+:\w+", path)
        ):
            raise ValueError(f"{name} must be an import path 'module:attribute', got {path!r}")


def _no_tables(kwargs: dict[str, Any]) -> str:
    return (
        "the game has no tables at any arguments: its model gives its structure (turn-start "
        "states, the graph inside a turn) for structure-aware solvers instead"
    )


def unregister_game(env_id: str) -> None:
    """Remove a game from this registry and Gymnasium's (a test's toy game, for example)."""
    if env_id not in GAMES:
        raise ValueError(f"env_id must be a registered game, got {env_id!r}")
    del GAMES[env_id]
    gym.registry.pop(env_id, None)


def env_ids() -> tuple[str, ...]:
    """Every registered id, those registered after import included."""
    return tuple(GAMES)


def game(env_id: str) -> Game:
    """The registry entry of `env_id`; a ValueError naming the closest ids otherwise."""
    if env_id not in GAMES:
        raise ValueError(f"env_id must be a registered id, got {env_id!r}{_closest(env_id)}")
    return GAMES[env_id]


def short_name(env_id: str) -> str:
    """dice_envs/SumAvoid-v0 -> sum_avoid: the name a game goes by on the command line."""
    return game_slug(env_id)


def find_game(name: str) -> str:
    """The registered id that `name` means: an id, or a game's short name with case, "_" and
    "-" aside ("pig", "sum_avoid", "SumAvoid", "sum-avoid"); a ValueError suggesting the
    closest names otherwise."""
    if name in GAMES:
        return name
    for env_id in GAMES:
        if _squeezed(name) in (_squeezed(short_name(env_id)), _squeezed(env_id)):
            return env_id
    raise ValueError(f"no game is called {name!r}{_closest(name)}")


def _squeezed(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "")


def _closest(name: str) -> str:
    """ "; did you mean ...?" with the games whose short names are closest to `name` (or where
    to find them, when none is close)."""
    games = {_squeezed(short_name(env_id)): env_id for env_id in GAMES}
    base = _squeezed(str(name).split("/")[-1].rsplit("-v", 1)[0])
    starting = [key for key in games if base and key.startswith(base)]
    close = difflib.get_close_matches(base, games, n=3, cutoff=0.6)
    close = [games[key] for key in dict.fromkeys(starting + close)][:3]
    if not close:
        return " (dice_envs.env_ids() lists the registered ids)"
    return f"; did you mean {' or '.join(f'{short_name(i)} ({i})' for i in close)}?"


def model_hook(model: GameModel, name: str) -> Callable[..., Any] | None:
    """Hook `name` of the registered game whose model, or two-player model, `model` is (None
    if no such game has it)."""
    for entry in GAMES.values():
        if getattr(entry, name, None) is None:
            continue
        factory = entry.factory
        if type(model) in (factory, getattr(factory, "model_class", None)):
            return entry.hook(name)
    return None


@dataclass(frozen=True, eq=False)
class GameSpec:
    """What a model was made from (`make_model`): its registered id and keyword arguments.
    Names that depend on the game as registered resolve through it ("optimal": the optimum of
    exactly this game), and messages name the game by it.

    Attributes:
        env_id: the registered id.
        kwargs: the keyword arguments, as given.
    """

    env_id: str
    kwargs: dict[str, Any]

    def __str__(self) -> str:
        shown = ", ".join(f"{key}={value!r}" for key, value in self.kwargs.items())
        return f"{self.env_id} ({shown})" if shown else self.env_id


def make_model(env_id: str, **kwargs: Any) -> GameModel:
    """The game model behind `env_id`, built from the same keyword arguments as the env; its
    `game_spec` (a `GameSpec`) says so."""
    entry = game(env_id)
    kwargs.pop("render_mode", None)
    with progress_task("making the game"):  # a fold's opponent may be a table or a solve
        model = build_model(entry.model, kwargs, env_id)
    model.game_spec = GameSpec(env_id, dict(kwargs))
    return model


def game_slug(env_id: str) -> str:
    """dice_envs/SumAvoid-v0 -> sum_avoid: the name of its configs/ folder and docs page."""
    name = env_id.split("/")[-1].split("-")[0]
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


# -- the literature the games, their rules and their published numbers come from ------------
TIJMS_2012 = Reference(
    "H. Tijms",
    "Stochastic games and dynamic programming",
    "Asia Pacific Mathematics Newsletter",
    2012,
)
NELLER_PRESSER_2004 = Reference(
    "T. W. Neller and C. G. M. Presser",
    "Optimal play of the dice game Pig",
    "The UMAP Journal 25(1), 25-47",
    2004,
)
HAIGH_ROTERS_2000 = Reference(
    "J. Haigh and M. Roters",
    "Optimal strategy in a dice game",
    "Journal of Applied Probability 37, 1110-1116",
    2000,
)
ROTERS_1998 = Reference(
    "M. Roters",
    "Optimal stopping in a dice game",
    "Journal of Applied Probability 35, 229-235",
    1998,
)
MEDINA_ZEILBERGER_2010 = Reference(
    "L. A. Medina and D. Zeilberger",
    "An experimental mathematics perspective on the old, and still open, question of when to stop",
    "Gems in Experimental Mathematics, Contemporary Mathematics 517 (AMS), 265-274",
    2010,
)
CROCCE_MORDECKI = Reference(
    "F. Crocce and E. Mordecki",
    "A finite exact algorithm to solve a dice game",
    "Journal of Applied Probability",
    2016,
)
TIJMS_VAN_DER_WAL_2006 = Reference(
    "H. C. Tijms and J. van der Wal",
    "A real-world stochastic two-person game",
    "Probability in the Engineering and Informational Sciences",
    2006,
)
CHOW_ROBBINS_1965 = Reference(
    "Y. S. Chow and H. Robbins",
    "On optimal stopping rules for S_n/n",
    "Illinois Journal of Mathematics 9, 444-454",
    1965,
)
HAGGSTROM_WASTLUND_2013 = Reference(
    "O. Häggström and J. Wästlund",
    "Rigorous computer analysis of the Chow-Robbins game",
    "The American Mathematical Monthly 120(10), 893-900",
    2013,
)
SUM_AVOID_QA = Reference(
    "anonymous",
    "Rolling dice game and value functions",
    "a question with a worked answer (web page)",
)
D20_POST = Reference(
    "anonymous",
    "Random dice game: simulations and optimal strategy using dynamic programming",
    "blog post",
    2025,
)
VERHOEFF_1999 = Reference(
    "T. Verhoeff",
    "Optimal solitaire Yahtzee player",
    "Eindhoven University of Technology (web page and advisor)",
    1999,
)
GLENN_2006 = Reference(
    "J. Glenn",
    "An optimal strategy for Yahtzee",
    "Loyola College in Maryland, technical report CS-TR-0002",
    2006,
)
PIG_PROJECT = Reference(
    "E. Johnston, A. Mata, J. Tavarez and J. Lai",
    "Dynamic programming game (STA 372-6, project 5)",
    "student project report",
)


def _rows_over_limit(name: str, value: object, rows: float, how: str) -> str | None:
    """Why tables of about `rows` outcome rows can not be built (None where they can)."""
    if rows <= SIZE_LIMIT:
        return None
    return (
        f"{name}={value!r} gives tables of about {rows:.3g} outcome rows ({how}), over the "
        f"limit of {float(SIZE_LIMIT):.3g} (dice_envs.games.base.SIZE_LIMIT); the env still "
        "steps, and a specialised solver may still solve it"
    )


def _chow_robbins_tables(kwargs: dict[str, Any]) -> str | None:
    horizon = kwargs.get("horizon", 100)
    if not isinstance(horizon, int):
        return None  # the model's own check names a bad value
    # (tosses, heads) with tosses < horizon, and at most three outcome rows each.
    return _rows_over_limit("horizon", horizon, 1.5 * horizon * (horizon + 1), "3 per position")


def _ten_thousand_tables(kwargs: dict[str, Any]) -> str | None:
    cap = kwargs.get("max_turn_score", 100)
    if not isinstance(cap, int):
        return None
    # An upper bound: every observation of the grid, each of the 15 actions, each of the 45
    # scoring configurations a roll can show, and the bust.
    return _rows_over_limit("max_turn_score", cap, (cap + 25) * 45 * 6 * 15 * 46, "an upper bound")


def _ten_thousand_duel_tables(kwargs: dict[str, Any]) -> str | None:
    from dice_envs.games.ten_thousand_duel import TenThousandDuel

    goal = kwargs.get("goal", 10_000)
    try:
        model = TenThousandDuel(goal, kwargs.get("allowed_moves"))
    except (TypeError, ValueError):
        return None  # the model's own check names a bad value
    return _rows_over_limit("goal", goal, model.table_size().rows, "both seats' positions")


def _yahtzee_tables(kwargs: dict[str, Any]) -> str | None:
    from dice_envs.games.yahtzee import NUM_BOXES, REGISTRY_TABLE_BOXES

    boxes = kwargs.get("boxes")
    if boxes is not None and (isinstance(boxes, str | bytes) or not hasattr(boxes, "__len__")):
        return None  # the model's own check names a bad value
    count = NUM_BOXES if boxes is None else len(boxes)
    limit = REGISTRY_TABLE_BOXES
    if count <= limit:
        return None
    return (
        f"the game has tables only with at most {limit} boxes in play (boxes=[...]; a "
        f"turn alone has about 5 million outcome rows), this one has {count}: its model gives "
        "its structure (turn-start states, the graph inside a turn) for structure-aware "
        "solvers instead"
    )


# -- the games ---------------------------------------------------------------------------------
register_game(
    "dice_envs/SumAvoid-v0",
    "dice_envs.games.sum_avoid:SumAvoid",
    [{}, {"N": 7, "sides": 4}, {"N": 3, "sides": 8, "max_sum": 30}],
    summary="roll a d6 and add; stop for the sum, but a multiple of 10 pays 0",
    references=[SUM_AVOID_QA],
    policies=["stop-at-20", "stop-at-25", "stop-at-30"],
)
register_game(
    "dice_envs/D20Rounds-v0",
    "dice_envs.games.d20_rounds:D20Rounds",
    [{"rounds": 12}, {"rounds": 5, "sides": 6, "start_face": 3}, {"rounds": 1}],
    summary="100 rounds: take the d20's face in dollars, or reroll it",
    references=[D20_POST],
    policies=["take-anything", "roll-once", "reroll-below-max", "take-above-10"],
    solver="baselines.specialised:solve_d20_rounds",
    solver_rows="baselines.specialised:d20_rounds_rows",
    cost="dice_envs.costs:d20_rounds",
)
register_game(
    "dice_envs/Pig-v0",
    "dice_envs.games.pig:PigVersus",
    [
        {"goal": 20},
        {"goal": 12, "opponent": "keep-pace", "agent_starts": False},
        {
            "goal": 10,
            "die_probs": (0.3, 0.1, 0.1, 0.1, 0.2, 0.2),
            "opponent": "two-player-optimal",
        },
        {"goal": 3, "opponent": "random", "agent_starts": False},
    ],
    summary="two-player Pig to 100 against a fixed opponent (hold-at-20), win = 1",
    references=[NELLER_PRESSER_2004, TIJMS_2012, PIG_PROJECT],
    policies=["hold-at-20", "hold-at-25", "keep-pace", "two-player-optimal"],
    solver="baselines.specialised:solve_pig_fold",
    # The layered solver needs no tables: past TABLE_ROWS_LIMIT they are not built for the
    # residual (they would be 200 million rows at goal 300).
    solver_rows="dice_envs.sizes:estimated_rows",
    two_player_solver="baselines.two_player:pig_optimum",
    cost="dice_envs.costs:pig_fold",
)
register_game(
    "dice_envs/TenThousand-v0",
    "dice_envs.games.ten_thousand:TenThousand",
    [
        {},
        {"allowed_moves": [], "max_turn_score": 30},
        {"allowed_moves": ["5", "1", "t2"], "max_turn_score": 60},
    ],
    summary="one turn of solitaire Ten Thousand (Farkle), in chips, masked actions",
    references=[CROCCE_MORDECKI],
    policies=["stop-at-6", "stop-at-10", "stop-at-20"],
    tables_refused=_ten_thousand_tables,
    solver="baselines.ten_thousand:solve_ten_thousand",
)
register_game(
    "dice_envs/TenThousandDuel-v0",
    "dice_envs.games.ten_thousand_duel:TenThousandDuelVersus",
    [
        {"goal": 300},
        {"goal": 250, "allowed_moves": [], "opponent": "stop-at-4", "agent_starts": False},
        {"goal": 200, "opponent": "two-player-optimal"},
    ],
    summary="competitive Ten Thousand: the race to 10,000 points, each turn Crocce and "
    "Mordecki's, against their optimal solitaire turn, win = 1",
    references=[CROCCE_MORDECKI],
    policies=["crocce-mordecki", "stop-at-20", "two-player-optimal"],
    tables_refused=_ten_thousand_duel_tables,
    vector_entry_point="dice_envs.envs.ten_thousand_duel_vector:race_vector_env",
    structure_solver="baselines.ten_thousand_duel:solve_race_fold",
    structure_evaluator="baselines.ten_thousand_duel_evaluation:evaluate_race_policy",
    two_player_solver="baselines.ten_thousand_duel:race_optimum",
    cost="dice_envs.costs:ten_thousand_duel",
)
register_game(
    "dice_envs/PigSolitaire-v0",
    "dice_envs.games.pig:PigSolitaire",
    [{"goal": 20}, {"goal": 12, "objective": "turn_score"}, {"goal": 10, "sides": 4}],
    summary="Pig alone: reach 100 in the fewest turns (reward -1 per turn)",
    references=[TIJMS_2012, HAIGH_ROTERS_2000, CROCCE_MORDECKI, ROTERS_1998],
    # Reaching the goal ends a turn, so hold-at-K alone holds at min(K, points still needed),
    # as Tijms stipulates.
    policies=["hold-at-20", "hold-at-25"],
)
register_game(
    "dice_envs/TwoDicePig-v0",
    "dice_envs.games.two_dice_pig:TwoDicePigVersus",
    [
        {"goal": 20},
        {"goal": 12, "opponent": "tijms", "agent_starts": False},
        {"goal": 9, "sides": 4, "opponent": "two-player-optimal"},
        {"goal": 3, "opponent": "random", "agent_starts": False},
    ],
    summary="Pig with two dice (a double 1 loses the whole score) to 100 against hold-at-20, "
    "win = 1",
    references=[TIJMS_2012, NELLER_PRESSER_2004],
    policies=["hold-at-20", "tijms", "two-player-optimal"],
    two_player_solver="baselines.two_player:two_dice_pig_optimum",
)
register_game(
    "dice_envs/TwoDicePigSolitaire-v0",
    "dice_envs.games.two_dice_pig:TwoDicePigSolitaire",
    [{"goal": 20}, {"goal": 9, "sides": 4}, {"goal": 1}],
    summary="two-dice Pig alone: reach 100 in the fewest turns",
    references=[TIJMS_2012],
    policies=["tijms", "hold-at-20"],
)
register_game(
    "dice_envs/Hog-v0",
    "dice_envs.games.hog:HogVersus",
    [
        {"goal": 20},
        {"goal": 15, "max_dice": 4, "opponent": "dice-2", "agent_starts": False},
        {"goal": 12, "max_dice": 3, "sides": 4, "opponent": "two-player-optimal"},
        {"goal": 5, "opponent": "random", "agent_starts": False},
    ],
    summary="Hog to 100: one throw of 1-10 dice a turn, against the five-dice rule, win = 1",
    references=[TIJMS_2012, NELLER_PRESSER_2004],
    policies=["five-dice", "dice-5", "two-player-optimal"],
    two_player_solver="baselines.two_player:hog_optimum",
)
register_game(
    "dice_envs/HogSolitaire-v0",
    "dice_envs.games.hog:HogSolitaire",
    [{"goal": 20}, {"goal": 12, "max_dice": 3, "sides": 4}, {"goal": 1}],
    summary="Hog alone: reach 100 in the fewest throws",
    references=[TIJMS_2012],
    policies=["five-dice", "dice-5"],
)
register_game(
    "dice_envs/SimultaneousHog-v0",
    "dice_envs.games.simultaneous_hog:SimultaneousHogVersus",
    [
        {"goal": 12, "max_dice": 3},
        {"goal": 8, "max_dice": 2, "sides": 4, "opponent": "random"},
        {"goal": 5, "max_dice": 3, "opponent": "dice-2"},
    ],
    summary="Hog to 100 with both throwing at once (the television game), against the "
    "five-dice rule, win = 1; its equilibrium mixes",
    references=[TIJMS_VAN_DER_WAL_2006, TIJMS_2012],
    policies=["five-dice", "dice-5", "equilibrium"],
    solver="baselines.simultaneous:solve_simultaneous_fold",
    solver_rows="baselines.simultaneous:simultaneous_outcome_rows",
    equilibrium_solver="baselines.simultaneous:solve_equilibrium",
    cost="dice_envs.costs:simultaneous_hog",
)
register_game(
    "dice_envs/DieStopping-v0",
    "dice_envs.games.stopping:DieStopping",
    [{}, {"rolls": 1}, {"rolls": 8, "sides": 4}],
    summary="roll a d6 at most five times; stop for the face showing",
    references=[TIJMS_2012],
    policies=["stop-at-1", "stop-at-4", "stop-at-5"],
)
register_game(
    "dice_envs/RedBlackCards-v0",
    "dice_envs.games.stopping:RedBlackCards",
    [{"red": 6, "black": 6}, {"red": 5, "black": 0}, {"red": 3, "black": 9}],
    summary="draw from 26 red and 26 black cards; stop for red minus black",
    references=[TIJMS_2012],
    policies=["stop-at-plus-1", "stop-at-plus-2", "stop-at-plus-3"],
)
register_game(
    "dice_envs/ChowRobbins-v0",
    "dice_envs.games.stopping:ChowRobbins",
    [{"horizon": 30}, {"horizon": 1}, {"horizon": 7}],
    summary="toss a coin at most 100 times; stop for the share of heads",
    references=[CHOW_ROBBINS_1965, HAGGSTROM_WASTLUND_2013, TIJMS_2012, MEDINA_ZEILBERGER_2010],
    policies=["heads-exceed-tails", "stop-at-plus-2", "stop-at-plus-3"],
    tables_refused=_chow_robbins_tables,
    # Banded backward pass, O(N * sqrt(N)); the tables (3 outcome rows per position) are built
    # for the residual only up to baselines.exact.TABLE_ROWS_LIMIT, a horizon of about 3,650.
    solver="baselines.chow_robbins:solve_chow_robbins",
    solver_rows="baselines.specialised:chow_robbins_rows",
    cost="dice_envs.costs:chow_robbins",
)

register_game(
    "dice_envs/Yahtzee-v0",
    "dice_envs.games.yahtzee:Yahtzee",
    [
        {},
        {"joker": "verhoeff", "boxes": ["ones", "yahtzee", "chance"]},
        {"joker": "free", "boxes": ["small_straight", "yahtzee"]},
    ],
    summary="solitaire Yahtzee: 13 turns of five dice and two rerolls, official scoring and "
    "bonuses, a choice of joker rule",
    references=[VERHOEFF_1999, GLENN_2006],
    policies=["score-at-once", "greedy-turn"],
    tables=False,
    tables_refused=_yahtzee_tables,
    entry_point="dice_envs.envs.yahtzee:YahtzeeEnv",
    vector_entry_point="dice_envs.envs.yahtzee_vector:YahtzeeVectorEnv",
    structure_solver="baselines.yahtzee:solve_yahtzee",
    structure_evaluator="baselines.yahtzee_evaluation:evaluate_yahtzee",
    sampled_player="baselines.yahtzee_sampled:YahtzeePlayer",
    cost="dice_envs.costs:yahtzee",
    page_variants=[{"joker": "forced"}, {"joker": "free"}, {"joker": "verhoeff"}],
)

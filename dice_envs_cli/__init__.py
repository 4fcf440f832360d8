"""The `dice-envs` command: what users do with the games, one subcommand each.

    dice-envs games [GAME]                            the registered games, or one in full
    dice-envs solve GAME [key=value ...]              the optimal value
    dice-envs evaluate GAME [key=value ...] --policy POLICY
    dice-envs exploitability GAME [key=value ...] --policy POLICY
    dice-envs equilibrium GAME [key=value ...]        a simultaneous game's equilibrium
    dice-envs play GAME [key=value ...]               play in the terminal, the exact values shown
    dice-envs train | sweep | tune | report ...       training (see each one's --help)

GAME is a registered id (dice_envs/Pig-v0) or its short name (pig, sum_avoid). POLICY is a
named policy of the game (`dice-envs games GAME` lists them: "hold-at-20"; "optimal", the
optimum of the game as registered, its opponent included; "two-player-optimal" or
"equilibrium", a two-player game's own optimum), a saved table (a .npy file over the
observation grid), a saved SB3 model (.zip) or a run folder of the run store. Options may come
in any order; `--json` prints one JSON object.

Exit status: 0 done; 2 what was typed does not fit (the usage line and the error); 1 an
internal error (one line; `--debug` or DICE_ENVS_DEBUG=1 shows its traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import inspect
import json
import os
import shutil
import sys
import textwrap
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

# Subcommands that are whole commands of their own: their arguments go to their main().
DELEGATED = {
    "train": ("training.train", "train one config and seed (resumes; reads back a finished run)"),
    "sweep": ("training.sweep", "train every config of a budget, locally or on Ray"),
    "tune": ("training.tune", "search hyperparameters with Ray Tune on the exact gap"),
    "report": ("training.report", "the results table and gap figures of a budget's runs"),
}
# Set to 1 to see an internal error's traceback (as --debug does).
DEBUG_VARIABLE = "DICE_ENVS_DEBUG"
# Text output wraps at the terminal's width, at most this.
MAX_WIDTH = 100


class UsageError(ValueError):
    """What the user typed does not fit: exit 2 with the usage line and this message."""


def load_policy(spec: str, env_id: str, kwargs: dict[str, Any]) -> Any:
    """A policy from the command line as `baselines` takes it: a run folder (of the same game
    and arguments), a .npy table or an SB3 .zip as a path (`dice_envs.policies.as_policy` reads
    them), or a name of the game ("hold-at-20", "optimal") as it is."""
    path = Path(spec)
    if path.is_dir() and (path / "config.yaml").is_file():
        import yaml

        config = yaml.safe_load((path / "config.yaml").read_text())
        run_env_id, run_kwargs = config["env_id"], dict(config["env_kwargs"])
        if run_env_id != env_id or with_defaults(env_id, run_kwargs) != with_defaults(
            env_id, kwargs
        ):
            raise ValueError(
                f"the run in {path} was trained on {run_env_id} {run_kwargs}, not on "
                f"{env_id} {kwargs}: name the same game and arguments"
            )
        return path
    if path.suffix in (".npy", ".zip"):
        if not path.is_file():
            raise ValueError(f"policy file {path} does not exist")
        return path
    return spec


def with_defaults(env_id: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """A game's arguments with its defaults filled in: `goal=30` and `goal=30
    opponent=hold-at-20` name the same Pig."""
    from dice_envs import game

    parameters = inspect.signature(game(env_id).factory).parameters.values()
    defaults = {p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty}
    return {**defaults, **kwargs}


# -- the checking phase: what the user typed, read and checked; each gives the running phase --
Run = Callable[[], dict[str, Any]]


class Game:
    """The game a subcommand names: its id, its arguments as typed and its model (made, so its
    arguments are checked)."""

    def __init__(self, args: argparse.Namespace) -> None:
        from dice_envs import GAMES, find_game, make_model, sizes
        from dice_envs.arguments import parse_kwargs

        self.env_id = _found_game(args.env_id, find_game)
        self.entry = GAMES[self.env_id]
        self.kwargs = parse_kwargs(args.kwargs)
        # Before any work: refused here (exit 2) if it would need more memory than the limit.
        self.estimate = sizes.check(self.env_id, args.command, self.kwargs)
        self.model = make_model(self.env_id, **self.kwargs)

    def check_tables(self) -> None:
        """A ValueError where the registration says the tables are too large here."""
        if self.entry.tables:
            self.entry.check_tables(self.kwargs)

    def head(self) -> dict[str, Any]:
        return {"env_id": self.env_id, "kwargs": self.kwargs}


def _found_game(name: str, find_game: Callable[[str], str]) -> str:
    try:
        return find_game(name)
    except ValueError as error:
        text = str(error).replace(
            "dice_envs.env_ids() lists the registered ids", "`dice-envs games` lists them"
        )
        raise UsageError(text) from None


def _games(args: argparse.Namespace) -> Run:
    from dice_envs import env_ids, find_game

    chosen = list(env_ids()) if args.env_id is None else [_found_game(args.env_id, find_game)]

    def run() -> dict[str, Any]:
        found = [game_record(env_id) for env_id in chosen]
        return found[0] if args.env_id is not None else {"games": found}

    return run


def game_record(env_id: str) -> dict[str, Any]:
    """What `games` says of one game: names, players, arguments and policies with what each
    is."""
    from dice_envs import GAMES
    from dice_envs.policies import policy_descriptions
    from dice_envs.registration import short_name

    entry = GAMES[env_id]
    return {
        "env_id": env_id,
        "short_name": short_name(env_id),
        "players": entry.players,
        "summary": entry.summary,
        "arguments": [
            {"name": a.name, "default": a.default, "description": a.description}
            for a in entry.arguments
        ],
        "policies": [
            {"name": name, "description": text}
            for name, text in policy_descriptions(env_id).items()
        ],
        "references": [str(reference) for reference in entry.references],
    }


def _solve(args: argparse.Namespace) -> Run:
    import baselines

    game = Game(args)
    entry = game.entry
    own = entry.solver or entry.structure_solver
    if args.method == "specialised" and own is None:
        raise UsageError(f"--method specialised: {game.env_id} has no specialised solver")
    if not (own and args.method in ("auto", "specialised")):  # solved on its tables
        entry.check_tables(game.kwargs)

    def run() -> dict[str, Any]:
        solution = baselines.solve(game.env_id, method=args.method, **game.kwargs)
        result = {**game.head(), "value": solution.value}
        for key, attribute in SOLUTION_FIELDS.items():  # a Yahtzee solution lacks some
            if hasattr(solution, attribute):
                result[key] = _measured_or_none(getattr(solution, attribute))
        if result.get("states", 0) is None and result.get("table_seconds") == 0:
            result["table_seconds"] = None  # no tables were built, not built in no time
        result.update(two_player_value(game))
        return result

    return run


def _measured_or_none(value: Any) -> Any:
    """A solution's field, or None where its solver did not measure it (a state count of -1 or
    a NaN residual: a specialised solve at arguments whose tables are not built)."""
    value = _plain(value)
    if isinstance(value, float) and value != value or isinstance(value, int) and value < 0:
        return None
    return value


# What `solve` prints of a solution besides its value, where the solution has it.
SOLUTION_FIELDS = {
    "method": "method",
    "seconds": "seconds",
    "states": "num_states",
    "bellman_residual": "bellman_residual",
    "table_seconds": "table_seconds",
}


def two_player_value(game: Game) -> dict[str, Any]:
    """An alternating two-player game's own value beside the value against its opponent: the
    first player's win probability with both optimal (none for other games; a simultaneous
    game's is `dice-envs equilibrium`'s, whose solve takes seconds more than this one)."""
    if game.entry.players != "two" or game.entry.two_player_solver is None:
        return {}
    from baselines.two_player import two_player_optimum

    return {
        "two_player_value": two_player_optimum(game.model.model).value,
        "two_player_value_is": "the first player's win probability with both players optimal "
        "(two-player-optimal)",
    }


class ChosenPolicy:
    """The `--policy` of a subcommand: read and checked against the game; `spec` is what
    `baselines` is given (a name as typed, or the policy a file or run folder holds) and
    `description` says what it is in one line."""

    def __init__(self, args: argparse.Namespace, game: Game, *, stochastic: bool = False) -> None:
        from dice_envs.policies import (
            SOLVED_POLICIES,
            as_policy,
            describe_policy,
            model_policy_names,
        )

        self.text = args.policy
        loaded = _checked("--policy", load_policy, args.policy, game.env_id, game.kwargs)
        is_path = isinstance(loaded, Path)
        if stochastic and not (is_path and (loaded.is_dir() or loaded.suffix == ".zip")):
            raise UsageError(
                "--stochastic is for an SB3 model (a .zip, or a run folder of one): it scores "
                "the model's action distribution; a name or a table plays as it stands"
            )
        if is_path:
            self.spec = _checked(
                "--policy", as_policy, loaded, game.model, deterministic=not stochastic
            )
            self.description = path_description(loaded, self.spec, game.model, stochastic)
            return
        self.spec = loaded
        try:
            self.description = describe_policy(game.model, loaded)
        except ValueError:
            names = ", ".join(model_policy_names(game.model))
            raise UsageError(
                f"--policy {loaded}: {game.env_id} takes {names} (`dice-envs games "
                f"{game.entry.slug}` says what each is), a .npy table, an SB3 .zip or a run folder"
            ) from None
        if loaded not in SOLVED_POLICIES:  # a name of the game's own: made, so K is checked
            _checked(f"--policy {loaded}", as_policy, loaded, game.model)


def _checked(option: str, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """`function(*args, **kwargs)`, its ValueError as a UsageError naming `option`."""
    try:
        return function(*args, **kwargs)
    except ValueError as error:
        raise UsageError(f"{option}: {error}") from None


def path_description(path: Path, policy: Any, model: Any, stochastic: bool) -> str:
    """What a policy read from a file or a run folder is, in one line."""
    if path.is_dir():
        import yaml

        config = yaml.safe_load((path / "config.yaml").read_text())
        seed = path.name.split("-")[0].removeprefix("seed")
        how = ", its action distribution" if stochastic else ""
        algo = config.get("algo", "training")
        return f"the final policy of the {algo} run (seed {seed}) in {path}{how}"
    if path.suffix == ".zip":
        return f"the SB3 model saved in {path} ({'sampled' if stochastic else 'greedy'})"
    table = getattr(policy, "table", None)
    mixed = table is not None and table.ndim > len(model.observation_nvec)
    kind = "action probabilities" if mixed else "actions"
    return f"the table saved in {path}: {kind} over the observation grid"


def _where_lost(count: int) -> int:
    if count < 1:
        raise UsageError(f"--where-lost must be a whole number >= 1 (how many rows), got {count}")
    return count


def _evaluate(args: argparse.Namespace) -> Run:
    import baselines

    game = Game(args)
    game.check_tables()
    count = _where_lost(args.where_lost)
    policy = ChosenPolicy(args, game, stochastic=args.stochastic)

    def run() -> dict[str, Any]:
        start = time.perf_counter()
        evaluation = baselines.evaluate(
            policy.spec, game.env_id, deterministic=not args.stochastic, **game.kwargs
        )
        result = {**game.head(), "policy": policy.text, "policy_is": policy.description}
        result.update(evaluation.as_dict())
        result["where_lost"] = [loss.as_dict() for loss in evaluation.where_lost(count)]
        result["seconds"] = time.perf_counter() - start
        return result

    return run


def _exploitability(args: argparse.Namespace) -> Run:
    import baselines
    from dice_envs import GAMES

    game = Game(args)
    if game.entry.players == "one":
        two = ", ".join(sorted(e.slug for e in GAMES.values() if e.players != "one"))
        raise UsageError(f"{game.env_id} is a one-player game; exploitability is of {two}")
    if "opponent" in game.kwargs:
        raise UsageError(
            "opponent=: exploitability plays the policy of --policy against a best response; "
            "leave opponent out"
        )
    game.check_tables()
    policy = ChosenPolicy(args, game)

    def run() -> dict[str, Any]:
        found = baselines.exploitability(policy.spec, game.env_id, **game.kwargs)
        return {
            **game.head(),
            "policy": policy.text,
            "policy_is": policy.description,
            **found.as_dict(),
        }

    return run


def _equilibrium(args: argparse.Namespace) -> Run:
    import baselines
    from dice_envs import GAMES

    game = Game(args)
    if game.entry.equilibrium_solver is None:
        found = ", ".join(e.slug for e in GAMES.values() if e.equilibrium_solver is not None)
        raise UsageError(f"{game.env_id} has no equilibrium: it is of {found}")
    nvec = tuple(int(n) for n in game.model.observation_nvec)
    for obs in args.at:
        if len(obs) != len(nvec) or not all(0 <= v < n for v, n in zip(obs, nvec, strict=True)):
            shown = ",".join(map(str, obs))
            bounds = ",".join(f"0..{n - 1}" for n in nvec)
            raise UsageError(f"--at {shown}: a position is {bounds} (own score, opponent score)")

    def run() -> dict[str, Any]:
        found = baselines.equilibrium(game.env_id, **game.kwargs)
        result = {
            **game.head(),
            "value": found.value,
            "mixed_positions": int(found.mixed_positions),
            "saddle_gap": found.saddle_gap,
            "seconds": found.seconds,
        }
        for obs in args.at:
            key = ",".join(map(str, obs))
            result[f"strategy at {key}"] = found.strategy(obs).round(6).tolist()
            result[f"value at {key}"] = found.value_at(obs)
        return result

    return run


def _observation_pair(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"an observation looks like 3,5; got {text!r}") from None


# -- output ----------------------------------------------------------------------------------
def _print(result: dict[str, Any], as_json: bool, out: TextIO) -> None:
    if as_json:
        print(json.dumps(result, default=_plain), file=out)
        return
    width = max(map(len, result), default=0)
    round_off = _round_off_gap(result)
    for key, value in result.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            print(f"{key:>{width}}:", file=out)
            for row in value:
                _print_row(row, " " * (width + 2), out)
        elif key == "where_lost" and value == []:
            print(f"{key:>{width}}: none (no observation loses more than round-off)", file=out)
        elif key in ("gap", "relative_gap") and round_off:
            print(f"{key:>{width}}: 0", file=out)
        elif key in SOLUTION_FIELDS and value is None:
            print(f"{key:>{width}}: not measured (no tables at these arguments)", file=out)
        else:
            print(f"{key:>{width}}: {_shown(value)}", file=out)


def _round_off_gap(result: dict[str, Any]) -> bool:
    """Whether an evaluation's gap is round-off: at most `LOSS_TOLERANCE` x max(1, |optimum|),
    the bound below which `where_lost` leaves a loss out (text shows such a gap as 0; --json
    keeps the number as computed)."""
    if "gap" not in result or "optimal_value" not in result:
        return False
    from baselines.protocols import LOSS_TOLERANCE

    return abs(result["gap"]) <= LOSS_TOLERANCE * max(1.0, abs(result["optimal_value"]))


def _print_row(row: dict[str, Any], indent: str, out: TextIO) -> None:
    """One row of a listing, on one line."""
    print(indent + ", ".join(f"{k} {_shown(v)}" for k, v in row.items()), file=out)


def _shown(value: Any) -> str:
    """A value as text output shows it: counts with thousands separators, floats to 10
    significant digits."""
    value = _plain(value)
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.10g}"
    return str(value)


def _plain(value: Any) -> Any:
    if hasattr(value, "item") and getattr(value, "shape", None) == ():  # a numpy scalar
        return value.item()
    return value if isinstance(value, str | int | float | list | dict | tuple) else str(value)


def _print_games(result: dict[str, Any], out: TextIO) -> None:
    """The games as text: each one's names, players, summary, arguments and policies; one
    game (`games GAME`) with what each argument and policy is."""
    # The terminal's width where the output is one (a pipe or a file gets MAX_WIDTH, whatever
    # COLUMNS says, so what a script reads does not depend on where it ran).
    terminal = getattr(out, "isatty", lambda: False)()
    width = (
        min(shutil.get_terminal_size((MAX_WIDTH, 24)).columns, MAX_WIDTH) if terminal else MAX_WIDTH
    )
    if "games" not in result:
        _print_game(result, width, out)
        return
    for record in result["games"]:
        arguments = ", ".join(f"{a['name']}={a['default']!r}" for a in record["arguments"])
        fields = {
            "short name": record["short_name"],
            "players": record["players"],
            "summary": record["summary"],
            "arguments": arguments or "none",
            "policies": "; ".join(p["name"] for p in record["policies"]),
        }
        print(f"\n{record['env_id']}", file=out)
        for key, text in fields.items():
            print(_wrapped(f"  {key:>10}: ", text, width), file=out)
    print("\n`dice-envs games GAME` says what each argument and policy of GAME is.", file=out)


def _print_game(record: dict[str, Any], width: int, out: TextIO) -> None:
    print(f"{record['env_id']} ({record['short_name']}): {record['summary']}", file=out)
    print(f"players: {record['players']}", file=out)
    print("\narguments (key=value; the defaults shown):", file=out)
    rows = [(f"{a['name']}={a['default']!r}", a["description"]) for a in record["arguments"]]
    _print_pairs(rows or [("none", "")], width, out)
    print("\npolicies (--policy NAME; K stands for a whole number):", file=out)
    _print_pairs([(p["name"], p["description"]) for p in record["policies"]], width, out)
    if record["references"]:
        print("\nreferences:", file=out)
        for reference in record["references"]:
            print(_wrapped("  ", reference, width), file=out)


def _print_pairs(rows: list[tuple[str, str]], width: int, out: TextIO) -> None:
    column = min(max(len(name) for name, _ in rows), 24)
    for name, text in rows:
        head = f"  {name:<{column}}  "
        if len(head) > column + 4:  # a long name: its text on the next lines
            print(head.rstrip(), file=out)
            head = " " * (column + 4)
        print(_wrapped(head, text, width), file=out)


def _wrapped(head: str, text: str, width: int) -> str:
    return (
        textwrap.fill(text, width, initial_indent=head, subsequent_indent=" " * len(head))
        or head.rstrip()
    )


# -- the parsers and main ----------------------------------------------------------------------
COMMANDS = {
    "games": ("the registered games, or one with its arguments and policies", _games),
    "solve": ("the optimal value of a game", _solve),
    "evaluate": ("the exact value of a policy, its gap and where it loses", _evaluate),
    "exploitability": ("what a best response wins against a policy", _exploitability),
    "equilibrium": ("a simultaneous game's equilibrium", _equilibrium),
    "play": ("play in the terminal with the exact value of every action shown", None),
}


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser: it lists the subcommands (each parses its own arguments)."""
    parser = argparse.ArgumentParser(
        prog="dice-envs",
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n\n", 1)[1],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, (text, _run) in COMMANDS.items():
        commands.add_parser(name, help=text)
    for name, (_module, text) in DELEGATED.items():
        commands.add_parser(name, help=text)
    return parser


def command_parser(name: str) -> argparse.ArgumentParser:
    """The parser of subcommand `name`: options and positionals in any order."""
    text, run = COMMANDS[name]
    parser = argparse.ArgumentParser(prog=f"dice-envs {name}", description=text)
    parser.set_defaults(run=run, command=name)
    parser.add_argument(
        "--debug",
        action="store_true",
        help=f"show an internal error's traceback (or {DEBUG_VARIABLE}=1)",
    )
    if name != "play":
        parser.add_argument("--json", action="store_true", help="print one JSON object")
    if name != "games":
        parser.add_argument(
            "--max-memory",
            metavar="SIZE",
            help="refuse work estimated to need more memory than this (8G, 500M; default: "
            "$DICE_ENVS_MAX_MEMORY, else 75%% of physical memory)",
        )
    if name == "games":
        parser.add_argument(
            "env_id", nargs="?", default=None, metavar="GAME", help="one game: an id or short name"
        )
        return parser
    parser.add_argument(
        "env_id",
        metavar="GAME",
        help="a registered id (dice_envs/Pig-v0) or its short name (pig, sum_avoid)",
    )
    parser.add_argument("kwargs", nargs="*", metavar="key=value", help="game arguments")
    if name == "solve":
        from baselines import METHODS

        parser.add_argument("--method", default="auto", choices=METHODS)
    if name in ("evaluate", "exploitability"):
        parser.add_argument(
            "--policy",
            required=True,
            help="a named policy of the game (dice-envs games GAME lists them; 'optimal': the "
            "game's optimum as registered), a .npy table, an SB3 .zip or a run folder",
        )
    if name == "evaluate":
        parser.add_argument("--stochastic", action="store_true", help="an SB3 model as it samples")
        parser.add_argument(
            "--where-lost", type=int, default=5, help="how many observations of largest loss"
        )
    if name == "equilibrium":
        parser.add_argument(
            "--at", type=_observation_pair, nargs="*", default=[], help="positions own,other"
        )
    if name == "play":
        parser.add_argument("--seed", type=int, default=None, help="the env's seed")
        from dice_envs_cli.solve_cache import ClearCache

        parser.add_argument(
            "--clear-cache",
            action=ClearCache,
            help="remove the solutions kept on disk (a solve of over a second is kept for the "
            "next launch, in $DICE_ENVS_CACHE, else $XDG_CACHE_HOME/dice-envs or "
            "~/.cache/dice-envs) and exit",
        )
    return parser


def main(argv: list[str] | None = None, stdin: TextIO = sys.stdin, out: TextIO = sys.stdout) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = os.environ.get(DEBUG_VARIABLE, "") not in ("", "0")
    if argv and argv[0] in DELEGATED:
        return _delegated(argv[0], argv[1:], debug)
    if not argv or argv[0] not in COMMANDS:
        build_parser().parse_args(argv)  # prints the help, or the error for an unknown command
        return 2
    parser = command_parser(argv[0])
    args = parser.parse_intermixed_args(argv[1:])
    debug = debug or args.debug
    try:
        limit = _memory_limit(getattr(args, "max_memory", None))
    except ValueError as error:
        parser.error(str(error))
    with limit, _progress(getattr(args, "json", False)):
        return _checked_and_run(parser, args, debug, stdin, out)


def _memory_limit(typed: str | None) -> contextlib.AbstractContextManager:
    """`--max-memory` as the limit every check of this command reads (the library's own
    checks included): DICE_ENVS_MAX_MEMORY set for the command's time, then restored."""
    if typed is None:
        return contextlib.nullcontext()
    from dice_envs import sizes

    value = str(sizes.parse_memory(typed, "--max-memory"))
    return _environment(sizes.MEMORY_VARIABLE, value, f"--max-memory {typed}")


@contextlib.contextmanager
def _environment(name: str, value: str, typed_as: str) -> Iterator[None]:
    from dice_envs import sizes

    before, typed_before = os.environ.get(name), sizes.limit_typed_as
    os.environ[name], sizes.limit_typed_as = value, typed_as
    try:
        yield
    finally:
        sizes.limit_typed_as = typed_before
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def _progress(json_output: bool) -> contextlib.AbstractContextManager:
    """Progress bars on stderr for steps of over a second: only when stderr is a terminal and
    the output is not --json."""
    from dice_envs import progress

    return progress.on_terminal(enabled=progress.wanted(json_output))


def _checked_and_run(
    parser: argparse.ArgumentParser,
    args: argparse.Namespace,
    debug: bool,
    stdin: TextIO,
    out: TextIO,
) -> int:
    try:
        if args.command == "play":  # checks and runs at once: a ValueError is the user's
            from dice_envs import find_game, sizes
            from dice_envs.arguments import parse_kwargs
            from dice_envs_cli.play import play

            env_id = _found_game(args.env_id, find_game)
            kwargs = parse_kwargs(args.kwargs)
            sizes.check(env_id, "play", kwargs)  # before any work, as every subcommand
            try:
                return play(env_id, kwargs, args.seed, stdin, out)
            except KeyboardInterrupt:  # Ctrl-C at the prompt: stop without a traceback
                print("", file=out)
                return 130
            except BrokenPipeError:  # the reader left (`dice-envs play pig | head`)
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                return 1
        run = args.run(args)  # checking what was typed: its errors are the user's (exit 2)
    except (ValueError, TypeError) as error:
        parser.error(str(error))
    except Exception as error:
        return _internal_error(args.command, error, debug)
    result = _running(parser, run, debug, getattr(args, "policy", None))
    if isinstance(result, int):
        return result
    try:
        if args.command == "games" and not args.json:
            _print_games(result, out)
        else:
            _print(result, args.json, out)
    except BrokenPipeError:  # the reader left (`dice-envs games | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


def _running(
    parser: argparse.ArgumentParser, run: Run, debug: bool, policy: str | None
) -> dict[str, Any] | int:
    """The running phase: `run()`'s result, or the exit status of its error: a policy that
    does not fit its game (`policy`, as typed) is the user's (exit 2, `--policy` named); any
    other error is an internal one (exit 1)."""
    from dice_envs.policies import PolicyError

    try:
        return run()
    except PolicyError as error:
        parser.error(f"--policy {policy}: {error}")
    except Exception as error:
        return _internal_error(parser.prog.split()[-1], error, debug)


def _internal_error(command: str, error: BaseException, debug: bool) -> int:
    """One line on stderr saying an internal error happened (the traceback with `debug`):
    exit status 1."""
    if debug:
        traceback.print_exception(type(error), error, error.__traceback__, file=sys.stderr)
    hint = "" if debug else f" (run with --debug or {DEBUG_VARIABLE}=1 for the traceback)"
    message = " ".join(str(error).split()) or "(no message)"
    print(
        f"dice-envs {command}: internal error: {type(error).__name__}: {message}{hint}",
        file=sys.stderr,
    )
    return 1


def _delegated(command: str, argv: list[str], debug: bool) -> int:
    """A training subcommand: its own main, under the name `dice-envs <command>`; an error it
    does not catch is an internal error (exit 1)."""
    if "--debug" in argv:
        argv, debug = [arg for arg in argv if arg != "--debug"], True
    module = importlib.import_module(DELEGATED[command][0])
    try:
        return module.main(argv, prog=f"dice-envs {command}")
    except Exception as error:
        return _internal_error(command, error, debug)


if __name__ == "__main__":
    sys.exit(main())

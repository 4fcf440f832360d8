"""The `dice-envs` command: what users do with the games, one subcommand each.

    dice-envs games                                   the registered games
    dice-envs solve ENV_ID [key=value ...]            the optimal value
    dice-envs evaluate ENV_ID [key=value ...] --policy POLICY
    dice-envs exploitability ENV_ID [key=value ...] --policy POLICY
    dice-envs equilibrium ENV_ID [key=value ...]      a simultaneous game's equilibrium
    dice-envs play ENV_ID [key=value ...]             play in the terminal, the exact values shown
                                                      (ENV_ID or a short name: yahtzee, pig)
    dice-envs train | sweep | tune | report ...       training (see each one's --help)

POLICY is a named policy of the game ("hold-at-20"; "optimal": the solution itself), a saved
table (a .npy file over the observation grid), a saved SB3 model (.zip) or a run folder of
the run store. Options may come in any order; `--json` prints one JSON object.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import sys
import time
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import yaml

import baselines
from baselines.arguments import parse_kwargs
from dice_envs import GAMES, env_ids
from dice_envs.policies import policy_names
from dice_envs.registration import game
from dice_envs_cli.play import game_id

# Subcommands that are whole commands of their own: their arguments go to their main().
DELEGATED = {
    "train": ("training.train", "train one config and seed (resumes; reads back a finished run)"),
    "sweep": ("training.sweep", "train every config of a budget, locally or on Ray"),
    "tune": ("training.tune", "search hyperparameters with Ray Tune on the exact gap"),
    "report": ("training.report", "the results table and gap figures of a budget's runs"),
}


def load_policy(spec: str, env_id: str, kwargs: dict[str, Any]) -> Any:
    """A policy from the command line: a run folder (of the same game and arguments), a .npy
    table, an SB3 .zip (as paths: `dice_envs.policies.as_policy` reads them), "optimal" (the
    solution), or a named policy of the game."""
    path = Path(spec)
    if path.is_dir() and (path / "config.yaml").is_file():
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
    if spec == "optimal":
        return baselines.solve(env_id, **kwargs)
    return spec


def with_defaults(env_id: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """A game's arguments with its defaults filled in: `goal=30` and `goal=30
    opponent=hold-at-20` name the same Pig."""
    parameters = inspect.signature(game(env_id).factory).parameters.values()
    defaults = {p.name: p.default for p in parameters if p.default is not inspect.Parameter.empty}
    return {**defaults, **kwargs}


def _games(args: argparse.Namespace) -> dict[str, Any]:
    rows = []
    for env_id in env_ids():
        entry = GAMES[env_id]
        rows.append(
            {
                "env_id": env_id,
                "players": entry.players,
                "summary": entry.summary,
                "policy_names": list(policy_names(env_id)),
                "references": [str(reference) for reference in entry.references],
            }
        )
    return {"games": rows}


def _solve(args: argparse.Namespace) -> dict[str, Any]:
    kwargs = parse_kwargs(args.kwargs)
    solution = baselines.solve(args.env_id, method=args.method, **kwargs)
    result = {"env_id": args.env_id, "kwargs": kwargs, "value": solution.value}
    for key, attribute in SOLUTION_FIELDS.items():  # a Yahtzee solution has no tables' fields
        if hasattr(solution, attribute):
            result[key] = getattr(solution, attribute)
    return result


# What `solve` prints of a solution besides its value, where the solution has it.
SOLUTION_FIELDS = {
    "method": "method",
    "seconds": "seconds",
    "states": "num_states",
    "bellman_residual": "bellman_residual",
    "table_seconds": "table_seconds",
}


def _evaluate(args: argparse.Namespace) -> dict[str, Any]:
    kwargs = parse_kwargs(args.kwargs)
    start = time.perf_counter()
    policy = load_policy(args.policy, args.env_id, kwargs)
    evaluation = baselines.evaluate(
        policy, args.env_id, deterministic=not args.stochastic, **kwargs
    )
    result = {"env_id": args.env_id, "kwargs": kwargs, "policy": args.policy}
    result.update(evaluation.as_dict())
    result["where_lost"] = [loss.as_dict() for loss in evaluation.where_lost(args.where_lost)]
    result["seconds"] = time.perf_counter() - start
    return result


def _exploitability(args: argparse.Namespace) -> dict[str, Any]:
    kwargs = parse_kwargs(args.kwargs)
    policy = load_policy(args.policy, args.env_id, kwargs)
    found = baselines.exploitability(policy, args.env_id, **kwargs)
    return {"env_id": args.env_id, "kwargs": kwargs, "policy": args.policy, **found.as_dict()}


def _equilibrium(args: argparse.Namespace) -> dict[str, Any]:
    kwargs = parse_kwargs(args.kwargs)
    found = baselines.equilibrium(args.env_id, **kwargs)
    result = {
        "env_id": args.env_id,
        "kwargs": kwargs,
        "value": found.value,
        "mixed_positions": found.mixed_positions,
        "saddle_gap": found.saddle_gap,
        "seconds": found.seconds,
    }
    for obs in args.at:
        key = ",".join(map(str, obs))
        result[f"strategy at {key}"] = found.strategy(obs).round(6).tolist()
        result[f"value at {key}"] = found.value_at(obs)
    return result


def _observation_pair(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(v) for v in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"an observation looks like 3,5; got {text!r}") from None


def _print(result: dict[str, Any], as_json: bool, out: TextIO) -> None:
    if as_json:
        print(json.dumps(result, default=_plain), file=out)
        return
    width = max(map(len, result), default=0)
    for key, value in result.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            print(f"{key:>{width}}:", file=out)
            for row in value:
                _print_row(row, " " * (width + 2), out)
        else:
            shown = f"{value:.10g}" if isinstance(value, float) else _plain(value)
            print(f"{key:>{width}}: {shown}", file=out)


def _print_row(row: dict[str, Any], indent: str, out: TextIO) -> None:
    """One row of a listing: on one line where it fits in 100 columns, else a block headed by
    its first field, one line per other field (a list's items joined by "; ")."""
    line = indent + ", ".join(f"{k} {_plain(v)}" for k, v in row.items())
    if len(line) <= 100:
        print(line, file=out)
        return
    (_, heading), *fields = row.items()
    print(f"\n{heading}", file=out)
    width = max(len(key) for key, _ in fields)
    for key, value in fields:
        shown = "; ".join(map(str, value)) if isinstance(value, list) else _plain(value)
        print(f"  {key:>{width}}: {shown}", file=out)


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, float):
        return float(f"{value:.10g}")
    return value if isinstance(value, str | int | list | dict | tuple) else str(value)


COMMANDS = {
    "games": ("the registered games", _games),
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
    if name != "play":
        parser.add_argument("--json", action="store_true", help="print one JSON object")
    if name == "games":
        return parser
    parser.add_argument(
        "env_id", help="a registered id (dice_envs/Pig-v0) or its short name (pig, sum_avoid)"
    )
    parser.add_argument("kwargs", nargs="*", metavar="key=value", help="game arguments")
    if name == "solve":
        parser.add_argument("--method", default="auto", choices=baselines.METHODS)
    if name in ("evaluate", "exploitability"):
        parser.add_argument(
            "--policy",
            required=True,
            help="a named policy, 'optimal', a .npy table, an SB3 .zip or a run folder",
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
    if argv and argv[0] in DELEGATED:
        module = importlib.import_module(DELEGATED[argv[0]][0])
        return module.main(argv[1:])
    if not argv or argv[0] not in COMMANDS:
        build_parser().parse_args(argv)  # prints the help, or the error for an unknown command
        return 2
    parser = command_parser(argv[0])
    args = parser.parse_intermixed_args(argv[1:])
    if hasattr(args, "env_id"):
        args.env_id = game_id(args.env_id)
    try:
        if args.command == "play":
            from dice_envs_cli.play import play

            try:
                return play(args.env_id, parse_kwargs(args.kwargs), args.seed, stdin, out)
            except KeyboardInterrupt:  # Ctrl-C at the prompt: stop without a traceback
                print("", file=out)
                return 130
            except BrokenPipeError:  # the reader left (`dice-envs play pig | head`)
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
                return 1
        result = args.run(args)
    except (ValueError, TypeError) as error:
        parser.exit(2, f"dice-envs {args.command}: error: {error}\n")
    try:
        _print(result, getattr(args, "json", False), out)
    except BrokenPipeError:  # the reader left (`dice-envs games | head`): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Command line: `python -m baselines solve|evaluate ENV_ID [key=value ...] [--json]`, options in
any order (the `dice-envs` command does this and more)."""

from __future__ import annotations

import argparse
import json
import sys
import time

import baselines
from dice_envs.arguments import parse_kwargs
from dice_envs.policies import named_policy


def _release_freed_memory() -> None:
    """Have glibc hand large freed blocks back to the system at once (numpy's big temporary
    arrays otherwise stay in the heap after glibc raises its mmap threshold)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(-3, 1 << 22)  # M_MMAP_THRESHOLD: 4 MiB
    except (OSError, AttributeError):
        pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m baselines", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    solve = commands.add_parser("solve", help="the optimal value of a game")
    solve.add_argument("--method", default="auto", choices=baselines.METHODS)
    evaluate = commands.add_parser("evaluate", help="the exact value of a policy")
    evaluate.add_argument(
        "--policy",
        required=True,
        help="'optimal' or a policy name of the game (see dice_envs.policies.named_policy)",
    )
    for command in (solve, evaluate):
        command.add_argument("env_id")
        command.add_argument("kwargs", nargs="*", metavar="key=value")
        command.add_argument("--json", action="store_true", help="print one JSON object")
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in commands.choices:
        command = commands.choices[argv[0]]
        args = command.parse_intermixed_args(argv[1:], argparse.Namespace(command=argv[0]))
    else:
        args = parser.parse_args(argv)
    _release_freed_memory()
    try:
        kwargs = parse_kwargs(args.kwargs)
        if args.command == "solve":
            solution = baselines.solve(args.env_id, method=args.method, **kwargs)
            result = {
                "env_id": args.env_id,
                "kwargs": kwargs,
                "value": solution.value,
                "seconds": solution.seconds,
                "method": solution.method,
                "states": solution.num_states,
                "bellman_residual": solution.bellman_residual,
                "table_seconds": solution.table_seconds,
            }
        else:
            start = time.perf_counter()
            tables, optimum = baselines.enumerated(args.env_id, **kwargs)
            if args.policy == "optimal":
                policy = optimum  # the solver's policy, scored by the same exact evaluation
            else:
                policy = named_policy(args.env_id, args.policy, **kwargs)
            evaluation = baselines.evaluate(policy, args.env_id, **kwargs)
            result = {"env_id": args.env_id, "kwargs": kwargs, "policy": args.policy}
            result.update(evaluation.as_dict())
            result["states"] = tables.num_states
            result["table_seconds"] = tables.seconds
            result["evaluation_seconds"] = evaluation.seconds
            result["seconds"] = time.perf_counter() - start
    except (ValueError, TypeError) as error:
        parser.exit(2, f"error: {error}\n")
    if args.json:
        print(json.dumps(result, default=str))
    else:
        for key, value in result.items():
            print(f"{key:>16}: {value:.10g}" if isinstance(value, float) else f"{key:>16}: {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

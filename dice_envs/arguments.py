"""Game arguments from a command line: `key=value` pairs, as `dice-envs` and `python -m
baselines` take them (light: the command line parses them before importing a solver)."""

from __future__ import annotations

import ast
from typing import Any


def parse_kwargs(pairs: list[str]) -> dict[str, Any]:
    """`key=value` pairs; values are Python literals where they parse, else strings."""
    kwargs: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.isidentifier():
            raise ValueError(f"game arguments must look like key=value, got {pair!r}")
        try:
            kwargs[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            kwargs[key] = text
    return kwargs

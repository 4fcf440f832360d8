"""The installed packages are the library: none of them imports the maintainer's tools
(docs/tools) or the benchmarks, or finds the repository's README through its own path."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = ("dice_envs", "baselines", "training", "dice_envs_cli")
SOURCES = sorted(path for package in LIBRARY for path in (ROOT / package).rglob("*.py"))


def imported_modules(tree: ast.AST) -> set[str]:
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_library_does_not_reach_outside_itself(path):
    source = path.read_text()
    outside = {
        name
        for name in imported_modules(ast.parse(source))
        if name.split(".")[0] in ("docs", "benchmarks")
    }
    assert not outside, f"{path.name} imports {outside}"
    assert "README" not in source, f"{path.name} names the README"


def test_the_tools_and_benchmarks_are_not_installed():
    import tomllib

    found = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert found["packages"]["find"]["include"] == [f"{p}*" for p in LIBRARY]
    assert not (ROOT / "docs" / "__init__.py").exists()  # docs/ stays a plain folder

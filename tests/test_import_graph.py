"""No import circle anywhere in the library, not even through an import inside a function, and
no function longer than the house limit."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("dice_envs", "baselines", "training", "dice_envs_cli")
MAX_FUNCTION_LINES = 80


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def library_modules() -> dict[str, Path]:
    return {
        module_name(path): path for package in PACKAGES for path in (ROOT / package).rglob("*.py")
    }


def imported(tree: ast.AST, name: str, is_package: bool, modules: set[str]) -> set[str]:
    """The library modules a module imports, at any depth of its code."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join(anchor + ([base] if base else []))
            # `from package import module` names a module; `from module import name` does not.
            targets = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        found |= {target for target in targets if target in modules}
    return found


def import_graph() -> dict[str, set[str]]:
    modules = library_modules()
    return {
        name: imported(ast.parse(path.read_text()), name, path.name == "__init__.py", set(modules))
        - {name}
        for name, path in modules.items()
    }


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_library_has_no_import_circle():
    assert circles(import_graph()) == []


def test_the_circle_finder_finds_a_circle():
    graph = import_graph()
    graph["dice_envs.games.base"] = graph["dice_envs.games.base"] | {"dice_envs.games.pig"}
    assert any("dice_envs.games.base" in circle for circle in circles(graph))


def long_functions() -> list[str]:
    found = []
    for name, path in library_modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found.append(f"{name}.{node.name}: {length} lines")
    return found


def test_no_function_is_longer_than_the_limit():
    assert long_functions() == []


def test_the_length_check_finds_a_long_function(tmp_path, monkeypatch):
    def function(name: str, lines: int) -> str:
        return f"def {name}():\n" + "    x = 1\n" * (lines - 2) + "    return x\n"

    path = tmp_path / "module.py"
    path.write_text(function("at_the_limit", MAX_FUNCTION_LINES) + function("over", 81))
    monkeypatch.setitem(globals(), "library_modules", lambda: {"module": path})
    assert long_functions() == ["module.over: 81 lines"]

"""The package's shape (issue 20): no import circle, the mathematics imports nothing empirical,
no module over 400 lines, and Typer's private names in one module only.

The import graph is read from the source with ``ast``: module-level and function-level imports
both count (a lazy import is still a dependency), and so do ``from . import x`` forms.
"""
from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "depthwidth"
MAX_LINES = 400
MATHEMATICS = ("depthwidth.theory.separation", "depthwidth.theory.solver", "depthwidth.theory.comparison", "depthwidth.theory.exact",
               "depthwidth.theory.certify", "depthwidth.theory.gridrank", "depthwidth.theory.primes")
# what the mathematics may import: other mathematics, the shape type, the error type and the record decorator
MATHEMATICS_MAY_IMPORT = set(MATHEMATICS) | {"depthwidth.theory", "depthwidth.theory.shapes", "depthwidth.core.errors",
                                             "depthwidth.core.frozen", "depthwidth.core.num"}
TYPER_PRIVATE = ("typer._", "_runtime_param", "typer.main._", "click._", "RuntimeParam", "typer.core", "TyperGroup", "parse_args(")
TYPER_COMPAT = PACKAGE / "cli" / "_typer_compat.py"


def module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, pathlib.Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: pathlib.Path, known: set[str]) -> set[str]:
    """The depthwidth modules ``name`` imports, anywhere in its source (its own parent packages,
    which Python has imported before it, are no dependency)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found |= {f"{target}.{alias.name}" for alias in node.names}  # `from . import blocks` names a module
    ancestors = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}  # always imported first
    return {f for f in found if f in known and f != name and f not in ancestors}


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports_of(name, path, set(found)) for name, path in found.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    """A cycle as a list of modules (first == last), or None; iterative depth-first search."""
    state: dict[str, int] = {}
    for root in sorted(edges):
        if state.get(root):
            continue
        stack = [(root, iter(sorted(edges[root])))]
        path = [root]
        state[root] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
                path.pop()
            elif state.get(child) == 1:
                return path[path.index(child):] + [child]
            elif not state.get(child):
                state[child] = 1
                path.append(child)
                stack.append((child, iter(sorted(edges.get(child, ())))))
    return None


def test_cycle_finder_finds_a_planted_cycle():
    """The checker itself: a three-module circle is found, a diamond is not a circle."""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": set()}) is None


def test_imports_of_reads_relative_and_function_level_imports(tmp_path):
    package = tmp_path / "depthwidth"
    package.mkdir()
    source = package / "x.py"
    source.write_text("from .y import z\n\ndef f():\n    from . import w\n    import depthwidth.v\n")
    known = {"depthwidth.y", "depthwidth.w", "depthwidth.v", "depthwidth.x"}
    assert imports_of("depthwidth.x", source, known) == {"depthwidth.y", "depthwidth.w", "depthwidth.v"}


def test_no_import_cycle():
    assert find_cycle(graph()) is None


def test_the_graph_sees_the_packages():
    edges = graph()
    assert {"depthwidth.output", "depthwidth.advice.planner", "depthwidth.cli.inputs"} <= edges["depthwidth.cli.commands.plan"]
    assert "depthwidth.theory.separation" in edges["depthwidth.theory.solver"]


@pytest.mark.parametrize("name", MATHEMATICS)
def test_mathematics_imports_nothing_empirical(name):
    edges = graph()
    assert edges[name] <= MATHEMATICS_MAY_IMPORT, edges[name] - MATHEMATICS_MAY_IMPORT


def test_no_module_over_400_lines():
    long = {name: n for name, path in modules().items() if (n := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long


def test_typer_private_names_live_in_one_module():
    users = {name for name, path in modules().items()
             if any(word in path.read_text(encoding="utf-8") for word in TYPER_PRIVATE)}
    assert users == {module_name(TYPER_COMPAT)}


ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"


def layer_order() -> list[tuple[str, list[str]]]:
    """The layers of docs/architecture.md's table, top first: (layer, the paths it names)."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    table = text.split("<!-- layer-order", 1)[1].split("\n\n", 1)[0]
    rows = [line.split("|")[1:3] for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    return [(name.strip(), [p.strip("` ") for p in paths.split(",")]) for name, paths in rows[1:]]


def layer_of(name: str, order) -> int:
    """The index (0 = top) of the layer that holds module ``name``."""
    for index, (_, paths) in enumerate(order):
        for path in paths:
            dotted = path.removeprefix("depthwidth/").removesuffix("/").removesuffix(".py").replace("/", ".")
            full = "depthwidth" if dotted == "__init__" else f"depthwidth.{dotted}"
            if name == full or (full != "depthwidth" and name.startswith(full + ".")):
                return index
    raise AssertionError(f"{name} belongs to no layer of docs/architecture.md")


def imports_against_the_order(edges, order):
    return sorted((a, b) for a, deps in edges.items() for b in deps if layer_of(b, order) < layer_of(a, order))


def test_the_layer_table_names_every_module():
    order = layer_order()
    assert [name for name, _ in order] == ["top", "cli", "output", "loop", "advice", "cost", "hf", "arch", "theory", "base"]
    for name in modules():
        layer_of(name, order)


def test_imports_point_down_the_layers():
    assert imports_against_the_order(graph(), layer_order()) == []


def test_an_upward_import_is_found():
    """The checker itself: theory importing the planner is against the order."""
    order = layer_order()
    edges = {"depthwidth.theory.separation": {"depthwidth.advice.planner"}, "depthwidth.advice.planner": {"depthwidth.theory.separation"}}
    assert imports_against_the_order(edges, order) == [("depthwidth.theory.separation", "depthwidth.advice.planner")]


def test_at_most_six_top_level_modules():
    assert len([p for p in PACKAGE.glob("*.py")]) <= 6

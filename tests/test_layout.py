"""The package's shape: no import circle, the mathematics imports nothing empirical, no function
over 60 lines, and Typer's private names in one module only.

The import graph is read from the source with ``ast``: module-level and function-level imports
both count (a lazy import is still a dependency), and so do ``from . import x`` forms.
"""
from __future__ import annotations

import ast
import functools
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "depthwidth"
MAX_FUNCTION_LINES = 60  # one screen (the project's guide)
# TEMPORARY: functions another branch is splitting at the same time; remove each entry once merged
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
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = dynamic_imports(tree, name, package, known)
    for node in ast.walk(tree):
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


def dynamic_imports(tree: ast.AST, name: str, package: str, known: set[str]) -> set[str]:
    """The modules ``import_module(...)`` calls name: a string, or an f-string whose fixed parts,
    ``__name__`` and ``__package__`` are known and whose other parts are resolved statically by
    trying every string literal of the same file (a table of module names such as output/schema.py's
    RECORDS, cli/app.py's COMMANDS, depthwidth/__init__.py's _HOMES), keeping what names a module."""
    literals = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    found = set()
    for node in ast.walk(tree):
        func = getattr(node, "func", None)
        if not (isinstance(node, ast.Call) and node.args and (getattr(func, "id", None) == "import_module"
                                                               or getattr(func, "attr", None) == "import_module")):
            continue
        arg = node.args[0]
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            found.add(arg.value)
        elif isinstance(arg, ast.JoinedStr):
            texts = {""}
            for part in arg.values:
                if isinstance(part, ast.Constant):
                    options = {part.value}
                elif isinstance(part.value, ast.Name) and part.value.id in ("__name__", "__package__"):
                    options = {name if part.value.id == "__name__" else package}
                else:
                    options = literals
                texts = {t + o for t in texts for o in options if any(k.startswith(t + o) for k in known)}
            found |= texts
    return found


def graph() -> dict[str, set[str]]:
    """The package's import graph (read once per test process: every test of the layers asks for it)."""
    return {name: set(edges) for name, edges in _graph().items()}


@functools.lru_cache(maxsize=1)
def _graph() -> dict[str, set[str]]:
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


def test_imports_of_reads_import_module_strings(tmp_path):
    """A module named by ``import_module``: as a string, as an f-string over a table of names in the
    same file, or through ``__package__``; a name in no table is no edge."""
    package = tmp_path / "depthwidth"
    package.mkdir()
    source = package / "x.py"
    source.write_text('from importlib import import_module\nTABLE = {"a": "v", "b": "w"}\n\n'
                      'def f(key):\n    import_module("depthwidth.y")\n    return import_module(f"depthwidth.{TABLE[key]}")\n\n'
                      'def g(key):\n    return import_module(f"{__package__}.{key}")\n')
    known = {"depthwidth.y", "depthwidth.v", "depthwidth.w", "depthwidth.u", "depthwidth.x"}
    assert imports_of("depthwidth.x", source, known) == {"depthwidth.y", "depthwidth.v", "depthwidth.w"}


def test_the_graph_follows_import_module_tables():
    edges = graph()
    assert "depthwidth.cli.commands.plan" in edges["depthwidth.cli.app"]
    assert {"depthwidth.advice.plan_record", "depthwidth.loop.sweep_record", "depthwidth.advice.reports"} <= edges["depthwidth.output.schema"]
    assert {"depthwidth.advice.planner", "depthwidth.arch.blocks"} <= edges["depthwidth"]


def test_an_upward_import_module_is_found(tmp_path):
    """The checker itself: the mathematics loading the planner through a table of names is against the order."""
    package = tmp_path / "depthwidth" / "theory"
    package.mkdir(parents=True)
    source = package / "separation.py"
    source.write_text('from importlib import import_module\nLATER = ("advice.planner",)\n\n'
                      'def f(i):\n    return import_module(f"depthwidth.{LATER[i]}")\n')
    known = set(modules())
    edges = {"depthwidth.theory.separation": imports_of("depthwidth.theory.separation", source, known)}
    assert imports_against_the_order(edges, layer_order()) == [("depthwidth.theory.separation", "depthwidth.advice.planner")]


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


def long_functions(name: str, source: str, limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    """Every function (and method) of ``source`` longer than ``limit`` lines, counted from its
    ``def`` line to its last line (decorators excluded), by dotted name: module.[class.]function."""
    found = {}

    def visit(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                dotted = f"{prefix}.{child.name}"
                if not isinstance(child, ast.ClassDef) and (n := child.end_lineno - child.lineno + 1) > limit:
                    found[dotted] = n
                visit(child, dotted)
            else:
                visit(child, prefix)

    visit(ast.parse(source), name)
    return found


def test_no_function_over_60_lines():
    long = {}
    for name, path in modules().items():
        long |= long_functions(name, path.read_text(encoding="utf-8"))
    assert not long, long


def test_the_function_length_check_catches_a_planted_long_function():
    """The checker itself: 61 lines from ``def`` (decorators not counted) is over, 60 is not,
    nested functions and methods are seen."""
    body = "".join(f"    x{i} = {i}\n" for i in range(59))
    long = "@decorator\n@another\ndef long():\n" + body + "    return 0\n"          # def + 59 + return = 61
    fits = "@decorator\ndef fits():\n" + body                                      # def + 59 = 60
    nested = "class K:\n    def method(self):\n        def inner():\n" + "".join("        " + line + "\n" for line in body.splitlines()) + "            pass\n"
    assert long_functions("m", long) == {"m.long": 61}
    assert long_functions("m", fits) == {}
    assert long_functions("m", nested, limit=59) == {"m.K.method": 62, "m.K.method.inner": 61}


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

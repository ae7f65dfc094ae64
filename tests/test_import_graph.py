"""Imports flow one way inside ``wwt/`` (issue 26): shells (CLI, MCP server, hook entry, engine) → service →
ingest/search → indexes/embedder/lexical → store → models, with small shared things (time parsing, the writer
lock, Qwen's folders) in modules of their own below their users. A new import circle — an import inside a
function included: a lazy import is still a dependency — fails here, naming the modules in it."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "wwt"


def module_files(root: Path = PACKAGE) -> dict[str, Path]:
    out = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _known(name: str, modules: dict[str, Path]) -> str | None:
    """The module a dotted name lives in (``wwt.a.b.func`` → ``wwt.a.b``), or None outside the package."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module → the package's modules it imports, anywhere in its body (functions and ``if`` blocks too)."""
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = package[: len(package) - node.level + 1] if node.level else []
                source = ".".join(base + ([node.module] if node.module else []))
                # ``from wwt import limits`` imports the module wwt.limits; ``from wwt.x import f`` imports wwt.x
                targets = [f"{source}.{alias.name}" if f"{source}.{alias.name}" in modules else source
                           for alias in node.names]
            for target in targets:
                found = _known(target, modules)
                if found and found != name:
                    graph[name].add(found)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (iterative Tarjan: no recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
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
    return found


def test_the_checker_finds_a_circle_through_a_lazy_import(tmp_path: Path) -> None:
    pkg = tmp_path / "wwt"
    (pkg / "engine").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "engine" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from wwt import b\n")
    (pkg / "b.py").write_text("def f():\n    from wwt.engine.c import g\n")
    (pkg / "engine" / "c.py").write_text("from ..a import x\n")
    (pkg / "d.py").write_text("import wwt.a\n")
    assert circles(import_graph(module_files(pkg))) == [["wwt.a", "wwt.b", "wwt.engine.c"]]


def test_no_import_circles_inside_the_package() -> None:
    found = circles(import_graph(module_files()))
    assert found == [], "import circles: " + "; ".join(" ↔ ".join(c) for c in found)


SHELLS = {
    "wwt.__main__", "wwt.entry", "wwt.cli", "wwt.cli_config", "wwt.cli_integrations", "wwt.cli_team", "wwt.cli_ui",
    "wwt.mcp_server", "wwt.hook", "wwt.worker", "wwt.doctor", "wwt.engine.server", "wwt.engine.client",
    "wwt.engine.commands", "wwt.ui.server",
}


def test_only_shells_import_shells() -> None:
    """Dependencies flow down: the service, ingest/search, indexes, store, parsers and the small shared modules
    import no shell; shells, the engine and the setup wiring may use each other."""
    graph = import_graph(module_files())
    upward = {module: sorted(deps & SHELLS) for module, deps in graph.items()
              if module not in SHELLS and not module.startswith(("wwt.engine", "wwt.setup", "wwt.ui"))
              and deps & SHELLS}
    assert not upward, f"modules below the shells importing a shell: {upward}"

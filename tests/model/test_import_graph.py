"""``chatcodec.model`` has no import cycle: ``codec.py`` sits on top, its helpers never import it back.

Every import counts, wherever it is written (module level, inside a function, under
``TYPE_CHECKING``): a helper that needs the model takes plain values (``PromptModel``,
``ResponseDecoding``, ``TokenizerHandle``, ``CodecState``, ``LoadedModel``) instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

import chatcodec.model

PACKAGE = "chatcodec.model"
FOLDER = Path(chatcodec.model.__file__).parent


def imported_modules(path: Path) -> set[str]:
    """The ``chatcodec.model`` modules ``path`` imports, by their short names (``"codec"``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == PACKAGE:
                found.update(alias.name for alias in node.names)
            elif node.module.startswith(PACKAGE + "."):
                found.add(node.module.removeprefix(PACKAGE + ".").split(".")[0])
        elif isinstance(node, ast.Import):
            found.update(alias.name.removeprefix(PACKAGE + ".").split(".")[0]
                         for alias in node.names if alias.name.startswith(PACKAGE + "."))
    return found - {path.stem}


def import_graph() -> dict[str, set[str]]:
    return {path.stem: imported_modules(path) for path in sorted(FOLDER.glob("*.py"))}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path (``["a", "b", "a"]``), or ``None``."""
    state: dict[str, str] = {}

    def visit(node: str, path: list[str]) -> list[str] | None:
        state[node] = "open"
        for target in sorted(graph.get(node, ())):
            if state.get(target) == "open":  # the open nodes are the current path
                return [*path[path.index(target):], target]
            if target not in state and (cycle := visit(target, [*path, target])) is not None:
                return cycle
        state[node] = "done"
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start, [start])) is not None:
            return cycle
    return None


def test_the_graph_reads_real_imports() -> None:
    graph = import_graph()
    assert {"prompts", "prefixes", "responses", "loading", "saving", "tokenizer"} <= graph["codec"]
    assert "tokenizer" in graph["prefixes"]


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert find_cycle({"codec": {"loading"}, "loading": {"config", "codec"}, "config": set()}) == [
        "codec", "loading", "codec"]
    assert find_cycle({"codec": {"loading"}, "loading": {"config"}, "config": set()}) is None


def test_no_helper_imports_the_codec() -> None:
    importers = sorted(name for name, targets in import_graph().items() if "codec" in targets)
    assert importers == []


def test_no_import_cycle_in_chatcodec_model() -> None:
    assert find_cycle(import_graph()) is None

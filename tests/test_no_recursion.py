"""No recursion on data-sized input (issue 24): a self-recursive function in wwt/ is either on the allow-list
below, with why its depth is bounded by something other than the data, or a test failure. And the walkers of
decoded JSON take the deepest nesting the JSON decoder lets through."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

WWT = Path(__file__).resolve().parents[1] / "wwt"

# function → why its depth does not follow the size of a log, a payload or an archive
BOUNDED = {
    "indexes.py:close": "closes its own scratch parts once (depth 1)",
    "parsers/cline_sessions.py:_result": "descends once into a tool result's JSON text, then iterates",
    "parsers/text.py:_render_input": "descends once into JSON text, then renders with json.dumps (C, bounded)",
    "redact.py:build": "builds the trie of the fixed trigger catalogue (depth = the longest trigger, 20 chars)",
    "setup/common.py:holds_only_ours": "walks an agent's hook config entry (a few levels by its schema)",
    "setup/jsonedit.py:render": "renders wwt's own small settings change (a few levels)",
    "setup/jsonedit.py:_diff": "diffs wwt's own small settings change (a few levels)",
    "setup/tomledit.py:_table_paths": "walks the table headers of an agent's config.toml (a few levels)",
    "setup/tomledit.py:_leaf_spans": "walks the table headers of an agent's config.toml (a few levels)",
    "vector_index.py:neutralise": "calls the pure language_axis.neutralise of the same name (no self-call)",
}


def self_recursive() -> set[str]:
    found = set()
    for path in sorted(WWT.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for call in ast.walk(node):
                if not isinstance(call, ast.Call):
                    continue
                f = call.func
                name = f.id if isinstance(f, ast.Name) else (
                    f.attr if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                    and f.value.id in ("self", "cls") else None)
                if name == node.name:
                    found.add(f"{path.relative_to(WWT).as_posix()}:{node.name}")
                    break
    return found


def test_every_self_recursive_function_is_bounded_by_something_other_than_data():
    assert self_recursive() - set(BOUNDED) == set(), "make it iterative, or add it to BOUNDED with the reason"


def deepest(leaf: object) -> object:
    """The deepest list nesting ``json.loads`` returns here (it refuses more with RecursionError)."""
    depth = 100
    while True:
        try:
            json.loads("[" * (depth + 50) + json.dumps(leaf) + "]" * (depth + 50))
        except RecursionError:
            break
        depth += 50
    value: object = leaf
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("walker", ["flatten_text", "replace_escaped", "well_formed_json", "map_json_strings"])
def test_json_walkers_take_the_deepest_nesting_the_decoder_returns(walker):
    from wwt import limits
    from wwt.mcp_server import _well_formed_json
    from wwt.parsers.common import _replace_escaped, flatten_text

    fn = {"flatten_text": flatten_text, "replace_escaped": _replace_escaped,
          "well_formed_json": _well_formed_json,
          "map_json_strings": lambda v: limits.map_json_strings(v, str.upper)}[walker]
    value = deepest({"type": "text", "text": "deep \udcff"} if walker != "flatten_text" else {"type": "text", "text": "deep"})
    fn(value)  # no RecursionError


def test_flatten_text_keeps_the_order_and_the_blank_line_joins():
    from wwt.parsers.common import flatten_text

    content = ["a", [{"type": "text", "text": "b"}, {"type": "image"}], {"type": "tool_result", "content": ["c", ""]}]
    assert flatten_text(content) == "a\n\nb\n\nc"
    assert flatten_text({"type": "tool_result", "content": "x"}) == "x"
    assert flatten_text(None) == "" and flatten_text("") == ""


def test_map_json_strings_rebuilds_the_same_shape():
    from wwt.limits import map_json_strings

    value = {"k": ["a", {"b": "c", "n": 1}], "z": None}
    assert map_json_strings(value, str.upper) == {"K": ["A", {"B": "C", "N": 1}], "Z": None}

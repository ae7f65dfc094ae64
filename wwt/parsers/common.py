"""Helpers every platform parser shares, each from the module of its job: ``jsonl`` (JSONL in bounded memory),
``json_files`` (whole-file JSON and long JSON lists), ``timestamps`` (one canonical UTC form), ``text``
(flattening, bounds, code names, tool-call rendering). Pure and small so each rule can be pinned by a test;
parsers import them from here."""

from __future__ import annotations

from wwt.parsers.json_files import (  # noqa: F401
    JSON_LIST_CHUNK,
    _Window,
    iter_json_list,
    load_json_file,
    load_json_object,
    load_session_object,
    lookback_offset,
    rewritten_whole,
)
from wwt.parsers.jsonl import (  # noqa: F401
    DETECT_RECORDS,
    HEAD_BYTES,
    MAX_LINE_BYTES,
    _json_value,
    _replace_escaped,
    decode_line,
    detection_views,
    first_head_value,
    glued_records,
    iter_jsonl,
    open_or_note,
    read_head,
)
from wwt.parsers.text import (  # noqa: F401
    NAMES_CHARS,
    bound_text,
    code_names,
    flatten_text,
    names_note,
    nfc,
    render_tool_call,
    strip_ansi,
)
from wwt.parsers.timestamps import (  # noqa: F401
    iso_timestamp,
)

"""Presentation rules as pure functions: terminal-safe text and the ingest summary's repair line."""

from __future__ import annotations

from wwt.present import pending_vectors_line, repair_line, terminal_safe, vectors_line


def test_terminal_controls_become_visible_escapes() -> None:
    assert terminal_safe("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert terminal_safe("title\x1b]0;pwned\x07") == "title\\x1b]0;pwned\\x07"
    assert terminal_safe("nul\x00del\x7fcsi\x9b31m") == "nul\\x00del\\x7fcsi\\x9b31m"


def test_bidi_overrides_and_isolates_are_shown_not_obeyed() -> None:
    assert terminal_safe("invoice\u202etxt.exe") == "invoice\\u202etxt.exe"
    for code in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]:
        assert terminal_safe(chr(code)) == f"\\u{code:04x}"


def test_newlines_tabs_and_ordinary_text_are_kept() -> None:
    text = "첫 줄\tcol\n第二行 — émoji 🙂 \u200b zero-width space stays"
    assert terminal_safe(text) == text


def test_crlf_is_a_newline_but_a_lone_carriage_return_cannot_overwrite_the_line() -> None:
    assert terminal_safe("one\r\ntwo") == "one\ntwo"
    assert terminal_safe("safe\rrm -rf /") == "safe\\x0drm -rf /"


def test_safe_text_is_a_fixed_point() -> None:
    once = terminal_safe("x\x1b[1m\u202ey")
    assert terminal_safe(once) == once


def test_a_new_archives_first_indexes_are_not_reported_as_a_repair() -> None:
    created = {"lexical_added": 0, "lexical_removed": 0, "vector_added": 0, "vector_removed": 0,
               "rebuilt": (), "created": ("lexical", "vector")}
    assert repair_line(created) is None
    assert repair_line(None) is None


def test_a_damaged_index_rebuilt_from_the_archive_is_reported() -> None:
    damaged = {"lexical_added": 0, "lexical_removed": 0, "vector_added": 12, "vector_removed": 0,
               "rebuilt": ("vector",), "created": ()}
    assert repair_line(damaged) == "indexes repaired from the archive: vector rebuilt, vector_added 12"
    out_of_step = {"lexical_added": 3, "lexical_removed": 1, "rebuilt": (), "created": ()}
    assert repair_line(out_of_step) == "indexes repaired from the archive: lexical_added 3, lexical_removed 1"


def test_chunks_keeping_an_earlier_vector_are_not_called_searchable_by_words_only():
    assert pending_vectors_line(0) is None
    only_new = pending_vectors_line(40)
    assert "searchable by words now; 40 chunk(s) still waiting" in only_new
    refreshing = pending_vectors_line(40, refreshing=40)
    assert refreshing.startswith("40 chunk(s) to be re-embedded") and "earlier vectors serve" in refreshing
    assert "words" not in refreshing
    both = pending_vectors_line(50, refreshing=40)  # ten new chunks have no vector at all
    assert "10 chunk(s) still waiting" in both
    no_model = pending_vectors_line(50, "model.onnx missing", refreshing=40)
    assert "10 chunk(s) wait for vectors: the model is not available" in no_model
    status = vectors_line(60, 100, refreshing=30)
    assert status.startswith("vectors: 60 % (60 of 100 chunks)") and "30 being re-embedded" in status
    assert vectors_line(100, 100, refreshing=0) is None

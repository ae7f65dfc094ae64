"""Remembered log locations (wwt.sources): what `wwt setup --source` keeps for every later ingest."""

from __future__ import annotations

from pathlib import Path

import pytest

from wwt.errors import UsageError
from wwt.sources import SOURCES_FILE, remember, remembered


def test_named_folders_are_remembered_once_each_in_the_order_named(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    assert remember(tmp_path, [a, b, a]) == [a, b]
    assert remember(tmp_path, [b]) == []
    assert remembered(tmp_path) == [a, b]


def test_a_path_that_does_not_exist_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such file or folder"):
        remember(tmp_path, [tmp_path / "gone"])
    assert not (tmp_path / SOURCES_FILE).exists()


@pytest.mark.parametrize("content", [b"", b"{not json", b'["/x"]', b'{"paths": "/x"}', b"\xff\xfe", b'{"paths": [1, "rel"]}'])
def test_a_damaged_file_means_nothing_remembered(tmp_path: Path, content: bytes) -> None:
    (tmp_path / SOURCES_FILE).write_bytes(content)
    assert remembered(tmp_path) == []

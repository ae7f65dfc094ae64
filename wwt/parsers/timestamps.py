"""Timestamps of every agent's logs → one canonical ISO 8601 UTC form (``…T12:00:00.000Z``)."""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone
from typing import Any

_EPOCH_MS_THRESHOLD = 1e11  # numbers above this are milliseconds (1e11 s is year 5138)
_MIN_YEAR, _MAX_YEAR = 1990, 2200


_CANONICAL_TS = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d{3}))?Z")


def iso_timestamp(value: Any) -> str | None:
    """Normalise an ISO string or epoch number (s or ms) to ``YYYY-MM-DDTHH:MM:SS[.mmm]Z`` UTC; None for junk.

    Naive datetimes are taken as UTC (the agents write UTC)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str) and len(value) in (20, 24):
        canonical = _CANONICAL_TS.fullmatch(value)
        if canonical:  # fast path for what the agents write (most lines): range-check, no datetime
            year, month, day, hour, minute, second = map(int, canonical.groups()[:6])
            if (
                _MIN_YEAR <= year <= _MAX_YEAR
                and 1 <= month <= 12
                and 1 <= day <= _days_in_month(year, month)
                and hour < 24
                and minute < 60
                and second < 60
            ):
                ms = canonical.group(7)
                return value if ms != "000" else value[:19] + "Z"
            return None
    if type(value) is float and value > 0 and value.is_integer():
        value = int(value)  # a whole number read as a float (OpenCode's message times): the same instant
    if type(value) is int and value > 0:  # epoch s or ms (Cline, OpenCode, Cursor): no datetime, same string
        seconds, millis = divmod(value, 1000) if value > _EPOCH_MS_THRESHOLD else (value, 0)
        day, second = divmod(seconds, 86400)
        if not _FIRST_DAY <= day < _END_DAY:
            return None  # before 1990 or after 2200
        date = _DAY_TEXT.get(day) or _day_text(day)
        return date + _CLOCK[second // 60] + _SECOND[second % 60] + (_MILLIS[millis] if millis else "Z")
    dt: datetime | None = None
    try:
        if isinstance(value, (int, float)):
            dt = _from_epoch(float(value))
        elif isinstance(value, str):
            text = value.strip()
            if not text or len(text) > 64:
                return None
            if text.replace(".", "", 1).isdigit():
                dt = _from_epoch(float(text))
            else:
                if text.endswith(("Z", "z")):
                    text = text[:-1] + "+00:00"
                dt = datetime.fromisoformat(text)
    except (ValueError, OverflowError, OSError):
        return None
    if dt is None:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    try:
        dt = dt.astimezone(timezone.utc)
    except (ValueError, OverflowError):
        return None
    if not (_MIN_YEAR <= dt.year <= _MAX_YEAR):
        return None
    base = dt.strftime("%Y-%m-%dT%H:%M:%S")
    if dt.microsecond:
        base += f".{dt.microsecond // 1000:03d}"
    return base + "Z"


# Epoch numbers are formatted from tables (a record's time is read on every record): the day's date, cached, and
# the time of day's parts. Days 7305 and 84371 since 1970 are 1990-01-01 and 2201-01-01.
_FIRST_DAY, _END_DAY = 7305, 84371
_DAY_TEXT: dict[int, str] = {}
_CLOCK = tuple(f"T{h:02d}:{m:02d}:" for h in range(24) for m in range(60))
_SECOND = tuple(f"{s:02d}" for s in range(60))
_MILLIS = ("Z", *(f".{m:03d}Z" for m in range(1, 1000)))


def _day_text(day: int) -> str:
    """``YYYY-MM-DD`` of a day number since 1970 (remembered; forgotten wholesale past 4,096 days)."""
    if len(_DAY_TEXT) >= 4096:
        _DAY_TEXT.clear()
    t = time.gmtime(day * 86400)
    text = _DAY_TEXT[day] = f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}"
    return text


def _days_in_month(year: int, month: int) -> int:
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _from_epoch(number: float) -> datetime | None:
    if number != number or number <= 0:  # NaN or non-positive
        return None
    if number > _EPOCH_MS_THRESHOLD:
        number /= 1000.0
    return datetime.fromtimestamp(number, tz=timezone.utc)

"""``--since``/``--until`` values (and the MCP tools' ``since``/``until``) → ISO 8601 UTC: one rule for every
shell, below all of them."""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta, timezone

from wwt import limits
from wwt.errors import UsageError
from wwt.limits import check_length, echo

_RELATIVE = re.compile(r"^(\d+)\s*(m|min|h|d|w|mo|y)$")
_UNIT = {"m": "minutes", "min": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_when(value: str, end_of_day: bool = False, now: datetime | None = None) -> str:
    """``--since/--until`` value → ISO 8601 UTC. Accepts ISO dates/times (local time unless they carry a zone),
    ``today``, ``yesterday``, and ``<n>m|h|d|w|mo|y`` ago (``30m``, ``7d``, ``2w``, ``3mo``, ``1y``). A bare date
    used as an upper bound means the end of that day, so ``--until 2026-01-31`` includes the 31st. A moment
    outside what a timestamp can hold (year 1 … 9999 in UTC) is a ``UsageError``, not an overflow."""
    check_length("date", value, limits.MAX_NAME_CHARS)
    try:
        return _parse_when(value, end_of_day, now)
    except (OverflowError, ValueError):
        raise UsageError(f"date out of range: {echo(value, 60)} (years 1 to 9999 only)") from None


def _parse_when(value: str, end_of_day: bool, now: datetime | None) -> str:
    now = (now or datetime.now()).astimezone()
    text = value.strip().lower()
    moment: datetime
    if text in ("today", "yesterday"):
        day = now.date() - timedelta(days=1 if text == "yesterday" else 0)
        moment = datetime.combine(day, time.max if end_of_day else time.min).astimezone()
    elif match := _RELATIVE.match(text):
        amount, unit = int(match.group(1)), match.group(2)
        if unit == "mo":
            moment = now - timedelta(days=30 * amount)
        elif unit == "y":
            moment = now - timedelta(days=365 * amount)
        else:
            moment = now - timedelta(**{_UNIT[unit]: amount})
    else:
        try:
            moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError:
            raise UsageError(
                f"bad date {echo(value, 60)}: use YYYY-MM-DD, an ISO time, today, yesterday, or 30m/12h/7d/2w/3mo/1y"
            ) from None
        if len(value.strip()) == 10 and end_of_day:  # a bare date as upper bound: the whole day
            moment = datetime.combine(moment.date(), time.max)
        if moment.tzinfo is None:
            moment = moment.astimezone()
    moment = moment.astimezone().astimezone(tz=timezone.utc)
    millis = moment.microsecond // 1000  # kept, as stored times keep them: the end of a day is 23:59:59.999
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + (f".{millis:03d}Z" if millis else "Z")

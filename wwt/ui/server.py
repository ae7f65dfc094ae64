"""The ``wwt ui`` web server: starlette on uvicorn, bound to 127.0.0.1 only, read-only.

Security (the archive is private; any web page the user visits can make their browser send requests to
127.0.0.1):

- a random token per run, printed in the URL (``?token=…``); the first request with it gets an HttpOnly,
  SameSite=Strict cookie and a redirect to the same page without the token; every page and API answers 403
  without a valid cookie or token (a cross-site page cannot read the token, nor send the SameSite cookie);
- the Host header must be ``127.0.0.1:<port>`` or ``localhost:<port>`` (a DNS-rebinding name → 421);
- no CORS headers at all, GET/HEAD only, a strict Content-Security-Policy (``default-src 'self'``), no remote
  fonts, scripts or styles, ``no-store`` caching, framing refused.

The API reads through ``wwt.service.Memory`` (the same search as ``wwt search``) and, for the timeline, a
read-only ``wwt.store.Store``.
"""

from __future__ import annotations

import hmac
import secrets
import socket
import sys
import threading
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode

from wwt import limits
from wwt.errors import UsageError, WwtError

COOKIE = "wwt_ui"
PAGE_MESSAGES = 100  # messages per reader page: a 5,000-message session's first screen stays fast
MAX_PAGE_MESSAGES = 500
MESSAGE_CHARS = 50_000  # one message's text in the reader; longer ones are cut with a note (export has all)
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; font-src 'self'; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
    (b"cache-control", b"no-store"),
]
PAGES = ("/", "/search", "/timeline", "/status")
STATIC = {"app.js": "text/javascript; charset=utf-8", "app.css": "text/css; charset=utf-8",
          "icon.svg": "image/svg+xml"}


@dataclass
class Settings:
    token: str
    port: int = 0
    home: Path | None = None
    allowed_hosts: set[str] = field(default_factory=set)


# ------------------------------------------------------------------------------------------ guard (ASGI)


class Guard:
    """Host check, token/cookie check and the security headers around the app (pure ASGI)."""

    def __init__(self, app: Any, settings: Settings) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host", "")
        if host.lower() not in self.settings.allowed_hosts:
            await _plain(send, 421, "wrong Host: this server answers only on 127.0.0.1")
            return
        if scope["method"] not in ("GET", "HEAD"):
            await _plain(send, 405, "read-only")
            return
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        given = (query.get("token") or [""])[0]
        if given:
            if not hmac.compare_digest(given, self.settings.token):
                await _plain(send, 403, "forbidden: wrong token — use the URL `wwt ui` printed")
                return
            rest = {k: v for k, v in query.items() if k != "token"}
            location = scope["path"] + ("?" + urlencode(rest, doseq=True) if rest else "")
            cookie = f"{COOKIE}={self.settings.token}; HttpOnly; SameSite=Strict; Path=/"
            await _plain(send, 303, "see other", [(b"location", location.encode("latin-1", "replace")),
                                                  (b"set-cookie", cookie.encode())])
            return
        jar: SimpleCookie = SimpleCookie()
        try:
            jar.load(headers.get("cookie", ""))
        except Exception:  # noqa: BLE001 - a malformed cookie header is just no cookie
            jar = SimpleCookie()
        held = jar[COOKIE].value if COOKIE in jar else ""
        if not held or not hmac.compare_digest(held, self.settings.token):
            await _plain(send, 403, "forbidden: open the URL `wwt ui` printed (it carries the token)")
            return

        async def send_secured(message: dict) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [h for h in message.get("headers", [])
                                      if h[0].lower() not in {k for k, _ in SECURITY_HEADERS}] + SECURITY_HEADERS
            await send(message)

        await self.app(scope, receive, send_secured)


async def _plain(send: Any, status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = (text + "\n").encode()
    headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
               *SECURITY_HEADERS, *(extra or [])]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


# ------------------------------------------------------------------------------------------ the API


class Api:
    """What the pages ask for, as JSON-ready dicts. One ``Memory`` for search and sessions; a read-only
    ``Store`` (own lock) for the timeline."""

    def __init__(self, home: Path | None = None) -> None:
        from wwt.service import Memory

        self.memory = Memory(home)
        self._store: Any = None
        self._store_lock = threading.Lock()
        self._timeline_cache: tuple[int, list[dict[str, Any]]] | None = None

    def close(self) -> None:
        self.memory.close()
        if self._store is not None:
            self._store.close()

    def warm_up(self) -> None:
        """Load the model, Kiwi and the indexes before the first question (in a thread at start)."""
        try:
            if self.memory.has_data():
                from wwt.models import Filters

                self.memory.search("warm up 준비", Filters(), 1)
        except Exception:  # noqa: BLE001 - the first real search reports the problem
            pass

    def store(self) -> Any:
        if self._store is None:
            from wwt.store import Store

            if not self.memory.has_data():
                from wwt.service import NoDataYet

                raise NoDataYet("no data yet — run `wwt ingest` first")
            self._store = Store.open(self.memory.store_path, readonly=True)
        return self._store

    def search(self, params: dict[str, str]) -> dict[str, Any]:
        from wwt.models import Filters, platform_of
        from wwt.present import resume_line
        from wwt.search import query_terms, weak_notice
        from wwt.when import parse_when

        text, notice = limits.clip_query(params.get("q", ""))
        project = params.get("project") or None
        agent = params.get("agent") or None
        limits.check_length("project", project, limits.MAX_PATH_CHARS)
        limits.check_length("agent", agent, limits.MAX_NAME_CHARS)
        platform = platform_of(agent) if agent else None
        if agent and platform is None:
            raise UsageError(f"unknown agent {limits.echo(agent)}")
        limit = limits.check_range("limit", _int(params.get("limit"), 10), 1, limits.MAX_LIMIT)
        filters = Filters(
            project=project, platform=platform,
            since=parse_when(params["since"]) if params.get("since") else None,
            until=parse_when(params["until"], end_of_day=True) if params.get("until") else None,
        )
        outcome = self.memory.search_outcome(text, filters, limit)
        from wwt.export import agent_name

        return {
            "query": text,
            "notice": notice,
            "terms": query_terms(text),
            "weak": outcome.weak,
            "weak_notice": weak_notice(outcome) if outcome.weak else None,
            "words_only": outcome.words_only,
            "results": [
                {
                    "session_id": hit.session_id, "platform": hit.platform, "agent": agent_name(hit.platform),
                    "project": hit.project, "git_branch": hit.git_branch, "started_at": hit.started_at,
                    "ended_at": hit.ended_at, "title": hit.title, "score": round(hit.score, 4),
                    "resume_line": resume_line(hit),
                    "chunks": [{"chunk_id": c.chunk_id, "text": c.text, "start_ts": c.start_ts,
                                "first_seq": c.first_seq, "last_seq": c.last_seq} for c in hit.chunks],
                }
                for hit in outcome.hits
            ],
        }

    def session(self, session_id: str, params: dict[str, str]) -> dict[str, Any]:
        from wwt.export import agent_name, session_facts, visible
        from wwt.search import resume_line

        limits.check_length("session id", session_id, limits.MAX_SESSION_ID_CHARS)
        limit = limits.check_range("limit", _int(params.get("limit"), PAGE_MESSAGES), 1, MAX_PAGE_MESSAGES)
        start = limits.check_range("start", _int(params.get("start"), 0), 0, limits.MAX_POSITION)
        target = self.resolve_session(session_id).session_id
        hit: dict[str, Any] | None = None
        chunk = params.get("chunk")
        if chunk:
            limits.check_length("chunk", chunk, limits.MAX_NAME_CHARS)
            where = self.chunk_position(target, chunk)
            if where is not None:
                target, first, last = where
                hit = {"session_id": target, "first_seq": first, "last_seq": last}
                if "start" not in params:
                    start = max(0, first - 10)
        view = self.get_session(target, start=start, end=start + limit)
        row = view.session
        own = [m for m in view.messages if m.session_id == row.session_id]
        next_start = (own[-1].seq + 1) if own else start
        agent = agent_name(row.platform)
        return {
            "session_id": row.session_id, "root_session_id": row.root_session_id, "platform": row.platform,
            "agent": agent, "title": row.title, "project": row.project, "git_branch": row.git_branch,
            "cwd": row.cwd, "started_at": row.started_at, "ended_at": row.ended_at,
            "total": view.total or 0, "start": start, "next_start": next_start, "limit": limit,
            "resume_line": resume_line(row.platform, row.session_id, row.cwd),
            "facts": session_facts(row), "subagents": list(row.subagent_ids), "hit": hit,
            "messages": [
                {"session_id": m.session_id, "seq": m.seq, "role": m.role, "kind": m.kind,
                 "tool_name": m.tool_name, "timestamp": m.timestamp, "subagent": "subagent" in m.flags,
                 "chars": len(m.text or ""), "text": visible((m.text or "")[:MESSAGE_CHARS])}
                for m in view.messages
            ],
        }

    def store_chunk(self, chunk_key: str) -> Any:
        with self._store_lock:
            return self.store().chunk_by_key(chunk_key)

    # The reader goes to its own read-only connection, not through ``Memory``: a search holds the Memory's lock
    # while it loads the model (the warm-up at start, the first question), and a page must not wait for that.

    def resolve_session(self, session_id: str) -> Any:
        from wwt.service import UnknownSession

        session_id = limits.well_formed(session_id)
        with self._store_lock:
            row = self.store().get_session(session_id)
        if row is None:
            raise UnknownSession(f"no archived session matches {limits.echo(session_id)}")
        return row

    def get_session(self, session_id: str, start: int = 0, end: int | None = None) -> Any:
        from wwt.service import SessionView

        row = self.resolve_session(session_id)
        with self._store_lock:
            messages = self.store().get_messages(row.session_id, start=start, end=end)
        return SessionView(session=row, messages=list(messages), start=start, end=end, total=row.message_count)

    def chunk_position(self, session_id: str, chunk_key: str) -> tuple[str, int, int] | None:
        """(session holding the chunk's messages, first and last message position) of a chunk of this
        conversation, else None."""
        hit = self.store_chunk(chunk_key)
        if hit is None or hit.session_id != session_id:
            return None
        return hit.source_session_id, hit.first_seq, hit.last_seq

    def export(self, session_id: str, fmt: str) -> tuple[str, str]:
        from wwt.export import export_session

        limits.check_length("session id", session_id, limits.MAX_SESSION_ID_CHARS)
        return self.resolve_session(session_id).session_id, export_session(self, session_id, fmt)

    def timeline(self, params: dict[str, str]) -> dict[str, Any]:
        """Root conversations by day (newest first), optionally of one project."""
        project = params.get("project") or None
        limits.check_length("project", project, limits.MAX_PATH_CHARS)
        sessions = self._all_sessions()
        if project:
            sessions = [s for s in sessions if project in (s["project"], s["project_path"])]
        days: dict[str, list[dict[str, Any]]] = {}
        for s in sessions:
            days.setdefault((s["started_at"] or "unknown")[:10], []).append(s)
        ordered = sorted(days.items(), key=lambda kv: kv[0], reverse=True)
        return {"project": project, "projects": self.memory.projects(), "sessions": len(sessions),
                "days": [{"day": day, "sessions": sorted(items, key=lambda s: s["started_at"] or "")}
                         for day, items in ordered]}

    def _all_sessions(self) -> list[dict[str, Any]]:
        from wwt.export import agent_name

        with self._store_lock:
            store = self.store()
            counter = store.change_counter()
            if self._timeline_cache is not None and self._timeline_cache[0] == counter:
                return self._timeline_cache[1]
            seen: dict[str, dict[str, Any]] = {}
            for hit in store.chunks_by_ids(sorted(store.all_chunk_ids())):
                if hit.session_id in seen:
                    continue
                seen[hit.session_id] = {
                    "session_id": hit.session_id, "platform": hit.platform, "agent": agent_name(hit.platform),
                    "project": hit.project, "project_path": hit.project_path, "git_branch": hit.git_branch,
                    "started_at": hit.started_at, "ended_at": hit.ended_at, "title": hit.title,
                }
            result = list(seen.values())
            self._timeline_cache = (counter, result)
            return result

    def status(self) -> dict[str, Any]:
        from wwt.export import agent_name

        info = self.memory.status()
        per = info.get("per_platform") or {}
        return {
            "home": info.get("home"), "has_data": info.get("has_data"),
            "sessions": info.get("sessions", 0), "subagent_sessions": info.get("subagent_sessions", 0),
            "messages": info.get("messages", 0), "chunks": info.get("chunks", 0),
            "chunks_with_vector": info.get("chunks_with_vector", 0),
            "pending_vectors": max(0, (info.get("chunks", 0) or 0) - (info.get("chunks_with_vector", 0) or 0)),
            "backfill_paused": info.get("backfill_paused", False), "last_ingest": info.get("last_ingest"),
            "queue_pending": info.get("queue_pending", 0), "queue_parked": info.get("queue_parked", 0),
            "agents": [{"platform": p, "agent": agent_name(p), "sessions": c.get("sessions", 0),
                        "chunks": c.get("chunks", 0)} for p, c in sorted(per.items())],
        }


def _status_of(exc: WwtError) -> int:
    """404 for an unknown session, 400 for another bad request, 409 for the archive's state (no data yet)."""
    from wwt.service import UnknownSession

    if isinstance(exc, UnknownSession):
        return 404
    return 400 if isinstance(exc, UsageError) else 409


def _int(value: str | None, default: int) -> int:
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError:
        raise UsageError(f"not a number: {limits.echo(value)}") from None


# ------------------------------------------------------------------------------------------ the app


def static_text(name: str) -> str:
    return resources.files("wwt.ui").joinpath("static", name).read_text(encoding="utf-8")


def build_app(settings: Settings, api: Api | None = None) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    api = api or Api(settings.home)
    page = static_text("index.html")
    assets = {name: static_text(name) for name in STATIC}

    def answer(fn: Any, *args: Any) -> Response:
        try:
            return JSONResponse(fn(*args), headers={"cache-control": "no-store"})
        except WwtError as exc:
            return JSONResponse({"error": str(exc)}, status_code=_status_of(exc))

    def params(request: Request) -> dict[str, str]:
        return {k: limits.well_formed(v) for k, v in request.query_params.items()}

    def index(request: Request) -> Response:
        return Response(page, media_type="text/html; charset=utf-8")

    def asset(request: Request) -> Response:
        name = request.path_params["name"]
        if name not in assets:
            return Response("not found\n", status_code=404, media_type="text/plain")
        return Response(assets[name], media_type=STATIC[name])

    def api_search(request: Request) -> Response:
        return answer(api.search, params(request))

    def api_session(request: Request) -> Response:
        return answer(api.session, request.path_params["sid"], params(request))

    def api_timeline(request: Request) -> Response:
        return answer(api.timeline, params(request))

    def api_status(request: Request) -> Response:
        return answer(api.status)

    def api_projects(request: Request) -> Response:
        return answer(lambda: {"projects": api.memory.projects() if api.memory.has_data() else []})

    def api_export(request: Request) -> Response:
        fmt = request.query_params.get("format", "html")
        try:
            sid, text = api.export(request.path_params["sid"], fmt)
        except WwtError as exc:
            return JSONResponse({"error": str(exc)}, status_code=_status_of(exc))
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in sid)[:80]
        media = "text/html; charset=utf-8" if fmt == "html" else "text/markdown; charset=utf-8"
        return Response(text, media_type=media, headers={
            "content-disposition": f'attachment; filename="wwt-{safe}.{fmt}"'})

    routes = [Route(path, index) for path in PAGES]
    routes += [
        Route("/session/{sid:path}", index),
        Route("/static/{name}", asset),
        Route("/favicon.ico", lambda request: Response(assets["icon.svg"], media_type=STATIC["icon.svg"])),
        Route("/api/search", api_search),
        Route("/api/session/{sid:path}", api_session),
        Route("/api/export/{sid:path}", api_export),
        Route("/api/timeline", api_timeline),
        Route("/api/status", api_status),
        Route("/api/projects", api_projects),
    ]
    app = Starlette(routes=routes)
    app.state.api = api
    return Guard(app, settings)


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:``port`` (0: a free one)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
    except OSError as exc:
        sock.close()
        raise UsageError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
    sock.listen(64)
    return sock


def serve(port: int = 0, open_browser: bool = True, home: Path | None = None) -> None:
    """Run the viewer until interrupted: prints its URL (with the token) first."""
    import uvicorn

    sock = bind(port)
    port = sock.getsockname()[1]
    settings = Settings(token=secrets.token_urlsafe(24), port=port, home=home,
                        allowed_hosts={f"127.0.0.1:{port}", f"localhost:{port}"})
    api = Api(home)
    app = build_app(settings, api)
    url = f"http://127.0.0.1:{port}/?token={settings.token}"
    sys.stdout.write(f"wwt ui: {url}\n(read-only, this machine only; Ctrl-C stops it)\n")
    sys.stdout.flush()
    threading.Thread(target=api.warm_up, name="wwt-ui-warm-up", daemon=True).start()
    if open_browser:
        import webbrowser

        threading.Timer(0.3, webbrowser.open, args=(url,)).start()
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", proxy_headers=False,
                            server_header=False, timeout_keep_alive=5)
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    finally:
        api.close()
        sock.close()

"""``wwt team …``: join a team server, choose what to share, push, status, leave (issue #27; ``wwt.team``).
``wwt/cli.py`` calls ``register(app)``; ``team_search`` is what ``wwt search --team`` adds to local results."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import typer

from wwt.errors import UsageError, WwtError

team_app = typer.Typer(help="Share chosen projects with a team server (PostgreSQL + pgvector) and search it.",
                       no_args_is_help=True)


def _home() -> Path:
    from wwt.paths import data_dir

    return data_dir()


def _config() -> Any:
    from wwt.team import config

    found = config.load(_home())
    if found is None:
        raise WwtError("this machine has not joined a team: wwt team join <postgresql-url>")
    return found


def _connect(url: str) -> Any:
    from wwt.team import require_driver
    from wwt.team.schema import connect

    require_driver()
    return connect(url)


def _url(url: str | None, url_file: Path | None) -> str:
    if url_file is not None:
        try:
            url = url_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise UsageError(f"cannot read --url-file {url_file}: {exc.strerror or exc}") from None
    url = url or os.environ.get("WWT_TEAM_URL")
    if not url:
        raise UsageError("give the server: wwt team join postgresql://…, --url-file FILE or WWT_TEAM_URL")
    if not url.startswith(("postgresql://", "postgres://")):
        raise UsageError("the team server is a postgresql:// URL")
    return url


@team_app.command()
def join(
    url: str = typer.Argument(None, help="postgresql://user:password@host/db (or WWT_TEAM_URL, --url-file)."),
    label: str = typer.Option(None, "--as", help="This machine's name in results (default: host name)."),
    share: list[str] = typer.Option([], "--share", help="A project to share (repeatable)."),
    share_all: bool = typer.Option(False, "--share-all", help="Share every project in the archive."),
    url_file: Path = typer.Option(None, "--url-file", help="Read the URL from this file."),
) -> None:
    """Join a team server: create or migrate its schema, register this machine. Nothing is shared unless asked."""
    from wwt.team import config
    from wwt.team.schema import migrate, register_machine

    url = _url(url, url_file)
    home = _home()
    previous = config.load(home)
    conf = previous if previous is not None and previous.url == url else config.new_config(url, label)
    if label:
        conf.label = label
    conn = _connect(url)
    try:
        version = migrate(conn)
        register_machine(conn, conf.machine_id, conf.label)
    finally:
        conn.close()
    for name in share:
        if name not in conf.shared:
            conf.shared.append(name)
    if share_all:
        conf.share_all = True
        conf.unshared = []
        config.adopt_new_projects(conf, _local_projects())
    config.save(home, conf)
    typer.echo(f"joined {config.masked(url)} (schema {version}) as {conf.label}")
    typer.echo("sharing: " + _sharing(conf))


def _sharing(conf: Any) -> str:
    """What this machine shares, in words."""
    if conf.share_all:
        named = ", ".join(conf.shared) or "none yet"
        but = f"; not {', '.join(conf.unshared)}" if conf.unshared else ""
        return f"every project, those to come too ({named}{but})"
    return ", ".join(conf.shared) if conf.shared else "nothing yet (wwt team share PROJECT)"


def _local_projects() -> list[str]:
    from wwt.service import Memory

    with Memory.open() as memory:
        return memory.projects() if memory.has_data() else []


@team_app.command()
def share(project: str = typer.Argument(..., help="Project name (as `wwt search` shows it).")) -> None:
    """Share a project: its sessions go to the server at the next push."""
    from wwt.team import config

    conf = _config()
    if project not in conf.shared:
        conf.shared.append(project)
    if project in conf.unshared:
        conf.unshared.remove(project)
    config.save(_home(), conf)
    typer.echo(f"sharing {project}: run `wwt team push` to send it")


@team_app.command()
def unshare(project: str = typer.Argument(...)) -> None:
    """Stop sharing a project and delete this machine's copy of it from the server."""
    from wwt.team import config
    from wwt.team.push import unshare_remote

    conf = _config()
    if project in conf.shared:
        conf.shared.remove(project)
    if conf.share_all and project not in conf.unshared:
        conf.unshared.append(project)  # --share-all must not take it back at the next push
    config.save(_home(), conf)
    conn = _connect(conf.url)
    try:
        removed = unshare_remote(conn, conf.machine_id, project)
    finally:
        conn.close()
    typer.echo(f"unshared {project}: {removed} session(s) removed from the server")


@team_app.command()
def push() -> None:
    """Send what changed in the shared projects to the server (waits until done)."""
    from datetime import datetime, timezone

    from wwt.paths import store_path
    from wwt.team import config
    from wwt.team.push import push as run_push

    conf = _config()
    home = _home()
    if not store_path().exists():
        raise WwtError("no archive yet: run `wwt ingest` first")
    try:
        report = run_push(conf, store_path())
    except WwtError as exc:
        conf.last_error = str(exc)
        config.save(home, conf)
        raise
    except Exception as exc:  # a dropped connection mid-push: what was committed stays, the next push resumes
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        conf.last_error = f"push stopped: {reason}"
        config.save(home, conf)
        raise WwtError(f"push stopped ({reason}); what was sent is kept, `wwt team push` resumes") from None
    conf.last_push = datetime.now(timezone.utc).isoformat(timespec="seconds")
    conf.last_error = None
    conf.pushed = {"sessions": report.sessions, "chunks_sent": report.chunks, "messages_sent": report.messages}
    config.save(home, conf)
    rate = f", {report.chunks / report.seconds:.0f} chunks/s" if report.chunks and report.seconds else ""
    typer.echo(f"pushed {report.chunks} chunk(s), {report.messages} message(s), {report.sessions} session(s); "
               f"deleted {report.deleted_chunks} chunk(s), {report.deleted_sessions} session(s) "
               f"in {report.seconds:.1f}s{rate}")
    if report.pending_vectors:
        typer.echo(f"{report.pending_vectors} chunk(s) have no vector yet: sent for words, their vectors follow "
                   "at a later push")


@team_app.command()
def status(as_json: bool = typer.Option(False, "--json")) -> None:
    """The server (password hidden), this machine, what is shared, pushed and pending, the last error."""
    from wwt.paths import store_path
    from wwt.store.reads import archive_projects
    from wwt.team import config
    from wwt.team.push import _local, counts

    conf = _config()
    local_chunks = 0
    if conf.shares_anything and store_path().exists():
        conn = _local(store_path())
        try:
            config.adopt_new_projects(conf, archive_projects(conn))  # what the next push will share
            marks = ",".join("?" * len(conf.shared))
            local_chunks = conn.execute(
                "SELECT count(*) FROM chunks c JOIN sessions r ON r.session_id = c.root_session_id"
                f" WHERE r.project IN ({marks})", conf.shared).fetchone()[0]
        finally:
            conn.close()
    info: dict[str, Any] = {"server": config.masked(conf.url), "machine_id": conf.machine_id, "label": conf.label,
                            "shared": conf.shared, "share_all": conf.share_all, "unshared": conf.unshared,
                            "last_push": conf.last_push, "last_error": conf.last_error}
    info["local_chunks"] = local_chunks
    try:
        pg = _connect(conf.url)
    except WwtError as exc:
        info["reachable"], info["error"] = False, str(exc)
    else:
        try:
            info["server_rows"] = counts(pg, conf.machine_id)
            info["reachable"] = True
        finally:
            pg.close()
        info["pending_chunks"] = max(0, local_chunks - info["server_rows"]["chunks"])
    if as_json:
        sys.stdout.write(json.dumps(info, indent=2, ensure_ascii=False) + "\n")
        return
    typer.echo(f"server: {info['server']} ({'reachable' if info.get('reachable') else 'unreachable'})")
    typer.echo(f"this machine: {conf.label} ({conf.machine_id})")
    typer.echo("shared: " + _sharing(conf))
    if info.get("reachable"):
        rows = info["server_rows"]
        typer.echo(f"on the server: {rows['sessions']} session(s), {rows['messages']} message(s), "
                   f"{rows['chunks']} chunk(s); pending: {info['pending_chunks']} chunk(s)")
    typer.echo(f"last push: {conf.last_push or 'never'}")
    if conf.last_error or info.get("error"):
        typer.echo(f"last error: {conf.last_error or info.get('error')}")


@team_app.command()
def leave(delete: bool = typer.Option(False, "--delete", help="Also delete this machine's rows on the server.")) -> None:
    """Leave the team (forget the server here); with --delete, remove everything this machine pushed."""
    from wwt.team import config

    conf = _config()
    if delete:
        conn = _connect(conf.url)
        try:
            with conn.transaction():
                for table in ("wwt_chunks", "wwt_terms", "wwt_messages", "wwt_sessions", "wwt_machines"):
                    conn.execute(f"DELETE FROM {table} WHERE machine_id = %s", (conf.machine_id,))
        finally:
            conn.close()
    config.remove(_home())
    typer.echo("left the team" + (" and deleted this machine's rows" if delete else ""))


def team_search(memory: Any, text: str, filters: Any, limit: int, local: Any, notice: Any) -> Any:
    """``local`` (a SearchOutcome) merged with the team server's results; an unreachable server or a missing
    driver costs one line (``notice``) and the local results stand."""
    from wwt.team import INSTALL_HINT, config

    conf = config.load(_home())
    if conf is None:
        notice("not in a team: local results only (wwt team join <postgresql-url>)")
        return local
    try:
        import psycopg  # noqa: F401
    except ImportError:
        notice(INSTALL_HINT + ": local results only")
        return local
    from wwt.team.backend import merge
    from wwt.team.backend import team_search as run_team
    from wwt.team.schema import connect

    def embed_query(query: str) -> Any:
        embedder, _why = memory._search_embedder()
        return embedder.embed_query(query) if embedder is not None else None

    try:
        conn = connect(conf.url)
    except WwtError as exc:
        notice(f"{exc}: local results only")
        return local
    try:
        team = run_team(conn, text, filters, limit, embed_query, own_machine=conf.machine_id)
    except Exception as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        notice(f"team search failed ({reason}): local results only")
        return local
    finally:
        conn.close()
    return merge(local, team, limit)


def after_forget(session_ids: list[str], notice: Any) -> None:
    """``wwt forget`` on a machine in a team: the forgotten sessions leave the server now, not at the next push.
    No team: nothing. No driver or no server: one line — the next push deletes them."""
    from wwt.team import config

    conf = config.load(_home())
    if conf is None or not session_ids:
        return
    try:
        import psycopg  # noqa: F401

        from wwt.team.push import forget_remote
        from wwt.team.schema import connect

        conn = connect(conf.url)
    except (ImportError, WwtError) as exc:
        notice(f"the team server still holds them until the next `wwt team push` ({exc})")
        return
    try:
        removed = forget_remote(conn, conf.machine_id, session_ids)
    except Exception as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        notice(f"the team server still holds them until the next `wwt team push` ({reason})")
        return
    finally:
        conn.close()
    if removed:
        notice(f"also removed {removed} session(s) from the team server")


def register(app: typer.Typer) -> None:
    app.add_typer(team_app, name="team")


def show_from_team(session: str, start: int, limit: int) -> Any:
    """``wwt show`` of a session the local archive lacks: the team server's copy (a ``SessionView`` and the
    label of the machine that pushed it), or None when not in a team, no driver, or the server lacks it.
    An unreachable server raises one line."""
    from wwt.service import SessionView
    from wwt.team import config

    conf = config.load(_home())
    if conf is None:
        return None
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return None
    from wwt.team.backend import team_session

    conn = _connect(conf.url)
    try:
        found = team_session(conn, session, start, start + limit)
    finally:
        conn.close()
    if found is None:
        return None
    row, messages, total, label = found
    return SessionView(session=row, messages=messages, start=start, end=start + limit, total=total), label

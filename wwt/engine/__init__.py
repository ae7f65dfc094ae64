"""The resident engine (issue 12): one warm process per user and data dir that holds the model, Kiwi, the
store and both indexes, and serves the CLI, every agent's MCP session and the hook's ingest queue over a
private Unix socket. ``ipc`` (transport) and ``client`` are standard-library only; ``server`` is the engine;
``context`` tells shared code (cli.py, mcp_server.py) which client a request in the engine comes from."""

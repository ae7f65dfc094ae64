"""``wwt ui``: a local, read-only web viewer of the archive (issue 28). ``server`` is the starlette app and its
uvicorn process; ``static/`` holds the page, its hand-written JS and CSS (package data, no framework, no CDN)."""

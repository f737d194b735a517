"""The HTTP API and dashboard: one ASGI app (:func:`squad.web.app.create_app`) that
``squad daemon`` serves beside its scheduler and ``squad dashboard`` serves alone.

Nothing here is imported by ``squad --help``: FastAPI, Jinja2 and uvicorn load only when a
server starts.
"""

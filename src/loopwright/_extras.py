"""Which extra brings a module: a command that needs one that is not installed says which
extra to install, in one line (`pip install 'loopwright[server]'`)."""

from __future__ import annotations

EXTRA_OF_MODULE = {
    "starlette": "server",
    "uvicorn": "server",
    "websockets": "server",
    "mcp": "mcp",
    "psycopg": "postgres",
    "psycopg_pool": "postgres",
    "temporalio": "temporal",
    "opentelemetry": "otel",
    "llama_cpp": "local",
}
"""The top-level module each optional extra of pyproject.toml provides."""


def missing_extra(error: ImportError) -> str | None:
    """The extra whose module `error` failed to import; None when it is not one of ours
    (a user's tool module importing something absent, say)."""
    name = error.name or ""
    return EXTRA_OF_MODULE.get(name.partition(".")[0])


def install_hint(error: ImportError, needed_by: str) -> str | None:
    """`{needed_by} needs the server extra (uvicorn is not installed): pip install
    'loopwright[server]'`, or None when the missing module is not an extra's."""
    extra = missing_extra(error)
    if extra is None:
        return None
    return (
        f"{needed_by} needs the {extra} extra ({error.name} is not installed): "
        f"pip install 'loopwright[{extra}]'"
    )

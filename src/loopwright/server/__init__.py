"""The HTTP API, live events (SSE, WebSocket) and the web dashboard.

    app = create_app(ServerConfig(runtime=Runtime(store), tokens={"s3cr3t-token": "acme"}))

`loopwright serve` runs it with uvicorn; see docs/server.md. `FolderTaskLauncher` (the task
files a server offers) is imported when first named: a server given no task folder does
not load the task file reader.
"""

from typing import TYPE_CHECKING

from loopwright.server._app import create_app
from loopwright.server._config import ServerConfig, TaskLauncher, server_runtime

if TYPE_CHECKING:
    from loopwright.server._tasks import FolderTaskLauncher


def __getattr__(name: str) -> object:
    if name == "FolderTaskLauncher":
        from loopwright.server._tasks import FolderTaskLauncher

        return FolderTaskLauncher
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "FolderTaskLauncher",
    "ServerConfig",
    "TaskLauncher",
    "create_app",
    "server_runtime",
]

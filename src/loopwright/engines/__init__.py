"""Engines that run loopwright's loops somewhere other than this process's event loop.

The embedded engine (loopwright.runtime: asyncio + a run store) is the default and needs
nothing here. `loopwright.engines.temporal` runs agent runs as Temporal workflows (the
`temporal` extra).
"""

__all__: list[str] = []

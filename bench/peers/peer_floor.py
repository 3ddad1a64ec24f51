"""The floor: the least a ReAct loop can do with the same scripted model loopwright uses
(model call, tool call, append, repeat). Shared with bench/overhead.py."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

from overhead import floor_run

NAME = "hand-written asyncio loop"


async def run_once(steps: int) -> None:
    await floor_run(steps)

"""Start, resume and cancel runs; fan their events out to the store and subscribers."""

from loopwright.runtime._runtime import EventSink, RunBody, RunHandle, Runtime
from loopwright.runtime._spec import RunSpec, build_agent

__all__ = ["EventSink", "RunBody", "RunHandle", "RunSpec", "Runtime", "build_agent"]

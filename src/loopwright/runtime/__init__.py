"""Start, resume and cancel runs; fan their events out to the store and subscribers."""

from loopwright.runtime._runtime import EventSink, RunBody, RunHandle, Runtime

__all__ = ["EventSink", "RunBody", "RunHandle", "Runtime"]

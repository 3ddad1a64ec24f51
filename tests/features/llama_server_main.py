"""`python tests/features/llama_server_main.py ARGS`: llama-cpp-python's OpenAI-compatible
server with the embedded model's loading rule (llama.cpp's extra buffer types only when
asked for: see loopwright.models._local.weight_repacking_wanted).

It ends with the test process that started it: a pytest killed mid-run (a CI time limit,
Ctrl-C twice) runs no fixture teardown, and an orphaned server kept ~2 GB and a core busy
for the runs that followed."""

import ctypes
import os
import runpy
import signal
import sys

from loopwright.models._local import chosen_cpu_buffers

PR_SET_PDEATHSIG = 1


def end_with_parent() -> None:
    """SIGTERM this process when its parent dies (Linux; elsewhere the fixture's teardown
    is all there is). Linux ties it to the thread that started the process: the fixtures
    start the server from pytest's main thread."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    if parent == 1:  # already gone: this process was handed to init while starting
        os._exit(0)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        return
    if os.getppid() != parent:  # it died before the request took effect
        os._exit(0)


if __name__ == "__main__":
    end_with_parent()
    with chosen_cpu_buffers():
        runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)

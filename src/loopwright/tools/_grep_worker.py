"""The matching half of `grep`, run as its own process (`python -I -S _grep_worker.py`).

Python's `re` backtracks: a pattern such as `(a+)+$` can take exponential time, holds the
GIL and cannot be interrupted from another thread. Run here, a runaway pattern costs one
child process that `grep` kills at its deadline; the engine stays responsive. Standard
library only (it runs isolated, without the project on its path).

stdin: {"pattern", "flags", "files": [paths], "max_matches", "max_bytes", "max_line"}
stdout: {"hits": [[file index, line number, text], ...], "more": count}
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys


def _read(path: str, max_bytes: int) -> bytes | None:
    """A regular file's bytes; None for anything else (a FIFO is never waited on)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        return handle.read(max_bytes + 1)


def main() -> None:
    job = json.load(sys.stdin)
    regex = re.compile(job["pattern"], job["flags"])
    hits: list[list[object]] = []
    more = 0
    for index, path in enumerate(job["files"]):
        data = _read(path, job["max_bytes"])
        if data is None or b"\x00" in data[:8192]:
            continue
        for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
            if regex.search(line):
                if len(hits) < job["max_matches"]:
                    hits.append([index, number, line.strip()[: job["max_line"]]])
                else:
                    more += 1
    json.dump({"hits": hits, "more": more}, sys.stdout)


if __name__ == "__main__":
    main()

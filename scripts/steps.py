"""Run shell commands one after another with a progress line between them (`make bench`).

    python scripts/steps.py LABEL "command one" "command two" ...

Before each command and after the last: `LABEL: 2/6 steps (33%), elapsed 4:10, about 8:20
left`, then the command. The commands' own output goes straight through (they often `tee`
their tables), so the progress is a plain line on a terminal too. Stops at the first failure.
"""

from __future__ import annotations

import subprocess
import sys

from loopwright.evals._progress import ProgressClock


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    label, commands = sys.argv[1], sys.argv[2:]
    clock = ProgressClock(len(commands), unit="steps")
    for command in commands:
        print(f"{label}: {clock.text()}; next: {command}", flush=True)
        code = subprocess.run(command, shell=True).returncode
        if code != 0:
            print(f"{label}: failed (exit {code}): {command}", file=sys.stderr, flush=True)
            return code
        clock.advance()
    print(f"{label}: {clock.text()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

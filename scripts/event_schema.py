"""Write docs/events.schema.json: the JSON Schema of every event, from loopwright.events.

python scripts/event_schema.py           # rewrite the file
python scripts/event_schema.py --check   # exit 1 if it is not current
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from loopwright._event_schema import events_schema

TARGET = Path(__file__).resolve().parents[1] / "docs" / "events.schema.json"


def render() -> str:
    return json.dumps(events_schema(), indent=2, sort_keys=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that it is current")
    args = parser.parse_args()
    text = render()
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is stale: run python scripts/event_schema.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

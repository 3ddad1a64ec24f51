"""Can a small model tell, before it starts, whether a request needs a tool?

    .venv/bin/python bench/triage_probe.py --model 'local?threads=1' [--json FILE]

Issue 19's "does this need a tool?" first turn, measured before it is built into the loop:
for every task of evals/tasks.yaml, one short model call with the task's tools (name and
description) and the request, asking for one word, DIRECT or TOOL. Level 5 tasks need no
tool; every other level does. The confusion matrix says what such a first turn could gain
(level 5 questions answered directly) and what it would cost (tool tasks answered without
their tool). Nothing here is tuned to a task: one prompt for all of them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from loopwright.evals import load_suite
from loopwright.messages import Message, ModelRequest
from loopwright.models import resolve_model

ROOT = Path(__file__).resolve().parents[1]
QUESTION = (
    "Tools you could call:\n{tools}\n\nRequest: {request}\n\n"
    "Can this request be answered correctly without calling any of these tools? "
    "Reply with one word: DIRECT if no tool is needed, TOOL if a tool is needed."
)


def verdict(text: str) -> str:
    word = text.strip().strip("`*\"'.").upper()
    if word.startswith("DIRECT"):
        return "direct"
    if word.startswith("TOOL"):
        return "tool"
    return "unclear"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="local?threads=1")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    suite = load_suite(ROOT / "evals")
    model = resolve_model(args.model)
    rows: list[dict[str, Any]] = []
    for task in suite.tasks:
        tools = "\n".join(f"- {t.name}: {t.description}" for t in suite.tools_for(task))
        prompt = QUESTION.format(tools=tools, request=task.request)
        request = ModelRequest(
            messages=(Message.user(prompt),), temperature=0.0, max_output_tokens=4
        )
        started = time.perf_counter()
        response = await model.complete(request)
        needed = "direct" if task.level == 5 else "tool"
        said = verdict(response.text)
        seconds = round(time.perf_counter() - started, 2)
        row = {"id": task.id, "level": task.level, "needed": needed, "said": said}
        rows.append({**row, "text": response.text, "s": seconds})
        print(f"{task.id:26} L{task.level} needs {needed:6} said {said:7} {response.text!r}")
    right = sum(r["needed"] == r["said"] for r in rows)
    direct_right = sum(r["needed"] == r["said"] == "direct" for r in rows)
    tool_lost = sum(r["needed"] == "tool" and r["said"] != "tool" for r in rows)
    print(f"{model.name}: {right}/{len(rows)} right; no-tool questions seen as such "
          f"{direct_right}/{sum(r['needed'] == 'direct' for r in rows)}; tool tasks "
          f"that would lose their tool {tool_lost}")  # fmt: skip
    if args.json is not None:
        args.json.write_text(json.dumps({"model": model.name, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    asyncio.run(main())

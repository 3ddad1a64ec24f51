"""Structured output on the embedded model: valid on the first try, with and without a grammar.

    .venv/bin/python bench/structured_output.py [--only N] [--out FILE.json]

For each of 20 schemas (flat objects, enums, arrays, nested objects, optional fields, number
ranges, a top-level array), one agent run without tools on the embedded 1.5B model
(`resolve_model("local")`, greedy, at most 200 output tokens, no parse retry, no output
retry): once with constrained decoding
(the llama.cpp grammar built from the reply's schema) and once with the prompt alone. A run
counts as valid on the first try when its first answer validated. Writes a JSON file and
prints a Markdown table. CPU heavy: 40 model calls, one at a time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from pathlib import Path
from typing import Any

from loopwright import AgentExecutor, AgentOptions
from loopwright.models import resolve_model

S = {"type": "string"}
I = {"type": "integer"}  # noqa: E741
N = {"type": "number"}
B = {"type": "boolean"}
MAX_OUTPUT_TOKENS = 200
"""Every valid answer here fits in well under 200 tokens; a reply that runs on is invalid."""


def obj(required: list[str] | None = None, **properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required or list(properties)}


CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("person", "Alice Martin is 34 and lives in Lyon.", obj(name=S, age=I, city=S)),
    ("book", "'Dune' by Frank Herbert, 1965, 412 pages.", obj(title=S, author=S, year=I, pages=I)),
    ("flag", "Is Paris the capital of France?", obj(answer=B, explanation=S)),
    ("sentiment", "Review: 'Terrible service, cold food.'",
     obj(sentiment={"type": "string", "enum": ["positive", "neutral", "negative"]}, score=N)),
    ("tags", "Tag this post: 'Python 3.12 adds faster f-strings and better errors.'",
     obj(tags={"type": "array", "items": S, "minItems": 1})),
    ("numbers", "List the first five prime numbers.",
     {"type": "array", "items": I, "minItems": 5, "maxItems": 5}),
    ("address", "Ship to 10 Downing Street, London SW1A 2AA, United Kingdom.",
     obj(street=S, city=S, postcode=S, country=S)),
    ("order", "Order 1182: 2 keyboards at 45.5 each and 1 mouse at 19.9.",
     obj(id=I, items={"type": "array", "items": obj(name=S, quantity=I, unit_price=N)})),
    ("event", "Team meeting on 2025-03-14 at 10:30 in room B2, 45 minutes.",
     obj(title=S, date=S, time=S, room=S, minutes=I)),
    ("priority", "Bug: the login page crashes for every user.",
     obj(summary=S, priority={"type": "string", "enum": ["low", "medium", "high", "critical"]})),
    ("rating", "Rate the movie 'Up' from 1 to 5.",
     obj(title=S, stars={"type": "integer", "minimum": 1, "maximum": 5})),
    ("optional", "The user Bob (no email given) signed up.",
     obj(["name"], name=S, email=S)),
    ("nested", "Acme Corp, CEO Jane Roe (jane@acme.test), founded 1999.",
     obj(company=S, founded=I, ceo=obj(name=S, email=S))),
    ("matrix", "Give the 2x2 identity matrix.",
     obj(rows={"type": "array", "items": {"type": "array", "items": I}})),
    ("recipe", "Pancakes need flour, eggs, milk; 20 minutes; serves 4.",
     obj(name=S, ingredients={"type": "array", "items": S}, minutes=I, servings=I)),
    ("weather", "Forecast: 18.5 degrees, light rain, wind 12 km/h in Oslo.",
     obj(city=S, temperature_c=N, condition=S, wind_kmh=N)),
    ("language", "Which language is 'Guten Morgen' and what does it mean?",
     obj(language=S, translation=S)),
    ("math", "What is 17 * 23? Show the result and whether it is even.",
     obj(result=I, even=B)),
    ("contacts", "Contacts: Ann 555-0101, Ben 555-0102.",
     obj(contacts={"type": "array", "items": obj(name=S, phone=S)})),
    ("status", "The deployment of v2.3.1 finished with 0 errors in 3 minutes.",
     obj(version=S, success=B, errors=I, duration_minutes=I)),
]  # fmt: skip


async def one(
    model: Any, request: str, schema: dict[str, Any], constrained: bool
) -> dict[str, Any]:
    options = AgentOptions(
        output_retries=0,
        parse_retries=0,
        constrained_output=constrained,
        max_iterations=1,
        max_output_tokens=MAX_OUTPUT_TOKENS,
    )
    agent = AgentExecutor(model, output_type=schema, options=options)
    started = time.perf_counter()
    result = await agent.run(request)
    return {
        "valid": result.success,
        "status": result.status,
        "reason": result.reason,
        "answer": result.answer,
        "errors": list(result.output_errors),
        "seconds": round(time.perf_counter() - started, 2),
        "output_tokens": result.usage.output_tokens,
    }


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", type=int, default=len(CASES), help="the first N schemas")
    parser.add_argument("--out", default="bench/results/structured-output.json")
    parser.add_argument("--modes", default="constrained,prompted", help="which passes to run")
    args = parser.parse_args()
    model = resolve_model("local")
    rows = []
    for name, request, schema in CASES[: args.only]:
        row: dict[str, Any] = {"schema": name}
        for key in args.modes.split(","):
            constrained = key == "constrained"
            row[key] = await one(model, request, schema, constrained)
            print(name, key, row[key]["valid"], row[key]["seconds"], flush=True)
        rows.append(row)
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(rows, indent=2) + "\n")  # after each schema
    total = len(rows)
    for key in args.modes.split(","):
        valid = sum(r[key]["valid"] for r in rows)
        seconds = sum(r[key]["seconds"] for r in rows) / total
        print(f"| {key} | {valid}/{total} ({100 * valid / total:.0f}%) | {seconds:.1f} s |")


if __name__ == "__main__":
    asyncio.run(main())

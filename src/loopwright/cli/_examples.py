"""An example or two for each command's `--help` (its epilog), kept where a test checks
that every command has some and that each one parses."""

from __future__ import annotations

import argparse

EXAMPLES: dict[str, tuple[str, ...]] = {
    "run": (
        'loopwright run "How many TODOs are in src/?" --tools read,grep --model ollama:qwen3:8b',
        "loopwright run --continue run_3fa2 --timeout 600   # carry on from a stopped run",
    ),
    "parse": (
        "loopwright parse reply.txt",
        'echo "Final Answer: 42" | loopwright parse',
    ),
    "skills list": ("loopwright skills list examples/skills",),
    "skills show": ("loopwright skills show examples/skills/code-review",),
    "prompt": (
        "loopwright prompt --tools read,grep",
        "loopwright prompt --skill examples/skills/code-review --json",
    ),
    "eval": (
        "loopwright eval evals/ --model ollama:qwen3:8b",
        "loopwright eval evals/ --model local --only add-basic,weather-paris",
    ),
    "task validate": ("loopwright task validate examples/tasks",),
    "task run": (
        "loopwright task run examples/tasks/rotate-keys.yaml --workspace examples/tasks/workspace "
        "--input as_of=2025-06-01",
        'loopwright task run examples/tasks --match "rotate the staging keys" --yes',
    ),
    "task approve": (
        "loopwright task approve run_3fa2",
        'loopwright task approve run_3fa2 --reject --reason "not during the freeze"',
    ),
    "task rollback": ("loopwright task rollback run_3fa2",),
    "runs list": (
        "loopwright runs list --status interrupted",
        "loopwright runs list --json | jq '.[0].run_id'",
    ),
    "runs show": (
        "loopwright runs show run_3fa2",
        "loopwright runs show run_3fa2 --json | jq -c 'select(.type == \"tool_call\")'",
    ),
    "runs follow": ("loopwright runs follow run_3fa2",),
    "runs resume": (
        "loopwright runs resume run_3fa2",
        "loopwright runs resume run_3fa2 --yes --json",
    ),
    "runs replay": ("loopwright runs replay run_3fa2",),
    "runs approve": (
        "loopwright runs approve run_3fa2",
        'loopwright runs approve run_3fa2 --reject --reason "use the staging copy"',
    ),
    "runs export": ("loopwright runs export run_3fa2 > run.json",),
    "serve": (
        "loopwright serve --port 8765",
        "loopwright serve --host 0.0.0.0 --token-file tokens.toml --tasks examples/tasks",
    ),
    "models": ("loopwright models", "loopwright models --json"),
    "model-host status": ("loopwright model-host status", "loopwright model-host status --json"),
    "model-host stop": ("loopwright model-host stop",),
    "config show": ("loopwright config show --section run",),
    "config trust": ("loopwright config trust",),
    "store migrate": ("loopwright store migrate --store postgresql://app@db/runs",),
    "store copy": ("loopwright store copy ~/.loopwright/runs.db postgresql://app@db/runs",),
    "worker": (
        "loopwright worker --temporal localhost:7233 --store postgresql://app@db/runs",
        "loopwright worker --temporal temporal:7233 --allow-tools ./tools.py --allow-commands",
    ),
    "dev postgres": ("loopwright dev postgres",),
    "dev temporal": ("loopwright dev temporal --port 7233",),
}
"""Command path -> example command lines (a `# comment` may follow one)."""

EXAMPLES_TITLE = "examples:"


class HelpFormatter(argparse.HelpFormatter):
    """argparse's formatter, but the examples paragraph of an epilog keeps its lines."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        paragraphs = text.split("\n\n")
        filled = [
            paragraph
            if paragraph.startswith(EXAMPLES_TITLE)
            else super(HelpFormatter, self)._fill_text(paragraph, width, indent)
            for paragraph in paragraphs
        ]
        return "\n\n".join(filled)


def add_examples(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> None:
    """Put each command's examples at the end of its help, every parser below `parser`; a
    command with no description of its own says at the top of its help what its line in
    the command list says."""
    parser.formatter_class = HelpFormatter
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            listed = {choice.dest: choice.help for choice in action._choices_actions}
            for name, child in action.choices.items():
                line = listed.get(name)
                if child.description is None and line:
                    child.description = f"{line[0].upper()}{line[1:]}."
                add_examples(child, (*path, name))
    lines = EXAMPLES.get(" ".join(path))
    if lines:
        block = EXAMPLES_TITLE + "\n" + "\n".join(f"  {line}" for line in lines)
        parser.epilog = f"{parser.epilog}\n\n{block}" if parser.epilog else block

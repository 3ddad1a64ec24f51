"""PromptBuilder: the system prompt, byte-identical across the iterations of a run."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from loopwright.messages import ToolSpec
from loopwright.prompts import _templates as templates
from loopwright.prompts.errors import build_error_observation


@dataclass(frozen=True)
class FileRef:
    """A supporting file listed (not loaded) in the prompt."""

    description: str = ""
    estimated_lines: int = 0


@dataclass(frozen=True)
class PromptParts:
    """Everything that goes into a system prompt."""

    tools: tuple[ToolSpec, ...] = ()
    tool_mode: Literal["native", "prompted"] = "prompted"
    skill_name: str | None = None
    skill_content: str = ""
    available_files: Mapping[str, FileRef] | None = None
    skill_dir: str = ""
    workspace_section: str = ""
    allowed_tools: tuple[str, ...] | None = None
    examples: bool = True


class PromptBuilder:
    """Builds the system prompt. The template is configurable (`template=`)."""

    def __init__(self, template: str = templates.SYSTEM_PROMPT_TEMPLATE) -> None:
        self.template = template

    def build(self, parts: PromptParts) -> str:
        prompted = parts.tool_mode == "prompted"
        intro = (
            templates.INTRO_SKILL.format(skill_name=parts.skill_name)
            if parts.skill_name
            else templates.INTRO_PLAIN
        )
        skill = (
            f"\nSKILL INSTRUCTIONS:\n{parts.skill_content.strip()}\n" if parts.skill_content else ""
        )
        files = self.build_available_files_section(parts.available_files or {}, parts.skill_dir)
        workspace = f"\n{parts.workspace_section.strip()}\n" if parts.workspace_section else ""
        examples = templates.PROMPTED_EXAMPLES if prompted and parts.examples else ""
        return (
            self.template.format(
                intro=intro,
                skill_section=skill,
                workspace_section=workspace,
                available_files_section=f"\n{files}\n" if files else "",
                tool_descriptions=self.format_tool_descriptions(parts.tools, parts.allowed_tools)
                or "(no tools)",
                format_section=templates.PROMPTED_FORMAT if prompted else templates.NATIVE_FORMAT,
                format_rule=templates.PROMPTED_RULE if prompted else templates.NATIVE_RULE,
                examples_section=f"\n{examples}" if examples else "",
            ).rstrip()
            + "\n"
        )

    def format_tool_descriptions(
        self, tools: Iterable[ToolSpec], allowed_tools: Iterable[str] | None = None
    ) -> str:
        allowed = set(allowed_tools) if allowed_tools is not None else None
        lines: list[str] = []
        for tool in tools:
            if allowed is not None and tool.name not in allowed:
                continue
            lines.append(f"- {tool.name}: {tool.description}")
            properties = tool.parameters.get("properties") or {}
            if properties:
                lines.append(f"  Parameters: {json.dumps(tool.parameters, sort_keys=True)}")
        return "\n".join(lines)

    def build_available_files_section(
        self, available_files: Mapping[str, FileRef], skill_dir: str | Path = ""
    ) -> str:
        if not available_files:
            return ""
        lines = ["AVAILABLE SUPPORTING FILES (load on-demand with 'read' tool):"]
        for filename, ref in sorted(available_files.items()):
            line = f"- {filename}"
            if ref.description:
                line += f": {ref.description}"
            if ref.estimated_lines:
                line += f" ({ref.estimated_lines:,} lines)"
            lines.append(line)
        lines.append("")
        lines.append(f"Skill directory: {skill_dir}")
        lines.append("Use the 'read' tool to load these files when you need their content.")
        return "\n".join(lines)

    build_error_observation = staticmethod(build_error_observation)


def iteration_note(iteration: int, max_iterations: int) -> str:
    """Goes in the newest message, never the system prompt (keeps the prompt cache warm).

    Worded without an `i/n` fraction: small models copied "3/10" into tool arguments.
    """
    return f"[Iteration {iteration} of at most {max_iterations}]"


def observation_text(tool_name: str, content: str) -> str:
    return f"Observation from {tool_name}: {content}"


CORRECTION_TEMPLATE = (
    "Your last reply could not be read: {problem}\n"
    "Reply again with exactly one JSON object, either\n"
    '{{"thought": "...", "action": "<tool name>", "action_input": {{...}}}}\n'
    'or {{"thought": "...", "final_answer": "..."}}.'
)


def correction_message(problem: str) -> str:
    return CORRECTION_TEMPLATE.format(problem=problem)

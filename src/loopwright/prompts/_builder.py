"""PromptBuilder: the system prompt, byte-identical across the iterations of a run (what
goes in the newest message instead: prompts/_turn_notes.py)."""

from __future__ import annotations

import json
import string
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from loopwright.errors import ConfigurationError
from loopwright.messages import ToolSpec
from loopwright.prompts import _templates as templates
from loopwright.prompts._revisions import (
    REVISIONS,
    Revision,
    format_section,
    illustration_heading,
    layout,
    offers_several_calls,
)
from loopwright.prompts._signatures import tool_signatures
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
    max_iterations: int | None = None
    """Only for a template that names `{max_iterations}` (seed 002's placeholders)."""
    context_window: int | None = None
    """The run's context window, tokens: the token-limit rule names it (None: unknown)."""
    revision: int = 5
    """Which revision of the prompt (`AgentOptions.revision`): 1, 2 and 3 are the ones runs
    recorded with RunSpec 1 to 3, 4 and 5 had (prompts/_revision1.py, _revision2.py,
    _revision3.py), kept so they replay as they ran; 4 and 5 have the same prompt."""
    calls_per_reply: int = 1
    """The calls a prompted reply may carry (`AgentOptions.max_calls_per_reply` when given):
    more than 1 offers several independent calls a reply, from revision 8 on."""


TEMPLATE_FIELDS = (
    "intro",
    "skill_section",
    "workspace_section",
    "available_files_section",
    "tool_descriptions",
    "format_section",
    "format_rule",
    "examples_section",
    "skill_name",
    "skill_content",
    "max_iterations",
    "token_rule",
    "iteration",
)
"""What a template may name: the native sections, and seed 002's placeholders. A line that
names `{iteration}` is left out of a run's system prompt (see `without_iteration`)."""


def template_fields(template: str) -> set[str]:
    """The placeholders `template` names (a ConfigurationError if it cannot be read)."""
    try:
        return {field for _, field, _, _ in string.Formatter().parse(template) if field}
    except ValueError as exc:
        raise ConfigurationError(f"system prompt template: {exc}") from None


def check_template(template: str) -> None:
    """A ConfigurationError naming the problem if `template` cannot be filled in."""
    names = template_fields(template)
    unknown = sorted(names - set(TEMPLATE_FIELDS))
    if unknown:
        raise ConfigurationError(
            f"system prompt template: unknown placeholder {{{unknown[0]}}} "
            f"(known: {', '.join(TEMPLATE_FIELDS)}; write {{{{ and }}}} for literal braces)"
        )


def without_iteration(template: str) -> str:
    """`template` without the lines that name `{iteration}` (seed 002's "Current iteration:
    {iteration}/{max_iterations}"): a run's system prompt is the same at every iteration,
    so the model's prompt cache stays warm, and the iteration goes in the newest message."""
    if "iteration}" not in template:
        return template
    kept = [line for line in template.split("\n") if "iteration" not in template_fields(line)]
    return "\n".join(kept)


class PromptBuilder:
    """Builds the system prompt. The template is configurable (`template=`): it may name
    the native sections and seed 002's placeholders (`TEMPLATE_FIELDS`); a line naming
    `{iteration}` is left out (`without_iteration`)."""

    def __init__(self, template: str = templates.SYSTEM_PROMPT_TEMPLATE) -> None:
        check_template(template)
        self.template = without_iteration(template)

    def build(self, parts: PromptParts) -> str:
        """The system prompt of `parts`, in the revision they name."""
        revision = REVISIONS[parts.revision]
        prompted = parts.tool_mode == "prompted"
        intro = (
            templates.INTRO_SKILL.format(skill_name=parts.skill_name)
            if parts.skill_name
            else templates.INTRO_PLAIN
        )
        skill = (
            f"\nSKILL INSTRUCTIONS:\n{parts.skill_content.strip()}\n" if parts.skill_content else ""
        )
        files = (  # listed only when the model can load them (revision 1: always)
            self.build_available_files_section(parts.available_files or {}, parts.skill_dir)
            if READ_TOOL in offered_tools(parts) or not revision.example_fits_tools
            else ""
        )
        workspace = f"\n{parts.workspace_section.strip()}\n" if parts.workspace_section else ""
        examples = self._examples(parts, revision) if parts.examples else ""
        tools = self._tool_descriptions(parts, revision) or "(no tools)"
        has_tools = bool(offered_tools(parts))
        several = has_tools and offers_several_calls(
            parts.tool_mode, revision, parts.calls_per_reply
        )
        template = layout(self.template, revision)
        if several:  # the default rules' "one tool per reply" would contradict the format
            template = template.replace(templates.ONE_CALL_RULE, templates.SEVERAL_CALLS_RULE)
        format_rule = templates.PROMPTED_RULE if prompted else templates.NATIVE_RULE
        return (
            template.format(
                skill_name=parts.skill_name or "",
                skill_content=parts.skill_content,
                max_iterations="" if parts.max_iterations is None else parts.max_iterations,
                intro=intro,
                skill_section=skill,
                workspace_section=workspace,
                available_files_section=f"\n{files}\n" if files else "",
                tool_descriptions=tools,
                format_section=format_section(
                    parts.tool_mode, revision, has_tools, parts.calls_per_reply
                ),
                format_rule=templates.SEVERAL_CALLS_FORMAT_RULE if several else format_rule,
                examples_section=f"\n{examples}" if examples else "",
                token_rule=token_rule(parts.context_window) + "\n" if revision.token_rule else "",
            ).rstrip()
            + "\n"
        )

    def _examples(self, parts: PromptParts, revision: Revision) -> str:
        """Seed 003's read -> understand -> modify -> verify example when the run works on
        a workspace with file tools; else the plain read example. Both tool modes: the
        native one shows its calls as `name(arguments)`."""
        prompted = parts.tool_mode == "prompted"
        workspace = _workspace_example(parts, revision) if parts.workspace_section else ""
        if workspace:
            return workspace
        if not revision.example_fits_tools:  # the read example, prompted mode only
            return revision.texts.examples if prompted else ""
        offered = offered_tools(parts)
        if not offered:  # nothing to call: a final answer
            return revision.texts.answer_example if prompted else templates.NATIVE_ANSWER_EXAMPLE
        example = revision.texts.examples if prompted else templates.NATIVE_EXAMPLES
        if offers_several_calls(parts.tool_mode, revision, parts.calls_per_reply):
            example = templates.SEVERAL_CALLS_EXAMPLES
        if READ_TOOL in offered:
            return example
        # Without read, its heading says read is an illustration. Concrete beats generic:
        # with a call of the run's own tool and placeholders ("...", "(the tool's result)")
        # the 1.5B embedded model gave the placeholder answer as its final answer to the
        # README's question; with this one it chains add and multiply (with the same words
        # in a note after the example instead of its heading, it did not).
        return example.replace("EXAMPLE", illustration_heading(self.template, revision), 1)

    def _tool_descriptions(self, parts: PromptParts, revision: Revision) -> str:
        """With the default template in prompted mode, the tools as signatures (revision 3).
        Otherwise as `format_tool_descriptions` writes them (JSON Schema lines): native mode,
        the revisions before, a template of the user's own and a subclass with its own
        method (seed 002's contract for `{tool_descriptions}`)."""
        default = self.template == templates.SYSTEM_PROMPT_TEMPLATE
        own = type(self).format_tool_descriptions is not PromptBuilder.format_tool_descriptions
        if parts.tool_mode == "prompted" and revision.tools_as_signatures and default and not own:
            return tool_signatures(parts.tools, parts.allowed_tools)
        return self.format_tool_descriptions(parts.tools, parts.allowed_tools)

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


def token_rule(context_window: int | None) -> str:
    """Seed 002's "token limit guidance": replies and quotes kept short, big files read in
    parts; with the run's context window, its size."""
    if not context_window:
        return templates.TOKEN_RULE.format(limit="")
    return templates.TOKEN_RULE.format(
        limit=f" (this conversation holds at most {context_window:,} tokens)"
    )


READ_TOOL = "read"
"""The tool the supporting-files section and the plain example name."""


def offered_tools(parts: PromptParts) -> set[str]:
    """The names of the tools the prompt describes (the run's, less those not allowed)."""
    allowed = set(parts.allowed_tools) if parts.allowed_tools is not None else None
    return {t.name for t in parts.tools if allowed is None or t.name in allowed}


def _workspace_example(parts: PromptParts, revision: Revision) -> str:
    """The file-work example, with the run's own tool names ("" without read and edit)."""
    names = offered_tools(parts)
    edit = next((n for n in ("edit_file", "write_file") if n in names), None)
    if "read" not in names or edit is None:
        return ""
    verify = "run_command" if "run_command" in names else "read"
    edit_args = (
        {"path": "settings.py", "old_text": "RETRIES = 3", "new_text": "RETRIES = 5"}
        if edit == "edit_file"
        else {"path": "settings.py", "content": "TIMEOUT = 30\nRETRIES = 5\n"}
    )
    verify_args = (
        {"command": 'python -c "import settings; print(settings.RETRIES)"'}
        if verify == "run_command"
        else {"path": "settings.py"}
    )
    native = parts.tool_mode == "native"
    arguments = _call_arguments if native else json.dumps
    template = revision.native_workspace_example if native else revision.texts.workspace_example
    return template.format(
        read="read",
        edit=edit,
        edit_args=arguments(edit_args),
        verify=verify,
        verify_args=arguments(verify_args),
        verify_result="5" if verify == "run_command" else "TIMEOUT = 30\nRETRIES = 5",
    )


def _call_arguments(arguments: Mapping[str, Any]) -> str:
    """`path="settings.py", old_text="..."`: a native call's arguments as an example shows
    them (the parser chain reads the whole `name(...)` as a call, should a model copy it)."""
    return ", ".join(f"{name}={json.dumps(value)}" for name, value in arguments.items())

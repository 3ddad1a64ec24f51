"""Skills: SKILL.md folders (the Agent Skills format) and the autonomous skill executor."""

from loopwright.skills._executor import (
    AutonomousConfig,
    AutonomousSkillExecutor,
    PreparedSkill,
    known_tool_names,
    prepare_skill_agent,
)
from loopwright.skills._fit import check_fits, estimate_prompt_tokens
from loopwright.skills._preprocess import (
    ContextLoader,
    DynamicInjector,
    LoadedContext,
    StringSubstitutor,
    describe_file,
)
from loopwright.skills._skill import (
    SKILL_FILE,
    Skill,
    SkillMetadata,
    SkillScan,
    discover_skills,
    load_skill,
    scan_skills,
    split_front_matter,
)

__all__ = [
    "SKILL_FILE",
    "AutonomousConfig",
    "AutonomousSkillExecutor",
    "ContextLoader",
    "DynamicInjector",
    "LoadedContext",
    "PreparedSkill",
    "Skill",
    "SkillMetadata",
    "SkillScan",
    "StringSubstitutor",
    "check_fits",
    "describe_file",
    "discover_skills",
    "estimate_prompt_tokens",
    "known_tool_names",
    "load_skill",
    "prepare_skill_agent",
    "scan_skills",
    "split_front_matter",
]

"""Skills: SKILL.md folders (the Agent Skills format) and the autonomous skill executor."""

from loopwright.skills._executor import (
    AutonomousConfig,
    AutonomousSkillExecutor,
    prepare_skill_agent,
)
from loopwright.skills._preprocess import (
    ContextLoader,
    DynamicInjector,
    LoadedContext,
    StringSubstitutor,
    describe_file,
)
from loopwright.skills._skill import (
    Skill,
    SkillMetadata,
    SkillScan,
    discover_skills,
    load_skill,
    scan_skills,
)

__all__ = [
    "AutonomousConfig",
    "AutonomousSkillExecutor",
    "ContextLoader",
    "DynamicInjector",
    "LoadedContext",
    "Skill",
    "SkillMetadata",
    "SkillScan",
    "StringSubstitutor",
    "describe_file",
    "discover_skills",
    "load_skill",
    "prepare_skill_agent",
    "scan_skills",
]

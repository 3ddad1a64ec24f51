"""Skills: SKILL.md folders (the Agent Skills format) and the autonomous skill executor."""

from loopwright.skills._executor import AutonomousConfig, AutonomousSkillExecutor
from loopwright.skills._preprocess import (
    ContextLoader,
    DynamicInjector,
    LoadedContext,
    StringSubstitutor,
)
from loopwright.skills._skill import Skill, SkillMetadata, discover_skills, load_skill

__all__ = [
    "AutonomousConfig",
    "AutonomousSkillExecutor",
    "ContextLoader",
    "DynamicInjector",
    "LoadedContext",
    "Skill",
    "SkillMetadata",
    "StringSubstitutor",
    "discover_skills",
    "load_skill",
]

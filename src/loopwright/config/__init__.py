"""`loopwright.toml`: defaults for `run`, `serve`, `task` and `worker`, with the source of
each value, and the trust a project's file needs before its settings that pick code or data
or weaken a protection apply."""

from loopwright.config._load import (
    Config,
    Ignored,
    Resolved,
    load_config,
    project_config_file,
    read_config_file,
    user_config_file,
)
from loopwright.config._project import FILE_NAME
from loopwright.config._schema import SECTIONS, SHARED_KEYS, Setting, env_name, setting
from loopwright.config._trust import record_trust, trust_file, trust_state
from loopwright.config._trust_rules import needs_trust

__all__ = [
    "FILE_NAME",
    "SECTIONS",
    "SHARED_KEYS",
    "Config",
    "Ignored",
    "Resolved",
    "Setting",
    "env_name",
    "load_config",
    "needs_trust",
    "project_config_file",
    "read_config_file",
    "record_trust",
    "setting",
    "trust_file",
    "trust_state",
    "user_config_file",
]

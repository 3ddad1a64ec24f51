"""`loopwright.toml`: defaults for `run`, `serve` and `task`, with the source of each value,
and the trust a project's file needs before its settings that run code apply."""

from loopwright.config._load import (
    FILE_NAME,
    Config,
    Ignored,
    Resolved,
    load_config,
    project_config_file,
    read_config_file,
    user_config_file,
)
from loopwright.config._schema import SECTIONS, SHARED_KEYS, Setting, env_name, setting
from loopwright.config._trust import needs_trust, record_trust, trust_file, trust_state

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

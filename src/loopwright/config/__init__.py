"""`loopwright.toml`: defaults for `run`, `serve` and `task`, with the source of each value."""

from loopwright.config._load import (
    FILE_NAME,
    Config,
    Resolved,
    load_config,
    project_config_file,
    read_config_file,
    user_config_file,
)
from loopwright.config._schema import SECTIONS, SHARED_KEYS, Setting, env_name, setting

__all__ = [
    "FILE_NAME",
    "SECTIONS",
    "SHARED_KEYS",
    "Config",
    "Resolved",
    "Setting",
    "env_name",
    "load_config",
    "project_config_file",
    "read_config_file",
    "setting",
    "user_config_file",
]

"""`loopwright.toml`: defaults for `run`, `serve`, `task` and `worker`, with the source of
each value, and the trust a project's file needs before its settings that pick code or data
or weaken a protection apply. Its interface is the file and `loopwright config`: no Python
names are public here."""

__all__: list[str] = []

"""The safety authority: operations and their undo (`loopwright.safety.operations`), the
scrubber of secrets (`loopwright.safety.scrub`) and the terminal's safe text
(`loopwright.safety.terminal`)."""

__all__: list[str] = []

"""Collect every problem of a task file (and its hooks and tool files) in one pass."""

from __future__ import annotations

from dataclasses import dataclass, field

from loopwright.errors import TaskParseError, TaskProblems


@dataclass
class Problems:
    """Problems as they are found; `raise_if_any` raises them all, in file order."""

    items: list[TaskParseError] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    """Files in the order they were first read: the task file, then its hooks and tools."""

    def add(self, where: str, message: str, line: int | None = None) -> None:
        self.items.append(TaskParseError(where, message, line))

    def extend(self, error: TaskParseError) -> None:
        """Record a TaskParseError raised by a helper (several, for TaskProblems)."""
        if isinstance(error, TaskProblems):
            self.items.extend(error.problems)
        else:
            self.items.append(error)

    def saw(self, file: str) -> None:
        if file not in self.files:
            self.files.append(file)

    def ordered(self) -> list[TaskParseError]:
        """In file order: files as first read, then by line (a problem without a line first)."""
        rank = {name: index for index, name in enumerate(self.files)}
        unique: dict[str, TaskParseError] = {}
        for item in self.items:
            unique.setdefault(str(item), item)
        return sorted(
            unique.values(),
            key=lambda p: (rank.get(p.file_path, len(rank)), p.file_path, p.line or 0),
        )

    def raise_if_any(self) -> None:
        if self.items:
            raise TaskProblems(self.ordered())

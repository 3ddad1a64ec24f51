"""Test doubles for code built on loopwright:

- `ScriptedModel`: a model that plays a script of replies, and fails when the script runs
  out or has replies left over;
- `MockClock`: a clock that moves only when told to (`advance`);
- `InMemoryRunStore`: a run store that keeps runs in this process only.

    from loopwright.testing import InMemoryRunStore, MockClock, ScriptedModel
"""

from loopwright.clock import MockClock
from loopwright.models._scripted import ScriptedModel
from loopwright.store._memory import InMemoryRunStore

__all__ = ["InMemoryRunStore", "MockClock", "ScriptedModel"]

"""A conversation as one thread: its turns, each a run of its own, linked by `after_run_id`."""

from __future__ import annotations

from loopwright.store._base import RunRecord, RunStore, find_run


def conversation_turns(
    store: RunStore, run_id: str, *, tenant: str | None = None
) -> list[RunRecord]:
    """The turns of the conversation `run_id` is in, oldest first: the turns before it,
    itself, then the turns after it. Where the conversation was taken up again from one
    turn more than once, the thread goes on with the newest of those follow-ups (the
    others: `store.follow_ups`). RunNotFound when `run_id` is not there (or another
    tenant's)."""
    record = find_run(store, run_id, tenant=tenant)
    seen = {record.run_id}
    before: list[RunRecord] = []
    current = record
    while current.after_run_id is not None and current.after_run_id not in seen:
        earlier = store.get_run(current.after_run_id, tenant=tenant)
        if earlier is None:
            break
        seen.add(earlier.run_id)
        before.append(earlier)
        current = earlier
    thread = [*reversed(before), record]
    current = record
    while True:
        later = [r for r in store.follow_ups(current.run_id, tenant=tenant) if r.run_id not in seen]
        if not later:
            return thread
        current = later[-1]
        seen.add(current.run_id)
        thread.append(current)

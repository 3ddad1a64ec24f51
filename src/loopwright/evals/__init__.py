"""The tool-use evaluation suite: tasks, a runner and a report."""

from loopwright.evals._progress import ProgressClock
from loopwright.evals._runner import EvalReport, TaskOutcome, run_suite, run_task
from loopwright.evals._suite import EvalSuite, EvalTask, Expectation, load_suite

__all__ = [
    "EvalReport",
    "EvalSuite",
    "EvalTask",
    "Expectation",
    "ProgressClock",
    "TaskOutcome",
    "load_suite",
    "run_suite",
    "run_task",
]

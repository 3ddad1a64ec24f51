"""The tool-use evaluation suite: tasks, a runner and a report."""

from loopwright.evals._runner import EvalReport, TaskOutcome, run_suite
from loopwright.evals._suite import EvalSuite, EvalTask, Expectation, load_suite

__all__ = [
    "EvalReport",
    "EvalSuite",
    "EvalTask",
    "Expectation",
    "TaskOutcome",
    "load_suite",
    "run_suite",
]

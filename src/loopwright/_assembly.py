"""Who is told of the embedded model's first-time assembly from its part packages: the
models report it (models/_local.py), the command line shows it as progress. It lives below
the models so that a command can listen without importing them."""

from collections.abc import Callable

AssemblyProgress = Callable[[str, int, int], None]
"""(model name, bytes done, bytes in all) while a packaged model is assembled."""
LISTENERS: list[AssemblyProgress] = []


def on_assembly_progress(callback: AssemblyProgress | None) -> None:
    """Report the first-time assembly of a packaged model (the CLI shows a progress bar);
    None stops reporting. The models never print."""
    LISTENERS.clear()
    if callback is not None:
        LISTENERS.append(callback)

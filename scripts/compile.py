"""Compile loopwright's hot path with mypyc (`make compile`, part of `make setup`).

    python scripts/compile.py            # build the C extensions beside their sources
    python scripts/compile.py --clean    # remove them: everything runs from the sources
    python scripts/compile.py --sources  # the compiled modules' source files (for make)
    python scripts/compile.py --check    # exit 1 without a C compiler or Python's headers

The modules are `loopwright._compiled.MODULES`. Each becomes a C extension next to its `.py`
(one shared library holds the compiled code); `src/loopwright/_compiled.json` records each
source's size, mtime and SHA-256, so `import loopwright` uses the extensions only while
their sources are unchanged. Without a C compiler or Python's headers this prints why and
leaves everything as pure Python (the same code, slower): exit 0.
"""

from __future__ import annotations

import argparse
import ast
import importlib.machinery
import importlib.util
import json
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
BUILD = ROOT / "build" / "mypyc"


def compiled_module() -> ModuleType:
    """`loopwright/_compiled.py` alone (importing the package would import the modules)."""
    spec = importlib.util.spec_from_file_location("_compiled", SRC / "loopwright" / "_compiled.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def clean(compiled: ModuleType) -> None:
    compiled.MANIFEST.unlink(missing_ok=True)
    package = SRC / "loopwright"
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        for path in package.rglob(f"*{suffix}"):
            path.unlink()
        for path in SRC.glob(f"*__mypyc{suffix}"):
            path.unlink()


def missing_tools() -> str | None:
    """Why nothing can be compiled here, if so."""
    compiler = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if shutil.which(compiler) is None:
        return f"no C compiler ({compiler})"
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    if not headers.exists():
        return f"no Python headers ({headers})"
    return None


def build(compiled: ModuleType) -> None:
    sources = [str(compiled.source_of(m).relative_to(SRC)) for m in compiled.MODULES]
    setup = (
        "from setuptools import setup\n"
        "from mypyc.build import mypycify\n"
        f"setup(name='loopwright-compiled', script_args=['build_ext', '--inplace', "
        f"'--build-temp', {str(BUILD / 'temp')!r}, '--build-lib', {str(BUILD / 'lib')!r}],\n"
        f"      ext_modules=mypycify({sources!r}, opt_level='3', target_dir={str(BUILD)!r}))\n"
    )
    # run from src/: setuptools would otherwise read the project's pyproject.toml
    subprocess.run([sys.executable, "-c", setup], cwd=SRC, check=True, stdout=subprocess.DEVNULL)


def write_manifest(compiled: ModuleType) -> None:
    sources = {}
    docs = {}
    for module in compiled.MODULES:
        path = compiled.source_of(module)
        stat = path.stat()
        sources[module] = {
            "size": stat.st_size,
            "mtime_ns": stat.st_mtime_ns,
            "sha256": compiled.digest(path),
        }
        docs[module] = class_docs(path)
    record = {"python": sys.version.split()[0], "sources": sources, "class_docs": docs}
    compiled.MANIFEST.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")


def class_docs(source: Path) -> dict[str, str]:
    """The docstrings of a module's classes (compiled classes lose theirs; see
    `loopwright._compiled.restore_docstrings`)."""
    tree = ast.parse(source.read_text(encoding="utf-8"))
    classes = [node for node in tree.body if isinstance(node, ast.ClassDef)]
    docs = {node.name: ast.get_docstring(node, clean=False) for node in classes}
    return {name: doc for name, doc in docs.items() if doc}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clean", action="store_true")
    parser.add_argument("--sources", action="store_true")
    parser.add_argument("--check", action="store_true", help="exit 1 when it cannot compile")
    args = parser.parse_args()
    compiled = compiled_module()
    if args.sources:
        print(" ".join(str(compiled.source_of(m).relative_to(ROOT)) for m in compiled.MODULES))
        return 0
    problem = missing_tools()
    if args.check:
        print(problem or "a C compiler and Python's headers are here")
        return 1 if problem else 0
    clean(compiled)
    if args.clean:
        return 0
    if problem is not None:
        print(f"not compiling loopwright's hot path: {problem}; it runs as pure Python")
        return 0
    print(f"compiling {len(compiled.MODULES)} modules with mypyc (about a minute)")
    build(compiled)
    write_manifest(compiled)
    return 0


if __name__ == "__main__":
    sys.exit(main())

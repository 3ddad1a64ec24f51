"""Build llama.cpp's own `llama-server` once, from the llama.cpp source that the
llama-cpp-python release vendors, showing progress; cache it like the wheel.

    python scripts/build_llama_server.py --version 0.3.36 \
        --out ~/.cache/loopwright/bin/portable-avx2

The source is the llama-cpp-python sdist from PyPI (`pip download --no-binary`), so the
server runs the same llama.cpp as the embedded model. CMake + Ninja, only the
`llama-server` target, the portable flags of the wheel (AVX2/FMA/F16C, no -march=native,
no AMX), static libraries, no web UI (that would be an npm build or a download), no curl.
The binary lands at OUT/llama-server-VERSION; the build log beside it. Needs a C++
compiler, cmake and ninja (the Makefile's `llama-server` target installs Debian's if
missing). About 6-8 minutes on 2 idle cores.
"""

from __future__ import annotations

import argparse
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_wheel import PORTABLE_CMAKE_ARGS, Reporter, follow

SERVER_CMAKE_ARGS = (
    "-DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF "
    "-DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_SERVER=ON "
    "-DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF "
    "-DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF"
)


def binary_path(out: Path, version: str) -> Path:
    return out / f"llama-server-{version}"


def fetch_source(version: str, python: str, work: Path) -> Path:
    """The sdist's vendor/llama.cpp, unpacked into `work`."""
    subprocess.run(
        [python, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
         f"llama-cpp-python=={version}", "-d", str(work)],
        check=True,
    )  # fmt: skip
    (archive,) = work.glob(f"llama_cpp_python-{version}.tar.gz")
    prefix = f"llama_cpp_python-{version}/vendor/llama.cpp/"
    with tarfile.open(archive) as sdist:
        members = [m for m in sdist.getmembers() if m.name.startswith(prefix)]
        sdist.extractall(work, members=members, filter="data")
    return work / prefix


def build(source: Path, build_dir: Path, reporter: Reporter, log: Path) -> int:
    configure = [
        "cmake", "-S", str(source), "-B", str(build_dir), "-G", "Ninja",
        *shlex.split(SERVER_CMAKE_ARGS), *shlex.split(PORTABLE_CMAKE_ARGS),
    ]  # fmt: skip
    with log.open("w", encoding="utf-8") as kept:
        done = subprocess.run(configure, stdout=kept, stderr=subprocess.STDOUT)
    if done.returncode != 0:
        return done.returncode
    compile_log = log.with_suffix(".compile.log")
    command = ["cmake", "--build", str(build_dir), "--target", "llama-server", "-j", "2"]
    return follow(command, reporter, compile_log)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--version", default="0.3.36", help="llama-cpp-python version")
    parser.add_argument("--out", type=Path, default=Path("~/.cache/loopwright/bin/portable-avx2"))
    parser.add_argument("--python", default=sys.executable, help="the pip to download with")
    parser.add_argument("--interval", type=float, default=15.0, help="seconds between lines")
    args = parser.parse_args()
    out = args.out.expanduser()
    target = binary_path(out, args.version)
    if target.is_file():
        print(f"llama-server {args.version}: cached at {target}")
        return 0
    missing = [tool for tool in ("cmake", "ninja", "c++") if shutil.which(tool) is None]
    if missing:
        print(f"building llama-server needs {', '.join(missing)} on PATH", file=sys.stderr)
        return 1
    out.mkdir(parents=True, exist_ok=True)
    log = out / f"build-llama-server-{args.version}.log"
    label = f"building llama-server from llama-cpp-python {args.version}'s llama.cpp (once)"
    with tempfile.TemporaryDirectory(prefix="llama-server-build-") as tmp:
        source = fetch_source(args.version, args.python, Path(tmp))
        build_dir = Path(tmp) / "build"
        code = build(source, build_dir, Reporter(label, sys.stdout, args.interval), log)
        if code != 0:
            print(f"the build failed (exit {code}); its logs: {log}*", file=sys.stderr)
            return code
        partial = target.with_suffix(".partial")
        shutil.copy2(build_dir / "bin" / "llama-server", partial)
        partial.replace(target)
    print(f"llama-server {args.version}: built, cached at {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

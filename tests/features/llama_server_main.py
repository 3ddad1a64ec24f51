"""`python tests/features/llama_server_main.py ARGS`: llama-cpp-python's OpenAI-compatible
server with the embedded model's loading rule (no extra buffer types: see
loopwright.models._local.without_weight_repacking)."""

import runpy

from loopwright.models._local import without_weight_repacking

if __name__ == "__main__":
    with without_weight_repacking():
        runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)

# Read by CMake right after llama.cpp's project() (scripts/build_wheel.py passes it as
# CMAKE_PROJECT_llama.cpp_INCLUDE). llama-cpp-python forces LLAMA_BUILD_COMMON on because its
# multimodal library links llama.cpp's `common`; the text-only wheel builds no multimodal
# library, and the Python bindings load only libllama and libggml, so `common` (its chat
# parsers, templates, HTTP client: 57 of the 140 build steps) is left out.
set(LLAMA_BUILD_COMMON OFF CACHE BOOL "Build llama.cpp common library" FORCE)

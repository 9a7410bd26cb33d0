// How CHNSW's C functions report failures (HNSWIndex.cpp, FileGraph.cpp): a C++ exception never crosses the C
// interface; it becomes the function's failed result and a message copied into the caller's buffer. Internal
// to CHNSW: not part of its C interface.
#pragma once
#include <cstddef>
#include <cstdio>
#include <exception>

namespace sluice_chnsw {

/// Copies `what` into `error` (at most `error_size` bytes, always terminated).
inline void fail(char *error, size_t error_size, const char *what)
{
    if (error != nullptr && error_size > 0) std::snprintf(error, error_size, "%s", what);
}

/// Runs `body`, turning a C++ exception into `failed` and a message in `error`.
template <typename Result, typename Body>
Result guarded(char *error, size_t error_size, Result failed, Body body)
{
    try {
        return body();
    } catch (const std::exception &exception) {
        fail(error, error_size, exception.what());
    } catch (...) {
        fail(error, error_size, "unknown error");
    }
    return failed;
}

}  // namespace sluice_chnsw

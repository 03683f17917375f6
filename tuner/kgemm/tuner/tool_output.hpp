#pragma once
// What kgemm's tools write must reach its destination, or the tool says so and exits 1: unchecked,
// a report into a full disk or a closed stdout ends truncated or empty under exit status 0, and a
// measurement cache on a full disk stays empty while the run looks fine.
#include <cstdio>
#include <functional>
#include <string>

namespace kgemm {

// Throws RuntimeError, reason "cannot write <what>: <why>", unless everything written to
// `stream` so far has reached its file.
void flush_checked(std::FILE* stream, const std::string& what);

// Closes `stream` (always), throwing as flush_checked does when its last writes or the close failed.
void close_checked(std::FILE* stream, const std::string& what);

// flush_checked for the tool's standard output: where a long run reports as it goes, a failed
// report stops it early.
void flush_output();

// A tool's main: `body`'s exit status once its output is flushed, or 1 with "<tool>: <why>" on
// stderr when it throws, stdout is closed or the output could not be written. A kgemm::Error's
// <why> is its reason(): the tool's name stands where the library's "kgemm: " would.
int run_tool(const char* tool, const std::function<int()>& body);

}  // namespace kgemm

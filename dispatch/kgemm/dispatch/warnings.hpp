#pragma once
// Where the library's warnings go: a store it cannot read, a tuned entry dispatch passes over, a
// wait for a store's lock. Programs that keep their own log (a notebook, a job's report, the
// Python package's `warnings`) take them through a handler; by default each is one line on
// stderr, "kgemm: warning: <message>", written at once so that lines from threads do not mix.
#include <functional>
#include <string>

namespace kgemm {

// `message`: one line, without the "kgemm: warning: " prefix.
using WarningHandler = std::function<void(const std::string& message)>;

// Makes `handler` receive every warning from now on (an empty one restores stderr) and returns
// the one it replaces. Handlers are called on the thread that warns, one at a time; a handler
// that throws has its exception swallowed (a warning never fails a call) after the message goes
// to stderr.
WarningHandler set_warning_handler(WarningHandler handler);

void warn(const std::string& message);

}  // namespace kgemm

#include "kgemm/dispatch/warnings.hpp"

#include <iostream>
#include <mutex>
#include <utility>

namespace kgemm {

namespace {

struct Handler {
  std::recursive_mutex mutex;  // a handler that warns again does not deadlock
  WarningHandler handler;
};

Handler& current() {
  static Handler h;
  return h;
}

void to_stderr(const std::string& message) { std::cerr << ("kgemm: warning: " + message + "\n") << std::flush; }

}  // namespace

WarningHandler set_warning_handler(WarningHandler handler) {
  Handler& h = current();
  const std::lock_guard<std::recursive_mutex> lock(h.mutex);
  return std::exchange(h.handler, std::move(handler));
}

void warn(const std::string& message) {
  Handler& h = current();
  const std::lock_guard<std::recursive_mutex> lock(h.mutex);
  if (!h.handler) return to_stderr(message);
  try {
    h.handler(message);
  } catch (...) {
    to_stderr(message);
  }
}

}  // namespace kgemm

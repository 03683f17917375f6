#include "kgemm/tuner/tool_output.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <iostream>
#include <unistd.h>

#include "kgemm/spaces/error.hpp"

namespace kgemm {

namespace {

// 0 when everything written to `stream` has reached its file, else the errno of the failure.
// stdio keeps a failed write's error flag but not its errno, and a write larger than the buffer
// fails before any flush: then a newline written past what is lost already asks again (-1 when
// that one goes through).
int flush_error(std::FILE* stream) {
  errno = 0;
  if (std::fflush(stream) == 0 && !std::ferror(stream)) return 0;
  if (errno != 0) return errno;
  const int fd = fileno(stream);
  return fd >= 0 && write(fd, "\n", 1) < 0 ? errno : -1;
}

RuntimeError write_error(const std::string& what, int error) {
  return RuntimeError("cannot write " + what + ": " + (error > 0 ? std::strerror(error) : "a write failed"));
}

// A standard descriptor the caller left closed goes to the next file the tool opens (a store,
// the cache), and what the tool prints would land in that file. stdin and stderr get /dev/null
// (stderr's messages are then lost, the exit status still tells); a closed stdout is refused,
// the report having nowhere to go.
void guard_standard_descriptors() {
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    if (fd == STDOUT_FILENO) throw RuntimeError("cannot write the output: standard output is closed");
    open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);  // the lowest free descriptor: fd
  }
}

}  // namespace

void flush_checked(std::FILE* stream, const std::string& what) {
  if (const int error = flush_error(stream)) throw write_error(what, error);
}

void close_checked(std::FILE* stream, const std::string& what) {
  int error = flush_error(stream);
  if (std::fclose(stream) != 0 && error == 0) error = errno;
  if (error) throw write_error(what, error);
}

void flush_output() {
  std::cout.flush();  // synchronised with stdio: std::cout's text is in stdout's buffer
  flush_checked(stdout, "the output");
}

int run_tool(const char* tool, const std::function<int()>& body) {
  try {
    guard_standard_descriptors();
    const int status = body();
    flush_output();
    return status;
  } catch (const std::exception& e) {
    std::cerr << tool << ": " << reason_of(e) << "\n";  // the tool's name in place of "kgemm: "
    return 1;
  }
}

}  // namespace kgemm

#include "kgemm/tuner/shard.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kgemm/spaces/error.hpp"
#include "kgemm/text_number.hpp"

namespace kgemm {

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const auto bad = [&](const std::string& why) {
    return InvalidArgument("bad shard '" + text + "': " + why +
                           " (expected i/n: shard i of n, numbered from 0, e.g. 0/4 .. 3/4)");
  };
  if (slash == std::string::npos) throw bad("no '/'");
  const auto count = integer_in(std::string_view(text).substr(slash + 1), 1, INT_MAX);
  if (!count) throw bad("the count n must be an integer from 1 to " + std::to_string(INT_MAX));
  const auto index = integer_in(std::string_view(text).substr(0, slash), 0, *count - 1);
  if (!index) throw bad("the index i must be an integer from 0 to n-1 = " + std::to_string(*count - 1));
  return {*index, *count};
}

ProblemClaims::ProblemClaims(std::string directory) : directory_(std::move(directory)) {
  if (directory_.empty()) throw RuntimeError("claims directory: the path is empty");
  if (mkdir(directory_.c_str(), 0777) != 0 && errno != EEXIST)
    throw RuntimeError("claims directory " + directory_ + ": cannot create it: " + std::strerror(errno));
  struct stat info {};
  if (stat(directory_.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    throw RuntimeError("claims directory " + directory_ + ": not a directory");
}

bool ProblemClaims::claim(const std::string& problem) const {
  if (problem.empty() || problem.find('/') != std::string::npos)
    throw InvalidArgument("claim '" + problem + "': not a file name");
  const std::string path = directory_ + "/" + problem;
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    if (errno == EEXIST) return false;
    throw RuntimeError("claim " + path + ": cannot create it: " + std::strerror(errno));
  }
  char host[256] = "unknown host";
  gethostname(host, sizeof host - 1);
  const std::string owner = "pid " + std::to_string(getpid()) + " on " + host + "\n";
  // Created is claimed; the text only tells a person whose the claim is, so a short write is no failure.
  [[maybe_unused]] const ssize_t written = write(fd, owner.data(), owner.size());
  close(fd);
  return true;
}

}  // namespace kgemm

#include "store_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "kgemm/dispatch/config_store.hpp"
#include "kgemm/dispatch/warnings.hpp"

namespace kgemm {

namespace fs = std::filesystem;

namespace {

std::string octal(mode_t mode) {
  char text[16];
  std::snprintf(text, sizeof text, "%04o", unsigned(mode & 07777));
  return text;
}

std::string seconds_text(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", seconds);
  return text;
}

// This process's command line, its arguments separated by spaces (for a lock's holder record).
std::string command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!text.empty() && text.back() == '\0') text.pop_back();
  std::replace(text.begin(), text.end(), '\0', ' ');
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text.size() > 300 ? text.substr(0, 300) + "..." : text;
}

// Opens the lock file, creating it with `mode` (as the store allows, not as this process's
// umask would narrow it: whoever may rewrite the store must be able to open its lock). A lock
// file another user created without write permission for this one still serves: flock works on
// a read-only descriptor; `writable` says which it is.
int open_lock_file(const std::string& lock_path, mode_t mode, bool& writable) {
  writable = true;
  int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd >= 0) {
    if (fchmod(fd, mode) != 0) {
      const int err = errno;
      close(fd);
      errno = err;
      return -1;
    }
    return fd;
  }
  if (errno != EEXIST) return -1;
  fd = open(lock_path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == EACCES) {
    writable = false;
    fd = open(lock_path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  }
  return fd;
}

}  // namespace

bool read_only_store(const std::string& path) {
  struct stat status {};
  if (stat(path.c_str(), &status) != 0) return false;
  // Root may write any file: the mode's write bits are what says the owner made it read-only.
  return (status.st_mode & 0222) == 0 || access(path.c_str(), W_OK) != 0;
}

namespace store_file {

std::string target_of(const std::string& path) {
  if (path.empty()) throw StoreError("''", "an empty name names no store file; name one");
  if (path.back() == '/') throw StoreError(path, "names a directory, not a store file; name a file in it");
  struct stat status {};
  if (lstat(path.c_str(), &status) != 0 || !S_ISLNK(status.st_mode)) return path;
  std::error_code error;
  const fs::path target = fs::canonical(path, error);
  if (!error) return target.string();
  std::error_code unreadable;
  const std::string link = fs::read_symlink(path, unreadable).string();
  if (error == std::errc::no_such_file_or_directory)
    throw StoreError(path, "is a symbolic link to " + link +
                               ", which does not exist; create that file (or remove the link) before writing the store");
  throw StoreError(path, "is a symbolic link to " + link + ", which cannot be followed: " + error.message());
}

void refuse_read_only(const std::string& path, const std::string& target) {
  if (!read_only_store(target)) return;
  struct stat status {};
  stat(target.c_str(), &status);
  throw StoreError(path, (target == path ? "" : "(" + target + ") ") + "is read-only (mode " + octal(status.st_mode) +
                             ", owner uid " + std::to_string(status.st_uid) +
                             ") and is not rewritten: make it writable (chmod u+w) or write another file");
}

void create_parent_directory(const std::string& path, const std::string& target) {
  const fs::path parent = fs::path(target).parent_path();
  std::error_code error;
  if (!parent.empty()) fs::create_directories(parent, error);
  if (error) throw StoreError(path, "cannot create directory " + parent.string() + ": " + error.message());
}

mode_t mode_for(const std::string& target) {
  struct stat status {};
  if (stat(target.c_str(), &status) == 0) return status.st_mode & 0777;
  const mode_t mask = umask(0);
  umask(mask);
  return 0666 & ~mask;
}

TempFile::TempFile(const std::string& path, const std::string& target)
    : path_(path), target_(target), name_(target + ".tmp.XXXXXX") {
  fd_ = mkstemp(name_.data());
  if (fd_ < 0) {
    const int err = errno;
    std::string why = "cannot create a temporary file beside it (" + name_ + "): " + std::strerror(err);
    if (err == ENAMETOOLONG)
      why += " (a store's file name may be at most " + std::to_string(NAME_MAX - 11) +
             " bytes: its temporary files add .tmp.XXXXXX; this one's is " +
             std::to_string(fs::path(target).filename().string().size()) + ")";
    throw StoreError(path, why);
  }
  struct stat old {};
  // The owner (root, or the owner itself) keeps a store its owner and group; a member of its
  // group keeps the group; anyone else's new file is their own.
  if (stat(target.c_str(), &old) == 0 && fchown(fd_, old.st_uid, old.st_gid) != 0) {
    const int ignored = fchown(fd_, static_cast<uid_t>(-1), old.st_gid);
    (void)ignored;
  }
  if (fchmod(fd_, mode_for(target)) != 0) {
    const int err = errno;
    close(fd_);
    std::remove(name_.c_str());
    throw StoreError(path, "cannot set the mode of " + name_ + ": " + std::strerror(err));
  }
}

TempFile::~TempFile() {
  if (fd_ >= 0) close(fd_);
  if (!renamed_) std::remove(name_.c_str());
}

void TempFile::replace(const std::string& text) {
  bool written = true;
  for (std::size_t done = 0; written && done < text.size();) {
    const ssize_t n = write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    written = n > 0;
    if (written) done += std::size_t(n);
  }
  const int err = errno;
  written = written && fsync(fd_) == 0;
  const int closed = close(fd_);
  fd_ = -1;
  if (!written || closed != 0) throw StoreError(path_, "cannot write " + name_ + ": " + std::strerror(err));
  if (std::rename(name_.c_str(), target_.c_str()) != 0)
    throw StoreError(path_, "cannot replace it with " + name_ + ": " + std::strerror(errno));
  renamed_ = true;
}

void remove_stale_temps(const std::string& target) {
  const fs::path file(target);
  const fs::path dir = file.has_parent_path() ? file.parent_path() : fs::path(".");
  const std::string prefix = file.filename().string() + ".tmp.";
  const auto is_mkstemp_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  std::error_code error;
  for (fs::directory_iterator it(dir, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.size() != prefix.size() + 6 || name.compare(0, prefix.size(), prefix) != 0 ||
        !std::all_of(name.begin() + prefix.size(), name.end(), is_mkstemp_char))
      continue;
    struct stat status {};
    // A leftover that cannot be removed harms nothing: the next save picks another name.
    if (lstat(it->path().c_str(), &status) == 0 && S_ISREG(status.st_mode) && status.st_uid == geteuid())
      std::remove(it->path().c_str());
  }
}

StoreLock::StoreLock(const std::string& path, const std::string& target, std::optional<double> timeout)
    : path_(path), lock_path_(target + ".lock") {
  fd_ = open_lock_file(lock_path_, mode_for(target) & 0666, writable_);
  if (fd_ < 0) throw StoreError(path, "cannot open the lock file " + lock_path_ + ": " + std::strerror(errno));
  const auto give_up = [&](const std::string& why) {
    close(fd_);
    throw StoreError(path, why);
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout.value_or(0));
  // Polled rather than a blocking flock: a wait with a limit needs no signals, and the lock is
  // held only while a store is rewritten, so a poll every 0.1 s costs nothing.
  for (bool said = false; flock(fd_, LOCK_EX | LOCK_NB) != 0;) {
    if (errno != EWOULDBLOCK && errno != EINTR) give_up("cannot lock " + lock_path_ + ": " + std::strerror(errno));
    if (timeout && std::chrono::steady_clock::now() >= deadline)
      give_up("its lock " + lock_path_ + " is still held after " + seconds_text(*timeout) + ", by " + holder() +
              "; a store's lock is held only while the store is rewritten, so its holder may be stopped "
              "(kill -CONT resumes it) or hung");
    if (!said && (!timeout || *timeout > 0))
      warn(path + ": waiting for its lock " + lock_path_ + ", held by " + holder() + " (" +
           (timeout ? "giving up after " + seconds_text(*timeout) : std::string("no time limit")) + ")");
    said = true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  record_holder();
}

StoreLock::~StoreLock() {
  // The record names the holder only while it holds the lock.
  if (writable_) {
    const int ignored = ftruncate(fd_, 0);
    (void)ignored;
  }
  close(fd_);
}

std::string StoreLock::holder() const {
  char text[512];
  const ssize_t n = pread(fd_, text, sizeof text - 1, 0);
  std::string record(text, n > 0 ? std::size_t(n) : 0);
  while (!record.empty() && (record.back() == '\n' || record.back() == '\0')) record.pop_back();
  return record.empty() ? "a process that left no record in it (one that may not write the lock file)" : record;
}

void StoreLock::record_holder() {
  if (!writable_) return;
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  const std::string record = "pid " + std::to_string(getpid()) + " on host " + host + ": " + command_line() + "\n";
  // A courtesy to whoever waits: the lock holds without it.
  const bool recorded = ftruncate(fd_, 0) == 0 && pwrite(fd_, record.data(), record.size(), 0) == ssize_t(record.size());
  (void)recorded;
}

}  // namespace store_file
}  // namespace kgemm

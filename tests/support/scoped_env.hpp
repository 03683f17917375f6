#pragma once
// Scoped test fixtures for what dispatch and the tuner read from outside the process: a temporary
// directory, an environment variable, and the store search path reduced to test directories.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "kgemm/dispatch/store_registry.hpp"

namespace kgemm::test {

// A fresh directory under the system's temp dir, removed with its contents.
class TempDir {
 public:
  TempDir()
      : path_(std::filesystem::temp_directory_path() /
              ("kgemm-test-" + std::to_string(getpid()) + "-" + std::to_string(next_id()))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string path() const { return path_.string(); }

 private:
  static int next_id() {
    static int id = 0;
    return id++;
  }
  std::filesystem::path path_;
};

// Sets an environment variable for the scope; dispatch re-reads its stores on entry and exit.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
    reload_config_stores();
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
    reload_config_stores();
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// The search path is `dirs`, KGEMM_CONFIG_FILE unset; the installed stores, still searched, are
// of other architectures than the tests'.
class SearchPath {
 public:
  explicit SearchPath(const std::vector<std::string>& dirs) : path_("KGEMM_CONFIG_PATH", joined(dirs)) {}

 private:
  static std::string joined(const std::vector<std::string>& dirs) {
    std::string text;
    for (const std::string& dir : dirs) text += (text.empty() ? "" : ":") + dir;
    return text;
  }
  TempDir user_;
  ScopedEnv no_file_{"KGEMM_CONFIG_FILE", ""}, user_dir_{"XDG_DATA_HOME", user_.path()};
  ScopedEnv path_;
};

}  // namespace kgemm::test

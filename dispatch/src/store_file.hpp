#pragma once
// The file-system side of rewriting a store (ConfigStore's writers only): which file a rewrite
// replaces (through links), with which permissions, under which lock, and what an interrupted
// rewrite leaves behind. Every error is a StoreError naming the store as the caller named it.
#include <sys/types.h>

#include <optional>
#include <string>

namespace kgemm::store_file {

// The file a rewrite of `path` replaces: `path` itself, or, when `path` is a symbolic link, the
// file its chain of links ends at, so the link stays and its target gets the new text. Refuses
// an empty name, a name ending in '/', and a link to nothing (creating a file wherever a stray
// link points is not a rewrite of a store).
std::string target_of(const std::string& path);

// Refuses (StoreError) an existing `target` that read_only_store calls read-only.
void refuse_read_only(const std::string& path, const std::string& target);

// Creates `target`'s directory and those above it that are missing.
void create_parent_directory(const std::string& path, const std::string& target);

// The permission bits a new version of `target`, and its lock, are given: the existing file's,
// so a rewrite keeps a private or group-shared store as it was; 0666 & ~umask for a new one.
mode_t mode_for(const std::string& target);

// A new file `<target>.tmp.XXXXXX` (mkstemp: a name no one can predict or plant) beside the
// target, with the target's mode and, where permitted, its owner and group. Removed unless
// replace() renames it over the target.
class TempFile {
 public:
  TempFile(const std::string& path, const std::string& target);
  ~TempFile();
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;

  // Writes `text`, flushes it to the disk and renames the file over the target.
  void replace(const std::string& text);

 private:
  std::string path_, target_, name_;
  int fd_ = -1;
  bool renamed_ = false;
};

// Removes what interrupted saves left beside `target`: regular files of this user named
// `<target's name>.tmp.` and six mkstemp characters. Only under the store's lock, which every
// saver that may run beside another holds, so none of them is a save under way.
void remove_stale_temps(const std::string& target);

// An exclusive lock on `<target>.lock` for the life of the object: writers of one store take
// turns at read-merge-write, whichever name (link) they know it by. The lock file is never the
// store, so renaming a new store over the old one does not drop the lock. While held, the lock
// file names its holder (pid, host, since when, command) for anyone who has to wait.
class StoreLock {
 public:
  // Waits for the lock, saying once on stderr who holds it; after `timeout` seconds (none: no
  // limit; 0: no wait) throws StoreError naming the holder.
  StoreLock(const std::string& path, const std::string& target, std::optional<double> timeout);
  ~StoreLock();
  StoreLock(const StoreLock&) = delete;
  StoreLock& operator=(const StoreLock&) = delete;

 private:
  // Who holds the lock, as its holder recorded it in the lock file.
  std::string holder() const;
  void record_holder();

  std::string path_, lock_path_;
  int fd_ = -1;
  bool writable_ = false;
};

}  // namespace kgemm::store_file

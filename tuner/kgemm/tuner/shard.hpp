#pragma once
// Splitting one tuning run's problem list among independent runs (the tasks of a Slurm job
// array, one process per GPU of a node), each writing its own store for a later merge
// (store_merge.hpp). Shards are numbered from 0, as Slurm numbers the tasks of `--array=0-N`.
// Shards split the list before the runs start; claims split it as they go.
#include <string>
#include <vector>

namespace kgemm {

struct Shard {
  int index = 0;  // 0 .. count-1
  int count = 1;
};

// "i/n" with n >= 1 and 0 <= i < n, e.g. "0/4" .. "3/4"; throws InvalidArgument naming
// the text and the rule it breaks otherwise.
Shard parse_shard(const std::string& text);

// The items shard `shard` takes: those at positions index, index + count, index + 2 count, ...
// (round robin: a model's problem list runs from large to small layers, so every shard gets a
// share of each). The shards of one count partition the list, each keeping its order.
template <class T>
std::vector<T> shard_of(const std::vector<T>& items, const Shard& shard) {
  std::vector<T> taken;
  for (std::size_t i = std::size_t(shard.index); i < items.size(); i += std::size_t(shard.count)) taken.push_back(items[i]);
  return taken;
}

// Runs that share a directory (the processes of one node, tasks on a shared file system) each
// take the next problem no run has claimed yet, so a run whose problems tune quickly takes more
// of them and all end at about the same time, which fixed shards of unequal problems do not.
// A claim is a file created exclusively in the directory (O_EXCL: one winner, also over NFS v3+)
// holding its run's pid and host. Claims outlive their runs: a problem whose run died stays
// claimed until the directory is cleared, and --resume then finds it missing from the stores.
class ProblemClaims {
 public:
  // Creates `directory` when missing (not its parents); throws naming it when it is empty, not
  // a directory or cannot be created.
  explicit ProblemClaims(std::string directory);
  // True when this run now owns `problem` (a file name: no '/'), false when a run claimed it
  // first; throws naming the file on any other failure (permissions, a full disk).
  bool claim(const std::string& problem) const;

 private:
  std::string directory_;
};

}  // namespace kgemm

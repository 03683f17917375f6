#pragma once
// Splitting one tuning run's problem list among independent runs (the tasks of a Slurm job
// array, one process per GPU of a node), each writing its own store for a later merge
// (store_merge.hpp). Shards are numbered from 0, as Slurm numbers the tasks of `--array=0-N`.
#include <string>
#include <vector>

namespace kgemm {

struct Shard {
  int index = 0;  // 0 .. count-1
  int count = 1;
};

// "i/n" with n >= 1 and 0 <= i < n, e.g. "0/4" .. "3/4"; throws std::invalid_argument naming
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

}  // namespace kgemm

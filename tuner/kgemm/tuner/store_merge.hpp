#pragma once
// Merging stores tuned apart on one device (the shards of a job array, one process per GPU of
// a node) into one: the union of their entries, the faster measurement kept where two hold
// the same problem.
#include <optional>
#include <string>
#include <vector>

#include "kgemm/dispatch/config_store.hpp"

namespace kgemm {

struct MergeOutcome {
  ConfigStore store;                 // as written to the output
  std::vector<std::string> clashes;  // per problem held twice with different results: which won, and why
  int added = 0;                     // entries the output did not hold before
};

// Merges `inputs` into `out` (its own entries, when it exists, take part like an input's).
// Every input is loaded strictly first (ConfigStore::load: an entry that is malformed or bad
// refuses the merge, as a dropped entry would be lost tuning), and all must be of one device
// (same_device; the output too). Then, under the output's lock (ConfigStore::update), each
// input's entries are added in the order given; for a problem already held, the entry of the
// newer kernel generation wins, else the one with more GFLOP/s (the one held on a tie). The output's header names the Kokkos and kgemm
// versions of the stores where they all agree, the merging program's otherwise. Throws
// StoreError naming the file and what is wrong, InvalidArgument without inputs; the
// output is untouched unless all succeeds. The output's lock is waited for as update() waits,
// `lock_timeout` seconds at most (none: no limit).
MergeOutcome merge_stores(const std::vector<std::string>& inputs, const std::string& out,
                          std::optional<double> lock_timeout = std::nullopt);

}  // namespace kgemm

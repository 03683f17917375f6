#pragma once
// The kernels' generation: which kernels a stored measurement was made with. Every store entry
// records the generation it was measured at (TunedEntry::generation); an entry measured before
// its config's kernels last changed says how fast a config ran on kernels that have since
// changed, so it is re-checked rather than trusted: `autotune --verify-store` re-times it against
// the space default on its device and drops it if it lost, `autotune --resume` tunes it again,
// and `kgemm-run` counts such entries. Dispatch still runs them, each only where it is legal, as
// every entry.
//
// Kernel families change apart on host devices and GPUs, and a store is of one device: each
// (family, kind of device) records the generation at which it last changed
// (kernels_changed_at), so that a change leaves the other kernels' entries current, among them
// those of devices not at hand. One sequence of numbers: a change takes the next one, and new
// entries record the latest (kKernelGeneration).
//
// Bump it in the commit that changes how fast configs of a family run relative to each other or
// to the space default (a new code path, slab staging, micro-kernel, pipeline or block order; a
// default config that changes: every family of that kind), or what a config string means. Not
// for changes that keep every config's speed: refactors, messages, the tuner, dispatch, the store
// file. The same commit re-tunes the committed stores' entries it makes older (configs/) on their
// devices, or re-checks them there with `autotune --verify-store`; until then the test
// CommittedStores.AreOfTheCodesKernelGeneration fails.
#include "kgemm/config.hpp"

namespace kgemm {

inline constexpr int kKernelGeneration = 4;

// The generation at which the kernels of `family` last changed on host devices (`host`) or GPUs.
constexpr int kernels_changed_at(Family family, bool host) {
  if (host) return 1;
  switch (family) {
    // 4: fp16 rows not aligned to 16 bytes staged as realigned 16-byte runs.
    case Family::TensorCore: return 4;
    // 3: the register hand-over, the epilogue off the stack and rings of up to six buffers
    // (2: the persistent grid, bulk stores and staged results).
    case Family::WarpSpecialized: return 3;
    default: return 1;
  }
}
// Whether an entry of `generation` running `family` on such a device was measured on kernels that
// have changed since.
constexpr bool older_kernels(int generation, Family family, bool host) {
  return generation < kernels_changed_at(family, host);
}

}  // namespace kgemm

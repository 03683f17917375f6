#pragma once
// The kernels' generation: which kernels a stored measurement was made with. Every store entry
// records the generation it was measured at (TunedEntry::generation); an entry of an older
// generation than the code's says how fast a config ran on kernels that have since changed, so it
// is re-checked rather than trusted: `autotune --verify-store` re-times it against the space
// default on its device and drops it if it lost, `autotune --resume` tunes it again, and
// `kgemm-run` names the store's oldest generation. Dispatch still runs such entries, each only
// where it is legal, as every entry.
//
// Bump it in the commit that changes how fast configs run relative to each other or to the
// space default (a new code path, slab staging, micro-kernel, pipeline or block order; a default
// config that changes), or what a config string means. Not for changes that keep every config's
// speed: refactors, messages, the tuner, dispatch, the store file. The same commit re-tunes the
// committed stores (configs/) on their devices, or re-checks them there with `autotune
// --verify-store`; until then the test CommittedStores.AreOfTheCodesKernelGeneration fails.
namespace kgemm {

inline constexpr int kKernelGeneration = 1;

}  // namespace kgemm

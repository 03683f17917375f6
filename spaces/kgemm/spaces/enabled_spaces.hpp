#pragma once
// The execution spaces this build of Kokkos enables, by type and by the names users type.
#include <Kokkos_Core.hpp>
#include <cstdlib>
#include <string>

#include "kgemm/spaces/error.hpp"
#include "kgemm/spaces/lowercase.hpp"

namespace kgemm {

// Kokkos' OpenMP backend runs best with threads pinned and otherwise prints advice on stdout:
// the tools pin them (spread over the cores) unless the user chose a binding. Call before
// Kokkos is initialised.
inline void pin_openmp_threads_unless_set() {
  setenv("OMP_PROC_BIND", "spread", /*overwrite=*/0);
  setenv("OMP_PLACES", "threads", /*overwrite=*/0);
}

// A space as a type, for what must not make an instance: Kokkos 4 refuses one before it starts.
template <class Space>
struct SpaceTag {
  using type = Space;
};

// Calls f(SpaceTag<Space>()) for each space this build of Kokkos enables.
template <class F>
void for_each_enabled_space_type(F&& f) {
#if defined(KOKKOS_ENABLE_SERIAL)
  f(SpaceTag<Kokkos::Serial>());
#endif
#if defined(KOKKOS_ENABLE_OPENMP)
  f(SpaceTag<Kokkos::OpenMP>());
#endif
#if defined(KOKKOS_ENABLE_CUDA)
  f(SpaceTag<Kokkos::Cuda>());
#endif
}

// Calls f with a default instance of each enabled space; Kokkos must be running.
template <class F>
void for_each_enabled_space(F&& f) {
  for_each_enabled_space_type([&](auto tag) { f(typename decltype(tag)::type()); });
}

// "serial", "openmp", "cuda" (any case) -> the space, passed to f. Throws naming the spaces
// this build has when the name is unknown or its backend was not compiled into Kokkos.
template <class F>
void with_space(const std::string& name, F&& f) {
  const std::string lower = lowercase(name);
  std::string enabled;
  bool found = false;
  for_each_enabled_space([&](auto space) {
    const std::string space_name = lowercase(decltype(space)::name());
    enabled += (enabled.empty() ? "" : ", ") + space_name;
    if (space_name == lower) {
      found = true;
      f(space);
    }
  });
  if (found) return;
  const bool known = lower == "serial" || lower == "openmp" || lower == "cuda";
  throw InvalidArgument(known ? "space '" + name + "' is not enabled in this build's Kokkos (enabled: " + enabled +
                                    "); rebuild against a Kokkos with that backend (see the README's presets)"
                              : "unknown space '" + name +
                                    "' (expected serial, openmp or cuda; this build has: " + enabled + ")");
}

}  // namespace kgemm

#pragma once
// Kokkos started for a tool's run from the tool's command line and environment, once Kokkos' own
// settings in them are checked: on a thread count of 0 or "abc" Kokkos aborts (SIGABRT) or
// answers "stoi", where a tool must exit 1 naming the setting and the values it takes.
#include <Kokkos_Core.hpp>
#include <optional>

#include "kgemm/spaces/compat.hpp"

namespace kgemm {

// Throws InvalidArgument naming the flag or environment variable, its value and the values
// Kokkos takes when a setting Kokkos::initialize would read from `argv` or the environment is not
// one of them.
void check_kokkos_settings(int argc, char** argv);

// Kokkos from check_kokkos_settings'd flags and environment, with OpenMP's threads pinned unless
// the user chose a binding; finalized when the session ends.
class KokkosSession {
 public:
  KokkosSession(int argc, char** argv);

 private:
  KokkosArguments arguments_;
  std::optional<Kokkos::ScopeGuard> guard_;
};

}  // namespace kgemm

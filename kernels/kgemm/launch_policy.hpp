#pragma once
// The policies kgemm's kernels launch with. Kokkos' CUDA backend passes a functor whose launch
// closure reaches 512 bytes through one constant-memory buffer per device, and such a launch
// first waits on the host for the previous one's kernel to finish: back-to-back calls
// serialize, and the GPU idles through each launch (docs/gpu-notes.md, s12).
// kgemm's closures are 368-488 bytes (operands, block plan, run plans), one field away from
// that; the light-weight hint keeps them kernel arguments (up to 4 KB) whatever their size.
// Kokkos 3.4 and 4.x spell it alike; host spaces ignore it.
#include <Kokkos_Core.hpp>

namespace kgemm {

template <class ExecSpace>
using KernelTeamPolicy = Kokkos::TeamPolicy<ExecSpace, Kokkos::Experimental::WorkItemProperty::HintLightWeight_t>;

// The same with launch bounds (teams of at most MaxThreads, MinTeams of them resident per
// multiprocessor), for kernels that hold just over a register budget that halves their teams
// per multiprocessor.
template <class ExecSpace, int MaxThreads, int MinTeams>
using BoundedTeamPolicy = Kokkos::TeamPolicy<ExecSpace, Kokkos::Experimental::WorkItemProperty::HintLightWeight_t,
                                             Kokkos::LaunchBounds<MaxThreads, MinTeams>>;

template <class ExecSpace>
using KernelRangePolicy = Kokkos::RangePolicy<ExecSpace, Kokkos::Experimental::WorkItemProperty::HintLightWeight_t>;

}  // namespace kgemm

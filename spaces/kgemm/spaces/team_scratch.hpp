#pragma once
// How much team scratch a kgemm kernel may have, and, on CUDA with the Kokkos releases that
// cap it, the lift past that cap for kgemm's own kernels.
//
// Kokkos 4.6.01 checks a TeamPolicy launch's shared memory against
// CudaInternal::m_deviceProp.sharedMemPerBlock (48 KB) in scratch_size_max, team_size_max, the
// ParallelFor constructor and before the launch, and never sets the kernel's
// cudaFuncAttributeMaxDynamicSharedMemorySize, so a team cannot have more, although a Hopper
// block may have 227 KB (upstream fixed it in kokkos#9012, in no release yet). For the Kokkos
// versions this lift was built and tested with (kTeamScratchLiftTested), kgemm lifts it as #9012
// does, for its own launches only: while one of its kernels is checked or launched, the limit
// Kokkos reads is what the device grants a block with the opt-in less a reserve for static
// shared memory (Kokkos' team ID, kgemm's own), and the opt-in attribute is set on the kernel
// function Kokkos launches for that functor. Other kernels of the process see Kokkos' own
// limit, except one checked by another thread during those moments.
//
// The CMake option KGEMM_LIFT_TEAM_SCRATCH (ON by default) compiles the lift; the environment
// variable KGEMM_TEAM_SCRATCH_LIFT=off turns it off at run time (to compare, or should a
// driver misbehave). On any other Kokkos version, and on one that has the opt-in, the cap stays
// as Kokkos has it, and team_scratch_limit() says why.
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>

#include "kgemm/spaces/compat.hpp"
#include "kgemm/spaces/error.hpp"

// The Kokkos versions whose CUDA internals the lift was built and tested against.
#define KGEMM_TEAM_SCRATCH_LIFT_TESTED_KOKKOS (KOKKOS_VERSION == 40601)
#define KGEMM_TEAM_SCRATCH_LIFT_TESTED_NAMES "4.6.01"

#if defined(KOKKOS_ENABLE_CUDA) && KGEMM_TEAM_SCRATCH_LIFT_TESTED_KOKKOS
// Which kernel function Kokkos launches for a functor is known for these versions.
#define KGEMM_KOKKOS_KERNEL_FUNCTION_KNOWN 1
#if defined(KGEMM_LIFT_TEAM_SCRATCH)
#define KGEMM_TEAM_SCRATCH_LIFTABLE 1
#endif
#endif

namespace kgemm {

// Static shared memory left beside a lifted team's dynamic share: Kokkos' 8-byte team ID and
// any kernel's own static arrays (a kernel with more keeps Kokkos' cap).
constexpr int kStaticSharedReserve = 1024;

// The team scratch limit in force on a space, per block, and why (tools print it).
struct TeamScratchLimit {
  std::size_t block_bytes = 0;  // shared memory a block may have (0: the space caps none)
  std::size_t kokkos_block_bytes = 0;  // what Kokkos itself lets a block have
  bool lifted = false;
  std::string why;
};

namespace detail {

// KGEMM_TEAM_SCRATCH_LIFT: unset or "on" lifts, "off" does not; anything else is refused.
inline bool lift_wanted() {
  const char* value = std::getenv("KGEMM_TEAM_SCRATCH_LIFT");
  if (!value || std::string(value) == "on") return true;
  if (std::string(value) == "off") return false;
  throw InvalidArgument(std::string("KGEMM_TEAM_SCRATCH_LIFT='") + value + "' is not 'on' or 'off'");
}

template <class ExecSpace>
TeamScratchLimit find_team_scratch_limit() {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    const std::size_t capped = Kokkos::Cuda().cuda_device_prop().sharedMemPerBlock;
    const std::string cap = std::to_string(capped) + " bytes, Kokkos " + kokkos_version_string() + "'s cap";
#if !defined(KGEMM_LIFT_TEAM_SCRATCH)
    return {capped, capped, false, cap + " (this build has KGEMM_LIFT_TEAM_SCRATCH=OFF)"};
#elif !KGEMM_TEAM_SCRATCH_LIFT_TESTED_KOKKOS
    return {capped, capped, false, cap + " (kgemm lifts it only on Kokkos " KGEMM_TEAM_SCRATCH_LIFT_TESTED_NAMES
                                 ", the versions it was tested with)"};
#else
    if (!lift_wanted()) return {capped, capped, false, cap + " (KGEMM_TEAM_SCRATCH_LIFT=off)"};
    int optin = 0;
    if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, Kokkos::Cuda().cuda_device()) !=
            cudaSuccess ||
        std::size_t(optin) <= capped + kStaticSharedReserve)
      return {capped, capped, false, cap + " (this GPU grants no more with the opt-in)"};
    const std::size_t lifted = std::size_t(optin) - kStaticSharedReserve;
    return {lifted, capped, true,
            std::to_string(lifted) + " bytes, lifted past " + cap + " for kgemm's kernels: the GPU's opt-in " +
                std::to_string(optin) + " less " + std::to_string(kStaticSharedReserve) + " for static shared memory"};
#endif
  }
#endif
  return {0, 0, false, std::string(ExecSpace::name()) + " caps no team scratch by block"};
}

#if defined(KGEMM_KOKKOS_KERNEL_FUNCTION_KNOWN)
// The kernel function Kokkos 4.6 launches Functor with under Policy: ParallelFor's driver through
// CudaParallelLaunch, by the launch mechanism it deduces.
template <class Functor, class Policy>
auto kokkos_kernel_function() {
  using Driver = Kokkos::Impl::ParallelFor<Functor, Policy, Kokkos::Cuda>;
  using Launch = Kokkos::Impl::CudaParallelLaunchKernelFunc<
      Driver, typename Policy::launch_bounds, Kokkos::Impl::DeduceCudaLaunchMechanism<Driver>::launch_mechanism>;
  return Launch::get_kernel_func();
}

// CUDA's occupancy of that kernel function: teams of `team_size` threads with `block_bytes` of
// shared memory each that a multiprocessor holds at once (0 where CUDA does not say). Asked once
// per team size and shared memory: the query costs a call's worth of host time.
template <class Functor, class Policy>
int resident_teams(int team_size, std::size_t block_bytes) {
  static std::mutex mutex;
  static std::map<std::pair<int, std::size_t>, int> known;
  std::lock_guard<std::mutex> lock(mutex);
  const auto found = known.find({team_size, block_bytes});
  if (found != known.end()) return found->second;
  int resident = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kokkos_kernel_function<Functor, Policy>(), team_size,
                                                    block_bytes) != cudaSuccess)
    resident = 0;
  return known[{team_size, block_bytes}] = resident;
}
#endif

}  // namespace detail

// Worked out once per process (KGEMM_TEAM_SCRATCH_LIFT is read then).
template <class ExecSpace>
const TeamScratchLimit& team_scratch_limit() {
  static const TeamScratchLimit limit = detail::find_team_scratch_limit<ExecSpace>();
  return limit;
}

// The shared memory of a CUDA block whose team of `team_size` threads has `scratch` bytes of
// level-0 team scratch, as a launch checks it (ParallelFor over a TeamPolicy, 3.4 and 4.x
// alike): the scratch, (team_size + 2) doubles for team reductions and an 8-byte team ID.
inline std::size_t team_block_bytes(std::size_t scratch, int team_size) {
  return scratch + sizeof(double) * std::size_t(team_size + 2) + sizeof(std::int64_t);
}

// Largest team scratch the space grants a team of `team_size` threads at `level`: the one limit
// legality (why_illegal), the tuner and dispatch read. On CUDA, scratch_size_max(0) keeps room
// for the team reductions of 1024-thread teams (40 KB of 48); a launch needs room for its own
// team size only (team_block_bytes).
template <class ExecSpace>
int max_team_scratch_bytes(int level, int team_size) {
  const int granted = static_cast<int>(Kokkos::TeamPolicy<ExecSpace>::scratch_size_max(level));
  const TeamScratchLimit& limit = team_scratch_limit<ExecSpace>();
  if (level != 0 || limit.block_bytes == 0) return granted;
  const int launchable = int(limit.block_bytes) - int(team_block_bytes(0, team_size));
  return launchable > granted ? launchable : granted;
}

// How many teams of `team_size` threads with `block_bytes` of shared memory each
// (team_block_bytes) the device runs at once of kgemm's kernel of Functor under Policy: what a
// persistent grid launches. Where the kernel function Kokkos launches is known, CUDA's occupancy
// of it (its registers, the launch bounds, shared memory); elsewhere what the multiprocessors'
// shared memory holds, at most `bound` to a multiprocessor (the launch bounds' minimum, which the
// registers were fitted to). 0 on spaces without multiprocessors. Call it where the kernel may
// have `block_bytes` (inside a TeamScratchLift past Kokkos' cap).
template <class ExecSpace, class Functor, class Policy>
int teams_at_once(int team_size, std::size_t block_bytes, int bound) {
#if defined(KOKKOS_ENABLE_CUDA)
  if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    struct Multiprocessors {
      int count;
      std::size_t shared_bytes, reserved_bytes;  // a multiprocessor's shared memory; what CUDA keeps of it per block
    };
    static const Multiprocessors sms = [] {
      const cudaDeviceProp& prop = Kokkos::Cuda().cuda_device_prop();
      return Multiprocessors{prop.multiProcessorCount, prop.sharedMemPerMultiprocessor,
                             std::size_t(prop.reservedSharedMemPerBlock)};
    }();
    int per_multiprocessor = int(sms.shared_bytes / (block_bytes + sms.reserved_bytes));
    if (per_multiprocessor > bound) per_multiprocessor = bound;
#if defined(KGEMM_KOKKOS_KERNEL_FUNCTION_KNOWN)
    if (const int resident = detail::resident_teams<Functor, Policy>(team_size, block_bytes); resident > 0)
      per_multiprocessor = resident;
#else
    (void)team_size;
#endif
    return sms.count * (per_multiprocessor > 0 ? per_multiprocessor : 1);
  }
#endif
  (void)team_size, (void)block_bytes, (void)bound;
  return 0;
}

// For the life of the object, Kokkos checks kgemm's launch of Functor under Policy against the
// lifted limit, and that kernel may have it (the opt-in attribute, set once per kernel). Does
// nothing where the lift is not in force or `block_bytes` fits Kokkos' own cap (compared with the
// cap as found, since another thread's lift may have raised the live limit). One at a time: the
// limit Kokkos reads is process-wide.
template <class ExecSpace, class Functor, class Policy>
class TeamScratchLift {
 public:
  explicit TeamScratchLift(std::size_t block_bytes) {
#if defined(KGEMM_TEAM_SCRATCH_LIFTABLE)
    if constexpr (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
      const TeamScratchLimit& limit = team_scratch_limit<ExecSpace>();
      if (!limit.lifted || block_bytes <= limit.kokkos_block_bytes || !allow_on_kernel(limit.block_bytes)) return;
      lock_ = std::unique_lock<std::mutex>(mutex());
      Kokkos::Impl::CudaInternal::m_deviceProp.sharedMemPerBlock = limit.block_bytes;
    }
#else
    (void)block_bytes;
#endif
  }
  ~TeamScratchLift() {
#if defined(KGEMM_TEAM_SCRATCH_LIFTABLE)
    if (lock_.owns_lock())
      Kokkos::Impl::CudaInternal::m_deviceProp.sharedMemPerBlock = team_scratch_limit<ExecSpace>().kokkos_block_bytes;
#endif
  }
  TeamScratchLift(const TeamScratchLift&) = delete;
  TeamScratchLift& operator=(const TeamScratchLift&) = delete;

#if defined(KGEMM_TEAM_SCRATCH_LIFTABLE)
 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  // The opt-in on the kernel function Kokkos launches this functor with; false when the kernel's
  // own static shared memory is more than the reserve.
  static bool allow_on_kernel(std::size_t block_bytes) {
    static const bool allowed = [block_bytes] {
      const auto kernel = detail::kokkos_kernel_function<Functor, Policy>();
      cudaFuncAttributes attributes{};
      return cudaFuncGetAttributes(&attributes, kernel) == cudaSuccess &&
             attributes.sharedSizeBytes <= std::size_t(kStaticSharedReserve) &&
             cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(block_bytes)) == cudaSuccess;
    }();
    return allowed;
  }
  std::unique_lock<std::mutex> lock_;
#endif
};

}  // namespace kgemm

#pragma once
// Body of launch_gemm / why_illegal; included only by the per-space instantiation files.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "kgemm/launch.hpp"
#include "kgemm/launch_policy.hpp"
#include "kgemm/spaces/error.hpp"
#include "kgemm/spaces/team_scratch.hpp"
#include "kgemm/split_sum.hpp"
#include "kgemm/tensor_core_gemm.hpp"
#include "kgemm/tiled_gemm.hpp"
#include "kgemm/variants.hpp"
#include "kgemm/warpgroup_gemm.hpp"
#include "kgemm/warp_specialized_gemm.hpp"
#include "kgemm/warpgroup_tf32x3_gemm.hpp"

namespace kgemm {
namespace detail {
namespace {
// Whether this translation unit's device code, as the device loaded it, multiplies with
// Hopper's warpgroup MMA (compiled for sm_90a and running on a GPU of compute capability 9.0;
// the driver picks one of the build's device codes per GPU): asked of a one-thread kernel, once.
// Defined per translation unit (internal linkage), so the answer is about the kernels launched
// beside it, never another unit's build.
template <class ExecSpace>
struct WarpgroupProbe {
  Kokkos::View<int, typename ExecSpace::memory_space> has;
  KOKKOS_INLINE_FUNCTION void operator()(int) const {
#if defined(KGEMM_WGMMA)
    has() = 1;
#endif
  }
};
template <class ExecSpace>
bool warpgroups_in_device_code() {
  if constexpr (!TensorCores<ExecSpace>::available) {
    return false;
  } else {
    static const bool has = [] {
      WarpgroupProbe<ExecSpace> probe{Kokkos::View<int, typename ExecSpace::memory_space>("kgemm::warpgroup_probe")};
      Kokkos::parallel_for("kgemm::warpgroup_probe", Kokkos::RangePolicy<ExecSpace>(0, 1), probe);
      int on_device = 0;
      Kokkos::deep_copy(on_device, probe.has);
      return on_device == 1;
    }();
    return has;
  }
}
}  // namespace

// The checks below return why a call cannot run, empty when it can; they run on every call, so
// the reasons are built only when a check fails.
inline std::string config_reason(const Config& c, const std::string& why) { return "config " + to_string(c) + why; }

template <class Scalar>
std::string why_bad_operands(const GemmArgs<Scalar>& args) {
  const auto& A = args.A;
  const auto& B = args.B;
  const auto& C = args.C;
  if (A.rows != C.rows || B.cols != C.cols || A.cols != B.rows)
    return "shape mismatch: op(A) is " + dims(A.rows, A.cols) + ", op(B) is " + dims(B.rows, B.cols) +
           ", C is " + dims(C.rows, C.cols) + "; need op(A) MxK, op(B) KxN, C MxN";
  if (A.rows < 0 || B.cols < 0 || A.cols < 0) return "negative extents: op(A) is " + dims(A.rows, A.cols) + ", op(B) is " + dims(B.rows, B.cols);
  if (args.batch < 1) return "batch count " + std::to_string(args.batch) + " must be at least 1";
  if (C.batch_stride == 0 && args.batch > 1)
    return "C has batch stride 0 with batch " + std::to_string(args.batch) +
           ": every product would write the same C; only A and B may be shared";
  return "";
}

// The kernels count blocks, teams and split K's partial elements in int: a call whose counts
// would not fit is refused instead of wrapping (64-bit arithmetic here; fields are bounded by
// why_malformed).
template <class Scalar>
std::string why_too_large(const GemmArgs<Scalar>& args, const Config& c) {
  const std::int64_t blocks = std::int64_t(ceil_div(args.M(), c.mb)) * ceil_div(args.N(), c.nb) * args.batch;
  const std::int64_t teams = (blocks + c.bb - 1) / c.bb * std::min(c.ks, std::max(1, ceil_div(args.K(), c.kb)));
  const std::int64_t partial_elements = c.ks > 1 ? blocks * c.mb * c.nb : 0;
  if (blocks > INT_MAX || teams > INT_MAX || partial_elements > INT_MAX)
    return config_reason(c, " makes " + std::to_string(teams) + " teams" +
                                (c.ks > 1 ? " and " + std::to_string(partial_elements) + " partial elements" : "") +
                                " for this call, more than the kernels count (" + std::to_string(INT_MAX) +
                                "); use larger blocks or fewer splits");
  return "";
}

template <class ExecSpace>
std::string why_bad_stages(const Config& c) {
  using Traits = SpaceTraits<ExecSpace>;
  const int most = max_slab_buffers<ExecSpace>(c.warp_specialized());  // its producer copies the slabs
  if (c.slab_buffers == 0 || (c.slab_buffers >= Traits::default_slab_buffers && c.slab_buffers <= most)) return "";
  const std::string space = ExecSpace::name();
  if (most == Traits::default_slab_buffers)
    return config_reason(c, ": " + space + " stages one slab at a time (" + std::to_string(Traits::default_slab_buffers) +
                                " buffer); drop _st");
  return config_reason(c, ": " + space + " stages " + std::to_string(Traits::default_slab_buffers) + " to " +
                              std::to_string(most) + " slab buffers for this kernel; make st one of them, or drop it");
}

// Warpgroup tiles belong to one dtype (variants.hpp): the reason a config's tile is not one of
// Scalar's, naming those that are.
template <class Scalar>
std::string why_not_warpgroup_tile_of(const Config& c) {
  constexpr DType dtype = dtype_of<Scalar>();
  if (is_warpgroup_tile_of<dtype>(c.tm, c.tn)) return "";
  std::string tiles;
  for (auto [tm, tn] : warpgroup_tiles(dtype)) tiles += " " + dims(tm, tn);
  return config_reason(c, ": warpgroup tile " + dims(c.tm, c.tn) + " multiplies " +
                              (dtype == DType::F16 ? "fp32" : "fp16") + " data; " + (dtype == DType::F16 ? "fp16" : "fp32") +
                              " data takes the warpgroup tiles" + tiles);
}

// Tensor-core configs (their tile, slab depth and team are why_malformed's): a space and a
// device that have them for the data, accumulating in fp32. fp16 data multiplies as it is; fp32
// data as three TF32 products (fp32-level accuracy, not TF32's).
template <class ExecSpace, class Scalar>
std::string why_no_tensor_cores(const Config& c, Accum accum) {
  using Cores = TensorCores<ExecSpace>;
  const char* suffix = family_suffix(c);
  if (!Cores::available)
    return config_reason(c, std::string(" uses tensor cores, which ") + ExecSpace::name() + " does not have; drop " + suffix);
  if (accum != Accum::F32)
    return config_reason(c, std::string(": tensor-core configs accumulate in fp32; drop ") + suffix + " for fp16 accumulation");
  // Warp-specialized tiles are fp16's (why_malformed), 64 x 256 among them; fp32 data refuses
  // them naming its own warpgroup tiles.
  if (c.warpgroups() && !(c.warp_specialized() && dtype_of<Scalar>() == DType::F16)) {
    const std::string why_not = why_not_warpgroup_tile_of<Scalar>(c);
    if (!why_not.empty()) return why_not;
  }
  if (c.warpgroups() && !warpgroups_in_device_code<ExecSpace>())
    return config_reason(c, " uses Hopper's warpgroup MMA, which needs a GPU of compute capability 9.0 and kgemm built "
                            "with sm_90a device code (KGEMM_CUDA_SM90A=ON); this build or GPU has none: use _tc");
  if (dtype_of<Scalar>() == DType::F16 && !Cores::on_device())
    return config_reason(c, " uses tensor cores, which kgemm runs on GPUs of compute capability 7.5 or newer "
                            "(this one is older); drop _tc");
  if (dtype_of<Scalar>() == DType::F32 && !Cores::tf32_on_device())
    return config_reason(c, " multiplies fp32 data on TF32 tensor cores (3xTF32), which GPUs of compute capability "
                            "8.0 or newer have (this one is older); drop _tc");
  return "";
}

// The policy the functor launches with, or the reason it cannot (scratch or team size over
// what the space allows).
template <class ExecSpace, class Functor>
std::optional<typename Functor::LaunchPolicy> make_policy(const ExecSpace& space, const Functor& functor, const Config& c,
                                                       std::string& why) {
  const std::size_t scratch = functor.scratch_bytes();
  constexpr int level = SpaceTraits<ExecSpace>::scratch_level;
  const std::size_t scratch_max = max_team_scratch_bytes<ExecSpace>(level, c.team);
  if (scratch > scratch_max) {
    why = config_reason(c, " needs " + std::to_string(scratch) + " bytes of level-" + std::to_string(level) +
                               " team scratch, " + ExecSpace::name() + " allows " + std::to_string(scratch_max) +
                               "; shrink mb, nb or kb");
    return std::nullopt;
  }
  using Policy = typename Functor::LaunchPolicy;
  // A persistent kernel's teams walk the work items: as many teams as run at once.
  int league = functor.work_items();
  if constexpr (Functor::kPersistent) {
    const int at_once =
        teams_at_once<ExecSpace, Functor, Policy>(c.team, team_block_bytes(scratch, c.team), Functor::kTeamsPerSM);
    if (at_once > 0 && at_once < league) league = at_once;
  }
  Policy policy(space, league, Kokkos::AUTO);
  policy.set_scratch_size(level, Kokkos::PerTeam(scratch));
  const int team_max = policy.team_size_max(functor, Kokkos::ParallelForTag());
  if (team_max == 0) {  // Kokkos fits no team: the scratch of the teams the launch bounds put on a multiprocessor
    why = config_reason(c, ": " + std::string(ExecSpace::name()) + " launches no team of this kernel with " +
                               std::to_string(scratch) + " bytes of team scratch (and the teams per multiprocessor its "
                               "launch bounds ask for); shrink mb, nb, kb or the slab buffers");
    return std::nullopt;
  }
  if (c.team > team_max) {
    why = config_reason(c, ": team size " + std::to_string(c.team) + " exceeds " + ExecSpace::name() +
                               "'s maximum of " + std::to_string(team_max) + " for this kernel; lower team");
    return std::nullopt;
  }
  return Policy(space, league, c.team)
      .set_scratch_size(level, Kokkos::PerTeam(scratch));
}

// Host spaces compile micro-tiles that GPU spaces do not (variants.hpp).
template <class ExecSpace>
constexpr bool kHostTiles = !SpaceTraits<ExecSpace>::is_gpu;

template <class ExecSpace>
std::string why_tile_not_on_space(const Config& c) {
  if (c.tensor_cores()) return "";
  bool found = false;
  for_each_micro_tile_on<kHostTiles<ExecSpace>>([&](auto tile) { found = found || (tile.tm == c.tm && tile.tn == c.tn); });
  if (found) return "";
  std::string compiled;
  for (auto [tm, tn] : micro_tiles_on(kHostTiles<ExecSpace>)) compiled += " " + dims(tm, tn);
  return config_reason(c, ": micro-tile " + dims(c.tm, c.tn) + " is compiled for host spaces only, not " +
                              ExecSpace::name() + "; " + ExecSpace::name() + " compiles" + compiled);
}

template <class Scalar>
std::string why_bad_accum(Accum accum) {
  if (accum == Accum::F16 && dtype_of<Scalar>() == DType::F32)
    return "fp16 accumulation was asked for fp32 data; it applies to fp16 data only";
  return "";
}

// Calls f(std::true_type) where the call's operands stage as runs (SlabPipeline::runs_apply),
// else f(std::false_type); pipelines that cannot stage runs never compile the runs variant.
template <class Pipeline, class Scalar, class F>
void with_staging(const GemmArgs<Scalar>& args, const Config& c, F&& f) {
  if constexpr (Pipeline::kRunsPossible) {
    if (Pipeline::runs_apply(args, c)) return f(std::true_type{});
  }
  f(std::false_type{});
}

// Calls f(std::integral_constant<int, B>{}) for the B slab buffers of the config (Config::slab_buffers,
// else the space's own), one of those the space compiles: First ... Last.
template <int B, int Last, class F>
void with_buffers_from(int buffers, F&& f) {
  if (buffers == B) return f(std::integral_constant<int, B>{});
  if constexpr (B < Last) with_buffers_from<B + 1, Last>(buffers, f);
}
template <class ExecSpace, int Last = SpaceTraits<ExecSpace>::max_slab_buffers, class F>
void with_slab_buffers(const Config& c, F&& f) {
  using Traits = SpaceTraits<ExecSpace>;
  with_buffers_from<Traits::default_slab_buffers, Last>(c.slab_buffers ? c.slab_buffers : Traits::default_slab_buffers, f);
}

// Runs f(functor, policy) for the variant the config names when every check passes; returns
// why the call cannot run otherwise (empty when f ran).
template <class ExecSpace, class Scalar, class F>
std::string with_checked_kernel(const ExecSpace& space, const GemmArgs<Scalar>& args, const Config& c, Accum accum,
                                F&& f) {
  static_assert(SpaceTraits<ExecSpace>::copy_run_bytes <= kMostAlignmentChecked,
                "dispatch keys its choices by alignments up to kMostAlignmentChecked (operand_layout.hpp)");
  std::string why = why_bad_operands(args);
  if (why.empty()) {
    why = why_malformed(c);
    if (!why.empty()) why = config_reason(c, ": " + why);
  }
  if (why.empty()) why = why_tile_not_on_space<ExecSpace>(c);
  if (why.empty()) why = why_too_large(args, c);
  if (why.empty()) why = why_bad_stages<ExecSpace>(c);
  if (why.empty()) why = why_bad_accum<Scalar>(accum);
  if (why.empty() && c.tensor_cores()) why = why_no_tensor_cores<ExecSpace, Scalar>(c, accum);
  if (why.empty() && !c.tensor_cores() && kTiledReadsKRuns<ExecSpace> && c.kb % kTiledKRun != 0)
    why = config_reason(c, std::string(": ") + ExecSpace::name() + " reads the A slab four k at a time; make kb a multiple of 4");
  if (!why.empty()) return why;
  // Past Kokkos' cap, the policy is sized and the kernel launched under the lift (team_scratch.hpp).
  const auto launch_with_policy = [&](const auto& functor) {
    using Functor = std::decay_t<decltype(functor)>;
    const TeamScratchLift<ExecSpace, Functor, typename Functor::LaunchPolicy> lift(
        team_block_bytes(functor.scratch_bytes(), c.team));
    if (auto policy = make_policy(space, functor, c, why)) f(functor, *policy);
  };
  // Warpgroup kernels stage their operands one way only: launch Kernel (named by a null pointer
  // to it) where the call's operands allow it (Kernel::applies), else say what it `needs`.
  const auto launch_where_it_applies = [&](auto* kernel, const char* needs) {
    using Kernel = std::remove_pointer_t<decltype(kernel)>;
    if (Kernel::applies(args, c))
      launch_with_policy(Kernel(args, c));
    else
      why = config_reason(c, needs);
  };
  if (c.warpgroups()) {
    if constexpr (TensorCores<ExecSpace>::available && std::is_same<Scalar, float>::value) {
      with_slab_buffers<ExecSpace>(c, [&](auto buffers) {
        const auto launch_deep = [&](auto depth) {
          launch_where_it_applies(
              static_cast<WarpgroupTf32x3Gemm<ExecSpace, decltype(buffers)::value, decltype(depth)::value>*>(nullptr),
              " stages A's slabs for TF32 wgmma as 16-byte runs, which needs op(A) row-major with 16-byte aligned rows "
              "(K a multiple of 4) and team / (kb / 4) a multiple of 8; use _tc for this call");
        };
        if (c.kb == 16)  // why_malformed allows 16 and 32
          launch_deep(std::integral_constant<int, 16>{});
        else
          launch_deep(std::integral_constant<int, 32>{});
      });
    }
    if constexpr (TensorCores<ExecSpace>::available && std::is_same<Scalar, half>::value) {
      if (c.warp_specialized()) {
        with_warp_specialized_tile(c.tm, c.tn, [&](auto tile) {
          constexpr int WN = decltype(tile)::tn;
          with_slab_buffers<ExecSpace, max_slab_buffers<ExecSpace>(true)>(c, [&](auto buffers) {
            with_warp_specialized_team_bound<WN>(c.team, [&](auto max_team) {
              launch_where_it_applies(
                  static_cast<WarpSpecializedGemm<ExecSpace, WN, decltype(buffers)::value, decltype(max_team)::value>*>(
                      nullptr),
                  " stages A's and B's slabs for wgmma by bulk tensor copies (TMA), which need op(A) and op(B) "
                  "row-major with 16-byte aligned data, rows and products (row and batch strides multiples of 8), "
                  "and a CUDA 12 build; use _wg or _tc for this call");
            });
          });
        });
        return why;
      }
      with_warpgroup_tile<DType::F16>(c.tm, c.tn, [&](auto tile) {
        with_slab_buffers<ExecSpace>(c, [&](auto buffers) {
          launch_where_it_applies(
              static_cast<WarpgroupGemm<ExecSpace, decltype(tile)::tn, decltype(buffers)::value>*>(nullptr),
              " stages B's slabs for wgmma and loads A's fragments as 16-byte runs, which needs op(B) row-major with "
              "16-byte aligned rows (N a multiple of 8), nb / 8 a power of two with team / (nb / 8) a multiple of 8, and "
              "op(A) row-major with 16-byte aligned rows; use _tc for this call");
        });
      });
    }
    return why;
  }
  if (c.tensor_cores()) {
    if constexpr (TensorCores<ExecSpace>::available) {
      with_warp_tile(c.tm, c.tn, [&](auto tile) {
        constexpr int WM = decltype(tile)::tm, WN = decltype(tile)::tn;
        with_slab_buffers<ExecSpace>(c, [&](auto buffers) {
          constexpr int B = decltype(buffers)::value;
          with_staging<TensorCoreGemm<ExecSpace, Scalar, WM, WN, false, B>>(args, c, [&](auto runs) {
            launch_with_policy(TensorCoreGemm<ExecSpace, Scalar, WM, WN, decltype(runs)::value, B>(args, c));
          });
        });
      });
    }
    return why;
  }
  with_micro_tile<kHostTiles<ExecSpace>>(c.tm, c.tn, [&](auto tile) {
    constexpr int TM = decltype(tile)::tm, TN = decltype(tile)::tn;
    auto run = [&](auto acc_tag) {
      using Acc = decltype(acc_tag);
      with_slab_buffers<ExecSpace>(c, [&](auto buffers) {
        constexpr int B = decltype(buffers)::value;
        with_staging<TiledGemm<ExecSpace, Scalar, Acc, TM, TN, false, B>>(args, c, [&](auto runs) {
          launch_with_policy(TiledGemm<ExecSpace, Scalar, Acc, TM, TN, decltype(runs)::value, B>(args, c));
        });
      });
    };
    // fp16 accumulation exists only for fp16 data; fp32 data never instantiates it.
    if constexpr (std::is_same<Scalar, half>::value) {
      if (accum == Accum::F16) return run(half{});
    }
    run(float{});
  });
  return why;
}

}  // namespace detail

template <class ExecSpace, class Scalar>
std::string why_illegal(const GemmArgs<Scalar>& args, const Config& config, Accum accum) {
  return detail::with_checked_kernel(ExecSpace(), args, config, accum, [](const auto&, const auto&) {});
}

template <class ExecSpace, class Scalar>
void launch_gemm(const ExecSpace& space, const GemmArgs<Scalar>& args, const Config& config,
                 Accum accum) {
  const std::string why = detail::with_checked_kernel(space, args, config, accum, [&](const auto& functor, const auto& policy) {
    if (args.M() == 0 || args.N() == 0) return;
    auto kernel = functor;
    kernel.use_global_memory(space);
    Kokkos::parallel_for("kgemm::tiled_gemm " + to_string(config), policy, kernel);
    sum_splits(space, kernel);
  });
  if (!why.empty()) throw InvalidArgument(why);
}

}  // namespace kgemm

#pragma once
// Body of launch_gemm / validate_gemm; included only by the per-space instantiation files.
#include <Kokkos_Core.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kgemm/launch.hpp"
#include "kgemm/launch_policy.hpp"
#include "kgemm/split_sum.hpp"
#include "kgemm/tensor_core_gemm.hpp"
#include "kgemm/tiled_gemm.hpp"
#include "kgemm/variants.hpp"

namespace kgemm {
namespace detail {

[[noreturn]] inline void reject(const std::string& what) { throw std::invalid_argument("kgemm: " + what); }

// A config the checks turn down; its name is built only here, as the checks run on every call.
[[noreturn]] inline void reject_config(const Config& c, const std::string& why) {
  reject("config " + to_string(c) + why);
}

inline std::string dims(int rows, int cols) { return std::to_string(rows) + "x" + std::to_string(cols); }

template <class Scalar>
void check_extents(const GemmArgs<Scalar>& args) {
  const auto& A = args.A;
  const auto& B = args.B;
  const auto& C = args.C;
  if (A.rows != C.rows || B.cols != C.cols || A.cols != B.rows)
    reject("shape mismatch: op(A) is " + dims(A.rows, A.cols) + ", op(B) is " + dims(B.rows, B.cols) +
           ", C is " + dims(C.rows, C.cols) + "; need op(A) MxK, op(B) KxN, C MxN");
  if (args.batch < 1) reject("batch count " + std::to_string(args.batch) + " must be at least 1");
  if (C.batch_stride == 0 && args.batch > 1)
    reject("C has batch stride 0 with batch " + std::to_string(args.batch) +
           ": every product would write the same C; only A and B may be shared");
}

inline void check_config_shape(const Config& c) {
  if (c.mb < 1 || c.nb < 1 || c.kb < 1 || c.team < 1 || c.ks < 1 || c.bb < 1)
    reject_config(c, ": mb, nb, kb, team, ks and bb must be positive");
  if (c.team % c.bb != 0)
    reject_config(c, ": team " + std::to_string(c.team) + " does not split into bb = " +
                  std::to_string(c.bb) + " products of equal teams; make team a multiple of bb");
  if (c.bb > 1 && c.ks > 1)
    reject_config(c, ": several products per team (bb) and split K (ks) do not combine; set one of them to 1");
  if (c.mb % c.tm != 0 || c.nb % c.tn != 0)
    reject_config(c, ": block " + dims(c.mb, c.nb) + " is not a multiple of the micro-tile " +
                  dims(c.tm, c.tn) + "; choose mb a multiple of tm and nb a multiple of tn");
}

template <class ExecSpace>
void check_stages(const Config& c) {
  using Traits = SpaceTraits<ExecSpace>;
  if (c.stages == 0 || (c.stages >= Traits::slab_buffers && c.stages <= Traits::max_slab_buffers)) return;
  const std::string space = ExecSpace::name();
  if (Traits::max_slab_buffers == Traits::slab_buffers)
    reject_config(c, ": " + space + " stages one slab at a time (" +
                  std::to_string(Traits::slab_buffers) + " buffer); drop _st");
  reject_config(c, ": " + space + " stages " + std::to_string(Traits::slab_buffers) + " to " +
                std::to_string(Traits::max_slab_buffers) + " slab buffers; make st one of them, or drop it");
}

// Tensor-core configs: one warp per tm x tn tile and slabs a whole number of fragments deep.
template <class ExecSpace, class Scalar>
void check_tensor_core_config(const Config& c, Accum accum) {
  if (!TensorCores<ExecSpace>::available)
    reject_config(c, std::string(" uses tensor cores, which ") + ExecSpace::name() + " does not have; drop _tc");
  if (!TensorCores<ExecSpace>::on_device())
    reject_config(c, " uses tensor cores, which kgemm runs on GPUs of compute capability 7.5 or newer "
                  "(this one is older); drop _tc");
  if (dtype_of<Scalar>() != DType::F16 || accum != Accum::F32)
    reject_config(c, ": tensor-core configs take fp16 data with fp32 accumulation");
  if (c.kb % 16 != 0)
    reject_config(c, ": tensor-core slabs are 16-deep fragments; make kb a multiple of 16");
  if (c.threads_per_product() != 32 * c.micro_tiles())
    reject_config(c, ": a tensor-core team is one 32-thread warp per " + dims(c.tm, c.tn) +
                  " tile: team " + std::to_string(32 * c.micro_tiles() * c.bb) + " for this block" +
                  (c.bb > 1 ? " and bb" : ""));
}

template <class ExecSpace, class Functor>
KernelTeamPolicy<ExecSpace> make_policy(const ExecSpace& space, const Functor& functor, const Config& c) {
  const std::size_t scratch = functor.scratch_bytes();
  constexpr int level = SpaceTraits<ExecSpace>::scratch_level;
  const std::size_t scratch_max = max_team_scratch_bytes<ExecSpace>(level, c.team);
  if (scratch > scratch_max)
    reject_config(c, " needs " + std::to_string(scratch) + " bytes of level-" + std::to_string(level) +
                  " team scratch, " + ExecSpace::name() + " allows " + std::to_string(scratch_max) +
                  "; shrink mb, nb or kb");
  KernelTeamPolicy<ExecSpace> policy(space, functor.league_size(), Kokkos::AUTO);
  policy.set_scratch_size(level, Kokkos::PerTeam(scratch));
  const int team_max = policy.team_size_max(functor, Kokkos::ParallelForTag());
  if (c.team > team_max)
    reject_config(c, ": team size " + std::to_string(c.team) + " exceeds " +
                  ExecSpace::name() + "'s maximum of " + std::to_string(team_max) +
                  " for this kernel; lower team");
  return KernelTeamPolicy<ExecSpace>(space, functor.league_size(), c.team)
      .set_scratch_size(level, Kokkos::PerTeam(scratch));
}

template <class Scalar>
void check_accum(Accum accum) {
  if (accum == Accum::F16 && dtype_of<Scalar>() == DType::F32)
    reject("fp16 accumulation was asked for fp32 data; it applies to fp16 data only");
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

// Calls f(std::integral_constant<int, B>{}) for the B slab buffers of the config (Config::stages,
// else the space's own), one of those the space compiles: First ... Last.
template <int B, int Last, class F>
void with_buffers_from(int buffers, F&& f) {
  if (buffers == B) return f(std::integral_constant<int, B>{});
  if constexpr (B < Last) with_buffers_from<B + 1, Last>(buffers, f);
}
template <class ExecSpace, class F>
void with_slab_buffers(const Config& c, F&& f) {
  using Traits = SpaceTraits<ExecSpace>;
  with_buffers_from<Traits::slab_buffers, Traits::max_slab_buffers>(c.stages ? c.stages : Traits::slab_buffers, f);
}

// Runs f(functor, policy) for the variant the config names, after every check.
template <class ExecSpace, class Scalar, class F>
void with_checked_kernel(const ExecSpace& space, const GemmArgs<Scalar>& args, const Config& c,
                         Accum accum, F&& f) {
  check_extents(args);
  check_config_shape(c);
  check_stages<ExecSpace>(c);
  check_accum<Scalar>(accum);
  if (c.tc) {
    check_tensor_core_config<ExecSpace, Scalar>(c, accum);
    if constexpr (TensorCores<ExecSpace>::available && std::is_same<Scalar, half>::value) {
      with_warp_tile(c.tm, c.tn, [&](auto tile) {
        constexpr int WM = decltype(tile)::tm, WN = decltype(tile)::tn;
        with_slab_buffers<ExecSpace>(c, [&](auto buffers) {
          constexpr int B = decltype(buffers)::value;
          with_staging<TensorCoreGemm<ExecSpace, WM, WN, false, B>>(args, c, [&](auto runs) {
            TensorCoreGemm<ExecSpace, WM, WN, decltype(runs)::value, B> functor(args, c);
            f(functor, make_policy(space, functor, c));
          });
        });
      });
    }
    return;
  }
  if (kTiledALayout<ExecSpace> == SlabLayout::RowMajor && c.kb % kTiledKRun != 0)
    reject_config(c, std::string(": ") + ExecSpace::name() +
                  " reads the A slab four k at a time; make kb a multiple of 4");
  with_micro_tile(c.tm, c.tn, [&](auto tile) {
    constexpr int TM = decltype(tile)::tm, TN = decltype(tile)::tn;
    auto run = [&](auto acc_tag) {
      using Acc = decltype(acc_tag);
      with_slab_buffers<ExecSpace>(c, [&](auto buffers) {
        constexpr int B = decltype(buffers)::value;
        with_staging<TiledGemm<ExecSpace, Scalar, Acc, TM, TN, false, B>>(args, c, [&](auto runs) {
          TiledGemm<ExecSpace, Scalar, Acc, TM, TN, decltype(runs)::value, B> functor(args, c);
          f(functor, make_policy(space, functor, c));
        });
      });
    };
    // fp16 accumulation exists only for fp16 data; fp32 data never instantiates it.
    if constexpr (std::is_same<Scalar, half>::value) {
      if (accum == Accum::F16) return run(half{});
    }
    run(float{});
  });
}

}  // namespace detail

template <class ExecSpace, class Scalar>
void validate_gemm(const GemmArgs<Scalar>& args, const Config& config, Accum accum) {
  detail::with_checked_kernel(ExecSpace(), args, config, accum, [](const auto&, const auto&) {});
}

template <class ExecSpace, class Scalar>
void launch_gemm(const ExecSpace& space, const GemmArgs<Scalar>& args, const Config& config,
                 Accum accum) {
  detail::with_checked_kernel(space, args, config, accum, [&](const auto& functor, const auto& policy) {
    if (args.M() == 0 || args.N() == 0) return;
    auto kernel = functor;
    kernel.template use_split_buffers<typename ExecSpace::memory_space>();
    Kokkos::parallel_for("kgemm::tiled_gemm " + to_string(config), policy, kernel);
    sum_splits(space, kernel);
  });
}

}  // namespace kgemm

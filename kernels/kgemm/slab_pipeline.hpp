#pragma once
// The team pattern every kgemm kernel shares: a Kokkos team per MB x NB block of C (placed by
// BlockSchedule, block_schedule.hpp), K walked in KB-deep slabs of op(A) and op(B) staged in
// team scratch, in SlabBuffers slab buffers: where the space can overlap copies with arithmetic
// (GPUs), SlabBuffers - 1 slabs are copied ahead of the one multiplied (Config::slab_buffers;
// SpaceTraits::default_slab_buffers by default). What multiplies a staged slab pair is the
// kernel's own: register micro-tiles (tiled_gemm.hpp) or tensor-core warp tiles
// (tensor_core_gemm.hpp); the results leave through BlockEpilogue (block_epilogue.hpp): into C
// or, with split K (Config::ks), into each split's partial block, which a second kernel adds up
// into C (split_sum.hpp). With several products per team (Config::bb) each product team works as
// a team of its own here, in its own share of the scratch (product_team.hpp).
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <type_traits>

#include "kgemm/block_epilogue.hpp"
#include "kgemm/block_schedule.hpp"
#include "kgemm/config.hpp"
#include "kgemm/launch_policy.hpp"
#include "kgemm/matrix_ref.hpp"
#include "kgemm/product_team.hpp"
#include "kgemm/run_stager.hpp"
#include "kgemm/slab_layout.hpp"
#include "kgemm/slab_stager.hpp"
#include "kgemm/split_workspace.hpp"
#include "kgemm/spaces/space_traits.hpp"

namespace kgemm {

// The plans of both operands' runs, where the pipeline stages runs; nothing otherwise (an unused
// member still costs registers: docs/gpu-notes.md).
template <class Plan, bool Runs>
struct OperandRuns {};
template <class Plan>
struct OperandRuns<Plan, true> {
  Plan a_runs, b_runs;
};

// Runs: both operands are staged as whole 16-byte runs (run_stager.hpp), which the kernel's
// launch chose where runs_apply() holds; otherwise through SlabStager.
// Layout: how slabs lie in scratch (slab_layout.hpp): row-major and padded, or one operand alone
// in the swizzled tiles of Hopper's warpgroup MMA, which only runs stage.
template <class ExecSpace, class Scalar, class Slab, bool Runs, int SlabBuffers, class Layout = PaddedSlabs<>>
struct SlabPipeline : OperandRuns<RunPlan<ExecSpace, Scalar, Layout::swizzled, Layout::b_in_fragment_k_order>, Runs>,
                      BlockSchedule<SlabPipeline<ExecSpace, Scalar, Slab, Runs, SlabBuffers, Layout>>,
                      BlockEpilogue<SlabPipeline<ExecSpace, Scalar, Slab, Runs, SlabBuffers, Layout>, Scalar> {
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Member = typename Policy::member_type;
  using LaunchPolicy = KernelTeamPolicy<ExecSpace>;  // what the kernel launches with
  using Traits = SpaceTraits<ExecSpace>;
  static constexpr int kAlign = Layout::align;  // where scratch regions start
  using Stager = SlabStager<ExecSpace, Scalar, Slab>;
  using Plan = RunPlan<ExecSpace, Scalar, Layout::swizzled, Layout::b_in_fragment_k_order>;
  // Runs are copied as they are, into row-major slabs, by spaces that copy runs.
  static constexpr bool kRunsPossible =
      Traits::copy_run_bytes > 0 && std::is_same<Scalar, Slab>::value;
  static_assert(!Runs || kRunsPossible, "kgemm: this pipeline cannot stage runs");
  static_assert(Runs || !Layout::swizzled || Layout::kernel_copies, "kgemm: swizzled slabs are staged as runs only");
  static_assert(SlabBuffers >= Traits::default_slab_buffers && SlabBuffers <= max_slab_buffers<ExecSpace>(Layout::kernel_copies),
                "kgemm: this space does not stage that many slab buffers");
  // Slab rows padded by one copy run: bank-conflict-free on GPUs, and runs stay aligned.
  static constexpr int kPad = Traits::is_gpu ? Stager::kRun : 0;

  // The fields of the call, its blocks and its slabs, which BlockSchedule and BlockEpilogue read
  // too, in the order the GPU kernels' registers were tuned with (block_schedule.hpp).
  GemmArgs<Scalar> args;
  int mb, nb, kb;
  int blocks_m, blocks_n;
  int k_multiple;  // slabs are staged to a multiple of this depth, zero-filled past K
  int ld_a, ld_b;  // slab row lengths
  int slabs;                    // K slabs of every block
  int slabs_per_split, splits;  // splits <= Config::ks: none of them is left without slabs
  float* partials = nullptr;    // split K's partial blocks (use_global_memory)
  int products_per_team, threads_per_product;  // Config::bb; the product teams' size
  int a_slab_elements, buffer_elements;  // one slab buffer: its A slab, then its B slab (kAlign-aligned)
  int last_depth;                        // the last slab's K extent, rounded up to k_multiple
  bool walk_n_first;                     // consecutive blocks go across N (place())

  SlabPipeline(const GemmArgs<Scalar>& a, const Config& c, int k_mult)
      : args(a), mb(c.mb), nb(c.nb), kb(c.kb),
        blocks_m(ceil_div(a.M(), c.mb)), blocks_n(ceil_div(a.N(), c.nb)), k_multiple(k_mult),
        ld_a(Layout::ld_a(c.kb, kPad)), ld_b(Layout::ld_b(c.nb, kPad)),
        slabs(ceil_div(a.K(), c.kb)), products_per_team(c.bb), threads_per_product(c.threads_per_product()),
        walk_n_first(a.N() < a.M()) {
    const SlabSplit split = split_slabs(c, a.K());
    slabs_per_split = split.slabs_per_split;
    splits = split.splits;
    // Worked out here, not by every thread for every slab.
    const int last_k = a.K() - (slabs - 1) * kb;
    last_depth = slabs > 0 ? (last_k + k_multiple - 1) / k_multiple * k_multiple : 0;
    a_slab_elements = Layout::stages_a ? aligned_elements(Layout::slab_elements(mb, kb, ld_a)) : 0;
    buffer_elements = a_slab_elements + (Layout::stages_b ? aligned_elements(Layout::slab_elements(kb, nb, ld_b)) : 0);
    if constexpr (Runs) {
      const int stagers = Layout::staging_threads(c.threads_per_product());
      if constexpr (Layout::stages_a) this->a_runs = Plan(a.A, c.mb, c.kb, stagers, ld_a, true);
      if constexpr (Layout::stages_b) this->b_runs = Plan(a.B, c.kb, c.nb, stagers, ld_b, false);
    }
  }

  // Whether the staged operands' tiles of this call stage as runs.
  static bool runs_apply(const GemmArgs<Scalar>& a, const Config& c) {
    const int stagers = Layout::staging_threads(c.threads_per_product());
    return kRunsPossible && (!Layout::stages_a || Plan::applies(a.A, c.kb, stagers)) &&
           (!Layout::stages_b || Plan::applies(a.B, c.nb, stagers));
  }

  // A persistent kernel launches as many teams as run at once, each walking work items the
  // league size apart; the others a team per work item (BlockSchedule::work_items).
  static constexpr bool kPersistent = false;

  // Global memory the kernel reads beside the operands, set up for a launch on `space`: split K's
  // partial blocks, one per work item.
  void use_global_memory(const ExecSpace&) {
    if (splits > 1) partials = split_partials<typename ExecSpace::memory_space>(std::size_t(this->work_items()) * mb * nb);
  }

  KOKKOS_INLINE_FUNCTION static std::size_t aligned_bytes(std::size_t bytes) {
    return (bytes + kAlign - 1) / kAlign * kAlign;
  }
  static int aligned_elements(std::size_t elements) { return int(aligned_bytes(elements * sizeof(Slab)) / sizeof(Slab)); }
  // Scratch of the slab buffers; a kernel's own scratch (`extra_bytes`) follows them.
  KOKKOS_INLINE_FUNCTION std::size_t slab_bytes() const { return std::size_t(SlabBuffers) * buffer_elements * sizeof(Slab); }
  // Scratch of one product team, and of the whole team.
  KOKKOS_INLINE_FUNCTION std::size_t product_bytes(std::size_t extra_bytes) const { return slab_bytes() + aligned_bytes(extra_bytes); }
  std::size_t scratch_bytes(std::size_t extra_bytes) const { return products_per_team * product_bytes(extra_bytes) + kAlign; }

  KOKKOS_INLINE_FUNCTION ProductTeam<Member> product_team(const Member& team) const { return {team, threads_per_product}; }

  // A product team's scratch: slab buffers first, the kernel's own region at extra().
  KOKKOS_INLINE_FUNCTION char* scratch(const Member& team, std::size_t extra_bytes, int group) const {
    const int level = Traits::scratch_level;  // a copy: device code cannot bind the static member
    auto& memory = team.team_scratch(level);
    char* base = static_cast<char*>(memory.get_shmem_aligned(products_per_team * product_bytes(extra_bytes), kAlign));
    return Traits::in_scratch(base + group * product_bytes(extra_bytes));
  }
  template <class T>
  KOKKOS_INLINE_FUNCTION T* extra(char* scratch) const {
    return reinterpret_cast<T*>(scratch + slab_bytes());
  }

  // Runs multiply(a_slab, lda, b_slab, ldb, depth) over the K slabs of the product team's split:
  // slab rows lda (ldb) apart, in scratch or, on spaces that read slabs in place, in the
  // operand itself (SlabStager::in_place). depth is the slab's K extent rounded up to
  // k_multiple; the rows past K are zeros.
  template <class Multiply>
  KOKKOS_INLINE_FUNCTION void for_each_slab(const ProductTeam<Member>& team, char* scratch, const BlockOrigin& at,
                                            Multiply&& multiply) const {
    for_each_slab(team, scratch, at, multiply, [](const auto&, const Slab*, int) {});
  }
  // The same, with landed(a_copies, a_slab, slab) called by each thread once its own copies of A's
  // slab have landed, before the barrier that publishes the slab (GPUs): a_copies is the thread's
  // stager of A (RunPlan::Copies where runs stage: for_each_run visits its runs). What it writes
  // to scratch is the team's past that barrier.
  template <class Multiply, class Landed>
  KOKKOS_INLINE_FUNCTION void for_each_slab(const ProductTeam<Member>& team, char* scratch, const BlockOrigin& at,
                                            Multiply&& multiply, Landed&& landed) const {
    if constexpr (Runs) {
      walk_slabs(team, scratch, at, this->a_runs.thread(team, args.A, at.b, at.m0, 0),
                 this->b_runs.thread(team, args.B, at.b, 0, at.n0), multiply, landed);
    } else {
      const bool exact_depth = k_multiple == 1;
      const Stager a_stager(team, ld_a, args.A, at.b, at.m0, 0, mb, kb, true, exact_depth);
      const Stager b_stager(team, ld_b, args.B, at.b, 0, at.n0, kb, nb, false, exact_depth);
      walk_slabs(team, scratch, at, a_stager, b_stager, multiply, landed);
    }
  }

 private:
  // stage(to, slab, depth) of each stager copies one slab of the block's operand tile.
  template <class AStager, class BStager, class Multiply, class Landed>
  KOKKOS_INLINE_FUNCTION void walk_slabs(const ProductTeam<Member>& team, char* scratch, const BlockOrigin& at,
                                         const AStager& a_stager, const BStager& b_stager, Multiply&& multiply,
                                         Landed&& landed) const {
    Slab* buffers = reinterpret_cast<Slab*>(scratch);
    auto a_slab = [&](int slab) { return buffers + unsigned(slab) % SlabBuffers * buffer_elements; };
    auto b_slab = [&](int slab) { return a_slab(slab) + a_slab_elements; };
    auto depth = [&](int slab) { return slab + 1 < slabs ? kb : last_depth; };
    auto stage = [&](int slab) {
      if constexpr (Layout::stages_a) a_stager.stage(a_slab(slab), slab, depth(slab));
      if constexpr (Layout::stages_b) b_stager.stage(b_slab(slab), slab, depth(slab));
    };

    const SlabRange range = this->slab_range(at);
    const int first = range.first, end = range.end;
    // The slabs copied ahead of the one multiplied. One barrier per slab suffices: past it,
    // every thread's copies of this slab are visible and every thread is done with the previous
    // slab, whose buffer the copies of slab + ahead then overwrite. Each turn commits one group
    // of copies (empty past the split's end), so waiting until `ahead - 1` groups are left in
    // flight waits for this slab's.
    constexpr int ahead = SlabBuffers - 1;
    if constexpr (ahead > 0) {
      auto multiply_slab = [&](int slab) {
        multiply(static_cast<const Slab*>(a_slab(slab)), ld_a, static_cast<const Slab*>(b_slab(slab)), ld_b, depth(slab));
      };
      // The first slab is staged outside the loop, so that with two buffers the prologue is
      // straight-line code: a prologue loop of one turn schedules the two-buffer kernels worse
      // (docs/gpu-notes.md, s10).
      if (first < end) stage(first);
      Traits::commit_scratch_copies();
#pragma unroll 1
      for (int slab = first + 1; slab < first + ahead; ++slab) {
        if (slab < end) stage(slab);
        Traits::commit_scratch_copies();
      }
      for (int slab = first; slab < end; ++slab) {
        Traits::template wait_scratch_copies<ahead - 1>();
        landed(a_stager, static_cast<const Slab*>(a_slab(slab)), slab);
        Layout::copies_landed();
        team.team_barrier();
        if (slab + ahead < end) stage(slab + ahead);
        Traits::commit_scratch_copies();
        multiply_slab(slab);
      }
    } else {  // one buffer (host spaces): the copies wait for the previous slab's multiply
      for (int slab = first; slab < end; ++slab) {
        if (slab > first) team.team_barrier();
        stage(slab);
        team.team_barrier();
        multiply(a_stager.slab_at(a_slab(slab), slab), a_stager.ld_read, b_stager.slab_at(b_slab(slab), slab),
                 b_stager.ld_read, depth(slab));
      }
    }
  }
};

}  // namespace kgemm

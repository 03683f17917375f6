#pragma once
// The warp-specialized warpgroup GEMM kernel (configs ending in "_ws": fp16 data, fp32
// accumulation, Hopper's `wgmma`, 64-deep slabs). The team is one warpgroup per 64 x WN tile of
// the block and a producer warpgroup (the last 128 threads). The producer stages both operands'
// slabs as 16-byte runs into StagedWarpgroupSlabs, SlabBuffers buffers deep; each thread's
// copies arrive on the buffer's barrier as they land, so the producer never waits for its own
// copies, only for a buffer to come back. Each tile's warpgroup multiplies from the buffer
// through descriptors, leaves that group in flight while it waits for the next buffer, and
// gives a buffer back once the group reading it is done. Buffers go back and forth through two
// shared-memory barriers each (spaces/: mbarrier), so no warp waits for the whole team once per
// slab as the team-barrier pipeline's do, and the tensor cores get the next group while the last
// one still runs. Results go from the registers to C two adjacent columns per store, as the
// other warpgroup kernel's do.
//
// What it needs to pay, and why it is offered where it is: with a group in flight a buffer is
// busy for two slabs, so SlabBuffers - 2 slabs are copied ahead of the one multiplied; 128 x 128
// blocks take 32 KB a buffer, so the depth that feeds the tensor cores (three or four buffers)
// is past the 48 KB Kokkos 4.6 grants a team unless spaces/ lifts it (team_scratch.hpp).
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kgemm/slab_pipeline.hpp"
#include "kgemm/spaces/mbarrier.hpp"
#include "kgemm/spaces/tensor_core_tile.hpp"

namespace kgemm {

// Teams of at most this many threads (one tile and the producer) launch two to a multiprocessor.
constexpr int kWarpSpecializedPairedTeam = 2 * wgmma::kWarpgroupThreads;

template <class ExecSpace, int WN, int SlabBuffers, int TeamsPerSM>
struct WarpSpecializedGemm : SlabPipeline<ExecSpace, half, half, true, SlabBuffers, StagedWarpgroupSlabs> {
  using Cores = TensorCores<ExecSpace>;
  using Tile = typename Cores::template GroupTile<WN>;
  using Pipeline = SlabPipeline<ExecSpace, half, half, true, SlabBuffers, StagedWarpgroupSlabs>;
  using typename Pipeline::Member;
  // Teams of one tile and the producer run two to a multiprocessor (128 registers a thread: a
  // 64 x 128 block's slab waits are then covered by the other team's); larger ones one (64 x 128
  // tiles: up to 168 registers at 384 threads; 64 x 64 ones: teams up to 640).
  using LaunchPolicy =
      BoundedTeamPolicy<ExecSpace, TeamsPerSM == 2 ? kWarpSpecializedPairedTeam : WN == 128 ? 384 : 640, TeamsPerSM>;
  static constexpr int kGroup = wgmma::kWarpgroupThreads;
  static constexpr int KB = Tile::staged_k;
  // Two barriers per buffer, after the buffers: `full` (the producer's 128 arrivals: the slab
  // landed) and `empty` (every consumer thread's: the group reading it is done).
  static constexpr std::size_t kBarrierBytes = 2 * SlabBuffers * sizeof(std::uint64_t);

  int groups_n;   // tiles across the block
  int consumers;  // tiles of the block: the producer's rank comes after theirs

  WarpSpecializedGemm(const GemmArgs<half>& a, const Config& c)
      : Pipeline(a, c, wgmma::kInstructionK), groups_n(c.nb / WN), consumers(c.micro_tiles()) {}

  // Whether the call's A and B stage as runs into the swizzled tiles (the only way they can).
  static bool applies(const GemmArgs<half>& a, const Config& c) { return Pipeline::runs_apply(a, c); }

  std::size_t scratch_bytes() const { return Pipeline::scratch_bytes(kBarrierBytes); }

  // The producer's rank among the stagers, for RunPlan::thread.
  struct StagingRank {
    int rank;
    KOKKOS_INLINE_FUNCTION int team_rank() const { return rank; }
  };

  KOKKOS_INLINE_FUNCTION half* a_slab(char* scratch, int buffer) const {
    return reinterpret_cast<half*>(scratch) + buffer * this->buffer_elements;
  }
  KOKKOS_INLINE_FUNCTION half* b_slab(char* scratch, int buffer) const {
    return a_slab(scratch, buffer) + this->a_slab_elements;
  }

#if defined(KGEMM_WGMMA)
  // Slab t of the team's range goes to buffer t % SlabBuffers. Each thread's copies of a slab
  // arrive on the buffer's `full` barrier as they land (no wait here): the producer goes on to
  // the next buffer as soon as the consumers give it back.
  KOKKOS_INLINE_FUNCTION void produce(int rank, char* scratch, std::uint64_t* full, std::uint64_t* empty,
                                      const BlockOrigin& at, int first, int count) const {
    using Traits = typename Pipeline::Traits;
    const StagingRank stager{rank};
    const auto a_copies = this->a_runs.thread(stager, this->args.A, at.b, at.m0, 0);
    const auto b_copies = this->b_runs.thread(stager, this->args.B, at.b, 0, at.n0);
    for (int t = 0; t < count; ++t) {
      const int buffer = t % SlabBuffers;
      if (t >= SlabBuffers) mbarrier::wait(&empty[buffer], (t / SlabBuffers - 1) & 1);
      a_copies.stage(a_slab(scratch, buffer), first + t, KB);
      b_copies.stage(b_slab(scratch, buffer), first + t, KB);
      mbarrier::arrive_when_copies_land(&full[buffer]);
    }
    Traits::commit_scratch_copies();
    Traits::template wait_scratch_copies<0>();  // none in flight when the thread ends
  }

  // The tile's warpgroup: slab t's group issued, then slab t - 1's waited for and its buffer
  // given back.
  KOKKOS_INLINE_FUNCTION void consume(Tile& tile, char* scratch, std::uint64_t* full, std::uint64_t* empty, int row0,
                                      int col0, int count) const {
    for (int t = 0; t < count; ++t) {
      const int buffer = t % SlabBuffers;
      mbarrier::wait(&full[buffer], (t / SlabBuffers) & 1);
      StagedWarpgroupSlabs::copies_landed();  // the producer's copies, made visible to the tensor cores
      tile.multiply_staged(a_slab(scratch, buffer) + row0 * KB, b_slab(scratch, buffer), col0);
      if (t > 0) {
        tile.template wait_for_groups<1>();
        mbarrier::arrive(&empty[(t - 1) % SlabBuffers]);
      }
    }
    tile.template wait_for_groups<0>();
  }
#endif

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
#if defined(KGEMM_WGMMA)
    const BlockOrigin at = this->origin(team, 0);
    char* scratch = this->scratch(team, kBarrierBytes, 0);
    std::uint64_t* full = this->template extra<std::uint64_t>(scratch);
    std::uint64_t* empty = full + SlabBuffers;
    if (team.team_rank() == 0)
      for (int b = 0; b < SlabBuffers; ++b) mbarrier::init(&full[b], kGroup), mbarrier::init(&empty[b], kGroup * consumers);
    team.team_barrier();
    const auto range = this->slab_range(at);
    const int count = range.end - range.first;
    const int rank = team.team_rank(), group = rank / kGroup;
    if (group == consumers) return produce(rank - consumers * kGroup, scratch, full, empty, at, range.first, count);
    const int row0 = group / groups_n * wgmma::kInstructionM, col0 = group % groups_n * WN;
    Tile tile(rank % kGroup);
    consume(tile, scratch, full, empty, row0, col0, count);
    this->template store_results<2>(at, [&](auto&& store) {
      tile.for_each_pair([&](int i, int j, float first, float second) {
        const float run[2] = {first, second};
        store(row0 + i, col0 + j, run);
      });
    });
#else
    (void)team;
    Kokkos::abort("kgemm: warp-specialized configs (_ws) need device code compiled for sm_90a and a GPU of compute capability 9.0");
#endif
  }
};

}  // namespace kgemm

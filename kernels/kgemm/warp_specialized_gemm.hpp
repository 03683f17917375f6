#pragma once
// The warp-specialized warpgroup GEMM kernel (configs ending in "_ws": fp16 data, fp32
// accumulation, Hopper's `wgmma`, 64-deep slabs). The team is one warpgroup per 64 x WN tile of
// the block and a producer warpgroup (the last 128 threads), of which one thread copies: per slab,
// one bulk tensor copy of A's block rows and one of each 64 columns of B's (spaces/:
// tensor_copy.hpp), straight into the swizzled layout the tensor cores read
// (StagedWarpgroupSlabs), SlabBuffers buffers deep, edges zero-filled by the copy engine. The
// copies complete on the buffer's barrier by their bytes, so the producer never waits for its own
// copies, only for a buffer to come back. Each tile's warpgroup multiplies from the buffer
// through descriptors, leaves that group in flight while it waits for the next buffer, and gives
// a buffer back once the group reading it is done. Buffers go back and forth through two
// shared-memory barriers each (spaces/: mbarrier), so no warp waits for the whole team once per
// slab as the team-barrier pipeline's do, and the tensor cores get the next group while the last
// one still runs.
//
// The grid is persistent: as many teams as run at once (teams_at_once), each walking its blocks
// in turn with the same buffers and barriers, so the producer copies a block's first slabs while
// the tiles still multiply or store the last one's. Results leave through shared memory by bulk
// stores where C allows it (stores_by_copy), so the tiles' warps go on to the next block while
// C is written; elsewhere two adjacent columns per store from the registers, as the other
// warpgroup kernel's do. Short-K layers spend most of their time filling the pipeline and
// writing C, which these two overlap with the multiplies.
//
// Bulk copies, not 16-byte copies by every producer thread: the latter spent about twice the
// study's instructions per slab on address arithmetic (docs/gpu-notes.md, s22). The copies read
// the operands through tensor maps, which need each operand row-major with 16-byte aligned data,
// rows and products (applies); other calls take another config.
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
#include "kgemm/spaces/tensor_maps.hpp"
#include "kgemm/spaces/tensor_core_tile.hpp"

namespace kgemm {

// Teams of at most this many threads (one tile and the producer) launch two to a multiprocessor
// (128 registers a thread: a 64 x 128 block's slab waits are then covered by the other team's),
// where the tile's accumulators leave room for the rest (warp_specialized_pairs: tiles up to 64 x
// 128; a 64 x 256 tile's take 128 registers).
constexpr int kWarpSpecializedPairedTeam = 2 * wgmma::kWarpgroupThreads;
constexpr bool warp_specialized_pairs(int wn) { return wn <= 128; }

// The launch bounds a team of `team` threads with WN-wide tiles compiles for: the smallest of
// the tile's bounds that holds it, else the largest (which Kokkos then refuses, naming the
// team). Larger teams launch one to a multiprocessor: 64 x 256 tiles up to two and the producer
// (384 threads, 168 registers a thread); 64 x 128 tiles up to three (512: 192 x 128 blocks,
// which cut M into a third more blocks than 128-row ones where those leave multiprocessors idle
// in the last wave), at 152 registers a tile thread; 64 x 64 tiles up to four (640).
template <int WN>
constexpr int warp_specialized_team_bound(int team) {
  if (warp_specialized_pairs(WN) && team <= kWarpSpecializedPairedTeam) return kWarpSpecializedPairedTeam;
  if (WN == 64) return 640;
  if (WN == 128 && team > 384) return 512;
  return 384;
}
// Calls f(std::integral_constant<int, bound>{}) with the bound of a team of `team` threads; the
// bounds compiled for WN are the values warp_specialized_team_bound maps to themselves.
template <int WN, class F>
void with_warp_specialized_team_bound(int team, F&& f) {
  const int bound = warp_specialized_team_bound<WN>(team);
  const auto compiled = [&](auto candidate) {
    if constexpr (warp_specialized_team_bound<WN>(decltype(candidate)::value) == decltype(candidate)::value)
      if (bound == decltype(candidate)::value) f(candidate);
  };
  compiled(std::integral_constant<int, kWarpSpecializedPairedTeam>{});
  compiled(std::integral_constant<int, 384>{});
  compiled(std::integral_constant<int, 512>{});
  compiled(std::integral_constant<int, 640>{});
}

template <class ExecSpace, int WN, int SlabBuffers, int MaxTeam>
struct WarpSpecializedGemm : SlabPipeline<ExecSpace, half, half, false, SlabBuffers, StagedWarpgroupSlabs> {
  using Cores = TensorCores<ExecSpace>;
  using Tile = typename Cores::template GroupTile<WN>;
  using Pipeline = SlabPipeline<ExecSpace, half, half, false, SlabBuffers, StagedWarpgroupSlabs>;
  using typename Pipeline::Member;
  static constexpr int kMaxTeam = MaxTeam;
  static constexpr int kTeamsPerSM = MaxTeam == kWarpSpecializedPairedTeam ? 2 : 1;
  static_assert(kTeamsPerSM == 1 || warp_specialized_pairs(WN), "kgemm: this tile's teams run one to a multiprocessor");
  using LaunchPolicy = BoundedTeamPolicy<ExecSpace, kMaxTeam, kTeamsPerSM>;
  // Where a tile's accumulators take half the registers a thread starts with or more (64 x 256
  // tiles; 64 x 128 ones in paired teams and in teams of three tiles), the producer's warpgroup
  // keeps few and the tiles take the rest: otherwise ptxas spills. Elsewhere the accumulators fit
  // beside the rest, and the hand-over (and the epilogue computed again per block that it brings,
  // below) is not repaid.
  static constexpr int kEntryRegisters = wgmma::registers_at_entry(kMaxTeam, kTeamsPerSM);
  static constexpr bool kHandsOverRegisters = WN >= kEntryRegisters;  // WN / 2 accumulators >= half
  static constexpr int kTileRegisters = wgmma::tile_registers(kMaxTeam, kTeamsPerSM);
  static_assert(kEntryRegisters >= wgmma::kProducerRegisters && kTileRegisters >= kEntryRegisters,
                "kgemm: the producer's warpgroup gives registers to the tiles'");
  static constexpr int kGroup = wgmma::kWarpgroupThreads;
  static constexpr int KB = Tile::staged_k;
  static constexpr bool kPersistent = true;
  // Two barriers per buffer: `full` (the producer's arrival and its copies' bytes: the slab
  // landed) and `empty` (every consumer thread's: the group reading it is done).
  static constexpr std::size_t kBarrierBytes = 2 * SlabBuffers * sizeof(std::uint64_t);

  int groups_n;   // tiles across the block
  int consumers;  // tiles of the block: the producer's rank comes after theirs
  bool a_batched, b_batched;  // whether the operand's tensor has a product per batch index (else one for all)
  bool stages_c;              // the config keeps scratch for the block's results (stages_results)
  bool c_by_copy;             // results leave through shared memory by bulk stores (stores_by_copy)
  const tensor_copy::Map* maps = nullptr;  // A's, B's and C's, in global memory (use_global_memory)
  int work_count;                          // work_items(): device code reads it for the walk

  WarpSpecializedGemm(const GemmArgs<half>& a, const Config& c)
      : Pipeline(a, c, wgmma::kInstructionK), groups_n(c.nb / WN), consumers(c.micro_tiles()),
        a_batched(batched(a.A, a.batch)), b_batched(batched(a.B, a.batch)), stages_c(stages_results(c)),
        c_by_copy(stores_by_copy(a, c)),
        work_count(this->work_items()) {}

  template <class T>
  KOKKOS_INLINE_FUNCTION static bool batched(const MatrixRef<T>& x, int batch) { return batch > 1 && x.batch_stride != 0; }

  // op(X) as a tensor of its columns (contiguous), rows and products, in boxes of 64 columns (a
  // swizzled row's 128 bytes) x `box_rows`. Extents of at least 1: with K = 0 nothing is copied,
  // and no map of A or B is made.
  template <class T>
  static tensor_copy::Tiles tiles_of(const MatrixRef<T>& x, int batch, int box_rows) {
    tensor_copy::Tiles t;
    const auto at_least_one = [](int n) { return std::uint64_t(n > 1 ? n : 1); };
    t.data = x.data;
    t.extents[0] = at_least_one(x.cols), t.extents[1] = at_least_one(x.rows);
    t.extents[2] = batched(x, batch) ? std::uint64_t(batch) : 1;
    t.strides[0] = std::uint64_t(x.row_stride) * sizeof(half);
    t.strides[1] = batched(x, batch) ? std::uint64_t(x.batch_stride) * sizeof(half) : t.strides[0];
    t.box[0] = std::uint32_t(wgmma::kTileK), t.box[1] = std::uint32_t(box_rows);
    return t;
  }
  // A's slab: the block's rows, 64 k each; B's: 64 k rows of 64 columns, nb / 64 boxes a slab.
  static tensor_copy::Tiles a_tiles(const GemmArgs<half>& a, int mb) { return tiles_of(a.A, a.batch, mb); }
  static tensor_copy::Tiles b_tiles(const GemmArgs<half>& a) { return tiles_of(a.B, a.batch, KB); }
  // C's: a tile's 64 rows, 64 columns a store.
  static tensor_copy::Tiles c_tiles(const GemmArgs<half>& a) { return tiles_of(a.C, a.batch, wgmma::kInstructionM); }

  // Whether a config keeps scratch for the block's results: where it does not split K (split K's
  // partial blocks are fp32, stored from registers). By the config alone, so that what it needs
  // does not depend on the call's C.
  static bool stages_results(const Config& c) { return c.ks == 1; }
  // Whether a tile's results go to C by bulk stores: each tile's warpgroup writes them to shared
  // memory and one of its threads hands them to the copy engine, so the warps go on to the next
  // block while C is written. Where the config stages results and C is not read (beta = 0) and
  // is row-major with 16-byte aligned data, rows and products. The stores clip at C's edges.
  // Otherwise each thread stores its pairs (store_results).
  static bool stores_by_copy(const GemmArgs<half>& a, const Config& c) {
    return stages_results(c) && a.beta == 0.0f && a.C.col_stride == 1 && tensor_copy::why_no_maps().empty() &&
           tensor_copy::describable(c_tiles(a));
  }

  // Whether bulk tensor copies can read the call's A and B (row-major, 16-byte aligned data, rows
  // and products) into the block's slabs.
  static bool applies(const GemmArgs<half>& a, const Config& c) {
    return tensor_copy::why_no_maps().empty() && a.A.col_stride == 1 && a.B.col_stride == 1 &&
           tensor_copy::describable(a_tiles(a, c.mb)) && tensor_copy::describable(b_tiles(a));
  }

  // The kernel's own scratch after the slab buffers: the block's results staged for C (on the
  // swizzle's period: slab buffers are) where the config stages them, then the barriers.
  KOKKOS_INLINE_FUNCTION std::size_t staged_c_bytes() const {
    return stages_c ? std::size_t(this->mb) * this->nb * sizeof(half) : 0;
  }
  KOKKOS_INLINE_FUNCTION std::size_t extra_bytes() const { return staged_c_bytes() + kBarrierBytes; }
  std::size_t scratch_bytes() const { return Pipeline::scratch_bytes(extra_bytes()); }

  // Split K's partial blocks, and the operands' tensor maps in global memory, on the launch's
  // stream. With K = 0 there are no maps of A and B (nothing is copied).
  void use_global_memory(const ExecSpace& space) {
    Pipeline::use_global_memory(space);
    if (this->slabs == 0 && !c_by_copy) return;
    tensor_copy::Map group[3] = {};
    if (this->slabs > 0) group[0] = tensor_copy::encode(a_tiles(this->args, this->mb)), group[1] = tensor_copy::encode(b_tiles(this->args));
    if (c_by_copy) group[2] = tensor_copy::encode(c_tiles(this->args));
#if defined(KGEMM_TENSOR_MAPS)
    maps = tensor_copy::maps_on(space, group);
#endif
  }

  KOKKOS_INLINE_FUNCTION half* a_slab(char* scratch, int buffer) const {
    return reinterpret_cast<half*>(scratch) + buffer * this->buffer_elements;
  }
  KOKKOS_INLINE_FUNCTION half* b_slab(char* scratch, int buffer) const {
    return a_slab(scratch, buffer) + this->a_slab_elements;
  }

#if defined(KGEMM_WGMMA)
  // The team's work items in turn: its league rank's, then one a league further each time.
  template <class Visit>
  KOKKOS_INLINE_FUNCTION void for_each_work_item(const Member& team, Visit&& visit) const {
    for (int work = team.league_rank(); work < work_count; work += team.league_size()) visit(this->origin(work, 0));
  }

  // One thread: the team's slabs, over its blocks in turn, go to the buffers in turn (slab t of
  // the team's walk to buffer t % SlabBuffers), each once the consumers gave it back; the copies
  // complete on the buffer's `full` barrier (no wait here). Slabs of the team's next block are
  // copied while the consumers store the last one's results.
  KOKKOS_INLINE_FUNCTION void produce(const Member& team, char* scratch, std::uint64_t* full, std::uint64_t* empty) const {
    if (this->slabs == 0) return;  // K = 0: no maps either
    const tensor_copy::Map* a_map = maps;
    const tensor_copy::Map* b_map = maps + 1;
    tensor_copy::prefetch(a_map);
    tensor_copy::prefetch(b_map);
    const int b_boxes = this->nb / wgmma::kTileK;
    const unsigned bytes = unsigned(this->mb + this->nb) * KB * sizeof(half);
    int t = 0;
    for_each_work_item(team, [&](const BlockOrigin& at) {
      const int a_product = a_batched ? at.b : 0, b_product = b_batched ? at.b : 0;
      const auto range = this->slab_range(at);
      for (int slab = range.first; slab < range.end; ++slab, ++t) {
        const int buffer = t % SlabBuffers, k0 = slab * KB;
        if (t >= SlabBuffers) mbarrier::wait(&empty[buffer], (t / SlabBuffers - 1) & 1);
        mbarrier::arrive_expecting(&full[buffer], bytes);
        tensor_copy::load_box(a_slab(scratch, buffer), a_map, &full[buffer], k0, at.m0, a_product);
        half* b = b_slab(scratch, buffer);
        for (int j = 0; j < b_boxes; ++j)
          tensor_copy::load_box(b + j * KB * wgmma::kTileK, b_map, &full[buffer], at.n0 + j * wgmma::kTileK, k0, b_product);
      }
    });
  }

  // The tile's warpgroup, over one block's `count` slabs, the team's slabs `t` onwards: each
  // slab's group issued, then the previous slab's waited for and its buffer given back; the
  // last one's once the tile is done.
  KOKKOS_INLINE_FUNCTION void consume(Tile& tile, char* scratch, std::uint64_t* full, std::uint64_t* empty, int row0,
                                      int col0, int t, int count) const {
    for (int s = 0; s < count; ++s, ++t) {
      const int buffer = t % SlabBuffers;
      mbarrier::wait(&full[buffer], (t / SlabBuffers) & 1);
      tile.multiply_staged(a_slab(scratch, buffer) + row0 * KB, b_slab(scratch, buffer), col0);
      if (s > 0) {
        tile.template wait_for_groups<1>();
        mbarrier::arrive(&empty[(t - 1) % SlabBuffers]);
      }
    }
    tile.template wait_for_groups<0>();
    if (count > 0) mbarrier::arrive(&empty[(t - 1) % SlabBuffers]);
  }

  // The tile's results (alpha applied) to C by bulk stores from `staged`, the tile's boxes: once
  // the tile's last stores have read them, the warpgroup writes the boxes, and one of its
  // threads (`storer`) stores them, not waiting. Named barrier `group + 1` is the warpgroup's.
  KOKKOS_INLINE_FUNCTION void store_by_copy(const Tile& tile, half* staged, const BlockOrigin& at, int row0, int col0,
                                            int group, bool storer) const {
    if (storer) tensor_copy::wait_stores_read<0>();
    wgmma::sync_warpgroup(group + 1);
    // 64 x 64 boxes in the swizzled layout the copies read, WN / 64 of them.
    constexpr wgmma::SwizzledSlab boxes{wgmma::kInstructionM, wgmma::kTileK, int(sizeof(half))};
    const float alpha = this->args.alpha;
    tile.for_each_pair([&](int i, int j, float first, float second) {
      const float run[2] = {first, second};
      Pipeline::store_packed(staged + boxes.offset(i, j), run, alpha);
    });
    wgmma::fence_shared_for_async();
    wgmma::sync_warpgroup(group + 1);
    if (!storer) return;
    const int product = batched(this->args.C, this->args.batch) ? at.b : 0;
    for (int box = 0; box < WN / wgmma::kTileK; ++box)
      tensor_copy::store_box(maps + 2, staged + box * wgmma::kInstructionM * wgmma::kTileK,
                             at.n0 + col0 + box * wgmma::kTileK, at.m0 + row0, product);
    tensor_copy::commit_stores();
  }
#endif

  KOKKOS_INLINE_FUNCTION void operator()(const Member& team) const {
#if defined(KGEMM_WGMMA)
    char* scratch = this->scratch(team, extra_bytes(), 0);
    half* staged_c = this->template extra<half>(scratch);
    std::uint64_t* full = reinterpret_cast<std::uint64_t*>(reinterpret_cast<char*>(staged_c) + staged_c_bytes());
    std::uint64_t* empty = full + SlabBuffers;
    if (team.team_rank() == 0) {
      for (int b = 0; b < SlabBuffers; ++b) mbarrier::init(&full[b], 1), mbarrier::init(&empty[b], kGroup * consumers);
      mbarrier::init_visible_to_copies();
    }
    team.team_barrier();
    const int rank = team.team_rank(), group = rank / kGroup;
    if (group == consumers) {
      if constexpr (kHandsOverRegisters) wgmma::shrink_registers<wgmma::kProducerRegisters>();
      if (rank == consumers * kGroup) produce(team, scratch, full, empty);
      return;
    }
    if constexpr (kHandsOverRegisters) wgmma::grow_registers<kTileRegisters>();
    const int row0 = group / groups_n * wgmma::kInstructionM, col0 = group % groups_n * WN;
    half* staged = staged_c + group * wgmma::kInstructionM * WN;
    const bool storer = rank % kGroup == 0;
    int t = 0;
    for_each_work_item(team, [&](const BlockOrigin& at) {
      const auto range = this->slab_range(at);
      // Where registers are handed over, the thread's place in its tile is hidden per block:
      // otherwise ptxas keeps the epilogue's offsets (computed from it) from the kernel's start,
      // on the stack. Elsewhere keeping them costs less than computing them again.
      int in_group = rank % kGroup;
      if constexpr (kHandsOverRegisters) wgmma::opaque(in_group);
      Tile tile(in_group);
      consume(tile, scratch, full, empty, row0, col0, t, range.end - range.first);
      t += range.end - range.first;
      if (c_by_copy) return store_by_copy(tile, staged, at, row0, col0, group, storer);
      this->template store_results<2>(at, [&](auto&& store) {
        tile.for_each_pair([&](int i, int j, float first, float second) {
          const float run[2] = {first, second};
          store(row0 + i, col0 + j, run);
        });
      });
    });
    if (c_by_copy && storer) tensor_copy::wait_stores_done();  // shared memory outlives the stores' reads
#else
    (void)team;
    Kokkos::abort("kgemm: warp-specialized configs (_ws) need device code compiled for sm_90a and a GPU of compute capability 9.0");
#endif
  }
};

}  // namespace kgemm

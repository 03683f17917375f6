#pragma once
// Which block of C each team works on, and over which slabs of K: a Kokkos team per MB x NB
// block (Config::bb products per team, product_team.hpp), K walked in KB-deep slabs and, with
// split K (Config::ks), several teams per block, each over a range of slabs of its own. Every
// GEMM kernel (slab_pipeline.hpp) and split K's sum (split_sum.hpp) place blocks through it.
#include <Kokkos_Core.hpp>

#include "kgemm/config.hpp"

namespace kgemm {

// Block coordinates of one product team: product b, first row m0 and first column n0 of its C
// block; the block's index over all products, which of its K ranges (split) the team walks,
// and whether it writes C (a product team past the batch's end walks the last block's slabs,
// for the team's barriers, and writes nothing).
struct BlockOrigin {
  int b, m0, n0;
  int block, split;
  bool writes;
};

// The K slabs the team of one block split walks: first ... end - 1.
struct SlabRange {
  int first, end;
};

// Kernel (the class deriving from here) holds the fields: the call (args), the block (mb, nb),
// the grid (blocks_m, blocks_n, products_per_team, walk_n_first) and the K split (slabs,
// slabs_per_split, splits: split_slabs). The kernel keeps them, not this class, in the order
// its GPU code was tuned with: the functor is the kernel's parameter block, and another layout
// moves ptxas' register allocation (docs/gpu-notes.md, s31).
template <class Kernel>
struct BlockSchedule {
  KOKKOS_INLINE_FUNCTION const Kernel& kernel() const { return static_cast<const Kernel&>(*this); }

  KOKKOS_INLINE_FUNCTION int blocks() const {
    const Kernel& k = kernel();
    return k.blocks_m * k.blocks_n * k.args.batch;
  }
  // A team's work item: the blocks of its products, one split of each. The grid launches a team
  // per work item; a persistent kernel as many as run at once, each walking work items the
  // league size apart.
  int work_items() const {
    const Kernel& k = kernel();
    return ceil_div(blocks(), k.products_per_team) * k.splits;
  }

  // Where product team `group` of work item `work` (a team's league rank, where each has one) works.
  KOKKOS_INLINE_FUNCTION BlockOrigin origin(int work, int group) const {
    const Kernel& k = kernel();
    const int wanted = work / k.splits * k.products_per_team + group;
    const bool writes = wanted < blocks();
    const int block = writes ? wanted : blocks() - 1;
    const BlockOrigin at = place(block);
    return {at.b, at.m0, at.n0, block, work % k.splits, writes};
  }
  // Where block `block` lies: a block's splits are neighbours, then consecutive blocks walk
  // across N where B is the smaller operand (N < M: batch 128's im2col GEMMs, most of batch 1's),
  // down M otherwise. Across N, a block row's A tile is reused while it is in cache: on host
  // spaces by the next blocks of the same thread, on GPUs by the teams in flight beside it, which
  // then read each A row panel from memory once and B, the smaller operand, from L2. Walking
  // down M would read all of A again for every block column, from memory once A outgrows the
  // caches (measured: docs/gpu-notes.md, "Measurements behind the code").
  KOKKOS_INLINE_FUNCTION BlockOrigin place(int block) const {
    const Kernel& k = kernel();
    const int per_product = k.blocks_m * k.blocks_n, in_product = block % per_product;
    if (k.walk_n_first)
      return {block / per_product, (in_product / k.blocks_n) * k.mb, (in_product % k.blocks_n) * k.nb, block, 0, true};
    return {block / per_product, (in_product % k.blocks_m) * k.mb, (in_product / k.blocks_m) * k.nb, block, 0, true};
  }

  KOKKOS_INLINE_FUNCTION SlabRange slab_range(const BlockOrigin& at) const {
    const Kernel& k = kernel();
    const int first = at.split * k.slabs_per_split;
    return {first, first + k.slabs_per_split < k.slabs ? first + k.slabs_per_split : k.slabs};
  }
};

}  // namespace kgemm

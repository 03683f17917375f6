#pragma once
// Staging for row-major operands whose rows are aligned 16-byte runs, copied as they are into
// row-major slabs (GPUs: both kernels' A and B wherever the caller's matrices allow it): every
// copy is one 16-byte run, the source's edges included, since a copy reads only the part of
// its run inside the source and zero-fills the rest (SpaceTraits::copy_run_zero_filled). No
// slab and no block takes another path. Threads share the tile out the same way in every block, so the
// plan is worked out on the host and read from the kernel's parameters; a thread keeps its
// source pointer and its place in the tile. SlabStager, whose plan each thread derives and keeps
// itself, costs the tensor-core kernels two to three times the instructions per copy and more
// registers (docs/gpu-notes.md, s9).
#include <Kokkos_Core.hpp>
#include <cstddef>
#include <cstdint>

#include "kgemm/matrix_ref.hpp"
#include "kgemm/spaces/space_traits.hpp"
#include "kgemm/spaces/warpgroup_mma.hpp"

namespace kgemm {

// Swizzled: slabs in wgmma's tiles (wgmma::SwizzledSlab, rows of `ld` elements) instead of
// row-major rows `ld` apart. A run's place in its row then depends on the row modulo 8, so the
// rows one thread copies must lie a multiple of 8 apart: its place stays the same from copy to
// copy. B slabs of BInFragmentKOrder (the fp16 warpgroup kernel's, which loads A's fragments
// itself) have their K rows in the fragment K order (wgmma::FragmentKOrder): a thread's slab
// rows row_step apart come from source rows row_step / 4 apart, so it still reads a fixed
// distance from copy to copy. Other slabs keep the operand's rows in order.
template <class ExecSpace, class Scalar, bool Swizzled = false, bool BInFragmentKOrder = false>
struct RunPlan {
  using Traits = SpaceTraits<ExecSpace>;
  static constexpr int kRun = Traits::copy_run_bytes > int(sizeof(Scalar)) ? Traits::copy_run_bytes / int(sizeof(Scalar)) : 1;

  // Whether tiles `cols` wide of src (row-major, 16-byte aligned rows and products) split into
  // runs that teams of `threads` cover a whole number of rows at a time: runs per row and
  // threads powers of two (shifts, not divisions), runs per row at most `threads`.
  static bool applies(const MatrixRef<const Scalar>& src, int cols, int threads) {
    const int runs = cols / kRun;
    const auto power_of_two = [](int n) { return n > 0 && (n & (n - 1)) == 0; };
    return Traits::copy_run_bytes == kRun * int(sizeof(Scalar)) && src.col_stride == 1 &&
           reinterpret_cast<std::uintptr_t>(src.data) % Traits::copy_run_bytes == 0 && src.row_stride % kRun == 0 &&
           src.batch_stride % kRun == 0 && cols % kRun == 0 && power_of_two(runs) && power_of_two(threads) &&
           threads >= runs && (!Swizzled || threads / runs % wgmma::kSwizzleRows == 0);
  }

  int rows = 0;       // tile rows
  int run_shift = 0;  // log2 of the runs per tile row
  int row_step = 1;   // rows between one thread's copies: the rows the team covers at a time
  int row_step_shift = 0;  // its log2
  int src_step_shift = 0;  // log2 of the source rows between one thread's copies
  int ld = 0;         // slab row length (swizzled: tile row length)
  int kb = 0;         // the slab's extent along K
  bool k_cols = false;
  std::ptrdiff_t src_row_step = 0, src_slab = 0;  // source distances: row_step rows, one slab
  int dst_row_step = 0;

  RunPlan() = default;
  // Tiles rows x cols of src into slab rows of `ld`, K along columns (k_cols, operand A) or rows.
  RunPlan(const MatrixRef<const Scalar>& src, int tile_rows, int cols, int threads, int slab_ld, bool along_cols)
      : rows(tile_rows), ld(slab_ld), kb(along_cols ? cols : tile_rows), k_cols(along_cols) {
    while ((kRun << run_shift) < cols) ++run_shift;
    row_step = threads >> run_shift;
    while ((1 << row_step_shift) < row_step) ++row_step_shift;
    src_step_shift = in_fragment_k_order() ? row_step_shift - 2 : row_step_shift;
    src_row_step = std::ptrdiff_t(1 << src_step_shift) * src.row_stride;
    src_slab = along_cols ? kb : kb * src.row_stride;
    dst_row_step = row_step * ld;
  }

  // One thread's copies of the tiles at (r0, c0) of src[b], slab after slab.
  struct Copies {
    const RunPlan& plan;
    const Scalar* from;  // the thread's first run in slab 0
    int col;             // its column in the tile
    int src_row0;        // the source row (from the tile origin) of its first row
    int dst0;            // the slab offset of its first run, worked out once a block (a swizzled one divides)
    int copies;          // its runs per slab: tile rows row_step apart from its first
    int valid_rows, valid_cols;  // source extents from the tile origin, slab 0

    // Copies slab `slab` into `to`; the depth is the plan's (runs past the source are zeros).
    KOKKOS_INLINE_FUNCTION void stage(Scalar* to, int slab, int /*depth*/) const {
      const int k0 = slab * plan.kb;
      const int rows_inside = plan.k_cols ? valid_rows : valid_rows - k0;
      const int cols_left = (plan.k_cols ? valid_cols - k0 : valid_cols) - col;
      const int run_bytes = (cols_left < kRun ? (cols_left > 0 ? cols_left : 0) : kRun) * int(sizeof(Scalar));
      const Scalar* src = from + slab * plan.src_slab;
      Scalar* dst = to + dst0;
      // Copy i reads source row src_row0 + i * 2^src_step_shift: inside while i < copies_inside.
      const int src_step = 1 << plan.src_step_shift;
      const int copies_inside = rows_inside > src_row0 ? (rows_inside - src_row0 + src_step - 1) >> plan.src_step_shift : 0;
      if (run_bytes == kRun * int(sizeof(Scalar)) && copies_inside >= copies) {
        // Every run whole and inside the source (all but a block's edge slabs): no predicate,
        // which would be most of the 3xTF32 warpgroup kernel's staging instructions (docs/gpu-notes.md, s19).
#pragma unroll 4
        for (int i = 0; i < copies; ++i, src += plan.src_row_step, dst += plan.dst_row_step)
          Traits::template copy_run_to_scratch<kRun>(dst, src);
      } else if (run_bytes == kRun * int(sizeof(Scalar))) {  // the thread's runs are whole where inside
        int i = 0;
        // Four at a time without a check between them, then the rest.
        for (; i + 4 <= copies; i += 4, src += 4 * plan.src_row_step, dst += 4 * plan.dst_row_step)
#pragma unroll
          for (int u = 0; u < 4; ++u)
            Traits::template copy_run_or_zeros<kRun>(dst + u * plan.dst_row_step, src + u * plan.src_row_step, i + u < copies_inside);
        for (; i < copies; ++i, src += plan.src_row_step, dst += plan.dst_row_step)
          Traits::template copy_run_or_zeros<kRun>(dst, src, i < copies_inside);
      } else {
        for (int i = 0; i < copies; ++i, src += plan.src_row_step, dst += plan.dst_row_step)
          Traits::template copy_run_zero_filled<kRun>(dst, src, i < copies_inside ? run_bytes : 0);
      }
    }

    // Calls f(run) for each of this thread's runs of the slab at `to` (their places are the same
    // every slab).
    template <class F>
    KOKKOS_INLINE_FUNCTION void for_each_run(const Scalar* to, F&& f) const {
      const Scalar* dst = to + dst0;
      for (int i = 0; i < copies; ++i, dst += plan.dst_row_step) f(dst);
    }
  };

  // Whether the slab's rows are K's in the fragment K order: B slabs of BInFragmentKOrder.
  KOKKOS_INLINE_FUNCTION bool in_fragment_k_order() const { return BInFragmentKOrder && !k_cols; }

  // Where tile element (row, col) goes in the slab.
  KOKKOS_INLINE_FUNCTION int slab_offset(int row, int col) const {
    if constexpr (Swizzled)
      return wgmma::SwizzledSlab{rows, ld, int(sizeof(Scalar))}.offset(row, col);
    else
      return row * ld + col;
  }

  template <class Team>
  KOKKOS_INLINE_FUNCTION Copies thread(const Team& team, const MatrixRef<const Scalar>& src, int b, int r0, int c0) const {
    const int rank = team.team_rank();
    const int row0 = rank >> run_shift, col = (rank & ((1 << run_shift) - 1)) * kRun;
    const int copies = row0 < rows ? (rows - row0 + row_step - 1) >> row_step_shift : 0;
    const int src_row0 = in_fragment_k_order() ? wgmma::FragmentKOrder{kb / wgmma::kInstructionK}.source_k(row0) : row0;
    return {*this, src.data + b * src.batch_stride + (r0 + src_row0) * src.row_stride + c0 + col, col, src_row0,
            slab_offset(row0, col), copies, src.rows - r0, src.cols - c0};
  }
};

}  // namespace kgemm

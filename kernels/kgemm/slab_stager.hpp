#pragma once
// One thread's share in staging an operand's K slabs into team scratch, worked out once per
// block. From slab to slab only the K offset moves, so staging a slab is a strided loop with no
// division and no address derived anew: a per-slab set-up (team split, bounds, alignment,
// addresses) would cost more instructions than the copies themselves (docs/gpu-notes.md, s4).
#include <Kokkos_Core.hpp>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "kgemm/matrix_ref.hpp"
#include "kgemm/spaces/space_traits.hpp"

namespace kgemm {

template <class ExecSpace, class Scalar, class Slab>
struct SlabStager {
  using Traits = SpaceTraits<ExecSpace>;
  // Elements one copy moves: runs contiguous in memory and in the slab go 16 bytes at a time on GPUs.
  static constexpr int kRun = Traits::copy_run_bytes > int(sizeof(Slab)) ? Traits::copy_run_bytes / int(sizeof(Slab)) : 1;
  // Runs whose source is not aligned to them go as realigned runs where the space has them.
  static constexpr bool kRealigns = kRun > 1 && Traits::template realigns_runs<Slab, Scalar>();

  // The tile is walked along a slow and a fast coordinate, the fast one being the source's
  // unit-stride dimension (so neighbouring threads read neighbouring addresses). Coordinates
  // count elements; along fast a copy moves `width` of them.
  const Scalar* from = nullptr;           // source of tile element (0, 0) in slab 0
  std::ptrdiff_t src_slow = 0, src_fast = 0;  // source distance per unit of each coordinate
  std::ptrdiff_t src_slab = 0;            // source distance between slabs (kb along K)
  int dst_slow = 0, dst_fast = 0;         // the same in the slab buffer
  int slow0 = 0, slow_step = 1, fast0 = 0, fast_step = 1;  // this thread's first coordinates, steps
  int slow_end = 0, fast_end = 0;         // tile extents (the one along K is the slab depth instead)
  int valid_slow = 0, valid_fast = 0;     // source extents from the tile origin, slab 0
  int kb = 0;
  bool k_slow = false;                    // K runs along the slow coordinate (else the fast one)
  bool contiguous = false;                // fast is unit-stride in the source and in the slab
  int width = 1;                          // kRun where contiguous, and aligned or realigned
  bool realigned = false;                 // runs read through aligned words (kRealigns)
  // Where the source already holds the tile as a row-major slab of the slab's type (unit
  // column stride) and the tile lies inside it off K, a space that reads slabs in place
  // (SpaceTraits::reads_slabs_in_place) multiplies it there: nothing is staged, and the slab's
  // rows are `ld_read` (the source's row stride) apart instead of the buffer's `ld`. A slab
  // whose rows run along K (B's: one row per k) is read in place only while its rows lie less
  // than SpaceTraits::in_place_k_row_bytes apart.
  bool in_place = false;
  int ld_read = 0;

  // Stages tiles rows x cols at (r0, c0) of src[b], K along columns (k_cols, operand A) or rows
  // (B); slab s starts kb (the tile's extent along K) further along K. Slabs are row-major:
  // element (r, c) at r * ld + c. exact_depth: slabs are read to their depth inside K, never
  // padded past it (else the slab is always staged, zero-filled).
  template <class Member>
  KOKKOS_INLINE_FUNCTION SlabStager(const Member& team, int ld, const MatrixRef<const Scalar>& src,
                                    int b, int r0, int c0, int rows, int cols, bool k_cols, bool exact_depth)
      : kb(k_cols ? cols : rows) {
    const bool fast_cols = src.col_stride == 1 || src.row_stride != 1;
    from = src.data + b * src.batch_stride + r0 * src.row_stride + c0 * src.col_stride;
    src_slow = fast_cols ? src.row_stride : src.col_stride;
    src_fast = fast_cols ? src.col_stride : src.row_stride;
    src_slab = kb * (k_cols ? src.col_stride : src.row_stride);
    const int dst_row = ld, dst_col = 1;
    dst_slow = fast_cols ? dst_row : dst_col;
    dst_fast = fast_cols ? dst_col : dst_row;
    slow_end = fast_cols ? rows : cols;
    fast_end = fast_cols ? cols : rows;
    valid_slow = fast_cols ? src.rows - r0 : src.cols - c0;
    valid_fast = fast_cols ? src.cols - c0 : src.rows - r0;
    k_slow = fast_cols != k_cols;
    contiguous = src_fast == 1 && dst_fast == 1;
    const bool aligned = is_aligned(from) && src_slow % kRun == 0 && src_slab % kRun == 0 && ld % kRun == 0;
    realigned = kRealigns && contiguous && !aligned && ld % kRun == 0;
    width = kRun > 1 && contiguous && (aligned || realigned) ? kRun : 1;
    const bool inside_off_k = k_cols ? src.rows - r0 >= rows : src.cols - c0 >= cols;
    const bool rows_apart_ok = k_cols || src.row_stride * std::ptrdiff_t(sizeof(Scalar)) < Traits::in_place_k_row_bytes;
    in_place = Traits::reads_slabs_in_place && std::is_same<Scalar, Slab>::value && exact_depth &&
               src.col_stride == 1 && src.row_stride <= INT_MAX && inside_off_k && rows_apart_ok;
    ld_read = in_place ? int(src.row_stride) : ld;

    // Copies per slab row (in widths) against the team: a team at least that large covers rows
    // side by side (threads past a whole number of rows idle), a smaller one walks each row.
    const int per_row = (fast_end + width - 1) / width, team_size = team.team_size(), rank = team.team_rank();
    if (team_size >= per_row) {
      const int rows_at_once = team_size / per_row;
      slow0 = rank < rows_at_once * per_row ? rank / per_row : INT_MAX / 2;
      slow_step = rows_at_once;
      fast0 = rank % per_row * width;
      fast_step = per_row * width;
    } else {
      slow0 = 0, slow_step = 1;
      fast0 = rank * width;
      fast_step = team_size * width;
    }
  }

  // The slab the kernel multiplies, `ld_read` apart: where it lies in the source, or `buffer`.
  KOKKOS_INLINE_FUNCTION const Slab* slab_at(const Slab* buffer, int slab) const {
    if constexpr (Traits::reads_slabs_in_place && std::is_same<Scalar, Slab>::value)
      if (in_place) return from + slab * src_slab;
    return buffer;
  }

  // Copies slab `slab` (depth along K: the slab's extent rounded up) into `to`, zero-filling
  // what lies outside the source; nothing for a slab read in place. Copies may complete
  // asynchronously (SpaceTraits).
  KOKKOS_INLINE_FUNCTION void stage(Slab* to, int slab, int depth) const {
    if (Traits::reads_slabs_in_place && in_place) return;
    // Unit strides known at compile time: 16-byte copies on GPUs, vectorised loops on CPUs.
    if constexpr (kRealigns)
      if (realigned) return stage_in<kRun, true, true>(to, slab, depth);
    if (width == kRun && contiguous)
      stage_in<kRun, true>(to, slab, depth);
    else if (contiguous)
      stage_in<1, true>(to, slab, depth);
    else
      stage_in<1, false>(to, slab, depth);
  }

 private:
  template <int U, int W, bool Realigned>
  KOKKOS_INLINE_FUNCTION static void copy_runs(Slab* to, int to_step, const Scalar* from, std::ptrdiff_t from_step) {
    if constexpr (Realigned)
      Traits::template copy_realigned_runs_to_scratch<U, W>(to, to_step, from, from_step);
    else
      Traits::template copy_runs_to_scratch<U, W>(to, to_step, from, from_step);
  }

  template <int W, bool Contiguous, bool Realigned = false>
  KOKKOS_INLINE_FUNCTION void stage_in(Slab* to, int slab, int depth) const {
    const int to_fast = Contiguous ? 1 : dst_fast;
    const std::ptrdiff_t from_fast = Contiguous ? 1 : src_fast;
    const int slow_n = k_slow ? depth : slow_end, fast_n = k_slow ? fast_end : depth;
    if (slow0 >= slow_n) return;  // an idle thread
    const Scalar* source = from + slab * src_slab;
    const int k0 = slab * kb;
    const int slow_valid = k_slow ? valid_slow - k0 : valid_slow, fast_valid = k_slow ? valid_fast : valid_fast - k0;
    // Inside the source with one position per slow row (GPU teams): a flat loop of copies,
    // pointers stepped, no bounds to check.
    if (fast_step >= fast_n && slow_n <= slow_valid && fast0 + W <= fast_valid) {
      const Scalar* src = source + slow0 * src_slow + fast0 * from_fast;
      Slab* dst = to + slow0 * dst_slow + fast0 * to_fast;
      const std::ptrdiff_t src_step = slow_step * src_slow;
      const int dst_step = slow_step * dst_slow;
      constexpr int U = Traits::runs_in_flight;
      int p = slow0;
      for (; p + (U - 1) * slow_step < slow_n; p += U * slow_step, src += U * src_step, dst += U * dst_step)
        copy_runs<U, W, Realigned>(dst, dst_step, src, src_step);
      for (; p < slow_n; p += slow_step, src += src_step, dst += dst_step)
        copy_runs<1, W, Realigned>(dst, dst_step, src, src_step);
      return;
    }
    for (int p = slow0; p < slow_n; p += slow_step) {
      const Scalar* src_row = source + p * src_slow;
      Slab* dst_row = to + p * dst_slow;
      for (int q = fast0; q < fast_n; q += fast_step) {
        if (p < slow_valid && q + W <= fast_valid) {
          if constexpr (Realigned)
            copy_runs<1, W, true>(dst_row + q, 0, src_row + q, 0);
          else if constexpr (W > 1)
            Traits::template copy_run_to_scratch<W>(dst_row + q, src_row + q);
          else
            Traits::copy_to_scratch(dst_row + q * to_fast, src_row + q * from_fast);
        } else {
          for (int e = 0; e < W && q + e < fast_n; ++e) {
            Slab* slot = dst_row + (q + e) * to_fast;
            if (p < slow_valid && q + e < fast_valid)
              Traits::copy_to_scratch(slot, src_row + (q + e) * from_fast);
            else
              *slot = Slab(0);
          }
        }
      }
    }
  }

  KOKKOS_INLINE_FUNCTION static bool is_aligned(const Scalar* p) {
    return reinterpret_cast<std::uintptr_t>(p) % (kRun * sizeof(Scalar)) == 0;
  }
};

}  // namespace kgemm

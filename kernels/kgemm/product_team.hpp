#pragma once
// A Kokkos team cut into Config::bb product teams: each multiplies one product of the batch on
// team_size / bb consecutive threads. One team per 8 x 8 product would launch GPU blocks of a
// few threads (a block holds one team, and an SM runs at most 32 blocks). Products of a batch
// share their shape, so every product team walks the same slabs and meets the team's barriers
// in step.
#include <Kokkos_Core.hpp>

namespace kgemm {

template <class Member>
struct ProductTeam {
  const Member& team;
  int size;   // threads per product
  int group;  // which of the team's products this thread works on

  KOKKOS_INLINE_FUNCTION ProductTeam(const Member& t, int threads_per_product)
      : team(t), size(threads_per_product), group(t.team_rank() / threads_per_product) {}

  KOKKOS_INLINE_FUNCTION int team_rank() const { return team.team_rank() - group * size; }
  KOKKOS_INLINE_FUNCTION int team_size() const { return size; }
  KOKKOS_INLINE_FUNCTION void team_barrier() const { team.team_barrier(); }
};

}  // namespace kgemm

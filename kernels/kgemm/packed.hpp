#pragma once
// R consecutive elements moved as one aligned access: a 16-byte run is one LDS.128 / STG.128 on
// GPUs instead of four. Callers make sure the address is a multiple of the run's size.
namespace kgemm {

template <class T, int R>
struct alignas(sizeof(T) * R) Packed {
  T v[R];
};

}  // namespace kgemm

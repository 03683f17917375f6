#pragma once
// The warp-level tensor-core instructions kgemm's warp tiles are made of, as plain CUDA device
// functions (no Kokkos): `ldmatrix` (8 x 8 matrices of 16-bit elements from shared memory into
// the documented mma fragment layout), `mma.sync` m16n8k16 (fp16 in, fp32 accumulate) and, from
// compute capability 8.0 (KGEMM_MMA_TF32), `mma.sync` m16n8k8 on TF32 operands with the fp32 to
// TF32 rounding that splits an fp32 value into two TF32 parts. Defined only where the device code
// is compiled for compute capability 7.5 or newer (KGEMM_MMA); any other pass, the host's
// included, sees nothing.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
#define KGEMM_MMA 1

namespace kgemm {
namespace detail {
// Four 8 x 8 matrices of 16-bit elements from shared memory; each lane names one matrix row
// (lanes 8q .. 8q + 7 the rows of matrix q). `trans` hands each lane a column pair instead.
template <bool Trans>
__device__ inline void load_matrices(unsigned (&r)[4], unsigned shared_address) {
  if constexpr (Trans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address));
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address));
}

// d += a (16 x 16, row-major fragment) * b (16 x 8, column-major fragment), fp32 accumulation.
// Turing has the k = 8 shape only: two of them.
__device__ inline void multiply_accumulate(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#if __CUDA_ARCH__ >= 800
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  for (int h = 0; h < 2; ++h)
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[2 * h]), "r"(a[2 * h + 1]), "r"(b[h]));
#endif
}

#if __CUDA_ARCH__ >= 800
#define KGEMM_MMA_TF32 1
// x rounded to the nearest TF32 value (10 mantissa bits, ties away from zero), as the bits of an
// fp32 register: exact input for the TF32 mma, whose products of two such values are exact in fp32.
__device__ inline unsigned to_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return r;
}

// d += a (16 x 8, row-major fragment) * b (8 x 8, column-major fragment) on TF32 operands, fp32
// accumulation. Lane l holds a = A(l/4, l%4), A(l/4 + 8, l%4), A(l/4, l%4 + 4), A(l/4 + 8, l%4 + 4)
// and b = B(l%4, l/4), B(l%4 + 4, l/4); d is laid out as m16n8k16's.
__device__ inline void multiply_accumulate_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%0, %1, %2, %3};\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
#endif

__device__ inline unsigned shared_address(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }
}  // namespace detail
}  // namespace kgemm
#endif

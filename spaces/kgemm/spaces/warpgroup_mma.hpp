#pragma once
// Hopper's warpgroup MMA (`wgmma`, PTX ISA 8.0, sm_90a only) as plain CUDA device functions (no
// Kokkos): four consecutive warps, starting at a warp index divisible by 4, multiply a 64 x 16
// fp16 slice of A by a 16 x N slice of B, both read by the tensor cores straight from shared
// memory through 64-bit matrix descriptors, into a 64 x N fp32 accumulator held in registers
// (N / 2 floats a thread). The instructions are asynchronous: `fence` orders register and
// shared-memory accesses before them, `commit` closes a group of them, `wait<n>` blocks until at
// most n groups are still in flight.
//
// Operands lie in shared memory in the swizzled layouts the tensor cores read. A tile is made of
// rows of 128 (or 64) bytes, 64 (32) fp16 each, and the 16-byte chunk c of row r sits at chunk
// c ^ (r % 8) (or c ^ (r / 2 % 4)), so that the rows one access reads fill all banks; the pattern
// repeats every 8 rows (1024 or 512 bytes), where a tile must start. K-major (A: row i holds
// A(i, k) over k): the rows are the operand's M (or N) rows, K runs along them, one tile per 64
// (32) k. MN-major (B as it is stored row-major: row k holds B(k, j) over j): the rows are K's,
// N runs along them, one tile per 64 columns.
//
// The instructions exist only where device code is compiled for sm_90a (`-gencode
// arch=compute_90a,code=sm_90a`, which defines __CUDA_ARCH_FEAT_SM90_ALL); then KGEMM_WGMMA is
// defined. Every other pass, the host's and plain sm_90's included, sees only the layout helpers.
#include <cstdint>

#if defined(__CUDACC__)
#define KGEMM_WGMMA_HOST_DEVICE __host__ __device__
#else
#define KGEMM_WGMMA_HOST_DEVICE
#endif

namespace kgemm {
namespace wgmma {

constexpr int kTileK = 64;              // fp16 elements in one 128-byte swizzled row
constexpr int kInstructionK = 16;       // k of one wgmma.m64nNk16
constexpr int kTf32InstructionK = 8;    // k of one TF32 wgmma.m64nNk8
constexpr int kInstructionM = 64;       // rows of A (and of C) one wgmma multiplies
constexpr int kWarpgroupThreads = 128;  // four warps issue one wgmma
constexpr int kSwizzleAtomBytes = 1024;  // 8 rows x 128 bytes: the 128-byte swizzle's period
constexpr int kSwizzleRows = 8;          // rows of one period, in either swizzle

// The swizzle on a byte offset inside a tile of `row_bytes` (128 or 64) rows: bits 4.. (the
// 16-byte chunk) xor bits 7.. (the row, or the row pair).
KGEMM_WGMMA_HOST_DEVICE constexpr unsigned swizzle(unsigned byte_offset, int row_bytes) {
  return byte_offset ^ ((byte_offset >> 3) & unsigned(row_bytes - 16));
}

// Offset in elements of (row, k) in a K-major tile of rows of kTileK fp16, 128-byte swizzle.
KGEMM_WGMMA_HOST_DEVICE constexpr int swizzled_offset(int row, int k) {
  return int(swizzle(unsigned(row * kTileK + k) * 2, 2 * kTileK) / 2);
}

// A slab operand of `rows` rows in tiles of `row_elements` columns of `element_bytes` each
// (rows of 128 or 64 bytes: 64 or 32 fp16, 32 or 16 fp32): element (r, c) in tile
// c / row_elements, tiles rows x row_elements apart.
struct SwizzledSlab {
  int rows, row_elements, element_bytes;
  KGEMM_WGMMA_HOST_DEVICE constexpr int offset(int r, int c) const {
    const int row_bytes = element_bytes * row_elements;
    const int in_tile = int(swizzle(unsigned(r * row_elements + c % row_elements) * element_bytes, row_bytes) / element_bytes);
    return c / row_elements * rows * row_elements + in_tile;
  }
};

// The K order of a slab whose A fragments each thread loads from memory itself (wgmma with A in
// registers). In step s (the slab's k 16 s ... 16 s + 15 as the instructions see them), the
// threads of column q = lane % 4 of a warp hold the k pairs 2 q and 2 q + 8 of the step. The
// slab's k are a permutation of the operand's, chosen so that those are the operand's k
// 4 (steps q + s) ... + 3: each thread's k of every step lie in one run of 4 steps elements of
// each of its rows, read with 16-byte loads instead of 4-byte ones. B's slab rows are staged in
// the same order (slab row r holds the operand's row source_k(r)), which keeps the product.
// Slab rows 8 j apart hold operand rows 2 j apart, so a stager whose threads copy rows a
// multiple of 8 apart (as the swizzle's period asks) reads its rows a fixed distance apart.
struct FragmentKOrder {
  int steps;  // 16-deep steps of the slab
  // The operand's k (from the slab's start) at slab k `r`.
  KGEMM_WGMMA_HOST_DEVICE constexpr int source_k(int r) const { return 4 * steps * (r / 2 % 4) + 2 * (r / 8) + r % 2; }
  // The first of the operand's k that threads of column q hold.
  KGEMM_WGMMA_HOST_DEVICE constexpr int first_k(int q) const { return 4 * steps * q; }
};

// The shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format") of an operand
// starting at `shared_address` (a 32-bit shared-window address, 16-byte aligned; the tile it is
// in aligned to the swizzle's period). Bits 0-13: address / 16; 16-29: leading byte offset / 16;
// 32-45: stride byte offset / 16; 49-51: base offset (0: the tile is aligned); 62-63: swizzle
// mode (1: 128 bytes, 2: 64 bytes).
KGEMM_WGMMA_HOST_DEVICE constexpr std::uint64_t descriptor(unsigned shared_address, unsigned leading_bytes,
                                                          unsigned stride_bytes, int row_bytes) {
  return (std::uint64_t((shared_address & 0x3FFFF) >> 4)) | (std::uint64_t((leading_bytes >> 4) & 0x3FFF) << 16) |
         (std::uint64_t((stride_bytes >> 4) & 0x3FFF) << 32) | (std::uint64_t(row_bytes == 128 ? 1 : 2) << 62);
}
// K-major: the leading offset is unused by swizzled layouts (1 by convention), the stride is
// from one 8-row group to the next.
KGEMM_WGMMA_HOST_DEVICE constexpr std::uint64_t descriptor_k_major(unsigned shared_address, int row_bytes) {
  return descriptor(shared_address, 16, kSwizzleRows * row_bytes, row_bytes);
}
// MN-major, 128-byte swizzle: the leading offset goes from one 64-column tile to the next
// (`tile_bytes`), the stride from one group of 8 k rows to the next.
KGEMM_WGMMA_HOST_DEVICE constexpr std::uint64_t descriptor_mn_major(unsigned shared_address, unsigned tile_bytes) {
  return descriptor(shared_address, tile_bytes, kSwizzleAtomBytes, 128);
}

// Registers handed between a team's warpgroups (setmaxnreg): a warp-specialized team's producer
// needs few, and the tiles' accumulators take the rest. A kernel with launch bounds of `threads`
// a team and `teams` a multiprocessor starts each thread with its share of the register file, in
// steps of 8 (what ptxas fits such a kernel to where it hands registers over); the producer's
// warpgroup gives all but kProducerRegisters back and the tiles' warpgroups share what it gave.
constexpr int kRegisterFile = 64 * 1024;  // 32-bit registers of a multiprocessor
constexpr int kRegisterStep = 8;          // setmaxnreg counts in steps of 8, 24 to 256
constexpr int kProducerRegisters = 40;    // the copy thread's loop and addresses
KGEMM_WGMMA_HOST_DEVICE constexpr int registers_at_entry(int threads, int teams) {
  return kRegisterFile / (threads * teams) / kRegisterStep * kRegisterStep;
}
// Each tile thread's registers once the producer's warpgroup gave its own back: as many as the
// largest team the bounds allow leaves them (a smaller team leaves more in the pool than it takes).
KGEMM_WGMMA_HOST_DEVICE constexpr int tile_registers(int threads, int teams) {
  const int shared = (registers_at_entry(threads, teams) * threads - kWarpgroupThreads * kProducerRegisters) /
                     (threads - kWarpgroupThreads) / kRegisterStep * kRegisterStep;
  return shared < 256 ? shared : 256;
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define KGEMM_WGMMA 1

// Orders this thread's earlier register and shared-memory accesses before the warpgroup's next
// wgmma (needed before the first one, and after the accumulators were touched by other code).
__device__ inline void fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ inline void commit_group() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int InFlight>
__device__ inline void wait_group() {
  static_assert(InFlight >= 0 && InFlight <= 7, "wgmma.wait_group takes 0..7");
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(InFlight) : "memory");
}

// Shared memory written with ordinary stores must be made visible to the tensor cores (the async
// proxy) by each writing thread before the barrier that precedes the wgmma reading it.
__device__ inline void fence_shared_for_async() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }

// Hides x's value from the optimizer where it is called: values derived from it are computed
// again after this point instead of kept from before (where registers are short, kept values go
// to the stack).
__device__ inline void opaque(int& x) { asm volatile("" : "+r"(x)); }

// The warpgroup's threads keep `Count` registers each (every thread of it calls): shrink_registers
// gives the rest back to the team's pool, grow_registers waits until the pool has them.
template <int Count>
__device__ inline void shrink_registers() {
  static_assert(Count >= 24 && Count <= 256 && Count % kRegisterStep == 0, "setmaxnreg takes 24..256 in steps of 8");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Count));
}
template <int Count>
__device__ inline void grow_registers() {
  static_assert(Count >= 24 && Count <= 256 && Count % kRegisterStep == 0, "setmaxnreg takes 24..256 in steps of 8");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Count));
}

// Waits for the warpgroup's threads alone (named barrier `id`, 1 to 15: 0 is the team's), where
// one warpgroup hands shared memory to another unit (a bulk store) without stopping the team.
__device__ inline void sync_warpgroup(int id) { asm volatile("bar.sync %0, 128;\n" ::"r"(id) : "memory"); }

// Keeps the compiler from moving the accumulators' reads or writes across a wgmma boundary:
// call on the accumulators before fence() and after wait_group() (between fence() and the
// wgmma it would count as a write of theirs, which serializes the wgmma: ptxas warning C7515).
template <int Count>
__device__ inline void pin_accumulators(float (&d)[Count]) {
#pragma unroll
  for (int i = 0; i < Count; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// The same for A fragments held in registers: they must not move or be reused while a
// multiplication reading them is in flight.
template <int Steps>
__device__ inline void pin_fragments(unsigned (&a)[Steps][4]) {
#pragma unroll
  for (int s = 0; s < Steps; ++s)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(a[s][e])::"memory");
}

#define KGEMM_WGMMA_REGS_0_15 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define KGEMM_WGMMA_REGS_16_31 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define KGEMM_WGMMA_REGS_32_47 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47"
#define KGEMM_WGMMA_REGS_48_63 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define KGEMM_WGMMA_REGS_64_79 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79"
#define KGEMM_WGMMA_REGS_80_95 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
#define KGEMM_WGMMA_REGS_96_111 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111"
#define KGEMM_WGMMA_REGS_112_127 \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define KGEMM_WGMMA_REGS_32 KGEMM_WGMMA_REGS_0_15 ", " KGEMM_WGMMA_REGS_16_31
#define KGEMM_WGMMA_REGS_64 KGEMM_WGMMA_REGS_32 ", " KGEMM_WGMMA_REGS_32_47 ", " KGEMM_WGMMA_REGS_48_63
#define KGEMM_WGMMA_REGS_128                                                                                    \
  KGEMM_WGMMA_REGS_64 ", " KGEMM_WGMMA_REGS_64_79 ", " KGEMM_WGMMA_REGS_80_95 ", " KGEMM_WGMMA_REGS_96_111 ", " \
      KGEMM_WGMMA_REGS_112_127
#define KGEMM_WGMMA_D8(i)                                                                                  \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), \
      "+f"(d[i + 7])
#define KGEMM_WGMMA_D32(i) KGEMM_WGMMA_D8(i), KGEMM_WGMMA_D8(i + 8), KGEMM_WGMMA_D8(i + 16), KGEMM_WGMMA_D8(i + 24)
// One wgmma.mma_async m64nNk16, f32 += f16 * f16, operands from descriptors, A K-major, B
// K-major or (operand TRANS_B = 1) MN-major; the scale-d predicate (operand SCALE) chooses
// D = A B + D or D = A B.
#define KGEMM_WGMMA_M64K16_F32_F16(N, REGS, DESC_A, DESC_B, SCALE, TRANS_B, ...)                           \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" SCALE ", 0;\n"                                         \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.f16.f16 {" REGS "}, %" DESC_A ", %" DESC_B \
               ", p, 1, 1, 0, %" TRANS_B ";\n}\n"                                                           \
               : __VA_ARGS__                                                                                \
               : "l"(desc_a), "l"(desc_b), "r"(static_cast<int>(accumulate)), "n"(int(BMnMajor)))

// d (64 x N, this thread's N / 2 values) = A (64 x 16 at desc_a) * B (16 x N at desc_b)
// [+ d if accumulate]. Thread t of the warpgroup holds, for each 8-column group j, d[4j], d[4j+1]
// at row 16 (t / 32) + (t % 32) / 4, columns 8j + 2 (t % 4) + {0, 1}, and d[4j+2], d[4j+3] eight
// rows below (PTX ISA, "Register Fragments for wgmma .m64nNk16"). BMnMajor: B's descriptor is
// MN-major (rows of k), else K-major.
template <int N, bool BMnMajor = false>
__device__ inline void mma_async(float (&d)[N / 2], std::uint64_t desc_a, std::uint64_t desc_b, bool accumulate) {
  static_assert(N == 64 || N == 128 || N == 256, "wgmma tiles here are 64 x 64, 64 x 128 or 64 x 256");
  if constexpr (N == 64)
    KGEMM_WGMMA_M64K16_F32_F16(64, KGEMM_WGMMA_REGS_32, "32", "33", "34", "35", KGEMM_WGMMA_D32(0));
  else if constexpr (N == 128)
    KGEMM_WGMMA_M64K16_F32_F16(128, KGEMM_WGMMA_REGS_64, "64", "65", "66", "67", KGEMM_WGMMA_D32(0), KGEMM_WGMMA_D32(32));
  else
    KGEMM_WGMMA_M64K16_F32_F16(256, KGEMM_WGMMA_REGS_128, "128", "129", "130", "131", KGEMM_WGMMA_D32(0),
                               KGEMM_WGMMA_D32(32), KGEMM_WGMMA_D32(64), KGEMM_WGMMA_D32(96));
}

// The same with A from registers (this thread's four fp16 pairs of the 64 x 16 slice, in
// mma.sync's m16n8k16 A-fragment layout for the warp's 16 rows) and B from its MN-major
// descriptor: D = A B [+ D].
#define KGEMM_WGMMA_M64K16_RS(N, REGS, A, DESC_B, SCALE, ...)                                               \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" SCALE ", 0;\n"                                         \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.f16.f16 {" REGS "}, {" A "}, %" DESC_B         \
               ", p, 1, 1, 1;\n}\n"                                                                        \
               : __VA_ARGS__                                                                                \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(static_cast<int>(accumulate)))

// d (64 x N) = A (64 x 16, in registers: a[0..3] hold, for the warp's rows 16 w + l / 4 and + 8,
// k pairs 2 (l % 4) and 2 (l % 4) + 8: {row, k lo}, {row + 8, k lo}, {row, k hi}, {row + 8, k hi})
// * B (16 x N, MN-major at desc_b) [+ d]. The A registers must keep their values until the
// multiplication is waited for.
template <int N>
__device__ inline void mma_async_a_in_registers(float (&d)[N / 2], const unsigned (&a)[4], std::uint64_t desc_b,
                                                bool accumulate) {
  static_assert(N == 64 || N == 128, "warpgroup tiles with A in registers are 64 x 64 or 64 x 128");
  if constexpr (N == 64)
    KGEMM_WGMMA_M64K16_RS(64, KGEMM_WGMMA_REGS_32, "%32, %33, %34, %35", "36", "37", KGEMM_WGMMA_D32(0));
  else
    KGEMM_WGMMA_M64K16_RS(128, KGEMM_WGMMA_REGS_64, "%64, %65, %66, %67", "68", "69", KGEMM_WGMMA_D32(0),
                          KGEMM_WGMMA_D32(32));
}

// What the tensor cores drop of an fp32 operand they read from shared memory as TF32 (they
// ignore its 13 low mantissa bits): x minus x with those bits cleared, exact in fp32. 3xTF32
// stores it beside the operand to multiply it as a third product's.
__device__ inline float tf32_truncated_rest(float x) { return x - __uint_as_float(__float_as_uint(x) & 0xFFFFE000u); }

// TF32 (fp32 data, the tensor cores reading 19 of its bits), k 8 per instruction, A from
// registers, B K-major only: d (64 x 128) = A (64 x 8 tf32 in registers: a[0..3] hold, for the
// warp's rows 16 w + l / 4 and + 8, k l % 4 and l % 4 + 4: {row, k}, {row + 8, k}, {row, k + 4},
// {row + 8, k + 4}) * B (8 x 128, K-major at desc_b) [+ d]. The accumulators lie as in
// mma_async<128>. A's registers must keep their values until the multiplication is waited for.
__device__ inline void mma_async_tf32_a_in_registers(float (&d)[64], const unsigned (&a)[4], std::uint64_t desc_b,
                                                     bool accumulate) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
               "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {" KGEMM_WGMMA_REGS_64
               "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
               : KGEMM_WGMMA_D32(0), KGEMM_WGMMA_D32(32)
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(static_cast<int>(accumulate)));
}

#undef KGEMM_WGMMA_M64K16_RS
#undef KGEMM_WGMMA_M64K16_F32_F16
#undef KGEMM_WGMMA_D32
#undef KGEMM_WGMMA_D8
#undef KGEMM_WGMMA_REGS_128
#undef KGEMM_WGMMA_REGS_64
#undef KGEMM_WGMMA_REGS_32
#undef KGEMM_WGMMA_REGS_112_127
#undef KGEMM_WGMMA_REGS_96_111
#undef KGEMM_WGMMA_REGS_80_95
#undef KGEMM_WGMMA_REGS_64_79
#undef KGEMM_WGMMA_REGS_48_63
#undef KGEMM_WGMMA_REGS_32_47
#undef KGEMM_WGMMA_REGS_16_31
#undef KGEMM_WGMMA_REGS_0_15
#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace wgmma
}  // namespace kgemm

#undef KGEMM_WGMMA_HOST_DEVICE

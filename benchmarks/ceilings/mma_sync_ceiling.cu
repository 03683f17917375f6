// mma_sync_ceiling: the peak rate of mma.sync.m16n8k16 (fp16 in, fp32 accumulate), the
// instruction kgemm's tensor-core kernel runs, from registers with no memory traffic: each warp
// runs 8 independent accumulator chains; 4 to 32 warps per SM. The ceiling kgemm's fp16
// GFLOP/s are measured against (docs/gpu-notes.md). Standalone, built on the GPU machine:
//   nvcc -O3 -arch=sm_90 -o mma_sync_ceiling mma_sync_ceiling.cu && ./mma_sync_ceiling
#include <cstdio>
#include <cuda_runtime.h>
__global__ void mma_loop(float* out, int iters) {
  unsigned a0 = threadIdx.x * 0x3c003c00u, a1 = a0 ^ 1u, a2 = a0 ^ 2u, a3 = a0 ^ 3u, b0 = a0 ^ 4u, b1 = a0 ^ 5u;
  float d[8][4] = {};
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < 8; ++c)
      asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                   : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
                   : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
  float s = 0;
  for (int c = 0; c < 8; ++c) for (int e = 0; e < 4; ++e) s += d[c][e];
  if (s == 1234.5f) out[0] = s;
}
int main() {
  int sms = 0; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float* out; cudaMalloc(&out, 4);
  const int iters = 8192;
  for (int warps : {4, 8, 12, 16, 32}) {
    const int blocks = sms * (warps / 4);
    mma_loop<<<blocks, 128>>>(out, 16);
    cudaEvent_t s, e; cudaEventCreate(&s); cudaEventCreate(&e);
    cudaEventRecord(s); mma_loop<<<blocks, 128>>>(out, iters); cudaEventRecord(e); cudaEventSynchronize(e);
    float ms; cudaEventElapsedTime(&ms, s, e);
    const double flops = double(blocks) * 4 * iters * 8 * 2.0 * 16 * 8 * 16;
    printf("mma.sync m16n8k16 f32acc: %2d warps/SM: %.1f TFLOP/s (%s)\n", warps, flops / ms * 1e-9, cudaGetErrorString(cudaGetLastError()));
  }
}

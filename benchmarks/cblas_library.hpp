#pragma once
// The CBLAS library a host peer (cblas_peer.cpp) is compiled against: benchmarks/CMakeLists.txt
// builds that one source once per library found, defining one of KGEMM_CBLAS_OPENBLAS,
// KGEMM_CBLAS_MKL or KGEMM_CBLAS_BLIS. Here is all that differs between them: the header, the
// row's impl name, the thread control, what the library says about itself, and its ways of
// computing a batch of products: its call for one where it has one (else a loop of cblas_sgemm,
// which is what a user of that library would write), and MKL's small-matrix JIT.
#include <benchmark/benchmark.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#if defined(KGEMM_CBLAS_OPENBLAS)
#include <cblas.h>
#elif defined(KGEMM_CBLAS_MKL)
#include <mkl.h>
#elif defined(KGEMM_CBLAS_BLIS)
#include <blis.h>  // BLIS' own cblas.h comes with it (BLIS is built with its CBLAS layer)
#else
#error "define one of KGEMM_CBLAS_OPENBLAS, KGEMM_CBLAS_MKL, KGEMM_CBLAS_BLIS"
#endif

namespace kgemm_bench::cblas_library {

// `batch` row-major products C[p] = A[p] B[p] of m x k by k x n, each operand unit-stride in its rows.
struct Products {
  int m = 0, n = 0, k = 0;
  std::vector<const float*> a, b;
  std::vector<float*> c;
};

inline void sgemm(int m, int n, int k, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
}

inline void loop_of_sgemm(const Products& p) {
  for (std::size_t i = 0; i < p.c.size(); ++i) sgemm(p.m, p.n, p.k, p.a[i], p.b[i], p.c[i]);
}

// A row's call, made once per row (a kernel generated for its shape, say): computes one set of
// the row's products.
using Call = std::function<void(const Products&)>;

// One way the library computes a batched row, whose rows carry `impl`: `call` says what it calls
// (--help); `prepare(m, n, k)` makes the row's Call for products of that shape, or an empty Call
// where this way does not apply to them (`not_applied` says why).
struct BatchedImpl {
  const char* impl;
  const char* call;
  Call (*prepare)(int m, int n, int k);
  const char* not_applied = "";
};

// prepare for a call that needs nothing made per shape.
template <void (*batch_call)(const Products&)>
Call shape_free(int, int, int) {
  return batch_call;
}

#if defined(KGEMM_CBLAS_OPENBLAS)

inline const char* const kImpl = "openblas";
inline void set_threads(int threads) { openblas_set_num_threads(threads); }
inline int threads() { return openblas_get_num_threads(); }
inline void add_context() {
  benchmark::AddCustomContext("openblas_config", openblas_get_config());
  benchmark::AddCustomContext("openblas_core", openblas_get_corename());
}
inline const BatchedImpl kBatchedImpls[] = {{kImpl, "a loop of cblas_sgemm", shape_free<loop_of_sgemm>}};

#elif defined(KGEMM_CBLAS_MKL)

#ifndef _OPENMP
#error "the MKL peer is compiled with -fopenmp and linked with MKL's OpenMP runtime (benchmarks/CMakeLists.txt)"
#endif

// MKL's threads are those of Intel's OpenMP runtime (libiomp5), which the JIT rows split their
// products over too: libmkl_rt would load GNU's instead when MKL_THREADING_LAYER=GNU, and two
// OpenMP runtimes in one process compete for the cores with their own threads. So the layer is
// set before main, ahead of any MKL call. MKL may still use fewer threads for a small product
// (MKL_DYNAMIC), as it would for a user.
inline const int kThreadingLayer = mkl_set_threading_layer(MKL_THREADING_INTEL);
inline const char* const kImpl = "mkl";
inline void set_threads(int threads) { mkl_set_num_threads(threads); }
inline int threads() { return mkl_get_max_threads(); }
inline void add_context() {
  char version[256] = {};
  mkl_get_version_string(version, sizeof version);
  benchmark::AddCustomContext("mkl_version", version);
}
// One group of equal products: MKL spreads them over its threads (pointer arrays, so that the
// ResNet rows' products can share one B).
inline void sgemm_batch(const Products& p) {
  const CBLAS_TRANSPOSE no_trans = CblasNoTrans;
  const MKL_INT m = p.m, n = p.n, k = p.k, group_size = MKL_INT(p.c.size());
  const float alpha = 1.0f, beta = 0.0f;
  cblas_sgemm_batch(CblasRowMajor, &no_trans, &no_trans, &m, &n, &k, &alpha, const_cast<const float**>(p.a.data()), &k,
                    const_cast<const float**>(p.b.data()), &n, &beta, const_cast<float**>(p.c.data()), &n, 1,
                    &group_size);
}

// MKL's small-matrix JIT: a kernel generated for one shape (row-major, no transposes, alpha 1,
// beta 0, the products' dense leading dimensions), called once per product. Where MKL generates
// none (MKL_NO_JIT: a shape or a CPU it leaves to its standard sgemm) the row is not a JIT row.
// A kernel is sequential: the products are split evenly over MKL's own OpenMP threads, as many as
// its calls use. Those persist between calls and wait as they do after MKL's calls; threads of
// the peer's own would compete for the cores with MKL's, which spin a while after each of its calls.
inline Call prepare_jit(int m, int n, int k) {
  void* created = nullptr;
  const mkl_jit_status_t status =
      mkl_jit_create_sgemm(&created, MKL_ROW_MAJOR, MKL_NOTRANS, MKL_NOTRANS, m, n, k, 1.0f, k, n, 0.0f, n);
  if (status == MKL_JIT_ERROR)
    throw std::runtime_error("mkl_jit_create_sgemm failed (MKL_JIT_ERROR: it could not allocate the kernel)");
  // MKL_NO_JIT still made a jitter (one calling the standard sgemm): it goes with this pointer.
  const std::shared_ptr<void> jitter(created, mkl_jit_destroy);
  if (status == MKL_NO_JIT) return {};
  const sgemm_jit_kernel_t kernel = mkl_jit_get_sgemm_ptr(jitter.get());
  return [jitter, kernel](const Products& p) {
    const long products = long(p.c.size());
#pragma omp parallel for schedule(static) num_threads(mkl_get_max_threads())
    for (long i = 0; i < products; ++i)
      kernel(jitter.get(), const_cast<float*>(p.a[i]), const_cast<float*>(p.b[i]), p.c[i]);
  };
}

inline const BatchedImpl kBatchedImpls[] = {
    {kImpl, "cblas_sgemm_batch, one group", shape_free<sgemm_batch>},
    {"mkl-jit", "mkl_jit_create_sgemm's kernel for the row's shape, per product", prepare_jit,
     "mkl_jit_create_sgemm answered MKL_NO_JIT (MKL generates no code for that shape on this CPU, only "
     "calls its standard sgemm)"}};

#elif defined(KGEMM_CBLAS_BLIS)

// Debian's BLIS 0.9 has no batch call: its batched rows are a loop, as OpenBLAS'.
inline const char* const kImpl = "blis";
inline void set_threads(int threads) { bli_thread_set_num_threads(threads); }
inline int threads() { return int(bli_thread_get_num_threads()); }
inline void add_context() {
  benchmark::AddCustomContext("blis_version", bli_info_get_version_str());
  benchmark::AddCustomContext("blis_arch", bli_arch_string(bli_arch_query_id()));
}
inline const BatchedImpl kBatchedImpls[] = {{kImpl, "a loop of cblas_sgemm", shape_free<loop_of_sgemm>}};

#endif

}  // namespace kgemm_bench::cblas_library

#pragma once
// The CBLAS library a host peer (cblas_peer.cpp) is compiled against: benchmarks/CMakeLists.txt
// builds that one source once per library found, defining one of KGEMM_CBLAS_OPENBLAS,
// KGEMM_CBLAS_MKL or KGEMM_CBLAS_BLIS. Here is all that differs between them: the header, the
// row's impl name, the thread control, what the library says about itself, and a batch of
// products where the library has a call for one (else a loop of cblas_sgemm, which is what a user
// of that library would write).
#include <benchmark/benchmark.h>

#include <cstddef>
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

#if defined(KGEMM_CBLAS_OPENBLAS)

inline const char* const kImpl = "openblas";
inline const char* const kBatchedCall = "a loop of cblas_sgemm";
inline void set_threads(int threads) { openblas_set_num_threads(threads); }
inline int threads() { return openblas_get_num_threads(); }
inline void add_context() {
  benchmark::AddCustomContext("openblas_config", openblas_get_config());
  benchmark::AddCustomContext("openblas_core", openblas_get_corename());
}
inline void sgemm_batch(const Products& p) { loop_of_sgemm(p); }

#elif defined(KGEMM_CBLAS_MKL)

// MKL's threads are its OpenMP runtime's (libmkl_rt picks Intel's unless MKL_THREADING_LAYER says
// otherwise); MKL may still use fewer for a small product (MKL_DYNAMIC), as it would for a user.
inline const char* const kImpl = "mkl";
inline const char* const kBatchedCall = "cblas_sgemm_batch, one group";
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

#elif defined(KGEMM_CBLAS_BLIS)

// Debian's BLIS 0.9 has no batch call: its batched rows are a loop, as OpenBLAS'.
inline const char* const kImpl = "blis";
inline const char* const kBatchedCall = "a loop of cblas_sgemm";
inline void set_threads(int threads) { bli_thread_set_num_threads(threads); }
inline int threads() { return int(bli_thread_get_num_threads()); }
inline void add_context() {
  benchmark::AddCustomContext("blis_version", bli_info_get_version_str());
  benchmark::AddCustomContext("blis_arch", bli_arch_string(bli_arch_query_id()));
}
inline void sgemm_batch(const Products& p) { loop_of_sgemm(p); }

#endif

}  // namespace kgemm_bench::cblas_library

#pragma once
// What a GEMM call asks for, independent of where its data lives: the key under which the
// tuner stores a winner and the dispatcher looks it up. Prints as one canonical string,
// e.g. "gemm_f32_nn_m12544_n64_k147_b1", and parses back.
#include <string>

#include "kgemm/dtype.hpp"
#include "kgemm/matrix_ref.hpp"
#include "kgemm/spaces/error.hpp"

namespace kgemm {

// Batched: every product its own A and B (strided batches). SharedB: one B for the whole batch
// (a convolution's weights): a different memory traffic, so tuned apart (on tiny products a
// shared B's rates say nothing about a strided batch's: docs/gpu-notes.md, s6).
enum class Kernel { Gemm, Batched, SharedB };

inline std::string to_string(Kernel kernel) {
  return kernel == Kernel::Gemm ? "gemm" : kernel == Kernel::Batched ? "batched" : "sharedb";
}
// Throws InvalidArgument naming the text when it is not a kernel name.
inline Kernel parse_kernel(const std::string& text) {
  for (Kernel kernel : {Kernel::Gemm, Kernel::Batched, Kernel::SharedB})
    if (text == to_string(kernel)) return kernel;
  throw InvalidArgument("'" + text + "' is not a kernel (gemm, batched or sharedb)");
}

struct Problem {
  Kernel kernel = Kernel::Gemm;
  DType dtype = DType::F32;
  // 'n' when op(A)'s K (op(B)'s N) dimension is contiguous in memory, 't' otherwise: the
  // access pattern, which is what matters for speed, whatever mix of layout and transpose.
  char a_order = 'n', b_order = 'n';
  int m = 0, n = 0, k = 0;
  int batch = 1;

  double flops() const { return 2.0 * m * n * double(k) * batch; }

  friend bool operator==(const Problem& x, const Problem& y) {
    return x.kernel == y.kernel && x.dtype == y.dtype && x.a_order == y.a_order &&
           x.b_order == y.b_order && x.m == y.m && x.n == y.n && x.k == y.k && x.batch == y.batch;
  }
};

std::string to_string(const Problem& problem);
// Why `problem` is not one any call could pose (empty when it is): negative extents, a batch
// below 1, or operands too large to address.
std::string why_invalid(const Problem& problem);
// Throws InvalidArgument naming the text when it is not a problem key.
Problem parse_problem(const std::string& text);

// `batched`: a batched call, which shares B when B's batch stride is 0.
template <class Scalar>
Problem problem_of(const GemmArgs<Scalar>& args, bool batched) {
  Problem p;
  p.kernel = !batched ? Kernel::Gemm : args.B.batch_stride == 0 && args.batch > 1 ? Kernel::SharedB : Kernel::Batched;
  p.dtype = dtype_of<std::remove_const_t<Scalar>>();
  p.a_order = args.A.col_stride == 1 ? 'n' : 't';
  p.b_order = args.B.col_stride == 1 ? 'n' : 't';
  p.m = args.M();
  p.n = args.N();
  p.k = args.K();
  p.batch = args.batch;
  return p;
}

}  // namespace kgemm

#include "kgemm/problem.hpp"

#include <cstdio>
#include <stdexcept>

namespace kgemm {

std::string to_string(const Problem& p) {
  return to_string(p.kernel) + "_" + to_string(p.dtype) +
         "_" + p.a_order + p.b_order + "_m" + std::to_string(p.m) + "_n" + std::to_string(p.n) +
         "_k" + std::to_string(p.k) + "_b" + std::to_string(p.batch);
}

Problem parse_problem(const std::string& text) {
  char kernel[16], dtype[8], orders[3];
  Problem p;
  int used = 0;
  const int fields = std::sscanf(text.c_str(), "%15[a-z]_%7[a-z0-9]_%2[nt]_m%d_n%d_k%d_b%d%n", kernel,
                                 dtype, orders, &p.m, &p.n, &p.k, &p.batch, &used);
  const auto invalid = [&] {
    return std::invalid_argument("kgemm: '" + text +
                                 "' is not a problem key (format gemm_f32_nn_m12544_n64_k147_b1; kernels gemm, batched, sharedb)");
  };
  if (fields != 7 || used != int(text.size()) || p.m < 0 || p.n < 0 || p.k < 0 || p.batch < 1) throw invalid();
  try {
    p.kernel = parse_kernel(kernel);
  } catch (const std::invalid_argument&) {
    throw invalid();
  }
  p.dtype = parse_dtype(dtype);
  p.a_order = orders[0];
  p.b_order = orders[1];
  return p;
}

}  // namespace kgemm

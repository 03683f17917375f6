#include "kgemm/problem.hpp"

#include <climits>
#include <cstdint>
#include <sstream>
#include <vector>

#include "kgemm/text_number.hpp"

namespace kgemm {

std::string to_string(const Problem& p) {
  return to_string(p.kernel) + "_" + to_string(p.dtype) +
         "_" + p.a_order + p.b_order + "_m" + std::to_string(p.m) + "_n" + std::to_string(p.n) +
         "_k" + std::to_string(p.k) + "_b" + std::to_string(p.batch);
}

std::string why_invalid(const Problem& p) {
  if (p.m < 0 || p.n < 0 || p.k < 0) return "extents " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" +
                                            std::to_string(p.k) + " must not be negative";
  if (p.batch < 1) return "batch " + std::to_string(p.batch) + " must be at least 1";
  // Each operand, over the whole batch, must be addressable: its element count fits a 64-bit
  // signed offset.
  const struct {
    int rows, cols;
    const char* name;
  } operands[] = {{p.m, p.k, "A"}, {p.k, p.n, "B"}, {p.m, p.n, "C"}};
  for (const auto& operand : operands) {
    std::int64_t elements = 0;
    if (__builtin_mul_overflow(std::int64_t(operand.rows) * operand.cols, std::int64_t(p.batch), &elements))
      return std::string(operand.name) + " of " + std::to_string(operand.rows) + "x" + std::to_string(operand.cols) +
             " times batch " + std::to_string(p.batch) + " has more elements than a 64-bit offset can address";
  }
  return "";
}

Problem parse_problem(const std::string& text) {
  const auto invalid = [&](const std::string& why) {
    return InvalidArgument("'" + text + "' is not a problem key: " + why +
                           " (format gemm_f32_nn_m12544_n64_k147_b1; kernels gemm, batched, sharedb)");
  };
  std::vector<std::string> parts;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, '_');) parts.push_back(part);
  if (parts.size() != 7 || text.empty() || text.back() == '_') throw invalid("expected 7 fields separated by '_'");
  Problem p;
  try {
    p.kernel = parse_kernel(parts[0]);
  } catch (const InvalidArgument&) {
    throw invalid("'" + parts[0] + "' is not a kernel");
  }
  try {
    p.dtype = parse_dtype(parts[1]);
  } catch (const InvalidArgument&) {
    throw invalid("'" + parts[1] + "' is not a dtype (f32 or f16)");
  }
  const std::string& orders = parts[2];
  const auto is_order = [](char c) { return c == 'n' || c == 't'; };
  if (orders.size() != 2 || !is_order(orders[0]) || !is_order(orders[1])) throw invalid("orders '" + orders + "' are not nn, nt, tn or tt");
  p.a_order = orders[0];
  p.b_order = orders[1];
  const struct {
    char key;
    int Problem::*member;
    int min;
  } extents[] = {{'m', &Problem::m, 0}, {'n', &Problem::n, 0}, {'k', &Problem::k, 0}, {'b', &Problem::batch, 1}};
  for (int i = 0; i < 4; ++i) {
    const std::string& part = parts[3 + i];
    const auto value = part.size() > 1 && part[0] == extents[i].key
                           ? integer_in(std::string_view(part).substr(1), extents[i].min, INT_MAX)
                           : std::nullopt;
    if (!value) throw invalid("'" + part + "' is not " + extents[i].key + " followed by an integer from " +
                              std::to_string(extents[i].min) + " to " + std::to_string(INT_MAX));
    p.*extents[i].member = *value;
  }
  if (const std::string why = why_invalid(p); !why.empty()) throw invalid(why);
  return p;
}

}  // namespace kgemm

// libFuzzer target: kgemm::parse_problem, the parser of problem keys ("gemm_f32_nn_m12544_n64_k147_b1",
// measurement caches and logs). Properties checked on every input:
// - a refusal is a std::invalid_argument quoting the text (anything else escaping is a crash);
// - an accepted key prints (to_string) as a key that parses back to the same Problem, and
//   printing that again gives the same key;
// - a key in the canonical shape (kernel_dtype_orders_m<digits>_n<digits>_k<digits>_b<digits>)
//   means exactly its numbers: one beyond int is refused, never wrapped into another shape.
#include <limits>
#include <sstream>
#include <vector>

#include "fuzz_check.hpp"
#include "kgemm/problem.hpp"

using kgemm::fuzz::require;

namespace {

// The number a run of decimal digits states, or -1 when it is beyond int (or not digits).
long long stated_number(const std::string& digits) {
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos) return -1;
  long long value = 0;
  for (char d : digits) {
    value = value * 10 + (d - '0');
    if (value > std::numeric_limits<int>::max()) return -1;
  }
  return value;
}

// m, n, k and batch as the text states them, when it has the canonical shape; empty otherwise.
// Second: whether every stated number fits an int.
std::pair<std::vector<long long>, bool> stated_extents(const std::string& text) {
  std::vector<std::string> parts;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, '_');) parts.push_back(part);
  if (parts.size() != 7 || text.back() == '_') return {{}, false};
  std::vector<long long> numbers;
  bool fit = true;
  const char prefixes[] = {'m', 'n', 'k', 'b'};
  for (int i = 0; i < 4; ++i) {
    const std::string& part = parts[3 + i];
    if (part.size() < 2 || part[0] != prefixes[i] || part.find_first_not_of("0123456789", 1) != std::string::npos)
      return {{}, false};
    numbers.push_back(stated_number(part.substr(1)));
    fit = fit && numbers.back() >= 0;
  }
  return {numbers, fit};
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = kgemm::fuzz::text_of(data, size);
  const auto parse = [](const std::string& t) { return kgemm::parse_problem(t); };
  const auto print = [](const kgemm::Problem& p) { return kgemm::to_string(p); };
  const std::optional<kgemm::Problem> problem = kgemm::fuzz::parses_canonically(parse, print, text);
  const auto [stated, fits] = stated_extents(text);
  if (problem && !stated.empty()) {
    require(fits, "a key with an extent beyond int is refused (parsed as " + print(*problem) + ")", text);
    require(stated == std::vector<long long>{problem->m, problem->n, problem->k, problem->batch},
            "the parsed extents are the stated ones (parsed as " + print(*problem) + ")", text);
  }
  return 0;
}

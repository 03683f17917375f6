#include "kgemm/tuner/shard.hpp"

#include <climits>
#include <stdexcept>

#include "kgemm/text_number.hpp"

namespace kgemm {

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("bad shard '" + text + "': " + why +
                                 " (expected i/n: shard i of n, numbered from 0, e.g. 0/4 .. 3/4)");
  };
  if (slash == std::string::npos) throw bad("no '/'");
  const auto index = integer_in(std::string_view(text).substr(0, slash), 0, INT_MAX);
  const auto count = integer_in(std::string_view(text).substr(slash + 1), 1, INT_MAX);
  if (!count) throw bad("the count n must be an integer >= 1");
  if (!index) throw bad("the index i must be an integer >= 0");
  if (*index >= *count)
    throw bad("the index must be below the count " + std::to_string(*count) + ", so " +
              std::to_string(*count - 1) + " at most");
  return {*index, *count};
}

}  // namespace kgemm

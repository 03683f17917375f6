// libFuzzer target: kgemm::CommandLine (the tools' option parser, with autotune's options) and
// the values read through it: get, get_int, get_count, get_double, get_list, get_int_list,
// get_count_list, parse_budget, parse_strategy. The input is split at NUL bytes into arguments.
// Properties checked on every input:
// - a refusal is a std::invalid_argument with a message (anything else escaping is a crash);
// - a number read is the number the text states (never wrapped or truncated) and within the
//   range asked for: counts >= 1, doubles finite and >= their minimum;
// - a budget is either a whole number of evaluations >= 1, as stated, or a finite positive
//   number of seconds: never "unlimited" by accident (nan, 0.5, 1e10);
// - the options read back through get_list, written again as --name=value, parse to the same.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <set>
#include <stdexcept>
#include <vector>

#include "fuzz_check.hpp"
#include "kgemm/tuner/cli.hpp"
#include "kgemm/tuner/search.hpp"
#include "kgemm/tuner/shard.hpp"

using kgemm::fuzz::require;

namespace {

// autotune's options and flags (tools/autotune.cpp).
const std::set<std::string> kOptions = {"space", "shapes", "shape", "image", "batch", "dtype", "strategy",
                                        "budget", "out", "reps", "seed", "cache", "replay", "verify-store",
                                        "shard", "time-limit"};
const std::set<std::string> kFlags = {"batched", "shared-b", "resume", "help"};

kgemm::CommandLine parse(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  return kgemm::CommandLine(int(args.size()), argv.data(), kOptions, kFlags);
}

// The number `text` states, read as a long double by strtold (independently of the parser under
// test; leading spaces and a sign allowed); false when the text is not entirely one number.
bool stated(const std::string& text, long double& value) {
  if (text.empty() || text.find('\0') != std::string::npos) return false;
  char* end = nullptr;
  errno = 0;
  value = std::strtold(text.c_str(), &end);
  return errno == 0 && *end == '\0' && end != text.c_str();
}

void check_int(int value, const std::string& text, const std::string& what, const std::string& input) {
  long double number = 0;
  require(stated(text, number) && number == value,
          what + " '" + text + "' read as " + std::to_string(value) + ", the number the text states", input);
}

// Calls read(); true when it returned, false when it refused with std::invalid_argument.
template <class Read>
bool reads(Read read, const std::string& what, const std::string& input) {
  try {
    read();
    return true;
  } catch (const std::invalid_argument& e) {
    require(*e.what() != '\0', what + " refuses with a message", input);
    return false;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input = kgemm::fuzz::text_of(data, size);
  std::vector<std::string> args{"autotune"};
  for (std::size_t start = 0; start <= input.size() && !input.empty();) {
    const std::size_t stop = std::min(input.find('\0', start), input.size());
    args.push_back(input.substr(start, stop - start));
    start = stop + 1;
  }
  std::unique_ptr<kgemm::CommandLine> cli;
  if (!reads([&] { cli = std::make_unique<kgemm::CommandLine>(parse(args)); }, "the command line", input)) return 0;

  std::vector<std::string> again{"autotune"};
  for (const std::string& name : kOptions) {
    if (!cli->has(name)) continue;
    const std::string option = "--" + name;
    reads([&] {
      const std::string text = cli->get(name, "");
      reads([&] { check_int(cli->get_int(name, 0), text, option, input); }, "get_int", input);
      reads([&] {
        const int count = cli->get_count(name, 1);
        check_int(count, text, option, input);
        require(count >= 1, option + " '" + text + "' read as a count >= 1", input);
      }, "get_count", input);
      reads([&] {
        const double value = cli->get_double(name, 0, 0.0);
        require(std::isfinite(value) && value >= 0, option + " '" + text + "' read as a finite double >= 0", input);
      }, "get_double", input);
    }, "get", input);
    reads([&] {
      const std::vector<std::string> items = cli->get_list(name, "");
      reads([&] {
        const std::vector<int> numbers = cli->get_int_list(name, "");
        require(numbers.size() == items.size(), "get_int_list reads every item of " + option, input);
        for (std::size_t i = 0; i < items.size(); ++i) check_int(numbers[i], items[i], option + " item", input);
      }, "get_int_list", input);
      reads([&] {
        for (int count : cli->get_count_list(name, "")) require(count >= 1, option + " counts are >= 1", input);
      }, "get_count_list", input);
    }, "get_list", input);
    // Each value as one --name=value; a value with no item (",,") stays one.
    std::vector<std::string> items;
    reads([&] { items = cli->get_list(name, ""); }, "get_list", input);
    std::string joined;
    for (const std::string& item : items) joined += (joined.empty() ? "" : ",") + item;
    again.push_back(option + "=" + joined);
  }
  for (const std::string& name : kFlags)
    if (cli->has(name)) again.push_back("--" + name);
  const kgemm::CommandLine reparsed = parse(again);
  const auto list_of = [](const kgemm::CommandLine& line, const std::string& name) {
    try {
      return line.get_list(name, "");
    } catch (const std::invalid_argument&) {
      return std::vector<std::string>{};
    }
  };
  for (const std::string& name : kOptions)
    require(reparsed.has(name) == cli->has(name) && list_of(reparsed, name) == list_of(*cli, name),
            "--" + name + " written back as --name=value parses to the same list", input);
  for (const std::string& name : kFlags) require(reparsed.has(name) == cli->has(name), "--" + name + " kept", input);

  reads([&] {
    if (!cli->has("budget")) return;
    const std::string text = cli->get("budget", "");
    const kgemm::Budget budget = kgemm::parse_budget(text);
    long double number = 0;
    const bool seconds = budget.seconds != 0;
    require(seconds ? budget.evaluations == 0 && std::isfinite(budget.seconds) && budget.seconds > 0
                    : budget.evaluations >= 1 && stated(text, number) && number == budget.evaluations,
            "--budget '" + text + "' is a whole count >= 1 as stated or finite positive seconds (read as " +
                std::to_string(budget.evaluations) + " evaluations, " + std::to_string(budget.seconds) + " s)",
            input);
  }, "parse_budget", input);
  reads([&] {
    if (cli->has("strategy")) kgemm::parse_strategy(cli->get("strategy", ""));
  }, "parse_strategy", input);
  reads([&] {
    if (!cli->has("shard")) return;
    const std::string text = cli->get("shard", "");
    const kgemm::Shard shard = kgemm::parse_shard(text);
    const std::size_t slash = text.find('/');
    long double index = 0, count = 0;
    require(slash != std::string::npos && stated(text.substr(0, slash), index) && index == shard.index &&
                stated(text.substr(slash + 1), count) && count == shard.count && shard.index >= 0 &&
                shard.index < shard.count,
            "--shard '" + text + "' is i/n as stated, 0 <= i < n (read as " + std::to_string(shard.index) + "/" +
                std::to_string(shard.count) + ")",
            input);
  }, "parse_shard", input);
  return 0;
}

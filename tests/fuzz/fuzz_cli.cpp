// libFuzzer target: the tools' command lines on CLI11 (kgemm/cli/): autotune's and kgemm-run's
// options parsed from arbitrary argv, with the values read through them (parse_budget,
// parse_strategy, parse_shard, parse_config). The input is split at NUL bytes into arguments.
// Properties checked on every input:
// - a refusal is a std::invalid_argument with a message (anything else escaping is a crash, a
//   CLI11 error among them);
// - a number read is the number the text states (never wrapped, truncated or read as octal or
//   hex) and within the range asked for: counts >= 1;
// - a budget is either a whole number of evaluations >= 1, as stated, or a finite positive
//   number of seconds: never "unlimited" by accident (nan, 0.5, 1e10);
// - a shard is i/n as stated, 0 <= i < n;
// - kgemm-run's lists hold each item once;
// - autotune's options written back as --name=value parse to the same.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

#include "fuzz_check.hpp"
#include "kgemm/cli/autotune_options.hpp"
#include "kgemm/cli/run_options.hpp"

using kgemm::fuzz::require;

namespace {

// autotune's options that take no value.
const std::set<std::string> kFlags = {"--batched", "--shared-b", "--resume", "--help"};

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

// The values given to option `name` in `args`, in order, each word read as autotune reads it
// ("--name=value" or "--name value"; a flag takes none).
std::vector<std::string> given(const std::vector<std::string>& args, const std::string& name) {
  std::vector<std::string> values;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].rfind("--", 0) != 0) continue;
    const std::size_t eq = args[i].find('=');
    const std::string option = args[i].substr(0, eq);
    if (kFlags.count(option)) continue;
    const std::string value = eq != std::string::npos ? args[i].substr(eq + 1) : i + 1 < args.size() ? args[++i] : "";
    if (option == name) values.push_back(value);
  }
  return values;
}

// The comma-separated items of every value given to `name`.
std::vector<std::string> items(const std::vector<std::string>& args, const std::string& name) {
  std::vector<std::string> found;
  for (const std::string& value : given(args, name)) {
    std::size_t start = 0;
    for (std::size_t comma; (comma = value.find(',', start)) != std::string::npos; start = comma + 1)
      if (comma > start) found.push_back(value.substr(start, comma - start));
    if (start < value.size()) found.push_back(value.substr(start));
  }
  return found;
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

std::string joined(const std::vector<std::string>& texts) {
  std::string text;
  for (const std::string& item : texts) text += (text.empty() ? "" : ",") + item;
  return text;
}

void check_autotune(const std::vector<std::string>& args, const std::string& input) {
  std::optional<kgemm::cli::AutotuneOptions> parsed;
  if (!reads([&] { parsed = kgemm::cli::parse_autotune(args); }, "autotune's command line", input) || !parsed) return;
  const kgemm::cli::AutotuneOptions& o = *parsed;
  for (const auto& [name, value] : {std::pair<std::string, int>{"--reps", o.reps}, {"--image", o.image}, {"--seed", o.seed}})
    for (const std::string& text : given(args, name)) check_int(value, text, name, input);
  require(o.reps >= 1 && o.image >= 1, "--reps and --image are counts >= 1", input);
  const std::vector<std::string> batches = items(args, "--batch");
  if (!batches.empty()) {
    require(batches.size() == o.batches.size(), "--batch reads every item", input);
    for (std::size_t i = 0; i < batches.size(); ++i) check_int(o.batches[i], batches[i], "--batch item", input);
  }
  for (int batch : o.batches) require(batch >= 1, "--batch items are counts >= 1", input);
  for (const std::string& text : given(args, "--budget")) {
    long double number = 0;
    const bool seconds = o.budget.seconds != 0;
    require(seconds ? o.budget.evaluations == 0 && std::isfinite(o.budget.seconds) && o.budget.seconds > 0
                    : o.budget.evaluations >= 1 && stated(text, number) && number == o.budget.evaluations,
            "--budget '" + text + "' is a whole count >= 1 as stated or finite positive seconds (read as " +
                std::to_string(o.budget.evaluations) + " evaluations, " + std::to_string(o.budget.seconds) + " s)",
            input);
  }
  for (const std::string& text : given(args, "--shard")) {
    const std::size_t slash = text.find('/');
    long double index = 0, count = 0;
    require(o.shard && slash != std::string::npos && stated(text.substr(0, slash), index) && index == o.shard->index &&
                stated(text.substr(slash + 1), count) && count == o.shard->count && o.shard->index >= 0 &&
                o.shard->index < o.shard->count,
            "--shard '" + text + "' is i/n as stated, 0 <= i < n", input);
  }
  if (o.verify_store) return;  // which refuses the tuning options written back below
  std::vector<std::string> again{"--batch=" + joined([&] {
                                   std::vector<std::string> texts;
                                   for (int batch : o.batches) texts.push_back(std::to_string(batch));
                                   return texts;
                                 }()),
                                 "--dtype=" + joined(o.dtypes), "--reps=" + std::to_string(o.reps),
                                 "--seed=" + std::to_string(o.seed)};
  if (o.shapes.empty()) {
    again.push_back("--shapes=" + o.model);
    again.push_back("--image=" + std::to_string(o.image));
  } else {
    again.push_back("--shape=" + joined(o.shapes));
  }
  if (o.batched) again.push_back("--batched");
  if (o.shared_b) again.push_back("--shared-b");
  std::optional<kgemm::cli::AutotuneOptions> reparsed;
  reads([&] { reparsed = kgemm::cli::parse_autotune(again); }, "autotune's options written back", input);
  require(reparsed && reparsed->batches == o.batches && reparsed->dtypes == o.dtypes && reparsed->shapes == o.shapes &&
              reparsed->model == o.model && reparsed->image == o.image && reparsed->reps == o.reps &&
              reparsed->seed == o.seed && reparsed->batched == o.batched && reparsed->shared_b == o.shared_b,
          "autotune's options written back as --name=value parse to the same", input);
}

template <class T>
bool distinct(const std::vector<T>& items) {
  return std::set<T>(items.begin(), items.end()).size() == items.size();
}

void check_run(const std::vector<std::string>& args, const std::string& input) {
  std::optional<kgemm::cli::RunOptions> parsed;
  if (!reads([&] { parsed = kgemm::cli::parse_run(args); }, "kgemm-run's command line", input) || !parsed) return;
  const kgemm::cli::RunOptions& o = *parsed;
  require(distinct(o.spaces) && distinct(o.shapes) && distinct(o.images) && distinct(o.batches) && distinct(o.dtypes),
          "kgemm-run's lists hold each item once", input);
  require(!o.spaces.empty() && !o.images.empty() && !o.batches.empty() && !o.dtypes.empty() && o.reps >= 1,
          "kgemm-run's lists have items, its counts are >= 1", input);
  for (int count : o.images) require(count >= 1, "--image items are counts >= 1", input);
  for (int count : o.batches) require(count >= 1, "--batch items are counts >= 1", input);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input = kgemm::fuzz::text_of(data, size);
  std::vector<std::string> args;
  for (std::size_t start = 0; start <= input.size() && !input.empty();) {
    const std::size_t stop = std::min(input.find('\0', start), input.size());
    args.push_back(input.substr(start, stop - start));
    start = stop + 1;
  }
  check_autotune(args, input);
  check_run(args, input);
  return 0;
}

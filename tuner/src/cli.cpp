#include "kgemm/tuner/cli.hpp"

#include <sstream>
#include <stdexcept>

#include "kgemm/text_number.hpp"

namespace kgemm {

CommandLine::CommandLine(int argc, char** argv, const std::set<std::string>& options,
                         const std::set<std::string>& flags) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--kokkos-", 0) == 0) continue;  // Kokkos::initialize reads them from the same argv
    if (arg.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument '" + arg + "' (see --help)");
    std::string name = arg.substr(2), value;
    const auto eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (flags.count(name)) {
      if (eq != std::string::npos) throw std::invalid_argument("option --" + name + " takes no value");
      values_.emplace(name, "1");
    } else if (options.count(name)) {
      if (eq == std::string::npos) {
        if (i + 1 >= argc) throw std::invalid_argument("option --" + name + " needs a value");
        value = argv[++i];
      }
      values_.emplace(name, value);
    } else {
      throw std::invalid_argument("unknown option --" + name + " (see --help)");
    }
  }
}

std::string CommandLine::get(const std::string& name, const std::string& fallback) const {
  // A single value given twice would silently lose one of them.
  if (const auto times = values_.count(name); times > 1)
    throw std::invalid_argument("option --" + name + " is given " + std::to_string(times) + " times; give it once");
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

int integer_setting(const std::string& what, const std::string& text, int min, int max) {
  const auto value = integer_in(text, min, max);
  if (!value)
    throw std::invalid_argument(what + ": '" + text + "' is not an integer from " + std::to_string(min) + " to " +
                                std::to_string(max));
  return *value;
}

int CommandLine::get_int(const std::string& name, int fallback, int min, int max) const {
  return has(name) ? integer_setting("option --" + name, get(name, ""), min, max) : fallback;
}

double CommandLine::get_double(const std::string& name, double fallback, double min) const {
  if (!has(name)) return fallback;
  const std::string text = get(name, "");
  const auto value = finite_at_least(text, min);
  if (!value) throw std::invalid_argument("option --" + name + ": '" + text + "' is not a finite number >= " + std::to_string(min));
  return *value;
}

std::vector<std::string> CommandLine::get_list(const std::string& name, const std::string& fallback) const {
  std::vector<std::string> texts;
  auto range = values_.equal_range(name);
  for (auto it = range.first; it != range.second; ++it) texts.push_back(it->second);
  if (texts.empty()) texts.push_back(fallback);
  std::vector<std::string> items;
  for (const std::string& text : texts) {
    std::istringstream in(text);
    for (std::string item; std::getline(in, item, ',');)
      if (!item.empty()) items.push_back(item);
  }
  if (items.empty()) throw std::invalid_argument("option --" + name + " needs at least one value");
  return items;
}

std::vector<int> CommandLine::get_int_list(const std::string& name, const std::string& fallback, int min, int max) const {
  std::vector<int> numbers;
  for (const std::string& item : get_list(name, fallback)) numbers.push_back(integer_setting("option --" + name, item, min, max));
  return numbers;
}

}  // namespace kgemm

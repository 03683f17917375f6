#include "kgemm/tuner/cli.hpp"

#include <sstream>
#include <stdexcept>

namespace kgemm {

CommandLine::CommandLine(int argc, char** argv, const std::set<std::string>& options,
                         const std::set<std::string>& flags) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument '" + arg + "' (see --help)");
    std::string name = arg.substr(2), value;
    const auto eq = name.find('=');
    if (eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (flags.count(name)) {
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
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

namespace {
template <class T>
T to_number(const std::string& name, const std::string& text) {
  std::istringstream in(text);
  T value;
  if (!(in >> value) || !in.eof())
    throw std::invalid_argument("option --" + name + ": '" + text + "' is not a number");
  return value;
}
}  // namespace

int CommandLine::get_int(const std::string& name, int fallback) const {
  return has(name) ? to_number<int>(name, get(name, "")) : fallback;
}

double CommandLine::get_double(const std::string& name, double fallback) const {
  return has(name) ? to_number<double>(name, get(name, "")) : fallback;
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
  return items;
}

std::vector<int> CommandLine::get_int_list(const std::string& name, const std::string& fallback) const {
  std::vector<int> numbers;
  for (const std::string& item : get_list(name, fallback)) numbers.push_back(to_number<int>(name, item));
  return numbers;
}

}  // namespace kgemm

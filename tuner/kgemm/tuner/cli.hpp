#pragma once
// Minimal "--name value" / "--flag" command-line parsing shared by kgemm's tools; unknown
// options and malformed values stop the tool with a message naming them.
#include <map>
#include <set>
#include <string>
#include <vector>

namespace kgemm {

class CommandLine {
 public:
  // `options` take a value, `flags` do not. Throws std::invalid_argument on anything else.
  CommandLine(int argc, char** argv, const std::set<std::string>& options, const std::set<std::string>& flags);

  bool has(const std::string& name) const { return values_.count(name) > 0; }
  std::string get(const std::string& name, const std::string& fallback) const;
  int get_int(const std::string& name, int fallback) const;
  double get_double(const std::string& name, double fallback) const;
  // A comma-separated value ("1,128"); every occurrence of a repeated option is appended.
  std::vector<std::string> get_list(const std::string& name, const std::string& fallback) const;
  std::vector<int> get_int_list(const std::string& name, const std::string& fallback) const;

 private:
  std::multimap<std::string, std::string> values_;
};

}  // namespace kgemm

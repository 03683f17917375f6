#pragma once
// Minimal "--name value" / "--flag" command-line parsing shared by kgemm's tools; unknown
// options and malformed values stop the tool with a message naming them. Kokkos' own flags
// (--kokkos-num-threads=N, --kokkos-device-id=N, ...) are left to KokkosSession
// (kokkos_session.hpp), which checks them and hands the same argv to Kokkos::initialize.
#include <climits>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace kgemm {

// The integer `text` spells when it is one from `min` to `max`; otherwise std::invalid_argument
// "<what>: '<text>' is not an integer from <min> to <max>" (what: "option --reps", ...).
int integer_setting(const std::string& what, const std::string& text, int min, int max);

class CommandLine {
 public:
  // `options` take a value, `flags` do not. Throws std::invalid_argument on anything else.
  CommandLine(int argc, char** argv, const std::set<std::string>& options, const std::set<std::string>& flags);

  bool has(const std::string& name) const { return values_.count(name) > 0; }
  // The value of an option given at most once (std::invalid_argument if given more often).
  std::string get(const std::string& name, const std::string& fallback) const;
  // Numbers must be the whole value and in range; otherwise std::invalid_argument names the
  // option, the value and the range.
  int get_int(const std::string& name, int fallback, int min = INT_MIN, int max = INT_MAX) const;
  // A count: an integer >= 1 (repetitions, batch sizes, image sides).
  int get_count(const std::string& name, int fallback) const { return get_int(name, fallback, 1); }
  // Finite, at least `min`.
  double get_double(const std::string& name, double fallback, double min = -1e308) const;
  // Whether the option was given with an empty value ("--peers="): list options whose help
  // offers it read that as none.
  bool given_empty(const std::string& name) const { return has(name) && get(name, "").empty(); }
  // A comma-separated value ("1,128"); every occurrence of a repeated option is appended. At
  // least one item.
  std::vector<std::string> get_list(const std::string& name, const std::string& fallback) const;
  std::vector<int> get_int_list(const std::string& name, const std::string& fallback, int min = INT_MIN,
                                int max = INT_MAX) const;
  std::vector<int> get_count_list(const std::string& name, const std::string& fallback) const {
    return get_int_list(name, fallback, 1);
  }

 private:
  std::multimap<std::string, std::string> values_;
};

}  // namespace kgemm

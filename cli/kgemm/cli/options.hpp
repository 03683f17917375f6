#pragma once
// What every kgemm command line shares, on CLI11: the help's layout, the words a tool reads
// (Kokkos' --kokkos-* and Google Benchmark's --benchmark_* flags belong to their own parsers), the
// parse that turns every refusal into an InvalidArgument naming the option and why, comma
// lists, and the validators the tools' options are declared with.
#include <CLI/CLI.hpp>
#include <climits>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "kgemm/spaces/error.hpp"
#include "kgemm/spaces/lowercase.hpp"

namespace kgemm::cli {

// A tool's command line: --help (its only spelling), kgemm's help layout (each option's default
// after its text), `footer` (the paragraphs after the options) and the options, declared with
// CLI11's add_option, add_flag, ... and add_list below.
class App : public CLI::App {
 public:
  App(const std::string& about, const std::string& name, const std::string& footer);

  // A list option: comma-separated items, the option repeatable, items appended in order, one
  // word per occurrence; with `none`, "--name=" alone leaves it without items. The help shows
  // `items` as the default.
  template <class T>
  CLI::Option* add_list(const std::string& name, std::vector<T>& items, const std::string& help, bool none = false) {
    std::string shown;
    for (const T& item : items) shown += (shown.empty() ? "" : ",") + CLI::detail::to_string(item);
    if (none) none_[name] = [&items] { items.clear(); };
    return add_option(name, items, help)->delimiter(',')->type_name("LIST")->default_str(shown)->allow_extra_args(false);
  }

  // Parses `words` into the options; false when --help asked for the help, which is printed.
  // Throws InvalidArgument "option --NAME ..." for an unknown option, a flag given a value,
  // an option without its value or given twice (lists excepted), a list without items (unless it
  // takes none) and a value its validators refuse. "--name=" gives the option an empty value,
  // where CLI11 alone would take the next word for it.
  bool read(const std::vector<std::string>& words);

 private:
  std::map<std::string, std::function<void()>> none_;  // the lists that take none: emptying them
};

// argv's words past the program name, less those starting with one of `others` (other parsers'
// flags: Kokkos reads --kokkos-* from the same argv).
std::vector<std::string> own_words(int argc, char** argv, std::initializer_list<const char*> others = {"--kokkos-"});

// Integers from `min` to `max`, written as plain decimals (CLI11's own conversion also reads
// octal "010" and hex "0x4"); the value is rewritten in canonical form.
CLI::Validator integer(int min, int max = INT_MAX);
// A count: repetitions, batch sizes, image sides.
inline CLI::Validator count() { return integer(1); }
// Lower-cases the value.
CLI::Validator lower_case();
// One of `names`.
CLI::Validator one_of(const std::vector<std::string>& names);
// A dtype's canonical name, fp32 or fp16 (f32, FP16, ... accepted). In dtype_option.cpp, which
// needs Kokkos' headers (kgemm/dtype.hpp); the rest of this header's functions do not.
CLI::Validator dtype();
// Refuses an item a list already holds (it would run, and print, twice). Holds the items seen:
// one per option of one parse.
CLI::Validator distinct();

}  // namespace kgemm::cli

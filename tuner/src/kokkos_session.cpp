#include "kgemm/tuner/kokkos_session.hpp"

#include <climits>
#include <cstdlib>
#include <string>
#include <vector>

#include "kgemm/spaces/enabled_spaces.hpp"
#include "kgemm/spaces/error.hpp"
#include "kgemm/text_number.hpp"

namespace kgemm {

namespace {

// Kokkos' integer settings: the flags that carry one (4.x's name, then the name Kokkos 3.4 reads
// and 4.x ignores; a name before any it begins with), its environment variable and its least
// value. Below it, or past int, or not a whole number, 3.4 and 4.x abort or throw "stoi".
struct IntegerSetting {
  std::vector<std::string> flags;
  const char* variable;
  int min;
};

const IntegerSetting kIntegerSettings[] = {
    {{"--kokkos-num-threads", "--kokkos-threads"}, "KOKKOS_NUM_THREADS", 1},
    {{"--kokkos-device-id", "--kokkos-device"}, "KOKKOS_DEVICE_ID", 0},
};

// The integer `text` gives `what` (a flag or environment variable) when Kokkos takes it.
void check_integer(const std::string& what, const std::string& text, int min) {
  if (!integer_in(text, min, INT_MAX)) throw InvalidArgument(what + ": " + not_an_integer(text, min, INT_MAX));
}

// Refuses `word` when it gives a flag of `setting` without a value Kokkos takes.
void check_flag(const IntegerSetting& setting, const std::string& word) {
  for (const std::string& flag : setting.flags) {
    if (word.rfind(flag, 0) != 0) continue;
    const std::string range = "an integer from " + std::to_string(setting.min) + " to " + std::to_string(INT_MAX);
    if (word.size() == flag.size() || word[flag.size()] != '=')
      throw InvalidArgument("'" + word + "' is not " + flag + "=N with N " + range);
    check_integer("option " + flag, word.substr(flag.size() + 1), setting.min);
    return;
  }
}

}  // namespace

void check_kokkos_settings(int argc, char** argv) {
  for (const IntegerSetting& setting : kIntegerSettings) {
    for (int i = 1; i < argc; ++i) check_flag(setting, argv[i]);
    if (const char* value = std::getenv(setting.variable))
      check_integer(std::string("environment variable ") + setting.variable, value, setting.min);
  }
}

KokkosSession::KokkosSession(int argc, char** argv) : arguments_(argc, argv) {
  check_kokkos_settings(argc, argv);
  pin_openmp_threads_unless_set();
  guard_.emplace(arguments_.argc(), arguments_.argv());
}

}  // namespace kgemm

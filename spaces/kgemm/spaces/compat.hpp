#pragma once
// Everything that differs between the Kokkos releases kgemm supports (3.4.01 .. 4.x), or that
// reads past their API to what their launches really allow, lives here.
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

namespace kgemm {

// fp16 storage type. On CUDA builds Kokkos' half_t is the real __half. On host-only builds
// both Kokkos 3.4 and 4.x define half_t as plain float (KOKKOS_HALF_T_IS_FLOAT), which would
// make "fp16" silently fp32; there we use the compiler's IEEE binary16 type instead.
#if defined(KOKKOS_HALF_T_IS_FLOAT) && KOKKOS_HALF_T_IS_FLOAT
#if !defined(__FLT16_MAX__)
#error "kgemm: this compiler has no _Float16 and Kokkos' half_t is float here; use g++ >= 12 or clang >= 15"
#endif
using half = _Float16;
#else
using half = Kokkos::Experimental::half_t;
#endif

// Kokkos' version as "major.minor.patch"; KOKKOS_VERSION is e.g. 30401 (3.4) or 40601 (4.6).
inline std::string kokkos_version_string() {
  return std::to_string(KOKKOS_VERSION / 10000) + "." + std::to_string(KOKKOS_VERSION / 100 % 100) +
         "." + std::to_string(KOKKOS_VERSION % 100);
}

// argv for Kokkos::initialize with Kokkos' flags under their 4.x names on any version: Kokkos
// before 3.7 calls --kokkos-num-threads=N --kokkos-threads=N and silently ignores the newer name.
class KokkosArguments {
 public:
  KokkosArguments(int argc, char** argv) : argc_(argc) {
    for (int i = 0; i < argc; ++i) {
      std::string word = argv[i];
#if KOKKOS_VERSION < 30700
      const std::string newer = "--kokkos-num-threads";
      if (word.rfind(newer, 0) == 0) word = "--kokkos-threads" + word.substr(newer.size());
#endif
      words_.push_back(word);
    }
    for (std::string& word : words_) pointers_.push_back(word.data());
    pointers_.push_back(nullptr);
  }
  KokkosArguments(const KokkosArguments&) = delete;
  KokkosArguments& operator=(const KokkosArguments&) = delete;
  int& argc() { return argc_; }
  char** argv() { return pointers_.data(); }

 private:
  int argc_;
  std::vector<std::string> words_;
  std::vector<char*> pointers_;
};

}  // namespace kgemm

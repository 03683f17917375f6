#pragma once
// Tuning on first use, as cuDNN's benchmark mode and Triton's autotune do, but remembered: with
// $KGEMM_TUNE set to a budget ("8": configs measured per problem; "30s": seconds per problem), a
// problem the device's own store has no entry for is tuned on its first call, as autotune tunes
// it (tune_problem.hpp), and written to the store autotune extends on that device (locked,
// atomic), so the rest of the run and every later run get the winner. One line on stderr says
// what was tuned and where it went. Unset, empty or "off": nothing is tuned.
namespace kgemm {

// Registers a first-use tuner (set_first_use_tuner) for every enabled space when $KGEMM_TUNE asks
// for one; returns whether it did. Throws InvalidArgument naming KGEMM_TUNE, its value and
// what it takes when the value is not a budget. Before or after Kokkos starts: kgemm-run and the
// Python package call it; a C++ program links kgemm_tuner and calls it to offer the same.
bool enable_tuning_on_first_use();

}  // namespace kgemm

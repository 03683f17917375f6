// kgemm-run: the main job. Runs every distinct im2col GEMM of a ResNet through kgemm::gemm
// (configs from the tuned store when there is one, else the space defaults) and prints time
// and GFLOP/s (2*M*N*K / time) per layer shape, with the geometric mean.
#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include "kgemm.hpp"
#include "kgemm/fill.hpp"
#include "kgemm/spaces/enabled_spaces.hpp"
#include "kgemm/tuner/catalogue.hpp"
#include "kgemm/tuner/cli.hpp"
#include "kgemm/tuner/timing.hpp"

namespace {

const char* kHelp = R"(usage: kgemm-run [options]
Runs the im2col GEMM shapes of a ResNet through kgemm::gemm and prints GFLOP/s per shape.
  --space NAME    serial | openmp | cuda              (default: )" KGEMM_DEFAULT_SPACE R"()
  --model NAME    resnet18 | resnet34 | resnet50      (default: resnet50)
  --image N       input image side                    (default: 224)
  --batch N       batch size, multiplies M            (default: 1)
  --dtype T       fp32 | fp16                         (default: fp32)
  --reps N        timed repetitions per shape, median (default: 10)
  --config STR    run every shape with this config (e.g. mb128_nb64_kb16_tm8_tn4_team256)
                  instead of the dispatched one
  --list-shapes   print the shapes as CSV (set,layer,m,n,k) and exit: the input of the
                  cuBLAS peer (benchmarks/cublas_peer)
  --help
)";

void list_shapes(const kgemm::CommandLine& cli) {
  const std::string model = cli.get("model", "resnet50");
  const int image = cli.get_count("image", 224), batch = cli.get_count("batch", 1);
  std::printf("set,layer,m,n,k\n");
  for (const auto& s : kgemm::resnet_gemm_shapes(model, image, batch))
    std::printf("%s_i%d_b%d,%s,%d,%d,%d\n", model.c_str(), image, batch, s.layer.c_str(), s.m, s.n, s.k);
}

template <class Scalar, class ExecSpace>
void run_model(const ExecSpace& space, const kgemm::CommandLine& cli) {
  using Matrix = Kokkos::View<Scalar**, Kokkos::LayoutRight, typename ExecSpace::memory_space>;
  const std::string model = cli.get("model", "resnet50");
  const int image = cli.get_count("image", 224), batch = cli.get_count("batch", 1), reps = cli.get_count("reps", 10);
  const auto shapes = kgemm::resnet_gemm_shapes(model, image, batch);
  std::printf("kgemm-run: %s, image %d, batch %d, %s, space %s (%d threads), Kokkos %s\n", model.c_str(), image,
              batch, kgemm::to_string(kgemm::dtype_of<Scalar>()), ExecSpace::name(), ExecSpace().concurrency(),
              kgemm::kokkos_version_string().c_str());
  const std::string store = kgemm::find_store_file(kgemm::device_info<ExecSpace>());
  std::printf("tuned configs: %s\n", store.empty() ? "none for this device (space defaults)" : store.c_str());
  std::printf("%-3s %-28s %8s %5s %5s  %-34s %10s %9s\n", "#", "layer", "M", "N", "K", "config", "time[ms]", "GFLOP/s");
  double log_sum = 0;
  int index = 0;
  for (const auto& s : shapes) {
    Matrix A("A", s.m, s.k), B("B", s.k, s.n), C("C", s.m, s.n);
    kgemm::fill_uniform(A, 2 * index + 1);
    kgemm::fill_uniform(B, 2 * index + 2);
    const kgemm::Problem problem = kgemm::problem_of(
        kgemm::gemm_args(kgemm::Op::N, kgemm::Op::N, 1.0f, A, B, 0.0f, C), false);
    kgemm::Options options;
    if (cli.has("config")) options.config = kgemm::parse_config(cli.get("config", ""));
    const kgemm::Config config = options.config ? *options.config : kgemm::select_config<ExecSpace>(problem);
    const auto t = kgemm::time_calls(space, [&] { kgemm::gemm(A, B, C, options); }, 1, reps);
    const double gflops = problem.flops() / t.median_s * 1e-9;
    log_sum += std::log(gflops);
    std::printf("%-3d %-28s %8d %5d %5d  %-34s %10.3f %9.1f\n", ++index, s.layer.c_str(), s.m, s.n, s.k,
                kgemm::to_string(config).c_str(), t.median_s * 1e3, gflops);
  }
  std::printf("geometric mean over %zu shapes: %.1f GFLOP/s\n", shapes.size(), std::exp(log_sum / shapes.size()));
}

}  // namespace

int main(int argc, char** argv) {
  try {
    kgemm::CommandLine cli(argc, argv, {"space", "model", "image", "batch", "dtype", "reps", "config"}, {"help", "list-shapes"});
    if (cli.has("help")) {
      std::cout << kHelp;
      return 0;
    }
    if (cli.has("list-shapes")) {
      list_shapes(cli);
      return 0;
    }
    kgemm::pin_openmp_threads_unless_set();
    Kokkos::ScopeGuard kokkos(argc, argv);
    const kgemm::DType dtype = kgemm::parse_dtype(cli.get("dtype", "fp32"));
    kgemm::with_space(cli.get("space", KGEMM_DEFAULT_SPACE), [&](auto space) {
      if (dtype == kgemm::DType::F32)
        run_model<float>(space, cli);
      else
        run_model<kgemm::half>(space, cli);
    });
  } catch (const std::exception& e) {
    std::cerr << "kgemm-run: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

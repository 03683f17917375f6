#include "arrays.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <utility>

#include "kgemm.hpp"
#include "kgemm/dispatch/store_registry.hpp"
#include "kgemm/spaces/device_info.hpp"
#include "kgemm/spaces/enabled_spaces.hpp"
#include "kgemm/spaces/error.hpp"
#include "kgemm/spaces/team_scratch.hpp"
#include "kgemm/tuner/catalogue.hpp"
#include "kgemm/tuner/error_bound.hpp"
#include "kgemm/tuner/first_use.hpp"
#include "kgemm/tuner/kokkos_session.hpp"
#include "kgemm/tuner/tune_problem.hpp"

namespace kgemm::arrays {

namespace {

std::optional<KokkosSession>& session() {
  static std::optional<KokkosSession> running;
  return running;
}

// Kokkos 4 starts once per process: after finalize nothing runs again.
bool& finalized() {
  static bool ended = false;
  return ended;
}

void start_if_needed() {
  if (!Kokkos::is_initialized()) initialize({});
}

std::string call_name(const GemmCall& call) { return call.batched ? "kgemm.batched_gemm" : "kgemm.gemm"; }

// NumPy's names of the element types kgemm multiplies; nothing for any other.
std::optional<DType> dtype_named(const std::string& name) {
  if (name == "float32") return DType::F32;
  if (name == "float16") return DType::F16;
  return std::nullopt;
}

// What `accumulate` asks for on data of `dtype` (empty: fp32); refused by name otherwise.
Accum accum_named(const std::string& fn, const std::string& accumulate, const std::string& dtype) {
  if (accumulate.empty() || accumulate == "float32") return Accum::F32;
  if (accumulate != "float16")
    throw std::invalid_argument(fn + ": accumulate='" + accumulate + "'; expected 'float32' or 'float16'");
  if (dtype != "float16")
    throw std::invalid_argument(fn + ": accumulate='float16' is for float16 arrays; these are " + dtype);
  return Accum::F16;
}

// The store that serves Space and why (describe's line).
template <class Space>
std::string serving_store_line(const DeviceInfo& device) {
  return describe(tuned_configs(Space::name(), [] { return device_info<Space>(); })->serving(), device);
}

std::string device_name(const Array& x) {
  return x.device == Device::Host ? "the host (cpu)" : "cuda:" + std::to_string(x.device_id);
}

std::string shape_text(const Array& x) {
  std::string text = "(";
  for (int d = 0; d < x.ndim; ++d) text += (d ? ", " : "") + std::to_string(x.shape[d]);
  return text + (x.ndim == 1 ? ",)" : ")");
}

// The checks every array passes whatever the call: a dtype kgemm multiplies, non-negative strides,
// extents the kernels' ints hold.
void check_array(const std::string& fn, const Array& x) {
  if (!dtype_named(x.dtype))
    throw std::invalid_argument(fn + ": " + x.role + " is " + x.dtype + "; kgemm multiplies float32 or float16 arrays");
  for (int d = 0; d < x.ndim; ++d) {
    if (x.strides[d] < 0)
      throw std::invalid_argument(fn + ": " + x.role + " has a negative stride in dimension " + std::to_string(d) +
                                  " (a reversed view); pass a copy");
    if (x.shape[d] > INT_MAX)
      throw std::invalid_argument(fn + ": " + x.role + " has " + std::to_string(x.shape[d]) + " elements in dimension " +
                                  std::to_string(d) + "; kgemm takes at most " + std::to_string(INT_MAX));
  }
}

// C is written: no two of its elements may share memory (a broadcast or overlapping view).
void check_distinct(const std::string& fn, const Array& c) {
  if (!c.writable) throw std::invalid_argument(fn + ": c is read-only");
  for (int d = 0; d < c.ndim; ++d)
    if (c.shape[d] == 0) return;  // no elements
  std::vector<std::pair<std::int64_t, std::int64_t>> dims;  // (stride, extent) of the dimensions that step
  for (int d = 0; d < c.ndim; ++d)
    if (c.shape[d] > 1) dims.emplace_back(c.strides[d], c.shape[d]);
  std::sort(dims.begin(), dims.end());
  std::int64_t span = 1;  // elements the inner dimensions cover
  for (const auto& [stride, extent] : dims) {
    if (stride < span)
      throw std::invalid_argument(fn + ": c's elements overlap (shape " + shape_text(c) +
                                  ", a broadcast or overlapping view); pass an array of its own");
    span = stride * extent;
  }
}

// op(x) as the kernels read it: rank-2 arrays are one matrix (shared by a batch), rank-3 ones
// (batch, rows, cols).
template <class T>
MatrixRef<T> matrix_of(const Array& x, bool transposed) {
  const int r = x.ndim - 2;
  const MatrixRef<T> m(static_cast<T*>(x.data), int(x.shape[r]), int(x.shape[r + 1]), std::ptrdiff_t(x.strides[r]),
                       std::ptrdiff_t(x.strides[r + 1]), x.ndim == 3 ? std::ptrdiff_t(x.strides[0]) : 0);
  return transposed ? m.transposed() : m;
}

// The call's checks, then its operands.
template <class Scalar>
GemmArgs<Scalar> operands_of(const GemmCall& call) {
  const std::string fn = call_name(call);
  for (const Array* x : {&call.a, &call.b, &call.c}) check_array(fn, *x);
  if (call.a.dtype != call.b.dtype || call.a.dtype != call.c.dtype)
    throw std::invalid_argument(fn + ": a is " + call.a.dtype + ", b " + call.b.dtype + ", c " + call.c.dtype +
                                "; all three must be of one dtype");
  for (const Array* x : {&call.b, &call.c})
    if (x->device != call.a.device || x->device_id != call.a.device_id)
      throw std::invalid_argument(fn + ": a is on " + device_name(call.a) + " but " + x->role + " on " +
                                  device_name(*x) + "; move them to one device");
  if (!call.batched) {
    for (const Array* x : {&call.a, &call.b, &call.c})
      if (x->ndim != 2)
        throw std::invalid_argument(fn + ": " + x->role + " has " + std::to_string(x->ndim) + " dimensions (shape " +
                                    shape_text(*x) + "); kgemm.gemm multiplies matrices" +
                                    (x->ndim == 3 ? ": kgemm.batched_gemm multiplies batches" : ""));
  } else {
    if (call.c.ndim != 3)
      throw std::invalid_argument(fn + ": c has shape " + shape_text(call.c) + "; batched_gemm writes a (batch, m, n) c");
    for (const Array* x : {&call.a, &call.b})
      if (x->ndim != 2 && x->ndim != 3)
        throw std::invalid_argument(fn + ": " + x->role + " has shape " + shape_text(*x) +
                                    "; batched_gemm takes (batch, rows, cols) or one (rows, cols) matrix for all");
  }
  check_distinct(fn, call.c);
  GemmArgs<Scalar> args;
  args.A = matrix_of<const Scalar>(call.a, call.trans_a);
  args.B = matrix_of<const Scalar>(call.b, call.trans_b);
  args.C = matrix_of<Scalar>(call.c, false);
  args.batch = call.batched ? int(call.c.shape[0]) : 1;
  args.alpha = call.alpha;
  args.beta = call.beta;
  const auto op = [](const char* name, bool t, const MatrixRef<const Scalar>& m) {
    return std::string(t ? name + std::string(".T") : name) + " is " + std::to_string(m.rows) + " x " +
           std::to_string(m.cols);
  };
  if (args.A.cols != args.B.rows)
    throw std::invalid_argument(fn + ": inner dimensions differ: " + op("a", call.trans_a, args.A) + ", " +
                                op("b", call.trans_b, args.B));
  if (args.C.rows != args.A.rows || args.C.cols != args.B.cols)
    throw std::invalid_argument(fn + ": c has shape " + shape_text(call.c) + " where the product is " +
                                std::to_string(args.A.rows) + " x " + std::to_string(args.B.cols));
  for (const Array* x : {&call.a, &call.b})
    if (x->ndim == 3 && x->shape[0] != call.c.shape[0])
      throw std::invalid_argument(fn + ": " + x->role + " holds " + std::to_string(x->shape[0]) + " matrices, c " +
                                  std::to_string(call.c.shape[0]));
  return args;
}

Options options_of(const GemmCall& call) {
  const std::string fn = call_name(call);
  Options options;
  options.accum = accum_named(fn, call.accumulate, call.c.dtype);
  if (!call.config.empty()) {
    try {
      options.config = parse_config(call.config);
    } catch (const InvalidArgument& e) {
      throw std::invalid_argument(fn + ": config: " + e.reason());
    }
  }
  return options;
}

#if defined(KOKKOS_ENABLE_CUDA)
// One Kokkos instance per caller's stream, made on its first use (making one allocates) and
// dropped before Kokkos ends.
Kokkos::Cuda on_stream(std::uintptr_t stream) {
  static std::mutex mutex;
  static std::map<std::uintptr_t, Kokkos::Cuda> instances;
  std::lock_guard<std::mutex> lock(mutex);
  if (instances.empty()) Kokkos::push_finalize_hook([] { instances.clear(); });
  auto found = instances.find(stream);
  if (found == instances.end())
    found = instances.emplace(stream, Kokkos::Cuda(reinterpret_cast<cudaStream_t>(stream))).first;
  return found->second;
}
#endif

// Calls f with the execution space of the arrays' device.
template <class F>
void with_space_of(const GemmCall& call, F&& f) {
  start_if_needed();
  if (call.c.device == Device::Host) return f(Kokkos::DefaultHostExecutionSpace());
#if defined(KOKKOS_ENABLE_CUDA)
  const int running = Kokkos::Cuda().cuda_device();
  if (call.c.device_id != running)
    throw InvalidArgument("the arrays are on cuda:" + std::to_string(call.c.device_id) +
                          "; kgemm runs on cuda:" + std::to_string(running) +
                          " (kgemm.initialize(device_id=...) or KOKKOS_DEVICE_ID chooses, before the first call)");
  return f(on_stream(call.stream));
#else
  throw InvalidArgument("the arrays are on " + device_name(call.c) +
                        "; this kgemm was built without CUDA (its spaces: serial/openmp)");
#endif
}

template <class F>
void with_space(Device where, F&& f) {
  start_if_needed();
  if (where == Device::Host) return f(Kokkos::DefaultHostExecutionSpace());
#if defined(KOKKOS_ENABLE_CUDA)
  return f(Kokkos::Cuda());
#else
  throw InvalidArgument("this kgemm was built without CUDA");
#endif
}

template <class F>
void with_scalar(const std::string& dtype, F&& f) {
  if (dtype_named(dtype) == DType::F16) return f(half{});
  f(float{});
}

}  // namespace

void initialize(const std::vector<std::string>& kokkos_args) {
  if (finalized())
    throw InvalidArgument("Kokkos was finalized (kgemm.finalize()); it cannot start again in this process");
  if (Kokkos::is_initialized())
    throw std::invalid_argument("kgemm.initialize: Kokkos is already running: call it once, before the first product");
  std::vector<std::string> words{"kgemm"};
  words.insert(words.end(), kokkos_args.begin(), kokkos_args.end());
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  enable_tuning_on_first_use();  // a bad $KGEMM_TUNE stops the start, naming it
  session().reset();
  session().emplace(int(words.size()), argv.data());
}

bool is_initialized() { return Kokkos::is_initialized(); }

void finalize() {
  if (session()) finalized() = true;
  session().reset();
}

void gemm(const GemmCall& call) {
  with_scalar(call.c.dtype, [&](auto scalar) {
    using Scalar = decltype(scalar);
    const GemmArgs<Scalar> args = operands_of<Scalar>(call);
    const Options options = options_of(call);
    with_space_of(call, [&](const auto& space) {
      run_gemm(space, args, call.batched, options);
      if constexpr (std::is_same<std::decay_t<decltype(space)>, Kokkos::DefaultHostExecutionSpace>::value) space.fence();
    });
  });
}

Explanation explain(const GemmCall& call) {
  Explanation out;
  with_scalar(call.c.dtype, [&](auto scalar) {
    using Scalar = decltype(scalar);
    const GemmArgs<Scalar> args = operands_of<Scalar>(call);
    const Options options = options_of(call);
    with_space_of(call, [&](const auto& space) {
      using Space = std::decay_t<decltype(space)>;
      const DeviceInfo device = device_info<Space>();
      out.space = device.space;
      out.device = device.device;
      out.problem = to_string(problem_of(args, call.batched));
      out.store = serving_store_line<Space>(device);
      if (options.config) {
        out.config = to_string(*options.config);
        out.source = "given";
        return;
      }
      const DispatchChoice choice = explain_config<Space>(args, call.batched, options.accum);
      out.config = to_string(choice.config);
      out.source = to_string(choice.source);
      if (const auto& p = choice.prediction) {
        out.source_problem = to_string(p->source.problem);
        out.source_gflops = p->source.gflops;
        out.predicted_gflops = p->gflops;
        out.padding = p->on_problem.padding;
        out.fill = p->on_problem.fill;
        out.depth = p->on_problem.depth;
        out.busy = p->busy;
        out.trust = p->trust;
      }
    });
  });
  return out;
}

DeviceFacts device_facts(Device where) {
  DeviceFacts out;
  with_space(where, [&](const auto& space) {
    using Space = std::decay_t<decltype(space)>;
    const DeviceInfo device = device_info<Space>();
    out.space = device.space;
    out.device = device.device;
    out.arch = device.arch;
    out.threads = device.threads;
    out.memory_gbps = device.memory_gbps;
    out.store = serving_store_line<Space>(device);
    out.scratch_limit = team_scratch_limit<Space>().why;
  });
  return out;
}

void add_store_directory(const std::string& dir) { kgemm::add_store_directory(dir); }

void set_warning_handler(std::function<void(const std::string&)> handler) { kgemm::set_warning_handler(std::move(handler)); }

std::vector<std::string> spaces() {
  std::vector<std::string> names;
  for_each_enabled_space_type([&](auto tag) { names.push_back(lowercase(decltype(tag)::type::name())); });
  return names;
}

std::string problem_key(const std::string& kernel, const std::string& dtype, char a_order, char b_order, int m, int n,
                        int k, int batch) {
  const std::optional<DType> element = dtype_named(dtype);
  if (!element) throw std::invalid_argument("kgemm.problem_key: dtype '" + dtype + "'; expected 'float32' or 'float16'");
  const Problem p{parse_kernel(kernel), *element, a_order, b_order, m, n, k, batch};
  if (const std::string why = why_invalid(p); !why.empty()) throw std::invalid_argument("kgemm.problem_key: " + why);
  return to_string(p);
}

double error_bound(const std::string& dtype, const std::string& accumulate, int k, const std::string& config,
                   double exact, double magnitude, double alpha, double beta_c0) {
  const std::optional<DType> data = dtype_named(dtype);
  if (!data) throw std::invalid_argument("kgemm error_bound: dtype '" + dtype + "'; expected 'float32' or 'float16'");
  const Accum accum = accum_named("kgemm error_bound", accumulate, dtype);
  return ErrorBound::of_call(*data, accum, k, parse_config(config))(exact, magnitude, alpha, beta_c0);
}

std::vector<Layer> resnet_layers(const std::string& model, int image, int batch) {
  std::vector<Layer> layers;
  for (const LayerShape& s : resnet_gemm_shapes(model, image, batch)) layers.push_back({s.layer, s.m, s.n, s.k, s.count});
  return layers;
}

TuneReport tune(const std::vector<std::string>& problems, const TuneSettings& settings) {
  kgemm::TuneSettings tuning;
  try {
    tuning.strategy = parse_strategy(settings.strategy);
    tuning.budget = parse_budget(settings.budget);
    tuning.operands = parse_operand_cache(settings.operands);
  } catch (const InvalidArgument& e) {
    throw std::invalid_argument(std::string("kgemm.tune: ") + e.reason());
  }
  tuning.seed = settings.seed;
  tuning.reps = settings.reps;
  std::vector<Problem> todo;
  for (const std::string& key : problems) {
    const Problem problem = parse_problem(key);
    if (const std::string why = why_invalid(problem); !why.empty())
      throw std::invalid_argument("kgemm.tune: " + key + ": " + why);
    todo.push_back(problem);
  }
  TuneReport report;
  with_space(settings.where, [&](const auto& space) {
    using Space = std::decay_t<decltype(space)>;
    const DeviceInfo device = device_info<Space>();
    report.store = settings.store.empty() ? tuning_store_path(device) : settings.store;
    // Proven writable first: a store found unwritable after the first problem costs its tuning.
    const KnownConfigs known(ConfigStore::open(report.store, device), device);
    ConfigStore::check_writable(report.store);
    for (const Problem& problem : todo) {
      const TuneOutcome outcome =
          tune_problem(space, problem, tuning, known.template for_problem<Space>(problem), device);
      TunedRow row;
      row.problem = to_string(problem);
      if (outcome.entry) {
        ConfigStore::update(report.store, device, [&](ConfigStore& latest) { latest.put(*outcome.entry); });
        row.config = to_string(outcome.entry->config);
        row.gflops = outcome.entry->gflops;
        row.default_gflops = outcome.entry->default_gflops;
        row.candidates = outcome.entry->candidates;
        row.stored = true;
      }
      report.rows.push_back(row);
    }
  });
  // Later products read the store as it is now.
  reload_config_stores();
  return report;
}

}  // namespace kgemm::arrays

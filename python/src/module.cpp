// kgemm._kgemm: the Python module. Arrays arrive as nanobind reads them (DLPack from CuPy, the
// buffer protocol or DLPack from NumPy) or, torch tensors, described by the package (pointer,
// shape, strides), never copied; arrays.hpp does the rest.
// Refusals raise ValueError (std::invalid_argument) or TypeError (not an array at all).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <initializer_list>
#include <string>
#include <stdexcept>
#include <utility>

#include "arrays.hpp"

namespace nb = nanobind;
using namespace kgemm::arrays;

namespace {

std::string dtype_name(const nb::dlpack::dtype& t) {
  using Code = nb::dlpack::dtype_code;
  const char* kind = t.code == uint8_t(Code::Float)    ? "float"
                     : t.code == uint8_t(Code::Int)     ? "int"
                     : t.code == uint8_t(Code::UInt)    ? "uint"
                     : t.code == uint8_t(Code::Bfloat)  ? "bfloat"
                     : t.code == uint8_t(Code::Complex) ? "complex"
                     : t.code == uint8_t(Code::Bool)    ? "bool"
                                                        : "dtype code " ;
  std::string name = kind + std::to_string(t.bits);
  if (t.lanes != 1) name += "x" + std::to_string(t.lanes);
  return name;
}

std::string class_name(nb::handle h) { return nb::type_name(h.type()).c_str(); }

// Array holds three extents: more are refused before they are read.
void check_rank(const char* fn, const char* role, int ndim) {
  if (ndim > 3)
    throw nb::value_error((std::string(fn) + ": " + role + " has " + std::to_string(ndim) +
                           " dimensions; kgemm takes matrices and (batch, rows, cols) batches")
                              .c_str());
}

// The array `h` as arrays.hpp describes it; `write`: it is the product's destination.
Array array_of(const char* fn, const char* role, nb::handle h, bool write) {
  // One import per array (each is a DLPack exchange, a good share of a small call's time): the
  // destination as writable, read-only only to say why it was refused.
  nb::ndarray<nb::ro> x;
  nb::ndarray<> writable;
  if (write && nb::try_cast(h, writable, /*convert=*/false)) x = nb::ndarray<nb::ro>(writable);
  if (!x.is_valid() && !nb::try_cast(h, x, /*convert=*/false))
    throw nb::type_error((std::string(fn) + ": " + role + " is a " + class_name(h) +
                          ", not an array kgemm can read in place (NumPy, CuPy, torch, or any DLPack array)")
                             .c_str());
  Array out;
  out.role = role;
  out.data = const_cast<void*>(x.data());
  const int type = x.device_type();
  if (type == nb::device::cpu::value) {
    out.device = Device::Host;
  } else if (type == nb::device::cuda::value) {
    out.device = Device::Cuda;
  } else {
    throw nb::value_error((std::string(fn) + ": " + role + " lives on DLPack device type " + std::to_string(type) +
                           "; kgemm reads host (cpu) and CUDA arrays")
                              .c_str());
  }
  out.device_id = x.device_id();
  out.dtype = dtype_name(x.dtype());
  out.ndim = int(x.ndim());
  check_rank(fn, role, out.ndim);
  for (int d = 0; d < out.ndim; ++d) {
    out.shape[d] = std::int64_t(x.shape(d));
    out.strides[d] = std::int64_t(x.stride(d));
  }
  out.writable = !write || writable.is_valid();
  return out;
}

// An array the package described itself, (pointer, dtype name, on CUDA, device id, shape,
// strides in elements): torch tensors, whose DLPack export costs microseconds a call.
Array described_array(const char* fn, const char* role, nb::handle h) {
  const auto t = nb::borrow<nb::tuple>(h);
  const auto shape = nb::borrow<nb::tuple>(t[4]), strides = nb::borrow<nb::tuple>(t[5]);
  Array out;
  out.role = role;
  out.data = reinterpret_cast<void*>(nb::cast<std::uintptr_t>(t[0]));
  out.dtype = nb::cast<std::string>(t[1]);
  out.device = nb::cast<bool>(t[2]) ? Device::Cuda : Device::Host;
  out.device_id = nb::cast<int>(t[3]);
  out.ndim = int(nb::len(shape));
  check_rank(fn, role, out.ndim);
  for (int d = 0; d < out.ndim; ++d) {
    out.shape[d] = nb::cast<std::int64_t>(shape[d]);
    out.strides[d] = nb::cast<std::int64_t>(strides[d]);
  }
  return out;
}

// `described`: a, b and c come as described_array's tuples, else as arrays.
GemmCall call_of(const char* fn, nb::handle a, nb::handle b, nb::handle c, float alpha, float beta, bool trans_a,
                 bool trans_b, bool batched, const std::string& config, const std::string& accumulate,
                 std::uintptr_t stream, bool described) {
  const auto operand = [&](const char* role, nb::handle h, bool write) {
    return described ? described_array(fn, role, h) : array_of(fn, role, h, write);
  };
  return GemmCall{operand("a", a, false), operand("b", b, false), operand("c", c, true),
                  trans_a, trans_b, alpha, beta, batched, config, accumulate, stream};
}

// Keys and values added to `out`, in their order.
using Items = std::initializer_list<std::pair<const char*, nb::object>>;
void add_to(nb::dict& out, Items items) {
  for (const auto& [key, value] : items) out[key] = value;
}
nb::dict dict_of(Items items) {
  nb::dict out;
  add_to(out, items);
  return out;
}

Device device_named(const std::string& where) {
  if (where == "cpu" || where == "host") return Device::Host;
  if (where == "cuda") return Device::Cuda;
  throw nb::value_error(("kgemm: device '" + where + "'; expected 'cpu' or 'cuda'").c_str());
}

}  // namespace

NB_MODULE(_kgemm, m) {
  m.doc() = "kgemm's compiled core; use the kgemm package's functions.";
  // kgemm's warnings as Python's (RuntimeWarning): notebooks show them, `warnings` filters them,
  // where stderr would reach only the terminal that started the kernel. From whichever thread
  // warns (products run with the GIL released); to stderr (the library's fallback when a handler
  // throws) once Python is gone, or where a filter makes the warning an error: a warning never
  // fails a call.
  kgemm::arrays::set_warning_handler([](const std::string& message) {
    if (!Py_IsInitialized()) throw std::runtime_error("Python is gone");
    nb::gil_scoped_acquire gil;
    if (PyErr_WarnEx(PyExc_RuntimeWarning, ("kgemm: " + message).c_str(), 1) != 0) {
      PyErr_Clear();
      throw std::runtime_error("the warning became an exception");
    }
  });

  m.def("gemm",
        [](nb::handle a, nb::handle b, nb::handle c, float alpha, float beta, bool trans_a, bool trans_b, bool batched,
           const std::string& config, const std::string& accumulate, std::uintptr_t stream, bool described) {
          const char* fn = batched ? "kgemm.batched_gemm" : "kgemm.gemm";
          const GemmCall call =
              call_of(fn, a, b, c, alpha, beta, trans_a, trans_b, batched, config, accumulate, stream, described);
          nb::gil_scoped_release unlocked;
          gemm(call);
        });

  m.def("explain",
        [](nb::handle a, nb::handle b, nb::handle c, float alpha, float beta, bool trans_a, bool trans_b, bool batched,
           const std::string& config, const std::string& accumulate, std::uintptr_t stream, bool described) {
          const Explanation e = explain(call_of("kgemm.explain", a, b, c, alpha, beta, trans_a, trans_b, batched,
                                                config, accumulate, stream, described));
          nb::dict out = dict_of({{"space", nb::cast(e.space)}, {"device", nb::cast(e.device)},
                                  {"problem", nb::cast(e.problem)}, {"config", nb::cast(e.config)},
                                  {"source", nb::cast(e.source)}, {"store", nb::cast(e.store)}});
          if (!e.source_problem.empty())
            add_to(out, {{"source_problem", nb::cast(e.source_problem)}, {"source_gflops", nb::cast(e.source_gflops)},
                         {"predicted_gflops", nb::cast(e.predicted_gflops)}, {"padding", nb::cast(e.padding)},
                         {"fill", nb::cast(e.fill)}, {"depth", nb::cast(e.depth)}, {"busy", nb::cast(e.busy)},
                         {"trust", nb::cast(e.trust)}});
          return out;
        });

  m.def("initialize", &initialize);
  m.def("is_initialized", &is_initialized);
  m.def("finalize", &finalize);
  m.def("spaces", &spaces);

  m.def("device", [](const std::string& where) {
    const DeviceFacts f = device_facts(device_named(where));
    nb::dict out = dict_of({{"space", nb::cast(f.space)}, {"device", nb::cast(f.device)}, {"arch", nb::cast(f.arch)},
                            {"threads", nb::cast(f.threads)}, {"memory_gbps", nb::cast(f.memory_gbps)},
                            {"store", nb::cast(f.store)}});
    if (!f.scratch_limit.empty()) out["team_scratch"] = f.scratch_limit;
    return out;
  });

  m.def("tune", [](const std::vector<std::string>& problems, const std::string& where, const std::string& budget,
                   const std::string& strategy, std::uint64_t seed, int reps, const std::string& operands,
                   const std::string& store) {
    const TuneSettings settings{device_named(where), budget, strategy, seed, reps, operands, store};
    TuneReport report;
    {
      nb::gil_scoped_release unlocked;
      report = tune(problems, settings);
    }
    nb::list rows;
    for (const TunedRow& r : report.rows) {
      nb::dict row = dict_of({{"problem", nb::cast(r.problem)}, {"stored", nb::cast(r.stored)}});
      if (r.stored)
        add_to(row, {{"config", nb::cast(r.config)}, {"gflops", nb::cast(r.gflops)},
                     {"default_gflops", nb::cast(r.default_gflops)}, {"candidates", nb::cast(r.candidates)}});
      rows.append(row);
    }
    return dict_of({{"store", nb::cast(report.store)}, {"rows", rows}});
  });

  m.def("problem_key", &problem_key);
  m.def("resnet_layers", [](const std::string& model, int image, int batch) {
    nb::list out;
    for (const Layer& l : resnet_layers(model, image, batch)) {
      out.append(dict_of({{"layer", nb::cast(l.name)}, {"m", nb::cast(l.m)}, {"n", nb::cast(l.n)}, {"k", nb::cast(l.k)},
                          {"count", nb::cast(l.count)}}));
    }
    return out;
  });
  m.def("error_bound", &error_bound);
  m.def("add_store_directory", &kgemm::arrays::add_store_directory);
}

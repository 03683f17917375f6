#pragma once
// kgemm's exceptions: one family, whose message is "kgemm: <reason>", built here and nowhere else.
// Each kind derives from the standard exception a caller catches for it, so that
// `catch (const std::invalid_argument&)` or `catch (const std::runtime_error&)` catches kgemm's
// refusals as it catches anyone's, and Python bindings map them as they map those (ValueError,
// RuntimeError); `catch (const kgemm::Error&)` catches every kind. A message that quotes another
// (a tool's "<tool>: <reason>", a store field's "(<reason>)") takes reason(), the text after the
// prefix, so that no one strips the prefix by hand.
//
// The kinds:
//   InvalidArgument (std::invalid_argument): the caller's input is wrong (an argument, a config or
//     problem string, an option, an environment variable's value); the same input is refused again.
//   RuntimeError (std::runtime_error): something outside the input failed (a file, the
//     filesystem, the device or its driver); the same input may succeed another time.
//   StoreError (a RuntimeError, dispatch/kgemm/dispatch/config_store.hpp): a store file that
//     cannot be read or written, named by its path.
#include <exception>
#include <stdexcept>
#include <string>

namespace kgemm {

// Not itself a std::exception: a kind derives from its standard base and from Error, and a second
// std::exception base would make `catch (const std::exception&)` ambiguous, so that it would not
// catch the kind at all.
class Error {
 public:
  static constexpr char kPrefix[] = "kgemm: ";

  virtual ~Error() = default;
  // "kgemm: <reason>"; the standard base's what().
  virtual const char* what() const noexcept = 0;
  // The message without "kgemm: ".
  const char* reason() const noexcept { return what() + sizeof(kPrefix) - 1; }

 protected:
  Error() = default;
  Error(const Error&) = default;
  Error& operator=(const Error&) = default;
  static std::string message(const std::string& reason) { return kPrefix + reason; }
};

// A kind of Error over the standard exception `Standard`, which keeps the one copy of the message
// (standard exceptions copy it without throwing).
template <class Standard>
class ErrorOf : public Standard, public Error {
 public:
  explicit ErrorOf(const std::string& reason) : Standard(message(reason)) {}
  const char* what() const noexcept final { return Standard::what(); }
};

class InvalidArgument : public ErrorOf<std::invalid_argument> {
 public:
  using ErrorOf::ErrorOf;
};

class RuntimeError : public ErrorOf<std::runtime_error> {
 public:
  using ErrorOf::ErrorOf;
};

// `e`'s message without kgemm's prefix: reason() for a kgemm::Error, what() for any other.
inline const char* reason_of(const std::exception& e) noexcept {
  const auto* error = dynamic_cast<const Error*>(&e);
  return error ? error->reason() : e.what();
}

}  // namespace kgemm

#include "kgemm/cli/options.hpp"
#include "kgemm/dtype.hpp"

namespace kgemm::cli {

CLI::Validator dtype() {
  return CLI::Validator(
      [](std::string& text) {
        try {
          text = dtype_name(parse_dtype(lowercase(text)));
          return std::string();
        } catch (const InvalidArgument& e) {
          return std::string(e.reason());
        }
      },
      "");
}

}  // namespace kgemm::cli

#include "kgemm/cli/options.hpp"
#include "kgemm/dtype.hpp"

namespace kgemm::cli {

CLI::Validator dtype() {
  return CLI::Validator(
      [](std::string& text) {
        try {
          text = parse_dtype(lowered(text)) == DType::F32 ? "fp32" : "fp16";
          return std::string();
        } catch (const InvalidArgument& e) {
          return std::string(e.reason());
        }
      },
      "");
}

}  // namespace kgemm::cli

#include "kgemm/cli/options.hpp"
#include "kgemm/dtype.hpp"

namespace kgemm::cli {

CLI::Validator dtype() {
  return CLI::Validator(
      [](std::string& text) {
        try {
          text = parse_dtype(lowered(text)) == DType::F32 ? "fp32" : "fp16";
          return std::string();
        } catch (const std::invalid_argument& e) {
          return std::string(e.what());
        }
      },
      "");
}

}  // namespace kgemm::cli

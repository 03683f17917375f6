#include "report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace kgemm::report {

std::string table_cell(const Value& value, Style style, int width) {
  struct Visit {
    Style style;
    int width;
    std::string operator()(std::monostate) const { return fmt::format("{:>{}}", "-", width); }
    std::string operator()(const std::string& text) const {
      return style == Style::Text ? fmt::format("{:<{}}", text, width) : fmt::format("{:>{}}", text, width);
    }
    std::string operator()(int count) const { return fmt::format("{:>{}}", count, width); }
    std::string operator()(bool flag) const { return fmt::format("{:>{}}", flag ? "yes" : "no", width); }
    std::string operator()(double x) const {
      switch (style) {
        case Style::Time:
        case Style::Share: return fmt::format("{:>{}.3f}", x, width);
        case Style::Factor: return fmt::format("{:>{}.2f}", x, width);
        case Style::Speedup: return fmt::format("{:>{}}", fmt::format("{:.2f}x", x), width);
        case Style::Error: return fmt::format("{:>{}.2e}", x, width);
        default: return fmt::format("{:>{}.1f}", x, width);
      }
    }
  };
  return std::visit(Visit{style, width}, value);
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char ch : text) out += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return out + "\"";
}

std::string csv_cell(const Value& value, Style style) {
  struct Visit {
    Style style;
    std::string operator()(std::monostate) const { return ""; }
    std::string operator()(const std::string& text) const { return csv_field(text); }
    std::string operator()(int count) const { return std::to_string(count); }
    std::string operator()(bool flag) const { return flag ? "true" : "false"; }
    std::string operator()(double x) const {
      switch (style) {
        case Style::Time: return fmt::format("{:.9g}", x);
        case Style::Factor:
        case Style::Speedup:
        case Style::Share: return fmt::format("{:.4f}", x);
        case Style::Error: return fmt::format("{:.4g}", x);
        default: return fmt::format("{:.6g}", x);
      }
    }
  };
  return std::visit(Visit{style}, value);
}

Json json_cell(const Value& value) {
  struct Visit {
    Json operator()(std::monostate) const { return nullptr; }
    Json operator()(const std::string& text) const { return text; }
    Json operator()(int count) const { return count; }
    Json operator()(bool flag) const { return flag; }
    Json operator()(double x) const { return std::isfinite(x) ? Json(x) : Json(nullptr); }
  };
  return std::visit(Visit{}, value);
}

const char* markdown_alignment(Style style) { return style == Style::Text ? "---" : "--:"; }

std::string join(const std::vector<std::string>& cells, const std::string& separator) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) line += (i ? separator : "") + cells[i];
  return line;
}

ShareSummary summarize_shares(const std::vector<double>& shares, double line) {
  ShareSummary out;
  if (shares.empty()) return out;
  double log_sum = 0;
  for (double s : shares) log_sum += std::log(std::max(s, 1e-9));
  out.geomean = std::exp(log_sum / double(shares.size()));
  out.worst = *std::min_element(shares.begin(), shares.end());
  out.reaching = std::size_t(std::count_if(shares.begin(), shares.end(), [&](double s) { return s >= line; }));
  return out;
}

}  // namespace kgemm::report

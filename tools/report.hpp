#pragma once
// The tools' reports as columns: a record type per table (a layer, a tuned problem, a strategy at
// a budget), each column declared once with its CSV header and JSON key, table heading, width and
// style, and one writer per format (fixed-width table, Markdown table, CSV, JSON) reading that
// list. kgemm-run, autotune and kgemm-compare-strategies print their tables through it.
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace kgemm::report {

using Json = nlohmann::ordered_json;

// A cell: nothing (an empty CSV field, JSON null, "-" in a table), text, a count, a flag or a
// measurement.
using Value = std::variant<std::monostate, std::string, int, bool, double>;

// How a number reads in a table and in CSV (JSON keeps every digit), and where a cell aligns:
// Text to the left, every other style to the right, text included (numbers written out already:
// a pair of factors, "2 of 3"). Count: integers, and means of counts with one decimal; Share: a
// fraction of a best (found / exhaustive best); Speedup: a factor written "1.25x" in tables.
enum class Style { Text, Count, Time, Rate, Factor, Speedup, Share, Error };

// Where a column appears: the writers' own bits; a tool adds bits of its own above kFirstOwn for
// selections of its own (add_json's `output`).
enum Output : unsigned { kTable = 1, kCsv = 2, kJson = 4, kFirstOwn = 8 };

template <class Record>
struct Column {
  std::string key;      // CSV header and JSON key
  std::string heading;  // table heading
  int width;            // fixed-width tables (Markdown cells are not padded)
  Style style;
  unsigned outputs;
  std::function<Value(const Record&)> value;
};

// One cell in each format (a heading is a text cell); the Columns below join them into lines.
std::string table_cell(const Value& value, Style style, int width);
std::string csv_field(const std::string& text);
std::string csv_cell(const Value& value, Style style);
// A non-finite measurement (a broken kernel's error) becomes null.
Json json_cell(const Value& value);
// "---" for text, "--:" for numbers.
const char* markdown_alignment(Style style);
std::string join(const std::vector<std::string>& cells, const std::string& separator);

template <class Record>
class Columns {
 public:
  Columns(std::initializer_list<Column<Record>> columns) : columns_(columns) {}
  explicit Columns(std::vector<Column<Record>> columns) : columns_(std::move(columns)) {}

  // The same less the columns named `key` (a table leaving out what none of its rows has).
  Columns without(const std::string& key) const {
    std::vector<Column<Record>> kept;
    for (const Column<Record>& c : columns_)
      if (c.key != key) kept.push_back(c);
    return Columns(std::move(kept));
  }

  // Fixed width: cells padded to their width, a space between.
  std::string table_header() const {
    return join(cells(kTable, [](const Column<Record>& c) { return table_cell(c.heading, c.style, c.width); }), " ");
  }
  std::string table_line(const Record& record) const {
    return join(cells(kTable, [&](const Column<Record>& c) { return table_cell(c.value(record), c.style, c.width); }), " ");
  }

  // Markdown: the heading line and the alignment line, then a line per record.
  std::string markdown_header() const {
    std::string alignment = "|";
    for (const std::string& a : cells(kTable, [](const Column<Record>& c) { return markdown_alignment(c.style); }))
      alignment += a + "|";
    return "| " + join(cells(kTable, [](const Column<Record>& c) { return c.heading; }), " | ") + " |\n" + alignment;
  }
  std::string markdown_line(const Record& record) const {
    return "| " + join(cells(kTable, [&](const Column<Record>& c) { return table_cell(c.value(record), c.style, 0); }), " | ") +
           " |";
  }

  std::string csv_header() const {
    return join(cells(kCsv, [](const Column<Record>& c) { return c.key; }), ",");
  }
  std::string csv_line(const Record& record) const {
    return join(cells(kCsv, [&](const Column<Record>& c) { return csv_cell(c.value(record), c.style); }), ",");
  }

  // The columns of `output` as members of `object`.
  void add_json(Json& object, const Record& record, unsigned output = kJson) const {
    for (const Column<Record>& c : columns_)
      if (c.outputs & output) object[c.key] = json_cell(c.value(record));
  }

 private:
  // `cell` of each column of `output`, in order.
  template <class Cell>
  std::vector<std::string> cells(unsigned output, Cell cell) const {
    std::vector<std::string> out;
    for (const Column<Record>& c : columns_)
      if (c.outputs & output) out.push_back(cell(c));
    return out;
  }

  std::vector<Column<Record>> columns_;
};

// Shares of a reference over problems (a choice's rate over the best, 0 for a wrong one): their
// geometric mean (a 0 counted as 1e-9, so that a wrong choice weighs without making it 0), the
// worst, and how many reach `line`. The retime and replay tools summarize a search alike.
struct ShareSummary {
  double geomean = 0, worst = 0;
  std::size_t reaching = 0;
};
ShareSummary summarize_shares(const std::vector<double>& shares, double line = 0.98);

}  // namespace kgemm::report

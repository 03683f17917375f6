#include "store_yaml.hpp"

#include <cstdint>
#include <optional>

#include "kgemm/dispatch/config_store.hpp"

namespace kgemm::store_yaml {

std::string position(const Mark& mark) {
  return "line " + std::to_string(mark.line) + ", column " + std::to_string(mark.column) + ": ";
}

namespace {

constexpr const char* kNoAliases =
    "YAML anchors, aliases and merge keys (<<) are not supported in stores: write the values out";

// Where a node is in the document, for messages ("entries[3].config"); built on the stack as the
// parser descends and turned into text only when a message needs it.
struct PathPart {
  const PathPart* parent = nullptr;
  std::string_view key;
  std::optional<std::size_t> index;  // a list item's

  static std::string text(const PathPart* part) {
    if (!part) return "";
    const std::string above = text(part->parent);
    if (part->index) return above + "[" + std::to_string(*part->index) + "]";
    return above.empty() ? std::string(part->key) : above + "." + std::string(part->key);
  }
};

bool is_space(char c) { return c == ' ' || c == '\t'; }
bool is_flow_indicator(char c) { return c == ',' || c == '[' || c == ']' || c == '{' || c == '}'; }

// What a one-character escape after '\\' stands for.
std::optional<std::string> simple_escape(char c) {
  switch (c) {
    case '0': return std::string(1, '\0');
    case 'a': return "\a";
    case 'b': return "\b";
    case 't': case '\t': return "\t";
    case 'n': return "\n";
    case 'v': return "\v";
    case 'f': return "\f";
    case 'r': return "\r";
    case 'e': return "\x1b";
    case ' ': return " ";
    case '"': return "\"";
    case '/': return "/";
    case '\\': return "\\";
    case 'N': return "\xc2\x85";
    case '_': return "\xc2\xa0";
    case 'L': return "\xe2\x80\xa8";
    case 'P': return "\xe2\x80\xa9";
    default: return std::nullopt;
  }
}

void append_utf8(std::string& out, std::uint32_t code) {
  if (code < 0x80) {
    out += char(code);
  } else if (code < 0x800) {
    out += char(0xC0 | code >> 6);
    out += char(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += char(0xE0 | code >> 12);
    out += char(0x80 | (code >> 6 & 0x3F));
    out += char(0x80 | (code & 0x3F));
  } else {
    out += char(0xF0 | code >> 18);
    out += char(0x80 | (code >> 12 & 0x3F));
    out += char(0x80 | (code >> 6 & 0x3F));
    out += char(0x80 | (code & 0x3F));
  }
}

class Parser {
 public:
  using OnItem = std::function<void(Node&&, std::size_t)>;

  Parser(const std::string& path, std::string_view text, std::string_view streamed_key, const OnItem& on_item)
      : path_(path), streamed_key_(streamed_key), on_item_(on_item) {
    if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // a UTF-8 byte order mark
    std::size_t start = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\0')
        fail({int(lines_.size() + 1), int(i - start + 1)}, "contains a NUL byte at line " + std::to_string(lines_.size() + 1) +
                                                               ", column " + std::to_string(i - start + 1) +
                                                               ": a store is text");
      if (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n'))
        fail({int(lines_.size() + 1), int(i - start + 1)},
             "uses CR-only line ends (classic Mac OS) from line " + std::to_string(lines_.size() + 1) +
                 ": a store's lines end in LF (or CR LF); convert the file");
      if (text[i] == '\n') {
        const std::size_t end = i > start && text[i - 1] == '\r' ? i - 1 : i;
        lines_.push_back(text.substr(start, end - start));
        start = i + 1;
      }
    }
    if (start < text.size()) lines_.push_back(text.substr(start));
  }

  Node document() {
    skip_blank();
    if (!eof() && !line().empty() && line()[0] == '%') fail(mark(0), "YAML directives (%) are not supported in stores");
    if (!eof() && at_marker("---")) {
      if (!blank_from(3)) syntax(3, "a store starts on the line after '---'");
      next_line();
      skip_blank();
    }
    Node root;
    if (!at_end()) {
      col_ = indent();
      root = block(nullptr, 0, false);
    }
    skip_blank();
    bool ended = false;
    if (!eof() && at_marker("...")) {
      ended = true;
      next_line();
      skip_blank();
    }
    if (!eof()) {
      if (ended || at_marker("---"))
        fail(mark(0), "a second YAML document starts here: a store file holds one store (two stores joined in one "
                      "file?); keep one");
      syntax(indent(), "text after the end of the document's value");
    }
    return root;
  }

 private:
  std::string_view line() const { return lines_[line_]; }
  bool eof() const { return line_ >= lines_.size(); }
  Mark mark(std::size_t column) const { return {int(line_ + 1), int(column + 1)}; }
  void next_line() {
    ++line_;
    col_ = 0;
  }

  [[noreturn]] void fail(const Mark& at, const std::string& what) const { throw StoreError(path_, position(at) + what); }
  [[noreturn]] void syntax(std::size_t column, const std::string& what) const {
    fail(mark(column), "YAML syntax error: " + what);
  }

  std::size_t skip_spaces(std::size_t column) const {
    while (column < line().size() && is_space(line()[column])) ++column;
    return column;
  }
  // Nothing but spaces and a comment from `column` on.
  bool blank_from(std::size_t column) const {
    const std::size_t at = skip_spaces(column);
    return at == line().size() || (line()[at] == '#' && (at == 0 || is_space(line()[at - 1])));
  }
  bool at_marker(std::string_view marker) const {
    return line().substr(0, 3) == marker && (line().size() == 3 || is_space(line()[3]));
  }
  bool at_end() const { return eof() || at_marker("---") || at_marker("..."); }
  void skip_blank() {
    while (!eof() && !at_marker("---") && !at_marker("...") && blank_from(0)) next_line();
  }
  std::size_t indent() const {
    std::size_t column = 0;
    while (column < line().size() && line()[column] == ' ') ++column;
    if (column < line().size() && line()[column] == '\t')
      fail(mark(column), "a tab in the indentation: YAML indents with spaces");
    return column;
  }
  bool item_at(std::size_t column) const {
    return column < line().size() && line()[column] == '-' && (column + 1 == line().size() || is_space(line()[column + 1]));
  }

  // The end of the plain value starting at `column`: in a flow collection (and for keys) it stops
  // at a flow indicator too.
  std::size_t plain_end(std::size_t column, bool flow) const {
    const std::string_view text = line();
    std::size_t end = column;
    for (; end < text.size(); ++end) {
      const char c = text[end];
      if (c == '#' && end > column && is_space(text[end - 1])) break;
      if (flow && is_flow_indicator(c)) break;
      if (c == ':' && (end + 1 == text.size() || is_space(text[end + 1]) || (flow && is_flow_indicator(text[end + 1]))))
        break;
    }
    while (end > column && is_space(text[end - 1])) --end;
    return end;
  }
  // Just past the quoted value starting at `column`, or npos when it does not end on its line.
  std::size_t quoted_end(std::size_t column) const {
    const std::string_view text = line();
    const char quote = text[column];
    for (std::size_t at = column + 1; at < text.size(); ++at) {
      if (quote == '"' && text[at] == '\\') {
        ++at;
      } else if (text[at] == quote) {
        if (quote == '\'' && at + 1 < text.size() && text[at + 1] == '\'') {
          ++at;
          continue;
        }
        return at + 1;
      }
    }
    return std::string_view::npos;
  }
  // Whether a key (a plain or quoted value, then ':') starts at `column`.
  bool key_at(std::size_t column) const {
    const std::string_view text = line();
    const char c = text[column];
    std::size_t end;
    if (c == '"' || c == '\'') {
      end = quoted_end(column);
      if (end == std::string_view::npos) return false;
    } else if (is_flow_indicator(c) || std::string_view("&*!|>?@`#").find(c) != std::string_view::npos) {
      return false;
    } else {
      end = plain_end(column, true);
    }
    end = skip_spaces(end);
    return end < text.size() && text[end] == ':' && (end + 1 == text.size() || is_space(text[end + 1]));
  }

  // The node starting at col_, where a block node may start: a list, a mapping or one value.
  Node block(const PathPart* path, std::size_t depth, bool stream) {
    if (item_at(col_)) return block_list(path, col_, depth, stream);
    if (line()[col_] == '?' && (col_ + 1 == line().size() || is_space(line()[col_ + 1])))
      fail(mark(col_), "YAML complex keys (?) are not supported in stores");
    if (key_at(col_)) return block_map(path, col_, depth);
    return value_ending_line(path, depth, stream);
  }

  Node block_map(const PathPart* path, std::size_t indent_of_keys, std::size_t depth) {
    Node map;
    map.kind = Node::Kind::Map;
    map.mark = mark(indent_of_keys);
    for (;;) {
      if (item_at(col_)) syntax(col_, "a list item where the mapping's next key was expected");
      if (!key_at(col_)) syntax(col_, "expected 'key: value'");
      Pair pair;
      pair.key_mark = mark(col_);
      pair.key = key(map, path, depth);
      const PathPart here{path, pair.key, std::nullopt};
      const bool stream = depth == 0 && pair.key == streamed_key_;
      col_ = skip_spaces(col_);
      if (blank_from(col_)) {
        pair.value.mark = pair.key_mark;
        next_line();
        skip_blank();
        if (!at_end()) {
          const std::size_t column = indent();
          // A list under a key may sit at the key's own indentation.
          if (column > indent_of_keys || (column == indent_of_keys && item_at(column))) {
            col_ = column;
            pair.value = block(&here, depth + 1, stream);
          }
        }
      } else {
        pair.value = value_ending_line(&here, depth + 1, stream);
      }
      map.map.push_back(std::move(pair));
      skip_blank();
      if (at_end()) break;
      const std::size_t column = indent();
      if (column < indent_of_keys) break;
      if (column > indent_of_keys)
        syntax(column, "indented more than the mapping's keys (column " + std::to_string(indent_of_keys + 1) +
                           "); a value continued on another line is not supported in stores");
      col_ = column;
    }
    return map;
  }

  Node block_list(const PathPart* path, std::size_t indent_of_items, std::size_t depth, bool stream) {
    Node list;
    list.kind = Node::Kind::List;
    list.mark = mark(indent_of_items);
    for (std::size_t index = 0;; ++index) {
      const PathPart here{path, {}, index};
      const Mark item_mark = mark(indent_of_items);
      col_ = skip_spaces(indent_of_items + 1);
      Node item;
      item.mark = item_mark;
      if (blank_from(col_)) {
        next_line();
        skip_blank();
        if (!at_end() && indent() > indent_of_items) {
          col_ = indent();
          item = block(&here, depth + 1, false);
        }
      } else {
        item = block(&here, depth + 1, false);
      }
      add_item(list, std::move(item), index, stream);
      skip_blank();
      if (at_end()) break;
      const std::size_t column = indent();
      if (column > indent_of_items)
        syntax(column, "indented more than the list's items (column " + std::to_string(indent_of_items + 1) + ")");
      if (column < indent_of_items || !item_at(column)) break;
      col_ = column;
    }
    return list;
  }

  void add_item(Node& list, Node&& item, std::size_t index, bool stream) {
    if (stream)
      on_item_(std::move(item), index);
    else
      list.list.push_back(std::move(item));
  }

  // A flow collection or a scalar at col_, then nothing but a comment on its line.
  Node value_ending_line(const PathPart* path, std::size_t depth, bool stream) {
    if (item_at(col_)) syntax(col_, "a list cannot start on the line of its key");
    Node value = flow_value(path, depth, stream, false);
    col_ = skip_spaces(col_);
    if (!blank_from(col_)) syntax(col_, "unexpected text after the value");
    next_line();
    return value;
  }

  Node flow_value(const PathPart* path, std::size_t depth, bool stream, bool in_flow) {
    const char c = line()[col_];
    if (c == '{' || c == '[') return flow(path, depth, stream);
    return scalar(in_flow);
  }

  // A mapping's key at col_ (col_ then at the ':'), checked against the keys before it.
  std::string key(const Node& map, const PathPart* path, std::size_t depth) {
    const Mark at = mark(col_);
    const bool plain = line()[col_] != '"' && line()[col_] != '\'';
    std::string key = scalar(true).scalar;
    if (plain && key == "<<") fail(at, kNoAliases);
    col_ = skip_spaces(col_);
    if (col_ == line().size() || line()[col_] != ':') syntax(col_, "expected ':' after the key '" + key + "'");
    ++col_;
    for (const Pair& earlier : map.map)
      if (earlier.key == key) {
        const PathPart here{path, key, std::nullopt};
        fail(at, "'" + PathPart::text(&here) + "' appears twice in one mapping, on line " +
                     std::to_string(earlier.key_mark.line) + " and line " + std::to_string(at.line) +
                     (depth == 0 ? ": a store file holds one store (two stores joined in one file?); keep one"
                                 : "; keep one"));
      }
    return key;
  }

  // A collection from '{' or '[' at col_ to its closing bracket on the same line.
  Node flow(const PathPart* path, std::size_t depth, bool stream) {
    const std::size_t open = col_;
    const bool is_map = line()[open] == '{';
    const char close = is_map ? '}' : ']';
    Node node;
    node.kind = is_map ? Node::Kind::Map : Node::Kind::List;
    node.mark = mark(open);
    const auto unclosed = [&] {
      syntax(open, std::string("the flow ") + (is_map ? "mapping" : "list") + " opened here is not closed on its line (a " +
                       "store keeps each {...} and [...] on one line)");
    };
    ++col_;
    for (std::size_t index = 0;; ++index) {
      col_ = skip_spaces(col_);
      if (blank_from(col_)) unclosed();
      if (line()[col_] == close) break;
      if (line()[col_] == ',') syntax(col_, "an empty item");
      if (is_map) {
        Pair pair;
        pair.key_mark = mark(col_);
        if (line()[col_] == '{' || line()[col_] == '[') syntax(col_, "a key that is a collection");
        pair.key = key(node, path, depth);
        const PathPart here{path, pair.key, std::nullopt};
        col_ = skip_spaces(col_);
        if (blank_from(col_)) unclosed();
        if (line()[col_] == ',' || line()[col_] == close)
          pair.value.mark = mark(col_);
        else
          pair.value = flow_value(&here, depth + 1, depth == 0 && pair.key == streamed_key_, true);
        node.map.push_back(std::move(pair));
      } else {
        const PathPart here{path, {}, index};
        add_item(node, flow_value(&here, depth + 1, false, true), index, stream);
      }
      col_ = skip_spaces(col_);
      if (blank_from(col_)) unclosed();
      if (line()[col_] == close) break;
      if (line()[col_] != ',') syntax(col_, std::string("expected ',' or '") + close + "'");
      ++col_;
    }
    ++col_;
    return node;
  }

  // A plain or quoted value at col_; col_ then just past it.
  Node scalar(bool in_flow) {
    Node node;
    node.mark = mark(col_);
    const std::string_view text = line();
    const char c = text[col_];
    const bool alone = col_ + 1 == text.size() || is_space(text[col_ + 1]);
    if (c == '&' || c == '*') fail(node.mark, kNoAliases);
    if (c == '!') fail(node.mark, "YAML tags (!) are not supported in stores");
    if (c == '|' || c == '>') fail(node.mark, "YAML block scalars (| and >) are not supported in stores: write the value on one line");
    if (c == '?' && alone) fail(node.mark, "YAML complex keys (?) are not supported in stores");
    if (c == '@' || c == '`') syntax(col_, std::string("'") + c + "' cannot start a plain value: quote it");
    // YAML reads "#" after a space as a comment; right after ',' or '{' it starts nothing readable.
    if (c == '#') syntax(col_, "'#' cannot start a plain value: quote it, or put a space before a comment");
    if (c == '-' && alone) syntax(col_, "a list item inside a value");
    node.kind = Node::Kind::Scalar;
    if (c == '"' || c == '\'') {
      const std::size_t end = quoted_end(col_);
      if (end == std::string_view::npos)
        fail(node.mark, "a quoted value that does not end on its line: a store keeps each value on one line");
      node.scalar = c == '"' ? double_quoted(col_ + 1, end - 1) : single_quoted(text.substr(col_ + 1, end - col_ - 2));
      col_ = end;
      return node;
    }
    const std::size_t end = plain_end(col_, in_flow);
    node.scalar = std::string(text.substr(col_, end - col_));
    if (!in_flow && end < text.size() && text[end] == ':')
      syntax(end, "': ' inside a plain value (quote the value)");
    col_ = end;
    if (node.scalar == "~" || node.scalar == "null" || node.scalar == "Null" || node.scalar == "NULL")
      node.kind = Node::Kind::Null;
    return node;
  }

  static std::string single_quoted(std::string_view text) {
    std::string out;
    for (std::size_t at = 0; at < text.size(); ++at) {
      out += text[at];
      if (text[at] == '\'') ++at;  // '' stands for '
    }
    return out;
  }

  // The text between the quotes at columns begin - 1 and end, escapes resolved.
  std::string double_quoted(std::size_t begin, std::size_t end) const {
    const std::string_view text = line();
    std::string out;
    for (std::size_t at = begin; at < end; ++at) {
      if (text[at] != '\\') {
        out += text[at];
        continue;
      }
      const std::size_t escape = at++;
      if (const std::optional<std::string> one = simple_escape(text[at])) {
        out += *one;
        continue;
      }
      const char c = text[at];
      const int digits = c == 'x' ? 2 : c == 'u' ? 4 : c == 'U' ? 8 : 0;
      if (digits == 0) syntax(escape, std::string("unknown escape '\\") + c + "'");
      std::uint32_t code = 0;
      for (int d = 0; d < digits; ++d) {
        const char h = ++at < end ? text[at] : '\0';
        const int value = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
        if (value < 0) syntax(escape, std::string("'\\") + c + "' needs " + std::to_string(digits) + " hex digits");
        code = code << 4 | std::uint32_t(value);
      }
      if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF))
        syntax(escape, "the escape names no Unicode character");
      append_utf8(out, code);
    }
    return out;
  }

  const std::string& path_;
  std::string_view streamed_key_;
  const OnItem& on_item_;
  std::vector<std::string_view> lines_;
  std::size_t line_ = 0, col_ = 0;
};

}  // namespace

Node parse(const std::string& path, std::string_view text, std::string_view streamed_key,
           const std::function<void(Node&& item, std::size_t index)>& on_item) {
  return Parser(path, text, streamed_key, on_item).document();
}

}  // namespace kgemm::store_yaml

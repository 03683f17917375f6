#pragma once
// The YAML that stores are written in, read without a general YAML library: yaml-cpp's parser
// takes seconds and a gigabyte for a store of 100,000 entries; this reader keeps one entry at a
// time. The subset: one document (an optional `---` before it); block mappings and lists
// (indented with spaces; a list item may start a mapping on its line, `- key: value`); flow
// mappings and lists `{...}` `[...]` that close on the line they open; plain, 'single' and
// "double" quoted values on one line; comments. Everything else is refused naming it and its
// line and column: anchors, aliases and merge keys, tags, block scalars (| >), complex keys (?),
// directives, a second document, a value continued on the next line, tabs in indentation, NUL
// bytes and CR-only line ends. A key twice in one mapping is refused naming both lines (YAML
// keys are unique; a reader keeping either would hide the other).
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace kgemm::store_yaml {

struct Mark {
  int line = 0, column = 0;  // from 1
};

// "line L, column C: ".
std::string position(const Mark& mark);

struct Node;
struct Pair;

struct Node {
  enum class Kind { Null, Scalar, Map, List };
  Kind kind = Kind::Null;
  Mark mark;
  std::string scalar;       // Scalar: the value, quotes and escapes resolved
  std::vector<Pair> map;    // Map: in file order
  std::vector<Node> list;   // List: unless streamed (parse)
};

struct Pair {
  std::string key;
  Mark key_mark;
  Node value;
};

// The root of `text`, the contents of the file `path` (named by errors, which are StoreErrors).
// The items of the root mapping's list under `streamed_key` are handed to `on_item` as each is
// read, with their index, instead of being kept: its node is a List without items.
Node parse(const std::string& path, std::string_view text, std::string_view streamed_key,
           const std::function<void(Node&& item, std::size_t index)>& on_item);

}  // namespace kgemm::store_yaml

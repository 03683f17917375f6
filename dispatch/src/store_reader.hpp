#pragma once
// Reading a store's text into a ConfigStore: the fields of the YAML (store_yaml.hpp) checked and
// converted, as ConfigStore::load documents.
#include <string>
#include <string_view>
#include <vector>

#include "kgemm/dispatch/config_store.hpp"

namespace kgemm::detail {

// The store `text` (the contents of the file `path`) holds; `refused` as in ConfigStore::load.
ConfigStore read_store(const std::string& path, std::string_view text, std::vector<std::string>* refused);

}  // namespace kgemm::detail

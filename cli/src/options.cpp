#include "kgemm/cli/options.hpp"

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <set>

#include "kgemm/text_number.hpp"

namespace kgemm::cli {

namespace {

// Options as "--name TYPE   text (default: value)".
class Layout : public CLI::Formatter {
 public:
  std::string make_option_opts(const CLI::Option* option) const override {
    return option->get_type_name().empty() ? "" : " " + option->get_type_name();
  }
  std::string make_option_desc(const CLI::Option* option) const override {
    const std::string fallback = option->get_default_str();
    return option->get_description() + (fallback.empty() ? "" : " (default: " + fallback + ")");
  }
};

InvalidArgument refusal(const std::string& name, const std::string& why) {
  return InvalidArgument("option " + name + " " + why);
}

}  // namespace

App::App(const std::string& about, const std::string& name, const std::string& footer) : CLI::App(about, name) {
  set_help_flag("--help", "print this help and exit");
  auto layout = std::make_shared<Layout>();
  layout->column_width(22);
  formatter(layout);
  this->footer(footer);
}

std::vector<std::string> own_words(int argc, char** argv, std::initializer_list<const char*> others) {
  std::vector<std::string> words;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (std::none_of(others.begin(), others.end(), [&](const char* prefix) { return word.rfind(prefix, 0) == 0; }))
      words.push_back(word);
  }
  return words;
}

bool App::read(const std::vector<std::string>& words) {
  // What CLI11 2.1 gets wrong or says vaguely is settled word by word before it parses: "--name="
  // (CLI11 takes the next word as its value), "--flag=value" (CLI11 reads yes, no, 1, 0, ...),
  // a list without items, and a single value given twice (CLI11: "At Most 1 required").
  std::vector<std::string> args;  // for CLI11, last word first
  std::map<std::string, int> given;
  std::vector<std::string> emptied;  // lists given as "--name=" that take none
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word.rfind("--", 0) != 0 || word == "--") {
      args.push_back(word);
      continue;
    }
    const std::size_t eq = word.find('=');
    const std::string name = word.substr(0, eq);
    const CLI::Option* option = get_option_no_throw(name);
    if (!option) throw InvalidArgument("unknown option " + name + " (see --help)");
    const int most = option->get_items_expected_max();
    if (most == 0) {  // a flag
      if (eq != std::string::npos) throw refusal(name, "takes no value");
      args.push_back(name);
      continue;
    }
    std::string value;
    if (eq != std::string::npos)
      value = word.substr(eq + 1);
    else if (i + 1 < words.size())
      value = words[++i];
    else
      throw refusal(name, "needs a value");
    const bool list = most > 1;
    if (!list) ++given[name];
    if (list && value.find_first_not_of(',') == std::string::npos) {
      if (!none_.count(name)) throw refusal(name, "needs at least one value");
      emptied.push_back(name);
      continue;
    }
    args.push_back(name);
    args.push_back(value);
  }
  for (const auto& [name, times] : given)
    if (times > 1) throw refusal(name, "is given " + std::to_string(times) + " times; give it once");
  std::reverse(args.begin(), args.end());
  try {
    parse(args);
  } catch (const CLI::CallForHelp&) {
    std::cout << help();
    return false;
  } catch (const CLI::ValidationError& e) {
    throw InvalidArgument(std::string("option ") + e.what());  // "--name: why"
  } catch (const CLI::ParseError& e) {
    throw InvalidArgument(e.what());
  }
  for (const std::string& name : emptied)
    if (count(name) == 0) none_.at(name)();  // "--peers= --peers=x" runs x
  return true;
}

CLI::Validator integer(int min, int max) {
  return CLI::Validator(
      [min, max](std::string& text) -> std::string {
        const auto value = integer_in(text, min, max);
        if (!value) return not_an_integer(text, min, max);
        text = std::to_string(*value);
        return "";
      },
      "");
}

CLI::Validator lower_case() {
  return CLI::Validator(
      [](std::string& text) {
        text = lowercase(text);
        return std::string();
      },
      "");
}

CLI::Validator one_of(const std::vector<std::string>& names) {
  return CLI::Validator(
      [names](std::string& text) {
        if (std::find(names.begin(), names.end(), text) != names.end()) return std::string();
        std::string listed;
        for (const std::string& name : names) listed += (listed.empty() ? "" : ", ") + name;
        return "'" + text + "' is not one of " + listed;
      },
      "");
}

CLI::Validator distinct() {
  auto seen = std::make_shared<std::set<std::string>>();
  return CLI::Validator(
      [seen](std::string& text) { return seen->insert(text).second ? std::string() : "lists '" + text + "' twice"; },
      "");
}

}  // namespace kgemm::cli

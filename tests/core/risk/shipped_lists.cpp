#include "shipped_lists.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace mailassay::tests {

std::string read_risk_file(const char* name) {
  const char* root = std::getenv("MAILASSAY_SOURCE_DIR");
  std::string path =
      std::string{root ? root : "."} + "/data/risk/" + name + ".txt";
  std::ifstream in{path};
  if (!in)
    throw std::runtime_error("cannot read " + path +
                             " (is MAILASSAY_SOURCE_DIR set?)");
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

const core::risk::lists& shipped_lists() {
  static const core::risk::lists lists = [] {
    auto disposable = read_risk_file("disposable");
    auto allow = read_risk_file("disposable_allow");
    auto free = read_risk_file("free_providers");
    auto roles = read_risk_file("roles");
    auto tlds = read_risk_file("tlds");
    auto first = read_risk_file("first_names");
    auto last = read_risk_file("last_names");
    auto words = read_risk_file("common_words");
    core::risk::list_texts texts;
    texts.disposable = disposable;
    texts.disposable_allow = allow;
    texts.free_providers = free;
    texts.roles = roles;
    texts.tlds = tlds;
    texts.first_names = first;
    texts.last_names = last;
    texts.common_words = words;
    return core::risk::lists_from_texts(texts);
  }();
  return lists;
}

} // namespace mailassay::tests

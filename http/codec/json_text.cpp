#include "http/codec/json_text.hpp"

namespace mailassay::http::codec {

std::string text_of(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

} // namespace mailassay::http::codec

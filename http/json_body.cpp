#include "http/json_body.hpp"

#include <cstring>
#include <set>
#include <string>
#include <vector>

namespace mailassay::http {

namespace {

using nlohmann::json;

// nlohmann's DOM builder with the checks it lacks: tracks where in the
// document the parser is, so a repeated name and an out-of-range number can
// be reported by their field.
class strict_builder {
public:
  explicit strict_builder(json& out) : dom_(out, false) {}

  bool null() { return value() && dom_.null(); }
  bool boolean(bool v) { return value() && dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) {
    return value() && dom_.number_integer(v);
  }
  bool number_unsigned(json::number_unsigned_t v) {
    return value() && dom_.number_unsigned(v);
  }
  bool number_float(json::number_float_t v, const json::string_t& s) {
    return value() && dom_.number_float(v, s);
  }
  bool string(json::string_t& v) { return value() && dom_.string(v); }
  bool binary(json::binary_t& v) { return value() && dom_.binary(v); }

  bool start_object(std::size_t n) {
    if (!value() || !open())
      return false;
    frames_.push_back({true, {}, 0, {}});
    return dom_.start_object(n);
  }

  bool key(json::string_t& k) {
    auto& f = frames_.back();
    f.name = k;
    if (!f.names.insert(k).second) {
      problem_ = problem::repeated;
      return false;
    }
    return dom_.key(k);
  }

  bool end_object() {
    frames_.pop_back();
    return dom_.end_object();
  }

  bool start_array(std::size_t n) {
    if (!value() || !open())
      return false;
    frames_.push_back({false, {}, 0, {}});
    return dom_.start_array(n);
  }

  bool end_array() {
    frames_.pop_back();
    return dom_.end_array();
  }

  template <class Exception>
  bool parse_error(std::size_t pos, const std::string& token,
                   const Exception& ex) {
    // 406: "number overflow parsing '1e400'", raised on a well-formed
    // number whose value no double holds.
    if (problem_ == problem::none)
      problem_ = ex.id == 406 ? problem::out_of_range : problem::malformed;
    return dom_.parse_error(pos, token, ex);
  }

  /// What stopped the parse, if anything did.
  enum class problem { none, malformed, too_deep, repeated, out_of_range };

  problem stopped_by() const { return problem_; }

  /// The dotted path of the value being read ("config.smtp",
  /// "allowedDomains.0"); for a repeated name, that name.
  std::string path() const {
    std::string out;
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      auto& f = frames_[i];
      if (!out.empty())
        out += '.';
      // An outer array is inside its element `count - 1`; the innermost
      // one failed before counting the element it was reading.
      bool inner = i + 1 == frames_.size();
      out += f.object ? f.name : std::to_string(f.count - (inner ? 0 : 1));
    }
    return out;
  }

private:
  struct frame {
    bool object;
    std::string name;  // the current member's name (objects)
    std::size_t count; // the next element's index (arrays)
    std::set<std::string> names;
  };

  // Called before every value: counts array elements.
  bool value() {
    if (!frames_.empty() && !frames_.back().object)
      ++frames_.back().count;
    return true;
  }

  bool open() {
    if (frames_.size() >= json_max_depth) {
      problem_ = problem::too_deep;
      return false;
    }
    return true;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::vector<frame> frames_;
  problem problem_ = problem::none;
};

core::error malformed(std::string message = "Malformed JSON in request body") {
  return core::make_error(core::errc::bad_request, std::move(message));
}

core::error unprocessable(std::string message) {
  auto e = core::make_error(core::errc::validation_failed, "");
  e.details = {std::move(message)};
  return e;
}

} // namespace

core::expected<json> parse_json_body(std::string_view body) {
  if (std::memchr(body.data(), '\0', body.size()))
    return malformed();
  json out;
  strict_builder sax{out};
  bool ok = json::sax_parse(body.begin(), body.end(), &sax,
                            json::input_format_t::json, true);
  using problem = strict_builder::problem;
  switch (sax.stopped_by()) {
    case problem::none:
      if (!ok)
        return malformed();
      return out;
    case problem::malformed: return malformed();
    case problem::too_deep:
      return malformed("JSON in request body is nested more than " +
                       std::to_string(json_max_depth) + " levels deep");
    case problem::repeated:
      return unprocessable("property " + sax.path() +
                           " must be given only once");
    case problem::out_of_range: {
      auto path = sax.path();
      if (path.empty())
        return malformed("Request body must be a JSON object");
      return unprocessable(path + " must be a finite number");
    }
  }
  return malformed();
}

} // namespace mailassay::http

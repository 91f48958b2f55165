// A tiny streaming JSON writer for the tools' --json output: objects, arrays, strings (escaped
// per RFC 8259), integers, doubles and booleans, pretty-printed two spaces per level.
#ifndef TESSERA_TOOLS_JSON_WRITER_HPP
#define TESSERA_TOOLS_JSON_WRITER_HPP

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::tools {

class json_writer {
 public:
  explicit json_writer(std::ostream& out) : out_(out) {}

  json_writer& begin_object() { return open('{'); }
  json_writer& end_object() { return close('}'); }
  json_writer& begin_array() { return open('['); }
  json_writer& end_array() { return close(']'); }

  // The next value is a member named `name` of the enclosing object.
  json_writer& key(std::string_view name) {
    separate();
    write_string(name);
    out_ << ": ";
    after_key_ = true;
    return *this;
  }

  json_writer& value(std::string_view text) {
    separate();
    write_string(text);
    return *this;
  }
  json_writer& value(const char* text) { return value(std::string_view(text ? text : "")); }
  json_writer& value(bool flag) {
    separate();
    out_ << (flag ? "true" : "false");
    return *this;
  }
  json_writer& value(int64_t number) {
    separate();
    out_ << number;
    return *this;
  }
  json_writer& value(int number) { return value(static_cast<int64_t>(number)); }
  json_writer& value(uint32_t number) { return value(static_cast<int64_t>(number)); }
  json_writer& value(double number) {
    separate();
    if (!std::isfinite(number)) {  // JSON has no NaN or infinity
      out_ << "null";
      return *this;
    }
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", number);
    out_ << text;
    return *this;
  }

  template <class T>
  json_writer& member(std::string_view name, const T& v) {
    key(name);
    return value(v);
  }

  // Escapes quotes, backslashes and control characters; other bytes (UTF-8) pass unchanged.
  static std::string escape(std::string_view text) {
    std::string s;
    for (unsigned char c : text) {
      switch (c) {
        case '"': s += "\\\""; break;
        case '\\': s += "\\\\"; break;
        case '\b': s += "\\b"; break;
        case '\f': s += "\\f"; break;
        case '\n': s += "\\n"; break;
        case '\r': s += "\\r"; break;
        case '\t': s += "\\t"; break;
        default:
          if (c < 0x20) {
            char code[8];
            std::snprintf(code, sizeof code, "\\u%04x", c);
            s += code;
          } else {
            s += static_cast<char>(c);
          }
      }
    }
    return s;
  }

 private:
  json_writer& open(char bracket) {
    separate();
    out_ << bracket;
    first_.push_back(true);
    return *this;
  }
  json_writer& close(char bracket) {
    const bool empty = first_.back();
    first_.pop_back();
    if (!empty) newline();
    out_ << bracket;
    if (first_.empty()) out_ << '\n';
    return *this;
  }
  // Writes the comma and indentation a new element needs (none right after a key).
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (first_.empty()) return;
    if (!first_.back()) out_ << ',';
    first_.back() = false;
    newline();
  }
  void newline() { out_ << '\n' << std::string(2 * first_.size(), ' '); }
  void write_string(std::string_view text) { out_ << '"' << escape(text) << '"'; }

  std::ostream& out_;
  std::vector<bool> first_;  // per open container: no element written yet
  bool after_key_ = false;
};

}  // namespace tessera::tools

#endif  // TESSERA_TOOLS_JSON_WRITER_HPP

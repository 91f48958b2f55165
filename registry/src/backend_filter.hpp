// TESSERA_BACKENDS: select or disable backends from outside the program.
//   "cuda,onednn"  only these, and in this order of preference
//   "-cuda"        every backend but cuda (a leading '-' or '!' disables)
// Mixed lists are allowed: "onednn,-cuda" selects onednn and disables cuda.
#pragma once

#include <string>
#include <vector>

namespace tessera::registry {

class backend_filter {
 public:
  static backend_filter from_environment();
  explicit backend_filter(const std::string& spec);

  // Empty when the backend may be used; otherwise why not.
  std::string refusal(const std::string& backend) const;
  // The selected names in the order given (the default preference of new handles).
  const std::vector<std::string>& preferred() const { return selected_; }
  const std::string& spec() const { return spec_; }

 private:
  std::string spec_;
  std::vector<std::string> selected_;
  std::vector<std::string> disabled_;
};

// Splits a comma-separated list, trimming blanks and dropping empty items.
std::vector<std::string> split_list(const std::string& text, char separator = ',');

}  // namespace tessera::registry

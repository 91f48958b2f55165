#include "backend_filter.hpp"

#include <algorithm>
#include <cstdlib>

namespace tessera::registry {

std::vector<std::string> split_list(const std::string& text, char separator) {
  std::vector<std::string> items;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(separator, begin);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(begin, end - begin);
    size_t first = item.find_first_not_of(" \t");
    size_t last = item.find_last_not_of(" \t");
    if (first != std::string::npos) items.push_back(item.substr(first, last - first + 1));
    begin = end + 1;
  }
  return items;
}

backend_filter backend_filter::from_environment() {
  const char* spec = std::getenv("TESSERA_BACKENDS");
  return backend_filter(spec ? spec : "");
}

backend_filter::backend_filter(const std::string& spec) : spec_(spec) {
  for (const std::string& item : split_list(spec)) {
    if (item[0] == '-' || item[0] == '!') {
      if (item.size() > 1) disabled_.push_back(item.substr(1));
    } else {
      selected_.push_back(item);
    }
  }
}

std::string backend_filter::refusal(const std::string& backend) const {
  if (std::find(disabled_.begin(), disabled_.end(), backend) != disabled_.end())
    return "disabled by TESSERA_BACKENDS=" + spec_;
  if (!selected_.empty() &&
      std::find(selected_.begin(), selected_.end(), backend) == selected_.end())
    return "not selected by TESSERA_BACKENDS=" + spec_;
  return {};
}

}  // namespace tessera::registry

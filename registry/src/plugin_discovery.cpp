#include "plugin_discovery.hpp"

#include "backend_filter.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace fs = std::filesystem;

namespace tessera::registry {

std::string library_folder() {
  Dl_info info{};
  // Any function of this library names the file it lives in.
  if (dladdr(reinterpret_cast<void*>(&library_folder), &info) && info.dli_fname) {
    std::error_code ec;
    fs::path p = fs::canonical(fs::path(info.dli_fname), ec);
    if (!ec) return p.parent_path().string();
    return fs::absolute(fs::path(info.dli_fname)).parent_path().string();
  }
  return fs::current_path().string();
}

std::vector<std::string> plugin_search_folders() {
  std::vector<std::string> folders;
  folders.push_back((fs::path(library_folder()) / TESSERA_PLUGIN_SUBDIR).string());
  if (const char* extra = std::getenv("TESSERA_PLUGIN_PATH")) {
    for (const std::string& item : split_list(extra, ':')) {
      std::error_code ec;
      fs::path p = fs::absolute(fs::path(item), ec);
      folders.push_back(ec ? item : p.lexically_normal().string());
    }
  }
  return folders;
}

std::vector<std::string> plugin_files_in(const std::string& folder) {
  std::vector<std::string> files;
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return files;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() == ".so" && it->is_regular_file(ec)) files.push_back(p.string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace tessera::registry

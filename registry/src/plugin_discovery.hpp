// Where plugins come from: the plugin folder next to libtessera.so (lib/tessera/plugins in the
// build and the install tree, so an installed tree can be moved), then each folder listed in
// TESSERA_PLUGIN_PATH (':'-separated), in that order. Within a folder, files ending in ".so" are
// taken in name order so that load order (and with it default preference) is reproducible.
#pragma once

#include <string>
#include <vector>

namespace tessera::registry {

// Absolute path of the folder holding libtessera.so itself.
std::string library_folder();

// The folders searched, in order, made absolute.
std::vector<std::string> plugin_search_folders();

// Candidate plugin files of one folder, absolute, in name order (empty if it does not exist).
std::vector<std::string> plugin_files_in(const std::string& folder);

}  // namespace tessera::registry

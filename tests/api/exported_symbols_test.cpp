// libtessera.so exports exactly the C API: every function declared TSR_API in the public headers, and
// nothing else (no C++ symbol of the registry, spdlog, fmt or Boost leaks out).
#include "test_support.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

std::string library_path() {
  Dl_info info{};
  dladdr(reinterpret_cast<void*>(&tsrGetVersion), &info);
  return info.dli_fname ? info.dli_fname : "";
}

std::set<std::string> dynamic_symbols(const std::string& path) {
  std::set<std::string> out;
  std::string cmd = "nm -D --defined-only '" + path + "'";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char line[1024];
  while (fgets(line, sizeof(line), p)) {
    std::istringstream in(line);
    std::string addr, type, name;
    in >> addr >> type >> name;
    if (name.empty() || type == "A") continue;  // the version node itself
    name = name.substr(0, name.find('@'));
    out.insert(name);
  }
  pclose(p);
  return out;
}

// Every tessera*.h of the public include folder (tessera.h and its family headers).
std::set<std::string> declared_functions() {
  std::stringstream text;
  for (const auto& entry : std::filesystem::directory_iterator(TESSERA_PUBLIC_INCLUDE_DIR)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("tessera", 0) == 0 && entry.path().extension() == ".h") {
      std::ifstream header(entry.path());
      text << header.rdbuf() << "\n";
    }
  }
  std::set<std::string> out;
  std::regex decl(R"(TSR_API\s+[^;(]*?\b(tsr[A-Za-z0-9_]+)\s*\()");
  std::string s = text.str();
  for (std::sregex_iterator it(s.begin(), s.end(), decl), end; it != end; ++it)
    out.insert((*it)[1]);
  return out;
}

}  // namespace

TEST(ExportedSymbols, libtessera_exports_exactly_the_functions_of_tessera_h) {
  std::string path = library_path();
  ASSERT_FALSE(path.empty());
  std::set<std::string> exported = dynamic_symbols(path);
  std::set<std::string> declared = declared_functions();
  ASSERT_GT(declared.size(), 30u) << "could not parse the headers in " << TESSERA_PUBLIC_INCLUDE_DIR;
  for (const std::string& name : exported)
    EXPECT_TRUE(declared.count(name)) << "exported but not in the public headers: " << name;
  for (const std::string& name : declared)
    EXPECT_TRUE(exported.count(name)) << "declared in the public headers but not exported: " << name;
}

// Tessera plugin SDK: a header-only C++ helper over tessera/plugin_abi.h that turns a few kernel
// classes into a plugin. It writes the C tables, negotiates the ABI, and catches every exception
// at the boundary, so a kernel is just C++:
//
//   struct relu6 {
//     static constexpr const char* name = "relu6_f32";
//     static constexpr tsrpOperation_t operation = TSRP_OP_ACTIVATION_FORWARD;
//     using problem_type = tsrpActivationProblem;
//     using args_type = tsrpActivationArgs;
//     static constexpr uint32_t flags = TSRP_KERNEL_DETERMINISTIC;     // optional
//     static constexpr const char* notes = "exact in fp32";            // optional
//     static std::string can_implement(const problem_type& p);         // "" = yes, else why not
//     static size_t workspace_size(const problem_type& p);             // optional
//     static void run(void* context, const problem_type& p, const args_type& a,
//                     void* workspace, size_t workspace_size);         // throw to fail
//   };
//   TESSERA_PLUGIN("mykernels", "1.0.0", TSRP_DEVICE_CPU, relu6)
//
// Throw tessera::sdk::error(status, message) from run() to choose the status; any other
// exception becomes TSRP_STATUS_EXECUTION_FAILED with its what(). Problems and arguments arrive
// zero-extended to the struct the plugin was compiled with (the ABI's size-prefix rule).
#ifndef TESSERA_PLUGIN_SDK_HPP
#define TESSERA_PLUGIN_SDK_HPP

#include <tessera/plugin_abi.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace tessera::sdk {

class error : public std::runtime_error {
 public:
  error(tsrpStatus_t status, const std::string& message)
      : std::runtime_error(message), status_(status) {}
  tsrpStatus_t status() const noexcept { return status_; }

 private:
  tsrpStatus_t status_;
};

namespace detail {

inline void write(char* buffer, size_t size, const char* text) {
  if (buffer && size) std::snprintf(buffer, size, "%s", text);
}

// Copies the prefix of a size-prefixed struct both sides know; the rest stays zero.
template <class T>
bool read_struct(const void* source, T* out) {
  if (!source) return false;
  *out = T{};
  size_t given = *static_cast<const size_t*>(source);
  if (given < sizeof(size_t)) return false;
  std::memcpy(static_cast<void*>(out), source, given < sizeof(T) ? given : sizeof(T));
  return true;
}

template <class K, class = void>
struct flags_of : std::integral_constant<uint32_t, 0> {};
template <class K>
struct flags_of<K, std::void_t<decltype(K::flags)>> : std::integral_constant<uint32_t, K::flags> {};

template <class K, class = void>
struct notes_of {
  static const char* get() { return nullptr; }
};
template <class K>
struct notes_of<K, std::void_t<decltype(K::notes)>> {
  static const char* get() { return K::notes; }
};

template <class K, class = void>
struct has_workspace : std::false_type {};
template <class K>
struct has_workspace<K, std::void_t<decltype(K::workspace_size(std::declval<const typename K::problem_type&>()))>>
    : std::true_type {};

template <class K>
struct adapter {
  using P = typename K::problem_type;
  using A = typename K::args_type;

  static int can_implement(void*, const void* problem, char* reason, size_t size) noexcept {
    try {
      P p;
      if (!read_struct(problem, &p)) {
        write(reason, size, "null or truncated problem");
        return 0;
      }
      std::string why = K::can_implement(p);
      if (why.empty()) return 1;
      write(reason, size, why.c_str());
      return 0;
    } catch (const std::exception& e) {
      write(reason, size, e.what());
      return 0;
    } catch (...) {
      write(reason, size, "can_implement threw");
      return 0;
    }
  }

  static tsrpStatus_t workspace_size(void*, const void* problem, size_t* bytes) noexcept {
    try {
      P p;
      if (!bytes || !read_struct(problem, &p)) return TSRP_STATUS_BAD_PARAM;
      if constexpr (has_workspace<K>::value) *bytes = K::workspace_size(p);
      else *bytes = 0;
      return TSRP_STATUS_SUCCESS;
    } catch (...) {
      return TSRP_STATUS_INTERNAL_ERROR;
    }
  }

  static tsrpStatus_t run(void*, void* context, const void* problem, const void* args,
                          void* workspace, size_t workspace_size, char* message,
                          size_t size) noexcept {
    try {
      P p;
      A a;
      if (!read_struct(problem, &p) || !read_struct(args, &a)) {
        write(message, size, "null or truncated problem or arguments");
        return TSRP_STATUS_BAD_PARAM;
      }
      K::run(context, p, a, workspace, workspace_size);
      return TSRP_STATUS_SUCCESS;
    } catch (const error& e) {
      write(message, size, e.what());
      return e.status();
    } catch (const std::exception& e) {
      write(message, size, e.what());
      return TSRP_STATUS_EXECUTION_FAILED;
    } catch (...) {
      write(message, size, "kernel threw");
      return TSRP_STATUS_EXECUTION_FAILED;
    }
  }

  static tsrpKernel table_entry() {
    tsrpKernel k{};
    k.struct_size = sizeof(k);
    k.name = K::name;
    k.operation = K::operation;
    k.flags = flags_of<K>::value;
    k.notes = notes_of<K>::get();
    k.can_implement = &can_implement;
    k.workspace_size = &workspace_size;
    k.run = &run;
    return k;
  }
};

// The entry point's body: speaks this header's ABI version if the host accepts it.
template <class... Kernels>
tsrpStatus_t plugin_entry(const tsrpHostOffer* offer, tsrpPluginDesc* desc, const char* name,
                          const char* version, tsrpDeviceKind_t device) noexcept {
  try {
    if (!offer || !desc) return TSRP_STATUS_BAD_PARAM;
    if (offer->host_abi_version < TSRP_ABI_VERSION_CURRENT ||
        offer->host_abi_min > TSRP_ABI_VERSION_CURRENT) {
      desc->abi_version = TSRP_ABI_VERSION_CURRENT;  // says which version it would have spoken
      return TSRP_STATUS_NOT_SUPPORTED;
    }
    static const tsrpKernel kernels[] = {adapter<Kernels>::table_entry()...};
    desc->abi_version = TSRP_ABI_VERSION_CURRENT;
    desc->name = name;
    desc->version = version;
    desc->device_kind = device;
    desc->kernels = kernels;
    desc->kernel_count = sizeof...(Kernels);
    return TSRP_STATUS_SUCCESS;
  } catch (...) {
    return TSRP_STATUS_INTERNAL_ERROR;
  }
}

}  // namespace detail

// Element count of a tensor's dims.
inline int64_t element_count(const tsrpTensor& t) {
  int64_t n = 1;
  for (int i = 0; i < t.ndims; ++i) n *= t.dims[i];
  return n;
}

// True when the tensor is packed row-major (the last dim innermost, no gaps).
inline bool is_packed_row_major(const tsrpTensor& t) {
  int64_t expect = 1;
  for (int i = t.ndims - 1; i >= 0; --i) {
    if (t.dims[i] != 1 && t.strides[i] != expect) return false;
    expect *= t.dims[i];
  }
  return true;
}

}  // namespace tessera::sdk

// Defines the plugin's one exported symbol from a list of kernel classes.
#define TESSERA_PLUGIN(NAME, VERSION, DEVICE_KIND, ...)                                        \
  extern "C" TSRP_EXPORT tsrpStatus_t tsrpPluginEntry(const tsrpHostOffer* offer,             \
                                                      tsrpPluginDesc* desc) {                 \
    return ::tessera::sdk::detail::plugin_entry<__VA_ARGS__>(offer, desc, NAME, VERSION,      \
                                                             DEVICE_KIND);                    \
  }

#endif  // TESSERA_PLUGIN_SDK_HPP

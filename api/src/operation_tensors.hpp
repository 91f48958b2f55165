// Every memory buffer an operation's kernel reads or writes, found from its problem and
// argument structs: the one place that knows each operation's data flow. Find (scratch outputs),
// fallback (staging through host memory) and cross-check (a second run on host copies) are
// written once over this list instead of once per operation.
#pragma once

#include <tessera/plugin_abi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera::api {

enum class buffer_role {
  input,   // only read
  output,  // written; read too when the call blends (beta != 0), accumulates or updates in place
};

// The data type of bytes whose content only the kernel that wrote them understands (RNN reserve
// spaces): staged like any other buffer, never compared.
constexpr int32_t k_opaque_data = -1;

struct operation_buffer {
  const char* name;    // the argument's name, for messages: "y", "running_mean"
  size_t args_offset;  // where its pointer sits in the argument struct
  size_t bytes;        // what the kernel may touch: the tensor's span, or the array's size
  buffer_role role;
  int32_t data_type;   // tsrpDataType_t of its elements, or k_opaque_data
  // The caller described it with a tensor descriptor of its own, `<name>_desc` (messages name
  // that); false for parameters laid out by another descriptor and for plain byte counts.
  bool has_own_descriptor;
};

// The buffers of `op` that the call passes (NULL pointers, and buffers a problem says are
// unused, are left out). `problem` and `args` are the structs of that operation.
std::vector<operation_buffer> operation_buffers(int op, const void* problem, const void* args);

// sizeof() of the operation's argument struct (what a copy of it needs).
size_t operation_args_size(int op);

// The pointer stored at `offset` of an argument struct, and a way to change it in a copy.
inline void* buffer_pointer(const void* args, size_t offset) {
  void* p = nullptr;
  __builtin_memcpy(&p, static_cast<const char*>(args) + offset, sizeof(p));
  return p;
}
inline void set_buffer_pointer(void* args, size_t offset, const void* pointer) {
  __builtin_memcpy(static_cast<char*>(args) + offset, &pointer, sizeof(pointer));
}

}  // namespace tessera::api

// The one place where Tessera tensors become oneDNN memory descriptors.
#pragma once

#include <tessera/plugin_abi.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <optional>
#include <string>

namespace tessera::onednn {

// f32/f16/bf16/s8/s32; nullopt for values this plugin does not know.
std::optional<dnnl::memory::data_type> to_dnnl_data_type(int32_t tsrp_data_type) noexcept;

const char* data_type_name(int32_t tsrp_data_type) noexcept;

// True for the floating types the kernels compute (fp32, fp16, bf16).
bool is_floating_data_type(int32_t tsrp_data_type) noexcept;

// Empty when the tensor can be described to oneDNN (ndims in range, dims >= 0, strides >= 0),
// else why not. `name` ("x", "w", ...) makes the reason precise.
std::string check_tensor(const tsrpTensor& t, const char* name);

int64_t element_count(const tsrpTensor& t) noexcept;

bool same_dims(const tsrpTensor& a, const tsrpTensor& b) noexcept;

// The tensor exactly as the user laid it out: its dims, data type and strides.
dnnl::memory::desc make_memory_desc(const tsrpTensor& t);

// A dense tensor with the same dims and the same order of strides as `t` (innermost dim stays
// innermost), in `data_type`. Staging buffers use it so a reorder from/to the user tensor is a
// plain copy-with-conversion and never a transpose.
dnnl::memory::desc make_dense_desc_like(const tsrpTensor& t, dnnl::memory::data_type data_type);

// Filter K, C/G, spatial... with its strides, as oneDNN wants it: ungrouped when groups == 1,
// else the grouped view G, K/G, C/G, spatial... over the same memory (the group stride is K/G
// times the K stride).
dnnl::memory::desc make_weights_desc(const tsrpTensor& w, int64_t groups);

// The grouped/ungrouped weights dims with format_tag::any, to let oneDNN pick a blocked layout.
dnnl::memory::desc make_weights_any_desc(const tsrpTensor& w, int64_t groups,
                                         dnnl::memory::data_type data_type);

// dims with format_tag::any.
dnnl::memory::desc make_any_desc(const tsrpTensor& t, dnnl::memory::data_type data_type);

}  // namespace tessera::onednn

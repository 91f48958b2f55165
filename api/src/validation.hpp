// Argument checks shared by every entry point. Each returns TSR_STATUS_SUCCESS or fails with a
// message of the form "<function>: <argument> <what is wrong>", naming the bad value.
#pragma once

#include "descriptors.hpp"

#include <string>

namespace tessera::api {

tsrStatus_t check_not_null(const char* function, const char* argument, const void* pointer);

// A tensor descriptor that exists and was set.
tsrStatus_t check_tensor(const char* function, const char* argument, tsrTensorDescriptor_t desc);

// Two tensors have the same dims (and dtype, when `same_dtype`).
tsrStatus_t check_same_shape(const char* function, const char* a_name, const tsrpTensor& a,
                             const char* b_name, const tsrpTensor& b, bool same_dtype = true);

bool valid_data_type(int dtype);
const char* data_type_name(int dtype);

// "2x16x7x7"
std::string dims_string(const tsrpTensor& t);

// The element extent (furthest element + 1) and byte size of a tensor; false on overflow.
bool tensor_bytes(const tsrpTensor& t, size_t* bytes);

}  // namespace tessera::api

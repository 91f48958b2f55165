// C++ wrapper of tessera_tensor_ops.h (included by tessera.hpp; include that).
#ifndef TESSERA_TESSERA_TENSOR_OPS_HPP
#define TESSERA_TESSERA_TENSOR_OPS_HPP

#include <tessera/tessera.hpp>

namespace tessera {

}  // namespace tessera

#endif  // TESSERA_TESSERA_TENSOR_OPS_HPP

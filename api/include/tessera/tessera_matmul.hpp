// C++ wrapper of tessera_matmul.h (included by tessera.hpp; include that).
#ifndef TESSERA_TESSERA_MATMUL_HPP
#define TESSERA_TESSERA_MATMUL_HPP

#include <tessera/tessera.hpp>

namespace tessera {

}  // namespace tessera

#endif  // TESSERA_TESSERA_MATMUL_HPP

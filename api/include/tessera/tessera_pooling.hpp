// C++ wrapper of tessera_pooling.h (included by tessera.hpp; include that).
#ifndef TESSERA_TESSERA_POOLING_HPP
#define TESSERA_TESSERA_POOLING_HPP

#include <tessera/tessera.hpp>

namespace tessera {

}  // namespace tessera

#endif  // TESSERA_TESSERA_POOLING_HPP

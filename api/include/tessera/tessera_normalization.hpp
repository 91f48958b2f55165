// C++ wrapper of tessera_normalization.h (included by tessera.hpp; include that).
#ifndef TESSERA_TESSERA_NORMALIZATION_HPP
#define TESSERA_TESSERA_NORMALIZATION_HPP

#include <tessera/tessera.hpp>

namespace tessera {

}  // namespace tessera

#endif  // TESSERA_TESSERA_NORMALIZATION_HPP

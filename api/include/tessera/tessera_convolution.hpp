// C++ wrapper of tessera_convolution.h (included by tessera.hpp; include that).
#ifndef TESSERA_TESSERA_CONVOLUTION_HPP
#define TESSERA_TESSERA_CONVOLUTION_HPP

#include <tessera/tessera.hpp>

namespace tessera {

}  // namespace tessera

#endif  // TESSERA_TESSERA_CONVOLUTION_HPP

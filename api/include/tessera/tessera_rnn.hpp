// C++ wrapper of tessera_rnn.h (included by tessera.hpp; include that).
#ifndef TESSERA_TESSERA_RNN_HPP
#define TESSERA_TESSERA_RNN_HPP

#include <tessera/tessera.hpp>

namespace tessera {

}  // namespace tessera

#endif  // TESSERA_TESSERA_RNN_HPP

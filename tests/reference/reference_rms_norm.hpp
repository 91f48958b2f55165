// The naive RMS normalization over the trailing dims [begin_norm_axis, ndims) of x, forward and
// backward (see plugin_abi_normalization.h), in double over float arrays at the tensors'
// strides. Tolerances: reference_batch_norm.hpp.
#ifndef TESSERA_REFERENCE_REFERENCE_RMS_NORM_HPP
#define TESSERA_REFERENCE_REFERENCE_RMS_NORM_HPP

#include <tessera/plugin_abi.h>

#include <string>

namespace tessera::reference {

// y = x * inv_rms * scale; inv_rms (packed, one per row) written when not null.
bool rms_norm_forward(const tsrpRmsNormProblem& problem, const float* x, const float* scale,
                      float* y, float* inv_rms, std::string* error);

// dx, and dscale when not null; inv_rms from saved_inv_rms when not null, else from x.
bool rms_norm_backward(const tsrpRmsNormProblem& problem, const float* x, const float* dy,
                       const float* scale, const float* saved_inv_rms, float* dx, float* dscale,
                       std::string* error);

}  // namespace tessera::reference

#endif  // TESSERA_REFERENCE_REFERENCE_RMS_NORM_HPP

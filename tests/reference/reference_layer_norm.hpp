// The naive layer normalization over the trailing dims [begin_norm_axis, ndims) of x, forward
// and backward (see plugin_abi_normalization.h). Double arithmetic over float arrays at the
// tensors' strides; scale/bias/dscale/dbias are packed vectors of the normalized size, and
// mean/inv_std packed vectors of the leading size. Tolerances: reference_batch_norm.hpp.
#ifndef TESSERA_REFERENCE_REFERENCE_LAYER_NORM_HPP
#define TESSERA_REFERENCE_REFERENCE_LAYER_NORM_HPP

#include <tessera/plugin_abi.h>

#include <cstdint>
#include <string>

namespace tessera::reference {

// Row (leading dims) and column (normalized dims) of x[index], both row-major.
void norm_row_col(const tsrpTensor& x, int begin_norm_axis, const int64_t index[], int64_t* row,
                  int64_t* col);
int64_t norm_inner_size(const tsrpTensor& x, int begin_norm_axis);

// scale and bias may be null (1 and 0); mean/inv_std written when not null.
bool layer_norm_forward(const tsrpLayerNormProblem& problem, const float* x, const float* scale,
                        const float* bias, float* y, float* mean, float* inv_std,
                        std::string* error);

// scale may be null (1); dscale/dbias written when not null.
bool layer_norm_backward(const tsrpLayerNormProblem& problem, const float* x, const float* dy,
                         const float* scale, const float* saved_mean, const float* saved_inv_std,
                         float* dx, float* dscale, float* dbias, std::string* error);

}  // namespace tessera::reference

#endif  // TESSERA_REFERENCE_REFERENCE_LAYER_NORM_HPP

// The naive pooling, forward and backward, 2-D and 3-D: the ground truth the pooling kernels are
// tested against. Plain loops in double over float arrays at the problem's strides.
#ifndef TESSERA_REFERENCE_REFERENCE_POOLING_HPP
#define TESSERA_REFERENCE_REFERENCE_POOLING_HPP

#include <tessera/plugin_abi.h>

#include <cstdint>
#include <string>

#include "tolerance.hpp"

namespace tessera::reference {

// The windows: output position o of spatial dim i covers inputs o * stride - pad_before ..
// o * stride - pad_before + window - 1; positions outside x are padding.
//   max: the largest input of the window (padding never wins). With TSRP_PROPAGATE_NAN a window
//        holding a NaN gives NaN; with TSRP_NOT_PROPAGATE_NAN NaNs are skipped (a window of NaNs
//        only gives NaN).
//   average including padding: the sum over the inputs divided by the window size;
//   average excluding padding: divided by the number of inputs inside x.
// y = alpha * pool(x) + beta * y (y not read when beta is 0). False with a message when the
// shapes do not agree.
bool pooling_forward(const tsrpPoolingProblem& problem, const float* x, double alpha, double beta,
                     float* y, std::string* error);

// dx = alpha * dpool(x, dy) + beta * dx (dx not read when beta is 0). Max: each dy goes to the
// FIRST maximum of its window in window order (row-major over the window: the last spatial dim
// fastest), i.e. a later element replaces the running maximum only when strictly greater; ties
// go to the earliest. That is oneDNN's and cuDNN's deterministic choice. Average: each dy is
// spread evenly (divided by the same count as forward) over the window's inputs. Overlapping
// windows accumulate.
bool pooling_backward(const tsrpPoolingProblem& problem, const float* x, const float* dy,
                      double alpha, double beta, float* dx, std::string* error);

// Pooling outputs are one max (exact) or one average of up to window-size terms computed in f32
// and rounded once: f32 2e-6, f16 2e-3 (4 half-ulps), bf16 1.6e-2; backward the same, as each
// dx is a short sum of such terms.
tolerance pooling_tolerance(int32_t data_type);

}  // namespace tessera::reference

#endif  // TESSERA_REFERENCE_REFERENCE_POOLING_HPP

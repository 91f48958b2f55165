// The naive convolution: the ground truth every convolution kernel is tested against. Plain
// nested loops, nothing clever, so that it is obviously right.
#ifndef TESSERA_REFERENCE_REFERENCE_CONVOLUTION_HPP
#define TESSERA_REFERENCE_REFERENCE_CONVOLUTION_HPP

#include <tessera/plugin_abi.h>

#include <string>

namespace tessera::reference {

// y = alpha * conv(x, w) + beta * y for the problem's 1 to 3 spatial dims, groups, strides,
// dilations (1 = none), asymmetric padding and both modes (TSRP_CONVOLUTION flips the filter
// in every spatial dim; cross-correlation does not). x, w and y are float arrays laid out at
// their tensors' strides (element offsets from the pointers); the tensors' data_type is
// ignored: values are whatever the caller rounded them to. Accumulates in double, so with
// integer inputs the result is exact. y is not read when beta is 0 (it may hold NaN).
// Returns false with a message when the tensors do not fit the problem.
bool convolution_forward(const tsrpConvolutionProblem& problem, const float* x, const float* w,
                         double alpha, double beta, float* y, std::string* error);

// Checks that x, w and y agree with each other and with the problem's parameters (the output
// dims are the ones shape inference gives). The message names the tensor and dim.
bool check_convolution_problem(const tsrpConvolutionProblem& problem, std::string* error);

// Multiply-adds per output element: C / groups times the kernel's spatial size.
int64_t convolution_reduction_length(const tsrpConvolutionProblem& problem);

}  // namespace tessera::reference

#endif  // TESSERA_REFERENCE_REFERENCE_CONVOLUTION_HPP

// What every oneDNN convolution kernel (forward, backward data/filter, fused) shares, defined
// once in onednn_convolution.cpp: the geometry checks of a tsrpConvolutionProblem, oneDNN's
// stride/dilation/padding vectors, and the cache key of the convolution part.
#pragma once

#include "onednn_primitive_cache.hpp"

#include <tessera/plugin_abi.h>

#include <oneapi/dnnl/dnnl.hpp>

#include <string>

namespace tessera::onednn {

// Empty when oneDNN can describe the problem's shapes (tensors, mode, groups, output dims),
// else why not; data types are each kernel's business.
std::string check_convolution_geometry(const tsrpConvolutionProblem& p);

// oneDNN's strides, dilations (0 = none) and paddings of the problem.
struct convolution_geometry {
  dnnl::memory::dims strides, dilation, pad_l, pad_r;
};
convolution_geometry make_convolution_geometry(const tsrpConvolutionProblem& p);

// Adds every field of the problem to a key.
void add_convolution_key(cache_key& key, const tsrpConvolutionProblem& p);

}  // namespace tessera::onednn

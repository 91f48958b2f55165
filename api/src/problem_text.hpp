// How API calls describe their problems in traces: benchdnn descriptors and tessera-bench replay
// command lines, through the one descriptor language in common/.
#pragma once

#include "dispatch.hpp"

namespace tessera::api {

call_description describe_convolution(const tsrpConvolutionProblem& problem, const tsrContext& handle,
                                      const std::string& backend);
call_description describe_activation(const tsrpActivationProblem& problem, bool backward,
                                     const tsrContext& handle, const std::string& backend);

}  // namespace tessera::api

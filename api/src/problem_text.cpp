#include "problem_text.hpp"

#include <tessera_common/problem_descriptor.hpp>
#include <tessera_common/shape_inference.hpp>

namespace tessera::api {

call_description describe_convolution(const tsrpConvolutionProblem& p, const tsrContext&,
                                      const std::string& backend) {
  call_description d;
  common::conv_descriptor desc;
  std::string error;
  if (common::conv_descriptor_from_problem(p, &desc, &error))
    d.descriptor = std::string("--dt=") + common::data_type_name(p.x.data_type) +
                   " --tag=" + common::layout_tag(p.x) + " " + common::format_conv_descriptor(desc);
  else
    d.descriptor = "(undescribable: " + error + ")";
  d.replay = common::format_bench_command(p, backend);
  return d;
}

call_description describe_activation(const tsrpActivationProblem& p, bool backward,
                                     const tsrContext&, const std::string& backend) {
  call_description d;
  d.descriptor = std::string(backward ? "--dir=bwd" : "--dir=fwd") + " --alg=" +
                 common::activation_mode_name(p.mode) + " --dt=" +
                 common::data_type_name(p.x.data_type) + " --tag=" + common::layout_tag(p.x) + " " +
                 common::format_dims(p.x.dims, p.x.ndims);
  d.replay = common::format_bench_command(p, backward, backend);
  return d;
}

}  // namespace tessera::api

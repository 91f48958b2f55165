// C++ wrapper of tessera_convolution.h (included by tessera.hpp; include that).
#ifndef TESSERA_TESSERA_CONVOLUTION_HPP
#define TESSERA_TESSERA_CONVOLUTION_HPP

#include <tessera/tessera.hpp>

#include <vector>

namespace tessera {

inline size_t convolution_backward_data_workspace_size(const handle& h, const tensor_desc& w,
                                                       const tensor_desc& dy,
                                                       const convolution_desc& conv,
                                                       const tensor_desc& dx,
                                                       tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t b = 0;
  check(tsrGetConvolutionBackwardDataWorkspaceSize(h, w, dy, conv, dx, algo, &b));
  return b;
}

inline std::vector<tsrAlgoPerf_t> get_convolution_backward_data_algorithms(
    const handle& h, const tensor_desc& w, const tensor_desc& dy, const convolution_desc& conv,
    const tensor_desc& dx, int max_count = 16) {
  std::vector<tsrAlgoPerf_t> perf(static_cast<size_t>(max_count), make_algo_perf());
  int n = 0;
  check(tsrGetConvolutionBackwardDataAlgorithm(h, w, dy, conv, dx, max_count, &n, perf.data()));
  perf.resize(static_cast<size_t>(n));
  return perf;
}

inline void convolution_backward_data(const handle& h, float alpha, const tensor_desc& w_desc,
                                      const void* w, const tensor_desc& dy_desc, const void* dy,
                                      const convolution_desc& conv, tsrAlgo_t algo,
                                      void* workspace, size_t workspace_size, float beta,
                                      const tensor_desc& dx_desc, void* dx) {
  check(tsrConvolutionBackwardData(h, alpha, w_desc, w, dy_desc, dy, conv, algo, workspace,
                                   workspace_size, beta, dx_desc, dx));
}

inline size_t convolution_backward_filter_workspace_size(const handle& h, const tensor_desc& x,
                                                         const tensor_desc& dy,
                                                         const convolution_desc& conv,
                                                         const tensor_desc& dw,
                                                         tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t b = 0;
  check(tsrGetConvolutionBackwardFilterWorkspaceSize(h, x, dy, conv, dw, algo, &b));
  return b;
}

inline std::vector<tsrAlgoPerf_t> get_convolution_backward_filter_algorithms(
    const handle& h, const tensor_desc& x, const tensor_desc& dy, const convolution_desc& conv,
    const tensor_desc& dw, int max_count = 16) {
  std::vector<tsrAlgoPerf_t> perf(static_cast<size_t>(max_count), make_algo_perf());
  int n = 0;
  check(tsrGetConvolutionBackwardFilterAlgorithm(h, x, dy, conv, dw, max_count, &n, perf.data()));
  perf.resize(static_cast<size_t>(n));
  return perf;
}

inline void convolution_backward_filter(const handle& h, float alpha, const tensor_desc& x_desc,
                                        const void* x, const tensor_desc& dy_desc, const void* dy,
                                        const convolution_desc& conv, tsrAlgo_t algo,
                                        void* workspace, size_t workspace_size, float beta,
                                        const tensor_desc& dw_desc, void* dw) {
  check(tsrConvolutionBackwardFilter(h, alpha, x_desc, x, dy_desc, dy, conv, algo, workspace,
                                     workspace_size, beta, dw_desc, dw));
}

inline void convolution_backward_bias(const handle& h, float alpha, const tensor_desc& dy_desc,
                                      const void* dy, float beta, const tensor_desc& db_desc,
                                      void* db) {
  check(tsrConvolutionBackwardBias(h, alpha, dy_desc, dy, beta, db_desc, db));
}

// z_desc may be null (no residual): pass a null pointer for both z_desc and z.
inline size_t convolution_bias_activation_forward_workspace_size(
    const handle& h, const tensor_desc& x, const tensor_desc& w, const convolution_desc& conv,
    const tensor_desc* z, const tensor_desc& bias, const activation_desc& act,
    const tensor_desc& y, tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t b = 0;
  check(tsrGetConvolutionBiasActivationForwardWorkspaceSize(h, x, w, conv, z ? z->get() : nullptr,
                                                            bias, act, y, algo, &b));
  return b;
}

inline void convolution_bias_activation_forward(
    const handle& h, float alpha1, const tensor_desc& x_desc, const void* x,
    const tensor_desc& w_desc, const void* w, const convolution_desc& conv, tsrAlgo_t algo,
    void* workspace, size_t workspace_size, float alpha2, const tensor_desc* z_desc,
    const void* z, const tensor_desc& bias_desc, const void* bias, const activation_desc& act,
    const tensor_desc& y_desc, void* y) {
  check(tsrConvolutionBiasActivationForward(h, alpha1, x_desc, x, w_desc, w, conv, algo, workspace,
                                            workspace_size, alpha2,
                                            z_desc ? z_desc->get() : nullptr, z, bias_desc, bias,
                                            act, y_desc, y));
}

// int8: scales has 1 (per tensor) or K (per output channel) values.
inline size_t convolution_forward_quantized_workspace_size(
    const handle& h, const tensor_desc& x, const tensor_desc& w, const convolution_desc& conv,
    const std::vector<float>& scales, const tensor_desc& y, tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t b = 0;
  check(tsrGetConvolutionForwardQuantizedWorkspaceSize(h, x, w, conv, static_cast<int>(scales.size()),
                                                       y, algo, &b));
  return b;
}

inline void convolution_forward_quantized(const handle& h, float alpha, const tensor_desc& x_desc,
                                          const void* x, const tensor_desc& w_desc, const void* w,
                                          const convolution_desc& conv,
                                          const std::vector<float>& scales, tsrAlgo_t algo,
                                          void* workspace, size_t workspace_size, float beta,
                                          const tensor_desc& y_desc, void* y) {
  check(tsrConvolutionForwardQuantized(h, alpha, x_desc, x, w_desc, w, conv,
                                       static_cast<int>(scales.size()), scales.data(), algo,
                                       workspace, workspace_size, beta, y_desc, y));
}

}  // namespace tessera

#endif  // TESSERA_TESSERA_CONVOLUTION_HPP

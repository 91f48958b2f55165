// C++ wrapper of tessera_pooling.h (included by tessera.hpp; include that).
#ifndef TESSERA_TESSERA_POOLING_HPP
#define TESSERA_TESSERA_POOLING_HPP

#include <tessera/tessera.hpp>

#include <vector>

namespace tessera {

class pooling_desc : public detail::owner<tsrPoolingDescriptor_t, tsrDestroyPoolingDescriptor> {
 public:
  // One value per spatial dim (2 or 3) in each vector.
  pooling_desc(tsrPoolingMode_t mode, const std::vector<int64_t>& window,
               const std::vector<int64_t>& pad_before, const std::vector<int64_t>& pad_after,
               const std::vector<int64_t>& stride,
               tsrNanPropagation_t nan_propagation = TSR_NOT_PROPAGATE_NAN) {
    check(tsrCreatePoolingDescriptor(&raw_));
    const size_t n = window.size();
    if (pad_before.size() != n || pad_after.size() != n || stride.size() != n)
      throw error(TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH,
                  "tessera::pooling_desc: window, pads and stride differ in length");
    check(tsrSetPoolingNdDescriptor(raw_, mode, nan_propagation, static_cast<int>(n), window.data(),
                                    pad_before.data(), pad_after.data(), stride.data()));
  }
  std::vector<int64_t> output_dims(const tensor_desc& x, int nb_dims) const {
    std::vector<int64_t> out(static_cast<size_t>(nb_dims));
    check(tsrGetPoolingNdForwardOutputDim(raw_, x, nb_dims, out.data()));
    return out;
  }
};

class lrn_desc : public detail::owner<tsrLrnDescriptor_t, tsrDestroyLrnDescriptor> {
 public:
  // cuDNN's defaults: n 5, alpha 1e-4, beta 0.75, k 2.
  explicit lrn_desc(unsigned n = 5, double alpha = 1e-4, double beta = 0.75, double k = 2.0) {
    check(tsrCreateLrnDescriptor(&raw_));
    check(tsrSetLrnDescriptor(raw_, n, alpha, beta, k));
  }
};

inline void pooling_forward(const handle& h, const pooling_desc& pool, tsrAlgo_t algo, float alpha,
                            const tensor_desc& x_desc, const void* x, float beta,
                            const tensor_desc& y_desc, void* y) {
  check(tsrPoolingForward(h, pool, algo, alpha, x_desc, x, beta, y_desc, y));
}

inline void pooling_backward(const handle& h, const pooling_desc& pool, tsrAlgo_t algo,
                             float alpha, const tensor_desc& y_desc, const void* y,
                             const tensor_desc& dy_desc, const void* dy, const tensor_desc& x_desc,
                             const void* x, float beta, const tensor_desc& dx_desc, void* dx) {
  check(tsrPoolingBackward(h, pool, algo, alpha, y_desc, y, dy_desc, dy, x_desc, x, beta, dx_desc,
                           dx));
}

inline size_t pooling_forward_workspace_size(const handle& h, const pooling_desc& pool,
                                             const tensor_desc& x, const tensor_desc& y,
                                             tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t b = 0;
  check(tsrGetPoolingForwardWorkspaceSize(h, pool, x, y, algo, &b));
  return b;
}

inline size_t pooling_backward_workspace_size(const handle& h, const pooling_desc& pool,
                                              const tensor_desc& y, const tensor_desc& dy,
                                              const tensor_desc& x, const tensor_desc& dx,
                                              tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t b = 0;
  check(tsrGetPoolingBackwardWorkspaceSize(h, pool, y, dy, x, dx, algo, &b));
  return b;
}

inline void softmax_forward(const handle& h, tsrSoftmaxAlgorithm_t algorithm,
                            tsrSoftmaxMode_t mode, tsrAlgo_t algo, float alpha,
                            const tensor_desc& x_desc, const void* x, float beta,
                            const tensor_desc& y_desc, void* y) {
  check(tsrSoftmaxForward(h, algorithm, mode, algo, alpha, x_desc, x, beta, y_desc, y));
}

inline void softmax_backward(const handle& h, tsrSoftmaxAlgorithm_t algorithm,
                             tsrSoftmaxMode_t mode, tsrAlgo_t algo, float alpha,
                             const tensor_desc& y_desc, const void* y, const tensor_desc& dy_desc,
                             const void* dy, float beta, const tensor_desc& dx_desc, void* dx) {
  check(tsrSoftmaxBackward(h, algorithm, mode, algo, alpha, y_desc, y, dy_desc, dy, beta, dx_desc,
                           dx));
}

inline size_t softmax_forward_workspace_size(const handle& h, tsrSoftmaxAlgorithm_t algorithm,
                                             tsrSoftmaxMode_t mode, const tensor_desc& x,
                                             const tensor_desc& y, tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t b = 0;
  check(tsrGetSoftmaxForwardWorkspaceSize(h, algorithm, mode, x, y, algo, &b));
  return b;
}

inline size_t softmax_backward_workspace_size(const handle& h, tsrSoftmaxAlgorithm_t algorithm,
                                              tsrSoftmaxMode_t mode, const tensor_desc& y,
                                              const tensor_desc& dy, const tensor_desc& dx,
                                              tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t b = 0;
  check(tsrGetSoftmaxBackwardWorkspaceSize(h, algorithm, mode, y, dy, dx, algo, &b));
  return b;
}

inline void lrn_cross_channel_forward(const handle& h, const lrn_desc& lrn, tsrAlgo_t algo,
                                      float alpha, const tensor_desc& x_desc, const void* x,
                                      float beta, const tensor_desc& y_desc, void* y) {
  check(tsrLrnCrossChannelForward(h, lrn, algo, alpha, x_desc, x, beta, y_desc, y));
}

inline void lrn_cross_channel_backward(const handle& h, const lrn_desc& lrn, tsrAlgo_t algo,
                                       float alpha, const tensor_desc& y_desc, const void* y,
                                       const tensor_desc& dy_desc, const void* dy,
                                       const tensor_desc& x_desc, const void* x, float beta,
                                       const tensor_desc& dx_desc, void* dx) {
  check(tsrLrnCrossChannelBackward(h, lrn, algo, alpha, y_desc, y, dy_desc, dy, x_desc, x, beta,
                                   dx_desc, dx));
}

inline size_t lrn_cross_channel_forward_workspace_size(const handle& h, const lrn_desc& lrn,
                                                       const tensor_desc& x, const tensor_desc& y,
                                                       tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t b = 0;
  check(tsrGetLrnCrossChannelForwardWorkspaceSize(h, lrn, x, y, algo, &b));
  return b;
}

inline size_t lrn_cross_channel_backward_workspace_size(const handle& h, const lrn_desc& lrn,
                                                        const tensor_desc& y,
                                                        const tensor_desc& dy,
                                                        const tensor_desc& x,
                                                        const tensor_desc& dx,
                                                        tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t b = 0;
  check(tsrGetLrnCrossChannelBackwardWorkspaceSize(h, lrn, y, dy, x, dx, algo, &b));
  return b;
}

}  // namespace tessera

#endif  // TESSERA_TESSERA_POOLING_HPP

// C++ wrapper of tessera_tensor_ops.h (included by tessera.hpp; include that).
#ifndef TESSERA_TESSERA_TENSOR_OPS_HPP
#define TESSERA_TESSERA_TENSOR_OPS_HPP

#include <tessera/tessera.hpp>

namespace tessera {

class op_tensor_desc : public detail::owner<tsrOpTensorDescriptor_t, tsrDestroyOpTensorDescriptor> {
 public:
  explicit op_tensor_desc(tsrOpTensorOp_t op, tsrDataType_t compute_type = TSR_DATA_FLOAT,
                          tsrNanPropagation_t nan_propagation = TSR_NOT_PROPAGATE_NAN) {
    check(tsrCreateOpTensorDescriptor(&raw_));
    check(tsrSetOpTensorDescriptor(raw_, op, compute_type, nan_propagation));
  }
};

class reduce_tensor_desc
    : public detail::owner<tsrReduceTensorDescriptor_t, tsrDestroyReduceTensorDescriptor> {
 public:
  explicit reduce_tensor_desc(tsrReduceTensorOp_t op, tsrDataType_t compute_type = TSR_DATA_FLOAT,
                              tsrNanPropagation_t nan_propagation = TSR_NOT_PROPAGATE_NAN,
                              tsrReduceTensorIndices_t indices = TSR_REDUCE_TENSOR_NO_INDICES,
                              tsrIndicesType_t indices_type = TSR_32BIT_INDICES) {
    check(tsrCreateReduceTensorDescriptor(&raw_));
    check(tsrSetReduceTensorDescriptor(raw_, op, compute_type, nan_propagation, indices,
                                       indices_type));
  }
};

inline void add_tensor(const handle& h, float alpha, const tensor_desc& a_desc, const void* a,
                       float beta, const tensor_desc& c_desc, void* c) {
  check(tsrAddTensor(h, alpha, a_desc, a, beta, c_desc, c));
}

inline void op_tensor(const handle& h, const op_tensor_desc& op, float alpha1,
                      const tensor_desc& a_desc, const void* a, float alpha2,
                      const tensor_desc& b_desc, const void* b, float beta,
                      const tensor_desc& c_desc, void* c) {
  check(tsrOpTensor(h, op, alpha1, a_desc, a, alpha2, b_desc, b, beta, c_desc, c));
}

inline void scale_tensor(const handle& h, const tensor_desc& y_desc, void* y, float alpha) {
  check(tsrScaleTensor(h, y_desc, y, alpha));
}

inline void set_tensor(const handle& h, const tensor_desc& y_desc, void* y, double value) {
  check(tsrSetTensor(h, y_desc, y, value));
}

inline void transform_tensor(const handle& h, float alpha, const tensor_desc& x_desc,
                             const void* x, float beta, const tensor_desc& y_desc, void* y) {
  check(tsrTransformTensor(h, alpha, x_desc, x, beta, y_desc, y));
}

inline size_t reduction_indices_size(const handle& h, const reduce_tensor_desc& reduce,
                                     const tensor_desc& a_desc, const tensor_desc& c_desc) {
  size_t b = 0;
  check(tsrGetReductionIndicesSize(h, reduce, a_desc, c_desc, &b));
  return b;
}

inline size_t reduction_workspace_size(const handle& h, const reduce_tensor_desc& reduce,
                                       const tensor_desc& a_desc, const tensor_desc& c_desc,
                                       tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t b = 0;
  check(tsrGetReductionWorkspaceSize(h, reduce, a_desc, c_desc, algo, &b));
  return b;
}

inline void reduce_tensor(const handle& h, const reduce_tensor_desc& reduce, tsrAlgo_t algo,
                          void* indices, size_t indices_size, void* workspace,
                          size_t workspace_size, float alpha, const tensor_desc& a_desc,
                          const void* a, float beta, const tensor_desc& c_desc, void* c) {
  check(tsrReduceTensor(h, reduce, algo, indices, indices_size, workspace, workspace_size, alpha,
                        a_desc, a, beta, c_desc, c));
}

}  // namespace tessera

#endif  // TESSERA_TESSERA_TENSOR_OPS_HPP

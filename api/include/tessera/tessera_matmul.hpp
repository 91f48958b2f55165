// C++ wrapper of tessera_matmul.h (included by tessera.hpp; include that).
#ifndef TESSERA_TESSERA_MATMUL_HPP
#define TESSERA_TESSERA_MATMUL_HPP

#include <tessera/tessera.hpp>

#include <vector>

namespace tessera {

class matmul_desc : public detail::owner<tsrMatmulDescriptor_t, tsrDestroyMatmulDescriptor> {
 public:
  // No activation: C = alpha * A @ B (+ bias) + beta * C.
  explicit matmul_desc(tsrDataType_t compute_type = TSR_DATA_FLOAT) {
    check(tsrCreateMatmulDescriptor(&raw_));
    check(tsrSetMatmulDescriptor(raw_, compute_type, nullptr, TSR_MATMUL_BLEND_AFTER_ACTIVATION));
  }
  // With an activation epilogue (copied: `act` may be destroyed afterwards).
  matmul_desc(tsrDataType_t compute_type, const activation_desc& act,
              tsrMatmulEpilogueOrder_t order = TSR_MATMUL_BLEND_AFTER_ACTIVATION) {
    check(tsrCreateMatmulDescriptor(&raw_));
    check(tsrSetMatmulDescriptor(raw_, compute_type, act, order));
  }
  tsrDataType_t compute_type() const {
    tsrDataType_t t;
    tsrActivationMode_t m;
    double coef;
    tsrMatmulEpilogueOrder_t o;
    check(tsrGetMatmulDescriptor(raw_, &t, &m, &coef, &o));
    return t;
  }
};

// bias_desc may be null (no bias): pass nullptr.
inline std::vector<tsrAlgoPerf_t> get_matmul_algorithms(const handle& h, const matmul_desc& mm,
                                                        const tensor_desc& a, const tensor_desc& b,
                                                        tsrTensorDescriptor_t bias,
                                                        const tensor_desc& c, int max_count = 16) {
  std::vector<tsrAlgoPerf_t> perf(static_cast<size_t>(max_count), make_algo_perf());
  int n = 0;
  check(tsrGetMatmulAlgorithm(h, mm, a, b, bias, c, max_count, &n, perf.data()));
  perf.resize(static_cast<size_t>(n));
  return perf;
}

inline size_t matmul_workspace_size(const handle& h, const matmul_desc& mm, const tensor_desc& a,
                                    const tensor_desc& b, tsrTensorDescriptor_t bias,
                                    const tensor_desc& c, tsrAlgo_t algo = TSR_ALGO_AUTO) {
  size_t bytes = 0;
  check(tsrGetMatmulWorkspaceSize(h, mm, a, b, bias, c, algo, &bytes));
  return bytes;
}

inline void matmul(const handle& h, const matmul_desc& mm, tsrAlgo_t algo, float alpha,
                   const tensor_desc& a_desc, const void* a, const tensor_desc& b_desc,
                   const void* b, tsrTensorDescriptor_t bias_desc, const void* bias, float beta,
                   const tensor_desc& c_desc, void* c, void* workspace = nullptr,
                   size_t workspace_size = 0) {
  check(tsrMatmul(h, mm, algo, alpha, a_desc, a, b_desc, b, bias_desc, bias, beta, c_desc, c,
                  workspace, workspace_size));
}

}  // namespace tessera

#endif  // TESSERA_TESSERA_MATMUL_HPP

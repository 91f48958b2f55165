// tessera-bench --binary, --reorder and --reduction: the tensor-ops header.
#include <tessera_common/op_descriptors.hpp>
#include <tessera_common/problem_descriptor.hpp>

#include "bench_common.hpp"
#include "bench_drivers.hpp"
#include "reference_tensor_ops.hpp"

namespace tessera::tools {
namespace {

prepared_problem bad_problem(problem_outcome& o, const bench_problem& bp, const std::string& why) {
  o.descriptor = std::string("--") + driver_name(bp.settings.driver) + " " + bp.text;
  o.detail = "bad problem '" + bp.text + "': " + why;
  return {};
}

using op_tensor_descriptor = owned<tsrOpTensorDescriptor_t, tsrCreateOpTensorDescriptor,
                                   tsrDestroyOpTensorDescriptor>;
using reduce_tensor_descriptor = owned<tsrReduceTensorDescriptor_t,
                                       tsrCreateReduceTensorDescriptor,
                                       tsrDestroyReduceTensorDescriptor>;

// benchdnn's layout tags for reorder: the two packed families (any rank's spelling).
bool parse_tag(const std::string& tag, bool* channels_last) {
  if (tag.empty() || tag == "nchw" || tag == "ncw" || tag == "ncdhw" || tag == "nc" ||
      tag == "abx" || tag == "abcd" || tag == "abc" || tag == "abcde" || tag == "ab")
    *channels_last = false;
  else if (tag == "nhwc" || tag == "nwc" || tag == "ndhwc" || tag == "axb" || tag == "acdb" ||
           tag == "acb" || tag == "acdeb")
    *channels_last = true;
  else
    return false;
  return true;
}

}  // namespace

// ---- binary (op tensor, add tensor) -----------------------------------------------------------

// src0:src1 dims; src0 has the output's dims, src1 is broadcast along its 1s. add|mul|min|max
// run tsrOpTensor; Tessera's extensions: sqrt|not (unary, one dims list) and add_tensor
// (tsrAddTensor: dst = src1 broadcast + dst, i.e. beta 1).
prepared_problem prepare_binary(const bench_problem& bp, problem_outcome& outcome) {
  const bench_settings& s = bp.settings;
  const std::string alg = s.alg_given ? s.algorithm : "add";
  int32_t op;
  const bool add_tensor = alg == "add_tensor";
  if (alg == "add" || alg == "binary_add" || add_tensor) op = TSRP_OP_TENSOR_ADD;
  else if (alg == "mul" || alg == "binary_mul") op = TSRP_OP_TENSOR_MUL;
  else if (alg == "min" || alg == "binary_min") op = TSRP_OP_TENSOR_MIN;
  else if (alg == "max" || alg == "binary_max") op = TSRP_OP_TENSOR_MAX;
  else if (alg == "sqrt") op = TSRP_OP_TENSOR_SQRT;
  else if (alg == "not") op = TSRP_OP_TENSOR_NOT;
  else return bad_problem(outcome, bp, "unknown algorithm '" + alg +
                                           "' (add, mul, min, max, sqrt, not, add_tensor)");
  const bool unary = op == TSRP_OP_TENSOR_SQRT || op == TSRP_OP_TENSOR_NOT;
  std::vector<int64_t> a_dims, b_dims;
  std::string error;
  if (!common::parse_dims_pair(bp.text, true, true, &a_dims, &b_dims, &error))
    return bad_problem(outcome, bp, error);
  for (size_t i = 0; i < a_dims.size(); ++i)
    if (b_dims[i] != a_dims[i] && b_dims[i] != 1)
      return bad_problem(outcome, bp, "src1 dim " + std::to_string(i) +
                                          " must be 1 or src0's (Tessera broadcasts src1 only)");
  const std::string dims_text =
      unary ? common::format_dims(a_dims) : common::format_dims_pair(a_dims, b_dims);
  set_command(outcome, s, command_head(s) + " --alg=" + alg + " " + dims_text);
  return [=](tsrHandle_t handle, problem_outcome& o) {
    host_tensor a = host_tensor::packed(s.data_type, a_dims, s.channels_last);
    host_tensor b = host_tensor::packed(s.data_type, b_dims, s.channels_last);
    host_tensor c = packed_like(a, s.channels_last);
    const reference::fill_spec a_fill = op == TSRP_OP_TENSOR_SQRT  ? reference::fill_spec{0, 16, 1}
                                        : op == TSRP_OP_TENSOR_NOT ? reference::fill_spec{0, 1, 1}
                                                                   : reference::fill_spec{-4, 4, 1};
    reference::fill_integers(a, a_fill, seed_x);
    reference::fill_integers(b, {-4, 4, 1.0}, seed_w);
    host_tensor c0 = c;
    if (add_tensor) reference::fill_integers(c0, {-3, 3, 1.0}, seed_dy);
    else reference::fill_poison(c0);
    tensor_rotation rotation = unary ? tensor_rotation({&a}, s) : tensor_rotation({&a, &b}, s);
    device_tensor a_dev(handle, a, &rotation), b_dev(handle, b, &rotation), c_dev(handle, c);
    a_dev.upload(handle, a);
    b_dev.upload(handle, b);
    c_dev.upload(handle, c0);
    op_tensor_descriptor od("tsrCreateOpTensorDescriptor");
    check(tsrSetOpTensorDescriptor(od.get(), static_cast<tsrOpTensorOp_t>(op), TSR_DATA_FLOAT,
                                   TSR_NOT_PROPAGATE_NAN),
          "tsrSetOpTensorDescriptor");
    auto call = [&](tsrAlgo_t) -> tsrStatus_t {
      if (add_tensor)
        return tsrAddTensor(handle, 1.0f, b_dev.desc.get(), b_dev.data(), 1.0f,
                            c_dev.desc.get(), c_dev.data());
      return tsrOpTensor(handle, od.get(), 1.0f, a_dev.desc.get(), a_dev.data(), 1.0f,
                         unary ? nullptr : b_dev.desc.get(), unary ? nullptr : b_dev.data(),
                         0.0f, c_dev.desc.get(), c_dev.data());
    };
    const char* name = add_tensor ? "tsrAddTensor" : "tsrOpTensor";
    // Tensor ops take no algorithm: the library picks, or the handle's backend preference.
    run_first_supported({{TSR_ALGO_AUTO, automatic_kernel_name(s)}}, call,
                        name, o);
    check(tsrSynchronize(handle), "tsrSynchronize");
    o.status = outcome_status::passed;
    if (s.mode & mode_correctness) {
      c_dev.download(handle, c);
      host_tensor expected = c0;
      std::string err;
      bool ok;
      if (add_tensor) {
        tsrpAddTensorProblem p{sizeof(tsrpAddTensorProblem), b.desc(), c.desc()};
        ok = reference::add_tensor(p, b.data(), 1.0, 1.0, expected.data(), &err);
      } else {
        tsrpOpTensorProblem p{};
        p.struct_size = sizeof p;
        p.op = op;
        p.compute_type = TSRP_DATA_FLOAT;
        p.nan_propagation = TSRP_NOT_PROPAGATE_NAN;
        p.a = a.desc(), p.b = b.desc(), p.c = c.desc();
        ok = reference::op_tensor(p, a.data(), b.data(), 1.0, 1.0, 0.0, expected.data(), &err);
      }
      if (!ok) return reference_failed(o, err);
      if (!judge_rounded(o, "dst", c, expected, reference::tensor_op_tolerance(s.data_type, 1)))
        return;
    }
    if (s.mode & mode_performance) {
      const double bytes = add_tensor ? tensor_bytes(b) + 2 * tensor_bytes(c)
                                      : tensor_bytes(a) + (unary ? 0 : tensor_bytes(b)) +
                                            tensor_bytes(c);
      time_memory_bound(
          o, handle, s, bytes, [&] { check(call(TSR_ALGO_AUTO), name); }, &rotation);
    }
  };
}

// ---- reorder (transform tensor) ---------------------------------------------------------------

prepared_problem prepare_reorder(const bench_problem& bp, problem_outcome& outcome) {
  const bench_settings& s = bp.settings;
  std::vector<int64_t> dims;
  std::string error;
  if (!common::parse_dims(bp.text, &dims, &error)) return bad_problem(outcome, bp, error);
  bool src_last = false, dst_last = false;
  if (!parse_tag(s.stag, &src_last) || !parse_tag(s.dtag, &dst_last))
    return bad_problem(outcome, bp, "tags must be nchw-like (abx) or nhwc-like (axb)");
  set_command(outcome, s,
              std::string("tessera-bench --reorder --sdt=") + common::data_type_name(s.sdt) +
                  " --ddt=" + common::data_type_name(s.ddt) + " --stag=" +
                  (src_last ? "axb" : "abx") + " --dtag=" + (dst_last ? "axb" : "abx") + " " +
                  common::format_dims(dims));
  return [=](tsrHandle_t handle, problem_outcome& o) {
    host_tensor x = host_tensor::packed(s.sdt, dims, src_last);
    host_tensor y = host_tensor::packed(s.ddt, dims, dst_last);
    reference::fill_integers(x, {-100, 100, 1.0}, seed_x);  // exact in every type but s8's ends
    reference::fill_poison(y);
    tensor_rotation rotation({&x}, s);
    device_tensor x_dev(handle, x, &rotation), y_dev(handle, y);
    x_dev.upload(handle, x);
    y_dev.upload(handle, y);
    auto call = [&](tsrAlgo_t) {
      return tsrTransformTensor(handle, 1.0f, x_dev.desc.get(), x_dev.data(), 0.0f,
                                y_dev.desc.get(), y_dev.data());
    };
    run_first_supported({{TSR_ALGO_AUTO, automatic_kernel_name(s)}}, call,
                        "tsrTransformTensor", o);
    check(tsrSynchronize(handle), "tsrSynchronize");
    o.status = outcome_status::passed;
    if (s.mode & mode_correctness) {
      y_dev.download(handle, y);
      host_tensor expected(y.desc());
      std::string err;
      tsrpTransformTensorProblem p{sizeof(tsrpTransformTensorProblem), x.desc(), y.desc()};
      if (!reference::transform_tensor(p, x.data(), 1.0, 0.0, expected.data(), &err))
        return reference_failed(o, err);
      if (!judge_rounded(o, "dst", y, expected, reference::tensor_op_tolerance(s.ddt, 1))) return;
    }
    if (s.mode & mode_performance)
      time_memory_bound(o, handle, s, tensor_bytes(x) + tensor_bytes(y),
                        [&] { check(call(TSR_ALGO_AUTO), "tsrTransformTensor"); }, &rotation);
  };
}

// ---- reduction --------------------------------------------------------------------------------

prepared_problem prepare_reduction(const bench_problem& bp, problem_outcome& outcome) {
  const bench_settings& s = bp.settings;
  const std::string alg = s.alg_given ? s.algorithm : "sum";
  int32_t op = -1;
  if (alg == "sum" || alg == "reduction_sum") op = TSRP_REDUCE_TENSOR_ADD;
  else if (alg == "mul" || alg == "reduction_mul") op = TSRP_REDUCE_TENSOR_MUL;
  else if (alg == "min" || alg == "reduction_min") op = TSRP_REDUCE_TENSOR_MIN;
  else if (alg == "max" || alg == "reduction_max") op = TSRP_REDUCE_TENSOR_MAX;
  else if (alg == "amax") op = TSRP_REDUCE_TENSOR_AMAX;
  else if (alg == "mean" || alg == "reduction_mean") op = TSRP_REDUCE_TENSOR_AVG;
  else if (alg != "norm1" && alg != "norm2" && alg != "reduction_norm_lp_sum")
    return bad_problem(outcome, bp, "unknown algorithm '" + alg +
                                        "' (sum, mul, min, max, amax, mean, norm1, norm2)");
  std::vector<int64_t> a_dims, c_dims;
  std::string error;
  if (!common::parse_dims_pair(bp.text, false, true, &a_dims, &c_dims, &error))
    return bad_problem(outcome, bp, error);
  for (size_t i = 0; i < a_dims.size(); ++i)
    if (c_dims[i] != a_dims[i] && c_dims[i] != 1)
      return bad_problem(outcome, bp, "dst dim " + std::to_string(i) + " must be 1 or src's");
  set_command(outcome, s,
              command_head(s) + " --alg=" + alg + " " + common::format_dims_pair(a_dims, c_dims));
  return [=](tsrHandle_t handle, problem_outcome& o) {
    if (op < 0)
      throw api_failure{TSR_STATUS_NOT_SUPPORTED_NO_KERNEL,
                        "Tessera's tsrReduceTensor has no " + alg + " (no NORM1/NORM2 op)"};
    host_tensor a = host_tensor::packed(s.data_type, a_dims, s.channels_last);
    host_tensor c = host_tensor::packed(s.data_type, c_dims, s.channels_last);
    tsrpReduceTensorProblem p{};
    p.struct_size = sizeof p;
    p.op = op;
    p.compute_type = TSRP_DATA_FLOAT;
    p.nan_propagation = TSRP_NOT_PROPAGATE_NAN;
    p.a = a.desc(), p.c = c.desc();
    const int64_t length = reference::reduction_length(p);
    // Products stay exact with factors of +-1 (and a sprinkling of 2s when short).
    reference::fill_integers(a, op == TSRP_REDUCE_TENSOR_MUL
                                    ? reference::fill_spec{-1, 1, 1.0}
                                    : reference::fill_spec{-4, 4, 1.0},
                             seed_x);
    if (op == TSRP_REDUCE_TENSOR_MUL)
      for (int64_t i = 0; i < a.extent(); ++i)
        if (a.data()[i] == 0.0f) a.data()[i] = length <= 16 ? 2.0f : 1.0f;
    reference::fill_poison(c);
    tensor_rotation rotation({&a}, s);
    device_tensor a_dev(handle, a, &rotation), c_dev(handle, c);
    a_dev.upload(handle, a);
    c_dev.upload(handle, c);
    reduce_tensor_descriptor rd("tsrCreateReduceTensorDescriptor");
    check(tsrSetReduceTensorDescriptor(rd.get(), static_cast<tsrReduceTensorOp_t>(op),
                                       TSR_DATA_FLOAT, TSR_NOT_PROPAGATE_NAN,
                                       TSR_REDUCE_TENSOR_NO_INDICES, TSR_32BIT_INDICES),
          "tsrSetReduceTensorDescriptor");
    auto call = [&](tsrAlgo_t algo) {
      return tsrReduceTensor(handle, rd.get(), algo, nullptr, 0, nullptr, 0, 1.0f,
                             a_dev.desc.get(), a_dev.data(), 0.0f, c_dev.desc.get(),
                             c_dev.data());
    };
    const tsrAlgo_t algo = run_first_supported(kernel_candidates(TSR_OP_REDUCE_TENSOR, s),
                                               call, "tsrReduceTensor", o);
    check(tsrSynchronize(handle), "tsrSynchronize");
    o.status = outcome_status::passed;
    if (s.mode & mode_correctness) {
      c_dev.download(handle, c);
      host_tensor expected(c.desc());
      std::string err;
      if (!reference::reduce_tensor(p, a.data(), 1.0, 0.0, expected.data(), nullptr, &err))
        return reference_failed(o, err);
      if (!judge_rounded(o, "dst", c, expected,
                         reference::tensor_op_tolerance(s.data_type, length)))
        return;
    }
    if (s.mode & mode_performance)
      time_memory_bound(o, handle, s, tensor_bytes(a) + tensor_bytes(c),
                        [&] { check(call(algo), "tsrReduceTensor"); }, &rotation);
  };
}

}  // namespace tessera::tools

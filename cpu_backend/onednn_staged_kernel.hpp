// The forward/backward primitive kernels that blend their result into the output with the call's
// alpha and beta (LRN, pooling, softmax, eltwise) run the tensor ops' lifecycle
// (onednn_tensor_op_kernel.hpp) unchanged: a plan per (problem, alpha, beta), direct on the user's
// memory or staged through f32 in the workspace with one alpha/beta output reorder, and a
// workspace that is the largest over the alpha/beta shapes. What differs is only their texts,
// which name the oneDNN primitive ("oneDNN pooling query", ...) rather than the kernel, so they
// stay as they were. A kernel file supplies the tensor-op Traits, deriving from
// alpha_beta_traits for the scalar part, plus:
//
//     static constexpr bool backward = ...;
//     static constexpr const char* primitive = "...";     // "LRN": "oneDNN LRN query", ...
//     static constexpr const char* problem_noun = "...";  // "null or truncated LRN problem"
#pragma once

#include "onednn_primitive_cache.hpp"
#include "onednn_tensor_op_kernel.hpp"

#include <string>
#include <utility>
#include <vector>

namespace tessera::onednn {

// The scalars of an Args with float alpha and beta: the workspace covers every class of them
// (k_scale_classes x k_sum_classes).
template <class Args>
struct alpha_beta_traits {
  static void add_args(cache_key& key, const Args& a) {
    key.add(double{a.alpha}).add(double{a.beta});
  }
  static std::vector<Args> shapes() {
    std::vector<Args> out;
    for (float alpha : k_scale_classes) {
      for (float beta : k_sum_classes) {
        Args a{};
        a.alpha = alpha;
        a.beta = beta;
        out.push_back(a);
      }
    }
    return out;
  }
};

template <class Traits>
struct staged_labels {
  static std::string null_problem() {
    return std::string("null or truncated ") + Traits::problem_noun + " problem";
  }
  static std::string query() { return std::string("oneDNN ") + Traits::primitive + " query"; }
  static std::string workspace_query() {
    return std::string("oneDNN ") + Traits::primitive + " workspace query";
  }
  static std::string workspace_null() {
    return std::string(Traits::primitive) + " workspace_size: null argument";
  }
  static std::string run() {
    return std::string("oneDNN ") + Traits::primitive + (Traits::backward ? " backward" : " forward");
  }
  static std::string creation() {
    return std::string("oneDNN ") + Traits::primitive + " primitive creation";
  }
  static std::string execution() { return std::string("oneDNN ") + Traits::primitive + " execution"; }
};

template <class Traits>
using staged_kernel = tensor_op_kernel<Traits, staged_labels<Traits>>;

}  // namespace tessera::onednn

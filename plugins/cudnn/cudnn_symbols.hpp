// Every cuDNN and CUDA driver function this plugin calls, resolved at run time (dlopen + dlsym)
// into one table per library. The plugin therefore has no link-time dependency on libcudnn,
// libcudart or libcuda: it loads on machines without them and says why it cannot serve.
//
// cuDNN 9 is a small shim (libcudnn.so.9) that opens its sub-libraries (libcudnn_graph, _ops,
// _cnn, _adv, _engines_*) itself, on first use, from its own folder (its RUNPATH is $ORIGIN), so
// opening the shim by full path is enough; LD_LIBRARY_PATH only helps when the sub-libraries live
// elsewhere. The headers are used for types and signatures only (decltype of each function).
#pragma once

#include <cuda.h>
#include <cudnn.h>

#include <cstddef>
#include <string>

// The cuDNN functions the kernels use (legacy API of cuDNN 9). Adding a call means adding it here.
#define TESSERA_CUDNN_FUNCTIONS(X)                                                         \
  X(cudnnGetVersion)                                                                       \
  X(cudnnGetErrorString)                                                                   \
  X(cudnnGetLastErrorString)                                                               \
  X(cudnnOpsVersionCheck)                                                                  \
  X(cudnnCnnVersionCheck)                                                                  \
  X(cudnnAdvVersionCheck)                                                                  \
  X(cudnnCreate)                                                                           \
  X(cudnnDestroy)                                                                          \
  X(cudnnSetStream)                                                                        \
  X(cudnnGetStream)                                                                        \
  X(cudnnCreateTensorDescriptor)                                                           \
  X(cudnnSetTensorNdDescriptor)                                                            \
  X(cudnnGetTensorNdDescriptor)                                                            \
  X(cudnnDestroyTensorDescriptor)                                                          \
  X(cudnnCreateFilterDescriptor)                                                           \
  X(cudnnSetFilterNdDescriptor)                                                            \
  X(cudnnDestroyFilterDescriptor)                                                          \
  X(cudnnCreateConvolutionDescriptor)                                                      \
  X(cudnnSetConvolutionNdDescriptor)                                                       \
  X(cudnnSetConvolutionGroupCount)                                                         \
  X(cudnnSetConvolutionMathType)                                                           \
  X(cudnnDestroyConvolutionDescriptor)                                                     \
  X(cudnnGetConvolutionForwardWorkspaceSize)                                               \
  X(cudnnConvolutionForward)                                                               \
  X(cudnnConvolutionBiasActivationForward)                                                 \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize)                                          \
  X(cudnnConvolutionBackwardData)                                                          \
  X(cudnnGetConvolutionBackwardFilterWorkspaceSize)                                        \
  X(cudnnConvolutionBackwardFilter)                                                        \
  X(cudnnConvolutionBackwardBias)                                                          \
  X(cudnnCreateActivationDescriptor)                                                       \
  X(cudnnSetActivationDescriptor)                                                          \
  X(cudnnSetActivationDescriptorSwishBeta)                                                 \
  X(cudnnDestroyActivationDescriptor)                                                      \
  X(cudnnActivationForward)                                                                \
  X(cudnnActivationBackward)                                                               \
  X(cudnnCreatePoolingDescriptor)                                                          \
  X(cudnnSetPoolingNdDescriptor)                                                           \
  X(cudnnDestroyPoolingDescriptor)                                                         \
  X(cudnnPoolingForward)                                                                   \
  X(cudnnPoolingBackward)                                                                  \
  X(cudnnSoftmaxForward)                                                                   \
  X(cudnnSoftmaxBackward)                                                                  \
  X(cudnnCreateLRNDescriptor)                                                              \
  X(cudnnSetLRNDescriptor)                                                                 \
  X(cudnnDestroyLRNDescriptor)                                                             \
  X(cudnnLRNCrossChannelForward)                                                           \
  X(cudnnLRNCrossChannelBackward)                                                          \
  X(cudnnBatchNormalizationForwardTraining)                                                \
  X(cudnnBatchNormalizationForwardInference)                                               \
  X(cudnnBatchNormalizationBackward)                                                       \
  X(cudnnCreateOpTensorDescriptor)                                                         \
  X(cudnnSetOpTensorDescriptor)                                                            \
  X(cudnnDestroyOpTensorDescriptor)                                                        \
  X(cudnnOpTensor)                                                                         \
  X(cudnnAddTensor)                                                                        \
  X(cudnnScaleTensor)                                                                      \
  X(cudnnSetTensor)                                                                        \
  X(cudnnTransformTensor)                                                                  \
  X(cudnnCreateRNNDescriptor)                                                              \
  X(cudnnSetRNNDescriptor_v8)                                                              \
  X(cudnnDestroyRNNDescriptor)                                                             \
  X(cudnnCreateRNNDataDescriptor)                                                          \
  X(cudnnSetRNNDataDescriptor)                                                             \
  X(cudnnDestroyRNNDataDescriptor)                                                         \
  X(cudnnGetRNNWeightSpaceSize)                                                            \
  X(cudnnGetRNNWeightParams)                                                               \
  X(cudnnGetRNNTempSpaceSizes)                                                             \
  X(cudnnRNNForward)                                                                       \
  X(cudnnRNNBackwardData_v8)                                                               \
  X(cudnnRNNBackwardWeights_v8)

// The CUDA driver functions: the device count, making a device's primary context (the one the
// CUDA runtime, and so the cuda plugin's memory, uses) current around cuDNN calls, and the two
// stream-ordered memory operations the RNN kernels need. Each entry is (the cuda.h name, the
// exported symbol): cuda.h maps some names to versioned entry points (cuCtxPushCurrent is
// cuCtxPushCurrent_v2), and dlsym must be given the versioned symbol, while the table's member
// and its type come from the cuda.h name like any C caller's would.
#define TESSERA_CUDA_DRIVER_FUNCTIONS(X)              \
  X(cuInit, "cuInit")                                 \
  X(cuDeviceGetCount, "cuDeviceGetCount")             \
  X(cuDeviceGet, "cuDeviceGet")                       \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain") \
  X(cuCtxGetCurrent, "cuCtxGetCurrent")               \
  X(cuCtxPushCurrent, "cuCtxPushCurrent_v2")          \
  X(cuCtxPopCurrent, "cuCtxPopCurrent_v2")            \
  X(cuMemsetD32Async, "cuMemsetD32Async")             \
  X(cuMemcpyDtoDAsync, "cuMemcpyDtoDAsync_v2")        \
  X(cuGetErrorName, "cuGetErrorName")                 \
  X(cuGetErrorString, "cuGetErrorString")

namespace tessera::cudnn_plugin {

#define TESSERA_DECLARE_FUNCTION(name) decltype(&::name) name = nullptr;
#define TESSERA_DECLARE_DRIVER_FUNCTION(name, symbol) decltype(&::name) name = nullptr;

struct cudnn_functions {
  TESSERA_CUDNN_FUNCTIONS(TESSERA_DECLARE_FUNCTION)
};

struct cuda_driver_functions {
  TESSERA_CUDA_DRIVER_FUNCTIONS(TESSERA_DECLARE_DRIVER_FUNCTION)
};

#undef TESSERA_DECLARE_FUNCTION
#undef TESSERA_DECLARE_DRIVER_FUNCTION

// libcudnn as found at run time, or why it was not.
struct cudnn_library {
  bool loaded = false;
  std::string reason;     // why not loaded (names the path tried)
  std::string path;       // what was opened: TESSERA_CUDNN_LIBRARY or "libcudnn.so.9"
  size_t version = 0;     // cudnnGetVersion(), e.g. 91900 for 9.19.0
  cudnn_functions functions;
};

// Opens libcudnn once per process (thread-safe): the full path in TESSERA_CUDNN_LIBRARY when that
// is set (an explicit choice that fails is reported, not replaced by another cuDNN), else
// "libcudnn.so.9" on the normal loader path. Refuses a cuDNN whose major version is not 9 (the
// headers this plugin was compiled with) and one that lacks any function of the table.
const cudnn_library& cudnn_library_instance();

// The cuDNN table; valid once cudnn_library_instance().loaded.
inline const cudnn_functions& cudnn() { return cudnn_library_instance().functions; }

// "9.19.0" from cudnnGetVersion()'s 91900.
std::string cudnn_version_text(size_t version);

// libcuda.so.1, initialised once per process: the device count, or why there is no device.
struct cuda_driver {
  bool loaded = false;
  int device_count = 0;
  std::string why_no_device;  // set when device_count is 0
  cuda_driver_functions functions;
};

const cuda_driver& cuda_driver_instance();

// The driver table; valid when cuda_driver_instance().loaded.
inline const cuda_driver_functions& driver() { return cuda_driver_instance().functions; }

}  // namespace tessera::cudnn_plugin

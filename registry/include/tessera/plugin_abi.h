/*
 * Tessera plugin ABI: the only header a Tessera plugin includes.
 *
 * A plugin is a shared library that exports exactly one C symbol, TSRP_ENTRY_POINT_NAME. The host
 * (libtessera) calls it once, offering the newest ABI version it speaks and the oldest it still
 * accepts; the plugin answers the version it speaks in tsrpPluginDesc::abi_version (or refuses by
 * returning a status other than TSRP_STATUS_SUCCESS). The host refuses any answer outside
 * [TSRP_ABI_VERSION_MIN, TSRP_ABI_VERSION_CURRENT], logs both versions and skips the plugin.
 *
 * Rules that keep this ABI stable (docs/PluginInterface.md says more):
 *  - Every extensible struct starts with `size_t struct_size`, set by its writer to sizeof() of the
 *    struct it was compiled with. A reader touches only the prefix both sides know. Fields are only
 *    appended, and a zero in an appended field means "behave as before the field existed".
 *  - tsrpTensor is a plain value type embedded in problems; it never changes (a new layout would
 *    be a new type).
 *  - Enum values are never renumbered; new values are appended.
 *  - No C++ type and no exception crosses this boundary: every entry returns a status, and the
 *    host also guards each call, but a plugin must not rely on that.
 *
 * ABI version history (append a line for every change, never edit an old one):
 *   1  Tessera 0.1: device interface, contexts, kernels for convolution forward and activation
 *      forward/backward.
 *   2  Tessera 0.2: the whole operation set (TSRP_OP_CONVOLUTION_BACKWARD_DATA .. RNN); v1 plugins
 *      still load (nothing of v1 changed).
 *   3  Tessera 0.3: tsrpKernel.estimate_us (optional cost estimate: the heuristic the registry
 *      ranks kernels by when no tuning result exists), tsrpDeviceInterface.fingerprint
 *      (optional: what identifies a device in the tuning database) and
 *      tsrpDeviceInterface.pointer_device (optional: which device a pointer's memory is on, for
 *      the host's pointer checks), tsrpConvolutionProblem.weights_generation (constant-weights
 *      promise of forward convolutions). All appended; v1 and v2 plugins still load (their shorter
 *      structs read as NULL there).
 *   4  Tessera 0.4: tsrpDeviceInterface.memory_info (optional: free and total bytes of the
 *      context's device, so that the host can refuse a scratch buffer no device could hold
 *      before asking the allocator). Appended; v1 to v3 plugins still load (their shorter device
 *      structs read as NULL there: memory unknown, the host skips the check).
 */
#ifndef TESSERA_PLUGIN_ABI_H
#define TESSERA_PLUGIN_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TSRP_ABI_VERSION_CURRENT 4u
#define TSRP_ABI_VERSION_MIN 1u

#define TSRP_ENTRY_POINT_NAME "tsrpPluginEntry"

#if defined(_WIN32)
#define TSRP_EXPORT __declspec(dllexport)
#else
#define TSRP_EXPORT __attribute__((visibility("default")))
#endif

/* Values match tsrStatus_t of tessera.h: the host passes them through unchanged. */
typedef enum {
  TSRP_STATUS_SUCCESS = 0,
  TSRP_STATUS_BAD_PARAM = 2000,
  TSRP_STATUS_NOT_SUPPORTED = 3000,
  TSRP_STATUS_INTERNAL_ERROR = 4000,
  TSRP_STATUS_EXECUTION_FAILED = 5000,
  TSRP_STATUS_OUT_OF_MEMORY = 5001,
  TSRP_STATUS_DEVICE_ERROR = 5002
} tsrpStatus_t;

/* Values match tsrDeviceKind_t. */
typedef enum { TSRP_DEVICE_CPU = 0, TSRP_DEVICE_CUDA = 1 } tsrpDeviceKind_t;

/* Values match tsrDataType_t. */
typedef enum {
  TSRP_DATA_FLOAT = 0,
  TSRP_DATA_HALF = 1,
  TSRP_DATA_BFLOAT16 = 2,
  TSRP_DATA_INT8 = 3,
  TSRP_DATA_INT32 = 4
} tsrpDataType_t;

/* Values match tsrOperation_t. The problem and argument struct of each operation is named. */
typedef enum {
  TSRP_OP_CONVOLUTION_FORWARD = 0, /* tsrpConvolutionProblem, tsrpConvolutionForwardArgs */
  TSRP_OP_ACTIVATION_FORWARD = 1,  /* tsrpActivationProblem, tsrpActivationArgs */
  TSRP_OP_ACTIVATION_BACKWARD = 2, /* tsrpActivationProblem, tsrpActivationArgs */
  /* ABI 2: the rest of the operation set. Each family's problem and argument structs are in
   * the plugin_abi_<family>.h headers included at the end of this file. */
  TSRP_OP_CONVOLUTION_BACKWARD_DATA = 3,
  TSRP_OP_CONVOLUTION_BACKWARD_FILTER = 4,
  TSRP_OP_CONVOLUTION_BACKWARD_BIAS = 5,
  TSRP_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD = 6,
  TSRP_OP_POOLING_FORWARD = 7,
  TSRP_OP_POOLING_BACKWARD = 8,
  TSRP_OP_SOFTMAX_FORWARD = 9,
  TSRP_OP_SOFTMAX_BACKWARD = 10,
  TSRP_OP_LRN_FORWARD = 11,
  TSRP_OP_LRN_BACKWARD = 12,
  TSRP_OP_BATCH_NORM_FORWARD_TRAINING = 13,
  TSRP_OP_BATCH_NORM_FORWARD_INFERENCE = 14,
  TSRP_OP_BATCH_NORM_BACKWARD = 15,
  TSRP_OP_LAYER_NORM_FORWARD = 16,
  TSRP_OP_LAYER_NORM_BACKWARD = 17,
  TSRP_OP_RMS_NORM_FORWARD = 18,
  TSRP_OP_RMS_NORM_BACKWARD = 19,
  TSRP_OP_ADD_TENSOR = 20,
  TSRP_OP_OP_TENSOR = 21,
  TSRP_OP_SCALE_TENSOR = 22,
  TSRP_OP_SET_TENSOR = 23,
  TSRP_OP_TRANSFORM_TENSOR = 24,
  TSRP_OP_REDUCE_TENSOR = 25,
  TSRP_OP_MATMUL = 26,
  TSRP_OP_RNN_FORWARD_INFERENCE = 27,
  TSRP_OP_RNN_FORWARD_TRAINING = 28,
  TSRP_OP_RNN_BACKWARD_DATA = 29,
  TSRP_OP_RNN_BACKWARD_WEIGHTS = 30,
  TSRP_OP_COUNT = 31 /* operations this header knows; kernels of others are skipped */
} tsrpOperation_t;

/* Values match tsrActivationMode_t. */
typedef enum {
  TSRP_ACTIVATION_IDENTITY = 0,
  TSRP_ACTIVATION_RELU = 1,
  TSRP_ACTIVATION_SIGMOID = 2,
  TSRP_ACTIVATION_TANH = 3,
  TSRP_ACTIVATION_LEAKY_RELU = 4,   /* coef = negative slope */
  TSRP_ACTIVATION_CLIPPED_RELU = 5, /* coef = upper clip */
  TSRP_ACTIVATION_ELU = 6,          /* coef = alpha */
  TSRP_ACTIVATION_GELU_ERF = 7,
  TSRP_ACTIVATION_GELU_TANH = 8,
  TSRP_ACTIVATION_SWISH = 9 /* x * sigmoid(coef * x); coef 1 is silu */
} tsrpActivationMode_t;

/* Values match tsrNanPropagation_t (and cudnnNanPropagation_t). Shared by several families. */
#ifndef TSRP_NAN_PROPAGATION_DEFINED
#define TSRP_NAN_PROPAGATION_DEFINED
typedef enum { TSRP_NOT_PROPAGATE_NAN = 0, TSRP_PROPAGATE_NAN = 1 } tsrpNanPropagation_t;
#endif

/* Values match tsrConvolutionMode_t. */
typedef enum { TSRP_CROSS_CORRELATION = 0, TSRP_CONVOLUTION = 1 } tsrpConvolutionMode_t;

/* Values match tsrMathMode_t. */
typedef enum {
  TSRP_MATH_DEFAULT = 0,     /* exact arithmetic of the compute type */
  TSRP_MATH_TENSOR_OP = 1,   /* tensor cores for fp16/bf16 */
  TSRP_MATH_ALLOW_TF32 = 2   /* tensor cores, and tf32 for fp32 inputs */
} tsrpMathMode_t;

#define TSRP_MAX_DIMS 8
#define TSRP_MAX_SPATIAL_DIMS 3

/* A validated tensor: dims and strides in elements, dims[0] is N, dims[1] is C (channels) for
 * activation-like tensors and K (output channels) for filters; the layout is in the strides. */
typedef struct {
  int32_t data_type; /* tsrpDataType_t */
  int32_t ndims;
  int64_t dims[TSRP_MAX_DIMS];
  int64_t strides[TSRP_MAX_DIMS];
} tsrpTensor;

/* Convolution problem: x is N,C,spatial...; w is K,C/groups,spatial...; y is N,K,spatial... The
 * host has checked that the shapes agree. dilation 1 means none (cuDNN convention). */
typedef struct {
  size_t struct_size;
  tsrpTensor x;
  tsrpTensor w;
  tsrpTensor y;
  int32_t spatial_dims;
  int32_t mode;         /* tsrpConvolutionMode_t */
  int32_t compute_type; /* tsrpDataType_t accumulation type */
  int32_t math_mode;    /* tsrpMathMode_t */
  int64_t groups;
  int64_t pad_before[TSRP_MAX_SPATIAL_DIMS];
  int64_t pad_after[TSRP_MAX_SPATIAL_DIMS];
  int64_t stride[TSRP_MAX_SPATIAL_DIMS];
  int64_t dilation[TSRP_MAX_SPATIAL_DIMS];
  /* ABI 2, int8 (x and w s8, compute type s32, y s8, s32 or f32): how many output scales
   * args.output_scales holds: 1 (per tensor) or K (per output channel); 0 means no scales
   * (scale 1). Must be 0 for floating problems. */
  int32_t output_scale_count;
  int32_t reserved_int8; /* 0 */
  /* ABI 3, forward only: nonzero when the caller promised (tsrSetConstantWeights) that the
   * contents at args.w do not change while this value stays the same, so a kernel may keep w in
   * its own layout between calls, keyed by the w pointer and this value. 0: w may change between
   * any two calls (every call reads it afresh). */
  uint32_t weights_generation;
  uint32_t reserved_weights; /* 0 */
} tsrpConvolutionProblem;

/* y = alpha * conv(x, w) + beta * y. When beta is 0, y is not read (it may hold NaN). */
typedef struct {
  size_t struct_size;
  const void* x;
  const void* w;
  void* y;
  float alpha;
  float beta;
  /* ABI 2, int8: problem.output_scale_count floats in host memory, read during the call.
   * y = saturate(round_half_even(alpha * scale[k] * acc + beta * y)) with acc the exact int32
   * sum of x * w (for f32 y: no rounding nor saturation beyond f32's). */
  const float* output_scales;
} tsrpConvolutionForwardArgs;

/* Activation: forward uses x and y; backward uses x, y, dy and dx (all four have the same dims;
 * strides may differ). */
typedef struct {
  size_t struct_size;
  int32_t mode; /* tsrpActivationMode_t */
  double coef;
  tsrpTensor x;
  tsrpTensor y;
  tsrpTensor dy;
  tsrpTensor dx;
} tsrpActivationProblem;

/* forward:  y  = alpha * act(x) + beta * y
 * backward: dx = alpha * act'(x) * dy + beta * dx   (y is also given, for kernels that use it) */
typedef struct {
  size_t struct_size;
  const void* x;
  const void* y_in; /* backward: forward output */
  void* y;          /* forward: output */
  const void* dy;
  void* dx;
  float alpha;
  float beta;
} tsrpActivationArgs;

#define TSRP_KERNEL_DETERMINISTIC 0x1u

/* One kernel, with CUTLASS's lifecycle: can_implement, workspace_size, run. `problem` and `args`
 * point to the problem and argument structs named for `operation` above. */
typedef struct {
  size_t struct_size;
  const char* name;   /* unique within the plugin, e.g. "conv_fwd_direct" */
  int32_t operation;  /* tsrpOperation_t */
  uint32_t flags;     /* TSRP_KERNEL_* */
  const char* notes;  /* numerical notes shown to users (may be NULL) */
  void* user_data;    /* passed back to every call below */
  /* Returns 1 when the kernel can run the problem; else 0 and a reason written to `reason`
   * (NUL-terminated, at most reason_size bytes). */
  int (*can_implement)(void* user_data, const void* problem, char* reason, size_t reason_size);
  /* (optional) Scratch bytes the kernel needs for this problem; NULL means none. */
  tsrpStatus_t (*workspace_size)(void* user_data, const void* problem, size_t* bytes);
  /* Runs on the context's stream. On failure, writes a message (NUL-terminated). */
  tsrpStatus_t (*run)(void* user_data, void* context, const void* problem, const void* args,
                      void* workspace, size_t workspace_size, char* message, size_t message_size);
  /* (optional, ABI 3) Estimated run time of the problem in microseconds on the plugin's device
   * (only asked after can_implement said yes). The registry runs, among the runnable kernels of
   * the most preferred backend, the one with the smallest estimate when nothing was tuned;
   * kernels without an estimate (NULL, or a negative answer) follow in table order. Each tunable
   * configuration of a kernel (tile, stages, split-k) is a kernel of its own, so that find and
   * the tuning database see every configuration. */
  double (*estimate_us)(void* user_data, const void* problem);
} tsrpKernel;

/* Per-handle state of a plugin (an engine, a stream). Every plugin may have one. */
typedef struct {
  size_t struct_size;
  tsrpStatus_t (*create)(int32_t device_ordinal, void** context, char* message, size_t message_size);
  void (*destroy)(void* context);
  /* (optional) The handle's stream changed (a cudaStream_t for CUDA, unused for the CPU). */
  tsrpStatus_t (*set_stream)(void* context, void* stream);
} tsrpContextInterface;

/* Memory and timing of one device kind, provided by the plugin that owns the device. `context`
 * is that plugin's own context for the handle. Copies are ordered on the context's stream and
 * complete before they return. */
typedef struct {
  size_t struct_size;
  tsrpStatus_t (*device_count)(int32_t* count);
  tsrpStatus_t (*device_name)(int32_t device_ordinal, char* name, size_t name_size);
  tsrpStatus_t (*allocate)(void* context, size_t bytes, void** pointer);
  tsrpStatus_t (*deallocate)(void* context, void* pointer);
  tsrpStatus_t (*copy_host_to_device)(void* context, void* dst, const void* src, size_t bytes);
  tsrpStatus_t (*copy_device_to_host)(void* context, void* dst, const void* src, size_t bytes);
  tsrpStatus_t (*synchronize)(void* context);
  /* Timing: an event is recorded on the stream; elapsed time is between two recorded events. */
  tsrpStatus_t (*event_create)(void* context, void** event);
  tsrpStatus_t (*event_record)(void* context, void* event);
  tsrpStatus_t (*event_elapsed_ms)(void* context, void* start, void* end, float* milliseconds);
  void (*event_destroy)(void* context, void* event);
  /* (optional, ABI 3) A canonical text identifying device `device_ordinal` for the tuning
   * database: name, compute capability, multiprocessor count, driver and runtime versions, e.g.
   * "gpu:NVIDIA H200;cc=9.0;sms=132;driver=13000;runtime=13000". Two devices with the same text
   * share tuning results. NULL: the registry uses the device name. */
  tsrpStatus_t (*fingerprint)(int32_t device_ordinal, char* text, size_t text_size);
  /* (optional, ABI 3) The ordinal of the device whose memory `pointer` points into, or -1 when
   * it is not memory of this device kind (host memory, another kind's, unknown). Must be cheap
   * and must not synchronize: the host asks it for every tensor of a call when pointer checks
   * are on (tsrSetPointerChecks). */
  tsrpStatus_t (*pointer_device)(const void* pointer, int32_t* device_ordinal);
  /* (optional, ABI 4) Bytes of memory of the context's device: `total_bytes` all the memory the
   * device has (what no single allocation can exceed however much is freed), `free_bytes` what
   * is free now (an estimate: other processes allocate too). The host refuses, as a bad
   * parameter, work whose scratch buffers exceed total_bytes (find measures on scratch outputs
   * of the outputs' spans) instead of asking `allocate` for them; a shortage of free memory is
   * still the allocator's to report. NULL, a failure or a total of 0: unknown, no such check. */
  tsrpStatus_t (*memory_info)(void* context, size_t* free_bytes, size_t* total_bytes);
} tsrpDeviceInterface;

typedef enum {
  TSRP_LOG_TRACE = 0,
  TSRP_LOG_DEBUG = 1,
  TSRP_LOG_INFO = 2,
  TSRP_LOG_WARN = 3,
  TSRP_LOG_ERROR = 4
} tsrpLogLevel_t;

/* What the host offers the plugin. */
typedef struct {
  size_t struct_size;
  uint32_t host_abi_version; /* newest version the host speaks: TSRP_ABI_VERSION_CURRENT */
  uint32_t host_abi_min;     /* oldest it accepts */
  const char* host_version;  /* Tessera's version string */
  /* Log through the host's logger; `plugin` is the plugin's name. Thread-safe. */
  void (*log)(int32_t level, const char* plugin, const char* message);
} tsrpHostOffer;

/* What the plugin answers. The pointers must stay valid until the process exits. */
typedef struct {
  size_t struct_size;
  uint32_t abi_version;     /* the version the plugin speaks */
  const char* name;         /* backend name users select by, e.g. "onednn", "cuda" */
  const char* version;      /* the plugin's own version, e.g. "0.1.0+onednn3.2.0" */
  int32_t device_kind;      /* tsrpDeviceKind_t the kernels run on */
  const tsrpContextInterface* context; /* (optional) */
  const tsrpDeviceInterface* device;   /* (optional) the plugin owns this device kind's memory */
  const tsrpKernel* kernels;
  size_t kernel_count;
} tsrpPluginDesc;

/* The one exported symbol. `desc` arrives zeroed with struct_size set by the host. Return
 * TSRP_STATUS_SUCCESS with desc filled in, or another status (and nothing filled) to refuse. */
typedef tsrpStatus_t (*tsrpPluginEntryFn)(const tsrpHostOffer* offer, tsrpPluginDesc* desc);

#ifdef __cplusplus
}
#endif

/* ABI 2 operation families (each header is self-contained C, included only from here). */
#include "plugin_abi_convolution.h"
#include "plugin_abi_pooling.h"
#include "plugin_abi_normalization.h"
#include "plugin_abi_tensor_ops.h"
#include "plugin_abi_matmul.h"
#include "plugin_abi_rnn.h"

#endif /* TESSERA_PLUGIN_ABI_H */

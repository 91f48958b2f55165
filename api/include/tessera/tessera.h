/*
 * Tessera: a deep-learning kernel library behind one stable C API, with its implementations in
 * plugins loaded at run time (see docs/PluginInterface.md for the plugin side).
 *
 * Conventions:
 *  - Every function returns tsrStatus_t; outputs are the last parameters.
 *  - On failure, tsrGetLastErrorString() gives a message naming the function, the argument and
 *    the bad value, and no output of the call has been written. (A kernel that fails while
 *    running may have written part of its output; the status is then TSR_STATUS_EXECUTION_FAILED.)
 *  - Handles and descriptors are opaque. A handle serves one device (the CPU or CUDA device N)
 *    and one stream; the tensors passed with it live in that device's memory.
 *  - Threads: see "Threads" below, next to tsrCreate.
 */
#ifndef TESSERA_TESSERA_H
#define TESSERA_TESSERA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define TSR_API __declspec(dllimport)
#else
#define TSR_API __attribute__((visibility("default")))
#endif

/* ---------------------------------------------------------------------------------------------
 * Version
 * ------------------------------------------------------------------------------------------- */
#define TSR_VERSION_MAJOR 0
#define TSR_VERSION_MINOR 1
#define TSR_VERSION_PATCH 0
/* One integer: major * 10000 + minor * 100 + patch. */
#define TSR_VERSION (TSR_VERSION_MAJOR * 10000 + TSR_VERSION_MINOR * 100 + TSR_VERSION_PATCH)

/* Every enum below ends with TSR_ENUM_RANGE: two entries that make its range all of int32 (and
 * its size 32 bits). A C caller may pass any int where an enum is expected; without them, the
 * C++ implementation reading a value outside the declared ones would be undefined behaviour
 * before it could refuse it (BAD_PARAM_OUT_OF_RANGE). Vulkan's _MAX_ENUM entries do the same.
 * The two entries are not values to use. */
#define TSR_ENUM_RANGE(prefix) \
  prefix##_ENUM_MIN_ = (-2147483647 - 1), prefix##_ENUM_MAX_ = 2147483647

/* ---------------------------------------------------------------------------------------------
 * Status codes, grouped as cuDNN 9 groups them: the thousands digit is the category.
 * ------------------------------------------------------------------------------------------- */
typedef enum {
  TSR_STATUS_SUCCESS = 0,

  TSR_STATUS_BAD_PARAM = 2000,
  TSR_STATUS_BAD_PARAM_NULL_POINTER = 2001,
  TSR_STATUS_BAD_PARAM_OUT_OF_RANGE = 2002,     /* a value outside its allowed range */
  TSR_STATUS_BAD_PARAM_SHAPE_MISMATCH = 2003,   /* descriptors that do not agree */
  TSR_STATUS_BAD_PARAM_SIZE_OVERFLOW = 2004,    /* a size whose byte count overflows */
  TSR_STATUS_BAD_PARAM_WORKSPACE_TOO_SMALL = 2005,
  TSR_STATUS_BAD_PARAM_NOT_INITIALIZED = 2006,  /* a descriptor used before it was set */
  TSR_STATUS_BAD_PARAM_VERSION_MISMATCH = 2007,

  TSR_STATUS_NOT_SUPPORTED = 3000,
  TSR_STATUS_NOT_SUPPORTED_NO_KERNEL = 3001,    /* no loaded kernel can run the problem */
  TSR_STATUS_NOT_SUPPORTED_NO_DEVICE = 3002,    /* no plugin serves the device kind */
  TSR_STATUS_NOT_SUPPORTED_PLUGIN = 3003,       /* a plugin refused to load */

  TSR_STATUS_INTERNAL_ERROR = 4000,

  TSR_STATUS_EXECUTION_FAILED = 5000,
  TSR_STATUS_EXECUTION_FAILED_OUT_OF_MEMORY = 5001,
  TSR_STATUS_EXECUTION_FAILED_DEVICE = 5002,
  TSR_ENUM_RANGE(TSR_STATUS)
} tsrStatus_t;

/* The category of a status: TSR_STATUS_SUCCESS, _BAD_PARAM, _NOT_SUPPORTED, _INTERNAL_ERROR or
 * _EXECUTION_FAILED. */
#define TSR_STATUS_CATEGORY(s) ((tsrStatus_t)(((int)(s) / 1000) * 1000))

/* A static string naming the status ("TSR_STATUS_BAD_PARAM_NULL_POINTER"); never NULL. */
TSR_API const char* tsrGetErrorString(tsrStatus_t status);

/* Copies the calling thread's last error message (empty after a successful call) into `message`,
 * NUL-terminated and truncated to max_size bytes. Errors: BAD_PARAM_NULL_POINTER. */
TSR_API tsrStatus_t tsrGetLastErrorString(char* message, size_t max_size);

/* The run-time version as TSR_VERSION would write it. */
TSR_API size_t tsrGetVersion(void);

/* Succeeds when the library at run time can serve a caller compiled against `compiled_version`
 * (same major version, and not older). Errors: BAD_PARAM_VERSION_MISMATCH with both versions in
 * the message. Typical use: tsrCheckVersion(TSR_VERSION). */
TSR_API tsrStatus_t tsrCheckVersion(size_t compiled_version);

/* ---------------------------------------------------------------------------------------------
 * Enums
 * ------------------------------------------------------------------------------------------- */
typedef enum {
  TSR_DEVICE_CPU = 0,
  TSR_DEVICE_CUDA = 1,
  TSR_ENUM_RANGE(TSR_DEVICE_KIND)
} tsrDeviceKind_t;

typedef enum {
  TSR_DATA_FLOAT = 0,
  TSR_DATA_HALF = 1,
  TSR_DATA_BFLOAT16 = 2,
  TSR_DATA_INT8 = 3,
  TSR_DATA_INT32 = 4,
  TSR_ENUM_RANGE(TSR_DATA_TYPE)
} tsrDataType_t;

/* Packed layouts for tsrSetTensorNdDescriptorEx; any other layout is given as strides. */
typedef enum {
  TSR_TENSOR_NCHW = 0, /* channels second: NCW, NCHW, NCDHW, ... */
  TSR_TENSOR_NHWC = 1, /* channels last: NWC, NHWC, NDHWC, ... */
  TSR_ENUM_RANGE(TSR_TENSOR_FORMAT)
} tsrTensorFormat_t;

typedef enum {
  TSR_OP_CONVOLUTION_FORWARD = 0,
  TSR_OP_ACTIVATION_FORWARD = 1,
  TSR_OP_ACTIVATION_BACKWARD = 2,
  TSR_OP_CONVOLUTION_BACKWARD_DATA = 3,
  TSR_OP_CONVOLUTION_BACKWARD_FILTER = 4,
  TSR_OP_CONVOLUTION_BACKWARD_BIAS = 5,
  TSR_OP_CONVOLUTION_BIAS_ACTIVATION_FORWARD = 6,
  TSR_OP_POOLING_FORWARD = 7,
  TSR_OP_POOLING_BACKWARD = 8,
  TSR_OP_SOFTMAX_FORWARD = 9,
  TSR_OP_SOFTMAX_BACKWARD = 10,
  TSR_OP_LRN_FORWARD = 11,
  TSR_OP_LRN_BACKWARD = 12,
  TSR_OP_BATCH_NORM_FORWARD_TRAINING = 13,
  TSR_OP_BATCH_NORM_FORWARD_INFERENCE = 14,
  TSR_OP_BATCH_NORM_BACKWARD = 15,
  TSR_OP_LAYER_NORM_FORWARD = 16,
  TSR_OP_LAYER_NORM_BACKWARD = 17,
  TSR_OP_RMS_NORM_FORWARD = 18,
  TSR_OP_RMS_NORM_BACKWARD = 19,
  TSR_OP_ADD_TENSOR = 20,
  TSR_OP_OP_TENSOR = 21,
  TSR_OP_SCALE_TENSOR = 22,
  TSR_OP_SET_TENSOR = 23,
  TSR_OP_TRANSFORM_TENSOR = 24,
  TSR_OP_REDUCE_TENSOR = 25,
  TSR_OP_MATMUL = 26,
  TSR_OP_RNN_FORWARD_INFERENCE = 27,
  TSR_OP_RNN_FORWARD_TRAINING = 28,
  TSR_OP_RNN_BACKWARD_DATA = 29,
  TSR_OP_RNN_BACKWARD_WEIGHTS = 30,
  TSR_OP_COUNT = 31,
  TSR_ENUM_RANGE(TSR_OPERATION)
} tsrOperation_t;

typedef enum {
  TSR_ACTIVATION_IDENTITY = 0,
  TSR_ACTIVATION_RELU = 1,
  TSR_ACTIVATION_SIGMOID = 2,
  TSR_ACTIVATION_TANH = 3,
  TSR_ACTIVATION_LEAKY_RELU = 4,   /* coef: slope for x < 0 */
  TSR_ACTIVATION_CLIPPED_RELU = 5, /* coef: upper clip, min(max(x, 0), coef) */
  TSR_ACTIVATION_ELU = 6,          /* coef: alpha, x < 0 ? coef * (exp(x) - 1) : x */
  TSR_ACTIVATION_GELU_ERF = 7,
  TSR_ACTIVATION_GELU_TANH = 8,
  TSR_ACTIVATION_SWISH = 9, /* coef: beta, x * sigmoid(coef * x); coef 1 is SiLU */
  TSR_ENUM_RANGE(TSR_ACTIVATION_MODE)
} tsrActivationMode_t;

typedef enum {
  TSR_CROSS_CORRELATION = 0,
  TSR_CONVOLUTION = 1,
  TSR_ENUM_RANGE(TSR_CONVOLUTION_MODE)
} tsrConvolutionMode_t;

/* Whether NaN inputs propagate (pooling, op-tensor min/max, reductions), as cuDNN's. */
#ifndef TSR_NAN_PROPAGATION_DEFINED
#define TSR_NAN_PROPAGATION_DEFINED
typedef enum {
  TSR_NOT_PROPAGATE_NAN = 0,
  TSR_PROPAGATE_NAN = 1,
  TSR_ENUM_RANGE(TSR_NAN_PROPAGATION)
} tsrNanPropagation_t;
#endif

typedef enum {
  TSR_MATH_DEFAULT = 0,   /* exact arithmetic of the compute type */
  TSR_MATH_TENSOR_OP = 1, /* tensor cores allowed for fp16/bf16 */
  TSR_MATH_ALLOW_TF32 = 2, /* tensor cores allowed, and tf32 for fp32 inputs */
  TSR_ENUM_RANGE(TSR_MATH_MODE)
} tsrMathMode_t;

#define TSR_MAX_DIMS 8
#define TSR_MAX_SPATIAL_DIMS 3

/* ---------------------------------------------------------------------------------------------
 * Handles, streams and device memory
 * ------------------------------------------------------------------------------------------- */
typedef struct tsrContext* tsrHandle_t;

/* Number of devices of `kind` that loaded plugins serve (0 when none; the CPU counts 1). */
TSR_API tsrStatus_t tsrGetDeviceCount(tsrDeviceKind_t kind, int* count);

/* Threads. Every function may be called from any thread.
 *  - Calls without a handle (descriptors, tsrGetPluginCount/Info, tsrGetKernelCount/Info,
 *    tsrGetAlgoByName, tsrGetDeviceCount, tsrLoadPlugin, versions) may run at the same time as
 *    anything else. tsrLoadPlugin does not stop other calls while the plugin's code runs; it
 *    waits at most TESSERA_PLUGIN_LOAD_TIMEOUT_MS (default 30000) for a plugin to load.
 *  - A descriptor may be passed to any number of concurrent calls; setting or destroying it while
 *    another thread uses it is an error.
 *  - A handle may be shared by threads: every call that takes a handle may be made on one handle
 *    from several threads at once. The handle serializes them (one runs at a time, each sees the
 *    settings of the calls that returned before it started), so give each thread its own handle
 *    when the calls should run in parallel. The exception is tsrDestroy: no other call may be
 *    running or start on the handle.
 *  - tsrGetLastErrorString reports the calling thread's last call only.
 *  - Buffers are the caller's: concurrent calls must not write memory that another call reads or
 *    writes, and a workspace passed explicitly serves one call at a time. (The handle's own
 *    workspace pool is safe: calls on one handle are serialized.)
 */

/* Creates a handle bound to device `ordinal` of `kind`, on the device's default stream.
 * Errors: BAD_PARAM_NULL_POINTER (handle), BAD_PARAM_OUT_OF_RANGE (kind, or an ordinal not
 * present: the message gives the count), NOT_SUPPORTED_NO_DEVICE (no plugin serves the kind). */
TSR_API tsrStatus_t tsrCreate(tsrDeviceKind_t kind, int ordinal, tsrHandle_t* handle);

/* Destroys a handle; NULL is accepted and does nothing. */
TSR_API tsrStatus_t tsrDestroy(tsrHandle_t handle);

/* Binds the handle to a stream (a cudaStream_t for CUDA handles; must be NULL for the CPU). */
TSR_API tsrStatus_t tsrSetStream(tsrHandle_t handle, void* stream);
TSR_API tsrStatus_t tsrGetStream(tsrHandle_t handle, void** stream);

/* Backend preference for calls without an explicit algorithm: a comma-separated list of backend
 * names, tried in order, then all other backends in load order. NULL or "" resets.
 * Errors: BAD_PARAM_OUT_OF_RANGE when a name is not a loaded backend. */
TSR_API tsrStatus_t tsrSetBackendPreference(tsrHandle_t handle, const char* backends);

/* 1: calls without an explicit algorithm choose among the preference list's backends only (the
 * heuristic, the tuning database and tuning alike); a problem none of them can run fails with
 * NOT_SUPPORTED_NO_KERNEL naming each kernel's reason, and no other backend is tried. This is how
 * to pin a call to one backend and still let that backend pick its kernel (side-by-side
 * comparisons, a vendor library's own choice). An empty list then leaves nothing to choose from.
 * Explicit algorithms are honoured whatever their backend. 0 (default): the other backends
 * follow the list. Errors: BAD_PARAM_OUT_OF_RANGE (exclusive not 0 or 1). */
TSR_API tsrStatus_t tsrSetBackendsExclusive(tsrHandle_t handle, int exclusive);

/* The kernel the handle's last operation call ran, as "backend/kernel" (what tsrGetAlgoByName
 * takes), followed by " (host fallback)" when it ran through the host fallback; "" before any call
 * ran a kernel. Calls with TSR_ALGO_AUTO leave no other trace of their choice. NUL-terminated;
 * Errors: BAD_PARAM_NULL_POINTER, BAD_PARAM_OUT_OF_RANGE when size is too small (the message says
 * how many bytes it needs; name is then left as it was). */
TSR_API tsrStatus_t tsrGetLastKernelName(tsrHandle_t handle, char* name, size_t size);

/* Math mode for convolution kernels chosen on this handle (default TSR_MATH_DEFAULT). */
TSR_API tsrStatus_t tsrSetMathMode(tsrHandle_t handle, tsrMathMode_t mode);

/* Calls given no workspace (NULL and 0) take scratch memory from a pool the handle owns, grown
 * on demand up to this limit (default 1 GiB) and freed with the handle. A larger request makes
 * the call fail with BAD_PARAM_WORKSPACE_TOO_SMALL. Lowering the limit frees a larger pool. */
TSR_API tsrStatus_t tsrSetWorkspaceLimit(tsrHandle_t handle, size_t bytes);

/* ---------------------------------------------------------------------------------------------
 * Selection policy, tuning, fallback and cross-check (each also settable from the environment
 * for every new handle: TESSERA_TUNING, TESSERA_FALLBACK, TESSERA_CROSSCHECK, TESSERA_DETERMINISTIC)
 * ------------------------------------------------------------------------------------------- */
typedef enum {
  TSR_TUNING_HEURISTIC = 0,        /* kernels' own cost estimates only; nothing is measured */
  TSR_TUNING_DATABASE = 1,         /* the tuning database, else the heuristic (the default) */
  TSR_TUNING_DATABASE_OR_TUNE = 2, /* the database, else measure the candidates once, store the
                                      winner and use it */
  TSR_TUNING_ALWAYS = 3,           /* measure each problem once per handle, store the winner */
  TSR_ENUM_RANGE(TSR_TUNING_MODE)
} tsrTuningMode_t;

/* How kernels are chosen for calls with TSR_ALGO_AUTO. TESSERA_TUNING=heuristic|database|tune|
 * always sets the default of new handles. Tuning measures every runnable kernel of every backend
 * serving the handle's device (the backend preference orders only the heuristic), on scratch
 * outputs it allocates: calls that tune allocate and synchronize, so capture CUDA graphs only
 * after the problems were tuned (or with HEURISTIC / DATABASE). The database is SQLite at
 * TESSERA_TUNING_DB (default ~/.cache/tessera/tuning.db; "off" disables it), keyed by device
 * fingerprint, plugin name and version, operation and problem; entries of another plugin version
 * are never used. TESSERA_TUNING_MAX_CANDIDATES (default 32) and TESSERA_TUNING_MAX_MS (default
 * 5000, the whole measurement of one problem) cap the cost of a tune.
 * Errors: BAD_PARAM_OUT_OF_RANGE (mode). */
TSR_API tsrStatus_t tsrSetTuningMode(tsrHandle_t handle, tsrTuningMode_t mode);
TSR_API tsrStatus_t tsrGetTuningMode(tsrHandle_t handle, tsrTuningMode_t* mode);

/* 1: only kernels flagged deterministic are chosen (also explicit algorithms are refused with
 * that reason); 0 (default): any. TESSERA_DETERMINISTIC=1 sets the default. */
TSR_API tsrStatus_t tsrSetDeterministic(tsrHandle_t handle, int deterministic_only);

/* 1: when no kernel of the handle's device can run a problem, the call runs on a backend of the
 * host CPU (oneDNN), its tensors staged through host memory with the device interface's copies,
 * and a warning naming every declining kernel's reason is logged once per problem; 0 (default):
 * such a call fails with NOT_SUPPORTED_NO_KERNEL and those reasons. TESSERA_FALLBACK=1 sets the
 * default. A fallback call synchronizes the handle's stream. */
TSR_API tsrStatus_t tsrSetFallback(tsrHandle_t handle, int allowed);

/* 1: before each call, every tensor pointer is checked to be memory of the handle's device (the
 * device plugin's pointer_device: cudaPointerGetAttributes for CUDA); a pointer of another device
 * or of host memory fails the call with BAD_PARAM naming the argument and where its memory is.
 * 0 (default): no check; a wrong pointer is then the kernel's undefined behaviour. The check costs
 * one driver query per tensor per call (see docs/CUDA_BACKEND_NOTES.md), which is why it is off
 * by default. TESSERA_CHECK_POINTERS=1 sets the default of new handles. */
TSR_API tsrStatus_t tsrSetPointerChecks(tsrHandle_t handle, int enabled);

/* 1: the caller promises that the filter contents at a pointer passed to convolution forward
 * calls on this handle do not change from call to call, as in inference; backends may then keep
 * the filter in their preferred layout between calls instead of converting it every call (the
 * oneDNN backend reorders OHWI/OIHW filters into its blocked layout once per pointer and problem,
 * up to 1 GiB per handle). Each call with 1 starts a new promise: to change the filters' contents,
 * call tsrSetConstantWeights(handle, 1) again after writing them (or pass another pointer).
 * 0 (default): every call reads its filter afresh. */
TSR_API tsrStatus_t tsrSetConstantWeights(tsrHandle_t handle, int constant);

typedef enum {
  TSR_CROSSCHECK_OFF = 0,
  TSR_CROSSCHECK_ON = 1,   /* compare, log each mismatch with its replay command, count */
  TSR_CROSSCHECK_ABORT = 2, /* as ON, and abort() the process at the first mismatch */
  TSR_ENUM_RANGE(TSR_CROSS_CHECK_MODE)
} tsrCrossCheckMode_t;

/* Cross-check: every successful call also runs on the reference backend (the host CPU's oneDNN
 * plugin) on copies of its inputs, and the outputs are compared with per-data-type tolerances;
 * the caller's outputs are the primary kernel's. Calls whose kernel is itself the reference, or
 * that the reference cannot run, are counted as skipped. Synchronizes the stream and copies every
 * tensor: a debugging mode. TESSERA_CROSSCHECK=1|abort sets the default. */
TSR_API tsrStatus_t tsrSetCrossCheck(tsrHandle_t handle, tsrCrossCheckMode_t mode);

typedef struct {
  size_t struct_size; /* set by the caller: sizeof(tsrCrossCheckCounts_t) */
  uint64_t checked;   /* calls compared */
  uint64_t mismatched;/* of those, calls with an output out of tolerance */
  uint64_t skipped;   /* calls the reference could not check */
} tsrCrossCheckCounts_t;

/* The handle's cross-check counts since it was created. */
TSR_API tsrStatus_t tsrGetCrossCheckCounts(tsrHandle_t handle, tsrCrossCheckCounts_t* counts);

/* Device memory of the handle's device, through the device plugin's interface. On the CPU this
 * is host memory. Copies are ordered on the handle's stream and complete before they return. */
TSR_API tsrStatus_t tsrMalloc(tsrHandle_t handle, size_t bytes, void** pointer);
TSR_API tsrStatus_t tsrFree(tsrHandle_t handle, void* pointer);
TSR_API tsrStatus_t tsrMemcpyHostToDevice(tsrHandle_t handle, void* dst, const void* src, size_t bytes);
TSR_API tsrStatus_t tsrMemcpyDeviceToHost(tsrHandle_t handle, void* dst, const void* src, size_t bytes);
TSR_API tsrStatus_t tsrSynchronize(tsrHandle_t handle);

/* Timing events on the handle's stream (CUDA events for CUDA handles, the host clock for the
 * CPU): record one before and one after the calls to time, then read the time between them.
 * Device work is asynchronous, so a host clock around a call measures the launch, not the work;
 * events measure the device. An event belongs to the handle it was created with and must be
 * destroyed before that handle.
 * Errors: BAD_PARAM_NULL_POINTER (handle, event, start, end, milliseconds), BAD_PARAM when start
 * and end belong to different handles, EXECUTION_FAILED_DEVICE when the device refuses. */
typedef struct tsrEventStruct* tsrEvent_t;
TSR_API tsrStatus_t tsrCreateEvent(tsrHandle_t handle, tsrEvent_t* event);
/* NULL is accepted and does nothing. */
TSR_API tsrStatus_t tsrDestroyEvent(tsrEvent_t event);
/* Records the event after the work queued so far on its handle's stream. */
TSR_API tsrStatus_t tsrRecordEvent(tsrEvent_t event);
/* Milliseconds between two recorded events of one handle; waits until `end` has completed. */
TSR_API tsrStatus_t tsrGetEventElapsedTime(tsrEvent_t start, tsrEvent_t end, float* milliseconds);

/* ---------------------------------------------------------------------------------------------
 * Tensor descriptors: 1 to TSR_MAX_DIMS dims with strides in elements.
 * ------------------------------------------------------------------------------------------- */
typedef struct tsrTensorStruct* tsrTensorDescriptor_t;

TSR_API tsrStatus_t tsrCreateTensorDescriptor(tsrTensorDescriptor_t* desc);
TSR_API tsrStatus_t tsrDestroyTensorDescriptor(tsrTensorDescriptor_t desc);

/* Sets dims and strides. Errors: BAD_PARAM_OUT_OF_RANGE (nb_dims, a dim < 1, a stride < 0, dtype),
 * BAD_PARAM_SIZE_OVERFLOW (the extent in bytes overflows), BAD_PARAM_NULL_POINTER. */
TSR_API tsrStatus_t tsrSetTensorNdDescriptor(tsrTensorDescriptor_t desc, tsrDataType_t dtype,
                                             int nb_dims, const int64_t dims[],
                                             const int64_t strides[]);

/* Sets dims with packed strides of `format` (dims are given in N, C, spatial order). */
TSR_API tsrStatus_t tsrSetTensorNdDescriptorEx(tsrTensorDescriptor_t desc, tsrTensorFormat_t format,
                                               tsrDataType_t dtype, int nb_dims,
                                               const int64_t dims[]);

/* Reads a descriptor back; dims and strides receive min(nb_dims, max_dims) values. */
TSR_API tsrStatus_t tsrGetTensorNdDescriptor(tsrTensorDescriptor_t desc, int max_dims,
                                             tsrDataType_t* dtype, int* nb_dims, int64_t dims[],
                                             int64_t strides[]);

/* Bytes spanned by the tensor (the furthest element plus one, times the element size). */
TSR_API tsrStatus_t tsrGetTensorSizeInBytes(tsrTensorDescriptor_t desc, size_t* bytes);

/* ---------------------------------------------------------------------------------------------
 * Algorithms: a kernel of a loaded plugin, chosen per call.
 * ------------------------------------------------------------------------------------------- */
/* An algorithm id is valid for the life of the process; TSR_ALGO_AUTO lets the handle choose. */
typedef int64_t tsrAlgo_t;
#define TSR_ALGO_AUTO ((tsrAlgo_t)-1)

typedef struct {
  size_t struct_size;      /* set by the caller: sizeof(tsrAlgoPerf_t) */
  tsrAlgo_t algo;
  tsrStatus_t status;      /* SUCCESS when the kernel can run the problem */
  float time_ms;           /* measured by find; -1 from get */
  size_t workspace_size;
  int deterministic;
  char kernel_name[64];
  char backend_name[32];
  char reason[192];        /* why the kernel declined, or its numerical notes */
} tsrAlgoPerf_t;

/* Looks up an algorithm by "backend/kernel" name, e.g. "onednn/conv_fwd".
 * Errors: BAD_PARAM_OUT_OF_RANGE when no loaded kernel of that operation has the name. */
TSR_API tsrStatus_t tsrGetAlgoByName(tsrOperation_t op, const char* name, tsrAlgo_t* algo);

/* ---------------------------------------------------------------------------------------------
 * Activation
 * ------------------------------------------------------------------------------------------- */
typedef struct tsrActivationStruct* tsrActivationDescriptor_t;

TSR_API tsrStatus_t tsrCreateActivationDescriptor(tsrActivationDescriptor_t* desc);
TSR_API tsrStatus_t tsrDestroyActivationDescriptor(tsrActivationDescriptor_t desc);
/* Errors: BAD_PARAM_OUT_OF_RANGE for an unknown mode or a NaN coef. */
TSR_API tsrStatus_t tsrSetActivationDescriptor(tsrActivationDescriptor_t desc,
                                               tsrActivationMode_t mode, double coef);
TSR_API tsrStatus_t tsrGetActivationDescriptor(tsrActivationDescriptor_t desc,
                                               tsrActivationMode_t* mode, double* coef);

/* y = alpha * act(x) + beta * y (y is not read when beta is 0). x and y have the same dims and
 * dtype, any strides; y may alias x when their strides are equal.
 * Errors: BAD_PARAM_* (each naming the argument), NOT_SUPPORTED_NO_KERNEL with every kernel's
 * reason, EXECUTION_FAILED_*. */
TSR_API tsrStatus_t tsrActivationForward(tsrHandle_t handle, tsrActivationDescriptor_t act,
                                         tsrAlgo_t algo, float alpha,
                                         tsrTensorDescriptor_t x_desc, const void* x, float beta,
                                         tsrTensorDescriptor_t y_desc, void* y);

/* dx = alpha * act'(x) * dy + beta * dx. All four tensors have the same dims and dtype. */
TSR_API tsrStatus_t tsrActivationBackward(tsrHandle_t handle, tsrActivationDescriptor_t act,
                                          tsrAlgo_t algo, float alpha,
                                          tsrTensorDescriptor_t y_desc, const void* y,
                                          tsrTensorDescriptor_t dy_desc, const void* dy,
                                          tsrTensorDescriptor_t x_desc, const void* x, float beta,
                                          tsrTensorDescriptor_t dx_desc, void* dx);

/* ---------------------------------------------------------------------------------------------
 * Convolution
 * ------------------------------------------------------------------------------------------- */
typedef struct tsrConvolutionStruct* tsrConvolutionDescriptor_t;

TSR_API tsrStatus_t tsrCreateConvolutionDescriptor(tsrConvolutionDescriptor_t* desc);
TSR_API tsrStatus_t tsrDestroyConvolutionDescriptor(tsrConvolutionDescriptor_t desc);

/* spatial_dims is 1, 2 or 3; pads may differ before and after; dilation 1 means none.
 * compute_type is the accumulation type (TSR_DATA_FLOAT for float inputs and half/bf16).
 * Errors: BAD_PARAM_OUT_OF_RANGE (spatial_dims, a negative pad, a stride or dilation < 1). */
TSR_API tsrStatus_t tsrSetConvolutionNdDescriptor(tsrConvolutionDescriptor_t desc, int spatial_dims,
                                                  const int64_t pad_before[],
                                                  const int64_t pad_after[],
                                                  const int64_t stride[], const int64_t dilation[],
                                                  tsrConvolutionMode_t mode,
                                                  tsrDataType_t compute_type);
/* Groups (default 1; groups == channels is depthwise). Errors: BAD_PARAM_OUT_OF_RANGE. */
TSR_API tsrStatus_t tsrSetConvolutionGroupCount(tsrConvolutionDescriptor_t desc, int64_t groups);

/* Output dims (N, K, spatial...) of a forward convolution of x with w. nb_dims must be x's.
 * Errors: BAD_PARAM_SHAPE_MISMATCH (x and w disagree, or the output would be empty). */
TSR_API tsrStatus_t tsrGetConvolutionForwardOutputDim(tsrConvolutionDescriptor_t conv,
                                                      tsrTensorDescriptor_t x_desc,
                                                      tsrTensorDescriptor_t w_desc, int nb_dims,
                                                      int64_t out_dims[]);

/* Candidates in preference order, the ones that can run first, each with its status, workspace
 * and determinism (time_ms is -1). returned_count receives how many were written. */
TSR_API tsrStatus_t tsrGetConvolutionForwardAlgorithm(tsrHandle_t handle,
                                                      tsrTensorDescriptor_t x_desc,
                                                      tsrTensorDescriptor_t w_desc,
                                                      tsrConvolutionDescriptor_t conv,
                                                      tsrTensorDescriptor_t y_desc,
                                                      int requested_count, int* returned_count,
                                                      tsrAlgoPerf_t perf[]);

/* Runs every candidate that can run, on scratch output (y is never written), and returns them
 * sorted by median time; declined kernels follow with their reasons. The workspace given is
 * used for kernels that fit in it; kernels needing more are reported with status
 * BAD_PARAM_WORKSPACE_TOO_SMALL. The scratch y has y_desc's span. Errors: BAD_PARAM_* naming the
 * argument; BAD_PARAM_OUT_OF_RANGE when y_desc spans more bytes than the device has memory (no
 * such scratch can exist; checked where the device's plugin tells its size);
 * EXECUTION_FAILED_OUT_OF_MEMORY when the scratch y cannot be allocated now. */
TSR_API tsrStatus_t tsrFindConvolutionForwardAlgorithm(
    tsrHandle_t handle, tsrTensorDescriptor_t x_desc, const void* x, tsrTensorDescriptor_t w_desc,
    const void* w, tsrConvolutionDescriptor_t conv, tsrTensorDescriptor_t y_desc, const void* y,
    int requested_count, int* returned_count, tsrAlgoPerf_t perf[], void* workspace,
    size_t workspace_size);

/* Workspace the algorithm (TSR_ALGO_AUTO: the one the handle would choose) needs. */
TSR_API tsrStatus_t tsrGetConvolutionForwardWorkspaceSize(tsrHandle_t handle,
                                                          tsrTensorDescriptor_t x_desc,
                                                          tsrTensorDescriptor_t w_desc,
                                                          tsrConvolutionDescriptor_t conv,
                                                          tsrTensorDescriptor_t y_desc,
                                                          tsrAlgo_t algo, size_t* bytes);

/* y = alpha * conv(x, w) + beta * y. x is N,C,spatial; w is K,C/groups,spatial; y is N,K,spatial
 * as tsrGetConvolutionForwardOutputDim gives; all of one dtype.
 * Errors: BAD_PARAM_* naming the argument, BAD_PARAM_WORKSPACE_TOO_SMALL, NOT_SUPPORTED_NO_KERNEL
 * with every kernel's reason, EXECUTION_FAILED_*. */
TSR_API tsrStatus_t tsrConvolutionForward(tsrHandle_t handle, float alpha,
                                          tsrTensorDescriptor_t x_desc, const void* x,
                                          tsrTensorDescriptor_t w_desc, const void* w,
                                          tsrConvolutionDescriptor_t conv, tsrAlgo_t algo,
                                          void* workspace, size_t workspace_size, float beta,
                                          tsrTensorDescriptor_t y_desc, void* y);

/* ---------------------------------------------------------------------------------------------
 * Plugins and kernels
 * ------------------------------------------------------------------------------------------- */
typedef struct {
  size_t struct_size;      /* set by the caller: sizeof(tsrPluginInfo_t) */
  char name[64];
  char version[64];
  uint32_t abi_version;    /* the version it answered (0 when it never answered) */
  int loaded;              /* 1 when its kernels are in use */
  tsrDeviceKind_t device_kind;
  int kernel_count;
  char path[512];
  char reason[256];        /* why it was not loaded */
} tsrPluginInfo_t;

typedef struct {
  size_t struct_size;      /* set by the caller: sizeof(tsrKernelInfo_t) */
  tsrAlgo_t algo;
  tsrOperation_t op;
  tsrDeviceKind_t device_kind;
  int deterministic;
  char kernel_name[64];
  char backend_name[32];
  char notes[192];
} tsrKernelInfo_t;

/* Plugins found so far (loaded or refused), in discovery order. */
TSR_API tsrStatus_t tsrGetPluginCount(int* count);
TSR_API tsrStatus_t tsrGetPluginInfo(int index, tsrPluginInfo_t* info);

/* Loads the plugin at an absolute or relative path now. A refusal returns
 * NOT_SUPPORTED_PLUGIN with the reason, and the plugin is listed as not loaded. */
TSR_API tsrStatus_t tsrLoadPlugin(const char* path);

/* Kernels of loaded plugins for `op`, in registration order. */
TSR_API tsrStatus_t tsrGetKernelCount(tsrOperation_t op, int* count);
TSR_API tsrStatus_t tsrGetKernelInfo(tsrOperation_t op, int index, tsrKernelInfo_t* info);

/* Name of the operation ("convolution_forward"); never NULL. */
TSR_API const char* tsrGetOperationName(tsrOperation_t op);

#ifdef __cplusplus
}
#endif

/* The rest of the operation set, one header per family (cuDNN splits cudnn.h the same way). */
#include "tessera_convolution.h"
#include "tessera_pooling.h"
#include "tessera_normalization.h"
#include "tessera_tensor_ops.h"
#include "tessera_matmul.h"
#include "tessera_rnn.h"

#endif /* TESSERA_TESSERA_H */

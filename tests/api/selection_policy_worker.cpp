// One process of the selection-policy tests: creates a handle on the test device (fakedev) with
// the tuning mode named by argv[1] ("environment": whatever TESSERA_TUNING says), runs one relu
// and exits 0 when it succeeded. The kernels that ran are in FAKEDEV_RUN_LOG.
#include <tessera/tessera.h>

#include <cstdio>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  tsrHandle_t h = nullptr;
  if (tsrCreate(TSR_DEVICE_CUDA, 0, &h) != TSR_STATUS_SUCCESS) return 3;
  const char* mode = argv[1];
  tsrStatus_t s = TSR_STATUS_SUCCESS;
  if (std::strcmp(mode, "heuristic") == 0) s = tsrSetTuningMode(h, TSR_TUNING_HEURISTIC);
  if (std::strcmp(mode, "database") == 0) s = tsrSetTuningMode(h, TSR_TUNING_DATABASE);
  if (std::strcmp(mode, "tune") == 0) s = tsrSetTuningMode(h, TSR_TUNING_DATABASE_OR_TUNE);
  if (std::strcmp(mode, "always") == 0) s = tsrSetTuningMode(h, TSR_TUNING_ALWAYS);
  if (s != TSR_STATUS_SUCCESS) return 4;
  const int64_t dims[4] = {1, 2, 3, 4};
  tsrTensorDescriptor_t d = nullptr;
  tsrCreateTensorDescriptor(&d);
  tsrSetTensorNdDescriptorEx(d, TSR_TENSOR_NCHW, TSR_DATA_FLOAT, 4, dims);
  std::vector<float> x(24, 1.5f);
  void *dx = nullptr, *dy = nullptr;
  tsrMalloc(h, sizeof(float) * 24, &dx);
  tsrMalloc(h, sizeof(float) * 24, &dy);
  tsrMemcpyHostToDevice(h, dx, x.data(), sizeof(float) * 24);
  tsrActivationDescriptor_t act = nullptr;
  tsrCreateActivationDescriptor(&act);
  tsrSetActivationDescriptor(act, TSR_ACTIVATION_RELU, 0.0);
  s = tsrActivationForward(h, act, TSR_ALGO_AUTO, 1.0f, d, dx, 0.0f, d, dy);
  if (s != TSR_STATUS_SUCCESS) {
    char message[512];
    tsrGetLastErrorString(message, sizeof(message));
    std::fprintf(stderr, "%s\n", message);
  }
  tsrDestroyActivationDescriptor(act);
  tsrFree(h, dx);
  tsrFree(h, dy);
  tsrDestroyTensorDescriptor(d);
  tsrDestroy(h);
  return s == TSR_STATUS_SUCCESS ? 0 : 5;
}

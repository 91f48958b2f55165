// The CUDA driver API as the GPU tests use it: libcuda opened at run time (not linked), so that
// the test binaries start, and skip, on machines without a driver, as the CI machine is. One
// table for every test; a test checks complete() before using any entry.
#pragma once

#include <cuda.h>
#include <dlfcn.h>

namespace tessera::testing {

struct cuda_driver_api {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  template <typename F>
  F get(const char* name) const {
    return library ? reinterpret_cast<F>(dlsym(library, name)) : nullptr;
  }
  decltype(&cuInit) init = get<decltype(&cuInit)>("cuInit");
  decltype(&cuGetErrorString) error_string = get<decltype(&cuGetErrorString)>("cuGetErrorString");
  decltype(&cuDeviceGet) device_get = get<decltype(&cuDeviceGet)>("cuDeviceGet");
  decltype(&cuDeviceGetName) device_name = get<decltype(&cuDeviceGetName)>("cuDeviceGetName");
  decltype(&cuDevicePrimaryCtxRetain) retain = get<decltype(&cuDevicePrimaryCtxRetain)>("cuDevicePrimaryCtxRetain");
  decltype(&cuDevicePrimaryCtxRelease) release =
      get<decltype(&cuDevicePrimaryCtxRelease)>("cuDevicePrimaryCtxRelease_v2");
  decltype(&cuCtxSetCurrent) set_current = get<decltype(&cuCtxSetCurrent)>("cuCtxSetCurrent");
  decltype(&cuCtxGetCurrent) get_current = get<decltype(&cuCtxGetCurrent)>("cuCtxGetCurrent");
  decltype(&cuPointerGetAttribute) pointer_attribute =
      get<decltype(&cuPointerGetAttribute)>("cuPointerGetAttribute");
  decltype(&cuStreamCreate) stream_create = get<decltype(&cuStreamCreate)>("cuStreamCreate");
  decltype(&cuStreamDestroy) stream_destroy = get<decltype(&cuStreamDestroy)>("cuStreamDestroy_v2");
  decltype(&cuStreamSynchronize) stream_synchronize = get<decltype(&cuStreamSynchronize)>("cuStreamSynchronize");
  decltype(&cuStreamBeginCapture) begin_capture = get<decltype(&cuStreamBeginCapture)>("cuStreamBeginCapture_v2");
  decltype(&cuStreamEndCapture) end_capture = get<decltype(&cuStreamEndCapture)>("cuStreamEndCapture");
  decltype(&cuGraphGetNodes) graph_nodes = get<decltype(&cuGraphGetNodes)>("cuGraphGetNodes");
  decltype(&cuGraphInstantiate) instantiate = get<decltype(&cuGraphInstantiate)>("cuGraphInstantiateWithFlags");
  decltype(&cuGraphLaunch) launch = get<decltype(&cuGraphLaunch)>("cuGraphLaunch");
  decltype(&cuGraphExecDestroy) exec_destroy = get<decltype(&cuGraphExecDestroy)>("cuGraphExecDestroy");
  decltype(&cuGraphDestroy) graph_destroy = get<decltype(&cuGraphDestroy)>("cuGraphDestroy");
  bool complete() const {
    return init && error_string && device_get && device_name && retain && release && set_current && get_current &&
           pointer_attribute && stream_create && stream_destroy && stream_synchronize && begin_capture &&
           end_capture && graph_nodes && instantiate && launch && exec_destroy && graph_destroy;
  }
};

inline const cuda_driver_api& cuda_driver() {
  static const cuda_driver_api api;
  return api;
}

}  // namespace tessera::testing

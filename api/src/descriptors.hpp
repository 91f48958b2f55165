// What the opaque descriptor handles of tessera.h point to. Each is a plain value; `is_set`
// distinguishes a created descriptor from one that was also given its values.
#pragma once

#include <tessera/plugin_abi.h>
#include <tessera/tessera.h>

struct tsrTensorStruct {
  bool is_set = false;
  tsrpTensor tensor{};
};

struct tsrActivationStruct {
  bool is_set = false;
  tsrActivationMode_t mode = TSR_ACTIVATION_IDENTITY;
  double coef = 0.0;
};

struct tsrConvolutionStruct {
  bool is_set = false;
  int spatial_dims = 0;
  int64_t pad_before[TSR_MAX_SPATIAL_DIMS] = {0, 0, 0};
  int64_t pad_after[TSR_MAX_SPATIAL_DIMS] = {0, 0, 0};
  int64_t stride[TSR_MAX_SPATIAL_DIMS] = {1, 1, 1};
  int64_t dilation[TSR_MAX_SPATIAL_DIMS] = {1, 1, 1};
  tsrConvolutionMode_t mode = TSR_CROSS_CORRELATION;
  tsrDataType_t compute_type = TSR_DATA_FLOAT;
  int64_t groups = 1;
};

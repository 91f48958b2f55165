/* Tessera plugin ABI 2: add/op/scale/set/transform/reduce tensor. Included by plugin_abi.h (a plugin includes only that). */
#ifndef TESSERA_PLUGIN_ABI_TENSOR_OPS_H
#define TESSERA_PLUGIN_ABI_TENSOR_OPS_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGIN_ABI_TENSOR_OPS_H */

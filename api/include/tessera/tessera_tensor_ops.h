/* Tessera C API: add/op/scale/set/transform/reduce tensor. Included by tessera.h; include that. */
#ifndef TESSERA_TESSERA_TENSOR_OPS_H
#define TESSERA_TESSERA_TENSOR_OPS_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TESSERA_TENSOR_OPS_H */

/* Tessera C API: pooling, softmax, LRN. Included by tessera.h; include that. */
#ifndef TESSERA_TESSERA_POOLING_H
#define TESSERA_TESSERA_POOLING_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TESSERA_POOLING_H */

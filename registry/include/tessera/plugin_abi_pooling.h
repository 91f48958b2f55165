/* Tessera plugin ABI 2: pooling, softmax, LRN. Included by plugin_abi.h (a plugin includes only that). */
#ifndef TESSERA_PLUGIN_ABI_POOLING_H
#define TESSERA_PLUGIN_ABI_POOLING_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGIN_ABI_POOLING_H */

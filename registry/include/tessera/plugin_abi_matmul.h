/* Tessera plugin ABI 2: matmul. Included by plugin_abi.h (a plugin includes only that). */
#ifndef TESSERA_PLUGIN_ABI_MATMUL_H
#define TESSERA_PLUGIN_ABI_MATMUL_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGIN_ABI_MATMUL_H */

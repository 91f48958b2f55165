/* Tessera plugin ABI 2: convolution backward data/filter/bias, fused bias+activation, int8 forward. Included by plugin_abi.h (a plugin includes only that). */
#ifndef TESSERA_PLUGIN_ABI_CONVOLUTION_H
#define TESSERA_PLUGIN_ABI_CONVOLUTION_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGIN_ABI_CONVOLUTION_H */

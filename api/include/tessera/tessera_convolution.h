/* Tessera C API: convolution backward data/filter/bias, fused bias+activation, int8 forward. Included by tessera.h; include that. */
#ifndef TESSERA_TESSERA_CONVOLUTION_H
#define TESSERA_TESSERA_CONVOLUTION_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TESSERA_CONVOLUTION_H */

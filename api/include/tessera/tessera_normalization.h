/* Tessera C API: batch, layer and RMS normalization. Included by tessera.h; include that. */
#ifndef TESSERA_TESSERA_NORMALIZATION_H
#define TESSERA_TESSERA_NORMALIZATION_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TESSERA_NORMALIZATION_H */

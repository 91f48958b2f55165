/* Tessera C API: matmul. Included by tessera.h; include that. */
#ifndef TESSERA_TESSERA_MATMUL_H
#define TESSERA_TESSERA_MATMUL_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TESSERA_MATMUL_H */

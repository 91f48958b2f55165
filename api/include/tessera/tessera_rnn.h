/* Tessera C API: RNN, LSTM, GRU. Included by tessera.h; include that. */
#ifndef TESSERA_TESSERA_RNN_H
#define TESSERA_TESSERA_RNN_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_TESSERA_RNN_H */

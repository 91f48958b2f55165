/* Tessera plugin ABI 2: RNN, LSTM, GRU. Included by plugin_abi.h (a plugin includes only that). */
#ifndef TESSERA_PLUGIN_ABI_RNN_H
#define TESSERA_PLUGIN_ABI_RNN_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_PLUGIN_ABI_RNN_H */

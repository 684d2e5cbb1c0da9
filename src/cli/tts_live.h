/*
 * tts_live.h - a real TTS in the loop, for `run` (and `bench`): the
 * options (--tts-url, --tts-api, --tts-model, --tts-voice,
 * --tts-api-key-file, --tts-sample-rate, --tts-timeout,
 * --tts-idle-timeout), the key read from the dialect's variable or the
 * file, and the client's options made from them.  Option handlers answer
 * as cli.h says.
 */
#ifndef TTSBUF_CLI_TTS_LIVE_H
#define TTSBUF_CLI_TTS_LIVE_H

#include "optdoc.h"

enum {
    TB_O_TTS_URL = 540,
    TB_O_TTS_API,
    TB_O_TTS_MODEL,
    TB_O_TTS_VOICE,
    TB_O_TTS_KEYFILE,
    TB_O_TTS_SRATE,
    TB_O_TTS_TIMEOUT,
    TB_O_TTS_IDLE,
};

#define TB_CLI_TTS_LIVE_ROWS_N 8
extern const struct tb_optdoc tb_opt_tts_live[TB_CLI_TTS_LIVE_ROWS_N + 1];

struct tb_cli_tts_live {
    const char *url; /* --tts-url, or NULL: no live TTS ("mock": the
                      * built-in mock's TTS) */
    int api;         /* --tts-api (enum tb_ttsapi; default openai); for a
                      * WebSocket dialect, the HTTP one it shares its key,
                      * defaults and rates with */
    int ws;          /* 0: HTTP; 1 + enum tb_ttsws_api (--tts-api
                      * elevenlabs-ws, cartesia-ws) */
    const char *model, *voice, *key_file;
    unsigned rate;        /* --tts-sample-rate (0: the dialect's default) */
    double timeout, idle; /* per chunk, seconds */
    char *key;            /* read by tb_cli_tts_live_key (zeroed when freed) */
};

void tb_cli_tts_live_init(struct tb_cli_tts_live *t);
void tb_cli_tts_live_free(struct tb_cli_tts_live *t);
int tb_cli_tts_live_option(struct tb_cli_tts_live *t, int c, const char *arg);

/* After the options: the TTS-only options without --tts-url are a usage
 * error; a rate the dialect does not take too; the key read (the file, or
 * the dialect's variable; none for the built-in mock).  0, or an error
 * printed (TB_EINVAL, TB_ETOOBIG, TB_ENOMEM). */
int tb_cli_tts_live_resolve(struct tb_cli_tts_live *t, const char *cmd);

struct tb_cli_tts;
/* With --tts-url the TTS is measured, not modelled: an option that sets a
 * TTS model (--tts, --tts-latency, --tts-rtf, --tts-connect, --tts-seed,
 * --tts-draws) is a usage error naming it (TB_EINVAL, printed); else 0. */
int tb_cli_tts_live_no_model(const struct tb_cli_tts *t, const char *cmd);

struct tb_ttsnet_opts;
/* The TTS client's options (*o, initialised first) from t and m's
 * --tts-concurrency (default 1), for run and bench alike: mock_base is
 * the built-in mock's root, used for --tts-url mock; connect and insecure
 * are the LLM request's --connect-timeout and --insecure.  The caller
 * adds its callbacks, cancel flag and log.  t's strings are borrowed. */
void tb_cli_tts_live_net_opts(const struct tb_cli_tts_live *t, const struct tb_cli_tts *m,
                              const char *mock_base, double connect, int insecure,
                              struct tb_ttsnet_opts *o);

#endif

/*
 * tts_live.c - the options of a real TTS in the loop (see tts_live.h).
 */
#include "tts_live.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "request.h"
#include "tts_opts.h"
#include "ttsbuf/error.h"
#include "ttsbuf/ttsapi.h"
#include "ttsbuf/ttsnet.h"
#include "ttsbuf/ttsws.h"

#define TTS_TIMEOUT_DEFAULT 60.0
#define TTS_IDLE_DEFAULT 15.0

_Static_assert((int)TTS_TIMEOUT_DEFAULT == 60, "--tts-timeout's help states the default");
_Static_assert((int)TTS_IDLE_DEFAULT == 15, "--tts-idle-timeout's help states the default");
_Static_assert(TB_TTSAPI_RATE == 24000, "--tts-sample-rate's help states the default");

const struct tb_optdoc tb_opt_tts_live[TB_CLI_TTS_LIVE_ROWS_N + 1] = {
    {"tts-url", TB_O_TTS_URL, "URL",
     "a real TTS in the loop: each chunk is sent, as it closes, to the provider at URL (its root, "
     "with or without /v1, or the whole endpoint: https://api.openai.com/v1/audio/speech; mock: "
     "the built-in mock's TTS, with --mock), and the gaps, their causes and the first audio come "
     "from what it did",
     "The dialect's path is appended to URL less the part URL already ends in, so no part of it "
     "comes twice; a path of your own before it (a proxy's) is kept, a last /v1 is dropped where "
     "the dialect has none (cartesia), and an ElevenLabs endpoint's voice id is the voice sent "
     "(another --tts-voice is refused). -v says the URL posted to, and the trace's header and "
     "the report name it. Chunks go in order, at most --tts-concurrency at once (default 1): chunk j is sent once it "
     "is closed, chunk j-1 was sent and chunk j-N has ended (the TTS stage's rule). Each chunk's first-byte latency, audio bytes over time "
     "and duration (from the PCM) are measured; the report's numbers are the TTS stage fed with "
     "them (L_j, R_j, D_j, ttsbuf-model(7)), exactly what `ttsbuf sim --trace` gives on the "
     "recording. A chunk that fails (an HTTP status, a cut body, a timeout) ends the speech "
     "there with the kind and the provider's message; everything measured is kept. A dead TTS, "
     "one that refuses the connection or fails before any chunk had audio, also stops the LLM "
     "stream at once (bench: that stream's): exit 3, one line naming the chunk, the kind, the "
     "provider's message and the TTS with its URL, and the report says how far each side got."},
    {"tts-api", TB_O_TTS_API, "API",
     "the TTS dialect: openai (POST /v1/audio/speech, default), elevenlabs (POST "
     "/v1/text-to-speech/VOICE/stream), deepgram (POST /v1/speak) or cartesia (POST /tts/bytes); "
     "raw 16-bit PCM in each; elevenlabs-ws or cartesia-ws: the same providers' WebSocket input "
     "streaming",
     "elevenlabs-ws opens wss://.../v1/text-to-speech/VOICE/stream-input and sends each chunk "
     "as a text message with flush: true; cartesia-ws opens wss://.../tts/websocket and sends "
     "each chunk on one context with continue: true, then a flush. One connection per stream, "
     "opened as the run (bench: the stream) starts, every connection of a thread served by one "
     "libwebsockets context on that thread's event loop (bench: its loop threads; no thread per "
     "connection); sent is when the chunk's message was written, and its audio is "
     "told apart by the protocol's own markers (ElevenLabs' alignment characters, Cartesia's "
     "flush_id). The key, and the dialect's other options, are the HTTP dialect's. The built-in "
     "mock does not speak them (LIMITS)."},
    {"tts-model", TB_O_TTS_MODEL, "NAME", "the TTS model (default: the dialect's, ttsbuf(1))",
     NULL},
    {"tts-voice", TB_O_TTS_VOICE, "NAME",
     "the voice, or the voice id (elevenlabs, cartesia; default: the dialect's)", NULL},
    {"tts-api-key-file", TB_O_TTS_KEYFILE, "F",
     "read the TTS key from F (else $OPENAI_API_KEY, $ELEVENLABS_API_KEY, $DEEPGRAM_API_KEY or "
     "$CARTESIA_API_KEY by --tts-api); sent only in the provider's key header, never printed or "
     "written",
     "The key is the file's first line. It goes as Authorization: Bearer (openai), xi-api-key "
     "(elevenlabs), Authorization: Token (deepgram) or X-API-Key with Cartesia-Version "
     "(cartesia). A provider that quotes it back sees it masked in every output. Without a key "
     "(the variable unset or empty, no file) requests go without the header and nothing warns: "
     "a local server may need none, and a provider's refusal (HTTP 401, or the WebSocket "
     "upgrade refused) is the chunk's error."},
    {"tts-sample-rate", TB_O_TTS_SRATE, "HZ",
     "the PCM rate asked of the TTS (default 24000; openai: 24000 only)", NULL},
    {"tts-timeout", TB_O_TTS_TIMEOUT, "S",
     "give up on a chunk S seconds after it was sent (default 60; 0: never)", NULL},
    {"tts-idle-timeout", TB_O_TTS_IDLE, "S",
     "give up on a chunk after S seconds without an audio byte, the wait for the first included "
     "(default 15; 0: never)",
     NULL},
    TB_OPTDOC_END,
};

void tb_cli_tts_live_init(struct tb_cli_tts_live *t)
{
    memset(t, 0, sizeof(*t));
    t->api = TB_TTSAPI_OPENAI;
    t->timeout = TTS_TIMEOUT_DEFAULT;
    t->idle = TTS_IDLE_DEFAULT;
}

void tb_cli_tts_live_free(struct tb_cli_tts_live *t)
{
    tb_cli_key_free(t->key);
    t->key = NULL;
}

int tb_cli_tts_live_option(struct tb_cli_tts_live *t, int c, const char *arg)
{
    size_t z;
    int rc;
    switch (c) {
    case TB_O_TTS_URL: t->url = arg; return 0;
    case TB_O_TTS_MODEL: t->model = arg; return 0;
    case TB_O_TTS_VOICE: t->voice = arg; return 0;
    case TB_O_TTS_KEYFILE: t->key_file = arg; return 0;
    case TB_O_TTS_API:
        t->api = tb_ttsapi_parse(arg);
        t->ws = 0;
        if (t->api < 0 && tb_ttsws_parse(arg) >= 0) {
            t->ws = 1 + tb_ttsws_parse(arg);
            t->api = tb_ttsws_base_api(t->ws - 1);
        }
        if (t->api < 0) {
            tb_cli_error("--tts-api: '%s' is not openai, elevenlabs, deepgram, cartesia, "
                         "elevenlabs-ws or cartesia-ws",
                         arg);
            return TB_EINVAL;
        }
        return 0;
    case TB_O_TTS_SRATE:
        rc = tb_cli_opt_size("--tts-sample-rate", arg, 8000, 48000, &z);
        if (rc == 0)
            t->rate = (unsigned)z;
        return rc;
    case TB_O_TTS_TIMEOUT: return tb_cli_opt_double("--tts-timeout", arg, 0, 86400, &t->timeout);
    case TB_O_TTS_IDLE: return tb_cli_opt_double("--tts-idle-timeout", arg, 0, 86400, &t->idle);
    default: return TB_CLI_NOT_MINE;
    }
}

int tb_cli_tts_live_resolve(struct tb_cli_tts_live *t, const char *cmd)
{
    const struct tb_ttsapi_info *info = tb_ttsapi_info(t->api);
    if (t->url == NULL) {
        if (t->model != NULL || t->voice != NULL || t->key_file != NULL || t->rate != 0) {
            tb_cli_error("%s: --tts-model, --tts-voice, --tts-api-key-file and --tts-sample-rate "
                         "go with --tts-url (a real TTS)",
                         cmd);
            return TB_EINVAL;
        }
        return 0;
    }
    if (t->rate != 0 && !tb_ttsapi_rate_ok(t->api, t->rate)) {
        tb_cli_error("--tts-sample-rate: %s does not take %u Hz",
                     t->ws ? tb_ttsws_name(t->ws - 1) : info->name, t->rate);
        return TB_EINVAL;
    }
    if (t->ws && strcmp(t->url, "mock") == 0) {
        tb_cli_error("--tts-url mock: the built-in mock speaks the HTTP dialects only; %s needs "
                     "the provider's URL (wss://...) or a WebSocket server's (ws://HOST:PORT)",
                     tb_ttsws_name(t->ws - 1));
        return TB_EINVAL;
    }
    if (strcmp(t->url, "mock") == 0)
        return 0; /* the built-in mock takes any key, or none */
    return tb_cli_key_load(t->key_file, "--tts-api-key-file", info->key_env, &t->key);
}

int tb_cli_tts_live_no_model(const struct tb_cli_tts *t, const char *cmd)
{
    const char *bad = t->preset != NULL    ? "--tts"
                      : t->latency != NULL ? "--tts-latency"
                      : t->rtf_set         ? "--tts-rtf"
                      : t->connect_set     ? "--tts-connect"
                      : t->output_set      ? "--tts-output"
                      : t->seed_set        ? "--tts-seed"
                      : t->draws.draws > 0 ? "--tts-draws"
                                           : NULL;
    if (bad == NULL && t->conc_set && t->concurrency == 0) {
        tb_cli_error("%s: --tts-concurrency 0 (unlimited) is the model's; a real TTS (--tts-url) "
                     "takes 1..%d chunks at once",
                     cmd, TB_CLI_TTS_CONC_MAX);
        return TB_EINVAL;
    }
    if (bad == NULL)
        return 0;
    tb_cli_error("%s: %s models a TTS; with --tts-url the TTS is measured (ask \"what if\" "
                 "with sim --trace on the recording)",
                 cmd, bad);
    return TB_EINVAL;
}

void tb_cli_tts_live_net_opts(const struct tb_cli_tts_live *t, const struct tb_cli_tts *m,
                              const char *mock_base, double connect, int insecure,
                              struct tb_ttsnet_opts *o)
{
    int mock = strcmp(t->url, "mock") == 0;
    tb_ttsnet_opts_init(o);
    o->api = t->api;
    o->ws = t->ws;
    o->url = mock ? mock_base : t->url;
    o->key = t->key;
    o->model = t->model;
    o->voice = t->voice;
    o->rate = t->rate;
    o->concurrency = m->conc_set ? m->concurrency : 1;
    o->idle_timeout = t->idle;
    o->total_timeout = t->timeout;
    o->connect_timeout = connect;
    o->insecure = insecure;
    o->mock = mock;
}

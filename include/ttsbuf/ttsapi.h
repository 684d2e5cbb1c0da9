/*
 * ttsapi.h - the TTS providers' HTTP dialects: what to send each one for
 * a chunk of text, and how to read what it says when it refuses.
 *
 * One row per provider, each as its documentation describes the request
 * (the fixtures tests/data/ttsapi/DIALECT.json keep the documented
 * request with its source and date; a test compares the request built
 * here with them field by field):
 *
 *   openai      POST {base}/v1/audio/speech
 *               Authorization: Bearer $OPENAI_API_KEY
 *               {"model", "input", "voice", "response_format": "pcm"}
 *               PCM is 24 kHz only (another rate: TB_EINVAL).
 *   elevenlabs  POST {base}/v1/text-to-speech/{voice_id}/stream
 *                    ?output_format=pcm_{rate}
 *               xi-api-key: $ELEVENLABS_API_KEY
 *               {"text", "model_id"}
 *               rates 8000, 16000, 22050, 24000, 44100, 48000.
 *   deepgram    POST {base}/v1/speak?model=M&encoding=linear16
 *                    &sample_rate=R&container=none
 *               Authorization: Token $DEEPGRAM_API_KEY
 *               {"text"}
 *               rates 8000, 16000, 24000, 32000, 48000.
 *   cartesia    POST {base}/tts/bytes
 *               X-API-Key: $CARTESIA_API_KEY, Cartesia-Version: (the row's)
 *               {"model_id", "transcript", "voice": {"mode": "id", "id"},
 *                "output_format": {"container": "raw",
 *                                  "encoding": "pcm_s16le", "sample_rate"}}
 *               rates 8000, 16000, 22050, 24000, 44100, 48000.
 *
 * Every body is mono signed 16-bit little-endian PCM with no header.
 * The defaults (model, voice) are what each row says below; where the
 * provider documents a default, the row's comment says so and where.
 *
 * Pure functions, any thread; nothing here touches the network.
 */
#ifndef TTSBUF_TTSAPI_H
#define TTSBUF_TTSAPI_H

#include <stddef.h>

/* The dialects, by their names everywhere (CLI, trace, JSON). */
enum tb_ttsapi {
    TB_TTSAPI_OPENAI = 0, /* "openai" */
    TB_TTSAPI_ELEVENLABS, /* "elevenlabs" */
    TB_TTSAPI_DEEPGRAM,   /* "deepgram" */
    TB_TTSAPI_CARTESIA,   /* "cartesia" */
    TB_TTSAPI__COUNT
};

/* The sample rate when none is asked for, Hz (OpenAI's only PCM rate). */
#define TB_TTSAPI_RATE 24000u

/* What a dialect is: static data, valid for the program's life. */
struct tb_ttsapi_info {
    const char *name;       /* "openai", ... */
    const char *path;       /* appended to the base URL ("{voice}" stands for
                             * the voice id where the path holds it) */
    const char *key_env;    /* "OPENAI_API_KEY", ... */
    const char *key_header; /* the header the key goes in: "Authorization",
                             * "xi-api-key", "X-API-Key" */
    const char *key_scheme; /* the word before the key in it ("Bearer",
                             * "Token"), or NULL */
    const char *model;      /* the default model */
    const char *voice;      /* the default voice */
    const unsigned *rates;  /* the PCM rates it takes, ascending, 0-ended */
    const char *doc;        /* the request's documentation (URL) */
};

/* The dialect's name; "?" out of range.  Any thread. */
const char *tb_ttsapi_name(int api);

/* The dialect named (exact, lower case), or -1.  Any thread. */
int tb_ttsapi_parse(const char *name);

/* The dialect's row, or NULL out of range.  Any thread. */
const struct tb_ttsapi_info *tb_ttsapi_info(int api);

/* Whether url's scheme is one an HTTP dialect takes (http, https): 0,
 * or TB_EINVAL with the reason in err (a ws:// or wss:// URL pointed at
 * the WebSocket dialects).  A string without "://" is left to
 * tb_ttsapi_base.  Any thread. */
int tb_ttsapi_http_scheme(const char *url, char *err, size_t errlen);

/*
 * tb_ttsapi_base - the provider's base URL from a TTS URL as users write
 * it: the root (https://api.openai.com), the root with "/v1", or the
 * whole endpoint (https://api.openai.com/v1/audio/speech).  path is the
 * dialect's path (the row's, or a WebSocket dialect's, ttsws.h), with
 * "{voice}" for the voice's segment.  The longest tail of url's path, in
 * whole segments, that is a leading part of path is cut off ("{voice}"
 * matches any one segment), so that base + path never holds a part
 * twice; a path of the user's own before it (a proxy's prefix) stays, and
 * so do a query and a fragment.  A last "/v1" is the version every
 * OpenAI-style base URL ends in: a dialect whose path has none
 * (Cartesia's /tts/bytes) drops it too.  *base: that URL (malloc'd, the caller's).
 * *voice: the voice to send (malloc'd, the caller's): voice_opt when it
 * is given, else the voice the part cut names (ElevenLabs'
 * .../text-to-speech/VOICE/stream, unescaped), else NULL (the dialect's
 * default).  Returns 0; TB_EINVAL with the reason in err (not
 * SCHEME://HOST..., over 32 path segments, or url naming a voice other
 * than voice_opt); TB_ENOMEM.  Any thread.
 */
int tb_ttsapi_base(const char *path, const char *url, const char *voice_opt, char **base,
                   char **voice, char *err, size_t errlen);

/* Whether the dialect takes PCM at rate Hz (1) or not (0). */
int tb_ttsapi_rate_ok(int api, unsigned rate);

#define TB_TTSAPI_HEADERS_MAX 4

/*
 * One request, built: everything malloc'd and the caller's
 * (tb_ttsapi_req_free).  headers are "Name: value" lines beyond
 * Content-Type and Accept (which the transfer sets); the one holding the
 * key, when there is a key, is headers[secret] (secret -1: none), and
 * its value must never be printed.
 */
struct tb_ttsapi_req {
    char *url;  /* base + path + query, escaped (libcurl's CURLU) */
    char *body; /* the JSON body, NUL-terminated (cJSON) */
    char *headers[TB_TTSAPI_HEADERS_MAX];
    size_t nheaders;
    int secret; /* index of the key's header, or -1 */
};

/* The parts a request is built from; NULL model / voice: the row's
 * default; rate 0: TB_TTSAPI_RATE. */
struct tb_ttsapi_params {
    const char *base; /* the provider's base URL; a trailing '/' is fine */
    const char *key;  /* the API key, or NULL / "" for none (a local
                       * server): then no key header is sent */
    const char *model;
    const char *voice;
    unsigned rate;
};

/*
 * tb_ttsapi_build - the request for text[0..len) (UTF-8, copied into the
 * body) in dialect api.  Returns 0; TB_EINVAL with the reason in err (an
 * unknown dialect, no base URL or one libcurl cannot read, a rate the
 * dialect does not take, text that is not valid UTF-8, a model or voice
 * holding a control character); TB_ENOMEM.  On error *r holds nothing.
 * Any thread.
 */
int tb_ttsapi_build(int api, const struct tb_ttsapi_params *p, const char *text, size_t len,
                    struct tb_ttsapi_req *r, char *err, size_t errlen);

/* Frees what r holds, zeroing the key's header first; NULL is a no-op. */
void tb_ttsapi_req_free(struct tb_ttsapi_req *r);

/*
 * tb_ttsapi_error_text - the provider's own message from an error body
 * body[0..len) (need not be NUL-terminated) of dialect api, one line of
 * at most outlen-1 bytes with control characters replaced: OpenAI
 * {"error": {"message"}}, ElevenLabs {"detail": {"status", "message"}}
 * ("status: message") or detail as a string or a list of {msg},
 * Deepgram {"err_code", "err_msg"} ("err_code: err_msg"), Cartesia
 * {"error"} / {"message"} / {"title", "message"}; else as
 * tb_reader_error_text (reader.h) reads any body: JSON's usual error
 * fields, an HTML title, the first non-blank line.  Not scrubbed of
 * secrets (the caller scrubs).  Never fails.  Any thread.
 */
void tb_ttsapi_error_text(int api, const char *body, size_t len, char *out, size_t outlen);

#endif

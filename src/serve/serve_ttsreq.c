/*
 * serve_ttsreq.c - the mock TTS's requests and error bodies (see
 * serve_ttsreq.h), one function a dialect, each following its provider's
 * API reference:
 *   OpenAI      POST /v1/audio/speech: model, input (at most 4096
 *               characters), voice (a name, or an object with an id)
 *               required; response_format mp3 opus aac flac wav pcm
 *               (default mp3), speed 0.25..4, instructions, stream_format
 *               audio|sse optional.  Errors {"error":{"message","type",
 *               "param","code"}}.
 *   ElevenLabs  POST /v1/text-to-speech/{voice_id}[/stream]: text
 *               required, model_id, language_code, voice_settings
 *               optional; ?output_format= (default mp3_44100_128).
 *               Errors {"detail":{"status","message"}}, 422 for a body
 *               that fails validation.
 *   Deepgram    POST /v1/speak: text required; ?model, encoding,
 *               container, sample_rate (REST default linear16 in wav at
 *               24000 Hz).  Errors {"err_code","err_msg","request_id"}.
 *   Cartesia    POST /tts/bytes: model_id, transcript, voice {mode "id",
 *               id}, output_format {container, encoding, sample_rate}
 *               required, language optional.  Errors {"error_code",
 *               "title","message","request_id"} (Cartesia-Version
 *               2026-03-01 and later).
 * The mock speaks raw 16-bit PCM only: a valid request for another
 * format gets 400 saying so.  Voices and models are accepted whatever
 * they name.  Unknown fields are ignored, as the providers do.
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "serve_ttsreq.h"
#include "ttsbuf/utf8.h"

#define OPENAI_INPUT_MAX 4096 /* characters */

void tb_serve_tts_err_set(struct tb_serve_tts_err *e, int status, const char *code,
                          const char *param, const char *fmt, ...)
{
    va_list ap;
    e->status = status;
    snprintf(e->code, sizeof(e->code), "%s", code);
    snprintf(e->param, sizeof(e->param), "%s", param != NULL ? param : "");
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof(e->message), fmt, ap);
    va_end(ap);
}

void tb_serve_tts_req_free(struct tb_serve_tts_req *rq)
{
    free(rq->text);
    rq->text = NULL;
    rq->len = 0;
}

/* ---- The query string -------------------------------------------------- */

static int hexval(char c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* The value of key in the query, percent-decoded into out ('+' is kept:
 * a model's fault suffix).  1 found, 0 absent, -1 too long or a bad
 * escape. */
static int query_get(const char *q, size_t qlen, const char *key, char *out, size_t cap)
{
    const char *end = q + qlen, *p = q;
    size_t kl = strlen(key);
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p)), *pe = amp != NULL ? amp : end;
        if ((size_t)(pe - p) >= kl && memcmp(p, key, kl) == 0 && (p + kl == pe || p[kl] == '=')) {
            size_t k = 0;
            for (const char *v = p + kl + (p + kl < pe); v < pe; v++) {
                char c = *v;
                if (c == '%') {
                    int hi, lo;
                    if (pe - v < 3)
                        return -1;
                    hi = hexval(v[1]);
                    lo = hexval(v[2]);
                    if (hi < 0 || lo < 0)
                        return -1;
                    c = (char)(hi * 16 + lo);
                    v += 2;
                }
                if (k + 1 >= cap || c == '\0')
                    return -1;
                out[k++] = c;
            }
            out[k] = '\0';
            return 1;
        }
        p = pe + 1;
    }
    return 0;
}

/* ---- JSON fields ------------------------------------------------------- */

/* A required non-empty string field; NULL with e set otherwise. */
static const char *need_str(const cJSON *root, const char *name, int status, const char *code,
                            struct tb_serve_tts_err *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, name);
    if (v == NULL || cJSON_IsNull(v)) {
        tb_serve_tts_err_set(e, status, code, name, "'%s' is a required field", name);
        return NULL;
    }
    if (!cJSON_IsString(v) || v->valuestring == NULL) {
        tb_serve_tts_err_set(e, status, code, name, "'%s' must be a string", name);
        return NULL;
    }
    if (v->valuestring[0] == '\0') {
        tb_serve_tts_err_set(e, status, code, name, "'%s' must not be empty", name);
        return NULL;
    }
    return v->valuestring;
}

/* An optional field of the given cJSON type (absent or null is fine). */
static int opt_type(const cJSON *root, const char *name, int (*is)(const cJSON *), const char *what,
                    int status, const char *code, struct tb_serve_tts_err *e)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, name);
    if (v == NULL || cJSON_IsNull(v) || is(v))
        return 0;
    tb_serve_tts_err_set(e, status, code, name, "'%s' must be %s", name, what);
    return 1;
}

static int is_string(const cJSON *v)
{
    return v != NULL && cJSON_IsString(v) && v->valuestring != NULL;
}

static int is_object(const cJSON *v)
{
    return cJSON_IsObject(v);
}

static int is_number(const cJSON *v)
{
    return cJSON_IsNumber(v) && isfinite(v->valuedouble);
}

static void set_model(struct tb_serve_tts_req *rq, const char *m)
{
    snprintf(rq->model, sizeof(rq->model), "%s", m != NULL ? m : "");
}

static int rate_in(long r, const long *rates)
{
    for (; *rates != 0; rates++)
        if (r == *rates)
            return 1;
    return 0;
}

/* ---- The dialects ------------------------------------------------------ */

static int openai(const cJSON *root, struct tb_serve_tts_req *rq, struct tb_serve_tts_err *e)
{
    static const char *const formats[] = {"mp3", "opus", "aac", "flac", "wav", "pcm", NULL};
    const char *model, *input, *fmt = "mp3";
    const cJSON *voice, *rf, *speed, *sf;
    const char *ir = "invalid_request_error";

    if ((model = need_str(root, "model", 400, ir, e)) == NULL ||
        (input = need_str(root, "input", 400, ir, e)) == NULL)
        return 1;
    if (tb_utf8_count(input, strlen(input)) > OPENAI_INPUT_MAX) {
        tb_serve_tts_err_set(e, 400, ir, "input", "'input' is too long: at most %d characters",
                             OPENAI_INPUT_MAX);
        return 1;
    }
    voice = cJSON_GetObjectItemCaseSensitive(root, "voice");
    if (voice == NULL || cJSON_IsNull(voice)) {
        tb_serve_tts_err_set(e, 400, ir, "voice", "'voice' is a required field");
        return 1;
    }
    if (!(is_string(voice) && voice->valuestring[0] != '\0') &&
        !(cJSON_IsObject(voice) && is_string(cJSON_GetObjectItemCaseSensitive(voice, "id")))) {
        tb_serve_tts_err_set(e, 400, ir, "voice",
                             "'voice' must be a voice name or an object with an 'id'");
        return 1;
    }
    if (opt_type(root, "instructions", is_string, "a string", 400, ir, e))
        return 1;
    rf = cJSON_GetObjectItemCaseSensitive(root, "response_format");
    if (rf != NULL && !cJSON_IsNull(rf)) {
        int ok = 0;
        for (size_t i = 0; is_string(rf) && formats[i] != NULL; i++)
            ok |= strcmp(rf->valuestring, formats[i]) == 0;
        if (!ok) {
            tb_serve_tts_err_set(e, 400, ir, "response_format",
                                 "'response_format' must be one of mp3, opus, aac, flac, wav, pcm");
            return 1;
        }
        fmt = rf->valuestring;
    }
    speed = cJSON_GetObjectItemCaseSensitive(root, "speed");
    if (speed != NULL && !cJSON_IsNull(speed) &&
        (!is_number(speed) || speed->valuedouble < 0.25 || speed->valuedouble > 4.0)) {
        tb_serve_tts_err_set(e, 400, ir, "speed", "'speed' must be a number in 0.25..4.0");
        return 1;
    }
    sf = cJSON_GetObjectItemCaseSensitive(root, "stream_format");
    if (sf != NULL && !cJSON_IsNull(sf) &&
        !(is_string(sf) &&
          (strcmp(sf->valuestring, "audio") == 0 || strcmp(sf->valuestring, "sse") == 0))) {
        tb_serve_tts_err_set(e, 400, ir, "stream_format", "'stream_format' must be audio or sse");
        return 1;
    }
    if (strcmp(fmt, "pcm") != 0 || (is_string(sf) && strcmp(sf->valuestring, "sse") == 0)) {
        tb_serve_tts_err_set(e, 400, ir,
                             strcmp(fmt, "pcm") != 0 ? "response_format" : "stream_format",
                             "ttsbuf's mock TTS sends raw PCM only: response_format \"pcm\", "
                             "stream_format \"audio\"");
        return 1;
    }
    set_model(rq, model);
    rq->rate = 24000;
    return (rq->text = strdup(input)) == NULL ? -1 : 0;
}

static int elevenlabs(const cJSON *root, const char *q, size_t qlen, size_t vlen,
                      struct tb_serve_tts_req *rq, struct tb_serve_tts_err *e)
{
    static const long rates[] = {8000, 16000, 22050, 24000, 44100, 48000, 0};
    char fmt[64] = "mp3_44100_128";
    const char *text, *model = NULL;
    char *end;
    long r;
    int got = query_get(q, qlen, "output_format", fmt, sizeof(fmt));

    if (vlen == 0) {
        tb_serve_tts_err_set(e, 404, "voice_not_found", NULL, "A voice_id is required in the path");
        return 1;
    }
    if (got < 0) {
        tb_serve_tts_err_set(e, 400, "invalid_output_format", NULL,
                             "output_format is not a valid query value");
        return 1;
    }
    if ((text = need_str(root, "text", 422, "invalid_request", e)) == NULL ||
        opt_type(root, "model_id", is_string, "a string", 422, "invalid_request", e) ||
        opt_type(root, "language_code", is_string, "a string", 422, "invalid_request", e) ||
        opt_type(root, "voice_settings", is_object, "an object", 422, "invalid_request", e))
        return 1;
    if (strncmp(fmt, "pcm_", 4) != 0) {
        tb_serve_tts_err_set(e, 400, "invalid_output_format", NULL,
                             "ttsbuf's mock TTS sends raw PCM only: output_format pcm_8000, "
                             "pcm_16000, pcm_22050, pcm_24000, pcm_44100 or pcm_48000, not '%.40s'",
                             fmt);
        return 1;
    }
    r = strtol(fmt + 4, &end, 10);
    if (*end != '\0' || end == fmt + 4 || !rate_in(r, rates)) {
        tb_serve_tts_err_set(e, 400, "invalid_output_format", NULL,
                             "output_format '%.40s' is not one of pcm_8000, pcm_16000, "
                             "pcm_22050, pcm_24000, pcm_44100, pcm_48000",
                             fmt);
        return 1;
    }
    if (is_string(cJSON_GetObjectItemCaseSensitive(root, "model_id")))
        model = cJSON_GetObjectItemCaseSensitive(root, "model_id")->valuestring;
    set_model(rq, model);
    rq->rate = (unsigned)r;
    return (rq->text = strdup(text)) == NULL ? -1 : 0;
}

static int deepgram(const cJSON *root, const char *q, size_t qlen, struct tb_serve_tts_req *rq,
                    struct tb_serve_tts_err *e)
{
    static const long rates[] = {8000, 16000, 24000, 32000, 48000, 0};
    char model[TB_SERVE_TTS_MODEL_MAX] = "", enc[32] = "linear16", cont[32] = "wav",
         sr[32] = "24000";
    const char *text, *bad = "INVALID_QUERY_PARAMETER";
    char *end;
    long r;

    if (query_get(q, qlen, "model", model, sizeof(model)) < 0 ||
        query_get(q, qlen, "encoding", enc, sizeof(enc)) < 0 ||
        query_get(q, qlen, "container", cont, sizeof(cont)) < 0 ||
        query_get(q, qlen, "sample_rate", sr, sizeof(sr)) < 0) {
        tb_serve_tts_err_set(e, 400, bad, NULL, "A query parameter is malformed.");
        return 1;
    }
    if ((text = need_str(root, "text", 400, "Bad Request", e)) == NULL)
        return 1;
    if (strcmp(enc, "linear16") != 0 || strcmp(cont, "none") != 0) {
        tb_serve_tts_err_set(e, 400, "UNSUPPORTED_AUDIO_FORMAT", NULL,
                             "ttsbuf's mock TTS sends raw PCM only: encoding=linear16 and "
                             "container=none (asked: encoding=%.20s container=%.20s)",
                             enc, cont);
        return 1;
    }
    r = strtol(sr, &end, 10);
    if (*end != '\0' || end == sr || !rate_in(r, rates)) {
        tb_serve_tts_err_set(e, 400, bad, NULL,
                             "sample_rate '%.20s' is not valid for linear16: 8000, 16000, 24000, "
                             "32000 or 48000",
                             sr);
        return 1;
    }
    set_model(rq, model);
    rq->rate = (unsigned)r;
    return (rq->text = strdup(text)) == NULL ? -1 : 0;
}

static int cartesia(const cJSON *root, struct tb_serve_tts_req *rq, struct tb_serve_tts_err *e)
{
    static const long rates[] = {8000, 16000, 22050, 24000, 44100, 48000, 0};
    const char *model, *text, *ir = "invalid_request";
    const cJSON *voice, *of, *v;

    if ((model = need_str(root, "model_id", 400, ir, e)) == NULL ||
        (text = need_str(root, "transcript", 400, ir, e)) == NULL ||
        opt_type(root, "language", is_string, "a string", 400, ir, e))
        return 1;
    voice = cJSON_GetObjectItemCaseSensitive(root, "voice");
    if (!cJSON_IsObject(voice) || !is_string(v = cJSON_GetObjectItemCaseSensitive(voice, "mode")) ||
        strcmp(v->valuestring, "id") != 0 ||
        !is_string(v = cJSON_GetObjectItemCaseSensitive(voice, "id")) ||
        v->valuestring[0] == '\0') {
        tb_serve_tts_err_set(e, 400, ir, NULL,
                             "'voice' must be an object {\"mode\": \"id\", \"id\": \"...\"}");
        return 1;
    }
    of = cJSON_GetObjectItemCaseSensitive(root, "output_format");
    if (!cJSON_IsObject(of) || !is_string(cJSON_GetObjectItemCaseSensitive(of, "container"))) {
        tb_serve_tts_err_set(e, 400, ir, NULL,
                             "'output_format' must be an object with container, encoding and "
                             "sample_rate");
        return 1;
    }
    v = cJSON_GetObjectItemCaseSensitive(of, "sample_rate");
    if (!is_number(v) || v->valuedouble != floor(v->valuedouble) ||
        !rate_in((long)v->valuedouble, rates)) {
        tb_serve_tts_err_set(e, 400, ir, NULL,
                             "output_format.sample_rate must be 8000, 16000, 22050, 24000, 44100 "
                             "or 48000");
        return 1;
    }
    rq->rate = (unsigned)v->valuedouble;
    if (strcmp(cJSON_GetObjectItemCaseSensitive(of, "container")->valuestring, "raw") != 0 ||
        !is_string(v = cJSON_GetObjectItemCaseSensitive(of, "encoding")) ||
        strcmp(v->valuestring, "pcm_s16le") != 0) {
        tb_serve_tts_err_set(e, 400, ir, NULL,
                             "ttsbuf's mock TTS sends raw PCM only: output_format container "
                             "\"raw\", encoding \"pcm_s16le\"");
        return 1;
    }
    set_model(rq, model);
    return (rq->text = strdup(text)) == NULL ? -1 : 0;
}

int tb_serve_tts_parse(enum tb_serve_tts_api api, const char *q, size_t qlen, size_t vlen,
                       const char *body, size_t len, struct tb_serve_tts_req *rq,
                       struct tb_serve_tts_err *e)
{
    cJSON *root;
    int rc;

    memset(rq, 0, sizeof(*rq));
    root = cJSON_ParseWithLength(body, len);
    if (root == NULL || !cJSON_IsObject(root)) {
        cJSON_Delete(root);
        switch (api) {
        case TB_SERVE_TTS_OPENAI:
            tb_serve_tts_err_set(e, 400, "invalid_request_error", NULL,
                                 "We could not parse the JSON body of your request.");
            break;
        case TB_SERVE_TTS_ELEVENLABS:
            tb_serve_tts_err_set(e, 422, "invalid_request", NULL, "The body is not a JSON object.");
            break;
        case TB_SERVE_TTS_DEEPGRAM:
            tb_serve_tts_err_set(e, 400, "Bad Request", NULL, "The body is not a JSON object.");
            break;
        case TB_SERVE_TTS_CARTESIA:
            tb_serve_tts_err_set(e, 400, "invalid_request", NULL, "The body is not a JSON object.");
            break;
        }
        return 1;
    }
    switch (api) {
    case TB_SERVE_TTS_OPENAI: rc = openai(root, rq, e); break;
    case TB_SERVE_TTS_ELEVENLABS: rc = elevenlabs(root, q, qlen, vlen, rq, e); break;
    case TB_SERVE_TTS_DEEPGRAM: rc = deepgram(root, q, qlen, rq, e); break;
    default: rc = cartesia(root, rq, e); break;
    }
    cJSON_Delete(root);
    if (rc == 0)
        rq->len = strlen(rq->text);
    return rc;
}

/* ---- Error bodies ------------------------------------------------------ */

static const char *title_of(int status)
{
    switch (status) {
    case 401: return "Unauthorized";
    case 402: return "Payment Required";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    default: return status >= 500 ? "Internal Server Error" : "Invalid request";
    }
}

char *tb_serve_tts_error_body(enum tb_serve_tts_api api, const struct tb_serve_tts_err *e,
                              uint64_t request_id)
{
    cJSON *root = cJSON_CreateObject(), *in = NULL;
    char id[64];
    char *out = NULL;
    int ok = root != NULL;

    snprintf(id, sizeof(id), "00000000-0000-4000-8000-%012llx",
             (unsigned long long)(request_id & 0xFFFFFFFFFFFFULL));
    switch (api) {
    case TB_SERVE_TTS_OPENAI:
        ok = ok && (in = cJSON_AddObjectToObject(root, "error")) != NULL &&
             cJSON_AddStringToObject(in, "message", e->message) != NULL &&
             cJSON_AddStringToObject(in, "type", e->code) != NULL &&
             (e->param[0] != '\0' ? cJSON_AddStringToObject(in, "param", e->param)
                                  : cJSON_AddNullToObject(in, "param")) != NULL &&
             (e->status == 401 ? cJSON_AddStringToObject(in, "code", "invalid_api_key")
                               : cJSON_AddNullToObject(in, "code")) != NULL;
        break;
    case TB_SERVE_TTS_ELEVENLABS:
        ok = ok && (in = cJSON_AddObjectToObject(root, "detail")) != NULL &&
             cJSON_AddStringToObject(in, "status", e->code) != NULL &&
             cJSON_AddStringToObject(in, "message", e->message) != NULL;
        break;
    case TB_SERVE_TTS_DEEPGRAM:
        ok = ok && cJSON_AddStringToObject(root, "err_code", e->code) != NULL &&
             cJSON_AddStringToObject(root, "err_msg", e->message) != NULL &&
             cJSON_AddStringToObject(root, "request_id", id) != NULL;
        break;
    case TB_SERVE_TTS_CARTESIA:
        ok = ok && cJSON_AddStringToObject(root, "error_code", e->code) != NULL &&
             cJSON_AddStringToObject(root, "title", title_of(e->status)) != NULL &&
             cJSON_AddStringToObject(root, "message", e->message) != NULL &&
             cJSON_AddStringToObject(root, "request_id", id) != NULL;
        break;
    }
    if (ok)
        out = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    return out;
}

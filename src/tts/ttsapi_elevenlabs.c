/*
 * ttsapi_elevenlabs.c - ElevenLabs' streaming speech endpoint: POST
 * /v1/text-to-speech/{voice_id}/stream?output_format=pcm_{rate} with
 * {text, model_id} and the key in xi-api-key
 * (elevenlabs.io/docs/api-reference/text-to-speech/stream).
 */
#include <stdio.h>
#include <string.h>

#include "base/jsonfield.h"
#include "ttsapi_priv.h"
#include "ttsbuf/error.h"

static const unsigned rates[] = {8000, 16000, 22050, 24000, 32000, 44100, 48000, 0};

static int path(const struct tb_ttsapi_parts *p, char *out, size_t outlen)
{
    return snprintf(out, outlen, "/v1/text-to-speech/%s/stream", p->voice_esc);
}

static void query(const struct tb_ttsapi_parts *p, char q[][160], size_t *n)
{
    snprintf(q[0], 160, "output_format=pcm_%u", p->rate);
    *n = 1;
}

static int body(cJSON *root, const char *text, const struct tb_ttsapi_parts *p)
{
    return tb_ttsapi_add_str(root, "text", text) || tb_ttsapi_add_str(root, "model_id", p->model)
               ? TB_ENOMEM
               : 0;
}

/* {"detail": {"status": "invalid_api_key", "message": "..."}}: both,
 * "status: message"; detail as a string or a list of {msg} is the
 * common reader's. */
static void error(const cJSON *root, char *out, size_t outlen)
{
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(root, "detail");
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(d, "status");
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(d, "message");
    char line[512];
    out[0] = '\0';
    if (!cJSON_IsString(msg) || msg->valuestring[0] == '\0')
        return;
    if (cJSON_IsString(st) && st->valuestring[0] != '\0')
        snprintf(line, sizeof(line), "%s: %s", st->valuestring, msg->valuestring);
    else
        snprintf(line, sizeof(line), "%s", msg->valuestring);
    tb_jsonfield_line_of(line, strlen(line), out, outlen);
}

const struct tb_ttsapi_dialect tb_ttsapi_dialect_elevenlabs = {
    .info =
        {
            .name = "elevenlabs",
            .path = "/v1/text-to-speech/{voice}/stream",
            .key_env = "ELEVENLABS_API_KEY",
            .key_header = "xi-api-key",
            .key_scheme = NULL,
            /* model_id: the documented default (the API reference);
             * voice_id is required: the reference's example voice. */
            .model = "eleven_multilingual_v2",
            .voice = "JBFqnCBsd6RMkjVDRZzb",
            .rates = rates,
            .doc = "https://elevenlabs.io/docs/api-reference/text-to-speech/stream",
        },
    .path = path,
    .query = query,
    .body = body,
    .error = error,
    .takes_voice = 1,
};

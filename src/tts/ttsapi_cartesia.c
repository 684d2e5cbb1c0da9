/*
 * ttsapi_cartesia.c - Cartesia's bytes endpoint: POST /tts/bytes with
 * X-API-Key and Cartesia-Version, {model_id, transcript, voice {mode
 * "id", id}, output_format {container "raw", encoding "pcm_s16le",
 * sample_rate}} (docs.cartesia.ai/api-reference/tts/bytes).  The version
 * is the latest the API reference lists; from it on, errors are JSON
 * {error_code, title, message, request_id} (docs.cartesia.ai/use-the-api/
 * api-errors); older versions answer "Title: Message" in plain text.
 */
#include <stdio.h>
#include <string.h>

#include "base/jsonfield.h"
#include "ttsapi_priv.h"
#include "ttsbuf/error.h"

static const unsigned rates[] = {8000, 16000, 22050, 24000, 44100, 48000, 0};

static int path(const struct tb_ttsapi_parts *p, char *out, size_t outlen)
{
    (void)p;
    return snprintf(out, outlen, "/tts/bytes");
}

static void query(const struct tb_ttsapi_parts *p, char q[][160], size_t *n)
{
    (void)p;
    (void)q;
    *n = 0;
}

static int body(cJSON *root, const char *text, const struct tb_ttsapi_parts *p)
{
    cJSON *voice, *fmt;
    if (tb_ttsapi_add_str(root, "model_id", p->model) ||
        tb_ttsapi_add_str(root, "transcript", text))
        return TB_ENOMEM;
    voice = cJSON_AddObjectToObject(root, "voice");
    if (voice == NULL || tb_ttsapi_add_str(voice, "mode", "id") ||
        tb_ttsapi_add_str(voice, "id", p->voice))
        return TB_ENOMEM;
    fmt = cJSON_AddObjectToObject(root, "output_format");
    if (fmt == NULL || tb_ttsapi_add_str(fmt, "container", "raw") ||
        tb_ttsapi_add_str(fmt, "encoding", "pcm_s16le") ||
        cJSON_AddNumberToObject(fmt, "sample_rate", p->rate) == NULL)
        return TB_ENOMEM;
    return 0;
}

/* {"error_code", "title", "message"}: "title: message". */
static void error(const cJSON *root, char *out, size_t outlen)
{
    const cJSON *title = cJSON_GetObjectItemCaseSensitive(root, "title");
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(root, "message");
    char line[768];
    out[0] = '\0';
    if (!cJSON_IsString(msg) || msg->valuestring[0] == '\0')
        return;
    if (cJSON_IsString(title) && title->valuestring[0] != '\0')
        snprintf(line, sizeof(line), "%s: %s", title->valuestring, msg->valuestring);
    else
        snprintf(line, sizeof(line), "%s", msg->valuestring);
    tb_jsonfield_line_of(line, strlen(line), out, outlen);
}

const struct tb_ttsapi_dialect tb_ttsapi_dialect_cartesia = {
    .info =
        {
            .name = "cartesia",
            .path = "/tts/bytes",
            .key_env = "CARTESIA_API_KEY",
            .key_header = "X-API-Key",
            .key_scheme = NULL,
            /* Both required, no default documented: the getting-started
             * request's model and voice (docs.cartesia.ai/getting-started/
             * using-the-api). */
            .model = "sonic-3",
            .voice = "694f9389-aac1-45b6-b726-9d9369183238",
            .rates = rates,
            .doc = "https://docs.cartesia.ai/api-reference/tts/bytes",
        },
    .fixed_header = "Cartesia-Version: 2026-03-01",
    .path = path,
    .query = query,
    .body = body,
    .error = error,
    .takes_voice = 1,
};

/*
 * ttsapi_deepgram.c - Deepgram's REST speech endpoint: POST
 * /v1/speak?model=M&encoding=linear16&sample_rate=R&container=none with
 * {text} and "Authorization: Token KEY"
 * (developers.deepgram.com/reference/text-to-speech-api and
 * /docs/tts-media-output-settings: container=none for raw samples, the
 * REST default being a WAV container).  The model names the voice
 * ("aura-2-thalia-en"): there is no voice of its own.  The default model
 * is an Aura-2 voice, the engine of the deepgram-aura-2 preset, whose
 * figures are Aura-2's; the REST reference's own default is the older
 * aura-asteria-en (Aura-1), which a run asks for with --tts-model.
 */
#include <stdio.h>
#include <string.h>

#include "base/jsonfield.h"
#include "ttsapi_priv.h"
#include "ttsbuf/error.h"

static const unsigned rates[] = {8000, 16000, 24000, 32000, 48000, 0};

static int path(const struct tb_ttsapi_parts *p, char *out, size_t outlen)
{
    (void)p;
    return snprintf(out, outlen, "/v1/speak");
}

static void query(const struct tb_ttsapi_parts *p, char q[][160], size_t *n)
{
    snprintf(q[0], 160, "model=%s", p->model);
    snprintf(q[1], 160, "encoding=linear16");
    snprintf(q[2], 160, "sample_rate=%u", p->rate);
    snprintf(q[3], 160, "container=none");
    *n = 4;
}

static int body(cJSON *root, const char *text, const struct tb_ttsapi_parts *p)
{
    (void)p;
    return tb_ttsapi_add_str(root, "text", text) ? TB_ENOMEM : 0;
}

/* {"err_code", "err_msg", "request_id"} ("err_code: err_msg"), or
 * {"category", "message", "details"} ("message (details)"). */
static void error(const cJSON *root, char *out, size_t outlen)
{
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(root, "err_code");
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(root, "err_msg");
    const cJSON *m2 = cJSON_GetObjectItemCaseSensitive(root, "message");
    const cJSON *det = cJSON_GetObjectItemCaseSensitive(root, "details");
    char line[768];
    out[0] = '\0';
    if (cJSON_IsString(msg) && msg->valuestring[0] != '\0') {
        if (cJSON_IsString(code) && code->valuestring[0] != '\0')
            snprintf(line, sizeof(line), "%s: %s", code->valuestring, msg->valuestring);
        else
            snprintf(line, sizeof(line), "%s", msg->valuestring);
    } else if (cJSON_IsString(m2) && m2->valuestring[0] != '\0') {
        if (cJSON_IsString(det) && det->valuestring[0] != '\0')
            snprintf(line, sizeof(line), "%s (%s)", m2->valuestring, det->valuestring);
        else
            snprintf(line, sizeof(line), "%s", m2->valuestring);
    } else {
        return;
    }
    tb_jsonfield_line_of(line, strlen(line), out, outlen);
}

const struct tb_ttsapi_dialect tb_ttsapi_dialect_deepgram = {
    .info =
        {
            .name = "deepgram",
            .path = "/v1/speak",
            .key_env = "DEEPGRAM_API_KEY",
            .key_header = "Authorization",
            .key_scheme = "Token",
            /* Aura-2, as the deepgram-aura-2 preset (see the top). */
            .model = "aura-2-thalia-en",
            .voice = "",
            .rates = rates,
            .doc = "https://developers.deepgram.com/reference/text-to-speech-api",
        },
    .path = path,
    .query = query,
    .body = body,
    .error = error,
    .takes_voice = 0,
};

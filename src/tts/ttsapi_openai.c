/*
 * ttsapi_openai.c - OpenAI's speech endpoint, which the local servers
 * (Kokoro-FastAPI, Speaches, LocalAI) also speak: POST /v1/audio/speech
 * {model, input, voice, response_format "pcm"}; the PCM is 24 kHz,
 * mono, s16le, with no header (platform.openai.com/docs/api-reference/
 * audio/createSpeech and the text-to-speech guide).
 */
#include <stdio.h>

#include "ttsapi_priv.h"
#include "ttsbuf/error.h"

static const unsigned rates[] = {24000, 0};

static int path(const struct tb_ttsapi_parts *p, char *out, size_t outlen)
{
    (void)p;
    return snprintf(out, outlen, "/v1/audio/speech");
}

static void query(const struct tb_ttsapi_parts *p, char q[][160], size_t *n)
{
    (void)p;
    (void)q;
    *n = 0;
}

static int body(cJSON *root, const char *text, const struct tb_ttsapi_parts *p)
{
    return tb_ttsapi_add_str(root, "model", p->model) || tb_ttsapi_add_str(root, "input", text) ||
                   tb_ttsapi_add_str(root, "voice", p->voice) ||
                   tb_ttsapi_add_str(root, "response_format", "pcm")
               ? TB_ENOMEM
               : 0;
}

/* {"error": {"message", "type", "code"}}: the common reader finds it. */
static void error(const cJSON *root, char *out, size_t outlen)
{
    (void)root;
    if (outlen > 0)
        out[0] = '\0';
}

const struct tb_ttsapi_dialect tb_ttsapi_dialect_openai = {
    .info =
        {
            .name = "openai",
            .path = "/v1/audio/speech",
            .key_env = "OPENAI_API_KEY",
            .key_header = "Authorization",
            .key_scheme = "Bearer",
            /* Both required, no default documented; the guide's examples
             * use this model and voice. */
            .model = "gpt-4o-mini-tts",
            .voice = "alloy",
            .rates = rates,
            .doc = "https://platform.openai.com/docs/api-reference/audio/createSpeech",
        },
    .path = path,
    .query = query,
    .body = body,
    .error = error,
    .takes_voice = 1,
};

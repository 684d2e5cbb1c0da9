/*
 * serve_ttsreq.h - private to libttsbuf: the mock TTS's requests and
 * error bodies in its four dialects (serve_ttsreq.c).  Pure: no I/O.
 * Each dialect's request is checked as its provider documents it (the
 * key aside: serve_tts.c checks the header); the mock speaks raw PCM
 * only, so a request for another format is refused with the provider's
 * 400.
 */
#ifndef TTSBUF_SERVE_TTSREQ_H
#define TTSBUF_SERVE_TTSREQ_H

#include <stddef.h>
#include <stdint.h>

enum tb_serve_tts_api {
    TB_SERVE_TTS_OPENAI,
    TB_SERVE_TTS_ELEVENLABS,
    TB_SERVE_TTS_DEEPGRAM,
    TB_SERVE_TTS_CARTESIA
};

#define TB_SERVE_TTS_MODEL_MAX 256

/* A request that passed. */
struct tb_serve_tts_req {
    char *text; /* malloc'd, NUL-terminated; the text to speak */
    size_t len;
    unsigned rate;                      /* Hz */
    char model[TB_SERVE_TTS_MODEL_MAX]; /* the model named ("" none) */
};

/* A request that did not: the status and the provider's error fields. */
struct tb_serve_tts_err {
    int status;
    char code[64];  /* the provider's code / status word */
    char param[64]; /* OpenAI: the parameter at fault, "" none */
    char message[320];
};

/*
 * tb_serve_tts_parse - checks a dialect's request: its query [q, q +
 * qlen) (without the '?'), its JSON body, and for ElevenLabs the voice id
 * of the path (vlen 0: missing).  Returns 0 and *rq (free with
 * tb_serve_tts_req_free), 1 and *e for a bad request, -1 out of memory.
 */
int tb_serve_tts_parse(enum tb_serve_tts_api api, const char *q, size_t qlen, size_t vlen,
                       const char *body, size_t len, struct tb_serve_tts_req *rq,
                       struct tb_serve_tts_err *e);

void tb_serve_tts_req_free(struct tb_serve_tts_req *rq);

/* The dialect's error body for e (malloc'd; NULL out of memory);
 * request_id numbers Deepgram's and Cartesia's. */
char *tb_serve_tts_error_body(enum tb_serve_tts_api api, const struct tb_serve_tts_err *e,
                              uint64_t request_id);

/* Fills e (snprintf-style message). */
void tb_serve_tts_err_set(struct tb_serve_tts_err *e, int status, const char *code,
                          const char *param, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif

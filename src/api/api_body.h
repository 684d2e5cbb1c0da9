/*
 * api_body.h - private to libttsbuf: the request body every dialect starts
 * from (api_body.c).  The OpenAI chat body is the common shape: each row of
 * the dialect table (api_priv.h) builds it, then moves what its API wants
 * elsewhere (Anthropic's system prompt, Ollama's options) or takes the
 * completions prompt for the messages.  cJSON stays in the api/ files.
 */
#ifndef TTSBUF_API_BODY_H
#define TTSBUF_API_BODY_H

#include <cJSON.h>
#include <stddef.h>

#include "ttsbuf/api.h"

/*
 * tb_api_body_chat - q as a chat body: {model, messages (q->messages_json,
 * else one user message of q->prompt) or, with prompt set, "prompt": the
 * prompt; stream: true; stream_options {include_usage} when usage;
 * max_tokens and temperature when given}, with q->extra_json's keys merged
 * last (theirs win).  Returns 0 and *root (caller deletes); TB_EINVAL
 * when messages_json is not a JSON array or extra_json not a JSON object
 * (err says which: "--messages: invalid JSON near byte N", "--body-json:
 * not a JSON object"), or is set with prompt (a prompt-only API would drop
 * the messages and send an empty prompt); TB_ENOMEM.  Any thread.
 */
int tb_api_body_chat(const struct tb_api_request *q, int prompt, int usage, cJSON **root, char *err,
                     size_t errlen);

/*
 * tb_api_body_adapted - the chat body of q (no usage asked for: only the
 * OpenAI pair takes stream_options) made a dialect's own by adapt (which
 * moves what its API wants elsewhere, keeping what the user set, and
 * returns 0 or TB_ENOMEM), printed into *out (malloc'd, caller frees).
 * Returns as tb_api_body_chat.
 */
int tb_api_body_adapted(const struct tb_api_request *q,
                        int (*adapt)(cJSON *root, const struct tb_api_request *q), char **out,
                        char *err, size_t errlen);

/* tb_api_body_print - root printed into *out (malloc'd, caller frees) and
 * deleted.  Returns 0, or TB_ENOMEM with *out NULL. */
int tb_api_body_print(cJSON *root, char **out);

#endif

/*
 * oai.h - private to libttsbuf: the OpenAI-compatible pair (chat,
 * completions; api.h's types, defined in api_openai.c): streaming request
 * bodies, what each streamed event's JSON says (the "chunk json" stage:
 * events in, tokens out, as a struct tb_api_delta), and a server's
 * message out of an error body.
 *
 * Fields read from each event's data (a JSON object):
 *   chat         choices[0].delta.content
 *   legacy       choices[0].text
 *   reasoning    choices[0].delta.reasoning_content, or .reasoning
 *   tool calls   choices[0].delta.tool_calls (each element counted)
 *   finish       choices[0].finish_reason
 *   usage        usage.completion_tokens / prompt_tokens (the final chunk
 *                has empty choices)
 *   error        {"error": {"message", "type", "code"}}, {"error": "..."},
 *                {"type": "error", "message": ...}, {"detail": ...}
 *   done         the data "[DONE]" (not JSON)
 * A lone surrogate escape ("\ud83d" ending one event, "\ude00" starting
 * the next) is paired across events; a half that never finds its partner
 * becomes U+FFFD (tb_oai_replaced).
 * Text must be valid UTF-8 after unescaping; anything else is an error, and
 * so is a raw NUL byte anywhere in the data (never valid JSON; cJSON would
 * silently cut the string there).  A \u0000 escape ends the text there.
 *
 * Ownership: a tb_oai parser owns the text it hands out; pointers stay
 * valid until its next parse.  Threads: one thread per parser.
 */
#ifndef TTSBUF_OAI_H
#define TTSBUF_OAI_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/api.h"

/*
 * tb_oai_request_body - the JSON body of a streaming request (the OpenAI
 * pair, chat or completions; api.h's tb_api_request_body covers every
 * dialect).  *out is
 * malloc'd (caller frees), NUL-terminated.  Returns 0; TB_EINVAL when
 * messages_json is not a JSON array or extra_json not a JSON object (err
 * says which); TB_ENOMEM.
 */
int tb_oai_request_body(const struct tb_api_request *q, char **out, char *err, size_t errlen);

struct tb_oai;

int tb_oai_create(struct tb_oai **out); /* 0 or TB_ENOMEM */
void tb_oai_destroy(struct tb_oai *p);  /* NULL is a no-op */
void tb_oai_reset(struct tb_oai *p);    /* a new stream; keeps memory */

/* UTF-16 surrogate halves replaced by U+FFFD in this stream so far (a
 * server that slices text by UTF-16 code units leaves a half at the end
 * of one event for the next to complete; one that never finds its
 * partner is replaced, not an error).  One still waiting counts. */
uint64_t tb_oai_replaced(const struct tb_oai *p);

/*
 * tb_oai_parse_event - reads one event's data (len bytes, need not be
 * NUL-terminated).  Returns 0; TB_EFORMAT for invalid JSON (err: "invalid
 * JSON near byte N", or "a NUL byte at byte N"), a non-object, or text
 * that is not valid UTF-8;
 * TB_ENOMEM.  An error object is not a parse error: out->error is set.
 */
int tb_oai_parse_event(struct tb_oai *p, const char *data, size_t len, struct tb_api_delta *out,
                       char *err, size_t errlen);

/*
 * tb_oai_error_text - the server's own message from an error response
 * body: from JSON the message tb_oai_parse_event finds in an error event
 * (error.message, a string "error", "message", FastAPI's "detail"), else the HTML
 * <title>, else the first non-blank line, trimmed to one line of at most
 * outlen-1 bytes with control characters replaced.  Never fails.
 */
void tb_oai_error_text(const char *body, size_t len, char *out, size_t outlen);

#endif

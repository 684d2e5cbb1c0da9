/*
 * faults.h - the mock server's fault specs: what `ttsbuf serve --fault`
 * and a request's model name ("mock+stall@40:1.5+crlf") ask it to do
 * wrong (faults.c parses them; serve_plan.c and the server apply them).
 *
 * Faults (tb_faults_parse) are given to the mock server (serve.h) for
 * every completion request (not /v1/models), and per request in the
 * request's "model" name after an '@'-free prefix (everything after the
 * first '+'), e.g. model
 * "mock+stall@40:1.5+crlf"; a bad spec there gets 400 naming the item.
 * Token K counts every token sent before it (reasoning@N deltas and
 * burst groups included); a K fault lands on the event that carries
 * token K.  Spec: items joined by '+':
 *   stall@K:S      pause S seconds before token K (0-based)
 *   drop@K         close the connection before token K (no terminator)
 *   status@N       answer HTTP N with an OpenAI-style JSON error body
 *   status@N:html  ... with an HTML body
 *   html           answer 200 with Content-Type text/html (not SSE)
 *   malformed@K    token K's event carries truncated JSON
 *   error@K        send an {"error": ...} event instead of token K, end
 *   burst@N        N tokens per event
 *   reasoning@N    N reasoning deltas (delta.reasoning_content) first
 *   crlf           CRLF line endings in the event stream
 *   comments       a ": keep-alive" comment line before every event
 *   nodone         never send data: [DONE]
 *   reject-usage   answer 400 when stream_options is present
 * Items the server was given and items from the model name add up.
 * A stall moves every later event too.  error@K ends the body properly
 * (chunked terminator) but sends no finish chunk, usage or [DONE].
 * reasoning@N deltas are spread over [0, t of the first event) and count
 * one token each.  Non-streamed: stall delays the body, drop@K closes
 * without a response at token K's time, error@K answers 500 then,
 * malformed@K truncates the body; burst, crlf, comments, nodone do not
 * apply.
 *
 */
#ifndef TTSBUF_FAULTS_H
#define TTSBUF_FAULTS_H

#include <stddef.h>
#include <stdint.h>

struct tb_faults {
    long stall_at; /* -1: none */
    double stall_s;
    long drop_at; /* -1: none */
    int status;   /* 0: none */
    int status_html;
    int html;
    long malformed_at; /* -1: none */
    long error_at;     /* -1: none */
    uint32_t burst;    /* 0: the stream's own grouping */
    uint32_t reasoning;
    int crlf, comments, nodone, reject_usage;
};

/* No faults.  Any thread. */
void tb_faults_init(struct tb_faults *f);

/* Parses a fault spec (above) over the values already in *f (a later
 * value replaces an earlier one).  Returns 0, or TB_EINVAL with the
 * offending item and what it should look like in err; *f is unchanged
 * then.  NULL or "" is no change.  Any thread. */
int tb_faults_parse(const char *spec, struct tb_faults *f, char *err, size_t errlen);

/*
 * The mock TTS's faults (`serve --tts-fault`, and per request after the
 * first '+' of the request's model: OpenAI "model", ElevenLabs and
 * Cartesia "model_id", Deepgram's ?model=).  Items joined by '+':
 *   status@N   answer HTTP N (400..599) with the dialect's error body
 *   cut@F      close the connection, without the chunked terminator,
 *              once a share F (0 <= F < 1) of the audio bytes is sent
 *              (rounded down to a whole sample)
 *   stall      send nothing (no head, no byte) until the client closes
 *   drip@BPS   send the audio at BPS bytes a second (1..100000000) from
 *              the first byte on, in pieces of 20 ms of it (at least one
 *              sample), or later when the real-time factor is slower
 * Items the server was given and items from the model name add up.
 */
struct tb_tts_faults {
    int status;  /* 0: none */
    int has_cut; /* cut@F given */
    double cut;
    int stall;
    double drip_bps; /* 0: none */
};

/* No faults (all zero, as a zeroed struct).  Any thread. */
void tb_tts_faults_init(struct tb_tts_faults *f);

/* Parses a TTS fault spec (above) over *f, as tb_faults_parse does. */
int tb_tts_faults_parse(const char *spec, struct tb_tts_faults *f, char *err, size_t errlen);

#endif

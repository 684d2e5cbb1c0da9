/*
 * ttsws.h - a real TTS in the loop over the providers' WebSocket input
 * streaming: one connection per stream, each chunk of text written to it
 * as a message, its audio read back and attributed to it by the
 * protocol's own markers, and what happened recorded in a struct
 * tb_tts_log (ttsmeas.h), as the HTTP client (ttsnet.h) records it.
 *
 * The dialects (the fixtures tests/data/ttsapi/DIALECT.json keep the
 * documented protocol with its source and date):
 *
 *   elevenlabs-ws  GET {base}/v1/text-to-speech/{voice}/stream-input
 *                      ?model_id=M&output_format=pcm_R
 *                      &inactivity_timeout=180  (upgraded; 180 s, the most
 *                      the provider allows, not its 20: a slow LLM between
 *                      chunks must not close the stream)
 *                  xi-api-key: $ELEVENLABS_API_KEY (the handshake's header)
 *                  first {"text": " "}; chunk j {"text": "TEXT ", "flush":
 *                  true}; the end {"text": ""}.  Answers {"audio": base64
 *                  PCM, "alignment": {"chars": [...]}}; the audio is in
 *                  text order, and a message's alignment names the
 *                  characters it speaks, so chunk j's audio is the
 *                  messages up to the one whose alignment reaches chunk
 *                  j's last non-blank character (blanks are not
 *                  counted: the provider may drop or add them).
 *   cartesia-ws    GET {base}/tts/websocket?cartesia_version=V (upgraded)
 *                  X-API-Key: $CARTESIA_API_KEY, Cartesia-Version: V
 *                  one context per stream; chunk j {"model_id",
 *                  "transcript": TEXT, "voice", "output_format" (raw
 *                  pcm_s16le), "context_id", "continue": true} then a
 *                  flush {"transcript": "", "continue": true, "flush":
 *                  true}; the end {"transcript": "", "continue": false}.
 *                  Answers {"type": "chunk", "data": base64 PCM,
 *                  "flush_id": j}, {"type": "flush_done", "flush_id": j},
 *                  {"type": "done"}, {"type": "error", "error",
 *                  "status_code"}: flush_id k is the k-th flush sent,
 *                  which is the k-th chunk sent (blank chunks are never
 *                  sent, so it is not the k-th chunk); that chunk's
 *                  audio is the chunks of its flush_id, and it ends at
 *                  its flush_done.
 *
 * The model's rule (playout.h) as ttsnet.h's: chunk j is sent once it is
 * closed (tb_ttsws_submit), chunk j-1 was sent and chunk j-N has ended.  The connection is
 * opened at create (as an agent opens it before the answer starts); a
 * chunk submitted before the upgrade completed waits for it.  "Sent" is
 * when the chunk's text message was written to the connection; the first
 * byte is its first audio message; the end is its last (ElevenLabs: the
 * message whose alignment completes it; Cartesia: its flush_done).  A
 * blank chunk is skipped, as ttsnet.h's rule says.  Audio is booked only
 * to the chunk the protocol names, between its text's write and its end
 * marker: audio before a chunk's text was written, after its end, for a
 * flush never sent, or with no chunk in flight, is the peer breaking the
 * protocol ("format" of the chunk in flight, or with none in flight of
 * the next chunk sent), never another chunk's audio.
 *
 * How a chunk ends (the record's fail, ttsmeas.h):
 *   "none"      its audio came to its end marker, whole samples;
 *   "http"      the upgrade was refused (status, the server's reason or
 *               lws's), or the provider sent an error message in the
 *               stream (its status_code or code, 0 when none; its text);
 *   "format"    a message that is not the protocol's: not JSON, a binary
 *               frame, audio that is not base64 or holds half a sample,
 *               audio or an end marker out of place (above); an end
 *               marker before any audio for a chunk with text;
 *   "cut"       the connection closed while the chunk was in flight
 *               (the close code and reason in the message);
 *   "timeout"   no audio for idle_timeout, or the chunk's total_timeout,
 *               or no upgrade within connect_timeout;
 *   "transport" refused, DNS, TLS: no connection; or the connection had
 *               closed (the provider ended it) before the chunk was sent;
 *   "canceled"  as ttsnet.h.
 * A failed chunk ends the run's speech as in ttsnet.h.
 *
 * Secrets: the key goes into its handshake header only, never into the
 * URL; messages pass through the secrets scrubber, then the sanitizer
 * every peer's words pass (one line of valid UTF-8); libwebsockets' own log
 * is silenced (it would print to stderr).  The library prints nothing.
 *
 * The loop (struct tb_ttsws_loop, below): every connection is served by
 * a libwebsockets context on a libuv loop, which the caller's loop
 * embeds: one such loop per event-loop thread serves every WebSocket
 * client of that thread (opts.ws_loop), with no thread of its own and none
 * per connection.  Why libuv: Debian 12's libwebsockets 4.1 is built
 * without external-poll hooks, so it never tells which descriptors it
 * watches for what, and its own service (lws_service) either blocks until
 * its next timer or only looks; through its libuv plugin (a foreign loop)
 * every socket it watches is in libuv's epoll set, which is one
 * descriptor (tb_ttsws_loop_fd) and one timeout (tb_ttsws_loop_timeout)
 * the caller waits on beside its own (libcurl's, an eventfd), then runs
 * once without blocking (tb_ttsws_loop_service).  A client given no loop
 * makes one of its own (ttsbuf run: one stream) and waits on it in its
 * step.  What is received is stamped on the run's clock in the service
 * that reads it, so a loop that services late stamps late.
 *
 * Threads: as ttsnet.h (one thread calls everything; callbacks inside
 * step, finish and cancel); a loop and every client on it belong to one
 * thread.  TLS is libwebsockets' OpenSSL.
 */
#ifndef TTSBUF_TTSWS_H
#define TTSBUF_TTSWS_H

#include <stddef.h>
#include <stdint.h>

#include "ttsbuf/ttsmeas.h"
#include "ttsbuf/ttsnet.h"

/* The WebSocket dialects, by their names everywhere (CLI, trace, JSON). */
enum tb_ttsws_api {
    TB_TTSWS_ELEVENLABS = 0, /* "elevenlabs-ws" */
    TB_TTSWS_CARTESIA,       /* "cartesia-ws" */
    TB_TTSWS__COUNT
};

/* "elevenlabs-ws", "cartesia-ws"; "?" out of range.  Any thread. */
const char *tb_ttsws_name(int api);
/* The dialect named (exact), or -1.  Any thread. */
int tb_ttsws_parse(const char *name);
/* The HTTP dialect (ttsapi.h) whose key variable, defaults and rates a
 * WebSocket dialect shares, or -1.  Any thread. */
int tb_ttsws_base_api(int api);

/* The dialect's path, as tb_ttsapi_base (ttsapi.h) reads it
 * ("/v1/text-to-speech/{voice}/stream-input", "/tts/websocket"); NULL out
 * of range.  Any thread. */
const char *tb_ttsws_path(int api);

/*
 * The loop of one event-loop thread (above).
 *
 * tb_ttsws_loop_create - a libuv loop and a libwebsockets context on it,
 * no connection yet; tls: for wss URLs (tb_ttsws_url_tls: its context
 * has OpenSSL; a loop without serves only ws).  0, TB_EIO (libuv: no
 * loop) or TB_ENOMEM (no context: also when the libuv event-loop plugin
 * of libwebsockets is not installed; why in err).  *out is the caller's.
 * libwebsockets 4.1 keeps OpenSSL state in globals each TLS context
 * resets: with several TLS loops alive at once, all but the last made
 * leak their CA store when destroyed, and lws refuses a certificate
 * that failed verification even with --tts-insecure for a connection
 * begun before another loop was made (ttsws_loop.c says more).
 *
 * tb_ttsws_loop_destroy - closes what is left and frees the loop, after
 * every client on it was destroyed; NULL is a no-op.  It may run the
 * loop for up to a second while connections close (what is still open
 * then is left allocated, never freed under libwebsockets).
 *
 * tb_ttsws_loop_fd - the descriptor that is readable when a connection
 * needs service (libuv's epoll set): poll it (POLLIN) or add it to an
 * epoll set of the caller's; never read it.
 *
 * tb_ttsws_loop_timeout - ms until the loop needs service even with its
 * descriptor quiet (a timer of libwebsockets'; 0: now), or -1: none.
 *
 * tb_ttsws_loop_service - services every connection of the loop without
 * waiting: what was received is read and stamped, what was queued is
 * written.  Call it after a wait, and before waiting again once clients
 * were stepped (their messages are written here).
 *
 * The thread that created the loop calls all of these.
 */
struct tb_ttsws_loop;
int tb_ttsws_loop_create(struct tb_ttsws_loop **out, int tls, char *err, size_t errlen);
/* Whether url (a provider's base, as a user writes it) needs TLS: wss://
 * or https://.  Any thread. */
int tb_ttsws_url_tls(const char *url);
void tb_ttsws_loop_destroy(struct tb_ttsws_loop *l);
int tb_ttsws_loop_fd(const struct tb_ttsws_loop *l);
int tb_ttsws_loop_timeout(const struct tb_ttsws_loop *l);
void tb_ttsws_loop_service(struct tb_ttsws_loop *l);

struct tb_ttsws;

/*
 * tb_ttsws_create - a client for dialect api (enum tb_ttsws_api) with the
 * options of ttsnet.h (o->api is not read; url is the provider's base,
 * taken as it is (tb_ttsnet_create resolves the URL a user wrote first,
 * tb_ttsapi_base):
 * "wss://api.elevenlabs.io", "https://api.cartesia.ai" (read as wss),
 * "ws://127.0.0.1:PORT"; max_redirects is not read: no redirect is
 * followed), and starts the connection.  Returns 0, TB_EINVAL (the
 * reason in err: no URL, a scheme other than ws, wss, http, https, a
 * rate the dialect does not take, a model or voice with a character a
 * URL or JSON string cannot carry) or TB_ENOMEM.
 */
int tb_ttsws_create(int api, const struct tb_ttsnet_opts *o, struct tb_ttsws **out, char *err,
                    size_t errlen);

/* Closes the connection (no callback runs), frees everything; NULL is a
 * no-op. */
void tb_ttsws_destroy(struct tb_ttsws *c);

/* As tb_ttsnet_submit. */
int tb_ttsws_submit(struct tb_ttsws *c, const char *text, size_t len);

/* As tb_ttsnet_step_fd: waits at most timeout_ms for the connection or
 * fd (-1: none), servicing the client's loop before and after the wait;
 * returns the chunks not ended yet, or TB_ENOMEM / TB_EIO.  On a loop the
 * client shares (opts.ws_loop), a step with timeout_ms 0 neither waits nor
 * services the loop: it takes what the loop's last service received and
 * queues what may be sent, and the loop's owner services the loop (once
 * for all its clients, tb_ttsws_loop_service). */
int tb_ttsws_step_fd(struct tb_ttsws *c, int fd, int timeout_ms);
int tb_ttsws_step(struct tb_ttsws *c, int timeout_ms);

/* As tb_ttsnet_finish: sends the dialect's end message once every chunk
 * was sent, then steps until every chunk has ended or deadline. */
int tb_ttsws_finish(struct tb_ttsws *c, double deadline);

/* As tb_ttsnet_cancel. */
void tb_ttsws_cancel(struct tb_ttsws *c);

const struct tb_tts_log *tb_ttsws_log(const struct tb_ttsws *c);
void tb_ttsws_take_log(struct tb_ttsws *c, struct tb_tts_log *out);
uint32_t tb_ttsws_failed(const struct tb_ttsws *c);

#endif

/*
 * test_serve_unit.c - pure modules tested directly rather than through
 * sockets or whole runs: the mock server's HTTP request scanner and parser
 * (serve_http.c), its deadline heap (serve_heap.h) and its plan of what to
 * send and when (serve_plan.c), its chunk writer (serve_chunk.c); and the
 * speech-rate drain (drain.c).  Each is a table of cases: input, then the
 * expected outcome; one runner a table, registered once per row.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/serve/serve_chunk.h"
#include "../src/serve/serve_heap.h"
#include "../src/serve/serve_http.h"
#include "../src/serve/serve_plan.h"
#include "tests.h"
#include "ttsbuf/drain.h"
#include "ttsbuf/ring.h"
#include "ttsbuf/serve.h"
#include "ttsbuf/sim.h"
#include "ttsbuf/error.h"

/* ---- HTTP request heads ---- */

struct scan_case {
    const char *name, *in;
    int rc;     /* tb_serve_http_scan on the whole input */
    size_t len; /* the head's length when rc == 1 */
};

static const struct scan_case scan_cases[] = {
    {"complete", "GET / HTTP/1.1\r\nHost: a\r\n\r\nBODY", 1, 27},
    {"incomplete", "GET / HTTP/1.1\r\nHost: a\r\n", 0, 0},
    {"empty line first", "\r\nGET", 1, 2},
    {"bare LF", "GET / HTTP/1.1\nHost: a\n\n", -1, 0},
    {"bare CR", "GET / HTTP/1.1\rHost: a\r\n\r\n", -1, 0},
    {"CR at the end waits", "GET / HTTP/1.1\r", 0, 0},
    {"empty", "", 0, 0},
};

/* Whole, and again one byte at a time: the same verdict and length. */
static void http_scan_run(void **state)
{
    const struct scan_case *c = *state;
    size_t n = strlen(c->in), scan = 0, step = 0;
    int rc = tb_serve_http_scan(c->in, n, &scan), rc2 = 0;
    if (rc != c->rc || (rc == 1 && scan != c->len))
        fail_msg("%s: rc %d len %zu, want %d %zu", c->name, rc, scan, c->rc, c->len);
    for (size_t have = 1; have <= n; have++) {
        rc2 = tb_serve_http_scan(c->in, have, &step);
        if (rc2 != 0)
            break;
    }
    if (rc2 != rc || (rc == 1 && step != scan))
        fail_msg("%s: byte by byte rc %d len %zu, whole %d %zu", c->name, rc2, step, rc, scan);
}

struct parse_case {
    const char *name, *in;
    int status; /* 0: accepted */
    int method;
    const char *path;
    uint64_t length;
    int expect;
    const char *msg; /* a part of the error message */
};

static const struct parse_case parse_cases[] = {
    {"get", "GET /v1/models HTTP/1.1\r\nHost: a\r\n\r\n", 0, TB_SERVE_HTTP_GET, "/v1/models", 0, 0,
     NULL},
    {"post with query and length",
     "POST /v1/chat/completions?x=1 HTTP/1.1\r\nHost: a\r\ncontent-LENGTH:  42 \r\n\r\n", 0,
     TB_SERVE_HTTP_POST, "/v1/chat/completions", 42, 0, NULL},
    {"expect", "POST /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\n\r\n", 0, TB_SERVE_HTTP_POST,
     "/x", 0, 1, NULL},
    {"other method", "DELETE /x HTTP/1.1\r\nHost: a\r\n\r\n", 0, TB_SERVE_HTTP_OTHER, "/x", 0, 0,
     NULL},
    {"http/1.0 needs no host", "GET / HTTP/1.0\r\n\r\n", 0, TB_SERVE_HTTP_GET, "/", 0, 0, NULL},
    {"no host", "GET / HTTP/1.1\r\n\r\n", 400, 0, NULL, 0, 0, "exactly one Host"},
    {"two hosts", "GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", 400, 0, NULL, 0, 0,
     "exactly one Host"},
    {"http/2", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505, 0, NULL, 0, 0, "HTTP/1.0 and HTTP/1.1"},
    {"bad version", "GET / HTTQ/1.1\r\nHost: a\r\n\r\n", 400, 0, NULL, 0, 0, "HTTP version"},
    {"chunked body", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n", 411, 0,
     NULL, 0, 0, "send Content-Length"},
    {"target not a path", "GET x HTTP/1.1\r\nHost: a\r\n\r\n", 400, 0, NULL, 0, 0,
     "request target"},
    {"folding", "GET / HTTP/1.1\r\nHost: a\r\n b\r\n\r\n", 400, 0, NULL, 0, 0, "folding"},
    {"space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400, 0, NULL, 0, 0,
     "malformed header line"},
    {"control byte", "GET / HTTP/1.1\r\nHost: a\x01\r\n\r\n", 400, 0, NULL, 0, 0,
     "control character"},
    {"two lengths", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
     400, 0, NULL, 0, 0, "repeated Content-Length"},
    {"length not a number", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", 400, 0,
     NULL, 0, 0, "not a number"},
    {"empty request line", "\r\n", 400, 0, NULL, 0, 0, "empty request line"},
    {"no request line", "GARBAGE\r\n\r\n", 400, 0, NULL, 0, 0, "request line"},
    {"two spaces before the target", "GET  /x HTTP/1.1\r\nHost: a\r\n\r\n", 400, 0, NULL, 0, 0,
     "target"},
    {"length with a letter", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1x\r\n\r\n", 400, 0,
     NULL, 0, 0, "Content-Length"},
};

static void http_parse_run(void **state)
{
    const struct parse_case *c = *state;
    struct tb_serve_http_head h;
    char err[200] = "";
    size_t n = strlen(c->in), scan = 0;
    int rc;
    if (tb_serve_http_scan(c->in, n, &scan) != 1)
        fail_msg("%s: the head does not end", c->name);
    rc = tb_serve_http_parse(c->in, scan, &h, err, sizeof(err));
    if (c->status != 0) {
        if (rc != TB_EFORMAT || h.status != c->status || strstr(err, c->msg) == NULL)
            fail_msg("%s: rc %d status %d \"%s\", want %d \"%s\"", c->name, rc, h.status, err,
                     c->status, c->msg);
        return;
    }
    if (rc != 0)
        fail_msg("%s: refused: %s", c->name, err);
    assert_int_equal(h.len, scan);
    assert_int_equal(h.method, c->method);
    assert_int_equal(h.path_len, strlen(c->path));
    assert_memory_equal(c->in + h.path_off, c->path, h.path_len);
    assert_int_equal(h.content_length, c->length);
    assert_int_equal(h.expect_continue, c->expect);
}

static void http_resp_head(void **state)
{
    char buf[256], small[40];
    size_t n;
    (void)state;
    n = tb_serve_http_resp(buf, sizeof(buf), 429, "application/json", 12, "Retry-After: 1\r\n");
    assert_true(n > 0 && n < sizeof(buf));
    buf[n] = '\0';
    assert_non_null(strstr(buf, "HTTP/1.1 429 Too Many Requests\r\n"));
    assert_non_null(strstr(buf, "Content-Length: 12\r\n"));
    assert_non_null(strstr(buf, "Retry-After: 1\r\n"));
    assert_string_equal(buf + n - 4, "\r\n\r\n");
    n = tb_serve_http_resp(buf, sizeof(buf), 200, "text/event-stream", -1, NULL);
    buf[n] = '\0';
    assert_non_null(strstr(buf, "Transfer-Encoding: chunked\r\n"));
    assert_null(strstr(buf, "Content-Length"));
    assert_int_equal(tb_serve_http_resp(small, sizeof(small), 200, "text/event-stream", -1, NULL),
                     0);
    assert_string_equal(tb_serve_http_reason(299), "Error");
}

/* ---- The deadline heap, against a brute-force minimum ---- */

#define HEAP_NODES 200

static void heap_against_brute_force(void **state)
{
    struct tb_serve_heap h = {NULL, 0, 0};
    struct tb_serve_heap_node nodes[HEAP_NODES];
    uint64_t x = 0x9E3779B97F4A7C15u;
    (void)state;
    for (size_t i = 0; i < HEAP_NODES; i++)
        tb_serve_heap_node_init(&nodes[i]);
    for (int step = 0; step < 20000; step++) {
        size_t i, in = 0;
        int64_t best = INT64_MAX;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        i = (size_t)(x % HEAP_NODES);
        if (x & (1u << 20))
            tb_serve_heap_remove(&h, &nodes[i]);
        else
            assert_int_equal(tb_serve_heap_set(&h, &nodes[i], (int64_t)(x >> 40) % 1000), 0);
        for (size_t k = 0; k < HEAP_NODES; k++)
            if (nodes[k].idx != TB_SERVE_HEAP_NONE) {
                in++;
                assert_ptr_equal(h.a[nodes[k].idx].node, &nodes[k]);
                assert_int_equal(h.a[nodes[k].idx].due, nodes[k].due);
                if (nodes[k].due < best)
                    best = nodes[k].due;
            }
        assert_int_equal(h.n, in);
        if (in == 0)
            assert_null(tb_serve_heap_top(&h));
        else
            assert_int_equal(tb_serve_heap_top(&h)->due, best);
    }
    /* Popping everything comes out in order. */
    for (int64_t last = INT64_MIN; h.n > 0;) {
        struct tb_serve_heap_node *t = tb_serve_heap_top(&h);
        assert_true(t->due >= last);
        last = t->due;
        tb_serve_heap_remove(&h, t);
    }
    free(h.a);
}

/* ---- The plan ---- */

struct plan_case {
    const char *name, *faults;
    int legacy;
    uint64_t max_tokens;
    const char *want; /* the items, then "cut" when max_tokens ended it */
    double per_token; /* the prefill cost: s per input token ... */
    uint64_t tokens;  /* ... and the request's input tokens */
};

/* Five one-token events "A".."E" at 0.1 .. 0.5 s. */
static const struct plan_case plan_cases[] = {
    {"plain", "", 0, 0, "0-1 t0+1 @100|1-2 t1+1 @200|2-3 t2+1 @300|3-4 t3+1 @400|4-5 t4+1 @500|", 0,
     0},
    {"stall moves the rest", "stall@2:1", 0, 0,
     "0-1 t0+1 @100|1-2 t1+1 @200|2-3 t2+1 @1300|3-4 t3+1 @1400|4-5 t4+1 @1500|", 0, 0},
    {"burst groups", "burst@2", 0, 0, "0-2 t0+2 @200|2-4 t2+2 @400|4-5 t4+1 @500|", 0, 0},
    {"drop ends", "drop@3", 0, 0, "0-1 t0+1 @100|1-2 t1+1 @200|2-3 t2+1 @300|3-4 t3+1 @400 drop|",
     0, 0},
    {"error ends", "error@1", 0, 0, "0-1 t0+1 @100|1-2 t1+1 @200 error|", 0, 0},
    {"malformed goes on", "malformed@4", 0, 0,
     "0-1 t0+1 @100|1-2 t1+1 @200|2-3 t2+1 @300|3-4 t3+1 @400|4-5 t4+1 @500 malformed|", 0, 0},
    {"fault inside a burst", "burst@2+drop@3", 0, 0, "0-2 t0+2 @200|2-4 t2+2 @400 drop|", 0, 0},
    {"max_tokens cuts", "", 0, 3, "0-1 t0+1 @100|1-2 t1+1 @200|2-3 t2+1 @300|cut", 0, 0},
    {"max_tokens never splits a burst", "burst@2", 0, 3, "0-2 t0+2 @200|cut", 0, 0},
    {"reasoning first", "reasoning@2", 0, 0,
     "r0 t0+1 @0|r1 t1+1 @50|0-1 t2+1 @100|1-2 t3+1 @200|2-3 t4+1 @300|3-4 t5+1 @400|"
     "4-5 t6+1 @500|",
     0, 0},
    {"legacy has no reasoning", "reasoning@2", 1, 2, "0-1 t0+1 @100|1-2 t1+1 @200|cut", 0, 0},
    {"prefill moves every item", "", 0, 0,
     "0-1 t0+1 @150|1-2 t1+1 @250|2-3 t2+1 @350|3-4 t3+1 @450|4-5 t4+1 @550|", 0.001, 50},
    {"prefill before reasoning, and a stall after it", "reasoning@2+stall@3:1", 0, 0,
     "r0 t0+1 @100|r1 t1+1 @150|0-1 t2+1 @200|1-2 t3+1 @1300|2-3 t4+1 @1400|3-4 t5+1 @1500|"
     "4-5 t6+1 @1600|",
     0.0005, 200},
    {"no input tokens, no prefill", "", 0, 2, "0-1 t0+1 @100|1-2 t1+1 @200|cut", 1.0, 0},
};

/* Five one-token events "A".."E" at 0.1 .. 0.5 s. */
static void plan_stream(struct tb_stream *s)
{
    tb_stream_init(s);
    for (int i = 0; i < 5; i++) {
        char t[2] = {(char)('A' + i), '\0'};
        assert_int_equal(tb_stream_append(s, 0.1 * (i + 1), t, 1, 1, TB_KIND_CONTENT), 0);
    }
}

static void plan_run(void **state)
{
    const struct plan_case *c = *state;
    struct tb_stream s;
    struct tb_faults f;
    struct tb_serve_plan p;
    struct tb_serve_item it;
    char *text = NULL, got[512] = "", err[160];
    size_t text_cap = 0, at = 0;
    plan_stream(&s);
    tb_faults_init(&f);
    assert_int_equal(tb_faults_parse(c->faults, &f, err, sizeof(err)), 0);
    tb_serve_plan_init(&p, &s, &f, c->legacy, c->max_tokens);
    tb_serve_plan_prefill(&p, c->per_token, c->tokens);
    while (tb_serve_plan_next(&p, &it)) {
        size_t n = tb_serve_plan_text(&p, &it, &text, &text_cap);
        size_t want_len = 0;
        const char *piece;
        size_t plen;
        for (size_t q = 0; tb_serve_plan_piece(&p, &it, q, &piece, &plen); q++) {
            assert_memory_equal(text + want_len, piece, plen);
            want_len += plen;
        }
        assert_int_equal(n, want_len);
        if (it.i1 > it.i0)
            at += (size_t)snprintf(got + at, sizeof(got) - at, "%zu-%zu", it.i0, it.i1);
        else
            at += (size_t)snprintf(got + at, sizeof(got) - at, "r%u", (unsigned)it.r);
        at += (size_t)snprintf(got + at, sizeof(got) - at, " t%llu+%llu @%lld%s%s%s|",
                               (unsigned long long)it.tok0, (unsigned long long)it.ntok,
                               (long long)(it.due / 1000000), it.drop ? " drop" : "",
                               it.error ? " error" : "", it.malformed ? " malformed" : "");
    }
    if (p.cut)
        snprintf(got + at, sizeof(got) - at, "cut");
    assert_int_equal(tb_serve_plan_next(&p, &it), 0); /* the end stays the end */
    if (strcmp(got, c->want) != 0)
        fail_msg("%s:\n got %s\nwant %s", c->name, got, c->want);
    free(text);
    tb_stream_free(&s);
}

/* ---- The chunk writer ---- */

/* The first item of a stream of events (texts may hold a NUL: lengths
 * given) with the faults, written by serve_chunk.c for request 7 with the
 * model; want: the exact object, as cJSON 1.7 would print it. */
struct chunk_case {
    const char *name;
    int legacy, kind;
    const char *model, *faults;
    const char *text[2];
    size_t len[2];
    const char *want;
};

#define CHAT7(model, delta)                                                                        \
    "{\"id\":\"chatcmpl-ttsbuf-7\",\"object\":\"chat.completion.chunk\",\"created\":0,"            \
    "\"model\":\"" model "\",\"choices\":[{\"index\":0,\"delta\":" delta                           \
    ",\"finish_reason\":null}]}"
#define LEGACY7(text)                                                                              \
    "{\"id\":\"cmpl-ttsbuf-7\",\"object\":\"text_completion\",\"created\":0,\"model\":\"m\","      \
    "\"choices\":[{\"text\":\"" text "\",\"index\":0,\"logprobs\":null,\"finish_reason\":null}]}"

/* clang-format off */
static const struct chunk_case chunk_cases[] = {
    {"chat content", 0, TB_KIND_CONTENT, "m", "", {"Hi"}, {2},
     CHAT7("m", "{\"content\":\"Hi\"}")},
    {"chat reasoning", 0, TB_KIND_REASONING, "m", "", {"hmm"}, {3},
     CHAT7("m", "{\"reasoning_content\":\"hmm\"}")},
    {"legacy", 1, TB_KIND_CONTENT, "m", "", {"Hi"}, {2}, LEGACY7("Hi")},
    {"escapes by name and by number; '/' as it is", 0, TB_KIND_CONTENT, "m", "",
     {"\"\\/\b\f\n\r\t\x01\x1f"}, {10},
     CHAT7("m", "{\"content\":\"\\\"\\\\/\\b\\f\\n\\r\\t\\u0001\\u001f\"}")},
    {"DEL and bytes from 0x80 up pass through, valid UTF-8 or not", 1, TB_KIND_CONTENT, "m", "",
     {"\x7f\xc3\xa9\xe2\x80\xa8\xff"}, {7}, LEGACY7("\x7f\xc3\xa9\xe2\x80\xa8\xff")},
    {"the model escaped once, in the head", 0, TB_KIND_CONTENT, "m\"\\\x07", "", {"x"}, {1},
     CHAT7("m\\\"\\\\\\u0007", "{\"content\":\"x\"}")},
    {"a burst joins its events", 0, TB_KIND_CONTENT, "m", "burst@2", {"ab", "cd"}, {2, 2},
     CHAT7("m", "{\"content\":\"abcd\"}")},
    {"a NUL ends the text", 0, TB_KIND_CONTENT, "m", "", {"x\0y"}, {3},
     CHAT7("m", "{\"content\":\"x\"}")},
    {"a NUL ends a burst's text too", 0, TB_KIND_CONTENT, "m", "burst@2", {"a\0b", "cd"}, {3, 2},
     CHAT7("m", "{\"content\":\"a\"}")},
};
/* clang-format on */

static void chunk_run(void **state)
{
    const struct chunk_case *c = *state;
    struct tb_serve_json_ctx ctx = {c->legacy ? TB_API_COMPLETIONS : TB_API_CHAT, 7, c->model};
    struct tb_serve_chunk k;
    struct tb_stream s;
    struct tb_faults f;
    struct tb_serve_plan p;
    struct tb_serve_item it;
    char err[160], *out;
    size_t n, wrote;
    tb_stream_init(&s);
    for (size_t i = 0; i < 2 && c->text[i] != NULL; i++)
        assert_int_equal(tb_stream_append(&s, 0.1, c->text[i], c->len[i], 1, c->kind), 0);
    tb_faults_init(&f);
    assert_int_equal(tb_faults_parse(c->faults, &f, err, sizeof(err)), 0);
    tb_serve_plan_init(&p, &s, &f, c->legacy, 0);
    assert_true(tb_serve_plan_next(&p, &it));
    assert_int_equal(tb_serve_chunk_init(&k, &ctx), 0);
    n = tb_serve_chunk_len(&k, &p, &it);
    out = malloc(n + 1); /* exactly its size, plus a NUL of ours */
    assert_non_null(out);
    wrote = tb_serve_chunk_write(&k, &p, &it, out);
    out[wrote] = '\0';
    assert_int_equal(wrote, n);
    if (strcmp(out, c->want) != 0)
        fail_msg("%s:\n got %s\nwant %s", c->name, out, c->want);
    free(out);
    tb_serve_chunk_free(&k);
    tb_serve_chunk_free(&k); /* freed: a no-op */
    tb_stream_free(&s);
}

/* ---- The drain ---- */

/* How a test steps the drain while pushing. */
enum step_how { STEP_EACH, STEP_EVERY3, STEP_AT_END };

struct drain_run {
    struct tb_sim_result r;
    struct tb_drain_status st; /* its live view after the last step */
    size_t left;               /* items still in the ring at the end */
    int full;                  /* a push was refused */
};

/* Pushes n events (text each, every dt s) into a ring of `slots`,
 * stepping the drain as `how` says (with the time of the last push), then
 * finishes and steps to the end. */
static void drain_run(const char *text, size_t n, double dt, size_t slots, enum step_how how,
                      struct drain_run *out)
{
    struct tb_sim_opts o;
    struct tb_ring *ring;
    struct tb_drain *d;
    double next = INFINITY, now = 0;
    memset(out, 0, sizeof(*out));
    tb_sim_opts_default(&o);
    o.ring_slots = slots;
    assert_int_equal(tb_ring_create(o.ring_slots, o.ring_bytes, &ring), 0);
    assert_int_equal(tb_drain_create(&o, ring, NULL, NULL, &d), 0);
    for (size_t k = 0; k < n; k++) {
        now = dt * (double)(k + 1);
        while (tb_ring_push(ring, now, text, (uint32_t)strlen(text), 1, TB_KIND_CONTENT) != 0) {
            size_t held = tb_ring_count(ring);
            out->full = 1;
            /* The producer waits: the drain must make room. */
            assert_int_equal(tb_drain_step(d, now, &next), 0);
            if (tb_ring_count(ring) >= held) {
                assert_false(isinf(next));
                now = next > now ? next : now;
                assert_int_equal(tb_drain_step(d, now, &next), 0);
            }
        }
        if (how == STEP_EACH || (how == STEP_EVERY3 && k % 3 == 2))
            assert_int_equal(tb_drain_step(d, now, &next), 0);
    }
    assert_int_equal(tb_drain_step(d, now, &next), 0);
    assert_int_equal(tb_drain_finish(d), 0);
    assert_int_equal(tb_drain_step(d, INFINITY, &next), 0);
    assert_true(isinf(next));
    assert_int_equal(tb_drain_result(d, &out->r), 0);
    tb_drain_status(d, now, &out->st);
    out->left = tb_ring_count(ring);
    tb_drain_destroy(d);
    tb_ring_destroy(ring);
}

struct drain_case {
    const char *name, *text;
    size_t n;
    double dt;
    size_t slots;
};

static const struct drain_case drain_cases[] = {
    {"fast sentences", "Word. ", 40, 0.01, 1024},
    {"slow sentences", "Word. ", 40, 0.5, 1024},
    {"one sentence", "Word.", 1, 0.1, 1024},
    {"no sentence end", "word ", 60, 0.05, 1024},
};

/* Its figures come from the items' arrival times, never from when it
 * looked: stepping after every push, every third, or only at the end
 * gives the same result; and everything is released at the end. */
static void drain_stepping_run(void **state)
{
    const struct drain_case *c = *state;
    struct drain_run a, b, e;
    drain_run(c->text, c->n, c->dt, c->slots, STEP_EACH, &a);
    drain_run(c->text, c->n, c->dt, c->slots, STEP_EVERY3, &b);
    drain_run(c->text, c->n, c->dt, c->slots, STEP_AT_END, &e);
    if (a.left != 0 || b.left != 0 || e.left != 0)
        fail_msg("%s: items left in the ring", c->name);
    assert_int_equal(a.r.events, c->n);
    assert_int_equal(a.r.content_tokens, c->n);
    assert_true(a.r.ttft == c->dt);
    const struct tb_sim_result *rs[2] = {&b.r, &e.r};
    for (int i = 0; i < 2; i++) {
        const struct tb_playout_result *p = &a.r.play, *q = &rs[i]->play;
        if (p->chunks != q->chunks || p->ttfa != q->ttfa || p->end != q->end ||
            p->underruns != q->underruns || p->gap_total != q->gap_total ||
            rs[i]->events != a.r.events || rs[i]->ttft != a.r.ttft)
            fail_msg("%s: stepping %d differs: chunks %u/%u ttfa %g/%g end %g/%g "
                     "underruns %u/%u",
                     c->name, i + 1, p->chunks, q->chunks, p->ttfa, q->ttfa, p->end, q->end,
                     p->underruns, q->underruns);
    }
    /* The live view agrees with the result at the end. */
    assert_int_equal(a.st.events, c->n);
    assert_int_equal(a.st.underruns, a.r.play.underruns);
}

/* A ring too small for a stream with no sentence end (so no chunk closes
 * and no release is due): the waiting producer makes the drain cut the
 * open chunk, counted, and nothing is lost. */
static void drain_makes_room(void **state)
{
    struct drain_run r;
    (void)state;
    drain_run("word ", 200, 0.001, 8, STEP_EACH, &r);
    assert_true(r.full);
    assert_true(r.r.forced_cuts > 0);
    assert_int_equal(r.r.events, 200);
    assert_int_equal(r.left, 0);
}

#define NROWS(a) (sizeof(a) / sizeof((a)[0]))
#define ROWS(table, run)                                                                           \
    for (size_t i = 0; i < NROWS(table); i++)                                                      \
        tests[n++] = (struct CMUnitTest)                                                           \
        {                                                                                          \
            (table)[i].name, (run), NULL, NULL, (void *)&(table)[i]                                \
        }

/* The seed of a request's stream (serve.h's Streams): the source's own
 * for the first request without an id, a different one for every other
 * request (ids and numbers apart), the same one for the same request,
 * and exact in a JSON number. */
static void request_seeds(void **state)
{
    static const char *const ids[] = {"r0", "r1", "c0.t0", "c0.t1", "c1.t0", "1", "2"};
    uint64_t seen[64];
    size_t n = 0;
    (void)state;
    assert_true(tb_serve_request_seed(37, NULL, 1) == 37);
    assert_true(tb_serve_request_seed(37, NULL, 0) == 37);
    for (uint64_t k = 2; k < 40; k++)
        seen[n++] = tb_serve_request_seed(37, NULL, k);
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
        seen[n++] = tb_serve_request_seed(37, ids[i], 0);
        assert_true(tb_serve_request_seed(37, ids[i], 5) == seen[n - 1]); /* n not read */
    }
    seen[n++] = tb_serve_request_seed(38, "r0", 0); /* another seed, another set */
    seen[n++] = 37;
    for (size_t i = 0; i < n; i++) {
        assert_true(seen[i] < (1ull << 53) || seen[i] == 37);
        for (size_t k = 0; k < i; k++)
            if (seen[k] == seen[i])
                fail_msg("requests %zu and %zu draw the same seed %llu", k, i,
                         (unsigned long long)seen[i]);
    }
    assert_true(tb_serve_request_seed(37, "c0.t0", 0) == tb_serve_request_seed(37, "c0.t0", 0));
}

int tb_test_serve_unit(void)
{
    static const struct CMUnitTest own[] = {
        cmocka_unit_test(http_resp_head),
        cmocka_unit_test(heap_against_brute_force),
        cmocka_unit_test(drain_makes_room),
        cmocka_unit_test(request_seeds),
    };
    struct CMUnitTest tests[NROWS(scan_cases) + NROWS(parse_cases) + NROWS(plan_cases) +
                            NROWS(chunk_cases) + NROWS(drain_cases) + NROWS(own)];
    size_t n = 0;
    ROWS(scan_cases, http_scan_run);
    ROWS(parse_cases, http_parse_run);
    ROWS(plan_cases, plan_run);
    ROWS(chunk_cases, chunk_run);
    ROWS(drain_cases, drain_stepping_run);
    for (size_t i = 0; i < NROWS(own); i++)
        tests[n++] = own[i];
    return tb_test_run_group("serveunit", tests, n, NULL, NULL);
}

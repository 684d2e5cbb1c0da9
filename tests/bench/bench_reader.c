/*
 * bench_reader.c - the stream reader's cost per delta (reader.h), the
 * part of the live path every token takes: a chat response body of
 * READER_EVENTS deltas in memory, fed in 16 KiB reads as libcurl hands
 * them over, parsed and recorded into a stream.  Twice: with no secrets
 * (a run without a key) and with a run's secrets (an API key, a secret
 * header value and a URL key, as tb_http_secrets would add them), the
 * reader then scanning what the server sends for an echo of them.  The
 * ratio of the two is what the secrets cost per delta.  Best of REPS
 * (this thread's CPU time).
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench.h"
#include "ttsbuf.h"
#include "ttsbuf/reader.h"
#include "ttsbuf/secrets.h"

#define READER_EVENTS 1000000u
#define READ_SIZE 16384
#define REPS 5

static const char *const keys[] = {
    "sk-proj-Rk3uV9qLmZ2xWc7HtY4bNp8sDf1gJa6eQo5iUv0yTr3wXl9kMh2nBz7cVx4",
    "hdr-secret-5f0c9a7e21d84b36",
    "urlkey-AIzaSyD3mK8pQ2wX7vN1bC4",
};

/* The stream's deltas as a chat completions body, ending with [DONE]. */
static char *chat_body(const struct tb_stream *s, size_t *len)
{
    static const char pre[] = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"";
    static const char post[] = "\"},\"finish_reason\":null}]}\n\n";
    static const char end[] = "data: [DONE]\n\n";
    size_t cap = s->text_len * 2 + s->n * (sizeof(pre) + sizeof(post)) + sizeof(end), n = 0;
    char *b = malloc(cap);
    if (b == NULL)
        bench_die("reader", "out of memory");
    for (size_t i = 0; i < s->n; i++) {
        const char *t = tb_stream_text(s, i);
        memcpy(b + n, pre, sizeof(pre) - 1);
        n += sizeof(pre) - 1;
        for (uint32_t k = 0; k < s->ev[i].len; k++) {
            char c = t[k];
            if (c == '"' || c == '\\')
                b[n++] = '\\';
            if ((unsigned char)c < 0x20)
                c = ' ';
            b[n++] = c;
        }
        memcpy(b + n, post, sizeof(post) - 1);
        n += sizeof(post) - 1;
    }
    memcpy(b + n, end, sizeof(end) - 1);
    *len = n + sizeof(end) - 1;
    return b;
}

/* Seconds of CPU, best of REPS, to read body through a reader with
 * secrets (NULL: none); the deltas it recorded in *deltas. */
static double read_body(const char *body, size_t len, const struct tb_secrets *secrets,
                        size_t *deltas)
{
    struct tb_reader rd;
    struct tb_stream out;
    double best = 1e30;
    tb_stream_init(&out);
    if (tb_reader_init(&rd, TB_API_CHAT) != 0)
        bench_die("reader", "tb_reader_init");
    rd.secrets = secrets;
    for (int r = 0; r < REPS; r++) {
        double c0, c;
        tb_stream_clear(&out);
        c0 = bench_cpu(RUSAGE_THREAD, NULL);
        tb_reader_begin(&rd, &out, 0);
        for (size_t at = 0; at < len; at += READ_SIZE)
            if (tb_reader_feed(&rd, body + at, len - at < READ_SIZE ? len - at : READ_SIZE,
                               (double)at * 1e-9) != 0)
                break;
        tb_reader_end(&rd);
        c = bench_cpu(RUSAGE_THREAD, NULL) - c0;
        if (rd.error != 0)
            bench_die("reader", rd.message);
        if (c < best)
            best = c;
    }
    *deltas = out.n;
    tb_reader_free(&rd);
    tb_stream_free(&out);
    return best;
}

void bench_reader(void)
{
    struct tb_stream s;
    struct tb_secrets *set;
    size_t len, n0, n1;
    char *body;
    double none, with;
    tb_stream_init(&s);
    bench_synth(1000, 0.1, READER_EVENTS, &s);
    body = chat_body(&s, &len);
    if (tb_secrets_create(&set) != 0)
        bench_die("reader", "out of memory");
    for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
        if (tb_secrets_add(set, keys[k], strlen(keys[k])) != 0)
            bench_die("reader", "out of memory");
    none = read_body(body, len, NULL, &n0);
    with = read_body(body, len, set, &n1);
    if (n0 != s.n || n1 != s.n)
        bench_die("reader", "lost deltas");
    printf(
        "reader: tb_reader_feed, %zu chat deltas in memory (%.1f MB, %d KiB reads), best of %d\n",
        s.n, (double)len / 1e6, READ_SIZE / 1024, REPS);
    printf("  no secrets          %6.3f us/delta\n", none / (double)s.n * 1e6);
    printf("  a run's 3 secrets   %6.3f us/delta  (%.3fx)\n", with / (double)s.n * 1e6,
           with / none);
    tb_secrets_destroy(set);
    free(body);
    tb_stream_free(&s);
}

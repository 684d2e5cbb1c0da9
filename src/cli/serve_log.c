/*
 * serve_log.c - `ttsbuf serve --log FILE` (see serve_log.h): the request
 * log's lines as JSON.
 */
#include "serve_log.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "jsonout.h"
#include "ttsbuf/error.h"
#include "ttsbuf/jsonline.h"

int tb_cli_serve_log_open(struct tb_cli_serve_log *l, const char *path)
{
    memset(l, 0, sizeof(*l));
    l->path = path;
    if (strcmp(path, "-") == 0) {
        l->f = stdout;
        return 0;
    }
    l->f = fopen(path, "w");
    if (l->f == NULL) {
        tb_cli_error("--log: %s: %s", path, strerror(errno));
        return TB_EINVAL;
    }
    l->owned = 1;
    return 0;
}

/* Writes o as a line and flushes: the line is there when the request has
 * ended, for a reader that follows the file. */
static int put(struct tb_cli_serve_log *l, cJSON *o)
{
    int rc = tb_json_put_line(l->f, o);
    if (rc == 0 && fflush(l->f) != 0)
        rc = TB_EIO;
    if (rc != 0 && l->rc == 0) {
        l->rc = rc;
        snprintf(l->err, sizeof(l->err), "--log: %s: %s", l->path,
                 rc == TB_ENOMEM ? "out of memory" : strerror(errno != 0 ? errno : EIO));
    }
    return rc;
}

/* A seed, every digit of it (a 64-bit seed is not exact as a double), or
 * null. */
static void add_seed(cJSON *o, const char *key, int have, uint64_t seed)
{
    char num[24];
    snprintf(num, sizeof(num), "%llu", (unsigned long long)seed);
    if (have)
        cJSON_AddRawToObject(o, key, num);
    else
        cJSON_AddNullToObject(o, key);
}

int tb_cli_serve_log_header(struct tb_cli_serve_log *l, const struct tb_report_src *src,
                            const uint64_t *seed, int per_request, const char *url)
{
    cJSON *o, *s;
    if (l->f == NULL)
        return 0;
    o = tb_cli_json_doc(TB_SCHEMA_SERVE_LOG, TB_SCHEMA_SERVE_LOG_V, "serve");
    if (o != NULL && (s = cJSON_AddObjectToObject(o, "source")) != NULL) {
        cJSON_AddStringToObject(s, "kind", src->kind);
        cJSON_AddStringToObject(s, "name", src->name);
        add_seed(s, "seed", seed != NULL, seed != NULL ? *seed : 0);
        cJSON_AddStringToObject(s, "streams", per_request ? "per_request" : "same");
    }
    if (o != NULL) {
        cJSON_AddStringToObject(o, "listen", url);
        cJSON_AddStringToObject(o, "clock", "CLOCK_MONOTONIC");
    }
    return put(l, o);
}

/* Nanoseconds as seconds, or null (-1: none). */
static void add_time(cJSON *o, const char *key, int64_t ns)
{
    tb_json_add_num(o, key, ns < 0 ? NAN : (double)ns / 1e9);
}

/* A count, or null (-1: does not apply). */
static void add_count(cJSON *o, const char *key, int64_t v)
{
    if (v < 0)
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddNumberToObject(o, key, (double)v);
}

/* A flag: 1 true, 0 false, -1 null. */
static void add_flag(cJSON *o, const char *key, int v)
{
    if (v < 0)
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddBoolToObject(o, key, v != 0);
}

static void add_str(cJSON *o, const char *key, const char *v)
{
    if (v == NULL)
        cJSON_AddNullToObject(o, key);
    else
        cJSON_AddStringToObject(o, key, v);
}

int tb_cli_serve_log_write(struct tb_cli_serve_log *l, const struct tb_serve_request *r)
{
    cJSON *o;
    if (l->f == NULL || l->rc != 0)
        return l->rc;
    o = cJSON_CreateObject();
    if (o != NULL) {
        cJSON_AddNumberToObject(o, "seq", (double)r->seq);
        add_str(o, "route", r->route);
        if (r->stream < 0)
            cJSON_AddNullToObject(o, "stream");
        else
            cJSON_AddBoolToObject(o, "stream", r->stream);
        add_str(o, "request_id", r->request_id);
        add_str(o, "end", tb_serve_end_name(r->end));
        add_count(o, "http_status", r->http_status > 0 ? r->http_status : -1);
        add_time(o, "received_s", r->received);
        add_time(o, "first_byte_s", r->first_byte);
        add_time(o, "late_max_s", r->late_max);
        add_time(o, "end_s", r->ended);
        add_time(o, "closed_s", r->closed);
        add_count(o, "prompt_tokens", r->prompt_tokens);
        add_count(o, "tokens_sent", r->tokens_sent);
        add_count(o, "tokens_planned", r->tokens_planned);
        add_count(o, "tokens_unsent", r->tokens_unsent);
        add_seed(o, "seed", r->seeded, r->seed);
        add_count(o, "tts_chars", r->tts_chars);
        add_count(o, "audio_bytes_sent", r->audio_sent);
        add_count(o, "audio_bytes_planned", r->audio_planned);
        cJSON_AddNumberToObject(o, "bytes_sent", (double)r->bytes_sent);
        add_str(o, "refused_over", r->refused_over);
        add_count(o, "retry_after_s", r->retry_after);
        add_flag(o, "tool_call", r->tool_call);
        add_flag(o, "tool_result", r->tool_result);
        add_str(o, "tool_args", r->tool_args);
    }
    return put(l, o);
}

int tb_cli_serve_log_close(struct tb_cli_serve_log *l)
{
    int rc = l->rc;
    if (l->f != NULL && l->owned && fclose(l->f) != 0 && rc == 0) {
        rc = TB_EIO;
        snprintf(l->err, sizeof(l->err), "--log: %s: %s", l->path, strerror(errno));
    }
    l->f = NULL;
    return rc;
}

void tb_cli_serve_summary(const struct tb_serve_stats *st, const struct tb_serve_opts *so)
{
    fprintf(stderr,
            "ttsbuf serve: %llu requests, %llu streams, %llu events, %llu client_closed, "
            "%llu dropped; emission lateness p50 %.3f ms, p99 %.3f ms, max %.3f ms\n",
            (unsigned long long)st->requests, (unsigned long long)st->streams,
            (unsigned long long)st->events, (unsigned long long)st->client_closed,
            (unsigned long long)(st->dropped - st->client_closed), st->late_p50 * 1e3,
            st->late_p99 * 1e3, st->late_max * 1e3);
    if (st->loops > 1) {
        fprintf(stderr, "ttsbuf serve: %u loops took", st->loops);
        for (unsigned k = 0; k < st->loops; k++)
            fprintf(stderr, "%s %llu", k > 0 ? "," : "", (unsigned long long)st->loop_conns[k]);
        fprintf(stderr, " connections\n");
    }
    if (st->tts > 0)
        fprintf(stderr, "ttsbuf serve: mock TTS: %llu responses with audio, %llu audio bytes\n",
                (unsigned long long)st->tts, (unsigned long long)st->tts_bytes);
    if (st->over_conns > 0)
        fprintf(stderr, "ttsbuf serve: connection cap: %llu connections refused (503) over %zu\n",
                (unsigned long long)st->over_conns,
                so->max_conns > 0 ? so->max_conns : (size_t)TB_SERVE_CONNS_DEFAULT);
    if (st->refused > 0 || st->over_budget > 0)
        fprintf(stderr,
                "ttsbuf serve: memory budget: %llu requests refused (503), %llu clients dropped; "
                "peak %zu bytes held\n",
                (unsigned long long)st->refused, (unsigned long long)st->over_budget,
                st->mem_peak);
    if (so->max_inflight > 0)
        fprintf(stderr, "ttsbuf serve: max-inflight %zu: %llu completion requests refused (429)\n",
                so->max_inflight, (unsigned long long)st->over_inflight);
    if (so->tts_max_inflight > 0)
        fprintf(stderr, "ttsbuf serve: tts-max-inflight %zu: %llu TTS requests refused (429)\n",
                so->tts_max_inflight, (unsigned long long)st->tts_over_inflight);
}

/*
 * bench_tts.c - `ttsbuf bench --tts-url` (see bench_tts.h).
 */
#include "bench_tts.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <cJSON.h>

#include "cli.h"
#include "jsonout.h"
#include "replay.h"
#include "ttsbuf/error.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/ttsapi.h"

void tb_cli_bench_tts_opts(const struct tb_cli_bench *a, const char *base, struct tb_ttsnet_opts *o,
                           struct tb_sim_opts *sim)
{
    tb_cli_tts_live_net_opts(&a->tl, &a->c.tts, base, a->q.connect, a->q.insecure, o);
    sim->play.tts_concurrency = 0; /* measured, not modelled */
}

int tb_cli_bench_tts_meta(struct tb_bench_meta *m, const struct tb_cli_bench *a, const char *base)
{
    int mock = strcmp(a->tl.url, "mock") == 0;
    cJSON *j = cJSON_Parse(m->options), *t = NULL;
    struct tb_ttsnet_opts no;
    struct tb_tts_log head;
    char err[256], *out = NULL;
    int ok, rc;
    /* What each stream's client will say of itself: the endpoint posted
     * to, the voice and model sent. */
    tb_cli_tts_live_net_opts(&a->tl, &a->c.tts, base, a->q.connect, a->q.insecure, &no);
    rc = tb_ttsnet_describe(&no, &head, err, sizeof(err));
    head.url[strcspn(head.url, "?")] = '\0'; /* its query: the model and rate, said apart */
    if (rc != 0) {
        cJSON_Delete(j);
        tb_cli_error("%s%s", strncmp(err, "--tts-url", 9) == 0 ? "" : "--tts-url: ",
                     strncmp(err, "TTS URL: ", 9) == 0 ? err + 9 : err);
        return rc == TB_ENOMEM ? rc : TB_EINVAL;
    }
    ok = j != NULL;
    if (ok) {
        cJSON_DeleteItemFromObjectCaseSensitive(j, "voice_model");
        cJSON_DeleteItemFromObjectCaseSensitive(j, "tts_latency_s");
        ok = cJSON_AddNullToObject(j, "tts_latency_s") != NULL &&
             cJSON_AddStringToObject(j, "voice_model", "measured") != NULL &&
             (t = cJSON_AddObjectToObject(j, "tts_live")) != NULL;
    }
    ok = ok && cJSON_AddStringToObject(t, "api", head.api) != NULL &&
         cJSON_AddStringToObject(t, "url", mock ? "mock" : head.url) != NULL &&
         tb_cli_json_str_or_null(t, "model", head.model) != NULL &&
         tb_cli_json_str_or_null(t, "voice", head.voice) != NULL &&
         cJSON_AddNumberToObject(t, "sample_rate", a->tl.rate != 0 ? a->tl.rate : TB_TTSAPI_RATE) !=
             NULL &&
         cJSON_AddNumberToObject(t, "concurrency", head.concurrency) != NULL &&
         (a->tts_capacity == 0 ||
          cJSON_AddNumberToObject(t, "capacity", (double)a->tts_capacity) != NULL) &&
         cJSON_AddBoolToObject(t, "mock", mock) != NULL &&
         (out = cJSON_PrintUnformatted(j)) != NULL;
    cJSON_Delete(j);
    if (!ok) {
        cJSON_free(out);
        tb_cli_error("out of memory");
        return TB_ENOMEM;
    }
    if (strlen(out) >= sizeof(m->options)) {
        cJSON_free(out);
        tb_cli_error("bench: the options with the TTS take more than %zu bytes of JSON (a long "
                     "--tts-url?)",
                     sizeof(m->options) - 1);
        return TB_EINVAL;
    }
    snprintf(m->options, sizeof(m->options), "%s", out);
    cJSON_free(out);
    return 0;
}

/* One record: its stream played with the measured TTS; its LLM side is
 * the stream's as it arrived (tb_bench_rec_llm), whatever part played. */
static int replay_one(struct tb_bench_rec *rec, const struct tb_sim_opts *base)
{
    struct tb_sim_opts o = *base;
    struct tb_cli_replay rp;
    const struct tb_stream *play;
    char name[64], err[512];
    int rc;
    snprintf(name, sizeof(name), "bench: request %llu", (unsigned long long)rec->id);
    o.voice = NULL;
    rc = tb_cli_replay_prepare(&rp, rec->stream, &o, 0, name, &play);
    if (rc == 0) {
        rc = rp.failed != NULL && rp.upto.n == 0
                 ? TB_EEMPTY
                 : tb_bench_analyze_play(rec, play, &o, err, sizeof(err));
        if (rc == TB_EEMPTY) {
            /* nothing played (no content, or chunk 1 failed or was stopped
             * before its audio): no audio */
            rc = tb_bench_rec_llm(rec);
            rec->ttfa = rec->gap_total = rec->gap_max = NAN;
            rec->gap_llm = rec->gap_tts = rec->min_tps = rec->speedup = NAN;
            rec->underruns = 0;
            tb_turn_lat_clear(&rec->lat);
        } else if (rc != 0 && rp.mismatch[0] != '\0') {
            tb_cli_error("%s: replaying the measured TTS: %s", name, rp.mismatch);
        } else if (rc != 0) {
            tb_cli_error("%s: replaying the measured TTS: %s", name, err);
        } else {
            rc = tb_cli_replay_check(&rp, name, tb_seg_policy_name(o.seg.policy));
        }
    }
    tb_cli_replay_free(&rp);
    if (rc == TB_ENOMEM)
        tb_cli_error("out of memory");
    return rc == 0 || rc == TB_ENOMEM ? rc : TB_EIO;
}

int tb_cli_bench_tts_replay(struct tb_bench_recs *r, size_t from, const struct tb_sim_opts *o)
{
    int rc = 0;
    for (size_t i = from; rc == 0 && i < r->n; i++)
        if (r->v[i].stream->tts != NULL && r->v[i].call < 0) /* a call's turn: played at its end */
            rc = replay_one(&r->v[i], o);
    return rc;
}

int tb_cli_bench_tts_replay_turn(void *ud, struct tb_bench_rec *rec)
{
    return replay_one(rec, ud);
}

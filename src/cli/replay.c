/*
 * replay.c - the measured TTS of a trace replayed by `sim` (see
 * replay.h).
 *
 * The playout takes each chunk's L_j and R_j through its hooks
 * (tb_playout_opts_measured) and its D_j from the voice below, which
 * also holds each chunk the policy cut against the record of the same
 * number.  A failed record ends the speech: the stream played is then a
 * copy that ends where the text of the chunks before it ends (the sum of
 * their recorded lengths, in content bytes; a record stopped while its
 * audio came, "canceled" with audio, is one of them: what came of it
 * plays), and the voice's check makes sure that cut is where the policy
 * put it.
 */
#include "replay.h"

#include <math.h>
#include <string.h>

#include "cli.h"
#include "tts_opts.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"
#include "ttsbuf/seg.h"
#include "ttsbuf/utf8.h"

int tb_cli_replay_model_given(const struct tb_cli_tts *t)
{
    return t->latency != NULL || t->preset != NULL || t->connect_set || t->conc_set || t->rtf_set ||
           t->output_set;
}

int tb_cli_replay_wanted(const struct tb_stream *s, const struct tb_cli_tts *t)
{
    return s->tts != NULL && s->tts->n > 0 && !tb_cli_replay_model_given(t);
}

/* A chunk's text for a message, quoted: at most 40 bytes, cut at a
 * character ("..." after a cut), control characters escaped. */
static void excerpt(char *out, size_t cap, const char *p, size_t len)
{
    size_t n = len < 40 ? len : 40, o = 0;
    while (n > 0 && n < len && ((unsigned char)p[n] & 0xC0) == 0x80)
        n--;
    out[o++] = '"';
    for (size_t i = 0; i < n && o + 8 < cap; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch == '"' || ch == '\\') {
            out[o++] = '\\';
            out[o++] = (char)ch;
        } else if (ch < 0x20 || ch == 0x7f) {
            o += (size_t)snprintf(out + o, cap - o, "\\x%02x", ch);
        } else {
            out[o++] = (char)ch;
        }
    }
    out[o++] = '"';
    if (n < len && o + 4 < cap) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

/* The voice: chunk j lasts what its record measured, once its text is
 * the record's. */
static int voice_chunk(void *ud, uint32_t j, double c, const char *text, size_t len, uint32_t cps,
                       double *dur, double *busy)
{
    struct tb_cli_replay *rp = ud;
    const struct tb_tts_log *l = &rp->upto;
    char got[128], want[128];
    (void)c;
    (void)cps;
    rp->seen = j;
    if (j == 0 || j > l->n) {
        excerpt(got, sizeof(got), text, len);
        snprintf(rp->mismatch, sizeof(rp->mismatch),
                 "chunk %u %s is not in the record (%zu chunk%s%s)", j, got, l->n,
                 l->n == 1 ? "" : "s", rp->failed != NULL ? " before the failed one" : "");
        return TB_EFORMAT;
    }
    if (l->c[j - 1].len != len || memcmp(tb_tts_log_text(l, j - 1), text, len) != 0) {
        excerpt(got, sizeof(got), text, len);
        excerpt(want, sizeof(want), tb_tts_log_text(l, j - 1), l->c[j - 1].len);
        snprintf(rp->mismatch, sizeof(rp->mismatch), "chunk %u is %s, the record's is %s", j, got,
                 want);
        return TB_EFORMAT;
    }
    *dur = tb_playout_measured_duration(&rp->ctx, j);
    *busy = 0.0;
    return isfinite(*dur) ? 0 : TB_EINVAL;
}

/*
 * The stream up to the end of the text of the chunks before the failed
 * one: content events are copied until their bytes reach the recorded
 * texts' sum, the last one cut there (the voice checks that the policy
 * cut the same chunks); reasoning events before that point are kept.
 */
static int cut_view(struct tb_cli_replay *rp, const struct tb_stream *s, const char *name)
{
    uint64_t want = 0, have = 0;
    int rc = 0;
    for (size_t i = 0; i < rp->upto.n; i++)
        want += rp->upto.c[i].len;
    tb_stream_init(&rp->view);
    for (size_t i = 0; i < s->n && have < want && rc == 0; i++) {
        const struct tb_event *e = &s->ev[i];
        size_t len = e->len;
        if (e->kind == TB_KIND_CONTENT && have + len > want)
            len = (size_t)(want - have);
        if (len < e->len && tb_utf8_check(tb_stream_text(s, i), len) != len) {
            tb_cli_error("%s: the recorded chunks %s chunk %u end inside a character of "
                         "event %zu: the trace's chunks are not its text",
                         name, rp->spoke_cut ? "up to" : "before", rp->failed->chunk, i + 1);
            return TB_EFORMAT;
        }
        rc = tb_stream_append(&rp->view, e->t, tb_stream_text(s, i), len, e->tokens,
                              (enum tb_kind)e->kind);
        if (e->kind == TB_KIND_CONTENT)
            have += len;
    }
    if (rc != 0) {
        tb_cli_error("%s: %s", name, tb_strerror(rc));
        return rc;
    }
    /* Its answer is the one recorded; only the speech stops early.  With
     * nothing before the failed chunk nothing plays, which the simulator
     * takes from a stream that did not end whole (the report keeps the
     * trace's own end). */
    rp->view.end = s->end;
    if (rp->upto.n == 0)
        rp->view.end.kind = TB_END_ERROR;
    rp->view.usage_tokens = -1;
    rp->cut = 1;
    return 0;
}

int tb_cli_replay_prepare(struct tb_cli_replay *rp, const struct tb_stream *s,
                          struct tb_sim_opts *o, int speech, const char *name,
                          const struct tb_stream **play)
{
    const struct tb_tts_log *l = s->tts;
    int rc;
    memset(rp, 0, sizeof(*rp));
    tb_stream_init(&rp->view);
    *play = s;
    rp->log = l;
    rp->recorded_policy = s->chunk_policy;
    rc = tb_tts_stats_of(l, &rp->stats);
    if (rc != 0) {
        tb_cli_error("out of memory");
        return rc;
    }
    if (speech) {
        tb_cli_error("%s: the trace keeps the TTS's timings, not its audio: --audio and "
                     "--voice-model espeak need a model (--tts-latency 0 asks what eSpeak NG would "
                     "do; --html draws the measured timings without audio)",
                     name);
        return TB_EINVAL;
    }
    rp->upto = *l;
    for (size_t i = 0; i < l->n; i++)
        if (l->c[i].fail != TB_TTS_OK) {
            rp->failed = &l->c[i];
            /* A chunk stopped while its audio came (a barge-in, the run
             * stopped) plays what came: the caller heard it. */
            rp->spoke_cut = l->c[i].fail == TB_TTS_CANCELED && l->c[i].bytes > 0 &&
                            !isnan(l->c[i].first_byte) && isfinite(l->c[i].end);
            rp->upto.n = i + (size_t)rp->spoke_cut;
            break;
        }
    rp->voice.chunk = voice_chunk;
    rp->voice.ud = rp;
    rp->voice.model = "measured";
    rp->voice.follows_rate = 0;
    if (rp->failed != NULL && rp->upto.n == 0) {
        rp->on = 1; /* nothing to play: the first chunk failed */
        o->voice = &rp->voice;
        rc = cut_view(rp, s, name);
        if (rc == 0)
            *play = &rp->view;
        return rc;
    }
    rc = tb_playout_opts_measured(&o->play, &rp->ctx, &rp->upto);
    if (rc != 0) {
        tb_cli_error("%s: the TTS record of chunk %u cannot be replayed", name, rp->ctx.bad);
        return TB_EFORMAT;
    }
    o->voice = &rp->voice;
    o->lead_at = tb_playout_measured_lead; /* measured on the audio */
    o->lead_ud = &rp->ctx;
    rp->on = 1;
    if (rp->failed != NULL) {
        rc = cut_view(rp, s, name);
        if (rc == 0)
            *play = &rp->view;
    }
    return rc;
}

int tb_cli_replay_check(struct tb_cli_replay *rp, const char *name, const char *policy)
{
    if (!rp->on)
        return 0;
    if (rp->mismatch[0] == '\0' && rp->seen < rp->upto.n)
        snprintf(rp->mismatch, sizeof(rp->mismatch),
                 "the policy cut %u chunk%s, the record has %zu%s", rp->seen,
                 rp->seen == 1 ? "" : "s", rp->upto.n,
                 rp->failed != NULL ? " before the failed one" : "");
    if (rp->mismatch[0] == '\0')
        return 0;
    if (rp->recorded_policy[0] == '\0')
        tb_cli_error("%s: the TTS record does not match the chunks: %s (the trace does not say its "
                     "chunk policy: try --chunk NAME)",
                     name, rp->mismatch);
    else if (strcmp(rp->recorded_policy, policy) == 0)
        tb_cli_error("%s: the TTS record does not match the chunks: %s (recorded with --chunk %s, "
                     "as here: try the recording's --min-chars and the policy's options)",
                     name, rp->mismatch, rp->recorded_policy);
    else
        tb_cli_error("%s: the TTS record does not match the chunks: %s (recorded with --chunk %s: "
                     "try --chunk %s)",
                     name, rp->mismatch, rp->recorded_policy, rp->recorded_policy);
    return TB_EFORMAT;
}

int tb_cli_replay_arrived(const struct tb_cli_replay *rp, const struct tb_stream *s,
                          const struct tb_sim_opts *o, struct tb_sim_result *r)
{
    struct tb_sim_opts plain = *o;
    struct tb_sim_result whole;
    struct tb_clock clk;
    int rc;
    if (!rp->cut)
        return 0;
    plain.voice = NULL;
    tb_playout_opts_default(&plain.play);
    plain.play.wpm = o->play.wpm;
    plain.play.no_search = 1;
    tb_clock_virtual_init(&clk);
    rc = tb_sim_run(s, &plain, &clk, NULL, NULL, &whole, NULL, 0);
    if (rc == TB_ENOMEM) {
        tb_cli_error("out of memory");
        return rc;
    }
    if (rc != 0)
        return 0; /* the played part's counts stand */
    r->events = whole.events;
    r->content_events = whole.content_events;
    r->reasoning_events = whole.reasoning_events;
    r->content_tokens = whole.content_tokens;
    r->reasoning_tokens = whole.reasoning_tokens;
    r->usage_tokens = whole.usage_tokens;
    r->ttft = whole.ttft;
    r->last_t = whole.last_t;
    r->last_content_t = whole.last_content_t;
    r->first_tokens = whole.first_tokens;
    r->decode_tps = whole.decode_tps;
    r->decode_tps_usage = whole.decode_tps_usage;
    tb_cli_replay_heard_by(rp, NAN, &r->lat, r->play.ttfa);
    return 0;
}

void tb_cli_replay_heard_by(const struct tb_cli_replay *rp, double stop, struct tb_turn_lat *lat,
                            double ttfa)
{
    if (isnan(stop) && rp->spoke_cut)
        stop = rp->failed->end;
    tb_turn_lat_heard_by(lat, ttfa, stop);
}

const char *tb_cli_replay_whatif_reason(const struct tb_cli_replay *rp, const struct tb_sim_opts *o)
{
    if (!rp->on || !tb_seg_policy_timed(o->seg.policy))
        return NULL;
    return "the chunk policy re-cuts the stream at each rate, and the measured TTS is by chunk";
}

void tb_cli_replay_error(const char *who, const struct tb_cli_replay *rp, const struct tb_stream *s)
{
    const struct tb_tts_chunk *c = rp->failed;
    char st[32] = "", llm[96] = "";
    if (c->status > 0)
        snprintf(st, sizeof(st), " (HTTP %ld)", c->status);
    if (strcmp(s->end.error, "tts") == 0)
        snprintf(llm, sizeof(llm), "; the LLM stream was stopped then, at %.2f s, after %zu events",
                 s->end.t, s->n);
    tb_cli_error("%s: the speech ended at chunk %u: tts %s%s%s%s (the TTS: %s at %s)%s", who,
                 c->chunk, tb_tts_fail_name(c->fail), st, c->message[0] ? ": " : "", c->message,
                 rp->log->api, rp->log->url, llm);
}

void tb_cli_replay_free(struct tb_cli_replay *rp)
{
    tb_stream_free(&rp->view);
}

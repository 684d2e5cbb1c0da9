/*
 * speaker.c - eSpeak NG as the drain's timed voice, feeding a sink
 * (speaker.h): the speaker made for its options, the voice's chunk hook,
 * a provider's PCM handed in, and the result at the end.
 *
 * A chunk's speech is eSpeak NG's, stretched to the rate model's duration
 * when the voice follows it, or with no sink only its duration, cached by
 * text (speaker_render.c); the sink and each piece's time on it are
 * speaker_sink.c's.  What the three files share is speaker_state.h.
 *
 * With pcm_rate the speaker speaks nothing itself: a provider's PCM comes
 * in through tb_speaker_pcm, pcmfeed.c puts it in chunk order and times
 * it, and tb_speaker_pcm_out hands it to the sink.
 */
#include "ttsbuf/speaker.h"

#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pcmfeed.h"
#include "pcmhold.h"
#include "play/tts_stage.h"
#include "sink.h"
#include "speaker_render.h"
#include "speaker_sink.h"
#include "speaker_state.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"
#include "ttsbuf/playout.h"
#include "ttsbuf/tts.h"

static int on_chunk(void *ud, uint32_t index, double c, const char *text, size_t len, uint32_t cps,
                    double *dur, double *busy)
{
    struct tb_speaker *s = ud;
    const int16_t *pcm;
    size_t n;
    int rc;
    s->t_entry = s->mono.now(&s->mono);
    (void)index;
    (void)cps;
    s->chunks++;
    if (s->feed != NULL)
        return 0; /* the provider speaks it: tb_speaker_pcm */
    if (s->o.rate_model) {
        if (s->o.sink == TB_SINK_NONE)
            return 0; /* nothing to render: the rate model is the whole answer */
        rc = tb_speaker_render_rate(s, text, len, *dur, &pcm, &n);
        if (rc == 0)
            rc = tb_speaker_stage_play(s, c, *dur, pcm, n);
        if (rc != 0)
            s->failed = rc; /* the sink's code: a signal (TB_ECANCELED), I/O */
        return rc;
    }
    if (s->o.sink == TB_SINK_NONE)
        return tb_speaker_measure(s, text, len, dur, busy);
    *busy = 0.0; /* real time: synthesis delays the audio by itself */
    rc = tb_speaker_synth(s, text, len, &pcm, &n);
    if (rc != 0)
        return rc;
    *dur = (double)n / s->rate;
    rc = tb_speaker_stage_play(s, c, *dur, pcm, n);
    if (rc != 0)
        s->failed = rc;
    return rc;
}

/* A speaker for o, its voice the chunk hook, or NULL when out of memory. */
static struct tb_speaker *speaker_new(const struct tb_speaker_opts *o, int follows_rate,
                                      const char *model)
{
    struct tb_speaker *s = calloc(1, sizeof(*s));
    if (s == NULL)
        return NULL;
    s->o = *o;
    s->voice.chunk = on_chunk;
    s->voice.ud = s;
    s->voice.follows_rate = follows_rate;
    s->voice.model = model;
    tb_clock_monotonic_init(&s->mono);
    return s;
}

/* The player's options for s's sink at s->rate: its own pre-roll. */
static void player_opts(const struct tb_speaker *s, struct tb_pcmring_opts *po)
{
    memset(po, 0, sizeof(*po));
    po->rate = s->rate;
    po->capacity = s->o.ring_frames ? s->o.ring_frames : ((size_t)1 << 22);
    po->preroll = s->o.play.preroll;
    po->cue = s->o.cue;
}

/* A speaker for a provider's PCM (pcm_rate): no eSpeak NG, no stage; the
 * sink at pcm_rate, and the feed that orders and times what arrives. */
static int pcm_create(const struct tb_speaker_opts *o, struct tb_speaker **out, char *err,
                      size_t errlen)
{
    struct tb_speaker *s;
    struct tb_pcmring_opts po;
    struct tb_pcmfeed_opts fo;
    int rc;
    if (o->pcm_rate < TB_SPEAKER_PCM_RATE_MIN || o->pcm_rate > TB_SPEAKER_PCM_RATE_MAX)
        return tb_seterr(err, errlen, TB_ERANGE, "a sample rate of %u Hz is outside %u to %u",
                         o->pcm_rate, TB_SPEAKER_PCM_RATE_MIN, TB_SPEAKER_PCM_RATE_MAX);
    if (o->sink == TB_SINK_NONE)
        return tb_seterr(err, errlen, TB_EINVAL,
                         "the provider's audio needs a sink to play it (wav or portaudio)");
    s = speaker_new(o, 1, "rate");
    if (s == NULL)
        return tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
    s->rate = o->pcm_rate;
    player_opts(s, &po);
    /* The WAV sink's start is the feed's (s_1); the real-time sink's, its
     * player's own pre-roll over what is queued. */
    if (o->sink == TB_SINK_WAV)
        po.preroll = 0.0;
    fo = (struct tb_pcmfeed_opts){.rate = s->rate,
                                  .timed = o->sink == TB_SINK_WAV,
                                  .preroll = o->play.preroll,
                                  .max_held = (size_t)(TB_SPEAKER_HELD_MAX_S * s->rate),
                                  .out = tb_speaker_pcm_out,
                                  .ud = s};
    rc = tb_pcmfeed_create(&fo, &s->feed);
    if (rc != 0)
        rc = tb_seterr(err, errlen, rc, "%s",
                       rc == TB_ENOMEM ? "out of memory" : "bad pre-roll for the audio");
    if (rc == 0)
        rc = tb_speaker_open_sink(s, &po, err, errlen);
    if (rc != 0) {
        tb_speaker_destroy(s);
        return rc;
    }
    *out = s;
    return 0;
}

int tb_speaker_create(const struct tb_speaker_opts *o, struct tb_speaker **out, char *err,
                      size_t errlen)
{
    struct tb_speaker *s;
    struct tb_tts_opts to = {o->voice, o->play.wpm};
    static const char *const names[] = {"espeak", "espeak+synthesis", "rate"};
    struct tb_pcmring_opts po;
    int rc;
    *out = NULL;
    if (!(o->play.tts_latency >= 0.0) || !(o->play.preroll >= 0.0) || !(o->latency >= 0.0))
        return tb_seterr(err, errlen, TB_EINVAL, "negative latency or pre-roll");
    if (!(o->play.tts_connect >= 0.0) || !(o->play.tts_rtf >= 0.0) || o->play.tts_concurrency < 0)
        return tb_seterr(err, errlen, TB_EINVAL,
                         "negative TTS connect latency, RTF or concurrency");
    if (o->pcm_rate != 0)
        return pcm_create(o, out, err, errlen);
    s = speaker_new(o, o->rate_model, names[o->rate_model ? 2 : o->count_synthesis ? 1 : 0]);
    if (s == NULL)
        return tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
    if (o->rate_model) {
        /* eSpeak speaks near the model's rate; sonic does the rest */
        if (!(o->play.wpm >= TB_WPM_MIN && o->play.wpm <= TB_WPM_MAX)) {
            free(s);
            return tb_seterr(err, errlen, TB_ERANGE, "%g wpm is outside %g to %g", o->play.wpm,
                             TB_WPM_MIN, TB_WPM_MAX);
        }
        to.wpm = fmin(fmax(o->play.wpm, TB_TTS_WPM_MIN), TB_TTS_WPM_MAX);
    }
    rc = tb_tts_create(&to, &s->tts, err, errlen);
    if (rc != 0) {
        free(s);
        return rc;
    }
    s->rate = tb_tts_rate(s->tts);
    player_opts(s, &po);
    if (tb_tts_stage_wanted(&o->play) && o->sink != TB_SINK_NONE) {
        s->stage = tb_tts_stage_create(NULL, NULL);
        if (s->stage == NULL) {
            tb_speaker_destroy(s);
            return tb_seterr(err, errlen, TB_ENOMEM, "out of memory");
        }
        tb_tts_stage_reset(s->stage, &o->play);
        /* The WAV sink's start is the stage's (release); the real-time
         * sink's, its player's own pre-roll. */
        s->holding = o->sink == TB_SINK_WAV;
        if (s->holding)
            po.preroll = 0.0;
    }
    if (o->sink == TB_SINK_NONE) {
        rc = tb_speaker_cache_init(s) != 0 ? tb_seterr(err, errlen, TB_ENOMEM, "out of memory") : 0;
    } else {
        rc = tb_speaker_open_sink(s, &po, err, errlen);
    }
    if (rc != 0) {
        tb_speaker_destroy(s);
        return rc;
    }
    *out = s;
    return 0;
}

const struct tb_voice *tb_speaker_voice(struct tb_speaker *s)
{
    return &s->voice;
}

/* Whether a PCM call may go on: 0, or the code to return. */
static int pcm_ready(struct tb_speaker *s)
{
    if (s->feed == NULL || s->finished)
        return TB_EINVAL; /* not a PCM speaker, or the stream is over */
    if (s->failed)
        return s->failed;
    if (s->o.cancel != NULL && atomic_load_explicit(s->o.cancel, memory_order_relaxed) != 0) {
        snprintf(s->err, sizeof(s->err), "interrupted");
        return s->failed = TB_ECANCELED;
    }
    return 0;
}

/* After a PCM call: a failure is the speaker's; a speech that a failed
 * chunk ended is the sink's tail from here. */
static int pcm_done(struct tb_speaker *s, int rc)
{
    if (rc != 0) {
        s->failed = rc;
        return rc;
    }
    if (tb_pcmfeed_over(s->feed) && !s->sink_ended) {
        s->sink_ended = 1;
        if (s->sink->ops->end != NULL)
            s->sink->ops->end(s->sink);
    }
    return 0;
}

int tb_speaker_pcm(struct tb_speaker *s, uint32_t j, double t, const void *pcm, size_t n)
{
    int rc = pcm_ready(s);
    if (rc != 0)
        return rc;
    return pcm_done(s, tb_pcmfeed_data(s->feed, j, t, pcm, n, s->err, sizeof(s->err)));
}

int tb_speaker_pcm_end(struct tb_speaker *s, uint32_t j, double t, int failed)
{
    int rc = pcm_ready(s);
    if (rc != 0)
        return rc;
    return pcm_done(s, tb_pcmfeed_end(s->feed, j, t, failed, s->err, sizeof(s->err)));
}

static void fill_result(struct tb_speaker *s)
{
    struct tb_audio_result *r = &s->res;
    memset(r, 0, sizeof(*r));
    r->rate = s->rate;
    r->chunks = s->chunks;
    r->synth_s = s->synth_s;
    r->audio_s = (double)s->frames / s->rate;
    r->cache_hits = s->hits;
    r->cut_s = NAN;
    if (s->sink == NULL)
        return;
    r->cut_s = s->sink->capped_at;
    struct tb_pcmring_stats st;
    double f = 1.0 / s->rate;
    tb_pcmring_stats(s->sink->player, &st);
    r->latency = s->sink->latency;
    double off = s->sink->offset;
    r->first_audio = st.first_audio == UINT64_MAX ? 0.0 : off + (double)st.first_audio * f;
    r->end_audio = off + (double)st.end_audio * f;
    r->speech = (double)st.played * f;
    r->concealed = (double)st.concealed * f;
    r->concealment_events = st.concealment_events;
    r->underruns = st.underruns;
    r->interruptions = st.interruptions;
    r->gap_max = (double)st.gap_max * f;
    r->forced_start = st.forced_start;
    r->device_underflows = atomic_load(&s->sink->device_underflows);
    /* gap_total counts the dry spells over the underrun threshold, as the
     * model does; `concealed` has all of them. */
    size_t n = tb_pcmring_gaps(s->sink->player, NULL, 0);
    struct tb_audio_gap *v = n ? malloc(n * sizeof(*v)) : NULL;
    s->gaps = n ? malloc(n * sizeof(*s->gaps)) : NULL;
    if (v == NULL || s->gaps == NULL) {
        free(s->gaps);
        s->gaps = NULL;
        n = 0;
    }
    tb_pcmring_gaps(s->sink->player, v, n);
    for (size_t i = 0; i < n; i++) {
        s->gaps[i].at = off + (double)v[i].at * f;
        s->gaps[i].len = (double)v[i].frames * f;
        if (s->gaps[i].len > TB_GAP_MIN_S)
            r->gap_total += s->gaps[i].len;
    }
    s->ngaps = n;
    free(v);
}

int tb_speaker_finish(struct tb_speaker *s, struct tb_audio_result *r, char *err, size_t errlen)
{
    int rc = 0;
    if (!s->finished) {
        s->finished = 1;
        if (s->stage != NULL && !s->failed) {
            /* the stream ended: the start is final, what is held plays */
            tb_tts_stage_close(s->stage);
            s->failed = tb_speaker_release(s);
        }
        if (s->feed != NULL && !s->failed)
            s->failed = tb_pcmfeed_finish(s->feed, s->err, sizeof(s->err));
        if (s->sink != NULL)
            rc = s->sink->ops->finish(s->sink, err, errlen);
        else if (s->failed)
            rc = tb_seterr(err, errlen, s->failed, "%s", s->err);
        fill_result(s);
    }
    /* The run's own failure first: the finish after it only closed. */
    if (s->failed)
        rc = tb_seterr(err, errlen, s->failed, "%s", s->err);
    if (r != NULL)
        *r = s->res;
    return rc;
}

size_t tb_speaker_gaps(const struct tb_speaker *s, struct tb_audio_gap_s *out, size_t max)
{
    if (out != NULL && s->ngaps > 0 && max > 0)
        memcpy(out, s->gaps, (s->ngaps < max ? s->ngaps : max) * sizeof(*out));
    return s->ngaps;
}

int tb_speaker_player_stats(const struct tb_speaker *s, struct tb_pcmring_stats *st)
{
    if (s->sink == NULL)
        return TB_EINVAL;
    tb_pcmring_stats(s->sink->player, st);
    return 0;
}

void tb_speaker_destroy(struct tb_speaker *s)
{
    if (s == NULL)
        return;
    if (s->sink != NULL)
        s->sink->ops->destroy(s->sink);
    tb_speaker_cache_free(s);
    tb_tts_destroy(s->tts);
    free(s->sbuf);
    free(s->gaps);
    tb_pcmhold_free(&s->hold);
    tb_tts_stage_destroy(s->stage);
    tb_pcmfeed_destroy(s->feed);
    free(s);
}

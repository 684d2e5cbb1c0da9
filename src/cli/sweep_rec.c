/*
 * sweep_rec.c - what sweep adopts of its recordings (see sweep_rec.h).
 *
 * A bench run's traces carry the turn's modelled end of speech and the
 * models it played with; `sim` of one trace replays them, so `sweep` of
 * the same traces must too, or the two disagree on the same stream's
 * wait.  Sweep has one leading-silence model and one latency axis for
 * every stream, so those are adopted only when the recordings agree.
 */
#include "sweep_rec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ttsbuf/error.h"
#include "ttsbuf/stream.h"
#include "ttsbuf/ttsmeas.h"

int tb_cli_sweep_rec_measured(const struct tb_sweep_input *in, size_t n, int model)
{
    for (size_t i = 0; i < n && !model; i++) {
        if (in[i].s->tts == NULL || in[i].s->tts->n == 0)
            continue;
        tb_cli_error("sweep: %s kept a real TTS's timings, which sweep does not replay (ttsbuf "
                     "sim --trace does); to sweep it on a TTS model instead, give one "
                     "(--tts-latency 0 for an instant TTS, --tts PRESET, ...)",
                     in[i].name);
        return TB_EINVAL;
    }
    return 0;
}

/* The text every recording that has one agrees on (field of each
 * recorded model), "" when none has one; NULL when they differ. */
static const char *agreed(const struct tb_sweep_input *in, size_t n, int latency)
{
    const char *v = "";
    for (size_t i = 0; i < n; i++) {
        const struct tb_stream_ttsmodel *m = in[i].s->rec;
        const char *x = m == NULL ? "" : latency ? (m->has_tts ? m->latency : "") : m->lead;
        if (x[0] == '\0')
            continue;
        if (v[0] != '\0' && strcmp(v, x) != 0)
            return NULL;
        v = x;
    }
    return v;
}

/* Whether s is one number (a constant latency), not a distribution. */
static int constant(const char *s)
{
    char *end;
    double d = strtod(s, &end);
    return end != s && *end == '\0' && isfinite(d);
}

int tb_cli_sweep_rec_adopt(struct tb_cli_sweep_rec *r, const struct tb_sweep_input *in, size_t n,
                           struct tb_cli_turn *turn, struct tb_cli_axis *lat, int tts_given)
{
    const char *v = "";
    int rc = 0;
    memset(r, 0, sizeof(*r));
    r->in = in;
    r->n = n;
    for (size_t i = 0; i < n; i++) {
        r->eou += turn->eou == NULL && isfinite(in[i].s->eou_s);
        r->tool += isfinite(in[i].s->tool_s);
    }
    if (turn->lead == NULL && (v = agreed(in, n, 0)) == NULL)
        r->skipped = "--tts-lead";
    else if (turn->lead == NULL && v[0] != '\0') {
        snprintf(r->lead_spec, sizeof(r->lead_spec), "%s", v);
        rc = tb_cli_turn_option(turn, TB_O_TTS_LEAD, r->lead_spec);
        r->lead = rc == 0;
        turn->lead_recorded = r->lead;
    }
    if (rc != 0 || tts_given)
        return rc;
    v = agreed(in, n, 1);
    if (v == NULL || (v[0] != '\0' && !constant(v))) {
        r->skipped = "--tts-latency";
    } else if (v[0] != '\0') {
        snprintf(r->latency_spec, sizeof(r->latency_spec), "%s", v);
        rc = tb_cli_axis_latency(lat, r->latency_spec);
        r->latency = rc == 0;
    }
    return rc;
}

double tb_cli_sweep_rec_eou(void *ud, uint32_t k)
{
    const struct tb_cli_sweep_rec *r = ud;
    double e = k >= 1 && k <= r->n ? r->in[k - 1].s->eou_s : NAN;
    return isfinite(e) ? e : 0.0;
}

void tb_cli_sweep_rec_line(FILE *f, const struct tb_cli_sweep_rec *r)
{
    const char *sep = "";
    if (r == NULL || (r->eou == 0 && !r->lead && !r->latency && r->skipped == NULL))
        return;
    if (r->eou > 0 || r->lead || r->latency) {
        fputs("  as recorded (as sim plays them; an option replaces each):", f);
        if (r->eou > 0) {
            fprintf(f, " the end of turn of %zu of %zu stream%s", r->eou, r->n,
                    r->n == 1 ? "" : "s");
            sep = ",";
        }
        if (r->lead) {
            fprintf(f, "%s the recordings' --tts-lead %s", sep, r->lead_spec);
            sep = ",";
        }
        if (r->latency)
            fprintf(f, "%s the recordings' --tts-latency %s", sep, r->latency_spec);
        fputc('\n', f);
    }
    if (r->skipped != NULL)
        fprintf(f,
                "  note: the recordings' %s is not adopted (they differ, or it is not a "
                "constant): give %s\n",
                r->skipped, r->skipped);
}

/*
 * bench_play.c - `ttsbuf bench --audio SINK`: one stream of the run
 * played through the sink, so the worst stall can be heard: the request
 * with the most silence (or --play ID), replayed from its recorded
 * arrivals as `ttsbuf sim --trace` would (see bench_play.h).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_play.h"

#include "audio.h"
#include "cli.h"
#include "ttsbuf/error.h"
#include "ttsbuf/clock.h"

int tb_cli_bench_play(struct tb_cli_bench *a, const struct tb_bench_recs *recs)
{
    const struct tb_bench_rec *pick = NULL;
    struct tb_sim_opts o = a->c.o;
    struct tb_sim_result r;
    char err[256];
    int rc, simrc;
    for (size_t i = 0; i < recs->n; i++) {
        const struct tb_bench_rec *x = &recs->v[i];
        if (x->error != 0 || x->stream == NULL || x->stream->n == 0 || isnan(x->gap_total))
            continue;
        if (a->play != NULL && strcmp(a->play, "worst") != 0) {
            char id[32];
            snprintf(id, sizeof(id), "%llu", (unsigned long long)x->id);
            if (strcmp(id, a->play) == 0)
                pick = x;
        } else if (pick == NULL || x->gap_total > pick->gap_total) {
            pick = x;
        }
    }
    if (pick == NULL) {
        tb_cli_error("--play %s: no such successful request", a->play ? a->play : "worst");
        return TB_EINVAL;
    }
    fprintf(stderr,
            "ttsbuf: playing request %llu (level %u: %u underrun%s, %.2f s of silence) "
            "through --audio %s\n",
            (unsigned long long)pick->id, pick->level + 1, pick->underruns,
            pick->underruns == 1 ? "" : "s", pick->gap_total, a->au.spec);
    tb_sim_opts_turn(&o, (uint32_t)(pick->id + 1)); /* its own end of turn, as its record's */
    rc = tb_cli_audio_start(&a->au, &o, pick->stream);
    if (rc == 0)
        rc = tb_cli_audio_sim(&a->au, pick->stream, &o, NULL, NULL, &r, &simrc, err, sizeof(err));
    if (rc != 0)
        return rc; /* the speech output failed (printed) */
    if (simrc != 0) {
        tb_cli_error("--play: %s", err);
        return simrc == TB_ENOMEM ? TB_ENOMEM : TB_EIO;
    }
    tb_cli_audio_report(stderr, &a->au, &o, &r, a->c.max_gaps);
    return 0;
}

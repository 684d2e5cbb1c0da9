/*
 * tts_draws.c - --tts-draws and --target-gapless (see tts_draws.h): their
 * rows and handler, the draws run over the played stream, and their part
 * of the human report (the JSON's is jsonout.c's).
 */
#include "tts_draws.h"

#include <inttypes.h>
#include <math.h>
#include <unistd.h>

#include "cli.h"
#include "ttsbuf/clock.h"
#include "ttsbuf/error.h"
#include "ttsbuf/seg.h"

_Static_assert(TB_DRAWS_MAX == 1000000u, "--tts-draws' help states the range");

const struct tb_optdoc tb_opt_tts_draws[3] = {
    {"tts-draws", TB_O_TTS_DRAWS, "M",
     "replay the stream M times (1..1000000) with independent draws of a random --tts-latency: "
     "the underruns, silence, first audio, minimum TPS and gap-free pre-roll as distributions "
     "(p50, p95, ...), and the caller's wait (v2v) with --eou or --tts-lead; draw d takes the seed "
     "N + d x 0x9E3779B97F4A7C15 mod 2^64, N the "
     "--tts-seed, so draw 0 is the run reported",
     "Needs a latency that draws: lognormal:, uniform:, empirical:FILE, or a --tts preset with "
     "one (a constant or list:FILE gives every draw the same schedule and is refused). Each draw "
     "replays the stream's chunks through the same playout engine and minimum-TPS search as one "
     "run with that seed (the rate model). The minimum TPS's statistics are over the draws that "
     "have one; a draw in which the TTS stage alone leaves gaps is counted apart (none), never as "
     "a number. A stream cut off or failed, or one whose ring filled (its times were the ring's), "
     "is not drawn (tts_draws is null, the report says why). A progress line shows on a "
     "terminal."},
    {"target-gapless", TB_O_TTS_TARGET, "X",
     "with --tts-draws: the share of draws (0 < X <= 1, default 0.95) that the reported pre-roll "
     "makes gap-free",
     "Exact to the millisecond: each draw's smallest gap-free pre-roll is a bisection over whole "
     "milliseconds (no underrun is monotone in the pre-roll), and the answer is the "
     "ceil(X M)-th smallest of them: at it at least a share X of the draws play with no "
     "underrun, at 1 ms less fewer do."},
    TB_OPTDOC_END,
};

int tb_cli_draws_option(struct tb_cli_draws *d, int c, const char *arg)
{
    switch (c) {
    case TB_O_TTS_DRAWS: return tb_cli_opt_size("--tts-draws", arg, 1, TB_DRAWS_MAX, &d->draws);
    case TB_O_TTS_TARGET: return tb_cli_opt_share("--target-gapless", arg, &d->target);
    default: return TB_CLI_NOT_MINE;
    }
}

int tb_cli_draws_check(const struct tb_cli_draws *d, int seeded, const char *spec)
{
    if (d->target > 0 && d->draws == 0) {
        tb_cli_error("--target-gapless needs --tts-draws here (a share of the draws)");
        return TB_EINVAL;
    }
    if (d->draws > 0 && !seeded) {
        tb_cli_error("--tts-draws: the latency '%s' does not draw: every draw would play the "
                     "same; give --tts-latency lognormal:, uniform: or empirical:FILE",
                     spec);
        return TB_EINVAL;
    }
    return 0;
}

/* The progress line: on a terminal only, at most ten times a second. */
struct progress {
    struct tb_clock clk;
    const char *cmd;
    double last;
};

static void on_progress(void *ud, size_t done, size_t total)
{
    struct progress *p = ud;
    double now = p->clk.now(&p->clk);
    if (now - p->last < 0.1 && done < total)
        return;
    p->last = now;
    fprintf(stderr, "\r\033[Kttsbuf %s: draw %zu of %zu (%3.0f%%) %.1f s", p->cmd, done, total,
            100.0 * (double)done / (double)total, now);
    fflush(stderr);
}

/* The stream's chunks as the run made them: the same segmenter over the
 * same arrivals (drain.h: results equal tb_analyze_* on the stream). */
static int chunks_of(const struct tb_stream *s, const struct tb_sim_opts *o, struct tb_chunks *c)
{
    struct tb_seg *seg = NULL;
    int rc = tb_seg_create(&o->seg, &seg);
    if (rc == 0)
        rc = tb_analyze_segment(s, seg, c);
    tb_seg_destroy(seg);
    return rc;
}

int tb_cli_draws_run(struct tb_cli_draws *d, const char *cmd, const struct tb_stream *s,
                     const struct tb_sim_opts *o, const struct tb_ttslat *lat, uint64_t seed,
                     const struct tb_sim_result *played, int whatif, int quiet)
{
    /* The caller's wait beyond the first audio, as the run's timeline
     * marks it: only with an end of turn or a leading silence. */
    double wait = played->lat.eou + played->lat.lead;
    struct tb_draws_opts dopt = {d->draws, d->target > 0 ? d->target : TB_CLI_DRAWS_TARGET_DEFAULT,
                                 seed, isfinite(wait) && wait > 0.0 ? wait : NAN};
    struct tb_chunks c;
    struct progress pr = {.cmd = cmd, .last = -1.0};
    int show = !quiet && isatty(STDERR_FILENO), rc;
    if (d->draws == 0)
        return 0;
    if (!whatif) {
        d->not_run = "the stream was cut off or failed";
        return 0;
    }
    if (played->backpressure_waits > 0 || played->forced_cuts > 0 || played->forced_start) {
        d->not_run = "the ring filled, so the run played the ring's times, not the stream's (a "
                     "larger --ring-slots or --ring-bytes)";
        return 0;
    }
    tb_analyze_chunks_init(&c);
    rc = chunks_of(s, o, &c);
    if (rc == 0 && c.n == 0) {
        d->not_run = "nothing was played";
        tb_analyze_chunks_free(&c);
        return 0;
    }
    tb_clock_monotonic_init(&pr.clk);
    if (rc == 0)
        rc = tb_draws_run(&c, &o->play, lat, &dopt, show ? on_progress : NULL, &pr, &d->res);
    if (show)
        fprintf(stderr, "\r\033[K");
    tb_analyze_chunks_free(&c);
    if (rc != 0) {
        d->not_run = tb_strerror(rc); /* run still reports what it received */
        tb_cli_error("--tts-draws: %s", tb_strerror(rc));
        return rc == TB_ENOMEM ? rc : TB_EINVAL;
    }
    d->ran = 1;
    return 0;
}

/* One row of the human table: a statistics block, or '-' throughout when
 * it has no sample. */
static void row(FILE *f, const char *name, const struct tb_stats *s, int prec)
{
    static const char *const cols[7] = {"p5", "p50", "p90", "p95", "p99", "max", "mean"};
    fprintf(f, "  %-22s", name);
    for (int i = 0; i < 7; i++) {
        if (s->count == 0)
            fprintf(f, " %8s", "-");
        else
            fprintf(f, " %8.*f", prec, tb_stats_field(s, tb_stats_field_index(cols[i])));
    }
    fputc('\n', f);
}

void tb_cli_draws_human(FILE *f, const struct tb_cli_draws *d, uint64_t seed)
{
    const struct tb_draws_result *r = &d->res;
    if (d->draws == 0)
        return;
    if (!d->ran) {
        fprintf(f, "\n  tts draws: not run: %s\n", d->not_run != NULL ? d->not_run : "?");
        return;
    }
    fprintf(f,
            "\n  tts draws: %zu, seed %" PRIu64 " + d x 0x9E3779B97F4A7C15 (draw 0 is the run "
            "above)\n",
            r->draws, seed);
    fprintf(f, "  %-22s %8s %8s %8s %8s %8s %8s %8s\n", "", "p5", "p50", "p90", "p95", "p99", "max",
            "mean");
    row(f, "underruns", &r->underruns, 2);
    row(f, "silence (s)", &r->gap_total, 3);
    row(f, "first audio (s)", &r->ttfa, 3);
    if (r->v2v.count > 0)
        row(f, "v2v (s)", &r->v2v, 3);
    row(f, "minimum TPS", &r->min_tps, 1);
    row(f, "gap-free pre-roll (s)", &r->preroll, 3);
    if (r->min_tps_none > 0)
        fprintf(f,
                "  minimum TPS: none in %zu of %zu draws (%.1f%%: the TTS stage alone leaves "
                "gaps); the row is over the other %zu\n",
                r->min_tps_none, r->draws, 100.0 * (double)r->min_tps_none / (double)r->draws,
                r->draws - r->min_tps_none);
    if (r->min_tps_scan > 0)
        fprintf(f, "  minimum TPS: found by a scan (not proven) in %zu draws\n", r->min_tps_scan);
    fprintf(f, "  gap-free at this pre-roll: %zu of %zu draws (%.1f%%)\n", r->gapless, r->draws,
            100.0 * (double)r->gapless / (double)r->draws);
    fprintf(f, "  pre-roll for %g%% of draws gap-free: %.3f s (exact to the millisecond)\n",
            100.0 * r->target, r->preroll_for_target);
    fprintf(f, "  most silence: draw %zu, %.3f s (--tts-seed %" PRIu64 " replays it)\n", r->worst,
            r->worst_gap_total, r->worst_seed);
}

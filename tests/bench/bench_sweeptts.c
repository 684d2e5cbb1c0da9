/*
 * bench_sweeptts.c - the man page's sweep over 200 streams with a target
 * share (issue 42): `./ttsbuf sweep --synth ... --target-gapless 0.95`
 * with the TTS stage's four options (a log-normal latency, one slot, RTF
 * 0.1) against the same command without them.  Wall time of the
 * process, best of REPS; goal: with the TTS stage within 5x without.
 * The pre-roll for the target is bisected over replays of each stream's
 * stored schedule (tb_playout_gapless_preroll), not over whole playouts
 * with their minimum-TPS searches.
 */
#include <stdio.h>
#include <string.h>

#include "bench.h"

#define REPS 3

void bench_sweep_tts(void)
{
    /* The command, then the TTS stage's options (NULL ends the plain one
     * at ARGS; the stage's run goes on to the end). */
    enum { ARGS = 12 };
    char *tts[] = {"./ttsbuf",
                   "sweep",
                   "--synth",
                   "tps=10,tokens=300,jitter=0.6,stall=0.02:1.5",
                   "--seeds",
                   "1:200",
                   "--chunk",
                   "sentence,clause,token",
                   "--preroll",
                   "0:2:0.5",
                   "--target-gapless",
                   "0.95",
                   "--tts-latency-p50",
                   "0.3",
                   "--tts-latency-shape",
                   "lognormal:ratio=1.667",
                   "--tts-concurrency",
                   "1",
                   "--tts-rtf",
                   "0.1",
                   NULL};
    char *plain[ARGS + 1];
    double a, b;
    printf("sweeptts: ttsbuf sweep --synth tps=10,tokens=300,jitter=0.6,stall=0.02:1.5 --seeds "
           "1:200\n"
           "          --chunk sentence,clause,token --preroll 0:2:0.5 --target-gapless 0.95,\n"
           "          with and without --tts-latency-p50 0.3 --tts-latency-shape "
           "lognormal:ratio=1.667\n"
           "          --tts-concurrency 1 --tts-rtf 0.1 (the command's wall time, best of %d)\n",
           REPS);
    memcpy(plain, tts, ARGS * sizeof(*plain));
    plain[ARGS] = NULL;
    a = bench_command_seconds(plain, REPS);
    b = bench_command_seconds(tts, REPS);
    if (a < 0.0 || b < 0.0) {
        printf("  (./ttsbuf did not run: build it first)\n");
        return;
    }
    printf("  without the TTS stage %7.3f s\n"
           "  with it               %7.3f s   %4.2fx without (goal <= 5x: %s)\n",
           a, b, b / a, b <= 5.0 * a ? "met" : "NOT met");
}

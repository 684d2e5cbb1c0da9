/*
 * bench_speech.c - the speech path (`make bench`, section "speech"):
 *   - eSpeak NG's real-time factor by chunk size (synthesis time / audio
 *     time; best of 5 rounds);
 *   - the time from a chunk's hand-over (the drain's call into the
 *     speaker, synthesis included) to its first frame being pulled by
 *     PortAudio's callback, through a private PulseAudio started here
 *     (tests/audio_env.c), at 1x real time;
 *   - the CPU the playback path costs while it plays (feeder thread,
 *     PortAudio's callback thread, ALSA's pulse plugin), as a share of one
 *     core.
 * Without pulseaudio installed the last two say so and are skipped.
 */
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "../audio_env.h"
#include "bench.h"
#include "ttsbuf/speaker.h"
#include "ttsbuf/tts.h"

static const char words[] = "the quick brown fox jumps over a lazy dog while voice agents "
                            "wait for tokens from the model and speak them aloud ";

static void text_of(char *buf, size_t cps)
{
    size_t n = strlen(words);
    for (size_t i = 0; i < cps; i++)
        buf[i] = words[i % n];
    buf[cps] = '\0';
    buf[cps - 1] = '.';
}

static void rtf(void)
{
    static const size_t sizes[] = {10, 40, 160, 640, 2560};
    struct tb_tts_opts o = {NULL, 150};
    struct tb_tts *t;
    char err[256], buf[4096];
    if (tb_tts_create(&o, &t, err, sizeof(err)) != 0)
        bench_die("eSpeak NG", err);
    printf("speech: eSpeak NG synthesis by chunk size (150 wpm, best of 5)\n"
           "  chunk (code points)   audio s   synthesis ms   real-time factor\n");
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        double best = 1e9, audio = 0;
        text_of(buf, sizes[i]);
        for (int r = 0; r < 5; r++) {
            const int16_t *pcm;
            size_t n;
            double t0 = bench_now();
            if (tb_tts_synth(t, buf, sizes[i], &pcm, &n) != 0)
                bench_die("eSpeak NG", "synthesis failed");
            double dt = bench_now() - t0;
            best = dt < best ? dt : best;
            audio = (double)n / tb_tts_rate(t);
        }
        printf("  %19zu   %7.2f   %12.2f   %.4f (%.0fx faster)\n", sizes[i], audio, best * 1e3,
               best / audio, audio / best);
    }
    tb_tts_destroy(t);
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static void handover_and_cpu(void)
{
    struct tb_audio_pulse *pa = NULL;
    struct tb_speaker_opts so;
    struct tb_speaker *sp;
    struct tb_pcmring_stats st;
    const struct tb_voice *v;
    char err[512], buf[128];
    double lat[20], dur, busy, cpu0, t0, played_s = 0;
    int rc = tb_audio_pulse_start(&pa, err, sizeof(err));
    if (rc != 0) {
        printf("speech: hand-over latency and playback CPU skipped: %s\n", err);
        return;
    }
    tb_audio_quiet();
    memset(&so, 0, sizeof(so));
    so.sink = TB_SINK_PORTAUDIO;
    tb_playout_opts_default(&so.play); /* 150 wpm */
    so.latency = 0.1;
    if (tb_speaker_create(&so, &sp, err, sizeof(err)) != 0)
        bench_die("PortAudio through PulseAudio", err);
    v = tb_speaker_voice(sp);
    text_of(buf, 40);
    /* each chunk handed over when the previous one has played out */
    cpu0 = bench_cpu(RUSAGE_SELF, NULL);
    t0 = bench_now();
    for (int i = 0; i < 20; i++) {
        uint64_t before;
        tb_speaker_player_stats(sp, &st);
        before = st.played;
        double h = bench_now();
        if (v->chunk(v->ud, (uint32_t)i + 1, 0, buf, 40, 40, &dur, &busy) != 0)
            bench_die("speaker", "chunk failed");
        do {
            sleep_s(0.0002);
            tb_speaker_player_stats(sp, &st);
        } while (st.played == before);
        lat[i] = bench_now() - h;
        sleep_s(dur + 0.05);
        played_s += dur;
    }
    double wall = bench_now() - t0, cpu = bench_cpu(RUSAGE_SELF, NULL) - cpu0;
    struct tb_audio_result ar;
    tb_speaker_finish(sp, &ar, err, sizeof(err));
    tb_speaker_destroy(sp);
    tb_audio_pulse_destroy(pa);
    double sum = 0, mx = 0;
    for (int i = 0; i < 20; i++) {
        sum += lat[i];
        mx = lat[i] > mx ? lat[i] : mx;
    }
    printf("speech: 20 chunks of 40 code points through PortAudio -> PulseAudio pipe sink "
           "(output latency %.0f ms granted)\n"
           "  hand-over to first frame pulled by the callback: mean %.2f ms, max %.2f ms "
           "(synthesis included)\n"
           "  playback path CPU: %.2f%% of one core over %.1f s (%.1f s of speech; includes "
           "synthesis, the feeder, the callback and ALSA's pulse plugin)\n",
           ar.latency * 1e3, sum / 20 * 1e3, mx * 1e3, 100.0 * cpu / wall, wall, played_s);
}

void bench_speech(void)
{
    rtf();
    handover_and_cpu();
}

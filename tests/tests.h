/*
 * tests.h - the test suite's groups and shared helpers.
 *
 * Each tests/test_<module>.c defines one group function, listed in
 * tests/main.c; each group is a cmocka group of named cases.  Assertions
 * are cmocka's (they never compile out and print both sides).
 *
 * Conventions: test data files live in $TB_TESTDATA (tests/data);
 * end-to-end tests run the binary named by $TTSBUF.
 */
#ifndef TTSBUF_TESTS_H
#define TTSBUF_TESTS_H

#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#ifdef __clang_analyzer__
#include <string.h>

/* For clang-tidy's analyzer only (`make lint`; tests/cmocka.cfg does the
 * same for cppcheck): a failed check ends the test, a longjmp out of it.
 * cmocka.h does not say so (_fail and _skip are not noreturn, and each
 * assert_* calls a function that returns when the check holds), so the
 * analyzer would follow every failed check on into the test.  Here each
 * check is its condition and _fail(); the build uses cmocka's own. */
void _fail(const char *const file, const int line) __attribute__((analyzer_noreturn));
void _skip(const char *const file, const int line) __attribute__((analyzer_noreturn));
#define TB_CHECK_(ok) ((ok) ? (void)0 : _fail(__FILE__, __LINE__))
#undef assert_true
#define assert_true(c) TB_CHECK_(c)
#undef assert_false
#define assert_false(c) TB_CHECK_(!(c))
#undef assert_non_null
#define assert_non_null(c) TB_CHECK_((c) != NULL)
#undef assert_null
#define assert_null(c) TB_CHECK_((c) == NULL)
#undef assert_int_equal
#define assert_int_equal(a, b)                                                                     \
    TB_CHECK_(cast_to_largest_integral_type(a) == cast_to_largest_integral_type(b))
#undef assert_int_not_equal
#define assert_int_not_equal(a, b)                                                                 \
    TB_CHECK_(cast_to_largest_integral_type(a) != cast_to_largest_integral_type(b))
#undef assert_ptr_equal
#define assert_ptr_equal(a, b) TB_CHECK_((const void *)(a) == (const void *)(b))
#undef assert_string_equal
#define assert_string_equal(a, b) TB_CHECK_(strcmp((a), (b)) == 0)
#undef assert_string_not_equal
#define assert_string_not_equal(a, b) TB_CHECK_(strcmp((a), (b)) != 0)
#undef assert_memory_equal
#define assert_memory_equal(a, b, n) TB_CHECK_(memcmp((a), (b), (n)) == 0)
#undef assert_in_range
#define assert_in_range(v, lo, hi)                                                                 \
    TB_CHECK_(cast_to_largest_integral_type(v) >= cast_to_largest_integral_type(lo) &&             \
              cast_to_largest_integral_type(v) <= cast_to_largest_integral_type(hi))
#endif

#include "ttsbuf/serve.h"
#include "ttsbuf/stream.h"

/* Each returns the number of failed cases (cmocka_run_group_tests). */
int tb_test_utf8(void);
int tb_test_ring(void);
int tb_test_segment(void);
int tb_test_playout(void);
int tb_test_property(void);
int tb_test_trace(void);
int tb_test_synth(void);
int tb_test_ttslat(void);    /* TTS first-byte latency specs */
int tb_test_ttspreset(void); /* TTS engine presets and their sources */
int tb_test_sim(void);
int tb_test_cli(void);
int tb_test_sse(void);
int tb_test_serve(void);
int tb_test_serve_unit(void);   /* the mock server's pure parts */
int tb_test_convo(void);        /* the conversations reader */
int tb_test_heard(void);        /* what a caller heard of an interrupted answer */
int tb_test_calls(void);        /* bench --conversations: calls on the speech clock */
int tb_test_threads(void);      /* bench on several loop threads */
int tb_test_benchmem(void);     /* what bench keeps in memory over a long run */
int tb_test_bargein(void);      /* bench --barge-in: the caller interrupts turns */
/* Its cases with a real TTS (test_bargetts.c). */
void tb_test_bargetts_close(void **state);
void tb_test_bargetts_nulls(void **state);
void tb_test_bargetts_streamed(void **state);
void tb_test_bargetts_cut_chunk1(void **state);
void tb_test_bargetts_bad(void **state);
int tb_test_callsout(void);     /* calls in every output: interrupted turns, progress */
int tb_test_ttsserve(void);     /* the mock TTS of `ttsbuf serve`, through the binary */
int tb_test_servelog(void);     /* serve --log: the request log, close detection */
int tb_test_capacity(void);     /* a TTS capacity shared by every stream of a run */
void tb_test_capacity_ten_calls(void **state); /* its live cases (test_capacity_live.c) */
void tb_test_capacity_ten_calls_threads(void **state);
void tb_test_capacity_llm(void **state);
int tb_test_retry(void);        /* serve --max-inflight's 429s, bench --retry */
int tb_test_servethreads(void); /* serve --threads: the mock on several loops */
int tb_test_oai(void);
int tb_test_live(void);
int tb_test_rebuffer(void);
int tb_test_recut(void);    /* the minimum TPS under the time-based chunk policies */
int tb_test_ttsstage(void); /* the playout's TTS stage against an oracle */
int tb_test_ttscli(void);   /* the TTS stage from the command line */
int tb_test_preroll(void);  /* the gap-free pre-roll probe against the full-search path */
int tb_test_ttsdraws(void); /* --tts-draws: a random latency as distributions */
int tb_test_ttslive(void);  /* run --tts-url: a real TTS in the loop, end to end */
int tb_test_turnlat(void);  /* where a turn's wait went: parts, leading silence */
/* turnlat's cases on pages (test_turnlat_html.c), run by tb_test_turnlat. */
void tb_test_turnlat_pictures(void **state);
void tb_test_turnlat_html_own_eou(void **state);
void tb_test_turnlat_calls_html(void **state);
void tb_test_turnlat_run_mock_html(void **state);
void tb_test_turnlat_tool_part(void **state);
void tb_test_turnlat_calls_tool_html(void **state);
int tb_test_ttsfault(void); /* the fault matrix's TTS side: a TTS that fails or leaks */
int tb_test_ttsbench(void); /* bench --tts-url: a real TTS per stream, end to end */
int tb_test_ttsws(void);    /* the WebSocket TTS client against a third-party peer */
int tb_test_ttswsbench(void); /* bench with a WebSocket TTS: 100 streams, the loop's threads */
int tb_test_ttswire(void);  /* what a TTS sends back: media types, WAV, the WS decoder */
int tb_test_ttstrace(void); /* a real TTS kept in a trace and replayed by sim */
int tb_test_recorded(void); /* what sim and sweep take of a recording */
int tb_test_sweep(void);
int tb_test_svg(void);
int tb_test_docs(void);
int tb_test_import(void);
int tb_test_api(void);
int tb_test_tools(void); /* tool calls: read, kept in traces, mocked by serve */
int tb_test_tooluse(void); /* calls that use tools: the exchange, tool_s, the filler */
void tb_test_tooluse_filler_live(void **state); /* its real-TTS case (test_toolfill.c) */
int tb_test_simtool(void); /* sim of a tool turn's answer and its what-if */
int tb_test_player(void);
int tb_test_speech(void);
int tb_test_speechrt(void); /* real speech in real time through the private PulseAudio */
int tb_test_ttsplay(void);  /* the speaker playing a TTS provider's PCM */
/* The headless audio harness (tests/audio_env.h) with real PortAudio streams. */
int tb_test_audioenv(void);

/* Allocations counted so far in the whole process, and those made inside
 * tb_pcmring_pull (the real-time path): tests/rt_alloc.c.  The first call
 * installs the hook where one is needed (sanitizer builds). */
void tb_test_alloc_counts(unsigned long *all, unsigned long *rt);
int tb_test_bench(void);   /* ttsbuf bench and merge */
int tb_test_compare(void); /* ttsbuf compare: bench runs side by side */
int tb_test_goodput(void); /* bench --slo: voice goodput, per-turn statistics */
/* Reliability. */
int tb_test_fuzz(void);
int tb_test_fault(void);
int tb_test_peer(void);
int tb_test_html(void);
int tb_test_reader(void);
int tb_test_ttsapi(void); /* the TTS dialects and client: tests/data/ttsapi */
int tb_test_secrets(void);
int tb_test_outputs(void); /* every combination of a command's outputs */
int tb_test_schema(void);  /* every JSON/JSONL/CSV output against schema/ */
int tb_test_schemas(void); /* the validator, the collector, one of each output */
int tb_test_deps(void);    /* make test on a machine with only .ci/deps test */
int tb_test_usage(void);   /* -q, help lists, hints, status line, widths */
int tb_test_exits(void);   /* usage 2, runtime 3: full disk, out of memory */
int tb_test_layers(void);  /* the include rule: tests/layers.sh */

/* A case needs the program name (listed in tests/commands.txt): fails the
 * case, naming the Debian package `sh .ci/deps test` installs it from,
 * when it is not on PATH (tests/test_deps.c). */
void tb_test_need(const char *name);

/* Cases run so far, over all groups (for the closing summary line). */
extern int tb_tests_total;

/* Runs n cases as the group name (with cmocka's group setup and
 * teardown, either NULL) and counts them; returns the failures.  When the
 * runner splits a group into shards (TB_TEST_SHARD=I/K: tests/runner.h),
 * this process runs only the cases whose index is I modulo K. */
int tb_test_run_group(const char *name, const struct CMUnitTest *cases, size_t n,
                      CMFixtureFunction setup, CMFixtureFunction teardown);
#define TB_RUN_GROUP(name, cases)                                                                  \
    tb_test_run_group(name, cases, sizeof(cases) / sizeof((cases)[0]), NULL, NULL)

/* Path of a file in tests/data (static buffer; not thread-safe). */
const char *tb_test_data(const char *name);

/* The source tree's top, tests/data's grandparent (static buffer). */
const char *tb_test_top(void);

/* A whole file in a buffer of exactly its size (not NUL-terminated); fails
 * the case when it cannot be read.  Caller frees. */
char *tb_test_slurp(const char *path, size_t *len);

/* A whole file and a NUL after it (*len, when not NULL: the file's size);
 * fails the test when it cannot be read. */
char *tb_test_slurp_text(const char *path, size_t *len);
/* A whole file as a NUL-terminated string; "" when it does not exist. */
char *tb_test_slurp_str(const char *path);
/* Waits until the file at path holds needle, reading it every 10 ms for
 * at most seconds; 1 when it does, else 0. */
int tb_test_wait_text(const char *path, const char *needle, double seconds);

/* a and b are the same double bit for bit (-0 is not 0; a NaN is its
 * payload). */
int tb_test_same_bits(double a, double b);

/* Names in dir that start with prefix and end with suffix (without the
 * suffix when strip), sorted; returns the count.  Free with
 * tb_test_free_names. */
size_t tb_test_list(const char *dir, const char *prefix, const char *suffix, int strip,
                    char ***out);
void tb_test_free_names(char **v, size_t n);

/* The sweep group's cases of the caller's wait (test_sweep_wait.c). */
void tb_test_sweep_v2v_matches_sim(void **state);
void tb_test_sweep_v2v_target(void **state);
void tb_test_sweep_v2v_page(void **state);

/* What a run of the real binary gave: exit code, stdout, stderr (each
 * NUL-terminated, owned; free with tb_test_out_free). */
struct tb_test_out {
    int code;
    char *so, *se;
};

/* Runs `$TTSBUF args` through sh (args may hold redirections). */
struct tb_test_out tb_test_run(const char *args);
/* The same with environment assignments first (`env ENV ...`; NULL: none). */
struct tb_test_out tb_test_run_env(const char *env, const char *args);
void tb_test_out_free(struct tb_test_out *o);

/* Runs `$TTSBUF args` (env as above), asserts the exit code, and returns
 * its stdout parsed as JSON (owned: cJSON_Delete). */
struct cJSON;
struct cJSON *tb_test_run_json(const char *env, const char *args, int code);

/* Opens the page at html in headless Chromium (tests/node/html-page.mjs,
 * or $TB_NODEDIR's; what it printed kept in out) and returns what it saw
 * (owned: cJSON_Delete), after checking that the page logged no error and
 * made no request. */
struct cJSON *tb_test_browse(const char *html, const char *out);

/* A fresh directory /tmp/ttsbuf-GROUP-TAG-PID (removed first if there)
 * into dir; and its removal.  Both assert the shell's success. */
void tb_test_tmpdir(char *dir, size_t len, const char *group, const char *tag);
void tb_test_rm_rf(const char *dir);

/* The lines of a JSONL file after its header (a records file), parsed
 * into v (at most cap, asserted; the caller deletes them).  Returns how
 * many. */
size_t tb_test_jsonl_records(const char *path, struct cJSON **v, size_t cap);
/* The lines of the JSONL file at path that have key, not null, parsed
 * (owned), at most max; a line that is not JSON fails the test. */
size_t tb_test_jsonl_with(const char *path, const char *key, struct cJSON **v, size_t max);
/* cJSON_Delete of v[0 .. n). */
void tb_test_json_free(struct cJSON **v, size_t n);

/* An object's member k (NULL when absent); its number, its string and
 * its bool (each fails the test when k is not one); whether it is null. */
const struct cJSON *tb_test_key(const struct cJSON *o, const char *k);
double tb_test_num(const struct cJSON *o, const char *k);
/* o[k]: a number, or NAN when it is null (a figure not measured); fails
 * the test on anything else. */
double tb_test_num_or_nan(const struct cJSON *o, const char *k);
const char *tb_test_str(const struct cJSON *o, const char *k);
int tb_test_is_true(const struct cJSON *o, const char *k);
int tb_test_is_null(const struct cJSON *o, const char *k);

/* One request line of a `ttsbuf serve --log` file (schema
 * ttsbuf.serve_log): its CLOCK_MONOTONIC times in seconds, NAN where the
 * line says null. */
struct tb_test_slog {
    char route[24], rid[72]; /* "" for null */
    double received, first_byte, late_max, end, closed;
    double tts_chars;
};
/* The request lines of a serve log (after its header), in file order (the
 * order requests ended), into v (at most cap, asserted); returns how many. */
size_t tb_test_slog_read(const char *path, struct tb_test_slog *v, size_t cap);
/* The same, once the lines from index from on whose route starts with
 * prefix (NULL: any) number at least want, or after 5 s (20 s
 * sanitized): the server writes a request's line when it has closed it,
 * which can come after the client has read the whole answer and exited. */
size_t tb_test_slog_wait(const char *path, struct tb_test_slog *v, size_t cap, size_t from,
                         const char *prefix, size_t want);

/* How late the mock may write anything of a request on an idle machine:
 * its first byte within tol (5 ms, say), a later event or piece of audio
 * within this (its pacing): 20 ms, times TB_TEST_TIME_SCALE in a sanitizer
 * build, where the server's own work between two writes runs several
 * times slower (a TSan-built serve measured itself 35 ms late with the
 * suite's groups beside it, the machine's wake-up delay 12 ms). */
#define TB_TEST_PIECE_LATE (0.020 * TB_TEST_TIME_SCALE)

/*
 * A timed write of `ttsbuf serve` judged as its figure is defined, on a
 * machine that may be busy: due is when it falls due from the request's
 * receipt (s), client when the client read it, from its send (s), server
 * the write's time from the receipt as the server's log puts it (its
 * first byte: first_byte - received; NAN for a write the log has no time
 * of), l the request's log line, lag the largest wake-up delay the probe
 * of lag.h measured meanwhile, tol the schedule's promise on an idle
 * machine (5 ms, say), late_tol the bound on an idle machine of the
 * lateness of any write of the request (tol when it has one, else
 * TB_TEST_PIECE_LATE).  Holds when: the client never read it early; the
 * log puts it at its due time, late by no more than the lateness the
 * server measured itself (late_max: a wrong due time fails at any load);
 * that lateness is within late_tol + lag (only what the machine added); the
 * client read it within tol + 2 lag of the log's time (transit, and two
 * processes woken; either way, since the server stamps a send after
 * send() returns, and may be descheduled in between); and in all within
 * due + the server's lateness + tol + 2 lag.  On an idle machine (lag ~0.1 ms)
 * these are the bounds of old.  Returns NULL when it holds, else msg,
 * saying which failed.
 */
const char *tb_test_sched_check(double due, double client, double server,
                                const struct tb_test_slog *l, double lag, double tol,
                                double late_tol, char *msg, size_t len);

/* A case that bounds real time, tried up to three times: once returns 1,
 * or 0 with why (each try starts what it needs afresh).  On a busy
 * machine one try can miss a bound that is the machine's, not the code's;
 * a wrong schedule misses every time.  Fails with the last why. */
void tb_test_up_to_three(int (*once)(char *why, size_t len), const char *what);

/* Where the binary's outputs are kept for the "schema" group to validate
 * ($TB_COLLECT_DIR: the Makefile runs the binary through
 * tests/collect/collect.c, which copies them there), or NULL when the
 * suite runs without it. */
const char *tb_test_collect_dir(void);
/* Adds len bytes the library wrote in this process (a trace, say) to that
 * collection as GROUP.ID.lib.WHAT.EXT; nothing when there is none. */
void tb_test_collect_bytes(const char *what, const char *ext, const char *buf, size_t len);

/* splitmix64: tiny, deterministic, good enough to pick test inputs. */
struct tb_rng {
    uint64_t s;
};

static inline uint64_t tb_rng_next(struct tb_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static inline double tb_rng_unit(struct tb_rng *r)
{
    return (double)(tb_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform in [0, n). */
static inline uint32_t tb_rng_below(struct tb_rng *r, uint32_t n)
{
    return (uint32_t)(tb_rng_next(r) % n);
}

/* Asserts the exit code, nothing on stdout and one stderr line
 * "ttsbuf: ..." that contains want. */
void tb_test_expect_error(const char *args, int code, const char *want);

/* Starts `$TTSBUF serve --listen 127.0.0.1:0 --same-stream --synth SPEC`
 * with its stderr in log, and waits for its port; returns its pid.  Stop
 * it with tb_test_serve_stop (SIGINT), which returns its exit status.
 * (The suite's servers stream one stream to every request, as the cases
 * that start them count on; tb_test_serve_up_draws is serve's default.) */
int tb_test_serve_spawn(const char *synth, const char *log, int *port);
/* SIGINT to pid, then waits for it to end (its wait status in *status):
 * 0, or -1 when it had not ended 60 s on (then killed).  The SIGINT is
 * sent again every 10 s: ThreadSanitizer's runtime defers a process's
 * signals to its next intercepted call and, rarely, loses one that comes
 * while the process starts (a TSan-built `serve` stopped by a SIGINT right
 * after its "listening" line: 3 starts in 300 missed it, the second
 * reached the handler; a plain build: 300 in 300 at the first). */
int tb_test_interrupt(int pid, int *status);
int tb_test_serve_stop(int pid);

/* `$TTSBUF serve --listen 127.0.0.1:0 --same-stream ARGS` (through sh;
 * its stderr to a file of this process), its port read back from what it
 * prints; returns its pid, also kept for tb_test_serve_down.  One such
 * server at a time.  tb_test_serve_up_draws: the same without
 * --same-stream (each request its own stream, serve's default). */
int tb_test_serve_up(const char *args, int *port);
int tb_test_serve_up_draws(const char *args, int *port);
/* Stops (SIGINT) the server tb_test_serve_up started, if it still runs;
 * a no-op otherwise.  Usable as a cmocka teardown (state unused), so a
 * case that fails half-way leaves no server behind. */
int tb_test_serve_down(void **state);

/* A self-signed certificate for 127.0.0.1 (c.pem, key k.pem) made with
 * openssl in a new directory /tmp/ttsbuf-TAG-PID, written to dir; fails
 * the case when openssl cannot.  The caller removes the directory. */
void tb_test_tls_cert(const char *tag, char *dir, size_t dirlen);

/* A loopback port that was free a moment ago (bound, read back, closed:
 * a small race), for a server the test starts that cannot be given port
 * 0 and say which it took. */
int tb_test_free_port(void);

/* A loopback port where a connect is refused: bound and never listening,
 * held until the group's process ends (no other group can take it). */
int tb_test_refused_port(void);

/* The trace of a bench record (rec: one line of DIR/records.jsonl): its
 * request's trace, cut verbatim out of the file of several its "trace"
 * names, written to DIR/STEM-request-ID.jsonl, whose path goes to path;
 * fails the case when the file holds no trace of that request. */
void tb_test_rec_trace(const char *dir, const struct cJSON *rec, char *path, size_t len);

/* The port a server the test started wrote to path once it listened
 * (a number and a newline, the whole file written at once; for a server
 * given port 0), waited for up to 30 s; fails the case after, or when the
 * file holds no port. */
int tb_test_port_file(const char *path);

/* Waits (up to 30 s; fails the case after) until something listens on
 * loopback port `port`: a bind there fails with EADDRINUSE.  Probing with
 * bind, not connect, leaves a one-connection server its connection. */
void tb_test_wait_port(int port);

/* The binary under test ($TTSBUF, else ./ttsbuf). */
const char *tb_test_bin(void);

/* Runs a shell command line; fails the case unless it exited; returns
 * its exit status. */
int tb_test_sh(const char *cmd);

/* Runs a shell command line (its exit status in *status; fails the case
 * unless it exited) and returns its peak RSS in KiB: the largest of sh
 * and every process it waited for, measured from a small python3 that
 * starts the shell (a process forked from this one would carry this
 * process's RSS into its peak). */
long tb_test_sh_rss(const char *cmd, int *status);

/* Writes a hostile JSON file of about `size` bytes to path: head, then
 * "0,0,...,0" (a value every two bytes: cJSON's tree of it takes about 40
 * times its size), then tail.  Fails the case when it cannot. */
void tb_test_zeros_json(const char *path, const char *head, const char *tail, size_t size);

/* What a peak-RSS bound is multiplied by in a sanitizer build: the
 * shadow memory, ASan's redzones and its quarantine of freed blocks. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TB_TEST_RSS_SCALE 4
#else
#define TB_TEST_RSS_SCALE 1
#endif

/* What a lateness bound is multiplied by in a sanitizer build, where the
 * mock server's own work (rendering a large body, say) runs several times
 * slower.  The fairness bounds stay well below what an unbounded pass
 * costs (345 ms beside six non-streamed hogs in a plain build, before the
 * per-pass bound; several times that under a sanitizer). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TB_TEST_TIME_SCALE 4
#else
#define TB_TEST_TIME_SCALE 1
#endif

/* The mock provider (tb_serve) on its own thread, on loopback, an
 * ephemeral port (tests/mock.c): n events " w0" .. " w<n-1>" (a sentence
 * every 5), event k at t0 + k dt, faults for every request (or NULL);
 * base is "http://127.0.0.1:PORT/v1". */
struct tb_test_mock {
    struct tb_serve *srv;
    struct tb_stream s;
    pthread_t th;
    char base[64];
};
void tb_test_mock_start(struct tb_test_mock *m, size_t n, double t0, double dt, const char *faults);
void tb_test_mock_stop(struct tb_test_mock *m);

/* Asserts |a - b| <= tol, printing both. */
#define assert_near(a, b, tol)                                                                     \
    do {                                                                                           \
        double a_ = (a), b_ = (b), t_ = (tol);                                                     \
        if (!(a_ - b_ <= t_ && b_ - a_ <= t_))                                                     \
            fail_msg("%s = %.12g, %s = %.12g, differ by more than %g", #a, a_, #b, b_, t_);        \
    } while (0)

#endif

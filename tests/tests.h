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

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* Each returns the number of failed cases (cmocka_run_group_tests). */
int tb_test_utf8(void);
int tb_test_ring(void);
int tb_test_segment(void);
int tb_test_playout(void);
int tb_test_property(void);
int tb_test_trace(void);
int tb_test_synth(void);
int tb_test_sim(void);
int tb_test_cli(void);
int tb_test_sse(void);
int tb_test_serve(void);
int tb_test_oai(void);
int tb_test_live(void);
int tb_test_player(void);
int tb_test_speech(void);

/* Runs `$TTSBUF args` through sh (args may hold redirections and
 * environment assignments go before it in args only via `env`); returns
 * the exit code and both outputs (NUL-terminated, owned). */
struct tb_test_out {
    int code;
    char *so, *se;
};
struct tb_test_out tb_test_cmd(const char *args);
void tb_test_cmd_free(struct tb_test_out *o);
/* Runs args and asserts exit `code`, one stderr line "ttsbuf: ..."
 * containing want, and nothing on stdout. */
void tb_test_expect_error(const char *args, int code, const char *want);

/* Allocations counted so far in the whole process, and those made inside
 * tb_player_pull (the real-time path): tests/rt_alloc.c.  The first call
 * installs the hook where one is needed (sanitizer builds). */
void tb_test_alloc_counts(unsigned long *all, unsigned long *rt);
/* The headless audio harness (tests/audio_env.h) with real PortAudio streams. */
int tb_test_audioenv(void);

/* Cases run so far, over all groups (for the closing summary line). */
extern int tb_tests_total;

/* Runs a group of cases and counts them; returns the failures. */
#define TB_RUN_GROUP(name, cases)                                                                  \
    (tb_tests_total += (int)(sizeof(cases) / sizeof((cases)[0])),                                  \
     cmocka_run_group_tests_name(name, cases, NULL, NULL))

/* Path of a file in tests/data (static buffer; not thread-safe). */
const char *tb_test_data(const char *name);

/* A whole file in a buffer of exactly its size (not NUL-terminated); fails
 * the case when it cannot be read.  Caller frees. */
char *tb_test_slurp(const char *path, size_t *len);

/* A whole file as a NUL-terminated string; "" when it does not exist. */
char *tb_test_slurp_str(const char *path);

/* Names in dir that start with prefix and end with suffix (without the
 * suffix when strip), sorted; returns the count.  Free with
 * tb_test_free_names. */
size_t tb_test_list(const char *dir, const char *prefix, const char *suffix, int strip,
                    char ***out);
void tb_test_free_names(char **v, size_t n);

/* Asserts |a - b| <= tol, printing both. */
#define assert_near(a, b, tol)                                                                     \
    do {                                                                                           \
        double a_ = (a), b_ = (b), t_ = (tol);                                                     \
        if (!(a_ - b_ <= t_ && b_ - a_ <= t_))                                                     \
            fail_msg("%s = %.12g, %s = %.12g, differ by more than %g", #a, a_, #b, b_, t_);        \
    } while (0)

#endif

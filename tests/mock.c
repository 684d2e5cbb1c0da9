/*
 * mock.c - what the end-to-end groups share: the mock provider they
 * stream from (tb_serve on its own thread, on loopback, an ephemeral
 * port), and running the binary under test.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tests.h"
#include "ttsbuf/error.h"

static void *serve_main(void *arg)
{
    tb_serve_run(arg);
    return NULL;
}

void tb_test_mock_start(struct tb_test_mock *m, size_t n, double t0, double dt, const char *faults)
{
    struct tb_serve_opts o;
    char err[256];
    tb_stream_init(&m->s);
    for (size_t k = 0; k < n; k++) {
        char w[32];
        int len = snprintf(w, sizeof(w), " w%zu%s", k, k % 5 == 4 ? "." : "");
        assert_int_equal(
            tb_stream_append(&m->s, t0 + dt * (double)k, w, (size_t)len, 1, TB_KIND_CONTENT), 0);
    }
    memset(&o, 0, sizeof(o));
    tb_faults_init(&o.faults);
    if (faults != NULL)
        assert_int_equal(tb_faults_parse(faults, &o.faults, err, sizeof(err)), 0);
    o.host = "127.0.0.1";
    o.port = 0;
    o.stream = &m->s;
    if (tb_serve_create(&o, &m->srv, err, sizeof(err)) != 0)
        fail_msg("tb_serve_create: %s", err);
    snprintf(m->base, sizeof(m->base), "http://127.0.0.1:%d/v1", tb_serve_port(m->srv));
    assert_int_equal(pthread_create(&m->th, NULL, serve_main, m->srv), 0);
}

void tb_test_mock_stop(struct tb_test_mock *m)
{
    tb_serve_stop(m->srv);
    pthread_join(m->th, NULL);
    tb_serve_destroy(m->srv);
    tb_stream_free(&m->s);
}

const char *tb_test_bin(void)
{
    const char *b = getenv("TTSBUF");
    return b != NULL ? b : "./ttsbuf";
}

int tb_test_sh(const char *cmd)
{
    int st = system(cmd);
    assert_true(WIFEXITED(st));
    return WEXITSTATUS(st);
}

/*
 * serve_fds.c - the descriptors `serve`'s connection cap needs, and the
 * soft limit raised for them (see serve_fds.h).
 */
#include "serve_fds.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>

#include "cli.h"
#include "ttsbuf/error.h"
#include "ttsbuf/serve.h"

/* The descriptors the process has open now (its standard streams,
 * --log's file): /proc/self/fd's entries but the one reading it, or,
 * without /proc, those below the soft limit (at most 65536) that
 * fcntl finds. */
static size_t fds_open(rlim_t soft)
{
    DIR *d = opendir("/proc/self/fd");
    size_t n = 0;
    if (d != NULL) {
        const struct dirent *e;
        while ((e = readdir(d)) != NULL)
            n += e->d_name[0] != '.';
        closedir(d);
        return n > 0 ? n - 1 : 0;
    }
    for (int fd = 0; (rlim_t)fd < soft && fd < 65536; fd++)
        n += fcntl(fd, F_GETFD) != -1;
    return n;
}

int tb_cli_serve_fd_limit(struct tb_serve_opts *so, int explicit_cap)
{
    struct rlimit rl;
    size_t cap = so->max_conns > 0 ? so->max_conns : TB_SERVE_CONNS_DEFAULT;
    size_t refusals, open, need, own, fit;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
        return 0;
    open = fds_open(rl.rlim_cur);
    need = open + tb_serve_fds_needed(cap, so->threads, &refusals);
    own = need - open - cap;
    if (rl.rlim_cur >= need + refusals)
        return 0;
    rl.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < need + refusals
                      ? rl.rlim_max
                      : (rlim_t)(need + refusals);
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
        getrlimit(RLIMIT_NOFILE, &rl); /* cannot raise it: what is there */
    if (rl.rlim_cur >= need)
        return 0;
    /* The largest cap that fits: need grows by one a connection. */
    fit = rl.rlim_cur > open + own ? (size_t)rl.rlim_cur - open - own : 0;
    if (explicit_cap || fit == 0) {
        tb_cli_error("--max-connections %zu needs %zu file descriptors (one a connection, %zu of "
                     "the server's own, %zu open already), and the limit is %llu (ulimit -Hn "
                     "%llu): ask for at most %zu, or raise the hard limit",
                     cap, need, own, open, (unsigned long long)rl.rlim_cur,
                     (unsigned long long)rl.rlim_max, fit);
        return TB_EINVAL;
    }
    fprintf(stderr,
            "ttsbuf: warning: the file descriptor limit (%llu) holds %zu connections: "
            "--max-connections is %zu, below its default %d\n",
            (unsigned long long)rl.rlim_cur, fit, fit, TB_SERVE_CONNS_DEFAULT);
    so->max_conns = fit;
    return 0;
}

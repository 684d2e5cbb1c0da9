/*
 * util.c - helpers the test groups share: reading files, listing case
 * directories.  Failures end the current case (cmocka's fail_msg).
 */
#define _DEFAULT_SOURCE /* wait4: a child's own peak RSS */
#include <arpa/inet.h>
#include <cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests.h"

char *tb_test_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL, *exact;
    size_t cap = 0, n = 0;
    if (f == NULL)
        fail_msg("cannot open %s: %s", path, strerror(errno));
    for (;;) {
        char chunk[4096];
        size_t got = fread(chunk, 1, sizeof(chunk), f);
        if (got == 0)
            break;
        if (n + got > cap) {
            char *nb;
            cap = (n + got) * 2;
            nb = realloc(buf, cap);
            assert_non_null(nb);
            buf = nb;
        }
        memcpy(buf + n, chunk, got);
        n += got;
    }
    assert_false(ferror(f));
    fclose(f);
    /* Exactly its size, so that any overread is out of bounds for ASan. */
    exact = malloc(n > 0 ? n : 1);
    assert_non_null(exact);
    if (n > 0)
        memcpy(exact, buf, n);
    free(buf);
    *len = n;
    return exact;
}

char *tb_test_slurp_text(const char *path, size_t *len)
{
    size_t n;
    char *buf = tb_test_slurp(path, &n), *s = malloc(n + 1);
    assert_non_null(s);
    memcpy(s, buf, n);
    s[n] = '\0';
    free(buf);
    if (len != NULL)
        *len = n;
    return s;
}

char *tb_test_slurp_str(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return calloc(1, 1);
    fclose(f);
    return tb_test_slurp_text(path, NULL);
}

int tb_test_same_bits(double a, double b)
{
    uint64_t x, y;
    memcpy(&x, &a, sizeof(x));
    memcpy(&y, &b, sizeof(y));
    return x == y;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t tb_test_list(const char *dir, const char *prefix, const char *suffix, int strip, char ***out)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **v = NULL;
    size_t n = 0, cap = 0, pl = strlen(prefix), sl = strlen(suffix);
    if (d == NULL)
        fail_msg("cannot open the case directory %s: %s", dir, strerror(errno));
    while ((de = readdir(d)) != NULL) {
        size_t nl = strlen(de->d_name);
        if (nl <= pl + sl || strncmp(de->d_name, prefix, pl) != 0 ||
            strcmp(de->d_name + nl - sl, suffix) != 0)
            continue;
        if (n == cap) {
            char **nv;
            cap = cap ? cap * 2 : 64;
            nv = realloc(v, cap * sizeof(*v));
            assert_non_null(nv);
            v = nv;
        }
        v[n] = strndup(de->d_name, strip ? nl - sl : nl);
        assert_non_null(v[n]);
        n++;
    }
    closedir(d);
    if (n > 0)
        qsort(v, n, sizeof(*v), cmp_str);
    *out = v;
    return n;
}

void tb_test_free_names(char **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(v[i]);
    free(v);
}

/* ---- running the binary (end-to-end tests) ---------------------------- */

/* Runs `$TTSBUF args` through sh (args may hold redirections of input). */
struct tb_test_out tb_test_run(const char *args)
{
    return tb_test_run_env(NULL, args);
}

struct tb_test_out tb_test_run_env(const char *env, const char *args)
{
    const char *bin = getenv("TTSBUF");
    char cmd[8192], so[64], se[64];
    struct tb_test_out o;
    int st;
    snprintf(so, sizeof(so), "/tmp/ttsbuf-test-%d.out", (int)getpid());
    snprintf(se, sizeof(se), "/tmp/ttsbuf-test-%d.err", (int)getpid());
    snprintf(cmd, sizeof(cmd), "env %s '%s' %s >%s 2>%s", env != NULL ? env : "",
             bin != NULL ? bin : "./ttsbuf", args, so, se);
    st = system(cmd);
    assert_true(WIFEXITED(st));
    o.code = WEXITSTATUS(st);
    o.so = tb_test_slurp_str(so);
    o.se = tb_test_slurp_str(se);
    remove(so);
    remove(se);
    return o;
}

const char *tb_test_collect_dir(void)
{
    const char *d = getenv("TB_COLLECT_DIR");
    return d != NULL && *d != '\0' && strlen(d) < 4096 ? d : NULL;
}

void tb_test_collect_bytes(const char *what, const char *ext, const char *buf, size_t len)
{
    static int seq;
    const char *d = tb_test_collect_dir(), *g = getenv("TB_TEST_GROUP");
    char path[4400];
    FILE *f;
    if (d == NULL)
        return;
    snprintf(path, sizeof(path), "%s/%s.%d-lib%d.lib.%s.%s", d, g != NULL ? g : "none",
             (int)getpid(), seq++, what, ext);
    f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

void tb_test_out_free(struct tb_test_out *o)
{
    free(o->so);
    free(o->se);
}

cJSON *tb_test_run_json(const char *env, const char *args, int code)
{
    struct tb_test_out o = tb_test_run_env(env, args);
    cJSON *j;
    if (o.code != code)
        fail_msg("ttsbuf %s: exit %d, wanted %d; stderr '%s'", args, o.code, code, o.se);
    j = cJSON_Parse(o.so);
    if (j == NULL)
        fail_msg("ttsbuf %s: stdout is not JSON: '%.200s'", args, o.so);
    tb_test_out_free(&o);
    return j;
}

/* Exit code and a one-line stderr that contains `want`. */
void tb_test_expect_error(const char *args, int code, const char *want)
{
    struct tb_test_out o = tb_test_run(args);
    if (o.code != code || strstr(o.se, want) == NULL)
        fail_msg("ttsbuf %s: exit %d, stderr '%s'; wanted exit %d and '%s'", args, o.code, o.se,
                 code, want);
    assert_int_equal(strncmp(o.se, "ttsbuf: ", 8), 0);
    /* Exactly one line. */
    assert_non_null(strchr(o.se, '\n'));
    assert_string_equal(strchr(o.se, '\n'), "\n");
    assert_string_equal(o.so, "");
    tb_test_out_free(&o);
}

static void loopback(struct sockaddr_in *a, int port)
{
    memset(a, 0, sizeof(*a));
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)port);
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
}

int tb_test_free_port(void)
{
    struct sockaddr_in a;
    socklen_t al = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0), port;
    assert_true(fd >= 0);
    loopback(&a, 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
    port = ntohs(a.sin_port);
    close(fd);
    return port;
}

int tb_test_refused_port(void)
{
    struct sockaddr_in a;
    socklen_t al = sizeof(a);
    /* Kept bound (never listening) until the group's process ends: no
     * other group can bind it meanwhile, so a connect there is refused
     * every time.  Close-on-exec: the runs a case starts do not hold it. */
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(fd >= 0);
    loopback(&a, 0);
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
    return ntohs(a.sin_port);
}

void tb_test_wait_port(int port)
{
    int ready = 0;
    /* Up to 30 s: a server's start (node's, on a machine also running the
     * suite's other groups) is waited for, not timed. */
    for (int t = 0; t < 1500 && !ready; t++) {
        struct sockaddr_in a;
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        loopback(&a, port);
        ready = bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0 && errno == EADDRINUSE;
        close(fd);
        if (!ready)
            nanosleep(&(struct timespec){0, 20L * 1000 * 1000}, NULL);
    }
    if (!ready)
        fail_msg("nothing listens on 127.0.0.1:%d after 30 s", port);
}

void tb_test_tls_cert(const char *tag, char *dir, size_t dirlen)
{
    char cmd[512];
    snprintf(dir, dirlen, "/tmp/ttsbuf-%s-%d", tag, (int)getpid());
    snprintf(cmd, sizeof(cmd),
             "mkdir -p %s && cd %s && openssl req -x509 -newkey ec -pkeyopt "
             "ec_paramgen_curve:prime256v1 -nodes -keyout k.pem -out c.pem -days 1 "
             "-subj /CN=127.0.0.1 >/dev/null 2>&1",
             dir, dir);
    if (system(cmd) != 0)
        fail_msg("openssl cannot make a certificate (is the openssl package installed?)");
}

/* The port serve (pid, its stderr in log) bound: it prints "listening on
 * http://127.0.0.1:PORT/v1" once bound (up to 30 s: a start is waited
 * for, not timed).  Fails the case, the server killed, when it does not. */
static int listening_port(pid_t pid, const char *log)
{
    int port = 0;
    for (int i = 0; i < 3000 && port == 0; i++) {
        const char *p;
        char *text;
        struct timespec ts = {0, 10000000};
        nanosleep(&ts, NULL);
        text = tb_test_slurp_str(log);
        p = strstr(text, "http://127.0.0.1:");
        if (p != NULL)
            port = atoi(p + strlen("http://127.0.0.1:"));
        free(text);
        if (port == 0 && waitpid(pid, NULL, WNOHANG) == pid)
            break; /* it ended */
    }
    if (port == 0) {
        char *text = tb_test_slurp_str(log);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        fail_msg("ttsbuf serve did not print its port: %s", text);
    }
    return port;
}

int tb_test_serve_spawn(const char *synth, const char *log, int *port)
{
    const char *bin = getenv("TTSBUF");
    pid_t pid;
    *port = 0;
    if (bin == NULL)
        bin = "./ttsbuf";
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        FILE *f = freopen(log, "w", stderr);
        (void)f;
        execl(bin, bin, "serve", "--listen", "127.0.0.1:0", "--same-stream", "--synth", synth,
              (char *)NULL);
        _exit(127);
    }
    *port = listening_port(pid, log);
    return (int)pid;
}

int tb_test_interrupt(int pid, int *status)
{
    int st = 0;
    for (int k = 0; k < 60 * 20; k++) {
        struct timespec ts = {0, 50000000};
        pid_t w;
        if (k % (10 * 20) == 0)
            kill((pid_t)pid, SIGINT);
        w = waitpid((pid_t)pid, &st, WNOHANG);
        if (w == (pid_t)pid || (w < 0 && errno != EINTR)) {
            *status = st;
            return w == (pid_t)pid ? 0 : -1;
        }
        nanosleep(&ts, NULL);
    }
    kill((pid_t)pid, SIGKILL);
    waitpid((pid_t)pid, &st, 0);
    *status = st;
    return -1;
}

int tb_test_serve_stop(int pid)
{
    int st;
    if (tb_test_interrupt(pid, &st) != 0)
        fail_msg("pid %d did not stop on SIGINT within 60 s", pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int serve_up_pid;

static int serve_up(const char *args, int same, int *port)
{
    char cmd[2048], log[96];
    pid_t pid;
    /* Port 0, read back from what it prints: a port found free and bound
     * later could be taken meanwhile by another group's connection. */
    snprintf(log, sizeof(log), "/tmp/ttsbuf-serveup-%d.log", (int)getpid());
    snprintf(cmd, sizeof(cmd), "exec '%s' serve --listen 127.0.0.1:0%s %s 2>%s", tb_test_bin(),
             same ? " --same-stream" : "", args, log);
    unlink(log);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    serve_up_pid = (int)pid;
    *port = listening_port(pid, log);
    return (int)pid;
}

int tb_test_serve_up(const char *args, int *port)
{
    return serve_up(args, 1, port);
}

int tb_test_serve_up_draws(const char *args, int *port)
{
    return serve_up(args, 0, port);
}

int tb_test_serve_down(void **state)
{
    (void)state;
    if (serve_up_pid > 0)
        tb_test_serve_stop(serve_up_pid);
    serve_up_pid = 0;
    return 0;
}

/* A process's peak RSS counts the RSS it had when it called exec, so a
 * shell forked from this (large, under the sanitizers) test process would
 * report the test process.  A small python3 runs the shell instead, and
 * reports its children's peak only (RUSAGE_CHILDREN). */
static const char rss_script[] =
    "import resource, subprocess, sys\n"
    "r = subprocess.run(['/bin/sh', '-c', sys.argv[2]])\n"
    "with open(sys.argv[1], 'w') as f:\n"
    "    f.write(str(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n"
    "sys.exit(r.returncode if r.returncode >= 0 else 128 - r.returncode)\n";

long tb_test_sh_rss(const char *cmd, int *status)
{
    char out[64], *text;
    long rss;
    int st;
    pid_t pid;
    snprintf(out, sizeof(out), "/tmp/ttsbuf-rss-%d", (int)getpid());
    fflush(NULL);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        execlp("python3", "python3", "-c", rss_script, out, cmd, (char *)NULL);
        _exit(127);
    }
    assert_int_equal(waitpid(pid, &st, 0), pid);
    assert_true(WIFEXITED(st));
    *status = WEXITSTATUS(st);
    text = tb_test_slurp_str(out);
    rss = strtol(text, NULL, 10);
    free(text);
    unlink(out);
    assert_true(rss > 0);
    return rss;
}

void tb_test_zeros_json(const char *path, const char *head, const char *tail, size_t size)
{
    static char block[1 << 16];
    size_t left =
        size > strlen(head) + strlen(tail) + 1 ? size - strlen(head) - strlen(tail) - 1 : 0;
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    for (size_t i = 0; i < sizeof(block); i += 2)
        memcpy(block + i, "0,", 2);
    assert_true(fputs(head, f) >= 0);
    while (left > 0) {
        size_t k = left < sizeof(block) ? left & ~(size_t)1 : sizeof(block);
        if (k == 0)
            break;
        assert_int_equal(fwrite(block, 1, k, f), k);
        left -= k;
    }
    assert_true(fputs("0", f) >= 0 && fputs(tail, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

void tb_test_tmpdir(char *dir, size_t len, const char *group, const char *tag)
{
    char cmd[600];
    snprintf(dir, len, "/tmp/ttsbuf-%s-%s-%d", group, tag, (int)getpid());
    snprintf(cmd, sizeof(cmd), "rm -rf '%s' && mkdir -p '%s'", dir, dir);
    assert_int_equal(tb_test_sh(cmd), 0);
}

void tb_test_rm_rf(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    assert_int_equal(tb_test_sh(cmd), 0);
}

size_t tb_test_jsonl_records(const char *path, cJSON **v, size_t cap)
{
    char *text = tb_test_slurp_str(path), *line, *save = NULL;
    size_t n = 0;
    int first = 1;
    for (line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save)) {
        if (first) {
            first = 0; /* the header */
            continue;
        }
        assert_true(n < cap);
        v[n] = cJSON_Parse(line);
        assert_non_null(v[n]);
        n++;
    }
    free(text);
    return n;
}

size_t tb_test_jsonl_with(const char *path, const char *key, cJSON **v, size_t max)
{
    char *text = tb_test_slurp_str(path), *p = text, *nl;
    size_t n = 0;
    while (n < max && (nl = strchr(p, '\n')) != NULL) {
        cJSON *o;
        *nl = '\0';
        o = cJSON_Parse(p);
        if (o == NULL)
            fail_msg("%s: not JSON: %.200s", path, p);
        if (!tb_test_is_null(o, key) && tb_test_key(o, key) != NULL)
            v[n++] = o;
        else
            cJSON_Delete(o);
        p = nl + 1;
    }
    free(text);
    return n;
}

void tb_test_json_free(cJSON **v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        cJSON_Delete(v[i]);
}

const cJSON *tb_test_key(const cJSON *o, const char *k)
{
    return cJSON_GetObjectItemCaseSensitive(o, k);
}

double tb_test_num(const cJSON *o, const char *k)
{
    const cJSON *x = tb_test_key(o, k);
    if (!cJSON_IsNumber(x))
        fail_msg("\"%s\" is not a number", k);
    return x->valuedouble;
}

double tb_test_num_or_nan(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (cJSON_IsNull(v))
        return NAN;
    if (!cJSON_IsNumber(v))
        fail_msg("\"%s\" is not a number or null", k);
    return v->valuedouble;
}

const char *tb_test_str(const cJSON *o, const char *k)
{
    const cJSON *x = tb_test_key(o, k);
    if (!cJSON_IsString(x))
        fail_msg("\"%s\" is not a string", k);
    return x->valuestring;
}

int tb_test_is_true(const cJSON *o, const char *k)
{
    const cJSON *x = tb_test_key(o, k);
    if (!cJSON_IsBool(x))
        fail_msg("\"%s\" is not true or false", k);
    return cJSON_IsTrue(x);
}

int tb_test_is_null(const cJSON *o, const char *k)
{
    return cJSON_IsNull(tb_test_key(o, k));
}

cJSON *tb_test_browse(const char *html, const char *out)
{
    const char *dir = getenv("TB_NODEDIR") != NULL ? getenv("TB_NODEDIR") : "tests/node";
    char cmd[1024];
    char *txt;
    cJSON *seen;
    int rc;
    snprintf(cmd, sizeof(cmd), "%s/node_modules/puppeteer-core/package.json", dir);
    if (access(cmd, R_OK) != 0)
        fail_msg("puppeteer-core is missing in %s/node_modules: run `make deps`", dir);
    snprintf(cmd, sizeof(cmd), "timeout 180 node %s/html-page.mjs %s >%s 2>&1", dir, html, out);
    rc = tb_test_sh(cmd);
    txt = tb_test_slurp_str(out);
    if (rc != 0)
        fail_msg("the browser could not drive %s: %s", html, txt);
    seen = cJSON_Parse(txt);
    if (seen == NULL)
        fail_msg("html-page.mjs printed no JSON: %s", txt);
    free(txt);
    if (cJSON_GetArraySize(cJSON_GetObjectItem(seen, "console_errors")) != 0)
        fail_msg("console errors: %s",
                 cJSON_PrintUnformatted(cJSON_GetObjectItem(seen, "console_errors")));
    if (cJSON_GetArraySize(cJSON_GetObjectItem(seen, "requests")) != 0)
        fail_msg("the page made a request: %s",
                 cJSON_PrintUnformatted(cJSON_GetObjectItem(seen, "requests")));
    return seen;
}

/* A number of a log line, or NAN for null or absent. */
static double slog_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

size_t tb_test_slog_read(const char *path, struct tb_test_slog *v, size_t cap)
{
    cJSON *lines[512];
    size_t n = tb_test_jsonl_records(path, lines, sizeof(lines) / sizeof(lines[0]));
    assert_true(n <= cap);
    for (size_t i = 0; i < n; i++) {
        const cJSON *route = cJSON_GetObjectItemCaseSensitive(lines[i], "route");
        const cJSON *rid = cJSON_GetObjectItemCaseSensitive(lines[i], "request_id");
        memset(&v[i], 0, sizeof(v[i]));
        snprintf(v[i].route, sizeof(v[i].route), "%s",
                 cJSON_IsString(route) ? route->valuestring : "");
        snprintf(v[i].rid, sizeof(v[i].rid), "%s", cJSON_IsString(rid) ? rid->valuestring : "");
        v[i].received = slog_num(lines[i], "received_s");
        v[i].first_byte = slog_num(lines[i], "first_byte_s");
        v[i].late_max = slog_num(lines[i], "late_max_s");
        v[i].end = slog_num(lines[i], "end_s");
        v[i].closed = slog_num(lines[i], "closed_s");
        v[i].tts_chars = slog_num(lines[i], "tts_chars");
        cJSON_Delete(lines[i]);
    }
    return n;
}

int tb_test_wait_text(const char *path, const char *needle, double seconds)
{
    for (int i = 0;; i++) {
        char *t = tb_test_slurp_str(path);
        int found = t != NULL && strstr(t, needle) != NULL;
        free(t);
        if (found)
            return 1;
        if (i >= (int)(seconds * 100.0))
            return 0;
        usleep(10000);
    }
}

void tb_test_rec_trace(const char *dir, const cJSON *rec, char *path, size_t len)
{
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(rec, "trace");
    const cJSON *id = cJSON_GetObjectItemCaseSensitive(rec, "id");
    char src[512], base[128], *t, *save = NULL;
    const char *slash;
    size_t bl;
    int in = 0, found = 0;
    FILE *f;
    if (!cJSON_IsString(tr) || !cJSON_IsNumber(id))
        fail_msg("a record without a trace or an id");
    snprintf(src, sizeof(src), "%s/%s", dir, tr->valuestring);
    slash = strrchr(tr->valuestring, '/');
    snprintf(base, sizeof(base), "%s", slash != NULL ? slash + 1 : tr->valuestring);
    bl = strlen(base);
    if (bl > 6 && strcmp(base + bl - 6, ".jsonl") == 0)
        base[bl - 6] = '\0';
    snprintf(path, len, "%s/%s-request-%.0f.jsonl", dir, base, id->valuedouble);
    t = tb_test_slurp_str(src);
    f = fopen(path, "w");
    assert_non_null(f);
    for (char *l = strtok_r(t, "\n", &save); l != NULL; l = strtok_r(NULL, "\n", &save)) {
        if (strncmp(l, "{\"ttsbuf_trace\"", 15) == 0) {
            cJSON *h = cJSON_Parse(l);
            const cJSON *r = cJSON_GetObjectItemCaseSensitive(h, "request");
            in = cJSON_IsNumber(r) && r->valuedouble == id->valuedouble;
            found |= in;
            cJSON_Delete(h);
        }
        if (in)
            fprintf(f, "%s\n", l);
    }
    fclose(f);
    free(t);
    if (!found)
        fail_msg("%s holds no trace of request %.0f", src, id->valuedouble);
}

int tb_test_port_file(const char *path)
{
    int port = 0;
    if (!tb_test_wait_text(path, "\n", 30.0))
        fail_msg("no port in %s after 30 s: the server did not start", path);
    {
        char *t = tb_test_slurp_str(path);
        if (t == NULL || sscanf(t, "%d", &port) != 1 || port <= 0 || port > 65535)
            fail_msg("%s holds no port: '%s'", path, t != NULL ? t : "");
        free(t);
    }
    return port;
}

size_t tb_test_slog_wait(const char *path, struct tb_test_slog *v, size_t cap, size_t from,
                         const char *prefix, size_t want)
{
    for (int tries = 0;; tries++) {
        size_t n = tb_test_slog_read(path, v, cap), got = 0;
        for (size_t i = from; i < n; i++)
            got += prefix == NULL || strncmp(v[i].route, prefix, strlen(prefix)) == 0;
        if (got >= want || tries >= 500 * TB_TEST_TIME_SCALE)
            return n;
        usleep(10000);
    }
}

/* A timed write of the mock server judged as tests.h says (the order of
 * the checks is the order of the messages a reader wants first). */
const char *tb_test_sched_check(double due, double client, double server,
                                const struct tb_test_slog *l, double lag, double tol,
                                double late_tol, char *msg, size_t len)
{
    double late = isnan(l->late_max) ? 0 : l->late_max;
    if (client < due - 0.001)
        snprintf(msg, len, "read at %.4f s, due at %.4f s: early", client, due);
    else if (!isnan(server) && (server < due - 0.001 || server > due + late + 0.001))
        snprintf(msg, len,
                 "the server's log has it at %.4f s, due at %.4f s, its own lateness %.4f s: "
                 "another schedule",
                 server, due, late);
    else if (late > late_tol + lag)
        snprintf(msg, len,
                 "the server measured itself %.4f s late, more than %.4f s and the machine's "
                 "wake-up delay %.4f s",
                 late, late_tol, lag);
    else if (!isnan(server) && fabs(client - server) > tol + 2 * lag)
        snprintf(msg, len,
                 "read at %.4f s, the server's log has it sent at %.4f s (allowed %.4f s apart, "
                 "the machine's wake-up delay %.4f s)",
                 client, server, tol + 2 * lag, lag);
    else if (client > due + late + tol + 2 * lag)
        snprintf(msg, len,
                 "read at %.4f s, due at %.4f s (the server %.4f s late, the machine's wake-up "
                 "delay %.4f s)",
                 client, due, late, lag);
    else
        return NULL;
    return msg;
}

void tb_test_up_to_three(int (*once)(char *why, size_t len), const char *what)
{
    char why[400] = "";
    for (int attempt = 1; attempt <= 3; attempt++) {
        if (once(why, sizeof(why)))
            return;
        print_message("%s: try %d: %s\n", what, attempt, why);
    }
    fail_msg("%s: %s (3 tries)", what, why);
}

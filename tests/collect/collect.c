/*
 * collect.c - the test suite's stand-in for the ttsbuf binary: it runs the
 * real one and keeps a copy of every JSON, JSONL and CSV output the run
 * wrote, for the "schema" test group to validate (tests/schema_check.py).
 *
 *   TTSBUF=build/ttsbuf-collect TB_TTSBUF_REAL=build/ttsbuf \
 *   TB_COLLECT_DIR=build/test-outputs TB_TEST_GROUP=bench ttsbuf-collect ARGS...
 *
 * What it copies, once the real binary has exited: its stdout when that is
 * a regular file of its own (not shared with stderr) and the bytes written
 * start with '{' (or are CSV from a --csv run), the files named by --record, sweep's --json and
 * --csv, and the JSON embedded in --html pages; for bench --out DIR, every file in DIR and
 * DIR/traces.  Only files the run created or changed are copied (a stale file a test planted is not
 * the run's output).  A copy is named GROUP.PID-N.COMMAND.WHAT.EXT; a CSV's name ends in .KIND.csv.
 *
 * Transparency: stdin, stdout and stderr are the real binary's own (no
 * pipe in between, so isatty and SIGPIPE behave as without it); a signal
 * sent to this process with kill(2) is passed on; the exit status is the
 * real binary's, and when a signal ended it, this process ends by the
 * same signal.  `serve`, and any run without TB_COLLECT_DIR, is an exec.
 * Built without the sanitizers (the Makefile): its own memory and time
 * stay out of what the tests measure of the binary.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_OUT 4096         /* output paths (files, and files under a DIR) */
#define MAX_COPY (64L << 20) /* larger outputs are noted, not copied */

/* One output path, and what it was before the run. */
struct out {
    char path[4096];
    char what[32]; /* "record", "json", "csv", "html", "out" */
    int existed;
    struct stat before;
};

static struct out outs[MAX_OUT];
static int nouts;
static const char *cdir, *group, *cmd;
static int seq;
static volatile sig_atomic_t child;

/* Notes an output path and what it is now; NULL when there is no room. */
static struct out *add(const char *path, const char *what)
{
    struct out *o;
    if (nouts == MAX_OUT || strcmp(path, "-") == 0 || strlen(path) >= sizeof(o->path))
        return NULL;
    o = &outs[nouts++];
    snprintf(o->path, sizeof(o->path), "%s", path);
    snprintf(o->what, sizeof(o->what), "%s", what);
    o->existed = stat(path, &o->before) == 0;
    return o;
}

/* bench --out directories: their files are listed before the run (to
 * know which the run changed) and again after it (to find new ones). */
#define MAX_DIRS 4
static char dirs[MAX_DIRS][4096];
static int ndirs;

/* Calls fn on every file in dir and dir/traces. */
static void each_file(const char *dir, void (*fn)(const char *path))
{
    static const char *const subs[] = {"", "/traces"};
    for (int s = 0; s < 2; s++) {
        char d[4200], p[8192];
        DIR *dh;
        struct dirent *e;
        snprintf(d, sizeof(d), "%s%s", dir, subs[s]);
        dh = opendir(d);
        if (dh == NULL)
            continue;
        while ((e = readdir(dh)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            snprintf(p, sizeof(p), "%s/%s", d, e->d_name);
            fn(p);
        }
        closedir(dh);
    }
}

static void add_out(const char *path)
{
    (void)add(path, "out");
}

static void add_dir(const char *dir)
{
    if (ndirs == MAX_DIRS || strlen(dir) >= sizeof(dirs[0]))
        return;
    snprintf(dirs[ndirs++], sizeof(dirs[0]), "%s", dir);
    each_file(dir, add_out);
}

/* A file of a DIR the run created. */
static void add_new(const char *path)
{
    struct out *o;
    for (int i = 0; i < nouts; i++)
        if (strcmp(outs[i].path, path) == 0)
            return;
    o = add(path, "out");
    if (o != NULL)
        o->existed = 0;
}

static int changed(const struct out *o, const struct stat *now)
{
    return !o->existed || now->st_ino != o->before.st_ino || now->st_size != o->before.st_size ||
           now->st_mtim.tv_sec != o->before.st_mtim.tv_sec ||
           now->st_mtim.tv_nsec != o->before.st_mtim.tv_nsec;
}

/* Writes n bytes as a new file in the collection dir named
 * GROUP.PID-N.COMMAND.WHAT.EXT. */
static void keep(const char *what, const char *ext, const char *buf, size_t n)
{
    char name[8192];
    int fd;
    snprintf(name, sizeof(name), "%s/%s.%d-%d.%s.%s.%s", cdir, group, (int)getpid(), seq++, cmd,
             what, ext);
    fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0)
        return;
    while (n > 0) {
        ssize_t w = write(fd, buf, n);
        if (w <= 0)
            break;
        buf += w;
        n -= (size_t)w;
    }
    close(fd);
}

/* Reads fd from offset to its end (caller frees); NULL when over the cap,
 * noted in the collection dir. */
static char *slurp(int fd, off_t off, size_t *n, const char *what)
{
    struct stat st;
    char *buf;
    size_t len;
    if (fstat(fd, &st) != 0 || st.st_size < off)
        return NULL;
    len = (size_t)(st.st_size - off);
    if ((long)len > MAX_COPY) {
        char note[64];
        int k = snprintf(note, sizeof(note), "%zu bytes\n", len);
        keep(what, "toolarge", note, (size_t)k);
        return NULL;
    }
    buf = malloc(len + 1);
    if (buf == NULL)
        return NULL;
    *n = 0;
    while (*n < len) {
        ssize_t r = pread(fd, buf + *n, len - *n, off + (off_t)*n);
        if (r <= 0)
            break;
        *n += (size_t)r;
    }
    buf[*n] = '\0';
    return buf;
}

/* The kind of a CSV this command writes (names the schema). */
static const char *csv_kind(void)
{
    if (strcmp(cmd, "compare") == 0)
        return "compare";
    return strcmp(cmd, "sweep") == 0 ? "sweep" : "bench_summary";
}

/* Keeps the JSON of each <script type="application/json"> in a page. */
static void keep_html(const char *page)
{
    static const char open_tag[] = "<script type=\"application/json\"";
    const char *p = page;
    while ((p = strstr(p, open_tag)) != NULL) {
        const char *b = strchr(p, '>'), *e;
        if (b == NULL || (e = strstr(b, "</script>")) == NULL)
            return;
        keep("html", "json", b + 1, (size_t)(e - b - 1));
        p = e;
    }
}

static void keep_file(const struct out *o, const char *buf, size_t n)
{
    const char *ext = strrchr(o->path, '.');
    if (strcmp(o->what, "html") == 0) {
        keep_html(buf);
    } else if (strcmp(o->what, "csv") == 0) {
        char e[64];
        snprintf(e, sizeof(e), "%s.csv", csv_kind());
        keep(o->what, e, buf, n);
    } else if (ext != NULL && (strcmp(ext, ".json") == 0 || strcmp(ext, ".jsonl") == 0)) {
        keep(o->what, ext + 1, buf, n);
    } else if (strcmp(o->what, "out") != 0 || n == 0 || buf[0] == '{') {
        keep(o->what, "json", buf, n); /* --record FILE, --json FILE */
    }
}

static void collect_files(void)
{
    for (int d = 0; d < ndirs; d++)
        each_file(dirs[d], add_new);
    for (int i = 0; i < nouts; i++) {
        struct stat now;
        char *buf;
        size_t n = 0;
        int fd;
        if (stat(outs[i].path, &now) != 0 || !S_ISREG(now.st_mode) || !changed(&outs[i], &now))
            continue;
        fd = open(outs[i].path, O_RDONLY);
        if (fd < 0)
            continue;
        buf = slurp(fd, 0, &n, outs[i].what);
        close(fd);
        if (buf != NULL)
            keep_file(&outs[i], buf, n);
        free(buf);
    }
}

/* The output options of argv (both "--opt V" and "--opt=V"). */
static void scan_args(int argc, char **argv)
{
    static const struct {
        const char *opt, *cmd, *what; /* cmd NULL: any command */
    } file_opts[] = {
        {"--record", NULL, "record"}, {"--html", NULL, "html"},  {"--json", "sweep", "json"},
        {"--csv", "sweep", "csv"},    {"--out", "bench", "out"},
    };
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        for (size_t k = 0; k < sizeof(file_opts) / sizeof(file_opts[0]); k++) {
            size_t n = strlen(file_opts[k].opt);
            const char *v = NULL;
            if (file_opts[k].cmd != NULL && strcmp(file_opts[k].cmd, cmd) != 0)
                continue;
            if (strncmp(argv[i], file_opts[k].opt, n) != 0)
                continue;
            if (argv[i][n] == '=')
                v = argv[i] + n + 1;
            else if (argv[i][n] == '\0' && i + 1 < argc)
                v = argv[i + 1];
            if (v == NULL)
                continue;
            if (strcmp(file_opts[k].what, "out") == 0)
                add_dir(v);
            else
                add(v, file_opts[k].what);
        }
    }
}

/* Did the run ask for CSV on stdout? */
static int stdout_csv(int argc, char **argv)
{
    for (int i = 2; i < argc; i++) {
        if (strcmp(cmd, "sweep") == 0 &&
            (strcmp(argv[i], "--csv=-") == 0 ||
             (strcmp(argv[i], "--csv") == 0 && i + 1 < argc && strcmp(argv[i + 1], "-") == 0)))
            return 1;
        if (strcmp(cmd, "sweep") != 0 && strcmp(argv[i], "--csv") == 0)
            return 1;
    }
    return 0;
}

static void pass_on(int sig, siginfo_t *si, void *uc)
{
    (void)uc;
    /* A signal from a terminal reached the whole process group, the real
     * binary too; only one sent to this process alone is passed on. */
    if (child > 0 && si->si_code <= 0)
        kill((pid_t)child, sig);
}

int main(int argc, char **argv)
{
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};
    const char *real = getenv("TB_TTSBUF_REAL");
    struct stat so, se;
    off_t so_off = -1;
    int so_fd = -1, st;
    pid_t pid;
    if (real == NULL) {
        fputs("ttsbuf-collect: TB_TTSBUF_REAL is not set\n", stderr);
        return 127;
    }
    cdir = getenv("TB_COLLECT_DIR");
    group = getenv("TB_TEST_GROUP");
    cmd = argc > 1 ? argv[1] : "";
    if (cdir == NULL || *cdir == '\0' || argc < 2 || strcmp(cmd, "serve") == 0 ||
        strchr(cmd, '/') != NULL || strchr(cmd, '.') != NULL) {
        execv(real, argv);
        perror(real);
        return 127;
    }
    if (group == NULL || *group == '\0' || strchr(group, '/') != NULL)
        group = "none";
    scan_args(argc, argv);
    /* Stdout mixed with stderr (2>&1) is not an output of its own. */
    if (fstat(STDOUT_FILENO, &so) == 0 && S_ISREG(so.st_mode) &&
        !(fstat(STDERR_FILENO, &se) == 0 && se.st_dev == so.st_dev && se.st_ino == so.st_ino)) {
        so_off = lseek(STDOUT_FILENO, 0, SEEK_CUR);
        so_fd = open("/proc/self/fd/1", O_RDONLY | O_CLOEXEC);
    }
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = pass_on;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
    pid = fork();
    if (pid < 0) {
        perror("fork");
        return 127;
    }
    if (pid == 0) {
        for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
            signal(sigs[i], SIG_DFL);
        execv(real, argv);
        perror(real);
        _exit(127);
    }
    child = pid;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    child = 0;
    /* A run cut by SIGKILL says nothing about the format. */
    if (!(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)) {
        collect_files();
        if (so_fd >= 0 && so_off >= 0) {
            size_t n = 0;
            char *buf = slurp(so_fd, so_off, &n, "stdout");
            if (buf != NULL && n > 0) {
                if (stdout_csv(argc, argv)) {
                    char e[64];
                    snprintf(e, sizeof(e), "%s.csv", csv_kind());
                    keep("stdout", e, buf, n);
                } else if (buf[0] == '{') {
                    keep("stdout", "json", buf, n);
                }
            }
            free(buf);
        }
    }
    if (WIFSIGNALED(st)) {
        signal(WTERMSIG(st), SIG_DFL);
        raise(WTERMSIG(st));
        return 128 + WTERMSIG(st);
    }
    return WEXITSTATUS(st);
}

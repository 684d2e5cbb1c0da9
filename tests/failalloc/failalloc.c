/*
 * failalloc.c - an allocator that fails once, for the exits group's
 * out-of-memory cases (tests/test_exits.c), as SQLite's fault.c fails one
 * allocation of a run.  It is linked into build/ttsbuf-failalloc with
 * -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,
 * --wrap=strndup (the Makefile), so every allocation ttsbuf's own code
 * makes, the CLI's and libttsbuf's, comes through here; libcurl's,
 * cJSON's, eSpeak NG's and libc's own do not (they are linked as shared
 * libraries and keep their allocator).
 *
 * TB_FAILALLOC=N: the N-th of them (from 1, counted over every thread)
 * fails, returning NULL with errno ENOMEM; every other one succeeds.
 * TB_FAILALLOC_COUNT=FILE: at exit, how many there were is written to
 * FILE, so a test can spread N over a run's allocations.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static atomic_ulong count;
static unsigned long fail_at; /* 0: none */
static atomic_int ready;

static void write_count(void)
{
    const char *path = getenv("TB_FAILALLOC_COUNT");
    FILE *f = path != NULL ? fopen(path, "w") : NULL;
    if (f == NULL)
        return;
    fprintf(f, "%lu\n", (unsigned long)atomic_load(&count));
    fclose(f);
}

/* The first allocation reads the environment (the wrappers run before
 * main). */
static void setup(void)
{
    const char *v;
    if (atomic_exchange(&ready, 1) != 0)
        return;
    v = getenv("TB_FAILALLOC");
    fail_at = v != NULL ? strtoul(v, NULL, 10) : 0;
    if (getenv("TB_FAILALLOC_COUNT") != NULL)
        atexit(write_count);
}

/* 1 when this allocation is the one to fail. */
static int fails(void)
{
    unsigned long k;
    setup();
    k = atomic_fetch_add(&count, 1) + 1;
    if (k != fail_at)
        return 0;
    errno = ENOMEM;
    return 1;
}

void *__wrap_malloc(size_t n)
{
    return fails() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t m)
{
    return fails() ? NULL : __real_calloc(n, m);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fails() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = __wrap_malloc(n);
    return d != NULL ? memcpy(d, s, n) : NULL;
}

char *__wrap_strndup(const char *s, size_t n)
{
    size_t k = strnlen(s, n);
    char *d = __wrap_malloc(k + 1);
    if (d == NULL)
        return NULL;
    memcpy(d, s, k);
    d[k] = '\0';
    return d;
}

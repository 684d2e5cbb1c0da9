/*
 * rt_alloc.c - counts heap allocations made inside tb_pcmring_pull, the
 * real-time path, so a test can prove there are none.
 *
 * Plain builds replace malloc/calloc/realloc/free (glibc supports
 * replacing the set; each forwards to glibc's own __libc_* entry points).
 * Sanitizer builds cannot replace them, so they use the sanitizers' own
 * allocation hook (__sanitizer_install_malloc_and_free_hooks), installed
 * on first use.
 */
#include <stdatomic.h>
#include <stddef.h>

#include "tests.h"
#include "ttsbuf/pcmring.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TB_SANITIZED 1
/* The sanitizer runtimes' public hook (sanitizer/allocator_interface.h,
 * which GCC does not ship; the runtime exports the function). */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
                                              void (*free_hook)(const volatile void *));
#endif

static atomic_ulong total, in_rt;

static void note(void)
{
    atomic_fetch_add_explicit(&total, 1, memory_order_relaxed);
    if (tb_pcmring_in_pull())
        atomic_fetch_add_explicit(&in_rt, 1, memory_order_relaxed);
}

#ifdef TB_SANITIZED
static void on_malloc(const volatile void *p, size_t n)
{
    (void)p;
    (void)n;
    note();
}

static void on_free(const volatile void *p)
{
    (void)p;
}

static void install(void)
{
    static atomic_int done;
    if (atomic_exchange(&done, 1) == 0)
        __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
}
#else
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

void *malloc(size_t n);
void *calloc(size_t n, size_t m);
void *realloc(void *p, size_t n);
void free(void *p);

void *malloc(size_t n)
{
    note();
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
    note();
    return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
    note();
    return __libc_realloc(p, n);
}

void free(void *p)
{
    __libc_free(p);
}

static void install(void)
{
}
#endif

void tb_test_alloc_counts(unsigned long *all, unsigned long *rt)
{
    install();
    *all = atomic_load(&total);
    *rt = atomic_load(&in_rt);
}

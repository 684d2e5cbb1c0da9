/*
 * grow.h - private to libttsbuf: the one growable-array step the library
 * repeats (chunk lists, waiting chunks, release records).
 */
#ifndef TTSBUF_GROW_H
#define TTSBUF_GROW_H

#include <stddef.h>
#include <stdlib.h>

/*
 * tb_grow - reallocates array v (of *cap elements of size elem) to twice
 * its capacity, or to `first` elements when empty, and updates *cap.
 * Returns the new array, or NULL (v and *cap untouched) when memory or
 * size_t runs out.  Call it when the array is full.
 */
static inline void *tb_grow(void *v, size_t *cap, size_t elem, size_t first)
{
    size_t nc = *cap ? *cap * 2 : first;
    void *nv;
    if (nc < *cap || nc > (size_t)-1 / elem)
        return NULL;
    nv = realloc(v, nc * elem);
    if (nv != NULL)
        *cap = nc;
    return nv;
}

#endif

/*
 * replay.c - a main() for the fuzz targets without libFuzzer: runs
 * LLVMFuzzerTestOneInput once on every file named, or on every file in
 * every directory named (not recursive).  Exit 0 when every input ran;
 * a failed property aborts (see fuzz.h).  `make test` uses it to replay
 * the checked-in corpora and crashers under the ordinary build, ASan and
 * valgrind alike.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t n = 0, cap = 0;
    if (f == NULL) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    for (;;) {
        if (n == cap) {
            uint8_t *nb;
            cap = cap ? cap * 2 : 4096;
            nb = realloc(buf, cap);
            if (nb == NULL) {
                fclose(f);
                free(buf);
                return 1;
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        if (got == 0)
            break;
        n += got;
    }
    fclose(f);
    {
        /* Exactly its size, so an overread is out of bounds for ASan. */
        uint8_t *exact = malloc(n > 0 ? n : 1);
        if (exact == NULL) {
            free(buf);
            return 1;
        }
        if (n > 0)
            memcpy(exact, buf, n);
        free(buf);
        LLVMFuzzerTestOneInput(exact, n);
        free(exact);
    }
    return 0;
}

int main(int argc, char **argv)
{
    int bad = 0;
    size_t runs = 0;
    for (int i = 1; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) != 0) {
            fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
            return 1;
        }
        if (S_ISDIR(st.st_mode)) {
            DIR *d = opendir(argv[i]);
            struct dirent *de;
            if (d == NULL)
                return 1;
            while ((de = readdir(d)) != NULL) {
                char path[4096];
                if (de->d_name[0] == '.')
                    continue;
                snprintf(path, sizeof(path), "%s/%s", argv[i], de->d_name);
                if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                    bad |= run_file(path);
                    runs++;
                }
            }
            closedir(d);
        } else {
            bad |= run_file(argv[i]);
            runs++;
        }
    }
    printf("replay: %zu inputs\n", runs);
    return bad;
}

/*
 * dlopened.c: a program that is not linked with heisen opens libheisen.so
 * with dlopen (as a tool or a language runtime would) after it started a
 * thread, and enters and exits a region on both threads. heisen keeps
 * each thread's slot pointer in an initial-exec TLS variable, so the
 * library's TLS block lives in the static TLS area: dlopen must find room
 * for it and give the thread that already ran its own, zeroed copy.
 *
 *   dlopened <path of libheisen.so>
 *
 * Prints "pairs <main> <thread>" (the number of pairs whose calls all
 * returned HEISEN_RESULT_OK on each thread).
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define PAIRS 1000

typedef int (*register_fn)(const char *, uint32_t *);
typedef int (*id_fn)(uint32_t);
typedef int (*void_fn)(void);

static id_fn enter, leave;
static uint32_t region;
static pthread_barrier_t loaded;

static long pairs(void) {
    long ok = 0;
    for (int i = 0; i < PAIRS; i++) ok += enter(region) == 0 && leave(region) == 0;
    return ok;
}

static void *early(void *arg) {
    (void)arg;
    pthread_barrier_wait(&loaded); /* the library is open now */
    return (void *)(intptr_t)pairs();
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: dlopened <libheisen.so>\n");
        return 2;
    }
    pthread_t thread;
    pthread_barrier_init(&loaded, NULL, 2);
    if (pthread_create(&thread, NULL, early, NULL) != 0) return 3;
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 4;
    }
    register_fn reg = (register_fn)dlsym(lib, "heisen_region_register");
    enter = (id_fn)dlsym(lib, "heisen_region_enter");
    leave = (id_fn)dlsym(lib, "heisen_region_exit");
    void_fn finalize = (void_fn)dlsym(lib, "heisen_finalize");
    if (!reg || !enter || !leave || !finalize || reg("dlopened", &region) != 0) return 5;
    pthread_barrier_wait(&loaded);
    long mine = pairs();
    void *theirs;
    pthread_join(thread, &theirs);
    if (finalize() != 0) return 6;
    printf("pairs %ld %ld\n", mine, (long)(intptr_t)theirs);
    return 0;
}

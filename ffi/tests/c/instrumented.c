/*
 * instrumented.c: a C program compiled with -finstrument-functions and
 * linked with -lheisen, nothing else: every function becomes a region
 * named after it (tests/instrument.rs builds it as a PIE, as a classic
 * executable and stripped). Static functions, an exported one, functions
 * of a shared library, two threads.
 */
#include <pthread.h>
#include <stdio.h>

int tiny_exported(int x);

static int leaf(int x) { return x * 7 + 3; }

static int middle(int x) {
    int s = 0;
    for (int i = 0; i < 10; i++) s += leaf(x + i);
    return s;
}

int api_function(int x) { return middle(x) + tiny_exported(x); }

static void *worker(void *arg) {
    long n = (long)arg;
    long s = 0;
    for (long i = 0; i < n; i++) s += api_function((int)i);
    return (void *)s;
}

int main(void) {
    pthread_t threads[2];
    for (long t = 0; t < 2; t++) pthread_create(&threads[t], NULL, worker, (void *)100);
    long total = 0;
    for (int t = 0; t < 2; t++) {
        void *s;
        pthread_join(threads[t], &s);
        total += (long)s;
    }
    printf("total %ld\n", total);
    return 0;
}

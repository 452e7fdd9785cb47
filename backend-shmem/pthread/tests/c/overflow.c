/* More mutexes than heisen-pthread's table holds: the extra ones must
 * still work (unmeasured) and the overflow be reported at exit. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define N 20000
#define STATICS 10000

/* statically initialised (all zero bytes: PTHREAD_MUTEX_INITIALIZER) */
static pthread_mutex_t statics[STATICS];
static long static_count;

int main(void) {
    pthread_mutex_t *locks = malloc(sizeof(pthread_mutex_t) * N);
    long sum = 0;
    for (int i = 0; i < N; i++) pthread_mutex_init(&locks[i], NULL);
    for (int i = 0; i < N; i++) {
        pthread_mutex_lock(&locks[i]);
        sum += i;
        pthread_mutex_unlock(&locks[i]);
    }
    for (int i = 0; i < STATICS; i++) {
        pthread_mutex_lock(&statics[i]);
        static_count++;
        pthread_mutex_unlock(&statics[i]);
    }
    if (static_count != STATICS)
        return 1;
    printf("sum %ld\n", sum);
    free(locks);
    return 0;
}

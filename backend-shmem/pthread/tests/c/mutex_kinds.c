/* Mutex kinds and their errors, as a program sees them: recursive and
 * error-checking mutexes (EDEADLK, EPERM), a robust mutex whose owner
 * died (EOWNERDEAD, then usable again after pthread_mutex_consistent),
 * static initialisers, trylock EBUSY, timedlock ETIMEDOUT, and a mutex
 * destroyed and re-initialised at the same address with another kind
 * (no state may leak between its lives). Output must be identical with
 * and without LD_PRELOAD=libheisen_pthread.so. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static pthread_mutex_t st_normal = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t st_rec = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static pthread_mutex_t st_err = PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP;
static pthread_mutex_t m; /* re-initialised with several kinds */
static pthread_mutex_t robust;

static const char *name(int rc) {
    switch (rc) {
    case 0: return "0";
    case EBUSY: return "EBUSY";
    case EDEADLK: return "EDEADLK";
    case EPERM: return "EPERM";
    case ETIMEDOUT: return "ETIMEDOUT";
    case EOWNERDEAD: return "EOWNERDEAD";
    case ENOTRECOVERABLE: return "ENOTRECOVERABLE";
    case EAGAIN: return "EAGAIN";
    default: return strerror(rc);
    }
}
#define SHOW(what, call) printf("%-40s %s\n", what, name(call))

static void soon(struct timespec *t) {
    clock_gettime(CLOCK_REALTIME, t);
    t->tv_nsec += 2000000;
    if (t->tv_nsec >= 1000000000L) { t->tv_nsec -= 1000000000L; t->tv_sec++; }
}

static void init_kind(pthread_mutex_t *mx, int kind) {
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, kind);
    pthread_mutex_init(mx, &a);
    pthread_mutexattr_destroy(&a);
}

static void *try_other(void *arg) {
    pthread_mutex_t *mx = arg;
    struct timespec t;
    SHOW("other: trylock held", pthread_mutex_trylock(mx));
    soon(&t);
    SHOW("other: timedlock held", pthread_mutex_timedlock(mx, &t));
    return NULL;
}

/* Only for kinds that check the owner (unlocking a normal mutex one
 * does not own is undefined). */
static void *try_other_unlock(void *arg) {
    try_other(arg);
    SHOW("other: unlock not owner", pthread_mutex_unlock(arg));
    return NULL;
}

static void *die_holding(void *arg) {
    (void)arg;
    SHOW("dier: lock robust", pthread_mutex_lock(&robust));
    return NULL; /* dies holding it */
}

static void *contend(void *arg) {
    long *n = arg;
    for (int i = 0; i < 20000; i++) {
        pthread_mutex_lock(&st_rec);
        pthread_mutex_lock(&st_rec);
        ++*n;
        pthread_mutex_unlock(&st_rec);
        pthread_mutex_unlock(&st_rec);
    }
    return NULL;
}

int main(void) {
    pthread_t t;
    /* statics */
    SHOW("static normal lock", pthread_mutex_lock(&st_normal));
    SHOW("static normal trylock self", pthread_mutex_trylock(&st_normal));
    SHOW("static normal unlock", pthread_mutex_unlock(&st_normal));
    SHOW("static rec lock", pthread_mutex_lock(&st_rec));
    SHOW("static rec lock again", pthread_mutex_lock(&st_rec));
    SHOW("static rec trylock again", pthread_mutex_trylock(&st_rec));
    pthread_create(&t, NULL, try_other_unlock, &st_rec);
    pthread_join(t, NULL);
    SHOW("static rec unlock 1", pthread_mutex_unlock(&st_rec));
    SHOW("static rec unlock 2", pthread_mutex_unlock(&st_rec));
    SHOW("static rec unlock 3", pthread_mutex_unlock(&st_rec));
    SHOW("static rec unlock extra", pthread_mutex_unlock(&st_rec));
    SHOW("static err unlock unlocked", pthread_mutex_unlock(&st_err));
    SHOW("static err lock", pthread_mutex_lock(&st_err));
    SHOW("static err lock again", pthread_mutex_lock(&st_err));
    pthread_create(&t, NULL, try_other_unlock, &st_err);
    pthread_join(t, NULL);
    SHOW("static err unlock", pthread_mutex_unlock(&st_err));

    /* recursive contention from two threads */
    long n1 = 0, n2 = 0;
    pthread_t a, b;
    pthread_create(&a, NULL, contend, &n1);
    pthread_create(&b, NULL, contend, &n2);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("contended recursive: %ld\n", n1 + n2);

    /* one address, three lives */
    for (int life = 0; life < 3; life++) {
        int kinds[3] = {PTHREAD_MUTEX_RECURSIVE, PTHREAD_MUTEX_ERRORCHECK, PTHREAD_MUTEX_NORMAL};
        init_kind(&m, kinds[life]);
        printf("life %d\n", life);
        SHOW("  lock", pthread_mutex_lock(&m));
        SHOW("  trylock again", pthread_mutex_trylock(&m));
        if (kinds[life] == PTHREAD_MUTEX_RECURSIVE) {
            SHOW("  lock again", pthread_mutex_lock(&m));
            SHOW("  unlock inner", pthread_mutex_unlock(&m));
            SHOW("  unlock inner", pthread_mutex_unlock(&m));
        }
        if (kinds[life] == PTHREAD_MUTEX_ERRORCHECK)
            SHOW("  lock again", pthread_mutex_lock(&m));
        pthread_create(&t, NULL, kinds[life] == PTHREAD_MUTEX_NORMAL ? try_other : try_other_unlock, &m);
        pthread_join(t, NULL);
        SHOW("  unlock", pthread_mutex_unlock(&m));
        if (kinds[life] != PTHREAD_MUTEX_NORMAL)
            SHOW("  unlock again", pthread_mutex_unlock(&m));
        SHOW("  destroy", pthread_mutex_destroy(&m));
    }
    /* destroyed while held by a recursive depth, then re-initialised
     * (memset, as a pool allocator would) and used as a normal mutex */
    init_kind(&m, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_lock(&m);
    pthread_mutex_lock(&m);
    pthread_mutex_unlock(&m);
    pthread_mutex_unlock(&m);
    memset(&m, 0, sizeof m); /* a PTHREAD_MUTEX_INITIALIZER mutex, never destroyed */
    SHOW("reused: lock", pthread_mutex_lock(&m));
    pthread_create(&t, NULL, try_other, &m);
    pthread_join(t, NULL);
    SHOW("reused: unlock", pthread_mutex_unlock(&m));

    /* robust */
    pthread_mutexattr_t ra;
    pthread_mutexattr_init(&ra);
    pthread_mutexattr_setrobust(&ra, PTHREAD_MUTEX_ROBUST);
    pthread_mutex_init(&robust, &ra);
    pthread_mutexattr_destroy(&ra);
    pthread_create(&t, NULL, die_holding, NULL);
    pthread_join(t, NULL);
    int rc = pthread_mutex_lock(&robust);
    SHOW("robust lock after owner died", rc);
    if (rc == EOWNERDEAD)
        SHOW("robust consistent", pthread_mutex_consistent(&robust));
    SHOW("robust unlock", pthread_mutex_unlock(&robust));
    SHOW("robust lock", pthread_mutex_lock(&robust));
    SHOW("robust unlock", pthread_mutex_unlock(&robust));
    /* a robust mutex left inconsistent becomes unrecoverable */
    pthread_create(&t, NULL, die_holding, NULL);
    pthread_join(t, NULL);
    SHOW("robust trylock after owner died", pthread_mutex_trylock(&robust));
    SHOW("robust unlock inconsistent", pthread_mutex_unlock(&robust));
    SHOW("robust lock unrecoverable", pthread_mutex_lock(&robust));
    SHOW("robust destroy", pthread_mutex_destroy(&robust));
    return 7;
}

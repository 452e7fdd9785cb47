/*
 * plugin_threads.c: compiled with -finstrument-functions and linked with
 * -lheisen. One thread loads and closes libplugin_init.so 300 times (its
 * constructor's first calls resolve names while the loader holds its
 * lock); another loads libplugin_run.so (plugin_init.c with -DMANY_RUN),
 * calls it and closes it 300 times
 * (each load's first calls resolve names anew: the closed plugin's were
 * forgotten). heisen resolved a name holding its lock while asking the
 * loader, which waits for the loader's lock: the two threads hung each
 * other within a few loads. Prints the runs' total.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

static void *load_init(void *arg) {
    (void)arg;
    for (int i = 0; i < 300; i++) {
        void *h = dlopen("./libplugin_init.so", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "%s\n", dlerror());
            return NULL;
        }
        dlclose(h);
    }
    return NULL;
}

static void *load_and_call(void *arg) {
    long *total = arg;
    for (int i = 0; i < 300; i++) {
        void *h = dlopen("./libplugin_run.so", RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            fprintf(stderr, "%s\n", dlerror());
            return NULL;
        }
        int (*run)(int) = (int (*)(int))dlsym(h, "plugin_run");
        *total += run(i);
        dlclose(h);
    }
    return NULL;
}

int main(void) {
    pthread_t a, b;
    long total = 0;
    pthread_create(&a, NULL, load_init, NULL);
    pthread_create(&b, NULL, load_and_call, &total);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("total %ld\n", total);
    return 0;
}

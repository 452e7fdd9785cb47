/* Loads the OpenMP plugin given as argv[1] with RTLD_LOCAL (the program
 * itself does not link libgomp) and runs its parallel region. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return 3;
    }
    long (*work)(void) = (long (*)(void))dlsym(h, "plugin_work");
    if (!work) return 4;
    printf("plugin %ld\n", work());
    return 0;
}

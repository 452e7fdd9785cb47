/*
 * plugins.c: compiled with -finstrument-functions and linked with -lheisen;
 * dlopens libplugin_one.so, calls it, dlcloses it, then does the same with
 * libplugin_two.so (which the loader puts where the first one was) and
 * with libplugin_one.so again. Each plugin's functions must be named by
 * the plugin loaded at the time: before libheisen's dlclose forgot the
 * unloaded functions, plugin_two's were reported under plugin_one's
 * names (`alpha_mid` counted 600 times, `bravo_mid` never).
 * Then a forked child loads, calls and closes plugin_two (a forked child
 * is not measured; its dlclose must not wait for the resolver's lock,
 * which a thread of the parent may have held at the fork).
 * Prints each result and whether the plugins shared an address.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static void *run_plugin(const char *path, int n) {
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "%s\n", dlerror());
        return NULL;
    }
    int (*run)(int) = (int (*)(int))dlsym(h, "plugin_run");
    printf("%s %d\n", path, run(n));
    fflush(stdout);
    if (dlclose(h) != 0) fprintf(stderr, "dlclose: %s\n", dlerror());
    return (void *)run;
}

int main(void) {
    void *one = run_plugin("./libplugin_one.so", 100);
    void *two = run_plugin("./libplugin_two.so", 200);
    void *again = run_plugin("./libplugin_one.so", 300);
    printf("same address %s\n", one == two && two == again ? "yes" : "no");
    fflush(stdout);
    pid_t child = fork();
    if (child == 0) _exit(run_plugin("./libplugin_two.so", 10) ? 0 : 1);
    int status = -1;
    waitpid(child, &status, 0);
    printf("child %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return 0;
}

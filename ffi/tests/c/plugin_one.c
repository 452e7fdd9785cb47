/*
 * plugin_one.c, plugin_two.c: two plugins of the same shape, compiled
 * with -finstrument-functions as shared objects and loaded in turn by
 * plugins.c; the second is loaded where the first was.
 */
static int alpha_leaf(int x) { return x * 3 + 1; }
int alpha_mid(int x) { return alpha_leaf(x) + alpha_leaf(x + 1); }
int plugin_run(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) s += alpha_mid(i);
    return s;
}

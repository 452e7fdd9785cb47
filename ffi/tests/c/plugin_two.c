/* plugin_two.c: see plugin_one.c. */
static int bravo_leaf(int x) { return x * 5 + 2; }
int bravo_mid(int x) { return bravo_leaf(x) + bravo_leaf(x + 1); }
int plugin_run(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) s += bravo_mid(i);
    return s;
}

/*
 * plugin_init.c: a plugin whose constructor, compiled with
 * -finstrument-functions, makes the first calls of 64 instrumented
 * functions (loaded by plugin_threads.c; with -DMANY_RUN, no constructor
 * but a plugin_run that calls them). The loader runs a constructor
 * holding its own lock.
 */
#define F(n) \
    __attribute__((noinline)) int f##n(int x) { return x + n; }
#define F8(n) F(n##0) F(n##1) F(n##2) F(n##3) F(n##4) F(n##5) F(n##6) F(n##7)
F8(1) F8(2) F8(3) F8(4) F8(5) F8(6) F8(7) F8(8)

#define C(n) s = f##n(s);
#define C8(n) C(n##0) C(n##1) C(n##2) C(n##3) C(n##4) C(n##5) C(n##6) C(n##7)
static int all(int s) {
    C8(1) C8(2) C8(3) C8(4) C8(5) C8(6) C8(7) C8(8)
    return s;
}

#ifdef MANY_RUN
int plugin_run(int n) { return all(n); }
#else
static volatile int sink;
__attribute__((constructor)) static void plugin_init(void) { sink += all(sink); }
#endif

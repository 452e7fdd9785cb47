/* tiny.c: a shared library compiled with -finstrument-functions, with an
 * exported and a static function (tests/instrument.rs). */
static int tiny_static(int x) { return x * 3 + 1; }

int tiny_exported(int x) { return tiny_static(x) - 1; }

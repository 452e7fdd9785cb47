/*
 * bad_calls.c: every way of calling heisen wrongly returns its result code
 * and never crashes; outputs are left untouched when a call fails.
 * One function per case; main runs them in order (the runtime is one per
 * process, so the cases after heisen_finalize come last) and prints
 * "ok <case>" for each. tests/bad_calls.rs runs it, also under valgrind.
 */
#include <heisen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The numbers are part of the ABI: they never change. */
_Static_assert(HEISEN_RESULT_OK == 0, "stable result numbers");
_Static_assert(HEISEN_RESULT_NULL_ARGUMENT == 1, "stable result numbers");
_Static_assert(HEISEN_RESULT_INVALID_ARGUMENT == 2, "stable result numbers");
_Static_assert(HEISEN_RESULT_NOT_UTF8 == 3, "stable result numbers");
_Static_assert(HEISEN_RESULT_BUFFER_TOO_SHORT == 4, "stable result numbers");
_Static_assert(HEISEN_RESULT_IO == 5, "stable result numbers");
_Static_assert(HEISEN_RESULT_PANIC == 6, "stable result numbers");
_Static_assert(HEISEN_RESULT_ALREADY_RUNNING == 100, "stable result numbers");
_Static_assert(HEISEN_RESULT_FINALIZED == 101, "stable result numbers");
_Static_assert(HEISEN_RESULT_DISABLED == 102, "stable result numbers");
_Static_assert(HEISEN_RESULT_NOT_MEASURED == 103, "stable result numbers");
_Static_assert(HEISEN_RESULT_THREAD_STARTED == 104, "stable result numbers");
_Static_assert(HEISEN_RESULT_NAME_EMPTY == 200, "stable result numbers");
_Static_assert(HEISEN_RESULT_NAME_TOO_LONG == 201, "stable result numbers");
_Static_assert(HEISEN_RESULT_NAME_TABLE_FULL == 202, "stable result numbers");
_Static_assert(HEISEN_RESULT_UNKNOWN_REGION == 203, "stable result numbers");
_Static_assert(HEISEN_RESULT_EXIT_WITHOUT_ENTER == 204, "stable result numbers");
_Static_assert(HEISEN_RESULT_EXIT_MISMATCH == 205, "stable result numbers");
_Static_assert(HEISEN_RESULT_TOO_MANY_SELECTED == 206, "stable result numbers");
_Static_assert(HEISEN_RESULT_UNKNOWN_ACTION == 207, "stable result numbers");
_Static_assert(HEISEN_RESULT_PIGGYBACK_SHORT == 300, "stable result numbers");
_Static_assert(HEISEN_RESULT_PIGGYBACK_FOREIGN == 301, "stable result numbers");
_Static_assert(HEISEN_RESULT_PIGGYBACK_VERSION == 302, "stable result numbers");
_Static_assert(HEISEN_RESULT_PIGGYBACK_WRONG_K == 303, "stable result numbers");
_Static_assert(HEISEN_RESULT_WOULD_BLOCK == 400, "stable result numbers");
_Static_assert(HEISEN_RESULT_QUEUE_CLOSED == 401, "stable result numbers");
_Static_assert(HEISEN_RESULT_NOT_OWNER == 402, "stable result numbers");
_Static_assert(sizeof(heisen_result) == 4, "a 32-bit result");

static int failures = 0;

/* EXPECT(call, CODE, "words the message must contain") */
#define EXPECT(call, code, words)                                                          \
    do {                                                                                   \
        heisen_result got_ = (call);                                                       \
        const char *message_ = heisen_result_message(got_);                                \
        if (got_ != (code) || message_ == NULL || strstr(message_, (words)) == NULL) {     \
            fprintf(stderr, "%s:%d: %s returned %u (%s), expected %u (%s) with \"%s\"\n",  \
                    __FILE__, __LINE__, #call, (unsigned)got_, message_ ? message_ : "NULL", \
                    (unsigned)(code), #code, (words));                                     \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

#define TRUE(cond)                                                                         \
    do {                                                                                   \
        if (!(cond)) {                                                                     \
            fprintf(stderr, "%s:%d: %s is false\n", __FILE__, __LINE__, #cond);            \
            failures++;                                                                    \
        }                                                                                  \
    } while (0)

static void ok(const char *name, int before) {
    if (failures == before) printf("ok %s\n", name);
}

static uint8_t record[HEISEN_PIGGYBACK_SIZE];

static void null_arguments(void) {
    int before = failures;
    uint32_t id = 77;
    size_t n = 77;
    heisen_config *config = NULL;
    EXPECT(heisen_region_register(NULL, &id), HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    EXPECT(heisen_region_register("x", NULL), HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    EXPECT(heisen_region_enter_name(NULL), HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    EXPECT(heisen_region_exit_name(NULL), HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    EXPECT(heisen_region_name(0, NULL, 10, &n), HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    EXPECT(heisen_config_new(NULL), HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    EXPECT(heisen_config_set_output(NULL, "/tmp"), HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    EXPECT(heisen_config_select(NULL, "solve"), HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    EXPECT(heisen_config_set_form(NULL, HEISEN_FORM_TIMESTAMPED), HEISEN_RESULT_NULL_ARGUMENT,
           "NULL");
    heisen_config_free(NULL); /* ignored */
    EXPECT(heisen_config_new(&config), HEISEN_RESULT_OK, "ok");
    EXPECT(heisen_config_set_output(config, NULL), HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    EXPECT(heisen_config_select(config, NULL), HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    heisen_config_free(config);
    EXPECT(heisen_piggyback_pack(NULL, sizeof record, &n), HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    EXPECT(heisen_piggyback_pack(record, sizeof record, NULL), HEISEN_RESULT_NULL_ARGUMENT,
           "NULL");
    EXPECT(heisen_piggyback_merge(heisen_merge_begin(), NULL, sizeof record, 0, 0, 0, NULL),
           HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    EXPECT(heisen_piggyback_merge_many(heisen_merge_begin(), NULL, 2, 0, NULL),
           HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    heisen_dependency dep = {NULL, sizeof record, 0, 0, 0};
    EXPECT(heisen_piggyback_merge_many(heisen_merge_begin(), &dep, 1, 0, NULL),
           HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    EXPECT(heisen_piggyback_check(NULL, 10), HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    EXPECT(heisen_snapshot_thread(NULL), HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    EXPECT(heisen_calibration_get(NULL), HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    EXPECT(heisen_action_cost("c_enter", NULL), HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    EXPECT(heisen_report_path(NULL, 100, &n), HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    EXPECT(heisen_report_set_name(NULL), HEISEN_RESULT_NULL_ARGUMENT, "NULL");
    /* A merge with no dependency and no array changes nothing. */
    EXPECT(heisen_piggyback_merge_many(heisen_merge_begin(), NULL, 0, 0, NULL), HEISEN_RESULT_OK,
           "ok");
    TRUE(id == 77 && n == 77); /* outputs untouched */
    ok("null_arguments", before);
}

static void unknown_region_id(void) {
    int before = failures;
    char name[64] = "untouched";
    size_t n = 77;
    EXPECT(heisen_region_enter(12345), HEISEN_RESULT_UNKNOWN_REGION, "no region");
    EXPECT(heisen_region_exit(12345), HEISEN_RESULT_UNKNOWN_REGION, "no region");
    EXPECT(heisen_region_enter(HEISEN_NO_REGION), HEISEN_RESULT_UNKNOWN_REGION, "no region");
    EXPECT(heisen_region_exit_name("never registered"), HEISEN_RESULT_UNKNOWN_REGION,
           "no region");
    EXPECT(heisen_region_name(999999, name, sizeof name, &n), HEISEN_RESULT_UNKNOWN_REGION,
           "no region");
    EXPECT(heisen_action_cost("no such action", &(heisen_cost){0, 0}),
           HEISEN_RESULT_UNKNOWN_ACTION, "no instrumentation action");
    TRUE(strcmp(name, "untouched") == 0 && n == 77);
    ok("unknown_region_id", before);
}

static void exit_of_a_region_not_open(void) {
    int before = failures;
    uint32_t a, b;
    EXPECT(heisen_region_register("a", &a), HEISEN_RESULT_OK, "ok");
    EXPECT(heisen_region_register("b", &b), HEISEN_RESULT_OK, "ok");
    EXPECT(heisen_region_exit(a), HEISEN_RESULT_EXIT_WITHOUT_ENTER, "no region is open");
    EXPECT(heisen_region_enter(a), HEISEN_RESULT_OK, "ok");
    EXPECT(heisen_region_exit(b), HEISEN_RESULT_EXIT_MISMATCH, "not the innermost");
    EXPECT(heisen_region_exit_name("b"), HEISEN_RESULT_EXIT_MISMATCH, "not the innermost");
    EXPECT(heisen_region_exit(a), HEISEN_RESULT_OK, "ok");
    EXPECT(heisen_region_exit(a), HEISEN_RESULT_EXIT_WITHOUT_ENTER, "no region is open");
    ok("exit_of_a_region_not_open", before);
}

static void buffer_too_short(void) {
    int before = failures;
    uint8_t small[HEISEN_PIGGYBACK_SIZE - 1];
    memset(small, 0xAB, sizeof small);
    size_t n = 77;
    EXPECT(heisen_piggyback_pack(small, sizeof small, &n), HEISEN_RESULT_BUFFER_TOO_SHORT,
           "too short");
    EXPECT(heisen_piggyback_pack_empty(small, sizeof small, &n), HEISEN_RESULT_BUFFER_TOO_SHORT,
           "too short");
    TRUE(n == 77 && small[0] == 0xAB && small[sizeof small - 1] == 0xAB);
    uint32_t id;
    EXPECT(heisen_region_register("a region with a long name", &id), HEISEN_RESULT_OK, "ok");
    char name[4] = "abc";
    EXPECT(heisen_region_name(id, name, sizeof name, &n), HEISEN_RESULT_BUFFER_TOO_SHORT,
           "too short");
    TRUE(strcmp(name, "abc") == 0 && n == 77);
    char path[2] = "p";
    EXPECT(heisen_report_path(path, sizeof path, &n), HEISEN_RESULT_BUFFER_TOO_SHORT, "too short");
    TRUE(path[0] == 'p' && n == 77);
    uint8_t out[HEISEN_PIGGYBACK_SIZE];
    EXPECT(heisen_thread_finish(out, 10, &n), HEISEN_RESULT_BUFFER_TOO_SHORT, "too short");
    /* ... and the thread was not ended by it: it still measures. */
    EXPECT(heisen_region_enter(id), HEISEN_RESULT_OK, "ok");
    EXPECT(heisen_region_exit(id), HEISEN_RESULT_OK, "ok");
    ok("buffer_too_short", before);
}

static void bad_piggybacks(void) {
    int before = failures;
    size_t n;
    EXPECT(heisen_piggyback_pack(record, sizeof record, &n), HEISEN_RESULT_OK, "ok");
    TRUE(n == HEISEN_PIGGYBACK_SIZE);
    EXPECT(heisen_piggyback_check(record, n), HEISEN_RESULT_OK, "ok");

    heisen_snapshot s0, s1;
    EXPECT(heisen_snapshot_thread(&s0), HEISEN_RESULT_OK, "ok");
    uint8_t bad[HEISEN_PIGGYBACK_SIZE];
    /* Foreign bytes. */
    memset(bad, 'x', sizeof bad);
    EXPECT(heisen_piggyback_check(bad, sizeof bad), HEISEN_RESULT_PIGGYBACK_FOREIGN, "not a heisen");
    EXPECT(heisen_piggyback_merge(heisen_merge_begin(), bad, sizeof bad, 0, 0, 0, NULL),
           HEISEN_RESULT_PIGGYBACK_FOREIGN, "not a heisen");
    /* Truncated: a record cut short, and a few bytes. */
    EXPECT(heisen_piggyback_merge(heisen_merge_begin(), record, 100, 0, 0, 0, NULL),
           HEISEN_RESULT_PIGGYBACK_SHORT, "shorter than a record");
    EXPECT(heisen_piggyback_merge(heisen_merge_begin(), record, 3, 0, 0, 0, NULL),
           HEISEN_RESULT_PIGGYBACK_SHORT, "shorter than a record");
    EXPECT(heisen_piggyback_merge(heisen_merge_begin(), record, 0, 0, 0, 0, NULL),
           HEISEN_RESULT_PIGGYBACK_SHORT, "shorter than a record");
    /* Another version, another K, a reserved flag bit. */
    memcpy(bad, record, sizeof bad);
    bad[2] = 9;
    EXPECT(heisen_piggyback_check(bad, sizeof bad), HEISEN_RESULT_PIGGYBACK_VERSION,
           "another encoding version");
    memcpy(bad, record, sizeof bad);
    bad[3] = 4;
    EXPECT(heisen_piggyback_check(bad, sizeof bad), HEISEN_RESULT_PIGGYBACK_WRONG_K,
           "another number of regions");
    memcpy(bad, record, sizeof bad);
    bad[7] = 0x80;
    EXPECT(heisen_piggyback_check(bad, sizeof bad), HEISEN_RESULT_PIGGYBACK_FOREIGN, "not a heisen");
    /* One bad record among good ones: nothing is merged. */
    heisen_dependency deps[2] = {{record, sizeof record, 0, 0, 0}, {bad, sizeof bad, 0, 0, 0}};
    heisen_merge_result result = {.wait = 77};
    EXPECT(heisen_piggyback_merge_many(heisen_merge_begin(), deps, 2, 0, &result),
           HEISEN_RESULT_PIGGYBACK_FOREIGN, "not a heisen");
    TRUE(result.wait == 77);
    /* Bad flags and a begin in the future. */
    EXPECT(heisen_piggyback_merge(heisen_merge_begin(), record, sizeof record, 0, 0, 0x80, NULL),
           HEISEN_RESULT_INVALID_ARGUMENT, "out of its range");
    EXPECT(heisen_piggyback_merge(heisen_now() + 1000000000u, record, sizeof record, 0, 0, 0,
                                  NULL),
           HEISEN_RESULT_INVALID_ARGUMENT, "out of its range");
    EXPECT(heisen_snapshot_thread(&s1), HEISEN_RESULT_OK, "ok");
    TRUE(s1.longest >= s0.longest);
    /* The good record merges, with its result. */
    EXPECT(heisen_piggyback_merge(heisen_merge_begin(), record, sizeof record, 0, 0,
                                  HEISEN_MERGE_DELAY_ONLY, &result),
           HEISEN_RESULT_OK, "ok");
    TRUE(result.wait != 77);
    ok("bad_piggybacks", before);
}

static void bad_names(void) {
    int before = failures;
    char *long_name = malloc(10001);
    memset(long_name, 'n', 10000);
    long_name[10000] = '\0';
    uint32_t id = 77;
    EXPECT(heisen_region_register(long_name, &id), HEISEN_RESULT_NAME_TOO_LONG, "longer than 4096");
    EXPECT(heisen_region_enter_name(long_name), HEISEN_RESULT_NAME_TOO_LONG, "longer than 4096");
    EXPECT(heisen_region_exit_name(long_name), HEISEN_RESULT_NAME_TOO_LONG, "longer than 4096");
    long_name[HEISEN_MAX_NAME_LEN] = '\0'; /* exactly the limit: fine */
    EXPECT(heisen_region_register(long_name, &id), HEISEN_RESULT_OK, "ok");
    TRUE(id != 77);
    free(long_name);
    EXPECT(heisen_region_register("", &id), HEISEN_RESULT_NAME_EMPTY, "empty");
    EXPECT(heisen_region_register("caf\xe9", &id), HEISEN_RESULT_NOT_UTF8, "not UTF-8");

    heisen_config *config;
    EXPECT(heisen_config_new(&config), HEISEN_RESULT_OK, "ok");
    char selected[16];
    for (int k = 0; k < HEISEN_SELECTED; k++) {
        snprintf(selected, sizeof selected, "r%d", k);
        EXPECT(heisen_config_select(config, selected), HEISEN_RESULT_OK, "ok");
    }
    EXPECT(heisen_config_select(config, "one too many"), HEISEN_RESULT_TOO_MANY_SELECTED,
           "more regions selected");
    EXPECT(heisen_config_select(config, ""), HEISEN_RESULT_NAME_EMPTY, "empty");
    EXPECT(heisen_config_set_form(config, 99), HEISEN_RESULT_INVALID_ARGUMENT, "out of its range");
    EXPECT(heisen_config_set_clock(config, 99), HEISEN_RESULT_INVALID_ARGUMENT,
           "out of its range");
    EXPECT(heisen_config_set_output(config, ""), HEISEN_RESULT_INVALID_ARGUMENT,
           "out of its range");
    heisen_config_free(config);
    ok("bad_names", before);
}

/* The by-name calls cache names by address: a buffer reused for another
 * name must still give that other name's region. */
static void reused_name_buffer(void) {
    int before = failures;
    char buffer[32];
    uint32_t first, second;
    EXPECT(heisen_region_register("first", &first), HEISEN_RESULT_OK, "ok");
    EXPECT(heisen_region_register("second", &second), HEISEN_RESULT_OK, "ok");
    strcpy(buffer, "first");
    EXPECT(heisen_region_enter_name(buffer), HEISEN_RESULT_OK, "ok");
    strcpy(buffer, "second");
    EXPECT(heisen_region_enter_name(buffer), HEISEN_RESULT_OK, "ok");
    EXPECT(heisen_region_exit(first), HEISEN_RESULT_EXIT_MISMATCH, "not the innermost");
    EXPECT(heisen_region_exit_name(buffer), HEISEN_RESULT_OK, "ok"); /* "second" */
    strcpy(buffer, "first");
    EXPECT(heisen_region_exit_name(buffer), HEISEN_RESULT_OK, "ok");
    strcpy(buffer, "never seen");
    EXPECT(heisen_region_exit_name(buffer), HEISEN_RESULT_UNKNOWN_REGION, "no region");
    ok("reused_name_buffer", before);
}

static void init_twice(void) {
    int before = failures;
    EXPECT(heisen_init(NULL), HEISEN_RESULT_ALREADY_RUNNING, "running already");
    ok("init_twice", before);
}

static void messages(void) {
    int before = failures;
    heisen_result codes[] = {
        HEISEN_RESULT_OK, HEISEN_RESULT_NULL_ARGUMENT, HEISEN_RESULT_INVALID_ARGUMENT,
        HEISEN_RESULT_NOT_UTF8, HEISEN_RESULT_BUFFER_TOO_SHORT, HEISEN_RESULT_IO,
        HEISEN_RESULT_PANIC, HEISEN_RESULT_ALREADY_RUNNING, HEISEN_RESULT_FINALIZED,
        HEISEN_RESULT_DISABLED, HEISEN_RESULT_NOT_MEASURED, HEISEN_RESULT_THREAD_STARTED,
        HEISEN_RESULT_NAME_EMPTY, HEISEN_RESULT_NAME_TOO_LONG, HEISEN_RESULT_NAME_TABLE_FULL,
        HEISEN_RESULT_UNKNOWN_REGION, HEISEN_RESULT_EXIT_WITHOUT_ENTER,
        HEISEN_RESULT_EXIT_MISMATCH, HEISEN_RESULT_TOO_MANY_SELECTED,
        HEISEN_RESULT_UNKNOWN_ACTION, HEISEN_RESULT_PIGGYBACK_SHORT,
        HEISEN_RESULT_PIGGYBACK_FOREIGN, HEISEN_RESULT_PIGGYBACK_VERSION,
        HEISEN_RESULT_PIGGYBACK_WRONG_K, HEISEN_RESULT_WOULD_BLOCK, HEISEN_RESULT_QUEUE_CLOSED,
        HEISEN_RESULT_NOT_OWNER,
    };
    size_t count = sizeof codes / sizeof codes[0];
    for (size_t i = 0; i < count; i++) {
        const char *m = heisen_result_message(codes[i]);
        TRUE(m != NULL && strlen(m) > 0 && strcmp(m, "unknown result code") != 0);
        for (size_t j = 0; j < i; j++) TRUE(strcmp(m, heisen_result_message(codes[j])) != 0);
    }
    TRUE(strcmp(heisen_result_message(12345), "unknown result code") == 0);
    TRUE(strcmp(heisen_version(), HEISEN_VERSION) == 0);
    ok("messages", before);
}

static void after_finalize(void) {
    int before = failures;
    uint32_t id;
    size_t n = 77;
    EXPECT(heisen_region_register("before the end", &id), HEISEN_RESULT_OK, "ok");
    EXPECT(heisen_finalize(), HEISEN_RESULT_OK, "ok");
    EXPECT(heisen_finalize(), HEISEN_RESULT_FINALIZED, "heisen_finalize was called");
    EXPECT(heisen_region_enter(id), HEISEN_RESULT_FINALIZED, "heisen_finalize was called");
    EXPECT(heisen_region_exit(id), HEISEN_RESULT_FINALIZED, "heisen_finalize was called");
    EXPECT(heisen_region_enter_name("x"), HEISEN_RESULT_FINALIZED, "heisen_finalize was called");
    EXPECT(heisen_region_register("after the end", &id), HEISEN_RESULT_FINALIZED,
           "heisen_finalize was called");
    EXPECT(heisen_piggyback_pack(record, sizeof record, &n), HEISEN_RESULT_FINALIZED,
           "heisen_finalize was called");
    TRUE(n == 77);
    EXPECT(heisen_piggyback_merge(heisen_merge_begin(), record, sizeof record, 0, 0, 0, NULL),
           HEISEN_RESULT_FINALIZED, "heisen_finalize was called");
    heisen_snapshot s;
    EXPECT(heisen_snapshot_thread(&s), HEISEN_RESULT_FINALIZED, "heisen_finalize was called");
    EXPECT(heisen_path_start(), HEISEN_RESULT_FINALIZED, "heisen_finalize was called");
    EXPECT(heisen_thread_finish(NULL, 0, NULL), HEISEN_RESULT_FINALIZED,
           "heisen_finalize was called");
    EXPECT(heisen_report_set_name("late.json"), HEISEN_RESULT_FINALIZED,
           "heisen_finalize was called");
    EXPECT(heisen_init(NULL), HEISEN_RESULT_FINALIZED, "heisen_finalize was called");
    /* What needs no runtime still works. */
    EXPECT(heisen_piggyback_pack_empty(record, sizeof record, &n), HEISEN_RESULT_OK, "ok");
    EXPECT(heisen_piggyback_check(record, n), HEISEN_RESULT_OK, "ok");
    TRUE(heisen_now() > 0);
    ok("after_finalize", before);
}

/* HEISEN_DISABLE=1: every call that measures is a successful no-op, so
 * that switching heisen off never changes what a program does. */
static int disabled(void) {
    int before = failures;
    uint32_t id;
    size_t n;
    EXPECT(heisen_init(NULL), HEISEN_RESULT_OK, "ok");
    EXPECT(heisen_region_register("solve", &id), HEISEN_RESULT_OK, "ok");
    EXPECT(heisen_region_enter(id), HEISEN_RESULT_OK, "ok");
    EXPECT(heisen_region_exit(id), HEISEN_RESULT_OK, "ok");
    EXPECT(heisen_piggyback_pack(record, sizeof record, &n), HEISEN_RESULT_OK, "ok");
    EXPECT(heisen_piggyback_merge(heisen_merge_begin(), record, n, 0, 0, 0, NULL),
           HEISEN_RESULT_OK, "ok");
    /* Bad input is still bad input. */
    EXPECT(heisen_piggyback_merge(heisen_merge_begin(), record, 5, 0, 0, 0, NULL),
           HEISEN_RESULT_PIGGYBACK_SHORT, "shorter than a record");
    heisen_snapshot s;
    EXPECT(heisen_snapshot_thread(&s), HEISEN_RESULT_DISABLED, "switched off");
    EXPECT(heisen_finalize(), HEISEN_RESULT_OK, "ok");
    ok("disabled", before);
    printf("%d failures\n", failures);
    return failures == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "disabled") == 0) return disabled();
    EXPECT(heisen_init(NULL), HEISEN_RESULT_OK, "ok");
    null_arguments();
    unknown_region_id();
    exit_of_a_region_not_open();
    buffer_too_short();
    bad_piggybacks();
    bad_names();
    reused_name_buffer();
    init_twice();
    messages();
    after_finalize();
    printf("%d failures\n", failures);
    return failures == 0 ? 0 : 1;
}

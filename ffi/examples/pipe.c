/*
 * pipe.c: piggybacks over a transport heisen does not know. A producer
 * process sends work items to a consumer process through a pipe; every
 * message carries the producer's record (heisen_piggyback_pack, R3), and
 * the consumer merges it after reading (heisen_piggyback_merge, R4/R5).
 * The producer is heavily instrumented (many tiny regions per item), so
 * the consumer seems to wait far longer than it would without heisen;
 * the compensated wait removes the producer's overhead.
 *
 *   cc pipe.c $(pkg-config --cflags --libs heisen) -o pipe
 *   HEISEN_OUTPUT=dir ./pipe [timestamped|delay-only]
 *
 * delay-only merges with HEISEN_MERGE_DELAY_ONLY, as a transport between
 * machines whose clocks cannot be compared would (R4). Each process writes
 * its own report.
 */
#include <heisen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MESSAGES 40
#define TINY_REGIONS 2000
#define PAYLOAD 64

#define CHECK(call)                                                                    \
    do {                                                                               \
        heisen_result r_ = (call);                                                     \
        if (r_ != HEISEN_RESULT_OK) {                                                  \
            fprintf(stderr, "%s failed: %s\n", #call, heisen_result_message(r_));     \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

struct message {
    uint8_t record[HEISEN_PIGGYBACK_SIZE];
    char payload[PAYLOAD];
};

static double spin(long n) {
    volatile double x = 0;
    for (long i = 0; i < n; i++) x += (double)i;
    return x;
}

static void produce(int fd) {
    uint32_t produce_id, tiny_id;
    CHECK(heisen_region_register("produce", &produce_id));
    CHECK(heisen_region_register("tiny", &tiny_id));
    for (int m = 0; m < MESSAGES; m++) {
        struct message msg;
        memset(&msg, 0, sizeof msg);
        CHECK(heisen_region_enter(produce_id));
        spin(5000);
        for (int i = 0; i < TINY_REGIONS; i++) { /* the dilation */
            CHECK(heisen_region_enter(tiny_id));
            CHECK(heisen_region_exit(tiny_id));
        }
        snprintf(msg.payload, PAYLOAD, "item %d", m);
        CHECK(heisen_region_exit(produce_id));
        size_t n;
        CHECK(heisen_piggyback_pack(msg.record, sizeof msg.record, &n)); /* R3: the release */
        if (write(fd, &msg, sizeof msg) != (ssize_t)sizeof msg) {
            perror("write");
            exit(1);
        }
    }
}

/* Reads one whole message; 0 at the end of the stream. */
static int receive(int fd, struct message *msg) {
    size_t got = 0;
    while (got < sizeof *msg) {
        ssize_t r = read(fd, (char *)msg + got, sizeof *msg - got);
        if (r <= 0) return 0;
        got += (size_t)r;
    }
    return 1;
}

static void consume(int fd, uint32_t flags) {
    uint32_t consume_id;
    CHECK(heisen_region_register("consume", &consume_id));
    long long measured = 0, compensated = 0;
    int items = 0;
    for (;;) {
        struct message msg;
        uint64_t begin = heisen_merge_begin(); /* right before blocking */
        if (!receive(fd, &msg)) break;
        heisen_merge_result result;
        CHECK(heisen_piggyback_merge(begin, msg.record, sizeof msg.record, 0, 0, flags, &result));
        measured += (long long)result.wait;
        compensated += result.compensated_wait;
        items++;
        CHECK(heisen_region_enter(consume_id));
        spin(2000);
        CHECK(heisen_region_exit(consume_id));
    }
    printf("consumer: %d items, measured wait %lld ns, compensated wait %lld ns\n", items,
           measured, compensated);
}

int main(int argc, char **argv) {
    uint32_t flags = 0;
    if (argc > 1 && strcmp(argv[1], "delay-only") == 0) flags = HEISEN_MERGE_DELAY_ONLY;
    int data[2], ready[2];
    if (pipe(data) != 0 || pipe(ready) != 0) {
        perror("pipe");
        return 1;
    }
    /* Fork before the first heisen call: each process starts (and
     * calibrates) its own runtime. */
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    char go = 'g';
    if (pid == 0) {
        close(data[1]);
        close(ready[0]);
        CHECK(heisen_init(NULL));
        CHECK(heisen_report_set_name("consumer.json"));
        /* Both runtimes are up: what the consumer waits for from now on
         * is the producer's work, not its start-up. */
        if (write(ready[1], &go, 1) != 1) return 1;
        consume(data[0], flags);
        close(data[0]);
        CHECK(heisen_finalize());
        return 0;
    }
    close(data[0]);
    close(ready[1]);
    CHECK(heisen_init(NULL));
    CHECK(heisen_report_set_name("producer.json"));
    if (read(ready[0], &go, 1) != 1) return 1;
    produce(data[1]);
    close(data[1]);
    CHECK(heisen_finalize());
    int status;
    waitpid(pid, &status, 0);
    printf("producer: %d items sent\n", MESSAGES);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/*
 * exceptions.cpp: C++ exceptions thrown through functions compiled with
 * -finstrument-functions. The compiler runs each frame's exit hook as the
 * exception unwinds it, so heisen's region stack follows the unwinding and
 * nothing is lost: `thrower` recurses directly (its frames fold, 002 Fig.
 * 11), `ping`/`pong` recurse indirectly within the region stack's depth,
 * `catcher` catches in the middle of the stack and goes on calling, and
 * `rethrower` catches and throws again.
 */
#include <cstdio>
#include <stdexcept>
#include <vector>

int thrower(int n) {
    std::vector<int> v(4, n); /* destroyed while unwinding */
    if (n == 0) throw std::runtime_error("bottom");
    return thrower(n - 1) + v[0];
}

int ping(int n);
int pong(int n) {
    if (n == 0) throw 42;
    return ping(n - 1) + 1;
}
int ping(int n) { return pong(n) + 1; }

int after(int x) { return x + 1; }

int catcher(int n) {
    int got = 0;
    try {
        got = ping(n);
    } catch (int e) {
        got = after(e);
    }
    return after(got);
}

int rethrower(int n) {
    try {
        return thrower(n);
    } catch (const std::runtime_error &) {
        throw;
    }
}

int main() {
    long sum = 0, caught = 0;
    for (int i = 0; i < 100; i++) {
        try {
            sum += thrower(i % 20);
        } catch (const std::exception &) {
            caught++;
        }
        sum += catcher(5 + i % 7);
        try {
            sum += rethrower(3);
        } catch (const std::runtime_error &) {
            caught++;
        }
    }
    std::printf("sum %ld caught %ld\n", sum, caught);
    return 0;
}

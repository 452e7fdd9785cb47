// C++20 synchronisation, which goes through pthreads where libstdc++ has
// no futex of its own: std::jthread with stop_token (and a
// condition_variable_any wait that a stop ends), std::mutex,
// recursive_mutex, timed_mutex and recursive_timed_mutex (try_lock_for
// and try_lock_until timing out), shared_mutex and shared_timed_mutex,
// condition_variable and condition_variable_any (notify_all to 16 and 8
// waiters, wait_for and wait_until timing out, a wait on a
// recursive_mutex), std::barrier with a completion and arrive_and_drop,
// std::latch, counting and binary semaphores (try_acquire_for timing
// out), std::atomic wait/notify, std::call_once (also one whose callable
// throws). Output and exit code (7) must be identical with and without
// LD_PRELOAD=libheisen_pthread.so, and with -finstrument-functions.
#include <atomic>
#include <barrier>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <latch>
#include <mutex>
#include <semaphore>
#include <shared_mutex>
#include <stop_token>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

static long work(long n) {
    long s = 0;
    for (long i = 0; i < n; i++) s += (i * 7) % 13;
    return s;
}

static void jthreads() {
    std::atomic<long> ticks{0};
    std::vector<std::jthread> ts;
    std::mutex m;
    std::condition_variable_any cv;
    for (int i = 0; i < 4; i++)
        ts.emplace_back([&](std::stop_token st) {
            std::unique_lock lk(m);
            while (!st.stop_requested()) {
                ticks++;
                cv.wait(lk, st, [] { return false; });
            }
        });
    while (ticks.load() < 4) std::this_thread::yield();
    for (auto &t : ts) t.request_stop();
    ts.clear();
    // a jthread that stops itself with a stop_callback
    std::atomic<int> cb{0};
    {
        std::jthread t([&](std::stop_token st) {
            std::stop_callback c(st, [&] { cb = 1; });
            while (!st.stop_requested()) std::this_thread::yield();
        });
    }
    std::printf("jthread: ticks>=4 %d, callback %d\n", ticks.load() >= 4, cb.load());
}

static void mutexes() {
    std::mutex m;
    long total = 0;
    std::vector<std::thread> ts;
    for (int i = 0; i < 4; i++)
        ts.emplace_back([&, i] {
            for (int k = 0; k < 5000; k++) {
                std::lock_guard g(m);
                total += i + k % 3;
            }
        });
    for (auto &t : ts) t.join();
    std::recursive_mutex rm;
    int depth = 0;
    auto rec = [&](auto &&self, int n) -> void {
        std::lock_guard g(rm);
        depth++;
        if (n) self(self, n - 1);
    };
    std::thread r1([&] { for (int i = 0; i < 100; i++) rec(rec, 10); });
    std::thread r2([&] { for (int i = 0; i < 100; i++) rec(rec, 10); });
    r1.join(); r2.join();
    std::timed_mutex tm;
    tm.lock();
    int timeouts = 0;
    std::thread t([&] {
        for (int i = 0; i < 3; i++)
            if (!tm.try_lock_for(5ms)) timeouts++;
        if (!tm.try_lock_until(std::chrono::steady_clock::now() + 2ms)) timeouts++;
        if (!tm.try_lock()) timeouts++;
    });
    t.join();
    tm.unlock();
    bool got = tm.try_lock_for(1ms);
    if (got) tm.unlock();
    std::recursive_timed_mutex rtm;
    rtm.lock();
    bool rgot = rtm.try_lock_for(1ms); // same thread: recursive
    if (rgot) rtm.unlock();
    int rto = 0;
    std::thread t2([&] { if (!rtm.try_lock_for(3ms)) rto++; });
    t2.join();
    rtm.unlock();
    std::printf("mutex: total %ld, depth %d, timeouts %d, got %d, rgot %d, rto %d\n", total, depth,
                timeouts, got, rgot, rto);
}

static void shared() {
    std::shared_mutex sm;
    long value = 0, reads = 0;
    std::atomic<long> rsum{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < 6; i++)
        ts.emplace_back([&, i] {
            for (int k = 0; k < 2000; k++) {
                if (i < 2) {
                    std::unique_lock g(sm);
                    value++;
                } else {
                    std::shared_lock g(sm);
                    rsum += value >= 0;
                }
            }
        });
    for (auto &t : ts) t.join();
    reads = rsum;
    std::shared_timed_mutex stm;
    stm.lock();
    int to = 0;
    std::thread t([&] {
        if (!stm.try_lock_shared_for(3ms)) to++;
        if (!stm.try_lock_for(3ms)) to++;
    });
    t.join();
    stm.unlock();
    std::printf("shared: value %ld reads %ld timeouts %d\n", value, reads, to);
}

static void condvars() {
    std::mutex m;
    std::condition_variable cv;
    int gen = 0, woke = 0;
    std::vector<std::thread> ts;
    for (int i = 0; i < 16; i++)
        ts.emplace_back([&] {
            std::unique_lock lk(m);
            cv.wait(lk, [&] { return gen > 0; });
            woke++;
        });
    {
        std::lock_guard g(m);
        gen = 1;
    }
    cv.notify_all();
    for (auto &t : ts) t.join();
    int timeouts = 0;
    {
        std::unique_lock lk(m);
        // The predicate forms loop over spurious wake-ups: a timeout
        // each, whatever the scheduler does.
        for (int i = 0; i < 3; i++)
            if (!cv.wait_for(lk, 2ms, [] { return false; })) timeouts++;
        if (!cv.wait_until(lk, std::chrono::system_clock::now() + 2ms, [] { return false; }))
            timeouts++;
    }
    std::condition_variable_any cva;
    std::shared_mutex sm;
    int ready = 0, woke2 = 0;
    ts.clear();
    for (int i = 0; i < 8; i++)
        ts.emplace_back([&] {
            std::unique_lock lk(sm);
            cva.wait(lk, [&] { return ready; });
            woke2++;
        });
    {
        std::unique_lock lk(sm);
        ready = 1;
    }
    cva.notify_all();
    for (auto &t : ts) t.join();
    {
        std::unique_lock lk(sm);
        if (!cva.wait_for(lk, 2ms, [] { return false; })) timeouts++;
    }
    std::recursive_mutex rm;
    {
        std::unique_lock lk(rm);
        if (!cva.wait_for(lk, 1ms, [] { return false; })) timeouts++;
    }
    std::printf("condvar: woke %d woke_any %d timeouts %d\n", woke, woke2, timeouts);
}

static void phasers() {
    constexpr int n = 4;
    std::atomic<long> sum{0};
    int completions = 0;
    std::barrier b(n, [&]() noexcept { completions++; });
    std::latch start(n + 1), end(n);
    std::vector<std::thread> ts;
    for (int i = 0; i < n; i++)
        ts.emplace_back([&, i] {
            start.arrive_and_wait();
            for (int r = 0; r < 200; r++) {
                sum += work(50 + i);
                b.arrive_and_wait();
            }
            if (i == 0) b.arrive_and_drop();
            else b.arrive_and_wait();
            end.count_down();
        });
    start.count_down();
    start.wait();
    end.wait();
    for (auto &t : ts) t.join();
    std::counting_semaphore<8> sem(2);
    std::atomic<int> inside{0}, maxin{0};
    ts.clear();
    for (int i = 0; i < 6; i++)
        ts.emplace_back([&] {
            for (int k = 0; k < 200; k++) {
                sem.acquire();
                int v = ++inside;
                int mx = maxin.load();
                while (v > mx && !maxin.compare_exchange_weak(mx, v)) {}
                inside--;
                sem.release();
            }
        });
    for (auto &t : ts) t.join();
    std::binary_semaphore bs(0);
    int sto = 0;
    if (!bs.try_acquire_for(3ms)) sto++;
    if (!bs.try_acquire()) sto++;
    std::thread rel([&] { bs.release(); });
    bs.acquire();
    rel.join();
    std::printf("phasers: sum %ld completions %d maxin<=2 %d sem_timeouts %d\n", sum.load(),
                completions, maxin.load() <= 2, sto);
}

static void atomics() {
    std::atomic<int> flag{0};
    std::atomic<long> pings{0};
    std::thread t([&] {
        for (int i = 0; i < 1000; i++) {
            flag.wait(0);
            pings++;
            flag.store(0);
            flag.notify_one();
        }
    });
    for (int i = 0; i < 1000; i++) {
        flag.store(1);
        flag.notify_one();
        flag.wait(1);
    }
    t.join();
    std::atomic_flag af;
    std::thread t2([&] { af.test_and_set(); af.notify_all(); });
    af.wait(false);
    t2.join();
    std::printf("atomic: pings %ld\n", pings.load());
}

static void once() {
    std::once_flag f;
    std::atomic<int> calls{0};
    std::vector<std::thread> ts;
    for (int i = 0; i < 8; i++)
        ts.emplace_back([&] { std::call_once(f, [&] { calls++; }); });
    for (auto &t : ts) t.join();
    std::once_flag g;
    int attempts = 0;
    for (int i = 0; i < 3; i++) {
        try {
            std::call_once(g, [&] {
                attempts++;
                if (attempts < 3) throw 1;
            });
        } catch (int) {
        }
    }
    std::printf("once: calls %d attempts %d\n", calls.load(), attempts);
}

int main() {
    jthreads();
    mutexes();
    shared();
    condvars();
    phasers();
    atomics();
    once();
    return 7;
}

// Thread lives under -finstrument-functions (C++20): thread_local objects
// whose destructors lock a mutex or start and join a thread after the
// thread's function returned; exceptions thrown through instrumented
// recursion and out of thread functions into futures (std::async,
// promise::set_exception, packaged_task, a broken promise);
// shared_future, future::wait_for timing out, a deferred task; 50
// detached threads; 2,000 short-lived threads in rounds of 20; a tree of
// 127 threads made by threads. Prints the same line with and without the
// hooks.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <exception>
#include <future>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace std::chrono_literals;

static std::mutex log_m;
static std::atomic<long> dtor_sum{0};
static std::atomic<int> ctor_count{0};

struct Tracker {
    int id = 0;
    std::vector<int> data;
    Tracker() { ctor_count++; }
    ~Tracker() {
        std::lock_guard g(log_m); // locks after the thread function returned
        dtor_sum += id + (long)data.size();
    }
};
static thread_local Tracker tracker;

struct Nested {
    bool spawn = false;
    ~Nested() {
        if (!spawn) return;
        // a destructor that runs a thread of its own at thread exit
        std::thread t([] { tracker.id = 1000; });
        t.join();
    }
};
static thread_local Nested nested;

struct Boom : std::runtime_error {
    int depth;
    Boom(int d) : std::runtime_error("boom at " + std::to_string(d)), depth(d) {}
};

__attribute__((noinline)) static int down(int n, int at) {
    if (n == at) throw Boom(n);
    volatile int x = n;
    return down(n + 1, at) + x;
}

__attribute__((noinline)) static int guarded(int at, int catch_every) {
    try {
        return down(0, at);
    } catch (Boom &b) {
        if (b.depth % catch_every == 0) return -b.depth;
        throw;
    }
}

static long thread_exceptions() {
    long caught = 0;
    std::vector<std::future<int>> fs;
    for (int i = 1; i <= 40; i++)
        fs.push_back(std::async(std::launch::async, [i] { return guarded(i, 2); }));
    for (auto &f : fs) {
        try {
            caught += f.get();
        } catch (Boom &b) {
            caught += 1000 * b.depth;
        }
    }
    // promise set_exception from a thread, exception_ptr rethrown
    std::promise<int> p;
    auto f = p.get_future();
    std::thread t([&p] {
        try {
            down(0, 17);
        } catch (...) {
            p.set_exception(std::current_exception());
        }
    });
    t.join();
    try {
        f.get();
    } catch (const Boom &b) {
        caught += b.depth;
    }
    // packaged_task that throws
    std::packaged_task<int(int)> task([](int a) { return down(0, a); });
    auto tf = task.get_future();
    std::thread tt(std::move(task), 9);
    tt.join();
    try {
        tf.get();
    } catch (const std::exception &e) {
        caught += std::string(e.what()).size();
    }
    // broken promise
    std::future<void> bf;
    {
        std::promise<void> bp;
        bf = bp.get_future();
    }
    try {
        bf.get();
    } catch (const std::future_error &e) {
        caught += e.code() == std::future_errc::broken_promise;
    }
    return caught;
}

static int futures() {
    int r = 0;
    std::promise<int> p;
    std::shared_future<int> sf = p.get_future().share();
    std::vector<std::future<int>> waiters;
    for (int i = 0; i < 6; i++)
        waiters.push_back(std::async(std::launch::async, [sf, i] { return sf.get() + i; }));
    std::future<int> slow = std::async(std::launch::async, [sf] { return sf.get() * 2; });
    if (slow.wait_for(3ms) == std::future_status::timeout) r += 100;
    p.set_value(5);
    for (auto &w : waiters) r += w.get();
    r += slow.get();
    auto d = std::async(std::launch::deferred, [] { return 11; });
    if (d.wait_for(0ms) == std::future_status::deferred) r += d.get();
    return r;
}

static long short_lived() {
    std::atomic<long> s{0};
    for (int round = 0; round < 100; round++) {
        std::vector<std::thread> ts;
        for (int i = 0; i < 20; i++)
            ts.emplace_back([&s, i] {
                tracker.id = 1;
                tracker.data.assign(i, 0);
                s += i;
            });
        for (auto &t : ts) t.join();
    }
    return s.load();
}

static int detached() {
    std::mutex m;
    std::condition_variable cv;
    int finished = 0;
    for (int i = 0; i < 50; i++)
        std::thread([&] {
            tracker.id = 2;
            std::lock_guard g(m);
            finished++;
            cv.notify_one();
        }).detach();
    std::unique_lock lk(m);
    cv.wait(lk, [&] { return finished == 50; });
    return finished;
}

static long tree(int depth) {
    if (depth == 0) return 1;
    long a = 0, b = 0;
    std::thread l([&] { a = tree(depth - 1); });
    std::thread r([&] { b = tree(depth - 1); });
    l.join();
    r.join();
    return a + b + 1;
}

int main() {
    long e = thread_exceptions();
    int f = futures();
    long s = short_lived();
    long ds = dtor_sum.load();
    int d = detached();
    long t = tree(6);
    std::jthread j([] { tracker.id = 3; nested.spawn = true; });
    j.join();
    // wait for the detached threads' tracker destructors, which run after
    // their notify; the count must reach the number of Tracker objects.
    std::printf("exceptions %ld futures %d short %ld dtors %ld detached %d tree %ld\n", e, f, s, ds, d, t);
    return 0;
}

// C++ standard threads, which go through pthreads: std::thread,
// std::mutex, std::recursive_mutex, std::timed_mutex, std::shared_mutex,
// std::condition_variable (wait with predicate, wait_for timing out),
// std::async and std::call_once. Output must be identical with and
// without LD_PRELOAD=libheisen_pthread.so.
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <future>
#include <mutex>
#include <queue>
#include <shared_mutex>
#include <thread>
#include <vector>

// A thread_local whose destructor locks a mutex after the thread's
// function returned (and heisen ended the thread's location).
static std::mutex dtor_lock;
static int dtors = 0;
struct AtThreadExit {
    int used = 0;
    ~AtThreadExit() {
        std::lock_guard<std::mutex> g(dtor_lock);
        dtors += used;
    }
};
static thread_local AtThreadExit at_exit_of_thread;

int main() {
    std::mutex m;
    std::condition_variable cv;
    std::queue<int> q;
    bool done = false;
    long consumed = 0;
    std::vector<std::thread> consumers;
    for (int c = 0; c < 4; c++)
        consumers.emplace_back([&] {
            at_exit_of_thread.used = 1;
            for (;;) {
                std::unique_lock<std::mutex> lk(m);
                cv.wait(lk, [&] { return !q.empty() || done; });
                if (q.empty())
                    return;
                consumed += q.front();
                q.pop();
            }
        });
    for (int i = 1; i <= 20000; i++) {
        std::lock_guard<std::mutex> lk(m);
        q.push(i);
        cv.notify_one();
    }
    {
        std::lock_guard<std::mutex> lk(m);
        done = true;
    }
    cv.notify_all();
    for (auto &t : consumers)
        t.join();
    std::printf("queue: %ld\n", consumed);
    {
        std::lock_guard<std::mutex> g(dtor_lock);
        std::printf("thread_local destructors: %d\n", dtors);
    }

    {
        std::unique_lock<std::mutex> lk(m);
        bool woke = cv.wait_for(lk, std::chrono::milliseconds(3), [] { return false; });
        std::printf("wait_for timed out: %d\n", !woke);
    }

    std::recursive_mutex rm;
    long depth_sum = 0;
    std::vector<std::thread> ts;
    for (int t = 0; t < 3; t++)
        ts.emplace_back([&] {
            for (int i = 0; i < 5000; i++) {
                std::lock_guard<std::recursive_mutex> a(rm);
                std::lock_guard<std::recursive_mutex> b(rm);
                depth_sum++;
            }
        });
    for (auto &t : ts)
        t.join();
    ts.clear();
    std::printf("recursive: %ld\n", depth_sum);

    std::timed_mutex tm;
    tm.lock();
    std::thread([&] {
        std::printf("try_lock_for held: %d\n", tm.try_lock_for(std::chrono::milliseconds(2)));
    }).join();
    tm.unlock();

    std::shared_mutex sm;
    long value = 0, reads = 0;
    std::mutex reads_lock;
    for (int t = 0; t < 6; t++)
        ts.emplace_back([&, t] {
            for (int i = 0; i < 3000; i++) {
                if (t == 0) {
                    std::unique_lock<std::shared_mutex> w(sm);
                    value++;
                } else {
                    std::shared_lock<std::shared_mutex> r(sm);
                    std::lock_guard<std::mutex> g(reads_lock);
                    reads += value >= 0;
                }
            }
        });
    for (auto &t : ts)
        t.join();
    std::printf("shared_mutex: %ld %ld\n", value, reads);

    std::once_flag once;
    int called = 0;
    std::vector<std::future<int>> fs;
    for (int i = 0; i < 8; i++)
        fs.push_back(std::async(std::launch::async, [&, i] {
            std::call_once(once, [&] { called++; });
            return i * i;
        }));
    int s = 0;
    for (auto &f : fs)
        s += f.get();
    std::printf("async: %d, call_once ran %d\n", s, called);
    std::thread([] {}).detach();
    return 3;
}

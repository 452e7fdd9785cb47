/*
 * regions.cpp: heisen from C++. Compiled with -finstrument-functions, so
 * every function of the program is a region named after its demangled
 * name (class templates and namespaces included); a small RAII class adds
 * a hand-made region around each phase; two std::threads work at once.
 *
 *   c++ -O1 -finstrument-functions \
 *       -finstrument-functions-exclude-file-list=/usr/include \
 *       regions.cpp $(pkg-config --cflags --libs heisen) -o regions
 *   ./regions [output directory]
 *
 * main (and check, which it calls first) are not instrumented, so that
 * main can configure heisen before the first instrumented function starts
 * the runtime.
 */
#include <heisen.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace {

// Not instrumented either: main calls it before heisen_init.
__attribute__((no_instrument_function)) void check(heisen_result r, const char *what) {
    if (r != HEISEN_RESULT_OK) {
        std::fprintf(stderr, "%s: %s\n", what, heisen_result_message(r));
        std::exit(1);
    }
}

}  // namespace

// A hand-made region for a scope. Its constructor and destructor are not
// instrumented: as functions of their own, their regions would close
// before the hand-made one they open, and regions must nest.
class Phase {
  public:
    __attribute__((no_instrument_function)) explicit Phase(uint32_t id) : id_(id) {
        check(heisen_region_enter(id_), "enter");
    }
    __attribute__((no_instrument_function)) ~Phase() { check(heisen_region_exit(id_), "exit"); }
    Phase(const Phase &) = delete;
    Phase &operator=(const Phase &) = delete;

  private:
    uint32_t id_;
};

template <typename T>
struct Stencil {
    T apply(const std::vector<T> &v, std::size_t i) const {
        return (v[i - 1] + v[i] + v[i + 1]) / T(3);
    }
};

namespace solver {

double sweep(std::vector<double> &grid) {
    Stencil<double> stencil;
    std::vector<double> next(grid.size(), 0.0);
    double change = 0.0;
    for (std::size_t i = 1; i + 1 < grid.size(); i++) {
        next[i] = stencil.apply(grid, i);
        change += next[i] > grid[i] ? next[i] - grid[i] : grid[i] - next[i];
    }
    grid.swap(next);
    return change;
}

void relax(uint32_t phase, int sweeps) {
    Phase p(phase);
    std::vector<double> grid(256, 0.0);
    grid[128] = 1000.0;
    for (int s = 0; s < sweeps; s++) sweep(grid);
}

}  // namespace solver

__attribute__((no_instrument_function)) int main(int argc, char **argv) {
    heisen_config *config = nullptr;
    check(heisen_config_new(&config), "config");
    if (argc > 1) check(heisen_config_set_output(config, argv[1]), "output");
    check(heisen_config_select(config, "relax phase"), "select");
    check(heisen_init(config), "init");
    heisen_config_free(config);

    uint32_t phase;
    check(heisen_region_register("relax phase", &phase), "register");
    std::thread a(solver::relax, phase, 50);
    std::thread b(solver::relax, phase, 80);
    a.join();
    b.join();

    char path[4096];
    std::size_t len;
    check(heisen_report_path(path, sizeof path, &len), "report path");
    check(heisen_finalize(), "finalize");
    std::printf("two threads relaxed; report %s\n", path);
    return 0;
}

/*
 * long_names.cpp: C++ functions whose demangled names are long, compiled
 * with -finstrument-functions. `use<T>` for two types whose names share a
 * prefix longer than a report's region name must come out as two regions
 * with two different names; `Short::method` (over 64 bytes, under 256)
 * whole.
 */
#include <cstdio>
#include <tuple>

template <int N> struct Deep {
    using type = std::tuple<typename Deep<N - 1>::type, typename Deep<N - 1>::type>;
};
template <> struct Deep<0> { using type = int; };

template <typename T> __attribute__((noinline)) int use(const T *) { return sizeof(T) > 4; }

struct AStructWithAFairlyLongNameForItsMethods {
    __attribute__((noinline)) int method_with_a_long_name_too(int first_argument, long second) {
        return first_argument + (int)second;
    }
};

int main() {
    Deep<9>::type *p = nullptr;
    Deep<8>::type *q = nullptr;
    AStructWithAFairlyLongNameForItsMethods s;
    int sum = 0;
    for (int i = 0; i < 100; i++) sum += use(p);
    for (int i = 0; i < 30; i++) sum += use(q);
    for (int i = 0; i < 7; i++) sum += s.method_with_a_long_name_too(i, 1);
    std::printf("sum %d\n", sum);
    return 0;
}

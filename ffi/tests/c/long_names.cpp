/*
 * long_names.cpp: C++ functions whose demangled names are long, compiled
 * with -finstrument-functions. `use<T, Tag>` for two tags: their names
 * (about 2 KB each) share everything but the tag near their ends, so far
 * more than a report's 256-byte region name, and must come out as two
 * regions with two different names; the long method name (over 64 bytes,
 * under 256) whole.
 */
#include <cstdio>
#include <tuple>

template <int N> struct Deep {
    using type = std::tuple<typename Deep<N - 1>::type, typename Deep<N - 1>::type>;
};
template <> struct Deep<0> { using type = int; };

struct TagA {};
struct TagB {};

template <typename T, typename Tag> __attribute__((noinline)) int use(const T *, Tag) {
    return sizeof(T) > 4;
}

struct AStructWithAFairlyLongNameForItsMethods {
    __attribute__((noinline)) int method_with_a_long_name_too(int first_argument, long second) {
        return first_argument + (int)second;
    }
};

int main() {
    Deep<6>::type *p = nullptr;
    AStructWithAFairlyLongNameForItsMethods s;
    int sum = 0;
    for (int i = 0; i < 100; i++) sum += use(p, TagA{});
    for (int i = 0; i < 30; i++) sum += use(p, TagB{});
    for (int i = 0; i < 7; i++) sum += s.method_with_a_long_name_too(i, 1);
    std::printf("sum %d\n", sum);
    return 0;
}

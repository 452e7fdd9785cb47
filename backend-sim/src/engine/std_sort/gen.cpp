// Generator of vectors.txt (g++ 12.2, libstdc++): g++ -O2 -std=c++11 gen.cpp -o gen && ./gen > vectors.txt
// Writes test vectors for heisen's port of libstdc++'s std::sort:
// each line "sort|partial K1 K2 ... : I1 I2 ..." = keys in input order, then
// the input positions in the order std::sort (or std::partial_sort over the
// whole range, the heapsort fallback) leaves them, comparing keys only.
#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <vector>
struct E { unsigned key; unsigned id; };
static uint64_t s = 88172645463325252ull;
static uint64_t rnd() { s ^= s << 13; s ^= s >> 7; s ^= s << 17; return s; }
static void emit(const char* what, const std::vector<E>& in, const std::vector<E>& out) {
  printf("%s", what);
  for (auto& e : in) printf(" %u", e.key);
  printf(" :");
  for (auto& e : out) printf(" %u", e.id);
  printf("\n");
}
int main() {
  std::vector<size_t> lens;
  for (size_t n = 0; n <= 40; ++n) lens.push_back(n);
  for (size_t n : {48, 63, 64, 65, 100, 127, 200, 300}) lens.push_back(n);
  for (size_t n : lens) {
    for (unsigned keys : {1u, 2u, 3u, 5u, 1000u}) {
      std::vector<E> v(n);
      for (size_t i = 0; i < n; ++i) v[i] = {1 + (unsigned)(rnd() % keys), (unsigned)i};
      // Also runs of one key (as operations are made executable in groups).
      if (keys == 5 && n > 4) for (size_t i = 0; i < n / 2; ++i) v[i].key = 1 + (unsigned)((i * 3) / n);
      auto a = v;
      std::sort(a.begin(), a.end(), [](E x, E y) { return x.key < y.key; });
      emit("sort", v, a);
      auto b = v;
      std::partial_sort(b.begin(), b.end(), b.end(), [](E x, E y) { return x.key < y.key; });
      emit("partial", v, b);
    }
  }
}

// The allocator at the 4 GiB edge of wasm32 memory, in a module of its own built the way that
// shows emmalloc's wraparound (src/heap_guard.cpp says what it is): every block malloc hands out
// lies inside wasm memory, a request that does not fit is a null pointer, and the heap stays
// usable, in the sequences that made emmalloc hand out memory past the end.
#include <emscripten/heap.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

int failures = 0;
int checks = 0;

void check(bool ok, const char* what) {
  ++checks;
  if (!ok) {
    ++failures;
    std::printf("FAILED: %s\n", what);
  }
}

constexpr size_t kMiB = size_t(1) << 20;
constexpr size_t kGiB = size_t(1) << 30;

bool inside(void* ptr, size_t size) {
  return ptr == nullptr ||
         uint64_t(reinterpret_cast<uintptr_t>(ptr)) + size <= emscripten_get_heap_size();
}

// Allocates and writes the block's first and last bytes (a block past the end would trap here).
void* take(size_t size, const char* what) {
  void* ptr = std::malloc(size);
  check(inside(ptr, size), what);
  if (ptr != nullptr && inside(ptr, size)) {
    static_cast<unsigned char*>(ptr)[0] = 1;
    static_cast<unsigned char*>(ptr)[size - 1] = 1;
  }
  return ptr;
}

}  // namespace

int main() {
  // Three 1 GiB blocks, then a fourth: it cannot fit under 4 GiB.
  void* a = take(kGiB, "1st GiB inside memory");
  void* b = take(kGiB, "2nd GiB inside memory");
  void* c = take(kGiB, "3rd GiB inside memory");
  check(a && b && c, "three GiB fit");
  void* d = take(kGiB, "4th GiB: null, not a block past the end");
  check(d == nullptr, "4th GiB refused");
  void* small = take(kMiB, "1 MiB after the refusal");
  check(small != nullptr, "the heap still hands out memory");
  std::free(a);
  std::free(b);
  std::free(c);
  std::free(small);

  // All freed: one 3 GiB block fits, and 0xffb00000 bytes do not.
  void* big = take(3 * kGiB, "3 GiB after freeing");
  check(big != nullptr, "3 GiB fits in the freed heap");
  std::free(big);
  check(take(0xffb00000u, "0xffb00000 bytes") == nullptr, "0xffb00000 bytes refused");

  // 2 GiB held: another 2 GiB does not fit; 256 MiB does; after freeing, 2 GiB again does.
  void* x = take(2 * kGiB, "2 GiB");
  check(take(2 * kGiB, "2 GiB more") == nullptr, "2 GiB more refused");
  void* y = take(256 * kMiB, "256 MiB beside 2 GiB");
  check(x && y, "2 GiB and 256 MiB fit");
  std::free(x);
  void* z = take(2 * kGiB, "2 GiB after freeing 2 GiB");
  check(z != nullptr, "the freed 2 GiB is used again");
  void* w = static_cast<unsigned char*>(std::calloc(1, kGiB));
  check(inside(w, kGiB), "calloc of 1 GiB inside memory or null");
  void* r = std::realloc(y, kGiB);
  check(inside(r, kGiB), "realloc to 1 GiB inside memory or null");
  std::free(w);
  std::free(r != nullptr ? r : y);
  std::free(z);
  check(take(16, "16 bytes at the end") != nullptr, "the heap is usable at the end");

  std::printf("%d passed, %d failed\n", checks - failures, failures);
  return failures == 0 ? 0 : 1;
}

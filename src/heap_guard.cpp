// Linked into the wasm module only: the allocation functions, guarding emmalloc at the 4 GiB edge.
//
// emmalloc (Emscripten 3.1.x) decides whether a request fits a free region with 32-bit pointer
// arithmetic, `start + size > end`. When `start + size` passes 2^32 it wraps to a small address,
// the check passes, and malloc hands out a block that runs past the end of wasm memory: writing it
// overwrites the bottom of the heap (other tensors, the allocator's own lists). Every region lies
// below the break, sbrk(0), so only a request with break + size near 2^32 can be misjudged. Such a
// request is checked after the fact: a block that does not lie inside wasm memory is given back
// at once (nothing has been written to it, so the allocator stays whole) and the request fails
// with a null pointer, as any failed allocation does. A request that a free region really holds
// still succeeds (a 2 GiB tensor after a 2 GiB one was freed, say).
//
// dlmalloc, Emscripten's other allocator, fails cleanly at the edge but cannot hand out a block of
// 2 GiB or more (it asks sbrk for signed sizes), and tensors of 2-3 GiB must load on a fresh heap.
// emmalloc_trim, which could lower the break first, negates its shrink amount as a signed 32-bit
// number and so breaks for shrinks of 2 GiB or more: it is not used.
//
// emmalloc defines these functions as weak symbols: the strong ones here replace them.
#include <emscripten/emmalloc.h>
#include <emscripten/heap.h>

#include <unistd.h>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace {

// More than any alignment and region header between a free region's start and its payload.
constexpr uint64_t kSlack = 64 * 1024;

bool mayWrap(uint64_t size, uint64_t alignment) {
  const uint64_t top = reinterpret_cast<uintptr_t>(sbrk(0));
  return top + size + alignment + kSlack > UINT32_MAX;
}

// emmalloc's block, or null when it handed out one that runs past wasm memory.
void* checked(void* ptr, uint64_t size) {
  if (ptr != nullptr && reinterpret_cast<uintptr_t>(ptr) + size > emscripten_get_heap_size()) {
    emmalloc_free(ptr);
    return nullptr;
  }
  return ptr;
}

void* tryAllocate(size_t alignment, size_t size) {
  void* ptr = emmalloc_memalign(alignment, size);
  return mayWrap(size, alignment) ? checked(ptr, size) : ptr;
}

// emmalloc grows the heap by the whole request, even when the free region at the top already
// holds part of it: with 3 GiB claimed and a 768 MiB hole at the top, 1 GiB more would need 4.75
// GiB. Claiming what is left up to the limit and giving it back joins it to that hole, which may
// then hold the request.
void* allocate(size_t alignment, size_t size) {
  if (void* ptr = tryAllocate(alignment, size)) return ptr;
  const size_t unclaimed = emmalloc_unclaimed_heap_memory();
  if (unclaimed <= kSlack || size >= unclaimed + emmalloc_free_dynamic_memory()) return nullptr;
  void* rest = emmalloc_malloc(unclaimed - kSlack);
  if (rest == nullptr) return nullptr;
  emmalloc_free(rest);
  return tryAllocate(alignment, size);
}

}  // namespace

extern "C" {

void* malloc(size_t size) { return allocate(8, size); }

void* memalign(size_t alignment, size_t size) { return allocate(alignment, size); }

void* aligned_alloc(size_t alignment, size_t size) {
  if (alignment % sizeof(void*) != 0 || size % alignment != 0) return nullptr;
  return allocate(alignment, size);
}

int posix_memalign(void** out, size_t alignment, size_t size) {
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
  void* ptr = allocate(alignment, size);
  if (ptr == nullptr) return ENOMEM;
  *out = ptr;
  return 0;
}

// emmalloc's calloc and realloc write into the block they get: a misjudged one would trap.
void* calloc(size_t count, size_t size) {
  const uint64_t total = uint64_t(count) * size;
  if (total > SIZE_MAX) return nullptr;
  if (!mayWrap(total, 8)) return emmalloc_calloc(count, size);
  void* ptr = allocate(8, size_t(total));
  if (ptr != nullptr) std::memset(ptr, 0, size_t(total));
  return ptr;
}

void* realloc(void* old, size_t size) {
  if (!mayWrap(size, 8)) return emmalloc_realloc(old, size);
  void* ptr = allocate(8, size);
  if (ptr != nullptr && old != nullptr) {
    const size_t keep = emmalloc_usable_size(old);
    std::memcpy(ptr, old, keep < size ? keep : size);
    emmalloc_free(old);
  }
  return ptr;
}

}  // extern "C"

// A stable bottom-up merge sort. Used instead of std::sort and std::stable_sort, whose
// introsort and in-place merge come to several kilobytes of wasm code per comparator; this is
// a few hundred bytes, O(n log n) always, and needs an n-element scratch buffer.
// Input already in order costs n - 1 comparisons and no buffer, and two runs already in order
// are copied, not merged: the reference writer lists a header's tensors by dtype, then name, so
// the names of a one-dtype file come sorted.
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

namespace st {

template <class T, class Less>
void mergeSort(std::vector<T>& items, Less less) {
  const size_t n = items.size();
  size_t sorted = 1;
  while (sorted < n && !less(items[sorted], items[sorted - 1])) ++sorted;
  if (sorted >= n) return;
  std::vector<T> scratch(n);
  T* from = items.data();
  T* to = scratch.data();
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      const size_t mid = lo + width < n ? lo + width : n;
      const size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      size_t i = lo, j = mid, k = lo;
      // Ties take the left run first: that is what keeps equal items in order.
      if (mid < hi && less(from[mid], from[mid - 1]))
        while (i < mid && j < hi) to[k++] = less(from[j], from[i]) ? from[j++] : from[i++];
      while (i < mid) to[k++] = from[i++];
      while (j < hi) to[k++] = from[j++];
    }
    std::swap(from, to);
  }
  if (from != items.data()) items.swap(scratch);
}

}  // namespace st

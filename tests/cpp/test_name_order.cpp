// name_order.hpp and merge_sort.hpp: the sorts behind name lookup, the duplicate check and the
// writer's name order, checked against the standard library's on random input.
#include <catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "merge_sort.hpp"
#include "name_order.hpp"

using st::bytesLess;
using st::findRepeat;
using st::mergeSort;
using st::NameOf;
using st::orderByName;

TEST_CASE("bytesLess orders as std::string_view does, bytes unsigned, prefixes first") {
  std::mt19937 rng(7);
  const std::string alphabet = std::string("ab.0") + '\xff' + '\x80' + '\0';
  for (int round = 0; round < 20000; ++round) {
    std::string a, b;
    for (size_t n = rng() % 20; n > 0; --n) a += alphabet[rng() % alphabet.size()];
    b = rng() % 2 ? a.substr(0, rng() % (a.size() + 1)) : std::string();
    for (size_t n = rng() % 20; n > 0; --n) b += alphabet[rng() % alphabet.size()];
    INFO(a << " vs " << b);
    REQUIRE(bytesLess(a, b) == (std::string_view(a) < std::string_view(b)));
    REQUIRE(bytesLess(b, a) == (std::string_view(b) < std::string_view(a)));
  }
}

TEST_CASE("mergeSort is a stable sort") {
  std::mt19937 rng(11);
  for (size_t n : {0u, 1u, 2u, 3u, 7u, 8u, 9u, 100u, 1000u, 4097u}) {
    std::vector<std::pair<int, int>> items(n);  // (key, original position)
    for (size_t i = 0; i < n; ++i) items[i] = {static_cast<int>(rng() % 10), static_cast<int>(i)};
    auto expected = items;
    std::stable_sort(expected.begin(), expected.end(),
                     [](auto& a, auto& b) { return a.first < b.first; });
    mergeSort(items, [](auto& a, auto& b) { return a.first < b.first; });
    REQUIRE(items == expected);
  }
}

TEST_CASE("mergeSort is a stable sort of input partly or wholly in order") {
  std::mt19937 rng(13);
  const auto byKey = [](auto& a, auto& b) { return a.first < b.first; };
  for (size_t n : {2u, 3u, 9u, 100u, 1000u, 4097u}) {
    std::vector<std::vector<int>> keyLists;
    std::vector<int> keys(n);
    for (size_t i = 0; i < n; ++i) keys[i] = static_cast<int>(i / 3);  // in order, with ties
    keyLists.push_back(keys);
    keyLists.emplace_back(keys.rbegin(), keys.rend());  // reversed
    // In order but for one pair.
    auto swapped = keys;
    std::swap(swapped[n / 2], swapped[n - 1]);
    keyLists.push_back(swapped);
    std::vector<int> runs(n);  // runs in order, each starting anew
    for (size_t i = 0; i < n; ++i) runs[i] = static_cast<int>((i % (1 + rng() % 17)) + rng() % 2);
    keyLists.push_back(runs);
    for (const auto& list : keyLists) {
      std::vector<std::pair<int, int>> items(n);
      for (size_t i = 0; i < n; ++i) items[i] = {list[i], static_cast<int>(i)};
      auto expected = items;
      std::stable_sort(expected.begin(), expected.end(), byKey);
      mergeSort(items, byKey);
      REQUIRE(items == expected);
    }
  }
}

TEST_CASE("orderByName gives the indices in name order, equal names in index order") {
  std::mt19937 rng(3);
  std::vector<std::string> names(3000);
  for (auto& name : names) {
    name = "model.layers." + std::to_string(rng() % 40) + ".mlp.";  // long shared prefixes
    for (size_t n = rng() % 4; n > 0; --n) name += static_cast<char>('a' + rng() % 3);
  }
  const auto order = orderByName(
      names.size(),
      [](const void* all, uint32_t i) -> std::string_view {
        return (*static_cast<const std::vector<std::string>*>(all))[i];
      },
      &names);
  std::vector<uint32_t> expected(names.size());
  for (uint32_t i = 0; i < expected.size(); ++i) expected[i] = i;
  std::stable_sort(expected.begin(), expected.end(),
                   [&](uint32_t a, uint32_t b) { return names[a] < names[b]; });
  REQUIRE(order == expected);
}

TEST_CASE("findRepeat names the first name, in name order, that the table holds twice") {
  const NameOf nameOf = [](const void* all, uint32_t i) -> std::string_view {
    return (*static_cast<const std::vector<std::string>*>(all))[i];
  };
  std::string_view repeated;
  const std::vector<std::string> unique = {"b", "a", "ab", "ba"};
  CHECK_FALSE(findRepeat(orderByName(unique.size(), nameOf, &unique), nameOf, &unique, repeated));
  const std::vector<std::string> twice = {"z", "m", "z", "b", "m"};
  REQUIRE(findRepeat(orderByName(twice.size(), nameOf, &twice), nameOf, &twice, repeated));
  CHECK(repeated == "m");
  const std::vector<std::string> none;
  CHECK_FALSE(findRepeat(orderByName(none.size(), nameOf, &none), nameOf, &none, repeated));
}

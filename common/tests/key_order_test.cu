// CTest target common_key_order_test (host only): the key order of
// common/sort_buffers.cuh against the order stated plainly, on edge values
// of every key type: the rank map keeps <, puts -0.0 before +0.0 and NaNs at
// the ends (IEEE totalOrder), round-trips every key bit for bit, and the
// descending flip reverses it; RankMap, its run-time form, is the same map;
// and the host reference sorts by it, stably.
#include "../inputs.hpp"
#include "../selftest.hpp"
#include "../sort_buffers.cuh"

#include <climits>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

// The order, written without the rank map: NaNs by their sign at the two
// ends, then numeric <, then the sign of zero. (The samples hold one NaN of
// each sign, so two NaNs of one side are the same key.)
template <class Key>
bool plainLess(Key a, Key b) {
    if constexpr (std::is_floating_point<Key>::value) {
        auto side = [](Key k) { return std::isnan(k) ? (std::signbit(k) ? -1 : 1) : 0; };
        if (side(a) || side(b)) return side(a) < side(b);
        return a < b || (a == b && std::signbit(a) && !std::signbit(b));
    } else {
        return a < b;
    }
}

template <class Key>
void testOrder(const std::vector<Key>& samples) {
    for (Key a : samples) {
        expect(sameBits(keyFromOrderedBits<Key>(orderedBits(a)), a), std::string(keyName<Key>()) + " round trip of " + formatKey(a));
        for (Key b : samples) {
            const std::string pair = std::string(keyName<Key>()) + " " + formatKey(a) + " vs " + formatKey(b);
            expect(plainLess(a, b) == (orderedBits(a) < orderedBits(b)), pair + ": the rank keeps the order");
            expect(RankLess<Key>{~0u}(a, b) == plainLess(b, a), pair + ": descending reverses it");
        }
        for (uint32_t flip : {0u, ~0u}) {  // the run-time map is the same map, both ways
            const RankMap map = rankMapOf<Key>(flip);
            expect(map.rank(wordOf(a)) == rankOf(a, flip) && map.word(rankOf(a, flip)) == wordOf(a),
                   std::string(keyName<Key>()) + " " + formatKey(a) + ": RankMap is rankOf and keyOfRank");
        }
    }
}

int main() {
    testOrder<uint32_t>({0u, 1u, 2u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu});
    testOrder<int32_t>({INT32_MIN, INT32_MIN + 1, -2, -1, 0, 1, INT32_MAX});
    const float nan = std::numeric_limits<float>::quiet_NaN();
    testOrder<float>({-nan, -INFINITY, -3.5e38f, -1.0f, -1e-45f, -0.0f, 0.0f, 1e-45f, 1.0f, 3.5e38f, INFINITY, nan});
    // The stated ends: -NaN below -inf, +NaN above +inf, -0.0 below +0.0.
    expect(orderedBits(-nan) < orderedBits(-INFINITY) && orderedBits(INFINITY) < orderedBits(nan) &&
               orderedBits(-0.0f) < orderedBits(0.0f), "float ends: -NaN < -inf, +inf < +NaN, -0.0 < +0.0");
    // The host reference (an LSD radix sort) is the stable sort by that order:
    // the same original indices as std::stable_sort, every shape, both orders.
    bool same = true;
    for (const auto& entry : sortShapeNames())
        for (bool descending : {false, true}) {
            const auto floats = makeSortInput<float>(entry.shape, 5003, 3);
            const auto ints = makeSortInput<int32_t>(entry.shape, 5003, 4);
            same = same && referenceSort(floats, descending).indices == referenceStableSortIndices(floats, RankLess<float>{descending ? ~0u : 0u}) &&
                   referenceSort(ints, descending).indices == referenceStableSortIndices(ints, RankLess<int32_t>{descending ? ~0u : 0u});
        }
    expect(same, "referenceSort's indices equal std::stable_sort's by the rank order (every shape, both orders)");
    return selftestVerdict();
}

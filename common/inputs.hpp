// Input generators: the default inputs, the sort distributions and the
// adversarial set every lesson's --verify runs (README.md). Keys are built
// from whole numbers, so ties are planned rather than accidental, and every
// key type holds them (floats exactly below 2^24; above that, rounding is
// monotone, so sorted stays sorted and ties appear).
#pragma once

#include "key_order.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

// splitmix64's finalizer: a bijection of 64-bit words that spreads every
// input bit over the whole output. The generator below, sample sort's
// sample positions and the fingerprint of sample_sort_gpus' check mix with it.
KEY_ORDER_HD inline uint64_t mix64(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// A small, fast, seedable generator (splitmix64): large inputs are made
// in well under a second, and the same seed gives the same input everywhere.
class SplitMix64 {
public:
    explicit SplitMix64(uint64_t seed) : state_(seed) {}
    uint64_t next() { return mix64(state_ += 0x9E3779B97F4A7C15ull); }
    uint64_t below(uint64_t bound) { return bound ? next() % bound : 0; }

private:
    uint64_t state_;
};

// Integer keys saturate at their type's range, so an ascending sequence of
// whole numbers stays sorted (ending in ties) even past 2^32 elements.
template <class Key>
Key keyFromInt(int64_t value) {
    if constexpr (std::is_integral<Key>::value) {
        const int64_t lowest = static_cast<int64_t>(std::numeric_limits<Key>::lowest());
        const int64_t largest = static_cast<int64_t>(std::min<uint64_t>(
            std::numeric_limits<Key>::max(), std::numeric_limits<int64_t>::max()));
        value = std::min(std::max(value, lowest), largest);
    }
    return static_cast<Key>(value);
}

// -0.0 for floating-point keys (equal to +0.0 under <, different in bits);
// plain 0 for integers.
template <class Key>
Key negativeZero() {
    if constexpr (std::is_floating_point<Key>::value) return -static_cast<Key>(0);
    else return static_cast<Key>(0);
}

// ---------------------------------------------------------------- merges --

// Shapes of two sorted inputs a (length m) and b (length n).
enum class MergeShape {
    EvensOdds,    // a = 0, 2, 4, ...; b = 1, 3, 5, ...: interleaved, no ties (Day 36's default)
    Random,       // both random over the same range, some ties
    AllEqual,     // every key in a and b the same
    FewDistinct,  // keys from {0, 1, 2}: ties everywhere
    ManyTies,     // keys from 64 values, each repeated across both inputs
    ABelowB,      // every a below every b
    BBelowA,      // every b below every a
    SeedTies,     // a = 1, 5, 9 and b = 5, 5, 5 (Day 36's exercise); ignores m and n
};

struct MergeShapeName {
    MergeShape shape;
    const char* name;
};

inline const std::vector<MergeShapeName>& mergeShapeNames() {
    static const std::vector<MergeShapeName> names = {
        {MergeShape::EvensOdds, "evens-odds"},   {MergeShape::Random, "random"},
        {MergeShape::AllEqual, "all-equal"},     {MergeShape::FewDistinct, "few-distinct"},
        {MergeShape::ManyTies, "many-ties"},     {MergeShape::ABelowB, "a-below-b"},
        {MergeShape::BBelowA, "b-below-a"},      {MergeShape::SeedTies, "seed-ties"},
    };
    return names;
}

inline std::vector<std::string> mergeShapeWords() {
    std::vector<std::string> words;
    for (const auto& entry : mergeShapeNames()) words.push_back(entry.name);
    return words;
}

inline MergeShape mergeShapeFromName(const std::string& name) {
    for (const auto& entry : mergeShapeNames())
        if (name == entry.name) return entry.shape;
    return MergeShape::EvensOdds;  // callers validate names with Args::choice first
}

inline const char* mergeShapeName(MergeShape shape) {
    for (const auto& entry : mergeShapeNames())
        if (shape == entry.shape) return entry.name;
    return "?";
}

// Fills a (m keys) and b (n keys), each sorted ascending.
template <class Key>
void makeMergeInput(MergeShape shape, size_t m, size_t n, std::vector<Key>& a, std::vector<Key>& b,
                    uint64_t seed = 36) {
    if (shape == MergeShape::SeedTies) {
        a = {keyFromInt<Key>(1), keyFromInt<Key>(5), keyFromInt<Key>(9)};
        b = {keyFromInt<Key>(5), keyFromInt<Key>(5), keyFromInt<Key>(5)};
        return;
    }
    a.resize(m);
    b.resize(n);
    SplitMix64 rng(seed);
    // Sorted random keys over [0, span): an ascending walk whose steps
    // average span / length, so both inputs cover the same range.
    auto sortedWalk = [&rng](std::vector<Key>& out, uint64_t span) {
        const uint64_t meanStep = out.empty() ? 1 : std::max<uint64_t>(1, span / out.size());
        int64_t value = 0;
        for (auto& key : out) {
            key = keyFromInt<Key>(value);
            value += static_cast<int64_t>(rng.below(2 * meanStep + 1));
        }
    };
    const size_t longer = std::max(m, n);
    switch (shape) {
        case MergeShape::EvensOdds:
            for (size_t i = 0; i < m; ++i) a[i] = keyFromInt<Key>(2 * static_cast<int64_t>(i));
            for (size_t j = 0; j < n; ++j) b[j] = keyFromInt<Key>(2 * static_cast<int64_t>(j) + 1);
            break;
        case MergeShape::Random:
            sortedWalk(a, 4 * longer);
            sortedWalk(b, 4 * longer);
            break;
        case MergeShape::AllEqual:
            std::fill(a.begin(), a.end(), keyFromInt<Key>(7));
            std::fill(b.begin(), b.end(), keyFromInt<Key>(7));
            break;
        case MergeShape::FewDistinct:
        case MergeShape::ManyTies: {
            const uint64_t alphabet = shape == MergeShape::FewDistinct ? 3 : 64;
            for (auto& key : a) key = keyFromInt<Key>(static_cast<int64_t>(rng.below(alphabet)));
            for (auto& key : b) key = keyFromInt<Key>(static_cast<int64_t>(rng.below(alphabet)));
            std::sort(a.begin(), a.end());
            std::sort(b.begin(), b.end());
            break;
        }
        case MergeShape::ABelowB:
        case MergeShape::BBelowA: {
            std::vector<Key>& low = shape == MergeShape::ABelowB ? a : b;
            std::vector<Key>& high = shape == MergeShape::ABelowB ? b : a;
            for (size_t i = 0; i < low.size(); ++i) low[i] = keyFromInt<Key>(static_cast<int64_t>(i));
            for (size_t i = 0; i < high.size(); ++i)
                high[i] = keyFromInt<Key>(static_cast<int64_t>(low.size() + i));
            break;
        }
        case MergeShape::SeedTies:
            break;
    }
}

// Every sorted array of length 0..maxLength over the keys 0..alphabet-1, for
// exhaustive host tests: with a small alphabet, ties are everywhere.
template <class Key>
std::vector<std::vector<Key>> allSortedArrays(size_t maxLength, int alphabet) {
    std::vector<std::vector<Key>> arrays = {{}};
    for (size_t start = 0; start < arrays.size(); ++start) {
        const std::vector<Key> base = arrays[start];
        if (base.size() == maxLength) continue;
        const int smallest = base.empty() ? 0 : static_cast<int>(base.back());
        for (int key = smallest; key < alphabet; ++key) {
            std::vector<Key> longer = base;
            longer.push_back(keyFromInt<Key>(key));
            arrays.push_back(longer);
        }
    }
    return arrays;
}

struct MergeCase {
    MergeShape shape;
    size_t m, n;
};

// The adversarial merge set. `tile` is the number of outputs one block (or
// one thread) of the kernel under test produces, so that sizes land just
// below, on, and just past tile boundaries; lengths also come out odd and
// prime so that no slice or tile divides them.
inline std::vector<MergeCase> adversarialMergeCases(size_t tile) {
    using S = MergeShape;
    const size_t big = 1000003, other = 999983;  // primes: no tile divides them
    return {
        {S::EvensOdds, 0, 0},         {S::EvensOdds, 0, 1000},       {S::EvensOdds, 1000, 0},
        {S::EvensOdds, 1, 1},         {S::AllEqual, 1, 1},           {S::EvensOdds, 2, 2},
        {S::AllEqual, 2, 2},          {S::SeedTies, 3, 3},           {S::Random, tile - 1, tile},
        {S::Random, tile, tile},      {S::Random, tile + 1, tile - 1}, {S::Random, big, other},
        {S::EvensOdds, big, other},   {S::EvensOdds, (1u << 20) + 7, 5}, {S::EvensOdds, 5, (1u << 20) + 7},
        {S::Random, 3 * tile + 1, 17}, {S::Random, 17, 3 * tile + 1}, {S::AllEqual, big, other},
        {S::AllEqual, 3, big},        {S::FewDistinct, big, other},  {S::FewDistinct, 7, big},
        {S::ManyTies, big, other},    {S::ManyTies, 4 * tile + 3, 2 * tile - 1},
        {S::ABelowB, big, other},     {S::BBelowA, big, other},      {S::ABelowB, 5 * tile + 3, 7},
        {S::BBelowA, 7, 5 * tile + 3},
    };
}

// ----------------------------------------------------------------- sorts --

enum class SortShape {
    Uniform,      // random over the key type's whole range (floats: finite)
    Sorted,       // already ascending: a random walk up the finite range
    Reversed,     // descending
    AllEqual,     // one key repeated
    FewDistinct,  // 16 values
    ManyTies,     // 256 values
    Zipf,         // P(key) ~ 1 / key: small keys repeat heavily
    Gaussian,     // a bell around the middle of the range
    Staggered,    // 128 blocks, each from its own range of keys, the ranges out of order
    OrganPipe,    // ascending, then descending
    SignedZeros,  // floats: -0.0, +0.0 and +-1 mixed; other types: 0 and +-1
    Specials,     // floats: -NaN, -inf, -1, -0.0, +0.0, 1, inf, NaN; other types: those bit patterns
};

struct SortShapeName {
    SortShape shape;
    const char* name;
};

inline const std::vector<SortShapeName>& sortShapeNames() {
    static const std::vector<SortShapeName> names = {
        {SortShape::Uniform, "uniform"},     {SortShape::Sorted, "sorted"},
        {SortShape::Reversed, "reversed"},   {SortShape::AllEqual, "all-equal"},
        {SortShape::FewDistinct, "few-distinct"}, {SortShape::ManyTies, "many-ties"},
        {SortShape::Zipf, "zipf"},           {SortShape::Gaussian, "gaussian"},
        {SortShape::Staggered, "staggered"}, {SortShape::OrganPipe, "organ-pipe"},
        {SortShape::SignedZeros, "signed-zeros"}, {SortShape::Specials, "specials"},
    };
    return names;
}

inline std::vector<std::string> sortShapeWords() {
    std::vector<std::string> words;
    for (const auto& entry : sortShapeNames()) words.push_back(entry.name);
    return words;
}

inline SortShape sortShapeFromName(const std::string& name) {
    for (const auto& entry : sortShapeNames())
        if (name == entry.name) return entry.shape;
    return SortShape::Uniform;  // callers validate names with Args::choice first
}

inline const char* sortShapeName(SortShape shape) {
    for (const auto& entry : sortShapeNames())
        if (shape == entry.shape) return entry.name;
    return "?";
}

// The distributions a sort's table has a row for (--dist all); the others
// serve the adversarial set.
inline std::vector<SortShape> sortTableShapes() {
    return {SortShape::Uniform, SortShape::Sorted,   SortShape::Reversed,  SortShape::AllEqual, SortShape::FewDistinct,
            SortShape::Zipf,    SortShape::Gaussian, SortShape::Staggered, SortShape::OrganPipe};
}

// A uniformly random key of the type's whole range (floats: finite values
// of every exponent, both signs).
template <class Key>
Key randomKey(SplitMix64& rng) {
    const uint64_t bits = rng.next();
    if constexpr (std::is_floating_point<Key>::value) {
        static_assert(sizeof(Key) == 4, "float keys only");
        uint32_t word = static_cast<uint32_t>(bits);
        if (((word >> 23) & 0xFF) == 0xFF) word &= ~(1u << 23);  // no Inf/NaN
        return fromWord<Key>(word);
    } else {
        return static_cast<Key>(bits);
    }
}

// The shapes are built as ordered 32-bit ranks (common/key_order.hpp) and
// mapped to the key type, so each has the same shape for uint32, int32 and
// float; only Specials holds NaNs and infinities. Linear time (no host
// sort), so 2^28 keys take a second or two.
template <class Key>
std::vector<Key> makeSortInput(SortShape shape, size_t n, uint64_t seed = 14) {
    std::vector<Key> keys(n);
    SplitMix64 rng(seed);
    // Finite keys only: for floats the ranks of -FLT_MAX and +FLT_MAX bound the range.
    const uint64_t lo = std::is_floating_point<Key>::value ? orderedBits(-std::numeric_limits<float>::max()) : 0;
    const uint64_t hi = std::is_floating_point<Key>::value ? orderedBits(std::numeric_limits<float>::max()) : 0xFFFFFFFFu;
    auto key = [&](uint64_t rank) { return keyFromOrderedBits<Key>(static_cast<uint32_t>(std::min(std::max(rank, lo), hi))); };
    const uint64_t step = std::max<uint64_t>(1, (hi - lo) / std::max<size_t>(n, 1));
    auto walk = [&](size_t from, size_t to, bool up) {  // non-decreasing ranks, written forward or backward
        uint64_t v = lo + rng.below(step);
        for (size_t i = from; i < to; ++i) {
            keys[up ? i : from + to - 1 - i] = key(v);
            v += rng.below(2 * step);
        }
    };
    uint64_t alphabet[256];
    for (auto& a : alphabet) a = lo + rng.below(hi - lo + 1);
    const uint64_t middle = lo + (hi - lo) / 2;
    for (size_t i = 0; i < n; ++i) {
        switch (shape) {
            case SortShape::Uniform: keys[i] = randomKey<Key>(rng); break;
            case SortShape::AllEqual: keys[i] = keyFromInt<Key>(42); break;
            case SortShape::FewDistinct: keys[i] = key(alphabet[rng.below(16)]); break;
            case SortShape::ManyTies: keys[i] = key(alphabet[rng.below(256)]); break;
            case SortShape::Zipf: {  // rank offset 2^(32 u) - 1 above the middle: P ~ 1 / offset
                const double u = (rng.next() >> 11) * 0x1.0p-53;
                keys[i] = key(middle + static_cast<uint64_t>(std::exp2(31.0 * u) - 1.0));
                break;
            }
            case SortShape::Gaussian: {  // Box-Muller, sd 1/16 of the range
                const double u1 = ((rng.next() >> 11) + 1) * 0x1.0p-53, u2 = (rng.next() >> 11) * 0x1.0p-53;
                const double g = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
                keys[i] = key(static_cast<uint64_t>(std::max(0.0, static_cast<double>(middle) + g * (hi - lo) / 16.0)));
                break;
            }
            case SortShape::Staggered: {  // block b < 64 takes range 2b + 1 of 128, the rest range 2b - 128
                const uint64_t b = i * 128 / n, range = b < 64 ? 2 * b + 1 : 2 * b - 128, width = (hi - lo) / 128;
                keys[i] = key(lo + range * width + rng.below(width));
                break;
            }
            case SortShape::SignedZeros: {
                const Key choices[4] = {keyFromInt<Key>(0), negativeZero<Key>(), keyFromInt<Key>(1),
                                        static_cast<Key>(std::is_signed<Key>::value ? -1 : 2)};
                keys[i] = choices[rng.below(4)];
                break;
            }
            case SortShape::Specials: {
                const uint32_t special[8] = {0xFFC00000u, 0xFF800000u, 0xBF800000u, 0x80000000u,
                                             0x00000000u, 0x3F800000u, 0x7F800000u, 0x7FC00000u};
                keys[i] = fromWord<Key>(special[rng.below(8)]);
                break;
            }
            default: break;  // the walks below
        }
    }
    if (shape == SortShape::Sorted || shape == SortShape::Reversed) walk(0, n, shape == SortShape::Sorted);
    if (shape == SortShape::OrganPipe) walk(0, n / 2, true), walk(n / 2, n, false);
    return keys;
}

struct SortCase {
    SortShape shape;
    size_t n;
};

// The adversarial sort set: every shape at sizes that are empty, tiny,
// odd, one off a power of two, and a few larger non-powers of two.
inline std::vector<SortCase> adversarialSortCases() {
    std::vector<SortCase> cases;
    const size_t sizes[] = {0, 1, 2, 3, 5, 17, 1000, 1023, 1025, 65537, (1u << 20) + 3};
    for (const auto& entry : sortShapeNames())
        for (size_t n : sizes) cases.push_back({entry.shape, n});
    for (size_t n : {size_t{4096}, size_t{(1u << 22) - 1}, size_t{3000017}})
        cases.push_back({SortShape::Uniform, n});
    return cases;
}

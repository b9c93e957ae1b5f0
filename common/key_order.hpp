// The key order every sort lesson sorts by, on the host and the device.
// Keys are compared through an order-preserving 32-bit rank: uint32 as is,
// int32 with the sign bit flipped, float by its bits (sign set: all bits
// flipped, else the sign bit set). That is IEEE 754's totalOrder: -NaN <
// -inf < ... < -0.0 < +0.0 < ... < +inf < +NaN, so -0.0 sorts before +0.0
// and NaNs go to the ends. Descending flips every rank bit, so kernels only
// ever sort ranks ascending. Every map is a bijection: equal ranks mean
// equal bits, and the sorted keys are unique. (Plain C++ where no CUDA
// compiler is at work, so the host-only input generators can use it.)
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#ifdef __CUDACC__
#define KEY_ORDER_HD __host__ __device__
#else
#define KEY_ORDER_HD
#endif

// A 4-byte key (or value) as its 32-bit word, and back: the bits moved as
// they are (memcpy, which the compilers turn into a plain move).
template <class T> KEY_ORDER_HD inline uint32_t wordOf(T x) {
    static_assert(sizeof(T) == 4, "the lessons move 4-byte keys and values as words");
    uint32_t word;
    memcpy(&word, &x, sizeof word);
    return word;
}
template <class T> KEY_ORDER_HD inline T fromWord(uint32_t word) {
    static_assert(sizeof(T) == 4, "the lessons move 4-byte keys and values as words");
    T x;
    memcpy(&x, &word, sizeof x);
    return x;
}

KEY_ORDER_HD inline uint32_t orderedBits(uint32_t key) { return key; }
KEY_ORDER_HD inline uint32_t orderedBits(int32_t key) { return static_cast<uint32_t>(key) ^ 0x80000000u; }
KEY_ORDER_HD inline uint32_t orderedBits(float key) {
    const uint32_t bits = wordOf(key);
    return bits ^ ((bits >> 31) ? 0xFFFFFFFFu : 0x80000000u);
}

template <class Key>
KEY_ORDER_HD inline Key keyFromOrderedBits(uint32_t rank) {
    if constexpr (std::is_same<Key, float>::value) {
        return fromWord<float>(rank ^ ((rank >> 31) ? 0x80000000u : 0xFFFFFFFFu));
    } else if constexpr (std::is_same<Key, int32_t>::value) {
        return static_cast<int32_t>(rank ^ 0x80000000u);
    } else {
        return rank;
    }
}

// The rank kernels sort ascending: flip = 0 sorts keys ascending, ~0 descending.
template <class Key>
KEY_ORDER_HD inline uint32_t rankOf(Key key, uint32_t flip) {
    return orderedBits(key) ^ flip;
}
template <class Key>
KEY_ORDER_HD inline Key keyOfRank(uint32_t rank, uint32_t flip) {
    return keyFromOrderedBits<Key>(rank ^ flip);
}

// The same map chosen at run time, for kernels that move keys as 32-bit
// words and are compiled once for every key type and both directions: three
// masks, a few XORs a key. rankMapOf<Key>(flip) is rankOf / keyOfRank's map.
struct RankMap {
    uint32_t sign = 0;  // 0x80000000 for int32 and float keys
    uint32_t low = 0;   // 0x7FFFFFFF for float keys: a negative float flips every bit
    uint32_t flip = 0;  // ~0 sorts descending
    KEY_ORDER_HD uint32_t rank(uint32_t word) const { return word ^ sign ^ ((word >> 31) ? low : 0u) ^ flip; }
    KEY_ORDER_HD uint32_t word(uint32_t rank) const {
        const uint32_t r = rank ^ flip;
        return r ^ sign ^ ((r >> 31) ? 0u : low);
    }
};
template <class Key>
KEY_ORDER_HD inline RankMap rankMapOf(uint32_t flip) {
    return {std::is_same<Key, uint32_t>::value ? 0u : 0x80000000u, std::is_same<Key, float>::value ? 0x7FFFFFFFu : 0u,
            flip};
}

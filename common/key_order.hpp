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

KEY_ORDER_HD inline uint32_t orderedBits(uint32_t key) { return key; }
KEY_ORDER_HD inline uint32_t orderedBits(int32_t key) { return static_cast<uint32_t>(key) ^ 0x80000000u; }
KEY_ORDER_HD inline uint32_t orderedBits(float key) {
    uint32_t bits;
    memcpy(&bits, &key, sizeof bits);
    return bits ^ ((bits >> 31) ? 0xFFFFFFFFu : 0x80000000u);
}

template <class Key>
KEY_ORDER_HD inline Key keyFromOrderedBits(uint32_t rank) {
    if constexpr (std::is_same<Key, float>::value) {
        const uint32_t bits = rank ^ ((rank >> 31) ? 0x80000000u : 0xFFFFFFFFu);
        float key;
        memcpy(&key, &bits, sizeof key);
        return key;
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


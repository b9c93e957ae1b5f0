// Chapter 12: bitonic sort, from one compare-exchange to a multi-block sort of any size.
//
// The seed's three steps run as real kernels and are checked: one
// compare-exchange split of a bitonic sequence (12.1), the single-block
// multi-pass bitonic merge with its group-aware active condition (12.2), and
// the iterative sort with one launch per (k, j), partner i ^ j, direction
// (i & k) == 0 (12.3). Then the same network grows into a sort that fills the
// card: one change of the direction rule makes it sort any n, shared-memory
// tiles take every pass whose distance fits in 4096 keys, and the passes over
// global memory are fused, several distances per pass, because a bitonic
// network does O(n log^2 n) work and memory passes are what it costs.
//
// Build (one file):  nvcc -std=c++17 -O3 -arch=sm_75 -o bitonic_sort bitonic_sort.cu
// Run:
//   ./bitonic_sort                      device report, checks, the version table (2^24 uint32 keys)
//   ./bitonic_sort --verify             every kernel on the adversarial set, exact checks, no timing
//   ./bitonic_sort --selftest           the kernels' index logic on the host (no GPU needed)
//   ./bitonic_sort --n 1000003 --key float --descending --pairs
//   ./bitonic_sort --quick --no-timing  a short run, checks only
//
// The order: keys are sorted through an order-preserving 32-bit "rank": uint32
// as is, int32 with the sign bit flipped, float by its IEEE bits (sign set:
// all bits flipped, else the sign bit set), so -0.0 sorts before +0.0 and
// every other float in numeric order. NaN is refused. --descending flips every
// rank bit, so the kernels only ever sort ranks ascending. The sort is not
// stable; --pairs carries the original index as the value so the output can be
// checked to be a permutation of the input.
//
// Exercises (the seed's two traps), each caught by the checks:
//   -DEXERCISE_ACTIVE_TID_LT_DIST      12.2's active condition becomes tid < dist
//   -DEXERCISE_MISSING_PARTNER_GUARD   12.3's "l > i" guard is dropped

#include "../common/args.hpp"
#include "../common/check.hpp"
#include "../common/cuda_check.cuh"
#include "../common/device_report.cuh"
#include "../common/inputs.hpp"
#include "../common/selftest.hpp"
#include "../common/table.hpp"
#include "../common/timer.cuh"

#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

// Unrolled on the device (register arrays need constant indices); the host
// compiler, which runs the same code in --selftest, does as it likes.
#ifdef __CUDA_ARCH__
#define UNROLL _Pragma("unroll")
#else
#define UNROLL
#endif

// ------------------------------------------------------------- knobs --

// One place for the launch geometry of the tile kernels: nt threads, each
// holding vt = 16 keys in registers that differ in 4 index bits, so a block
// holds a tile of nv = 4096 keys in shared memory.
constexpr int kThreads = 256;                      // nt
constexpr int kGroupBits = 4;                      // index bits one thread's registers span
constexpr int kItems = 1 << kGroupBits;            // vt = 16
constexpr int kTileBits = 12;                      // log2(nv)
constexpr unsigned kTile = 1u << kTileBits;        // nv = 4096
constexpr int kColumnBits = 5;                     // fused shared pass: rows of 32 keys (128 bytes)
constexpr int kRowBits = kTileBits - kColumnBits;  // ... and 7 distances per pass over memory
constexpr int kStepThreads = 256;                  // the one-launch-per-(k, j) kernels
static_assert(kThreads * kItems == static_cast<int>(kTile), "a tile is nt * vt keys");
// Blocks per SM each tile kernel asks the compiler to fit (the second
// argument of __launch_bounds__ caps a thread's registers at 65536 / (nt *
// blocks)). A block runs load, compute, store one after another, so the bytes
// in flight on an SM come from its other blocks: keys only, mergeTiles and
// mergeAcrossTilesShared fit 5 blocks (<= 48 registers: 16 keys, their
// addresses, no spills), 4 where an SM holds only 1024 threads (sm_75);
// sortTiles (one launch of ~30) and key-value (twice the data) fewer.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
constexpr int kThreadsPerSM = 1024;
#else
constexpr int kThreadsPerSM = 1536;  // sm_86/89; sm_80/90 hold 2048
#endif
template <bool kPairs> constexpr int kMinBlocksSort = kPairs ? 2 : 3;
template <bool kPairs>
constexpr int kMinBlocksMerge = kPairs ? 3 : std::min(5, kThreadsPerSM / kThreads);
static_assert(2 * kTile * sizeof(uint32_t) <= 48 * 1024,
              "ranks + values of one tile must fit the default 48 KiB of shared memory");
static_assert(kColumnBits + kGroupBits <= kTileBits, "a fused row window must fit in the tile");

// ------------------------------------------------- the order of the keys --

// Order-preserving maps to uint32: a < b exactly when orderedBits(a) <
// orderedBits(b) (for floats: -0.0 below +0.0). Every map is a bijection, so
// equal ranks mean equal bits and the sorted output is unique.
__host__ __device__ inline uint32_t orderedBits(uint32_t key) { return key; }
__host__ __device__ inline uint32_t orderedBits(int32_t key) {
    return static_cast<uint32_t>(key) ^ 0x80000000u;
}
__host__ __device__ inline uint32_t orderedBits(float key) {
    uint32_t bits;
    memcpy(&bits, &key, sizeof bits);
    return bits ^ ((bits >> 31) ? 0xFFFFFFFFu : 0x80000000u);
}

template <class Key>
__host__ __device__ inline Key keyFromOrderedBits(uint32_t rank) {
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

// The rank the kernels sort ascending: flip = 0 sorts keys ascending,
// flip = ~0 descending (every comparison reversed).
template <class Key>
__host__ __device__ inline uint32_t rankOf(Key key, uint32_t flip) {
    return orderedBits(key) ^ flip;
}
template <class Key>
__host__ __device__ inline Key keyOfRank(uint32_t rank, uint32_t flip) {
    return keyFromOrderedBits<Key>(rank ^ flip);
}

// Positions past the end hold this rank in registers and shared memory: the
// largest, so they stay at the end (see "Any n" below) and are never stored.
constexpr uint32_t kVirtualRank = 0xFFFFFFFFu;

// ------------------------------------- building blocks (host and device) --

// 12.1: a sequence is bitonic if some rotation of it rises, then falls.
// Rotate to the first minimum, then walk up, then down (the seed's test).
template <class Key>
__host__ __device__ bool isBitonic(const Key* a, size_t n) {
    if (n < 3) return true;
    size_t lowest = 0;
    for (size_t i = 1; i < n; ++i)
        if (rankOf(a[i], 0) < rankOf(a[lowest], 0)) lowest = i;
    auto at = [&](size_t i) { return rankOf(a[(lowest + i) % n], 0); };
    size_t i = 0;
    while (i + 1 < n && at(i) <= at(i + 1)) ++i;
    while (i + 1 < n && at(i) >= at(i + 1)) ++i;
    return i == n - 1;
}

// The compare-exchange: should the pair (a at the lower index, b) swap?
__host__ __device__ inline bool outOfOrder(uint32_t a, uint32_t b, bool ascending) {
    return ascending ? b < a : a < b;
}

// The same on two registers (and their values in key-value mode).
template <bool kPairs>
__host__ __device__ inline void compareExchange(uint32_t& a, uint32_t& b, uint32_t& va,
                                                uint32_t& vb, bool ascending) {
    if (outOfOrder(a, b, ascending)) {
        const uint32_t t = a;
        a = b;
        b = t;
        if constexpr (kPairs) {
            const uint32_t tv = va;
            va = vb;
            vb = tv;
        }
    }
}

// ... and on two keys in memory, swapping only when out of order (the seed's
// kernels): keys[i] is the lower index of the pair.
template <class Key, bool kPairs>
__host__ __device__ inline void compareExchangeAt(Key* keys, uint32_t* vals, size_t i, size_t l,
                                                  bool ascending, uint32_t flip) {
    const Key ki = keys[i], kl = keys[l];
    if (outOfOrder(rankOf(ki, flip), rankOf(kl, flip), ascending)) {
        keys[i] = kl;
        keys[l] = ki;
        if constexpr (kPairs) {
            const uint32_t vi = vals[i];
            vals[i] = vals[l];
            vals[l] = vi;
        }
    }
}

// 12.2: at distance dist the range is made of groups of 2*dist; thread tid is
// the left member of a pair when it sits in the first half of its group.
__host__ __device__ inline bool activeLeft(unsigned tid, unsigned dist) {
#ifdef EXERCISE_ACTIVE_TID_LT_DIST
    return tid < dist;  // the seed's trap: only right for the first pass
#else
    return (tid % (2 * dist)) < dist;
#endif
}

// 12.3: every pair (i, i ^ j) is visited by both of its threads; only the one
// at the lower index acts, or the second visit undoes the first.
__host__ __device__ inline bool ownsPair(size_t i, size_t l) {
#ifdef EXERCISE_MISSING_PARTNER_GUARD
    (void)i;
    (void)l;
    return true;  // the seed's trap: each pair compared twice, racing
#else
    return l > i;
#endif
}

// 12.3, the seed's direction: the size-k run holding i is sorted ascending
// when it is an even-numbered run. Needs n to be a power of two.
__host__ __device__ inline bool seedAscending(size_t i, size_t k) { return (i & k) == 0; }

// Any n. Think of the array as padded to a power of two with +infinity, and
// skip every pair whose partner is past the end. That is only right if the
// padding never moves, i.e. if the size-k run that holds both real and
// padding positions is always sorted ascending. Runs of one stage alternate
// direction (bitonic merges need a rising run next to a falling one), so
// anchor the alternation at the last real element instead of at 0: the run
// holding n-1 is ascending, its neighbours descending, and so on. That is the
// seed's rule with i replaced by i ^ (n-1). (The other choice, sentinel
// padding, needs up to 2x the memory and work, and sentinels tie with real
// keys of the largest value, which breaks the provenance check.)
__host__ __device__ inline bool ascendingAt(size_t i, size_t k, size_t last) {
    return ((i ^ last) & k) == 0;
}

// One thread of one (k, j) pass (12.3 and its any-n form), shared by the
// kernels and --selftest.
template <bool kSeedRule, class Key, bool kPairs>
__host__ __device__ inline void sortPassAt(Key* keys, uint32_t* vals, size_t i, size_t n, size_t k,
                                           size_t j, uint32_t flip) {
    const size_t l = i ^ j;
    if (!ownsPair(i, l) || l >= n) return;  // l >= n: the partner is padding
    const bool ascending = kSeedRule ? seedAscending(i, k) : ascendingAt(i, k, n - 1);
    compareExchangeAt<Key, kPairs>(keys, vals, i, l, ascending, flip);
}

// --- register groups: what the tile kernels are made of ---
//
// A thread holds 16 elements whose indices differ only in 4 bits [lo, lo+4):
// register q holds index depositAbove(slot, lo) | q << lo. Every pass whose
// distance 2^b has b in that window is then a compare-exchange between two of
// the thread's own registers, with no memory traffic and no synchronization.

// Opens a gap of `width` zero bits at bit `at`: low bits stay, the rest move up.
__host__ __device__ inline size_t depositAbove(size_t value, int at, int width) {
    const size_t low = value & ((size_t{1} << at) - 1);
    return low | ((value >> at) << (at + width));
}
__host__ __device__ inline size_t groupIndex(size_t slot, unsigned q, int lo) {
    return depositAbove(slot, lo, kGroupBits) | (static_cast<size_t>(q) << lo);
}

// The same inside a tile, in 32 bits: thread t, register q, window [lo, lo+4).
__host__ __device__ inline unsigned tileIndex(unsigned t, unsigned q, int lo) {
    return (t & ((1u << lo) - 1)) | (q << lo) | ((t >> lo) << (lo + kGroupBits));
}

// In a tile the windows are fixed: tile bits [8,12), [4,8), [0,4). Fixed
// windows give the compiler constant shifts, and cost no more round trips
// than windows that follow the passes (a stage with s passes needs ceil(s/4)
// either way).
constexpr int kWindows = kTileBits / kGroupBits;
static_assert(kTileBits % kGroupBits == 0, "tile bits split into whole windows");

// Shared-memory position of tile element L. XOR-ing bits 4..8 into bits 0..4
// keeps every gather below free of bank conflicts: for each window 0..8 the
// 32 threads of a warp hit 32 different banks (and plain rows stay linear).
__host__ __device__ inline unsigned swizzle(unsigned L) { return L ^ ((L >> 4) & 31u); }

// The passes for index bits hiBit down to loBit (all inside [lo, lo+4)) on a
// thread's 16 registers. The direction is `ascending` for register 0; when
// the stage's k bit lies inside the window, dirMask is that register bit, and
// the registers with it set belong to the neighbouring run: the other way.
template <bool kPairs>
__host__ __device__ inline void mergePassesInRegisters(uint32_t (&rank)[kItems],
                                                       uint32_t (&val)[kItems], int lo, int hiBit,
                                                       int loBit, bool ascending, unsigned dirMask) {
UNROLL
    for (int b = kGroupBits - 1; b >= 0; --b) {
        if (lo + b > hiBit || lo + b < loBit) continue;  // the same for every thread
UNROLL
        for (int q = 0; q < kItems; ++q) {
            if (q & (1 << b)) continue;  // q is the lower index of its pair
            const bool otherRun = (q & dirMask) != 0;
            compareExchange<kPairs>(rank[q], rank[q | (1 << b)], val[q], val[q | (1 << b)],
                                    ascending != otherRun);
        }
    }
}

// Thread t's 16 elements of window lo: from shared memory into registers,
// and back to where they came from.
template <bool kPairs>
__host__ __device__ inline void gatherWindow(const uint32_t* sRank, const uint32_t* sVal, unsigned t,
                                             int lo, uint32_t (&rank)[kItems], uint32_t (&val)[kItems]) {
UNROLL
    for (int q = 0; q < kItems; ++q) {
        const unsigned p = swizzle(tileIndex(t, q, lo));
        rank[q] = sRank[p];
        if constexpr (kPairs) val[q] = sVal[p];
    }
}
template <bool kPairs>
__host__ __device__ inline void scatterWindow(uint32_t* sRank, uint32_t* sVal, unsigned t, int lo,
                                              const uint32_t (&rank)[kItems], const uint32_t (&val)[kItems]) {
UNROLL
    for (int q = 0; q < kItems; ++q) {
        const unsigned p = swizzle(tileIndex(t, q, lo));
        sRank[p] = rank[q];
        if constexpr (kPairs) sVal[p] = val[q];
    }
}

// One thread's turn in one window: gather, run the window's passes, scatter.
template <bool kPairs>
__host__ __device__ inline void windowStep(uint32_t* sRank, uint32_t* sVal, unsigned t, int lo,
                                           int hiBit, int loBit, bool ascending, unsigned dirMask) {
    uint32_t rank[kItems], val[kItems] = {};
    gatherWindow<kPairs>(sRank, sVal, t, lo, rank, val);
    mergePassesInRegisters<kPairs>(rank, val, lo, hiBit, loBit, ascending, dirMask);
    scatterWindow<kPairs>(sRank, sVal, t, lo, rank, val);
}

// The register bit of window lo that stage s's k bit falls on, as a mask
// (0 when bit s lies above the window: then the whole window runs one way).
__host__ __device__ inline unsigned directionMask(int s, int lo) {
    return s - lo < kGroupBits ? 1u << (s - lo) : 0u;
}

// (blockSync and the t0/stride convention are explained just below.)
__host__ __device__ inline void blockSync();

// 12.2's body: the bitonic merge of keys[0, cnt) by one block of cnt
// threads, distances cnt/2 .. 1, a barrier between passes because each pass
// reads what the previous one wrote.
template <class Key>
__host__ __device__ void mergeInOneBlockBody(unsigned t0, unsigned stride, Key* keys, unsigned cnt,
                                             uint32_t flip) {
    for (unsigned dist = cnt / 2; dist >= 1; dist /= 2) {
        for (unsigned tid = t0; tid < cnt; tid += stride)
            if (activeLeft(tid, dist))
                compareExchangeAt<Key, false>(keys, nullptr, tid, tid + dist, true, flip);
        blockSync();
    }
}

// The block bodies below are written for "threads t0, t0 + stride, ... below
// nt": a kernel passes (threadIdx.x, nt), so each thread runs its own t once
// and blockSync() is __syncthreads(); --selftest passes (0, 1) and runs all
// 256 threads in turn on the host. Within one phase threads touch disjoint
// elements, so the host's order gives the same result.
__host__ __device__ inline void blockSync() {
#ifdef __CUDA_ARCH__
    __syncthreads();
#endif
}

// Where tile element L lives in global memory.
// Both are sums over the bits of L, so map(A | B) = map(A) + offset(B) for
// disjoint A and B: a thread computes one 64-bit index and adds a per-
// register offset, instead of redoing the whole map for each of its keys.
struct ContiguousTile {  // a plain tile of 4096 neighbours
    size_t base;
    __host__ __device__ size_t offset(unsigned L) const { return L; }
    __host__ __device__ size_t operator()(unsigned L) const { return base + offset(L); }
};
struct StridedTile {  // 128 rows of 32 neighbours, row r at start + (r << lo)
    size_t start;  // no bit in the columns [0, 5) or the rows [lo, lo + 7)
    int lo;
    __host__ __device__ size_t offset(unsigned L) const {
        return (L & ((1u << kColumnBits) - 1)) + (static_cast<size_t>(L >> kColumnBits) << lo);
    }
    __host__ __device__ size_t operator()(unsigned L) const { return start + offset(L); }
};

// Global <-> shared, as ranks, 16 bytes at a time: a tile is 1024 chunks of
// 4 neighbouring keys (a contiguous tile, and each 32-key row of a strided
// one, is whole chunks, 16-byte aligned because cudaMalloc aligns to 256).
// Thread t takes chunks t, t + nt, t + 2nt, t + 3nt: a warp's uint4 load
// covers 512 contiguous bytes (or 4 whole rows), and all 4 (8 with values)
// loads are issued before the first is used, so 64 (128) bytes per thread
// are in flight at once.
constexpr int kChunk = 4;                      // keys per 16-byte access
constexpr int kChunksPerThread = kItems / kChunk;
static_assert(kChunk * kChunksPerThread == kItems && (1 << kColumnBits) % kChunk == 0,
              "a thread's chunks fill its 16 keys, and a row is whole chunks");

__host__ __device__ inline unsigned chunkStart(unsigned t, int m) { return (t + m * kThreads) * kChunk; }

// 16-byte access: one instruction on the device; memcpy on the host (the
// --selftest replay), where nothing promises the alignment.
__host__ __device__ inline uint4 load4(const void* p) {
#ifdef __CUDA_ARCH__
    return *static_cast<const uint4*>(p);
#else
    uint4 v;
    memcpy(&v, p, sizeof v);
    return v;
#endif
}
__host__ __device__ inline void store4(void* p, uint4 v) {
#ifdef __CUDA_ARCH__
    *static_cast<uint4*>(p) = v;
#else
    memcpy(p, &v, sizeof v);
#endif
}

// The swizzle keeps a chunk (L, a multiple of 4, .. L+3) inside one aligned
// group of 4 words: key i lands at (swizzle(L) & ~3) | (i ^ x), with x =
// swizzle(L) & 3. So one 16-byte shared access moves the chunk, its words
// permuted by x (an XOR is its own inverse: the same call undoes it), and
// the 8 threads of each quarter warp hit 8 different 4-bank groups.
__host__ __device__ inline uint4 xorPermute(uint4 v, unsigned x) {
    if (x & 1u) v = make_uint4(v.y, v.x, v.w, v.z);
    if (x & 2u) v = make_uint4(v.z, v.w, v.x, v.y);
    return v;
}

// The rank map on 4 keys read as raw 32-bit words, and back.
template <class Key>
__host__ __device__ inline uint32_t rankOfWord(uint32_t word, uint32_t flip) {
    Key key;
    memcpy(&key, &word, sizeof key);
    return rankOf(key, flip);
}
template <class Key>
__host__ __device__ inline uint32_t wordOfRank(uint32_t rank, uint32_t flip) {
    const Key key = keyOfRank<Key>(rank, flip);
    uint32_t word;
    memcpy(&word, &key, sizeof word);
    return word;
}
template <class Key>
__host__ __device__ inline uint4 ranksOfWords(uint4 w, uint32_t flip) {
    return make_uint4(rankOfWord<Key>(w.x, flip), rankOfWord<Key>(w.y, flip), rankOfWord<Key>(w.z, flip),
                      rankOfWord<Key>(w.w, flip));
}
template <class Key>
__host__ __device__ inline uint4 wordsOfRanks(uint4 r, uint32_t flip) {
    return make_uint4(wordOfRank<Key>(r.x, flip), wordOfRank<Key>(r.y, flip), wordOfRank<Key>(r.z, flip),
                      wordOfRank<Key>(r.w, flip));
}

// Every map below rises with L, so a tile is all real keys exactly when its
// last element is (block-uniform: the fast path has no per-key test).
template <class Map>
__host__ __device__ inline bool tileIsFull(Map map, size_t n) { return map(kTile - 1) < n; }

// Global -> shared, as ranks; positions past the end become kVirtualRank.
// A full tile moves in 16-byte chunks; the one tile that holds the end of n
// (or is all padding) goes a key at a time, thread t taking t, t + nt, ...
template <class Key, bool kPairs, class Map>
__host__ __device__ inline void loadTile(unsigned t0, unsigned stride, Map map, const Key* keys,
                                         const uint32_t* vals, size_t n, uint32_t flip,
                                         uint32_t* sRank, uint32_t* sVal) {
    if (tileIsFull(map, n)) {
        for (unsigned t = t0; t < kThreads; t += stride) {
            uint4 k[kChunksPerThread], v[kChunksPerThread];
UNROLL
            for (int m = 0; m < kChunksPerThread; ++m) {  // every load before any use
                const size_t g = map(chunkStart(t, m));
                k[m] = load4(keys + g);
                if constexpr (kPairs) v[m] = load4(vals + g);
            }
UNROLL
            for (int m = 0; m < kChunksPerThread; ++m) {
                const unsigned p = swizzle(chunkStart(t, m));
                store4(sRank + (p & ~3u), xorPermute(ranksOfWords<Key>(k[m], flip), p & 3u));
                if constexpr (kPairs) store4(sVal + (p & ~3u), xorPermute(v[m], p & 3u));
            }
        }
        return;
    }
    for (unsigned t = t0; t < kThreads; t += stride)
        for (int m = 0; m < kItems; ++m) {
            const unsigned L = t + m * kThreads;
            const size_t g = map(L);
            sRank[swizzle(L)] = g < n ? rankOf(keys[g], flip) : kVirtualRank;
            if constexpr (kPairs) sVal[swizzle(L)] = g < n ? vals[g] : 0u;
        }
}
template <class Key, bool kPairs, class Map>
__host__ __device__ inline void storeTile(unsigned t0, unsigned stride, Map map, Key* keys,
                                          uint32_t* vals, size_t n, uint32_t flip,
                                          const uint32_t* sRank, const uint32_t* sVal) {
    if (tileIsFull(map, n)) {
        for (unsigned t = t0; t < kThreads; t += stride)
UNROLL
            for (int m = 0; m < kChunksPerThread; ++m) {
                const unsigned p = swizzle(chunkStart(t, m));
                const size_t g = map(chunkStart(t, m));
                store4(keys + g, wordsOfRanks<Key>(xorPermute(load4(sRank + (p & ~3u)), p & 3u), flip));
                if constexpr (kPairs) store4(vals + g, xorPermute(load4(sVal + (p & ~3u)), p & 3u));
            }
        return;
    }
    for (unsigned t = t0; t < kThreads; t += stride)
        for (int m = 0; m < kItems; ++m) {
            const unsigned L = t + m * kThreads;
            const size_t g = map(L);
            if (g >= n) continue;  // padding is never stored
            keys[g] = keyOfRank<Key>(sRank[swizzle(L)], flip);
            if constexpr (kPairs) vals[g] = sVal[swizzle(L)];
        }
}

// Global <-> registers, skipping shared memory: thread t's 16 keys of window
// lo, straight from (to) where they live. In window 2 (tile bits 8..11)
// register q of the 32 lanes of a warp is 32 neighbours, so each of the 16
// loads is one 128-byte line, all 16 in flight before the first compare; in
// window 1 of a strided tile each store is two 64-byte halves of rows.
template <class Key, bool kPairs, class Map>
__host__ __device__ inline void loadWindow(Map map, unsigned t, int lo, const Key* keys,
                                           const uint32_t* vals, size_t n, uint32_t flip,
                                           uint32_t (&rank)[kItems], uint32_t (&val)[kItems]) {
    const size_t g0 = map(tileIndex(t, 0, lo));  // register q: g0 + map.offset(q << lo)
    if (tileIsFull(map, n)) {  // no per-key test
UNROLL
        for (int q = 0; q < kItems; ++q) {
            const size_t g = g0 + map.offset(static_cast<unsigned>(q) << lo);
            rank[q] = rankOf(keys[g], flip);
            if constexpr (kPairs) val[q] = vals[g];
        }
        return;
    }
UNROLL
    for (int q = 0; q < kItems; ++q) {
        const size_t g = g0 + map.offset(static_cast<unsigned>(q) << lo);
        rank[q] = g < n ? rankOf(keys[g], flip) : kVirtualRank;
        if constexpr (kPairs) val[q] = g < n ? vals[g] : 0u;
    }
}
template <class Key, bool kPairs, class Map>
__host__ __device__ inline void storeWindow(Map map, unsigned t, int lo, Key* keys, uint32_t* vals,
                                            size_t n, uint32_t flip, const uint32_t (&rank)[kItems],
                                            const uint32_t (&val)[kItems]) {
    const size_t g0 = map(tileIndex(t, 0, lo));
    const bool full = tileIsFull(map, n);
UNROLL
    for (int q = 0; q < kItems; ++q) {
        const size_t g = g0 + map.offset(static_cast<unsigned>(q) << lo);
        if (!full && g >= n) continue;  // padding is never stored
        keys[g] = keyOfRank<Key>(rank[q], flip);
        if constexpr (kPairs) vals[g] = val[q];
    }
}

// The passes for tile bits hiBit..loBit, window by window, one direction for
// the whole tile (stages larger than the tile).
template <bool kPairs>
__host__ __device__ inline void mergeWindows(unsigned t0, unsigned stride, uint32_t* sRank,
                                             uint32_t* sVal, int hiBit, int loBit, bool ascending) {
UNROLL
    for (int w = kWindows - 1; w >= 0; --w) {
        const int lo = w * kGroupBits;
        if (lo > hiBit || lo + kGroupBits - 1 < loBit) continue;  // no pass here (block-uniform)
        for (unsigned t = t0; t < kThreads; t += stride)
            windowStep<kPairs>(sRank, sVal, t, lo, hiBit, loBit, ascending, 0u);
        blockSync();  // the next window gathers what other threads just wrote
    }
}

// Body of sortTiles: a whole bitonic sort (stages k = 2 .. 2^topStage) of
// one tile, in keys[tile*4096, ...) -> out.
template <class Key, bool kPairs>
__host__ __device__ void sortTileBody(unsigned t0, unsigned stride, uint32_t* sRank, uint32_t* sVal,
                                      const Key* in, const uint32_t* vin, Key* out, uint32_t* vout,
                                      size_t n, size_t tile, int topStage, uint32_t flip) {
    const ContiguousTile map{tile * kTile};
    const size_t last = n - 1;
    loadTile<Key, kPairs>(t0, stride, map, in, vin, n, flip, sRank, sVal);
    blockSync();
    // Stages k = 2..16 have all their distances in window 0: one round trip.
    for (unsigned t = t0; t < kThreads; t += stride) {
        uint32_t rank[kItems], val[kItems] = {};
        gatherWindow<kPairs>(sRank, sVal, t, 0, rank, val);
        const size_t first = map(tileIndex(t, 0, 0));
        for (int s = 1; s <= topStage && s <= kGroupBits; ++s)
            mergePassesInRegisters<kPairs>(rank, val, 0, s - 1, 0, ascendingAt(first, size_t{1} << s, last),
                                           directionMask(s, 0));
        scatterWindow<kPairs>(sRank, sVal, t, 0, rank, val);
    }
    blockSync();
    // Stages k = 32..4096: distances k/2..1, window by window from the top.
    for (int s = kGroupBits + 1; s <= topStage; ++s) {
        const size_t k = size_t{1} << s;
UNROLL
        for (int w = kWindows - 1; w >= 0; --w) {
            const int lo = w * kGroupBits;
            if (lo > s - 1) continue;  // the stage's passes start below this window
            for (unsigned t = t0; t < kThreads; t += stride) {
                const size_t first = map(tileIndex(t, 0, lo));
                windowStep<kPairs>(sRank, sVal, t, lo, s - 1, 0, ascendingAt(first, k, last),
                                   directionMask(s, lo));
            }
            blockSync();
        }
    }
    storeTile<Key, kPairs>(t0, stride, map, out, vout, n, flip, sRank, sVal);
}

// The top window, tile bits 8..11: the one the tile kernels load straight
// from global memory (see loadWindow).
constexpr int kTopWindow = (kWindows - 1) * kGroupBits;

// Body of mergeTiles: stage 2^stage > tile, the passes with distances 2048..1.
// The top window's keys go global -> registers, its 4 passes, -> shared: the
// load's own round trip through shared memory and one barrier are saved.
template <class Key, bool kPairs>
__host__ __device__ void mergeTileBody(unsigned t0, unsigned stride, uint32_t* sRank, uint32_t* sVal,
                                       Key* keys, uint32_t* vals, size_t n, size_t tile, int stage,
                                       uint32_t flip) {
    const ContiguousTile map{tile * kTile};
    const bool ascending = ascendingAt(map.base, size_t{1} << stage, n - 1);
    for (unsigned t = t0; t < kThreads; t += stride) {
        uint32_t rank[kItems], val[kItems] = {};
        loadWindow<Key, kPairs>(map, t, kTopWindow, keys, vals, n, flip, rank, val);
        mergePassesInRegisters<kPairs>(rank, val, kTopWindow, kTileBits - 1, kTopWindow, ascending, 0u);
        scatterWindow<kPairs>(sRank, sVal, t, kTopWindow, rank, val);
    }
    blockSync();
    mergeWindows<kPairs>(t0, stride, sRank, sVal, kTopWindow - 1, 0, ascending);  // ends with a barrier
    storeTile<Key, kPairs>(t0, stride, map, keys, vals, n, flip, sRank, sVal);
}

// First index of fused-shared block b for a row window at bit lo: block bits
// fill global bits 5..lo-1 and lo+7.. (columns below, rows in the gap).
__host__ __device__ inline size_t stridedTileStart(size_t block, int lo) {
    return depositAbove(block << kColumnBits, lo, kRowBits);
}

// Body of mergeAcrossTilesShared: up to 7 global distances, bits hiBit..loBit
// (>= 12), in one pass over memory. The block's tile is 128 rows of 32
// neighbours; row bits are the distance bits, so in shared memory the passes
// are tile bits 11..5: the top window (11..8) and the one below it (7..5).
// Keys go global -> registers (top window) -> shared -> registers (the
// window below) -> global: one round trip through shared memory, not three.
static_assert(kColumnBits >= kTopWindow - kGroupBits,
              "the row bits of a strided tile lie in its top two windows");
template <class Key, bool kPairs>
__host__ __device__ void mergeAcrossTileBody(unsigned t0, unsigned stride, uint32_t* sRank,
                                             uint32_t* sVal, Key* keys, uint32_t* vals, size_t n,
                                             size_t block, int stage, int hiBit, int loBit,
                                             uint32_t flip) {
    const int lo = hiBit - (kRowBits - 1);
    const StridedTile map{stridedTileStart(block, lo), lo};
    if (map.start >= n) return;  // all padding (the whole block leaves together)
    // Bit `stage` lies above the rows and columns, so one direction for all.
    const bool ascending = ascendingAt(map.start, size_t{1} << stage, n - 1);
    const int lowest = kColumnBits + (loBit - lo);  // the lowest tile bit with a pass
    constexpr int kBelow = kTopWindow - kGroupBits;  // the window below the top one
    for (unsigned t = t0; t < kThreads; t += stride) {
        uint32_t rank[kItems], val[kItems] = {};
        loadWindow<Key, kPairs>(map, t, kTopWindow, keys, vals, n, flip, rank, val);
        mergePassesInRegisters<kPairs>(rank, val, kTopWindow, kTileBits - 1, lowest, ascending, 0u);
        scatterWindow<kPairs>(sRank, sVal, t, kTopWindow, rank, val);
    }
    blockSync();  // the window below gathers what other threads just wrote
    for (unsigned t = t0; t < kThreads; t += stride) {
        uint32_t rank[kItems], val[kItems] = {};
        gatherWindow<kPairs>(sRank, sVal, t, kBelow, rank, val);
        mergePassesInRegisters<kPairs>(rank, val, kBelow, kTopWindow - 1, lowest, ascending, 0u);
        storeWindow<Key, kPairs>(map, t, kBelow, keys, vals, n, flip, rank, val);
    }
}

// Body of mergeAcrossTilesInRegisters: one thread, up to 4 global distances
// (bits hiBit..loBit) straight from global memory into 16 registers.
// Neighbouring slots are neighbouring indices, so every load is coalesced.
template <class Key, bool kPairs>
__host__ __device__ void mergeSlotInRegisters(Key* keys, uint32_t* vals, size_t n, size_t slot,
                                              int stage, int hiBit, int loBit, uint32_t flip) {
    const int lo = hiBit - (kGroupBits - 1);
    const size_t first = groupIndex(slot, 0, lo);
    if (first >= n) return;
    uint32_t rank[kItems], val[kItems] = {};
UNROLL
    for (int q = 0; q < kItems; ++q) {
        const size_t g = first | (static_cast<size_t>(q) << lo);
        rank[q] = g < n ? rankOf(keys[g], flip) : kVirtualRank;
        if constexpr (kPairs) val[q] = g < n ? vals[g] : 0u;
    }
    mergePassesInRegisters<kPairs>(rank, val, lo, hiBit, loBit,
                                   ascendingAt(first, size_t{1} << stage, n - 1), 0u);
UNROLL
    for (int q = 0; q < kItems; ++q) {
        const size_t g = first | (static_cast<size_t>(q) << lo);
        if (g >= n) continue;
        keys[g] = keyOfRank<Key>(rank[q], flip);
        if constexpr (kPairs) vals[g] = val[q];
    }
}

// ------------------------------------------------------------- kernels --
// Grid-stride loops over size_t indices: n past 2^31 works.

__device__ inline size_t gridThread() { return static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline size_t gridThreads() { return static_cast<size_t>(gridDim.x) * blockDim.x; }

// 12.1: one compare-exchange split of the bitonic keys[0, 2*dist): the dist
// comparisons are independent, one thread each.
template <class Key>
__global__ void splitOnce(Key* keys, size_t dist, uint32_t flip) {
    for (size_t i = gridThread(); i < dist; i += gridThreads())
        compareExchangeAt<Key, false>(keys, nullptr, i, i + dist, true, flip);
}

// 12.2: the bitonic merge of keys[0, cnt) in one block of cnt threads (cnt
// a power of two, at most 1024); the body is above, shared with --selftest.
template <class Key>
__global__ void mergeInOneBlock(Key* keys, unsigned cnt, uint32_t flip) {
    mergeInOneBlockBody(threadIdx.x, blockDim.x, keys, cnt, flip);
}

// 12.3: one (k, j) pass of the seed's network (n a power of two).
template <class Key, bool kPairs>
__global__ void seedSortPass(Key* keys, uint32_t* vals, size_t n, size_t k, size_t j, uint32_t flip) {
    for (size_t i = gridThread(); i < n; i += gridThreads())
        sortPassAt<true, Key, kPairs>(keys, vals, i, n, k, j, flip);
}

// 12.3 for any n: the same pass with the direction anchored at n-1.
template <class Key, bool kPairs>
__global__ void anySortPass(Key* keys, uint32_t* vals, size_t n, size_t k, size_t j, uint32_t flip) {
    for (size_t i = gridThread(); i < n; i += gridThreads())
        sortPassAt<false, Key, kPairs>(keys, vals, i, n, k, j, flip);
}

// Tiles: every stage up to 4096 in one launch (in -> out), one block per tile.
template <class Key, bool kPairs>
__global__ void __launch_bounds__(kThreads, kMinBlocksSort<kPairs>)
    sortTiles(const Key* in, const uint32_t* vin, Key* out, uint32_t* vout, size_t n, int topStage,
              uint32_t flip) {
    __shared__ __align__(16) uint32_t sRank[kTile];  // 16-byte chunk accesses
    __shared__ __align__(16) uint32_t sVal[kPairs ? kTile : 1];
    sortTileBody<Key, kPairs>(threadIdx.x, kThreads, sRank, sVal, in, vin, out, vout, n,
                              blockIdx.x, topStage, flip);
}

// Tiles: the distances 2048..1 of one stage larger than a tile, in place.
template <class Key, bool kPairs>
__global__ void __launch_bounds__(kThreads, kMinBlocksMerge<kPairs>)
    mergeTiles(Key* keys, uint32_t* vals, size_t n, int stage, uint32_t flip) {
    __shared__ __align__(16) uint32_t sRank[kTile];  // 16-byte chunk accesses
    __shared__ __align__(16) uint32_t sVal[kPairs ? kTile : 1];
    mergeTileBody<Key, kPairs>(threadIdx.x, kThreads, sRank, sVal, keys, vals, n, blockIdx.x, stage,
                               flip);
}

// Fused, registers only: up to 4 global distances per pass, 16 keys a thread.
template <class Key, bool kPairs>
__global__ void mergeAcrossTilesInRegisters(Key* keys, uint32_t* vals, size_t n, size_t slots,
                                            int stage, int hiBit, int loBit, uint32_t flip) {
    for (size_t slot = gridThread(); slot < slots; slot += gridThreads())
        mergeSlotInRegisters<Key, kPairs>(keys, vals, n, slot, stage, hiBit, loBit, flip);
}

// Fused through shared memory: up to 7 global distances per pass.
template <class Key, bool kPairs>
__global__ void __launch_bounds__(kThreads, kMinBlocksMerge<kPairs>)
    mergeAcrossTilesShared(Key* keys, uint32_t* vals, size_t n, int stage, int hiBit, int loBit,
                           uint32_t flip) {
    __shared__ __align__(16) uint32_t sRank[kTile];  // 16-byte chunk accesses
    __shared__ __align__(16) uint32_t sVal[kPairs ? kTile : 1];
    mergeAcrossTileBody<Key, kPairs>(threadIdx.x, kThreads, sRank, sVal, keys, vals, n, blockIdx.x,
                                     stage, hiBit, loBit, flip);
}

// ------------------------------------------------------------- plans --
// A version of the sort is a list of launches (its plan). The same plan
// drives the launcher, the launch and pass counts in the table, and the
// host replay in --selftest.

enum class Step { Copy, SeedPass, AnyPass, SortTiles, MergeTiles, FusedRegisters, FusedShared };

struct Launch {
    Step step;
    int stage;  // k = 2^stage
    int hiBit;  // distances 2^hiBit .. 2^loBit
    int loBit;
};

// Smallest L with 2^L >= n: the stages are k = 2^1 .. 2^L.
inline int ceilLog2(size_t n) {
    int L = 0;
    while (L < 63 && (size_t{1} << L) < n) ++L;
    return L;
}

// One launch per (k, j), after a copy in -> out.
inline std::vector<Launch> passPerDistancePlan(size_t n, Step step) {
    std::vector<Launch> plan;
    if (n == 0) return plan;
    plan.push_back({Step::Copy, 0, 0, 0});
    const int L = ceilLog2(n);
    for (int s = 1; s <= L; ++s)
        for (int b = s - 1; b >= 0; --b) plan.push_back({step, s, b, b});
    return plan;
}

// Tiles first; then per stage past the tile the global distances, `fuse` of
// them per launch (step), and one tile launch for distances 2048..1.
inline std::vector<Launch> tiledPlan(size_t n, Step globalStep, int fuse) {
    std::vector<Launch> plan;
    if (n == 0) return plan;
    const int L = ceilLog2(n);
    plan.push_back({Step::SortTiles, std::min(L, kTileBits), kTileBits - 1, 0});
    for (int s = kTileBits + 1; s <= L; ++s) {
        for (int hi = s - 1; hi >= kTileBits;) {
            const int lo = std::max(hi - fuse + 1, kTileBits);
            plan.push_back({globalStep, s, hi, lo});
            hi = lo - 1;
        }
        plan.push_back({Step::MergeTiles, s, kTileBits - 1, 0});
    }
    return plan;
}

struct Version {
    const char* name;
    std::vector<Launch> (*plan)(size_t n);
    bool powerOfTwoOnly;
};

// The variant table: one row per step of the lesson, simplest first.
inline const std::vector<Version>& versions() {
    static const std::vector<Version> table = {
        {"12.3 seed: (i&k)==0, 1 launch per (k,j)",
         [](size_t n) { return passPerDistancePlan(n, Step::SeedPass); }, true},
        {"any n: ((i^(n-1))&k)==0, 1 per (k,j)",
         [](size_t n) { return passPerDistancePlan(n, Step::AnyPass); }, false},
        {"+ shared tiles: j < 4096 in shared",
         [](size_t n) { return tiledPlan(n, Step::AnyPass, 1); }, false},
        {"+ fused: 4 global j/pass in registers",
         [](size_t n) { return tiledPlan(n, Step::FusedRegisters, kGroupBits); }, false},
        {"+ fused: 7 global j/pass via shared",
         [](size_t n) { return tiledPlan(n, Step::FusedShared, kRowBits); }, false},
    };
    return table;
}

inline bool isPowerOfTwo(size_t n) { return n != 0 && (n & (n - 1)) == 0; }
inline bool versionAccepts(const Version& v, size_t n) { return !v.powerOfTwoOnly || n <= 1 || isPowerOfTwo(n); }

// Every launch, the first (copy) one included, reads and writes every key once.
inline size_t passesOverMemory(const std::vector<Launch>& plan) { return plan.size(); }

// ----------------------------------------------------------- launcher --

inline unsigned gridFor(size_t work, unsigned threads) {
    const size_t blocks = (work + threads - 1) / threads;
    return static_cast<unsigned>(std::min<size_t>(std::max<size_t>(blocks, 1), size_t{1} << 20));
}

// Sorts in[0, n) into out (values vin -> vout in key-value mode); only
// enqueues work, so it can be timed.
template <class Key, bool kPairs>
void runPlan(const std::vector<Launch>& plan, const Key* in, const uint32_t* vin, Key* out,
             uint32_t* vout, size_t n, uint32_t flip) {
    const size_t padded = size_t{1} << ceilLog2(n);  // the network's power of two
    for (const Launch& x : plan) {
        const size_t k = size_t{1} << x.stage, j = size_t{1} << x.hiBit;
        switch (x.step) {
            case Step::Copy:
                CUDA_CHECK(cudaMemcpyAsync(out, in, n * sizeof(Key), cudaMemcpyDeviceToDevice));
                if constexpr (kPairs)
                    CUDA_CHECK(cudaMemcpyAsync(vout, vin, n * sizeof(uint32_t), cudaMemcpyDeviceToDevice));
                break;
            case Step::SeedPass:
                seedSortPass<Key, kPairs><<<gridFor(n, kStepThreads), kStepThreads>>>(out, vout, n, k, j, flip);
                CUDA_CHECK_LAUNCH("seedSortPass");
                break;
            case Step::AnyPass:
                anySortPass<Key, kPairs><<<gridFor(n, kStepThreads), kStepThreads>>>(out, vout, n, k, j, flip);
                CUDA_CHECK_LAUNCH("anySortPass");
                break;
            case Step::SortTiles:
                sortTiles<Key, kPairs><<<static_cast<unsigned>((n + kTile - 1) / kTile), kThreads>>>(
                    in, vin, out, vout, n, x.stage, flip);
                CUDA_CHECK_LAUNCH("sortTiles");
                break;
            case Step::MergeTiles:
                mergeTiles<Key, kPairs><<<static_cast<unsigned>((n + kTile - 1) / kTile), kThreads>>>(
                    out, vout, n, x.stage, flip);
                CUDA_CHECK_LAUNCH("mergeTiles");
                break;
            case Step::FusedRegisters: {
                const size_t slots = padded / kItems;
                mergeAcrossTilesInRegisters<Key, kPairs><<<gridFor(slots, kThreads), kThreads>>>(
                    out, vout, n, slots, x.stage, x.hiBit, x.loBit, flip);
                CUDA_CHECK_LAUNCH("mergeAcrossTilesInRegisters");
                break;
            }
            case Step::FusedShared:
                mergeAcrossTilesShared<Key, kPairs><<<static_cast<unsigned>(padded / kTile), kThreads>>>(
                    out, vout, n, x.stage, x.hiBit, x.loBit, flip);
                CUDA_CHECK_LAUNCH("mergeAcrossTilesShared");
                break;
        }
    }
}

// The same plan on the host, with the same bodies (--selftest). keys and
// vals are sorted in place; the copy is a no-op here.
template <class Key, bool kPairs>
void replayPlanOnHost(const std::vector<Launch>& plan, std::vector<Key>& keys,
                      std::vector<uint32_t>& vals, uint32_t flip) {
    const size_t n = keys.size();
    const size_t padded = size_t{1} << ceilLog2(n);
    std::vector<uint32_t> sRank(kTile), sVal(kTile);
    Key* k0 = keys.data();
    uint32_t* v0 = kPairs ? vals.data() : nullptr;
    for (const Launch& x : plan) {
        const size_t k = size_t{1} << x.stage, j = size_t{1} << x.hiBit;
        switch (x.step) {
            case Step::Copy: break;
            case Step::SeedPass:
                for (size_t i = 0; i < n; ++i) sortPassAt<true, Key, kPairs>(k0, v0, i, n, k, j, flip);
                break;
            case Step::AnyPass:
                for (size_t i = 0; i < n; ++i) sortPassAt<false, Key, kPairs>(k0, v0, i, n, k, j, flip);
                break;
            case Step::SortTiles:
                for (size_t tile = 0; tile * kTile < n; ++tile)
                    sortTileBody<Key, kPairs>(0, 1, sRank.data(), sVal.data(), k0, v0, k0, v0, n, tile,
                                              x.stage, flip);
                break;
            case Step::MergeTiles:
                for (size_t tile = 0; tile * kTile < n; ++tile)
                    mergeTileBody<Key, kPairs>(0, 1, sRank.data(), sVal.data(), k0, v0, n, tile,
                                               x.stage, flip);
                break;
            case Step::FusedRegisters:
                for (size_t slot = 0; slot < padded / kItems; ++slot)
                    mergeSlotInRegisters<Key, kPairs>(k0, v0, n, slot, x.stage, x.hiBit, x.loBit, flip);
                break;
            case Step::FusedShared:
                for (size_t block = 0; block < padded / kTile; ++block)
                    mergeAcrossTileBody<Key, kPairs>(0, 1, sRank.data(), sVal.data(), k0, v0, n, block,
                                                     x.stage, x.hiBit, x.loBit, flip);
                break;
        }
    }
}

// ----------------------------------------------------- host reference --

// The stated order, written without the bit transform: numeric <, and for
// floats -0.0 before +0.0. NaN is refused before any sort.
template <class Key>
bool keyLess(Key a, Key b) {
    if constexpr (std::is_floating_point<Key>::value)
        return a < b || (a == b && std::signbit(a) && !std::signbit(b));
    else
        return a < b;
}

template <class Key>
std::vector<Key> referenceSort(std::vector<Key> keys, bool descending) {
    if (descending)
        std::sort(keys.begin(), keys.end(), [](Key a, Key b) { return keyLess(b, a); });
    else
        std::sort(keys.begin(), keys.end(), [](Key a, Key b) { return keyLess(a, b); });
    return keys;
}

template <class Key>
const char* keyName() {
    if constexpr (std::is_same<Key, float>::value) return "float";
    else if constexpr (std::is_same<Key, int32_t>::value) return "int32";
    else return "uint32";
}

// The comparator CUB's merge sort gets: the same total order as ours.
template <class Key>
struct RankLess {
    uint32_t flip;
    __host__ __device__ bool operator()(const Key& a, const Key& b) const {
        return rankOf(a, flip) < rankOf(b, flip);
    }
};

// ---------------------------------------------------------- selftest --
// Host only: no CUDA call anywhere below until runSelftest returns.

template <class Key>
bool sortedInOrder(const std::vector<Key>& keys, bool descending) {
    for (size_t i = 1; i < keys.size(); ++i)
        if (descending ? keyLess(keys[i - 1], keys[i]) : keyLess(keys[i], keys[i - 1])) return false;
    return true;
}

// The (stage, distance bit) sequence a plan performs, in order.
inline std::vector<std::pair<int, int>> distancesOf(const std::vector<Launch>& plan) {
    std::vector<std::pair<int, int>> out;
    for (const Launch& x : plan) {
        if (x.step == Step::Copy) continue;
        if (x.step == Step::SortTiles) {
            for (int s = 1; s <= x.stage; ++s)
                for (int b = s - 1; b >= 0; --b) out.push_back({s, b});
            continue;
        }
        for (int b = x.hiBit; b >= x.loBit; --b) out.push_back({x.stage, b});
    }
    return out;
}

template <class Key>
void selftestKeyOrder(const std::vector<Key>& samples) {
    for (Key a : samples) {
        expect(sameBits(keyFromOrderedBits<Key>(orderedBits(a)), a),
               std::string(keyName<Key>()) + " rank round trip of " + formatKey(a));
        for (Key b : samples)
            expect(keyLess(a, b) == (orderedBits(a) < orderedBits(b)),
                   std::string(keyName<Key>()) + " rank order of " + formatKey(a) + " and " + formatKey(b));
    }
}

// Runs a version's plan on the host and compares with std::sort (keys) and
// the permutation check (values).
template <class Key>
void selftestPlan(const Version& v, size_t n, bool descending, SortShape shape) {
    std::vector<Key> keys = makeSortInput<Key>(shape, n, 1000 + n);
    const std::vector<Key> input = keys;
    std::vector<uint32_t> vals(n);
    std::iota(vals.begin(), vals.end(), 0u);
    replayPlanOnHost<Key, true>(v.plan(n), keys, vals, descending ? ~0u : 0u);
    const std::vector<Key> want = referenceSort(input, descending);
    std::vector<size_t> sources(vals.begin(), vals.end());
    const std::string what = std::string("host replay of '") + v.name + "', n = " + std::to_string(n) +
                             (descending ? ", descending" : "");
    expect(compareExact(what.c_str(), keys.data(), want.data(), n) &&
               checkPermutation(what.c_str(), keys.data(), sources.data(), input.data(), n),
           what + ": the network does not sort");
}

int runSelftest() {
    // The order of the keys.
    selftestKeyOrder<uint32_t>({0u, 1u, 2u, 0x7FFFFFFFu, 0x80000000u, 0xFFFFFFFEu, 0xFFFFFFFFu});
    selftestKeyOrder<int32_t>({INT32_MIN, INT32_MIN + 1, -2, -1, 0, 1, INT32_MAX});
    selftestKeyOrder<float>({-INFINITY, -3.5e38f, -1.0f, -1e-45f, -0.0f, 0.0f, 1e-45f, 1.0f, 3.5e38f,
                             INFINITY});

    // Index maps: the swizzle and every register window are bijections of the tile.
    {
        std::vector<int> seen(kTile, 0);
        bool ok = true;
        for (unsigned L = 0; L < kTile; ++L) ++seen[swizzle(L)];
        expect(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }),
               "swizzle is a permutation of the tile");
        // 16-byte chunks: key i of the chunk at L lands where xorPermute puts it.
        bool chunksOk = true;
        for (unsigned L = 0; L < kTile; L += kChunk) {
            const unsigned p = swizzle(L);
            uint32_t words[kChunk];
            const uint4 moved = xorPermute(make_uint4(0, 1, 2, 3), p & 3u);
            memcpy(words, &moved, sizeof moved);
            for (unsigned i = 0; i < kChunk; ++i) {
                const unsigned at = swizzle(L + i) - (p & ~3u);
                chunksOk = chunksOk && at < kChunk && words[at] == i;
            }
        }
        expect(chunksOk, "a 16-byte chunk stays in one swizzled group of 4, permuted by xorPermute");
        for (int lo = 0; lo + kGroupBits <= kTileBits; ++lo) {
            std::fill(seen.begin(), seen.end(), 0);
            for (unsigned t = 0; t < kThreads; ++t)
                for (unsigned q = 0; q < kItems; ++q) {
                    ++seen[tileIndex(t, q, lo)];
                    ok = ok && tileIndex(t, q, lo) == groupIndex(t, q, lo);
                }
            expect(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }) && ok,
                   "register window at bit " + std::to_string(lo) + " covers the tile once");
        }
    }

    // Across blocks: the fused passes' blocks and slots cover a 2^15 network once.
    {
        const size_t N = size_t{1} << 15;
        for (int lo = kColumnBits; lo + kRowBits <= 15; ++lo) {
            std::vector<int> seen(N, 0);
            for (size_t block = 0; block < N / kTile; ++block)
                for (unsigned L = 0; L < kTile; ++L) ++seen[StridedTile{stridedTileStart(block, lo), lo}(L)];
            expect(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }),
                   "fused shared blocks with rows at bit " + std::to_string(lo) + " cover the array once");
        }
        for (int lo = kTileBits - kGroupBits + 1; lo + kGroupBits <= 15; ++lo) {
            std::vector<int> seen(N, 0);
            for (size_t slot = 0; slot < N / kItems; ++slot)
                for (unsigned q = 0; q < kItems; ++q) ++seen[groupIndex(slot, q, lo)];
            expect(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }),
                   "fused register slots at bit " + std::to_string(lo) + " cover the array once");
        }
    }

    // 12.1 on the seed's example: the split at distance 4 gives 2 4 5 3 | 9 7 6 8.
    {
        std::vector<int32_t> a = {2, 4, 6, 8, 9, 7, 5, 3};
        expect(isBitonic(a.data(), a.size()), "12.1: the seed's input is bitonic");
        for (size_t i = 0; i < 4; ++i) compareExchangeAt<int32_t, false>(a.data(), nullptr, i, i + 4, true, 0);
        expect(a == std::vector<int32_t>({2, 4, 5, 3, 9, 7, 6, 8}), "12.1: split of the seed's example");
        expect(isBitonic(a.data(), 4) && isBitonic(a.data() + 4, 4), "12.1: both halves stay bitonic");
        const std::vector<int32_t> valley = {8, 6, 4, 2, 3, 5, 7, 9}, notBitonic = {1, 3, 1, 2};
        expect(isBitonic(valley.data(), valley.size()), "12.1: a valley is bitonic");
        expect(!isBitonic(notBitonic.data(), notBitonic.size()), "12.1: 1 3 1 2 is not bitonic");
    }

    // 12.2: the single-block merge, pass by pass, with the kernel's active condition.
    {
        std::vector<int32_t> a = {2, 4, 6, 8, 9, 7, 5, 3};
        mergeInOneBlockBody(0, 1, a.data(), static_cast<unsigned>(a.size()), 0);
        expect(a == std::vector<int32_t>({2, 3, 4, 5, 6, 7, 8, 9}),
               "12.2: merge in one block leaves the seed's example unsorted (active condition)");
    }

    // Pass counts: one launch per (k, j) is sum over k of log2(k) = L(L+1)/2,
    // and every fused plan performs the same (k, j) sequence in the same order.
    for (int L = 0; L <= 40; ++L) {
        const size_t n = size_t{1} << L;
        const auto naive = distancesOf(versions()[0].plan(n));
        expect(naive.size() == static_cast<size_t>(L) * (L + 1) / 2,
               "pass count for n = 2^" + std::to_string(L) + " is sum of log2(k)");
        for (const Version& v : versions())
            expect(distancesOf(v.plan(n)) == naive && distancesOf(v.plan(n + 1 + n / 3)) ==
                                                           distancesOf(versions()[0].plan(n + 1 + n / 3)),
                   std::string("plan of '") + v.name + "' covers every (k, j) once, in order");
    }

    // The 0-1 principle: a comparator network sorts every input if and only
    // if it sorts every 0-1 input. All 2^n of them, n = 1..16, both
    // directions, for the networks of 12.3 and of any n. The tile versions'
    // plans list the same (k, j) sequence (checked above, which checks the
    // plans, not the tile bodies); a replay costs a whole 4096-key tile per
    // input, so they get every 0-1 input up to n = 8, and their bodies are
    // exercised on many tiles by the random replays below.
    for (size_t n = 1; n <= 16; ++n)
        for (const Version& v : versions()) {
            const bool tiled = v.plan(n)[0].step != Step::Copy;
            if (!versionAccepts(v, n) || (tiled && n > 8)) continue;
            const auto plan = v.plan(n);
            bool ok = true;
            for (uint32_t bits = 0; bits < (1u << n) && ok; ++bits)
                for (int d = 0; d < 2 && ok; ++d) {
                    std::vector<uint32_t> keys(n), vals(n);
                    for (size_t i = 0; i < n; ++i) keys[i] = (bits >> i) & 1u;
                    replayPlanOnHost<uint32_t, false>(plan, keys, vals, d ? ~0u : 0u);
                    ok = sortedInOrder(keys, d == 1);
                }
            expect(ok, std::string("0-1 principle: '") + v.name + "' network does not sort every 0-1 input of n = " +
                           std::to_string(n));
        }

    // The seed's 12.3 example: a[i] = (i*13+5) % 16 sorts in 10 passes.
    {
        std::vector<int32_t> a(16);
        for (int i = 0; i < 16; ++i) a[i] = (i * 13 + 5) % 16;
        std::vector<uint32_t> vals(16);
        const auto plan = versions()[0].plan(16);
        replayPlanOnHost<int32_t, false>(plan, a, vals, 0);
        std::vector<int32_t> want(16);
        std::iota(want.begin(), want.end(), 0);
        expect(a == want, "12.3: the seed's 16-element example");
        expect(distancesOf(plan).size() == 10, "12.3: 16 keys take 1+2+3+4 = 10 passes");
    }

    // Random inputs of non-power-of-two lengths, every version that takes
    // them, both directions, key-value (values = original index).
    for (size_t n : {size_t{3}, size_t{5}, size_t{100}, size_t{1000}, size_t{4095}, size_t{4097},
                     size_t{12345}, size_t{70001}})
        for (const Version& v : versions())
            for (int d = 0; d < 2; ++d) {
                const bool onePassPerDistance = v.plan(n)[0].step == Step::Copy;
                if (!versionAccepts(v, n) || (onePassPerDistance && n > 20000))
                    continue;  // slow to replay at 70001; 12345 covers them
                selftestPlan<uint32_t>(v, n, d == 1, SortShape::ManyTies);
            }
    // Two fused groups in one stage (needs n > 2^19 for 7 distances per pass).
    selftestPlan<float>(versions()[4], (size_t{1} << 19) + 5, false, SortShape::Uniform);
    selftestPlan<int32_t>(versions()[3], 70001, true, SortShape::FewDistinct);
    selftestPlan<float>(versions()[4], 4097, true, SortShape::SignedZeros);

    std::printf("selftest covered: key order, index maps, 12.1 split, 12.2 merge, 12.3 example, pass counts, "
                "0-1 principle (n <= 16; tile versions n <= 8), random non-power-of-two inputs up to 2^19+5\n");
    return selftestVerdict();
}

// ------------------------------------------------------- GPU checks --

struct Options {
    size_t n = size_t{1} << 24;
    std::string key = "uint32";
    bool descending = false;
    bool pairs = false;
    bool timing = true;
    bool quick = false;
    bool nGiven = false;
    std::string csv;
};

// Device buffers for one input: keys and values in and out.
template <class Key>
struct SortBuffers {
    DeviceBuffer<Key> in, out;
    DeviceBuffer<uint32_t> vin, vout;
    SortBuffers(size_t n, bool pairs) : in(n), out(n), vin(pairs ? n : 0), vout(pairs ? n : 0) {}
};

// Checks out (and vout) after a run: keys exactly against the reference,
// values as a permutation whose keys match the input's.
template <class Key>
bool checkOutput(const std::string& what, const SortBuffers<Key>& b, const std::vector<Key>& input,
                 const std::vector<Key>& want, bool pairs) {
    const size_t n = input.size();
    std::vector<Key> got(n);
    b.out.download(got.data(), n);
    if (!compareExact(what.c_str(), got.data(), want.data(), n)) return false;
    if (!pairs) return true;
    std::vector<uint32_t> vals(n);
    b.vout.download(vals.data(), n);
    std::vector<size_t> sources(n);
    for (size_t i = 0; i < n; ++i) sources[i] = vals[i] == 0xFFFFFFFFu ? SIZE_MAX : vals[i];
    return checkPermutation(what.c_str(), got.data(), sources.data(), input.data(), n);
}

// Runs one version on b.in -> b.out with the output poisoned first, and checks it.
template <class Key>
bool runAndCheck(const Version& v, SortBuffers<Key>& b, const std::vector<Key>& input,
                 const std::vector<Key>& want, bool pairs, uint32_t flip, const std::string& what) {
    b.out.poison();
    b.vout.poison();
    const auto plan = v.plan(input.size());
    if (pairs) runPlan<Key, true>(plan, b.in.get(), b.vin.get(), b.out.get(), b.vout.get(), input.size(), flip);
    else runPlan<Key, false>(plan, b.in.get(), nullptr, b.out.get(), nullptr, input.size(), flip);
    CUDA_CHECK(cudaDeviceSynchronize());
    return checkOutput(what, b, input, want, pairs);
}

template <class Key>
void uploadInput(SortBuffers<Key>& b, const std::vector<Key>& input, bool pairs) {
    b.in.upload(input.data(), input.size());
    if (pairs) {
        std::vector<uint32_t> index(input.size());
        std::iota(index.begin(), index.end(), 0u);
        b.vin.upload(index.data(), index.size());
    }
}

// 12.1 and 12.2 on the GPU: a split of bitonic inputs, then a whole merge in
// one block. Inputs: the seed's example and organ pipes (rise, then fall).
template <class Key>
bool checkSeedSteps(bool descending, bool verbose) {
    const uint32_t flip = descending ? ~0u : 0u;
    bool ok = true;
    std::vector<std::vector<Key>> inputs;
    {
        std::vector<Key> seed;
        for (int v : {2, 4, 6, 8, 9, 7, 5, 3}) seed.push_back(keyFromInt<Key>(v));
        inputs.push_back(seed);
    }
    for (size_t cnt = 2; cnt <= 1024; cnt *= 2) inputs.push_back(makeSortInput<Key>(SortShape::OrganPipe, cnt, cnt));
    inputs.push_back(makeSortInput<Key>(SortShape::OrganPipe, size_t{1} << 21, 21));  // a split only
    for (const auto& input : inputs) {
        const size_t cnt = input.size(), dist = cnt / 2;
        const std::string size = std::string(keyName<Key>()) + " n=" + std::to_string(cnt) +
                                 (descending ? " descending" : "");
        DeviceBuffer<Key> keys(cnt);
        // 12.1: one split, against the seed's CPU loop; halves bitonic and ordered.
        std::vector<Key> want = input, got(cnt);
        for (size_t i = 0; i < dist; ++i) compareExchangeAt<Key, false>(want.data(), nullptr, i, i + dist, true, flip);
        keys.upload(input.data(), cnt);
        splitOnce<Key><<<gridFor(dist, kStepThreads), kStepThreads>>>(keys.get(), dist, flip);
        CUDA_CHECK_LAUNCH("splitOnce");
        keys.download(got.data(), cnt);
        const std::string what1 = "12.1 split (" + size + ")";
        bool splitOk = compareExact(what1.c_str(), got.data(), want.data(), cnt) &&
                       isBitonic(got.data(), dist) && isBitonic(got.data() + dist, dist);
        uint32_t leftMax = 0, rightMin = kVirtualRank;  // every left key goes before every right key
        for (size_t i = 0; i < dist; ++i) leftMax = std::max(leftMax, rankOf(got[i], flip));
        for (size_t r = dist; r < cnt; ++r) rightMin = std::min(rightMin, rankOf(got[r], flip));
        splitOk = splitOk && leftMax <= rightMin;
        if (!splitOk) std::printf("%s: FAILED (halves not bitonic or not ordered)\n", what1.c_str());
        ok = ok && splitOk;
        // 12.2: the merge of a bitonic input in one block, against std::sort.
        if (cnt > 1024) continue;
        keys.upload(input.data(), cnt);
        mergeInOneBlock<Key><<<1, static_cast<unsigned>(cnt)>>>(keys.get(), static_cast<unsigned>(cnt), flip);
        CUDA_CHECK_LAUNCH("mergeInOneBlock");
        keys.download(got.data(), cnt);
        const std::vector<Key> sorted = referenceSort(input, descending);
        const std::string what2 = "12.2 merge in one block (" + size + ")";
        ok = compareExact(what2.c_str(), got.data(), sorted.data(), cnt) && ok;
        if (verbose && &input == &inputs.front()) {  // the seed's example only
            std::printf("12.2 merge in one block of the seed's example 2 4 6 8 9 7 5 3 ->");
            for (const Key& k : got) std::printf(" %s", formatKey(k).c_str());
            std::printf("\n");
        }
    }
    return ok;
}

// ------------------------------------------------------------ verify --

template <class Key>
bool verifyKeyType(const Options& opt) {
    bool ok = true;
    for (int d = 0; d < 2; ++d) ok = checkSeedSteps<Key>(d == 1, false) && ok;
    std::vector<SortCase> cases = adversarialSortCases();
    for (size_t n : {size_t{4}, size_t{16}, size_t{kTile - 1}, size_t{kTile}, size_t{kTile + 1},
                     size_t{2 * kTile - 1}, size_t{8193}, size_t{1} << 16, size_t{(1u << 21) + 1}})
        cases.push_back({SortShape::Uniform, n});
    for (size_t n : {size_t{4096}, size_t{8192}, size_t{1} << 20})
        cases.push_back({SortShape::SignedZeros, n});
    if (opt.nGiven) cases = {{SortShape::Uniform, opt.n}, {SortShape::FewDistinct, opt.n}};
    size_t runs = 0;
    for (const SortCase& c : cases) {
        const std::vector<Key> input = makeSortInput<Key>(c.shape, c.n, 7 + c.n);
        for (int d = 0; d < 2; ++d) {
            const bool descending = d == 1;
            if (opt.nGiven && descending != opt.descending) continue;
            const std::vector<Key> want = referenceSort(input, descending);
            for (int p = 0; p < 2; ++p) {
                const bool pairs = p == 1;
                SortBuffers<Key> b(c.n, pairs);
                uploadInput(b, input, pairs);
                for (const Version& v : versions()) {
                    if (!versionAccepts(v, c.n)) continue;
                    const std::string what = std::string(v.name) + " [" + keyName<Key>() + " " +
                                             sortShapeName(c.shape) + " n=" + std::to_string(c.n) +
                                             (descending ? " descending" : "") + (pairs ? " pairs" : "") + "]";
                    const bool good = runAndCheck(v, b, input, want, pairs, descending ? ~0u : 0u, what);
                    ok = good && ok;
                    ++runs;
                }
            }
        }
    }
    const char* directions = !opt.nGiven ? "both directions" : opt.descending ? "descending" : "ascending";
    std::printf("verify %s: %zu sorts on %zu inputs (%s, keys and key-value): %s\n", keyName<Key>(), runs,
                cases.size(), directions, ok ? "all exact" : "FAILED");
    return ok;
}

int runVerify(const Options& opt) {
    printDeviceReport();
    bool ok = true;
    if (!opt.nGiven || opt.key == "uint32") ok = verifyKeyType<uint32_t>(opt) && ok;
    if (!opt.nGiven || opt.key == "int32") ok = verifyKeyType<int32_t>(opt) && ok;
    if (!opt.nGiven || opt.key == "float") ok = verifyKeyType<float>(opt) && ok;
    std::printf("verify: %s\n", ok ? "PASS" : "FAIL");
    return ok ? kExitPass : kExitCheckFailed;
}

// ------------------------------------------------------------- the run --

// Same order as ours except that CUB's radix sort holds -0.0 and +0.0 equal
// (stable, input order): its row's check lets those two swap, nothing else.
template <class Key>
bool compareRadixRow(const char* what, const Key* got, const Key* want, size_t n) {
    for (size_t p = 0; p < n; ++p) {
        if (sameBits(got[p], want[p])) continue;
        if constexpr (std::is_floating_point<Key>::value)
            if (got[p] == 0 && want[p] == 0) continue;
        return compareExact(what, got + p, want + p, 1, p);
    }
    return true;
}

template <class Key>
int runLesson(const Options& opt) {
    const size_t n = opt.n;
    const bool pairs = opt.pairs;
    const uint32_t flip = opt.descending ? ~0u : 0u;
    const size_t valueBytes = pairs ? sizeof(uint32_t) : 0;
    requireDeviceMemory(n * (sizeof(Key) + valueBytes) * 4 + (size_t{64} << 20), "the sort's buffers and CUB's scratch");

    CsvFile csv;
    csv.open(opt.csv, "bitonic_sort");

    // The seed's steps first.
    bool ok = checkSeedSteps<Key>(opt.descending, true);
    std::printf("12.1 split and 12.2 single-block merge on bitonic inputs up to 1024 keys: %s\n",
                ok ? "exact" : "FAILED");

    const std::vector<Key> input = makeSortInput<Key>(SortShape::Uniform, n, 12);  // never NaN (common/inputs.hpp)
    const std::vector<Key> want = referenceSort(input, opt.descending);
    SortBuffers<Key> b(n, pairs);
    uploadInput(b, input, pairs);
    const std::string label = std::string(keyName<Key>()) + " n=" + std::to_string(n) +
                              (opt.descending ? " descending" : "") + (pairs ? " pairs" : "");

    // Every version and both CUB rows are checked before anything is timed.
    std::vector<const Version*> rows;
    for (const Version& v : versions()) {
        if (!versionAccepts(v, n)) {
            std::printf("%-44s skipped: n = %zu is not a power of two\n", v.name, n);
            continue;
        }
        const bool good = runAndCheck(v, b, input, want, pairs, flip, std::string(v.name) + " [" + label + "]");
        std::printf("%-44s %s\n", v.name, good ? "exact" : "FAILED");
        ok = ok && good;
        rows.push_back(&v);
    }

    // CUB: merge sort with our order, radix sort (the library a user would call).
    size_t mergeBytes = 0, radixBytes = 0;
    const int64_t items = static_cast<int64_t>(n);
    auto cubMerge = [&](void* temp, size_t& bytes) {
        if (pairs)
            CUDA_CHECK(cub::DeviceMergeSort::SortPairsCopy(temp, bytes, b.in.get(), b.vin.get(), b.out.get(),
                                                           b.vout.get(), items, RankLess<Key>{flip}));
        else
            CUDA_CHECK(cub::DeviceMergeSort::SortKeysCopy(temp, bytes, b.in.get(), b.out.get(), items,
                                                          RankLess<Key>{flip}));
    };
    auto cubRadix = [&](void* temp, size_t& bytes) {
        if (pairs && opt.descending)
            CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(temp, bytes, b.in.get(), b.out.get(),
                                                                 b.vin.get(), b.vout.get(), items));
        else if (pairs)
            CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, bytes, b.in.get(), b.out.get(), b.vin.get(),
                                                       b.vout.get(), items));
        else if (opt.descending)
            CUDA_CHECK(cub::DeviceRadixSort::SortKeysDescending(temp, bytes, b.in.get(), b.out.get(), items));
        else
            CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, bytes, b.in.get(), b.out.get(), items));
    };
    cubMerge(nullptr, mergeBytes);
    cubRadix(nullptr, radixBytes);
    DeviceBuffer<uint8_t> temp(std::max<size_t>({mergeBytes, radixBytes, 1}));
    const bool cubOk = n > 0;
    if (cubOk) {
        b.out.poison();
        b.vout.poison();
        cubMerge(temp.get(), mergeBytes);
        CUDA_CHECK(cudaDeviceSynchronize());
        const bool good = checkOutput("cub::DeviceMergeSort::SortKeysCopy [" + label + "]", b, input, want, pairs);
        std::printf("%-44s %s\n", "cub::DeviceMergeSort", good ? "exact" : "FAILED");
        ok = ok && good;
        b.out.poison();
        b.vout.poison();
        cubRadix(temp.get(), radixBytes);
        CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<Key> got(n);
        b.out.download(got.data(), n);
        bool radixGood = compareRadixRow("cub::DeviceRadixSort", got.data(), want.data(), n);
        if (pairs && radixGood) {
            std::vector<uint32_t> vals(n);
            b.vout.download(vals.data(), n);
            const std::vector<size_t> sources(vals.begin(), vals.end());
            radixGood = checkPermutation("cub::DeviceRadixSort", got.data(), sources.data(), input.data(), n);
        }
        std::printf("%-44s %s\n", "cub::DeviceRadixSort", radixGood ? "exact (+-0 may swap)" : "FAILED");
        ok = ok && radixGood;
    }
    if (!ok) {
        std::printf("a check failed: nothing is timed\n");
        return kExitCheckFailed;
    }

    // Pass accounting: every launch reads and writes all keys once.
    const size_t onePerDistance = passesOverMemory(versions()[1].plan(n));
    std::printf("\npasses over global memory, n = %zu: a copy + one per (k, j) = 1 + sum of log2(k) = %zu\n",
                n, onePerDistance);
    for (const Version* v : rows) {
        const size_t passes = passesOverMemory(v->plan(n));
        std::printf("  %-44s %4zu passes, %4zu saved\n", v->name, passes,
                    onePerDistance - std::min(onePerDistance, passes));
    }
    if (!opt.timing || n == 0) {
        std::printf("\n--no-timing: checks only\n");
        return kExitPass;
    }

    const TimingPlan plan = opt.quick ? TimingPlan{1, 5} : TimingPlan{3, 15};
    const double keyBytes = static_cast<double>(n) * (sizeof(Key) + valueBytes);
    const double copyMs = medianMs([&] {
        CUDA_CHECK(cudaMemcpyAsync(b.out.get(), b.in.get(), n * sizeof(Key), cudaMemcpyDeviceToDevice));
        if (pairs) CUDA_CHECK(cudaMemcpyAsync(b.vout.get(), b.vin.get(), n * sizeof(uint32_t), cudaMemcpyDeviceToDevice));
    }, plan);
    const double copyGBs = gbPerSecond(2 * keyBytes, copyMs);
    const double mergeMs = medianMs([&] { cubMerge(temp.get(), mergeBytes); }, plan);
    const double radixMs = medianMs([&] { cubRadix(temp.get(), radixBytes); }, plan);

    Table table("bitonic sort, " + label + " (device copy " + fixed(copyGBs, 0) + " GB/s)",
                {{"version", 44, true}, {"launches", 8}, {"passes", 6}, {"ms", 9}, {"Gkeys/s", 8},
                 {"GB/s/pass", 9}, {"x copy", 6}, {"x merge", 7}, {"x radix", 7}},
                &csv);
    auto row = [&](const std::string& name, std::string launches, size_t passes, double ms) {
        const double passGBs = passes ? gbPerSecond(2 * keyBytes * passes, ms) : 0.0;
        table.row({name, launches, passes ? std::to_string(passes) : "-", fixed(ms, 3),
                   fixed(n / (ms * 1e6), 2), passes ? fixed(passGBs, 0) : "-",
                   passes ? fixed(passGBs / copyGBs, 2) : "-", fixed(mergeMs / ms, 2), fixed(radixMs / ms, 2)});
    };
    row("device copy (same bytes)", "1", 1, copyMs);
    for (const Version* v : rows) {
        const auto launches = v->plan(n);
        const double ms = medianMs([&] {
            if (pairs) runPlan<Key, true>(launches, b.in.get(), b.vin.get(), b.out.get(), b.vout.get(), n, flip);
            else runPlan<Key, false>(launches, b.in.get(), nullptr, b.out.get(), nullptr, n, flip);
        }, opt.quick || launches.size() < 64 ? plan : TimingPlan{1, 5});
        row(v->name, std::to_string(launches.size()), passesOverMemory(launches), ms);
    }
    row("cub::DeviceMergeSort::SortKeysCopy", "-", 0, mergeMs);
    row("cub::DeviceRadixSort::SortKeys", "-", 0, radixMs);
    std::printf("\nx merge, x radix: CUB's time / this row's time (above 1: faster than CUB)\n");
    return kExitPass;
}

// The command line: one mode per run (see the first comment).
int runCommandLine(int argc, char** argv) {
    Args args("bitonic_sort",
              "Chapter 12: bitonic sort, from one compare-exchange to a multi-block sort of any size",
              {{"--verify", "", "every kernel on the adversarial set (with --n: that size only), no timing"},
               {"--selftest", "", "host-only tests of the index logic (no GPU needed)"},
               {"--n", "N", "number of keys, e.g. 1000003 or 2^24 (default 2^24; --quick 2^20)"},
               {"--key", "TYPE", "uint32, int32 or float (default uint32)"},
               {"--descending", "", "sort largest first"},
               {"--pairs", "", "key-value: the value is the original index, checked as a permutation"},
               {"--quick", "", "a short run: 2^20 keys, fewer repeats"},
               {"--no-timing", "", "checks only"},
               {"--csv", "FILE", "also write the table rows to FILE"}},
              argc, argv);
    if (args.has("--selftest")) return runSelftest();

    Options opt;
    opt.quick = args.has("--quick");
    opt.nGiven = args.has("--n");
    opt.n = args.count("--n", opt.quick ? size_t{1} << 20 : size_t{1} << 24);
    opt.key = args.choice("--key", "uint32", {"uint32", "int32", "float"});
    opt.descending = args.has("--descending");
    opt.pairs = args.has("--pairs");
    opt.timing = !args.has("--no-timing");
    opt.csv = args.text("--csv", "");
    if (opt.n > (size_t{1} << 40)) args.fail("--n must be at most 2^40");  // keeps the memory estimate from overflowing
    if ((opt.pairs || args.has("--verify")) && opt.n >= 0xFFFFFFFFull)  // --verify sorts key-value too
        args.fail("--pairs and --verify carry 32-bit indices, so --n must be below 2^32 - 1, got " +
                  std::to_string(opt.n));

    requireCudaDevice("bitonic_sort");
    if (args.has("--verify")) return runVerify(opt);
    printDeviceReport();
    if (opt.key == "int32") return runLesson<int32_t>(opt);
    if (opt.key == "float") return runLesson<float>(opt);
    return runLesson<uint32_t>(opt);
}

int main(int argc, char** argv) {
    return lessonMain("bitonic_sort", [&] { return runCommandLine(argc, argv); });
}

// Chapter 12: bitonic sort, from one compare-exchange to a multi-block sort of any size. Part A is the seed
// (chapter 12's own kernels): 12.1 splitOnce, one compare-exchange split of a bitonic sequence; 12.2 mergeInOneBlock, the
// multi-pass merge and its group-aware active condition; 12.3 seedSortPass, one launch per (k, j), partner i ^ j,
// direction (i & k) == 0. Part B grows the same network into a sort that fills the card: a direction rule for any n,
// 4096-key tiles in shared memory, 7 global distances per pass over memory.
//
// Build (one file):  nvcc -std=c++17 -O3 -arch=sm_75 -o bitonic_sort bitonic_sort.cu
// Run:
//   ./bitonic_sort --only seed          part A: the seed's examples from real launches, its row checked, timed
//   ./bitonic_sort                      parts A and B: every row checked, then timed on 2^24 uint32 keys vs CUB
//   ./bitonic_sort --only tiles,fused   part B's rows only
//   ./bitonic_sort --verify             every row on the adversarial set, exact checks, no timing
//   ./bitonic_sort --selftest           the __host__ __device__ pieces on the host (no GPU needed)
//   ./bitonic_sort --n 1000003 --key float --descending --pairs --quick --no-timing
//
// Reading map, by section: "Part A: the seed" (the order and tie rule, building blocks, kernels 12.1-12.3, launchers);
// "Part B: production" (Tuning, any n, register windows, tiles, kernels, plans and launcher); "The variant table";
// "Checks and the run"; "Selftest"; "main". What a learner may change: --n, --key uint32|int32|float, --descending,
// --pairs, the standard options (--help); the Tuning struct; and the seed's two traps, each caught by the checks:
//   -DEXERCISE_ACTIVE_TID_LT_DIST      12.2's active condition becomes tid < dist
//   -DEXERCISE_MISSING_PARTNER_GUARD   12.3's "l > i" guard is dropped

#include "../common/inputs.hpp"
#include "../common/selftest.hpp"
#include "../common/sort_buffers.cuh"
#include "../common/sort_options.hpp"
#include "../common/variants.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

// ====================================================================== Part A: the seed ==
// The order and the tie rule, once for the whole file. Kernels compare ranks (common's rankOf: an order-preserving
// 32-bit map, -0.0 before +0.0; --descending flips every bit), so every kernel sorts ranks ascending. A pair swaps
// only when strictly out of order, so equal keys never swap; the sort is still not stable (a pair at distance j
// jumps the keys between them), and --pairs is checked as a permutation, not against the stable order.

// 12.1: a sequence is bitonic if some rotation of it rises, then falls. Rotate to the first minimum, then walk up,
// then down (the seed's test).
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
// ... on two keys in memory (keys[i] is the lower index), and their values with --pairs.
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

// 12.2: at distance dist the range is groups of 2*dist; thread tid is a pair's left member in its group's first half.
__host__ __device__ inline bool activeLeft(unsigned tid, unsigned dist) {
#ifdef EXERCISE_ACTIVE_TID_LT_DIST
    return tid < dist;  // the seed's trap: only right for the first pass
#else
    return (tid % (2 * dist)) < dist;
#endif
}

// Block bodies are written for "threads t0, t0 + stride, ...": a kernel passes (threadIdx.x, blockDim.x), so each
// thread runs its own tid once and blockSync() is __syncthreads(); --selftest passes (0, 1) and runs the threads in
// turn on the host. Between two barriers threads touch disjoint elements, so the host's order is as good.
__host__ __device__ inline void blockSync() {
#ifdef __CUDA_ARCH__
    __syncthreads();
#endif
}

// 12.2's body: the bitonic merge of keys[0, cnt) by one block, distances cnt/2 down to lastDist (1 for the whole
// merge; larger stops it early, to watch it pass by pass); a barrier between passes, as each reads the last's writes.
template <class Key>
__host__ __device__ void mergeInOneBlockBody(unsigned t0, unsigned stride, Key* keys, unsigned cnt,
                                             unsigned lastDist, uint32_t flip) {
    for (unsigned dist = cnt / 2; dist >= 1 && dist >= lastDist; dist /= 2) {
        for (unsigned tid = t0; tid < cnt; tid += stride)
            if (activeLeft(tid, dist))
                compareExchangeAt<Key, false>(keys, nullptr, tid, tid + dist, true, flip);
        blockSync();
    }
}

// 12.3: both threads of a pair (i, i ^ j) visit it; only the lower index acts, or the second visit undoes the first.
__host__ __device__ inline bool ownsPair(size_t i, size_t l) {
#ifdef EXERCISE_MISSING_PARTNER_GUARD
    (void)i;
    (void)l;
    return true;  // the seed's trap: each pair compared twice, racing
#else
    return l > i;
#endif
}

// 12.3, the seed's direction: the size-k run holding i sorts ascending when it is even-numbered (n a power of two).
__host__ __device__ inline bool seedAscending(size_t i, size_t k) { return (i & k) == 0; }
// One thread of one (k, j) pass of 12.3, shared by the kernel and --selftest.
template <class Key, bool kPairs>
__host__ __device__ inline void seedPassAt(Key* keys, uint32_t* vals, size_t i, size_t n, size_t k, size_t j, uint32_t flip) {
    const size_t l = i ^ j;
    if (!ownsPair(i, l) || l >= n) return;
    compareExchangeAt<Key, kPairs>(keys, vals, i, l, seedAscending(i, k), flip);
}

// Grid-stride loops over size_t indices: n past 2^31 works.
__device__ inline size_t gridThread() { return static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline size_t gridThreads() { return static_cast<size_t>(gridDim.x) * blockDim.x; }

// 12.1: one compare-exchange split of the bitonic keys[0, 2*dist): dist independent comparisons, one thread each.
template <class Key>
__global__ void splitOnce(Key* keys, size_t dist, uint32_t flip) {
    for (size_t i = gridThread(); i < dist; i += gridThreads())
        compareExchangeAt<Key, false>(keys, nullptr, i, i + dist, true, flip);
}

// 12.2: the bitonic merge of keys[0, cnt) in one block of cnt threads.
template <class Key>
__global__ void mergeInOneBlock(Key* keys, unsigned cnt, unsigned lastDist, uint32_t flip) {
    mergeInOneBlockBody(threadIdx.x, blockDim.x, keys, cnt, lastDist, flip);
}

// 12.3: one (k, j) pass of the seed's network (n a power of two).
template <class Key, bool kPairs>
__global__ void seedSortPass(Key* keys, uint32_t* vals, size_t n, size_t k, size_t j, uint32_t flip) {
    for (size_t i = gridThread(); i < n; i += gridThreads())
        seedPassAt<Key, kPairs>(keys, vals, i, n, k, j, flip);
}

// Part A's launch geometry, in one place. No kernel of part A uses shared memory: 12.2 works in global memory, and
// __syncthreads() orders it within its one block.
struct SeedGeometry {
    static constexpr unsigned threads = 256;         // a block of the one-pass kernels
    static constexpr unsigned maxBlocks = 1u << 20;  // past this the grid strides
    static constexpr unsigned oneBlock = 1024;       // 12.2: the largest cnt, one thread per key
};
static_assert(SeedGeometry::threads % 32 == 0 && SeedGeometry::oneBlock <= 1024, "whole warps; 12.2's block <= 1024");

inline unsigned strideGrid(size_t work, unsigned threads, const char* kernel) {
    return gridFor(std::min(work, size_t{SeedGeometry::maxBlocks} * threads), threads, kernel);
}
template <class Key>
void launchSplitOnce(Key* keys, size_t dist, uint32_t flip) {
    splitOnce<Key><<<strideGrid(dist, SeedGeometry::threads, "splitOnce"), SeedGeometry::threads>>>(keys, dist, flip);
    CUDA_CHECK_LAUNCH("splitOnce");
}
template <class Key>
void launchMergeInOneBlock(Key* keys, unsigned cnt, unsigned lastDist, uint32_t flip) {
    if (cnt < 2 || cnt > SeedGeometry::oneBlock || (cnt & (cnt - 1))) {
        std::fprintf(stderr, "mergeInOneBlock: cnt = %u must be a power of two, 2 .. %u\n", cnt, SeedGeometry::oneBlock);
        std::exit(kExitBadArgument);
    }
    mergeInOneBlock<Key><<<1, cnt>>>(keys, cnt, lastDist, flip);
    CUDA_CHECK_LAUNCH("mergeInOneBlock");
}
template <class Key, bool kPairs>
void launchSeedPass(Key* keys, uint32_t* vals, size_t n, size_t k, size_t j, uint32_t flip) {
    seedSortPass<Key, kPairs><<<strideGrid(n, SeedGeometry::threads, "seedSortPass"), SeedGeometry::threads>>>(keys, vals, n, k, j, flip);
    CUDA_CHECK_LAUNCH("seedSortPass");
}

// ================================================================== Part B: production ==
// The tuning, the only source of tile and shared-memory sizes: nt threads of vt = 16 keys in registers whose indices
// differ in 4 bits (a window); a tile of nv = 4096 keys in shared memory is 3 windows. Blocks per SM: a block loads,
// computes, stores in turn, so other blocks keep bytes in flight; __launch_bounds__ caps registers (README).
struct Tuning {
    static constexpr int nt = 256;
    static constexpr int groupBits = 4;                           // index bits a window spans
    static constexpr int vt = 1 << groupBits;                     // 16 keys per thread
    static constexpr int tileBits = 12;
    static constexpr unsigned nv = 1u << tileBits;                // 4096 keys per tile
    static constexpr int windows = tileBits / groupBits;          // tile bits [8,12) [4,8) [0,4)
    static constexpr int topWindow = (windows - 1) * groupBits;   // the one loaded from global
    static constexpr int columnBits = 5;                          // fused shared pass: rows of 32 keys
    static constexpr int rowBits = tileBits - columnBits;         // ... and 7 distances per pass
    static constexpr int chunk = 4;                               // keys per 16-byte access
    static constexpr int chunksPerThread = vt / chunk;
    static constexpr size_t sharedBytes(bool pairs) { return (pairs ? 2 : 1) * nv * sizeof(uint32_t); }
    static constexpr int sortBlocksPerSM(bool pairs) { return pairs ? 2 : 3; }
    static constexpr int mergeBlocksPerSM(bool pairs) { return pairs ? 3 : blocksThatFit(nt, 5); }
};
static_assert(Tuning::nt * Tuning::vt == static_cast<int>(Tuning::nv) && Tuning::tileBits % Tuning::groupBits == 0,
              "a tile is nt * vt keys, in whole windows");
static_assert(Tuning::sharedBytes(true) <= 48 * 1024, "ranks + values of a tile fit the default 48 KiB");
static_assert(Tuning::columnBits + Tuning::groupBits <= Tuning::tileBits && Tuning::columnBits >= Tuning::topWindow - Tuning::groupBits,
              "a fused row window fits in the tile, and a strided tile's rows lie in its top two windows");
static_assert(Tuning::chunk * Tuning::chunksPerThread == Tuning::vt && (1 << Tuning::columnBits) % Tuning::chunk == 0,
              "a thread's chunks fill its 16 keys, and a row is whole chunks");

// Any n: pad (in thought) with +infinity to a power of two, skip pairs whose partner is past the end. Right only if the
// run holding keys and padding always sorts ascending: anchor the runs at the last key, i ^ (n-1) for i (README).
__host__ __device__ inline bool ascendingAt(size_t i, size_t k, size_t last) { return ((i ^ last) & k) == 0; }
// One thread of one (k, j) pass for any n: 12.3's step with the new direction.
template <class Key, bool kPairs>
__host__ __device__ inline void anyPassAt(Key* keys, uint32_t* vals, size_t i, size_t n, size_t k, size_t j, uint32_t flip) {
    const size_t l = i ^ j;
    if (!ownsPair(i, l) || l >= n) return;  // l >= n: the partner is padding
    compareExchangeAt<Key, kPairs>(keys, vals, i, l, ascendingAt(i, k, n - 1), flip);
}
template <class Key, bool kPairs>
__global__ void anySortPass(Key* keys, uint32_t* vals, size_t n, size_t k, size_t j, uint32_t flip) {
    for (size_t i = gridThread(); i < n; i += gridThreads())
        anyPassAt<Key, kPairs>(keys, vals, i, n, k, j, flip);
}

using Regs = uint32_t[Tuning::vt];  // one thread's window of ranks (or values), in registers
// Padding in registers and shared memory: the largest rank, so it stays at the end (the rule above), never stored.
constexpr uint32_t kVirtualRank = 0xFFFFFFFFu;
// The compare-exchange on two registers (and their values in key-value mode).
template <bool kPairs>
__host__ __device__ inline void compareExchange(uint32_t& a, uint32_t& b, uint32_t& va, uint32_t& vb, bool ascending) {
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

// --- register windows: thread t's register q holds tile element tileIndex(t, q, lo), 16 indices that differ only in
// bits [lo, lo+4), so a pass whose distance bit is there compares two of its own registers: no memory traffic, no
// barrier. The windows are fixed, tile bits [8,12) [4,8) [0,4) (README: why).
__host__ __device__ inline unsigned tileIndex(unsigned t, unsigned q, int lo) {
    return (t & ((1u << lo) - 1)) | (q << lo) | ((t >> lo) << (lo + Tuning::groupBits));
}
// Shared-memory position of tile element L. XOR-ing bits 4..8 into bits 0..4 keeps every gather free of bank
// conflicts: in each window 0..8 the 32 threads of a warp hit 32 different banks (and plain rows stay linear).
__host__ __device__ inline unsigned swizzle(unsigned L) { return L ^ ((L >> 4) & 31u); }
// The passes for index bits hiBit down to loBit (inside [lo, lo+4)) on a thread's 16 registers, `ascending` for
// register 0; registers with the dirMask bit set (the stage's k bit, inside the window) belong to the next run.
template <bool kPairs>
__host__ __device__ inline void mergePassesInRegisters(Regs& rank, Regs& val, int lo, int hiBit, int loBit,
                                                       bool ascending, unsigned dirMask) {
DEVICE_UNROLL
    for (int b = Tuning::groupBits - 1; b >= 0; --b) {
        if (lo + b > hiBit || lo + b < loBit) continue;  // the same for every thread
DEVICE_UNROLL
        for (int q = 0; q < Tuning::vt; ++q) {
            if (q & (1 << b)) continue;  // q is the lower index of its pair
            const bool otherRun = (q & dirMask) != 0;
            compareExchange<kPairs>(rank[q], rank[q | (1 << b)], val[q], val[q | (1 << b)], ascending != otherRun);
        }
    }
}

// Thread t's 16 elements of window lo: from shared memory into registers, and back to where they came from.
template <bool kPairs>
__host__ __device__ inline void gatherWindow(const uint32_t* sRank, const uint32_t* sVal, unsigned t, int lo,
                                             Regs& rank, Regs& val) {
DEVICE_UNROLL
    for (int q = 0; q < Tuning::vt; ++q) {
        const unsigned p = swizzle(tileIndex(t, q, lo));
        rank[q] = sRank[p];
        if constexpr (kPairs) val[q] = sVal[p];
    }
}
template <bool kPairs>
__host__ __device__ inline void scatterWindow(uint32_t* sRank, uint32_t* sVal, unsigned t, int lo,
                                              const Regs& rank, const Regs& val) {
DEVICE_UNROLL
    for (int q = 0; q < Tuning::vt; ++q) {
        const unsigned p = swizzle(tileIndex(t, q, lo));
        sRank[p] = rank[q];
        if constexpr (kPairs) sVal[p] = val[q];
    }
}
// One thread's turn in one window: gather, run the window's passes, scatter.
template <bool kPairs>
__host__ __device__ inline void windowStep(uint32_t* sRank, uint32_t* sVal, unsigned t, int lo,
                                           int hiBit, int loBit, bool ascending, unsigned dirMask) {
    uint32_t rank[Tuning::vt], val[Tuning::vt] = {};
    gatherWindow<kPairs>(sRank, sVal, t, lo, rank, val);
    mergePassesInRegisters<kPairs>(rank, val, lo, hiBit, loBit, ascending, dirMask);
    scatterWindow<kPairs>(sRank, sVal, t, lo, rank, val);
}
// Stage s's k bit as a register bit of window lo (0 when bit s lies above the window: all of it runs one way).
__host__ __device__ inline unsigned directionMask(int s, int lo) { return s - lo < Tuning::groupBits ? 1u << (s - lo) : 0u; }

// Where tile element L lives in global memory: map(A | B) = map(A) + offset(B) for disjoint A, B (one 64-bit index).
struct ContiguousTile {  // a plain tile of 4096 neighbours
    size_t base;
    __host__ __device__ size_t offset(unsigned L) const { return L; }
    __host__ __device__ size_t operator()(unsigned L) const { return base + offset(L); }
};
struct StridedTile {  // 128 rows of 32 neighbours, row r at start + (r << lo)
    size_t start;  // no bit in the columns [0, 5) or the rows [lo, lo + 7)
    int lo;
    __host__ __device__ size_t offset(unsigned L) const {
        return (L & ((1u << Tuning::columnBits) - 1)) + (static_cast<size_t>(L >> Tuning::columnBits) << lo);
    }
    __host__ __device__ size_t operator()(unsigned L) const { return start + offset(L); }
};

// Global <-> shared, 16 bytes at a time: thread t takes chunks t, t + nt, ... of 4 neighbouring keys (a warp: 512
// contiguous bytes). The swizzle keeps a chunk in one aligned group of 4 words, permuted by an XOR (its own inverse).
__host__ __device__ inline unsigned chunkStart(unsigned t, int m) { return (t + m * Tuning::nt) * Tuning::chunk; }
__host__ __device__ inline uint4 xorPermute(uint4 v, unsigned x) {
    if (x & 1u) v = make_uint4(v.y, v.x, v.w, v.z);
    if (x & 2u) v = make_uint4(v.z, v.w, v.x, v.y);
    return v;
}
// The rank map on 4 keys read as raw 32-bit words, and back.
template <class Key>
__host__ __device__ inline uint32_t rankOfWord(uint32_t word, uint32_t flip) { return rankOf(fromWord<Key>(word), flip); }
template <class Key>
__host__ __device__ inline uint32_t wordOfRank(uint32_t rank, uint32_t flip) { return wordOf(keyOfRank<Key>(rank, flip)); }
template <class Key>
__host__ __device__ inline uint4 ranksOfWords(uint4 w, uint32_t flip) {
    return make_uint4(rankOfWord<Key>(w.x, flip), rankOfWord<Key>(w.y, flip), rankOfWord<Key>(w.z, flip), rankOfWord<Key>(w.w, flip));
}
template <class Key>
__host__ __device__ inline uint4 wordsOfRanks(uint4 r, uint32_t flip) {
    return make_uint4(wordOfRank<Key>(r.x, flip), wordOfRank<Key>(r.y, flip), wordOfRank<Key>(r.z, flip), wordOfRank<Key>(r.w, flip));
}
// Every map rises with L, so a tile is all real keys exactly when its last element is (block-uniform).
template <class Map>
__host__ __device__ inline bool tileIsFull(Map map, size_t n) { return map(Tuning::nv - 1) < n; }
// Global -> shared, as ranks; positions past the end become kVirtualRank. A full tile moves in 16-byte chunks;
// the one tile that holds the end of n (or is all padding) goes a key at a time, thread t taking t, t + nt, ...
template <class Key, bool kPairs, class Map>
__host__ __device__ inline void loadTile(unsigned t0, unsigned stride, Map map, const Key* keys, const uint32_t* vals,
                                         size_t n, uint32_t flip, uint32_t* sRank, uint32_t* sVal) {
    if (tileIsFull(map, n)) {
        for (unsigned t = t0; t < Tuning::nt; t += stride) {
            uint4 k[Tuning::chunksPerThread], v[Tuning::chunksPerThread];
DEVICE_UNROLL
            for (int m = 0; m < Tuning::chunksPerThread; ++m) {  // every load before any use
                const size_t g = map(chunkStart(t, m));
                k[m] = load16(keys + g);
                if constexpr (kPairs) v[m] = load16(vals + g);
            }
DEVICE_UNROLL
            for (int m = 0; m < Tuning::chunksPerThread; ++m) {
                const unsigned p = swizzle(chunkStart(t, m));
                store16(sRank + (p & ~3u), xorPermute(ranksOfWords<Key>(k[m], flip), p & 3u));
                if constexpr (kPairs) store16(sVal + (p & ~3u), xorPermute(v[m], p & 3u));
            }
        }
        return;
    }
    for (unsigned t = t0; t < Tuning::nt; t += stride)
        for (int m = 0; m < Tuning::vt; ++m) {
            const unsigned L = t + m * Tuning::nt;
            const size_t g = map(L);
            sRank[swizzle(L)] = g < n ? rankOf(keys[g], flip) : kVirtualRank;
            if constexpr (kPairs) sVal[swizzle(L)] = g < n ? vals[g] : 0u;
        }
}
template <class Key, bool kPairs, class Map>
__host__ __device__ inline void storeTile(unsigned t0, unsigned stride, Map map, Key* keys, uint32_t* vals, size_t n,
                                          uint32_t flip, const uint32_t* sRank, const uint32_t* sVal) {
    if (tileIsFull(map, n)) {
        for (unsigned t = t0; t < Tuning::nt; t += stride)
DEVICE_UNROLL
            for (int m = 0; m < Tuning::chunksPerThread; ++m) {
                const unsigned p = swizzle(chunkStart(t, m));
                const size_t g = map(chunkStart(t, m));
                store16(keys + g, wordsOfRanks<Key>(xorPermute(load16(sRank + (p & ~3u)), p & 3u), flip));
                if constexpr (kPairs) store16(vals + g, xorPermute(load16(sVal + (p & ~3u)), p & 3u));
            }
        return;
    }
    for (unsigned t = t0; t < Tuning::nt; t += stride)
        for (int m = 0; m < Tuning::vt; ++m) {
            const unsigned L = t + m * Tuning::nt;
            const size_t g = map(L);
            if (g >= n) continue;  // padding is never stored
            keys[g] = keyOfRank<Key>(sRank[swizzle(L)], flip);
            if constexpr (kPairs) vals[g] = sVal[swizzle(L)];
        }
}

// Global <-> registers: thread t's 16 keys of window lo. In the top window each load is a warp's 128-byte line.
template <class Key, bool kPairs, class Map>
__host__ __device__ inline void loadWindow(Map map, unsigned t, int lo, const Key* keys, const uint32_t* vals,
                                           size_t n, uint32_t flip, Regs& rank, Regs& val) {
    const size_t g0 = map(tileIndex(t, 0, lo));  // register q: g0 + map.offset(q << lo)
    if (tileIsFull(map, n)) {  // no per-key test
DEVICE_UNROLL
        for (int q = 0; q < Tuning::vt; ++q) {
            const size_t g = g0 + map.offset(static_cast<unsigned>(q) << lo);
            rank[q] = rankOf(keys[g], flip);
            if constexpr (kPairs) val[q] = vals[g];
        }
        return;
    }
DEVICE_UNROLL
    for (int q = 0; q < Tuning::vt; ++q) {
        const size_t g = g0 + map.offset(static_cast<unsigned>(q) << lo);
        rank[q] = g < n ? rankOf(keys[g], flip) : kVirtualRank;
        if constexpr (kPairs) val[q] = g < n ? vals[g] : 0u;
    }
}
template <class Key, bool kPairs, class Map>
__host__ __device__ inline void storeWindow(Map map, unsigned t, int lo, Key* keys, uint32_t* vals, size_t n,
                                            uint32_t flip, const Regs& rank, const Regs& val) {
    const size_t g0 = map(tileIndex(t, 0, lo));
    const bool full = tileIsFull(map, n);
DEVICE_UNROLL
    for (int q = 0; q < Tuning::vt; ++q) {
        const size_t g = g0 + map.offset(static_cast<unsigned>(q) << lo);
        if (!full && g >= n) continue;  // padding is never stored
        keys[g] = keyOfRank<Key>(rank[q], flip);
        if constexpr (kPairs) vals[g] = val[q];
    }
}

// The passes for tile bits hiBit..loBit, window by window, one direction for the tile (stages past the tile).
template <bool kPairs>
__host__ __device__ inline void mergeWindows(unsigned t0, unsigned stride, uint32_t* sRank, uint32_t* sVal,
                                             int hiBit, int loBit, bool ascending) {
DEVICE_UNROLL
    for (int w = Tuning::windows - 1; w >= 0; --w) {
        const int lo = w * Tuning::groupBits;
        if (lo > hiBit || lo + Tuning::groupBits - 1 < loBit) continue;  // no pass here (block-uniform)
        for (unsigned t = t0; t < Tuning::nt; t += stride)
            windowStep<kPairs>(sRank, sVal, t, lo, hiBit, loBit, ascending, 0u);
        blockSync();  // the next window gathers what other threads just wrote
    }
}

// Body of sortTiles: a whole bitonic sort (stages k = 2 .. 2^topStage) of tile `tile`, in -> out.
template <class Key, bool kPairs>
__host__ __device__ void sortTileBody(unsigned t0, unsigned stride, uint32_t* sRank, uint32_t* sVal, const Key* in,
                                      const uint32_t* vin, Key* out, uint32_t* vout, size_t n, size_t tile,
                                      int topStage, uint32_t flip) {
    const ContiguousTile map{tile * Tuning::nv};
    const size_t last = n - 1;
    loadTile<Key, kPairs>(t0, stride, map, in, vin, n, flip, sRank, sVal);
    blockSync();
    // Stages k = 2..16 have all their distances in window 0: one round trip.
    for (unsigned t = t0; t < Tuning::nt; t += stride) {
        uint32_t rank[Tuning::vt], val[Tuning::vt] = {};
        gatherWindow<kPairs>(sRank, sVal, t, 0, rank, val);
        const size_t first = map(tileIndex(t, 0, 0));
        for (int s = 1; s <= topStage && s <= Tuning::groupBits; ++s)
            mergePassesInRegisters<kPairs>(rank, val, 0, s - 1, 0, ascendingAt(first, size_t{1} << s, last),
                                           directionMask(s, 0));
        scatterWindow<kPairs>(sRank, sVal, t, 0, rank, val);
    }
    blockSync();
    // Stages k = 32..4096: distances k/2..1, window by window from the top.
    for (int s = Tuning::groupBits + 1; s <= topStage; ++s) {
        const size_t k = size_t{1} << s;
DEVICE_UNROLL
        for (int w = Tuning::windows - 1; w >= 0; --w) {
            const int lo = w * Tuning::groupBits;
            if (lo > s - 1) continue;  // the stage's passes start below this window
            for (unsigned t = t0; t < Tuning::nt; t += stride) {
                const size_t first = map(tileIndex(t, 0, lo));
                windowStep<kPairs>(sRank, sVal, t, lo, s - 1, 0, ascendingAt(first, k, last), directionMask(s, lo));
            }
            blockSync();
        }
    }
    storeTile<Key, kPairs>(t0, stride, map, out, vout, n, flip, sRank, sVal);
}

// Body of mergeTiles: stage 2^stage > tile, distances 2048..1; the top window's passes run between load and shared.
template <class Key, bool kPairs>
__host__ __device__ void mergeTileBody(unsigned t0, unsigned stride, uint32_t* sRank, uint32_t* sVal, Key* keys,
                                       uint32_t* vals, size_t n, size_t tile, int stage, uint32_t flip) {
    const ContiguousTile map{tile * Tuning::nv};
    const bool ascending = ascendingAt(map.base, size_t{1} << stage, n - 1);
    for (unsigned t = t0; t < Tuning::nt; t += stride) {
        uint32_t rank[Tuning::vt], val[Tuning::vt] = {};
        loadWindow<Key, kPairs>(map, t, Tuning::topWindow, keys, vals, n, flip, rank, val);
        mergePassesInRegisters<kPairs>(rank, val, Tuning::topWindow, Tuning::tileBits - 1, Tuning::topWindow, ascending, 0u);
        scatterWindow<kPairs>(sRank, sVal, t, Tuning::topWindow, rank, val);
    }
    blockSync();
    mergeWindows<kPairs>(t0, stride, sRank, sVal, Tuning::topWindow - 1, 0, ascending);  // ends with a barrier
    storeTile<Key, kPairs>(t0, stride, map, keys, vals, n, flip, sRank, sVal);
}

// Opens a gap of `width` zero bits at bit `at`: low bits stay, the rest move up.
__host__ __device__ inline size_t depositAbove(size_t value, int at, int width) {
    const size_t low = value & ((size_t{1} << at) - 1);
    return low | ((value >> at) << (at + width));
}
// First index of fused-shared block b for rows at bit lo: block bits fill global bits 5..lo-1 and lo+7.. .
__host__ __device__ inline size_t stridedTileStart(size_t block, int lo) {
    return depositAbove(block << Tuning::columnBits, lo, Tuning::rowBits);
}

// Body of mergeAcrossTilesShared: up to 7 global distances, bits hiBit..loBit (>= 12), in one pass over memory: 128
// rows of 32 neighbours, the row bits being tile bits 11..5: registers (top window) -> shared -> registers -> global.
template <class Key, bool kPairs>
__host__ __device__ void mergeAcrossTileBody(unsigned t0, unsigned stride, uint32_t* sRank, uint32_t* sVal, Key* keys,
                                             uint32_t* vals, size_t n, size_t block, int stage, int hiBit, int loBit,
                                             uint32_t flip) {
    const int lo = hiBit - (Tuning::rowBits - 1);
    const StridedTile map{stridedTileStart(block, lo), lo};
    if (map.start >= n) return;  // all padding (the whole block leaves together)
    // Bit `stage` lies above the rows and columns, so one direction for all.
    const bool ascending = ascendingAt(map.start, size_t{1} << stage, n - 1);
    const int lowest = Tuning::columnBits + (loBit - lo);  // the lowest tile bit with a pass
    constexpr int kBelow = Tuning::topWindow - Tuning::groupBits;  // the window below the top one
    for (unsigned t = t0; t < Tuning::nt; t += stride) {
        uint32_t rank[Tuning::vt], val[Tuning::vt] = {};
        loadWindow<Key, kPairs>(map, t, Tuning::topWindow, keys, vals, n, flip, rank, val);
        mergePassesInRegisters<kPairs>(rank, val, Tuning::topWindow, Tuning::tileBits - 1, lowest, ascending, 0u);
        scatterWindow<kPairs>(sRank, sVal, t, Tuning::topWindow, rank, val);
    }
    blockSync();  // the window below gathers what other threads just wrote
    for (unsigned t = t0; t < Tuning::nt; t += stride) {
        uint32_t rank[Tuning::vt], val[Tuning::vt] = {};
        gatherWindow<kPairs>(sRank, sVal, t, kBelow, rank, val);
        mergePassesInRegisters<kPairs>(rank, val, kBelow, Tuning::topWindow - 1, lowest, ascending, 0u);
        storeWindow<Key, kPairs>(map, t, kBelow, keys, vals, n, flip, rank, val);
    }
}

// --------------------------------------------------------------------------- kernels --
template <class Key, bool kPairs>
__global__ void __launch_bounds__(Tuning::nt, Tuning::sortBlocksPerSM(kPairs))
    sortTiles(const Key* in, const uint32_t* vin, Key* out, uint32_t* vout, size_t n, int topStage, uint32_t flip) {
    __shared__ __align__(16) uint32_t sRank[Tuning::nv];  // 16-byte chunk accesses
    __shared__ __align__(16) uint32_t sVal[kPairs ? Tuning::nv : 1];
    sortTileBody<Key, kPairs>(threadIdx.x, Tuning::nt, sRank, sVal, in, vin, out, vout, n, blockIdx.x, topStage, flip);
}
// Tiles: the distances 2048..1 of one stage larger than a tile, in place.
template <class Key, bool kPairs>
__global__ void __launch_bounds__(Tuning::nt, Tuning::mergeBlocksPerSM(kPairs))
    mergeTiles(Key* keys, uint32_t* vals, size_t n, int stage, uint32_t flip) {
    __shared__ __align__(16) uint32_t sRank[Tuning::nv];  // 16-byte chunk accesses
    __shared__ __align__(16) uint32_t sVal[kPairs ? Tuning::nv : 1];
    mergeTileBody<Key, kPairs>(threadIdx.x, Tuning::nt, sRank, sVal, keys, vals, n, blockIdx.x, stage, flip);
}
// Fused through shared memory: up to 7 global distances per pass.
template <class Key, bool kPairs>
__global__ void __launch_bounds__(Tuning::nt, Tuning::mergeBlocksPerSM(kPairs))
    mergeAcrossTilesShared(Key* keys, uint32_t* vals, size_t n, int stage, int hiBit, int loBit, uint32_t flip) {
    __shared__ __align__(16) uint32_t sRank[Tuning::nv];  // 16-byte chunk accesses
    __shared__ __align__(16) uint32_t sVal[kPairs ? Tuning::nv : 1];
    mergeAcrossTileBody<Key, kPairs>(threadIdx.x, Tuning::nt, sRank, sVal, keys, vals, n, blockIdx.x,
                                     stage, hiBit, loBit, flip);
}

// ---------------------------------------------------------------------- plans and launcher --
// A row's plan, its list of launches, drives the launcher, the table's pass count and --selftest's host run.
enum class Step { Copy, SeedPass, AnyPass, SortTiles, MergeTiles, FusedShared };
struct Launch { Step step; int stage, hiBit, loBit; };  // k = 2^stage; distances 2^hiBit .. 2^loBit
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
    for (int s = 1; s <= ceilLog2(n); ++s)
        for (int b = s - 1; b >= 0; --b) plan.push_back({step, s, b, b});
    return plan;
}
// Tiles first; then per stage past the tile its global distances, `fuse` per launch, and a tile launch for 2048..1.
inline std::vector<Launch> tiledPlan(size_t n, Step globalStep, int fuse) {
    std::vector<Launch> plan;
    if (n == 0) return plan;
    const int L = ceilLog2(n);
    plan.push_back({Step::SortTiles, std::min(L, Tuning::tileBits), Tuning::tileBits - 1, 0});
    for (int s = Tuning::tileBits + 1; s <= L; ++s) {
        for (int hi = s - 1; hi >= Tuning::tileBits;) {
            const int lo = std::max(hi - fuse + 1, Tuning::tileBits);
            plan.push_back({globalStep, s, hi, lo});
            hi = lo - 1;
        }
        plan.push_back({Step::MergeTiles, s, Tuning::tileBits - 1, 0});
    }
    return plan;
}
// A launch's units (threads or blocks): the launcher sizes its grid from it, --selftest runs each unit's body.
inline size_t unitsOf(const Launch& x, size_t n) {
    switch (x.step) {
        case Step::SeedPass: case Step::AnyPass: return n;
        case Step::SortTiles: case Step::MergeTiles: return ceilDiv(n, size_t{Tuning::nv});
        case Step::FusedShared: return (size_t{1} << ceilLog2(n)) / Tuning::nv;
        default: return 0;  // Copy
    }
}

// Sorts in[0, n) into out (values vin -> vout in key-value mode); only enqueues work, so it can be timed.
template <class Key, bool kPairs>
void runPlan(const std::vector<Launch>& plan, const Key* in, const uint32_t* vin, Key* out, uint32_t* vout, size_t n,
             uint32_t flip) {
    for (const Launch& x : plan) {
        const size_t k = size_t{1} << x.stage, j = size_t{1} << x.hiBit;
        const unsigned tiles = gridFor(unitsOf(x, n), 1, "a tile kernel");
        switch (x.step) {
            case Step::Copy: CUDA_CHECK(cudaMemcpyAsync(out, in, n * sizeof(Key), cudaMemcpyDeviceToDevice));
                if constexpr (kPairs) CUDA_CHECK(cudaMemcpyAsync(vout, vin, n * sizeof(uint32_t), cudaMemcpyDeviceToDevice));
                break;
            case Step::SeedPass: launchSeedPass<Key, kPairs>(out, vout, n, k, j, flip); break;
            case Step::AnyPass: anySortPass<Key, kPairs><<<strideGrid(n, SeedGeometry::threads, "anySortPass"), SeedGeometry::threads>>>(
                                    out, vout, n, k, j, flip);
                CUDA_CHECK_LAUNCH("anySortPass");
                break;
            case Step::SortTiles: sortTiles<Key, kPairs><<<tiles, Tuning::nt>>>(in, vin, out, vout, n, x.stage, flip);
                CUDA_CHECK_LAUNCH("sortTiles");
                break;
            case Step::MergeTiles: mergeTiles<Key, kPairs><<<tiles, Tuning::nt>>>(out, vout, n, x.stage, flip);
                CUDA_CHECK_LAUNCH("mergeTiles");
                break;
            case Step::FusedShared: mergeAcrossTilesShared<Key, kPairs><<<tiles, Tuning::nt>>>(out, vout, n, x.stage, x.hiBit, x.loBit, flip);
                CUDA_CHECK_LAUNCH("mergeAcrossTilesShared");
                break;
        }
    }
}

// --selftest's stand-in: the same plan, each unit's body in turn on the host, sorting keys and vals in place.
template <class Key, bool kPairs>
void runPlanOnHost(const std::vector<Launch>& plan, std::vector<Key>& keys, std::vector<uint32_t>& vals, uint32_t flip) {
    std::vector<uint32_t> sRank(Tuning::nv), sVal(Tuning::nv);  // one block's shared memory
    const size_t n = keys.size();
    Key* k0 = keys.data();
    uint32_t *v0 = kPairs ? vals.data() : nullptr, *sr = sRank.data(), *sv = sVal.data();
    for (const Launch& x : plan) {
        const size_t k = size_t{1} << x.stage, j = size_t{1} << x.hiBit;
        for (size_t u = 0; u < unitsOf(x, n); ++u) switch (x.step) {
            case Step::Copy: break;
            case Step::SeedPass: seedPassAt<Key, kPairs>(k0, v0, u, n, k, j, flip); break;
            case Step::AnyPass: anyPassAt<Key, kPairs>(k0, v0, u, n, k, j, flip); break;
            case Step::SortTiles: sortTileBody<Key, kPairs>(0, 1, sr, sv, k0, v0, k0, v0, n, u, x.stage, flip); break;
            case Step::MergeTiles: mergeTileBody<Key, kPairs>(0, 1, sr, sv, k0, v0, n, u, x.stage, flip); break;
            case Step::FusedShared:
                mergeAcrossTileBody<Key, kPairs>(0, 1, sr, sv, k0, v0, n, u, x.stage, x.hiBit, x.loBit, flip);
                break;
        }
    }
}

// ===================================================================== The variant table ==
// One list, simplest first: name (--only matches its start), knob cells, plan; --only, --verify, gate and table.
struct Version {
    const char *name, *direction, *globalPerPass;  // knobs: the direction rule; distances >= 4096 per pass
    std::vector<Launch> (*plan)(size_t n);
    bool powerOfTwoOnly;
    bool accepts(size_t n) const { return !powerOfTwoOnly || (n & (n - 1)) == 0; }
};
inline const std::vector<Version>& versions() {
    using S = Step;
    static const std::vector<Version> table = {
        {"seed 12.3: 1 launch per (k,j)", "(i&k)==0", "1 (all j)", [](size_t n) { return passPerDistancePlan(n, S::SeedPass); }, true},
        {"any-n: 1 launch per (k,j)", "((i^(n-1))&k)==0", "1 (all j)", [](size_t n) { return passPerDistancePlan(n, S::AnyPass); }, false},
        {"tiles: j < 4096 in shared", "((i^(n-1))&k)==0", "1", [](size_t n) { return tiledPlan(n, S::AnyPass, 1); }, false},
        {"fused-shared: 7 j/pass", "((i^(n-1))&k)==0", "7", [](size_t n) { return tiledPlan(n, S::FusedShared, 7); }, false}};
    static_assert(Tuning::rowBits == 7, "the knob cell above names it");
    return table;
}

// A row sorts common's buffers (keys; with --pairs the original index as value).
template <class Key>
using Row = Variant<SortBuffers<Key>>;
// The rows that take n and that --only wants, sorting in the given direction. Every launch, the copy too, reads and
// writes n keys: one pass.
template <class Key>
std::vector<Row<Key>> variantRows(size_t n, bool descending, const Run& run) {
    std::vector<Row<Key>> rows;
    for (const Version& v : versions()) {
        if (!v.accepts(n) || !run.wants(v.name)) continue;
        const std::vector<Launch> plan = v.plan(n);
        const uint32_t flip = descending ? ~0u : 0u;
        rows.push_back({v.name, {v.direction, v.globalPerPass, std::to_string(plan.size())}, [plan, flip](SortBuffers<Key>& d) {
                            auto sortPlan = d.pairs ? runPlan<Key, true> : runPlan<Key, false>;  // without --pairs vin, vout are null
                            sortPlan(plan, d.in.get(), d.vin.get(), d.out.get(), d.vout.get(), d.n, flip);
                        }, static_cast<double>(plan.size())});
    }
    return rows;
}

// ==================================================================== Checks and the run ==
// The seed's 12.1 input, and its answers after each of 12.2's passes (the first is 12.1's split).
const std::vector<int32_t> kSeedBitonic = {2, 4, 6, 8, 9, 7, 5, 3};
const std::vector<std::vector<int32_t>> kSeedPasses = {{2, 4, 5, 3, 9, 7, 6, 8}, {2, 3, 5, 4, 6, 7, 9, 8}, {2, 3, 4, 5, 6, 7, 8, 9}};
template <class Key>
bool sameKeys(const std::string& what, const std::vector<Key>& got, const std::vector<Key>& want) {
    return compareExact(what.c_str(), got.data(), want.data(), want.size());
}
// Part A's checks launch one kernel at a time: upload keys to d, launch(d's keys), return what the launch left.
template <class Key, class Launcher>
std::vector<Key> launchedOn(DeviceBuffer<Key>& d, const std::vector<Key>& keys, Launcher launch) {
    std::vector<Key> got(keys.size());
    d.upload(keys.data(), keys.size());
    launch(d.get());
    d.download(got.data(), got.size());
    return got;
}

// The seed's worked examples from real launches (int32 keys, ascending), checked against the seed's answers.
inline bool seedExamples() {
    DeviceBuffer<int32_t> d(16);
    std::vector<int32_t> got = launchedOn(d, kSeedBitonic, [](int32_t* keys) { launchSplitOnce(keys, 4, 0); });
    std::printf("12.1 splitOnce, distance 4, 4 threads: %s -> %s\n", spacedKeys(kSeedBitonic).c_str(),
                spacedKeys(got).c_str());
    bool ok = sameKeys("12.1 split, the seed's example", got, kSeedPasses[0]);
    std::printf("12.2 mergeInOneBlock, 8 threads, input: %s\n", spacedKeys(kSeedBitonic).c_str());
    for (unsigned pass = 1, lastDist = 4; pass <= 3; ++pass, lastDist /= 2) {  // a launch that stops after `pass` passes
        got = launchedOn(d, kSeedBitonic, [&](int32_t* keys) { launchMergeInOneBlock(keys, 8, lastDist, 0); });
        std::printf("     launched to pass %u (dist=%u): %s\n", pass, lastDist, spacedKeys(got).c_str());
        ok = sameKeys("12.2 merge in one block, the seed's example after pass " + std::to_string(pass), got, kSeedPasses[pass - 1]) && ok;
    }
    std::vector<int32_t> sorted(16);
    got.resize(16);
    for (int i = 0; i < 16; ++i) got[i] = (i * 13 + 5) % 16, sorted[i] = i;
    std::printf("12.3 seedSortPass, n = 16, a[i] = (i*13+5) %% 16: %s\n", spacedKeys(got).c_str());
    int launches = 0;
    for (size_t k = 2; k <= 16; k *= 2)
        for (size_t j = k / 2; j > 0; j /= 2) {  // each launch starts from what the one before left
            got = launchedOn(d, got, [&](int32_t* keys) { launchSeedPass<int32_t, false>(keys, nullptr, 16, k, j, 0); });
            std::printf("     launch %2d (k=%2zu, j=%zu): %s\n", ++launches, k, j, spacedKeys(got).c_str());
        }
    return sameKeys("12.3 seed sort, 1 launch per (k,j), the seed's 16 keys", got, sorted) && ok && launches == 10;
}

// 12.1 and 12.2 past the seed's example: the split of bitonic inputs up to 2^21 keys, the merge up to 1024.
template <class Key>
bool checkSeedSteps(bool descending) {
    const uint32_t flip = descending ? ~0u : 0u;
    std::vector<std::vector<Key>> inputs = {{}};
    for (int v : kSeedBitonic) inputs[0].push_back(keyFromInt<Key>(v));
    for (size_t cnt = 2; cnt <= size_t{1} << 21; cnt *= 2)
        if (cnt <= SeedGeometry::oneBlock || cnt == size_t{1} << 21) inputs.push_back(makeSortInput<Key>(SortShape::OrganPipe, cnt, cnt));
    bool ok = true;
    for (const auto& input : inputs) {
        const size_t cnt = input.size(), dist = cnt / 2;
        const std::string size = " (" + sortCaseLabel<Key>("", cnt, descending, false) + ")";
        DeviceBuffer<Key> d(cnt);
        std::vector<Key> want = input;
        for (size_t i = 0; i < dist; ++i) compareExchangeAt<Key, false>(want.data(), nullptr, i, i + dist, true, flip);
        const std::vector<Key> got = launchedOn(d, input, [&](Key* keys) { launchSplitOnce(keys, dist, flip); });
        uint32_t leftMax = 0, rightMin = kVirtualRank;
        for (size_t i = 0; i < dist; ++i) leftMax = std::max(leftMax, rankOf(got[i], flip));
        for (size_t r = dist; r < cnt; ++r) rightMin = std::min(rightMin, rankOf(got[r], flip));
        const bool splitOk = sameKeys("12.1 split" + size, got, want) && isBitonic(got.data(), dist) &&
                             isBitonic(got.data() + dist, dist) && leftMax <= rightMin;
        if (!splitOk) std::printf("12.1 split%s: FAILED (halves not bitonic or not ordered)\n", size.c_str());
        ok = ok && splitOk;
        if (cnt > SeedGeometry::oneBlock) continue;
        const auto merged = launchedOn(d, input, [&](Key* keys) { launchMergeInOneBlock(keys, static_cast<unsigned>(cnt), 1, flip); });
        ok = sameKeys("12.2 merge in one block" + size, merged, referenceSort(input, descending).keys) && ok;
    }
    return ok;
}

// --verify for one key type: the seed steps, every row on the adversarial set and sizes around the tile.
template <class Key>
bool verifyKeyType(const SortOptions& o, const Run& run) {
    bool ok = checkSeedSteps<Key>(false);
    ok = checkSeedSteps<Key>(true) && ok;
    std::vector<SortCase> cases = adversarialSortCases();
    const size_t nv = Tuning::nv;
    for (size_t n : {size_t{4}, size_t{16}, nv - 1, nv, nv + 1, 2 * nv - 1, size_t{8193}, size_t{1} << 16, size_t{(1u << 21) + 1}})
        cases.push_back({SortShape::Uniform, n});
    for (size_t n : {size_t{4096}, size_t{8192}, size_t{1} << 20}) cases.push_back({SortShape::SignedZeros, n});
    if (o.nGiven) cases = {{SortShape::Uniform, o.n}, {SortShape::FewDistinct, o.n}};
    size_t runs = 0;
    for (const SortCase& c : cases) {
        const std::vector<Key> input = makeSortInput<Key>(c.shape, c.n, 7 + c.n);
        for (int d = 0; d < 2; ++d) {
            if (o.nGiven && (d == 1) != o.descending) continue;
            const SortReference<Key> want = referenceSort(input, d == 1);
            const auto rows = variantRows<Key>(c.n, d == 1, run);
            for (int pairs = 0; pairs < 2; ++pairs, runs += rows.size()) {
                SortBuffers<Key> buffers = uploadSort(input, pairs == 1);
                ok = checkSortRows(rows, buffers, buffers, input, want, SortCheck::Permutation,
                                   sortCaseLabel<Key>(sortShapeName(c.shape), c.n, d, pairs)) && ok;
            }
        }
    }
    std::printf("verify %s: %zu sorts on %zu inputs (%s, keys and key-value): %s\n", keyName<Key>(), runs, cases.size(),
                !o.nGiven ? "both directions" : o.descending ? "descending" : "ascending", ok ? "all exact" : "FAILED");
    return ok;
}
inline int runVerify(const SortOptions& o, const Run& run) {
    bool ok = true;
    if (!o.nGiven || o.key == "uint32") ok = verifyKeyType<uint32_t>(o, run) && ok;
    if (!o.nGiven || o.key == "int32") ok = verifyKeyType<int32_t>(o, run) && ok;
    if (!o.nGiven || o.key == "float") ok = verifyKeyType<float>(o, run) && ok;
    std::printf("verify: %s\n", ok ? "PASS" : "FAIL");
    return ok ? kExitPass : kExitCheckFailed;
}

// The lesson: the seed's examples and checks, every row and both CUB sorts checked, then (if all passed) the table.
template <class Key>
int runLesson(const SortOptions& o, const Run& run) {
    const size_t n = o.n;
    requireDeviceMemory(sortBytesNeeded<Key>(n, o.pairs, 2 * n * (sizeof(Key) + (o.pairs ? 4 : 0)) + libraryWordBytes<Key>(n, o.descending) +
                                                             (size_t{64} << 20)),
                        "the sort's buffers and CUB's scratch and words");
    CsvFile csv;
    csv.open(run.csvPath, "bitonic_sort");
    const bool seedOk = seedExamples(), stepsOk = checkSeedSteps<Key>(o.descending);
    std::printf("12.1 split and 12.2 single-block merge on bitonic inputs up to 1024 keys: %s\n", stepsOk ? "exact" : "FAILED");
    const std::vector<Key> input = makeSortInput<Key>(SortShape::Uniform, n, 12);  // never NaN (common/inputs.hpp)
    const SortReference<Key> want = referenceSort(input, o.descending);
    SortBuffers<Key> d = uploadSort(input, o.pairs);
    const std::string label = sortCaseLabel<Key>("", n, o.descending, o.pairs);
    for (const Version& v : versions())
        if (!v.accepts(n) && run.wants(v.name)) std::printf("%s: skipped, n = %zu is not a power of two\n", v.name, n);
    const auto rows = variantRows<Key>(n, o.descending, run);
    LibraryRows<Key, SortBuffers<Key>> cub(d, o.descending);
    bool ok = checkSortRows(rows, d, d, input, want, SortCheck::Permutation, label) && seedOk && stepsOk;
    ok = cub.check(d, d, input, want, label) && ok;
    if (!ok) return std::printf("a check failed: nothing is timed\n"), kExitCheckFailed;
    std::printf("checked on poisoned outputs, %s: %zu rows exact (values a permutation), %s and %s exact (stable)\n",
                label.c_str(), rows.size(), cub.merge.name().c_str(), cub.radix.name().c_str());
    std::printf("passes over memory: a copy + one per (k, j) = 1 + sum of log2(k) = %zu\n", passPerDistancePlan(n, Step::AnyPass).size());
    if (!run.timing || n == 0 || rows.empty()) return std::printf("\n%s: checks only\n", run.timing ? "nothing to time" : "--no-timing"), kExitPass;
    timeRows(cub.table("bitonic sort, " + label, {{"direction", 16}, {"global j/pass", 13}, {"passes", 6}}, d), rows, d, run, &csv);
    return kExitPass;
}

// ============================================================================== Selftest ==
// Host only: the kernels' own __host__ __device__ bodies against independent answers (the key order is common's).
// The (stage, distance bit) sequence a plan performs, in order.
inline std::vector<std::pair<int, int>> distancesOf(const std::vector<Launch>& plan) {
    std::vector<std::pair<int, int>> out;
    for (const Launch& x : plan) {
        const bool tile = x.step == Step::SortTiles;  // a tile sort runs every stage up to its own
        for (int s = tile ? 1 : x.stage; x.step != Step::Copy && s <= x.stage; ++s)
            for (int b = tile ? s - 1 : x.hiBit; b >= (tile ? 0 : x.loBit); --b) out.push_back({s, b});
    }
    return out;
}
// Runs a row's plan on the host, key-value: keys against std::stable_sort, values as a permutation.
template <class Key>
bool selftestPlan(const Version& v, size_t n, bool descending, SortShape shape) {
    const std::vector<Key> input = makeSortInput<Key>(shape, n, 1000 + n);
    std::vector<Key> keys = input;
    std::vector<uint32_t> vals(n);
    std::iota(vals.begin(), vals.end(), 0u);
    runPlanOnHost<Key, true>(v.plan(n), keys, vals, descending ? ~0u : 0u);
    const std::vector<size_t> sources(vals.begin(), vals.end());
    const std::string what = std::string("host run of '") + v.name + "', n = " + std::to_string(n) + (descending ? ", descending" : "");
    const bool ok = sameKeys(what, keys, referenceSort(input, descending).keys) &&
                    checkPermutation(what.c_str(), keys.data(), sources.data(), input.data(), n);
    expect(ok, what + ": the network does not sort");
    return ok;
}

int runSelftest() {
    // 12.1 on the seed's example: the split at distance 4, both halves still bitonic.
    std::vector<int32_t> a = kSeedBitonic;
    const std::vector<int32_t> valley = {8, 6, 4, 2, 3, 5, 7, 9}, notBitonic = {1, 3, 1, 2};
    expect(isBitonic(a.data(), 8) && isBitonic(valley.data(), 8) && !isBitonic(notBitonic.data(), 4),
           "12.1: the seed's input and a valley are bitonic, 1 3 1 2 is not");
    for (size_t i = 0; i < 4; ++i) compareExchangeAt<int32_t, false>(a.data(), nullptr, i, i + 4, true, 0);
    expect(a == kSeedPasses[0] && isBitonic(a.data(), 4) && isBitonic(a.data() + 4, 4), "12.1: split of the seed's example");
    // 12.2: the seed's three passes, then every 0-1 bitonic input up to 256 keys: a merger that sorts those sorts every
    // bitonic input. (12.3's example is one of the 0-1 principle's cases below, its 10 launches a pass count.)
    for (unsigned pass = 1, lastDist = 4; pass <= 3; ++pass, lastDist /= 2) {
        a = kSeedBitonic;
        mergeInOneBlockBody(0, 1, a.data(), 8, lastDist, 0);
        expect(a == kSeedPasses[pass - 1], "12.2: merge in one block leaves the seed's example wrong after pass " + std::to_string(pass));
    }
    bool failed = false;
    for (unsigned cnt = 2; cnt <= 256 && !failed; cnt *= 2)
        for (unsigned x = 0; x <= cnt; ++x)
            for (unsigned y = x; y <= cnt; ++y)
                for (uint32_t outer = 0; outer < 2 && !failed; ++outer) {
                    std::vector<uint32_t> k(cnt);
                    for (unsigned i = 0; i < cnt; ++i) k[i] = (i >= x && i < y) ? 1 - outer : outer;
                    mergeInOneBlockBody(0, 1, k.data(), cnt, 1, 0);
                    failed = !std::is_sorted(k.begin(), k.end());
                }
    expect(!failed, "12.2: merge in one block leaves a 0-1 bitonic input unsorted");
    // The swizzle. (The window and strided-tile maps are proven by the plan runs below: a map that missed or repeated
    // an element would lose a key, which the permutation check reports.)
    std::vector<int> seen(Tuning::nv, 0);
    bool chunksOk = true;
    for (unsigned L = 0; L < Tuning::nv; L += Tuning::chunk) {
        const unsigned p = swizzle(L);
        const uint4 moved = xorPermute(make_uint4(0, 1, 2, 3), p & 3u);
        const uint32_t words[Tuning::chunk] = {moved.x, moved.y, moved.z, moved.w};
        for (unsigned i = 0, at; i < Tuning::chunk; ++i)
            chunksOk = chunksOk && ++seen[swizzle(L + i)] == 1 && (at = swizzle(L + i) - (p & ~3u)) < Tuning::chunk && words[at] == i;
    }
    expect(chunksOk, "swizzle is a permutation of the tile that keeps a 16-byte chunk in one group of 4, as xorPermute");
    // Pass counts: one launch per (k, j) is L(L+1)/2, and every plan performs the same (k, j) sequence, in order.
    for (int L = 0; L <= 40; ++L) {
        const size_t n = size_t{1} << L, odd = n + 1 + n / 3;
        const auto naive = distancesOf(versions()[0].plan(n));
        expect(naive.size() == static_cast<size_t>(L) * (L + 1) / 2, "pass count for n = 2^" + std::to_string(L) + " is sum of log2(k)");
        for (const Version& v : versions())
            expect(distancesOf(v.plan(n)) == naive && distancesOf(v.plan(odd)) == distancesOf(versions()[1].plan(odd)),
                   std::string("plan of '") + v.name + "' covers every (k, j) once, in order");
    }

    // The 0-1 principle: a network sorts every input iff it sorts every 0-1 input. All of them, n <= 16 (n <= 8 for the
    // tile rows, a whole tile each), both directions. A row's first failure ends its tests (a few lines, not sixty).
    std::vector<bool> broken(versions().size(), false);
    for (size_t n = 1; n <= 16; ++n)
        for (size_t r = 0; r < versions().size(); ++r) {
            const auto plan = versions()[r].plan(n);
            if (broken[r] || !versions()[r].accepts(n) || (plan[0].step != Step::Copy && n > 8)) continue;
            for (uint32_t bits = 0; bits < (2u << n) && !broken[r]; ++bits) {  // the top bit: the direction
                std::vector<uint32_t> keys(n), unused(n);
                for (size_t i = 0; i < n; ++i) keys[i] = (bits >> i) & 1u;
                runPlanOnHost<uint32_t, false>(plan, keys, unused, (bits >> n) ? ~0u : 0u);
                broken[r] = (bits >> n) ? !std::is_sorted(keys.rbegin(), keys.rend()) : !std::is_sorted(keys.begin(), keys.end());
            }
            expect(!broken[r], std::string("0-1 principle: '") + versions()[r].name + "' network does not sort n = " + std::to_string(n));
        }
    // Random lengths, key-value, both directions; then two fused groups in one stage (n > 2^19), the other key types.
    for (size_t n : {size_t{3}, size_t{5}, size_t{100}, size_t{1000}, size_t{4095}, size_t{4097}, size_t{12345}, size_t{70001}})
        for (size_t r = 0; r < versions().size(); ++r)
            for (int d = 0; d < 2; ++d)
                if (!broken[r] && versions()[r].accepts(n) && (versions()[r].plan(n)[0].step != Step::Copy || n < 20000))
                    broken[r] = !selftestPlan<uint32_t>(versions()[r], n, d == 1, SortShape::ManyTies);  // 12345 covers one-pass rows
    const Version &tiles = versions()[2], &fusedShared = versions()[3];
    selftestPlan<float>(fusedShared, (size_t{1} << 19) + 5, false, SortShape::Uniform);
    selftestPlan<int32_t>(tiles, 70001, true, SortShape::FewDistinct);
    selftestPlan<float>(fusedShared, 4097, true, SortShape::SignedZeros);
    std::printf("selftest covered: 12.1 split, 12.2 passes and every 0-1 bitonic input up to 256 keys, the swizzle, pass "
                "counts, 0-1 principle (n <= 16; tile rows n <= 8), random inputs up to 2^19+5\n");
    return selftestVerdict();
}

// ================================================================================== main ==
int main(int argc, char** argv) {
    SortOptions o;
    auto read = [&](const Args& args, const Run& run) {
        readSortOptions(args, run, o, size_t{1} << 24, size_t{1} << 20);
        if (args.has("--verify") && !sortValuesFit(o.n))  // --verify sorts key-value too
            args.fail("--verify carries 32-bit indices, so --n must be below 2^32 - 1, got " + std::to_string(o.n));
    };
    return lessonEntry(argc, argv, {"bitonic_sort", "Chapter 12: bitonic sort, from one compare-exchange to a multi-block sort of any size",
                                    sortOptions("number of keys, e.g. 1000003 or 2^24 (default 2^24; --quick 2^20)",
                                                "key-value: the value is the original index, checked as a permutation", nullptr),
                                    {"seed", "any-n", "tiles", "fused-shared"}, read, runSelftest,
                                    [&](const Run& r) { return runVerify(o, r); },
                                    [&](const Run& r) { return onKeyType(o.key, [&](auto key) { return runLesson<decltype(key)>(o, r); }); }});
}

// Chapter 14.1-14.2: merge sort. A merge of two sorted runs is parallel once every output position finds its co-rank
// (how many of the first k outputs come from the left run) by its own binary search; a bottom-up merge sort is that
// merge applied to every pair of runs, once per doubling width. Part A launches the course's two kernels (one thread
// per output, one launch per width). Part B grows them into a sort that stands beside CUB's: a block sort of large
// tiles, then merge passes that merge two or four runs at once, tile by tile, each tile found by a co-rank search.
// Every pass reads and writes every key once, so fewer passes is the lever.
//
// Build (one file, 29-39 s on 2 cores, 2026-12-06):
//   nvcc -std=c++17 -O3 -arch=sm_75 -o merge_sort merge_sort.cu
//   (your card's -arch, e.g. sm_90 on an H100/H200; tile shapes are chosen at run time)
// Run:
//   ./merge_sort                  the course's traces, checks, the table and each pass (2^28 uint32 keys), the size sweep
//   ./merge_sort --dist all       a table per distribution, then a summary
//   ./merge_sort --pairs --key float --descending --n 1000003    key-value (values = original index)
//   ./merge_sort --verify         every row on the adversarial inputs, every key type and order
//   ./merge_sort --selftest       the course's traces, every piece and every kernel's steps checked on the host (no GPU)
// Reading map: "Part A" (the tie rule, co_rank, the 14.1 and 14.2 kernels, their worked examples); "Part B" (tuning,
// pieces, block sort, merge passes, the plan); "the variant table"; "selftest"; "the lesson"; "main".
// Change: --n, --key, --input/--dist, --pairs, --descending, --only, --sizes. Exercises (README.md), each caught by the checks:
//   -DEXERCISE_NO_BOUNDARY_GUARD  14.1's trap: read the exhausted run
//   -DEXERCISE_FORGET_PAIR_START  14.2's trap: a pair-local index used as a global one
//   -DEXERCISE_SEED_TIE_TEST      the course's strict A[i] < B[j-1]: ties leave unstably (caught only by provenance)

#include "../common/selftest.hpp"
#include "../common/sort_lesson.hpp"  // and with it the options, the inputs, the sort buffers, the variant table

#include <cuda_pipeline.h>

#include <functional>
#include <map>
#include <optional>
#include <utility>

// The order is common's rank (key_order.hpp: IEEE totalOrder for floats; flip = ~0 sorts descending).
// Part A compares keys by it (RankLess); Part B maps keys to ranks once (RankMap) and compares ranks.

// ================================================================ Part A
// The course's co-rank in its own form (bisection on i, midpoint rounded up, three outcomes) with one change, the tie
// rule: its first test A[i] < B[j - 1] takes a B equal to an untaken A (unstable, invisible to a values check); A[i] <=
// B[j - 1] takes the A first. (Each merge lesson keeps its own form on purpose; Part B's mergePath is
// ch12-merge-tiled's co_rank.)

template <class Key, class Less>
__host__ __device__ inline void co_rank(size_t k, const Key* A, size_t m, const Key* B, size_t n,
                                        size_t* out_i, size_t* out_j, Less less) {
    size_t i_low = (k > n) ? (k - n) : 0;
    size_t i_high = (k < m) ? k : m;
    while (i_low < i_high) {
        const size_t i = (i_low + i_high + 1) / 2;
        const size_t j = k - i;
#ifdef EXERCISE_SEED_TIE_TEST
        if (j > 0 && i < m && less(A[i], B[j - 1])) {  // the course's strict test
#else
        if (j > 0 && i < m && !less(B[j - 1], A[i])) {  // A[i] <= B[j-1]: too few from A
#endif
            i_low = i;
        } else if (i > 0 && j < n && less(B[j], A[i - 1])) {  // A[i-1] > B[j]: too many from A
            i_high = i - 1;
        } else {
            i_low = i;
            break;
        }
    }
    *out_i = i_low;
    *out_j = k - i_low;
}

// Which output of the merge position k is, once its co-rank (i, j) is known. The boundary guard is the course's first
// trap: once i == m (or j == n) that run is exhausted and A[i] (B[j]) lies past its end.
template <class Key, class Less>
__host__ __device__ inline bool take_from_A(const Key* A, size_t m, const Key* B, size_t n, size_t i,
                                            size_t j, Less less) {
#ifdef EXERCISE_NO_BOUNDARY_GUARD
    (void)m;
    (void)n;
    return !less(B[j], A[i]);  // reads A[m] or B[n] at the ends
#else
    return i < m && (j >= n || !less(B[j], A[i]));  // ties: A first
#endif
}

// 14.1, one output position k: its co-rank, then the one key it takes. `source` (may be null) records provenance: s <
// m is A[s], else B[s - m]. The kernel runs it for its thread; --selftest runs it for every k.
template <class Key, class Less>
__host__ __device__ inline void mergeOutput(size_t k, const Key* A, size_t m, const Key* B, size_t n, Key* out,
                                            size_t* source, Less less) {
    size_t i, j;
    co_rank(k, A, m, B, n, &i, &j, less);
    const bool fromA = take_from_A(A, m, B, n, i, j, less);
    out[k] = fromA ? A[i] : B[j];
    if (source) source[k] = fromA ? i : m + j;
}

template <class Key, class Less> __global__ void merge_corank_kernel(const Key* A, size_t m, const Key* B, size_t n, Key* out, size_t* source, Less less) {
    const size_t k = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < m + n) mergeOutput(k, A, m, B, n, out, source, less);
}

// 14.2, one output position of one pass of the bottom-up sort: the thread finds its pair of runs from its global
// position (pair_start), then merges within that pair. `vin`/`vout` (may be null) carry a value with each key (the
// original index, for the checks).
template <class Key, class Less>
__host__ __device__ inline void passOutput(size_t global_k, const Key* in, Key* out, const uint32_t* vin,
                                           uint32_t* vout, size_t n, size_t width, Less less) {
    const size_t pair_start = (global_k / (2 * width)) * (2 * width);
    const size_t left_len = (n - pair_start < width) ? n - pair_start : width;
    const size_t mid = pair_start + left_len;
    const size_t right_len = (n - mid < width) ? n - mid : width;
    const size_t k = global_k - pair_start;  // this thread's output index within its pair
    const Key *A = in + pair_start, *B = in + mid;
    size_t i, j;
    co_rank(k, A, left_len, B, right_len, &i, &j, less);
    const bool fromA = take_from_A(A, left_len, B, right_len, i, j, less);
#ifdef EXERCISE_FORGET_PAIR_START
    const size_t dst = k;  // the trap: a pair-local index used as a global one
#else
    const size_t dst = pair_start + k;
#endif
    out[dst] = fromA ? A[i] : B[j];
    if (vout) vout[dst] = fromA ? vin[pair_start + i] : vin[mid + j];
}

template <class Key, class Less> __global__ void mergesort_pass_kernel(const Key* in, Key* out, const uint32_t* vin, uint32_t* vout, size_t n, size_t width, Less less) {
    const size_t global_k = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (global_k < n) passOutput(global_k, in, out, vin, vout, n, width, less);
}

// Launch geometry of the course's kernels: one thread per output position.
constexpr unsigned kSeedThreads = 256;

// The course's sort: widths 1, 2, 4, ... one launch each, ping-ponging between two buffers. Returns which buffer holds
// the result (0: keys/vals, 1: tmpKeys/tmpVals). `onPass(width, buffer)` lets the trace print.
template <class Key, class Less>
int seedSort(Key* keys, uint32_t* vals, Key* tmpKeys, uint32_t* tmpVals, size_t n, Less less,
             const std::function<void(size_t, int)>& onPass = {}) {
    int current = 0;
    for (size_t width = 1; width < n; width *= 2) {
        Key *src = current ? tmpKeys : keys, *dst = current ? keys : tmpKeys;
        uint32_t *vsrc = vals ? (current ? tmpVals : vals) : nullptr, *vdst = vals ? (current ? vals : tmpVals) : nullptr;
        mergesort_pass_kernel<<<gridFor(n, kSeedThreads, "mergesort_pass_kernel"), kSeedThreads>>>(src, dst, vsrc, vdst, n, width, less);
        CUDA_CHECK_LAUNCH("mergesort_pass_kernel");
        current ^= 1;
        if (onPass) onPass(width, current);
    }
    return current;
}

// The course's worked examples from real launches, checked.
bool seedExamples() {
    const RankLess<int32_t> ascending{0};
    const std::vector<int32_t> A = {1, 3, 6, 8}, B = {2, 4, 5, 7}, input = {5, 2, 8, 1, 9, 3, 7, 4};
    DeviceBuffer<int32_t> dA(4), dB(4), dOut(8), d0(8), d1(8);
    dA.upload(A.data(), 4), dB.upload(B.data(), 4);
    dOut.poison();
    merge_corank_kernel<<<1, 8>>>(dA.get(), 4, dB.get(), 4, dOut.get(), nullptr, ascending);  // a thread an output
    CUDA_CHECK_LAUNCH("merge_corank_kernel");
    std::vector<int32_t> got(8);
    dOut.download(got.data(), 8);
    std::printf("14.1 merge_corank_kernel, 8 threads: %s and %s -> %s\n", spacedKeys(A).c_str(), spacedKeys(B).c_str(),
                spacedKeys(got).c_str());
    bool ok = compareExact("14.1 the seed's merge", got.data(), std::vector<int32_t>({1, 2, 3, 4, 5, 6, 7, 8}).data(), 8);
    const std::vector<std::vector<int32_t>> want = {{2, 5, 1, 8, 3, 9, 4, 7}, {1, 2, 5, 8, 3, 4, 7, 9}, {1, 2, 3, 4, 5, 7, 8, 9}};
    d0.upload(input.data(), 8);
    d1.poison();
    std::printf("14.2 mergesort_pass_kernel, 8 threads, input: %s\n", spacedKeys(input).c_str());
    int pass = 0;
    seedSort<int32_t>(d0.get(), nullptr, d1.get(), nullptr, 8, ascending, [&](size_t width, int buffer) {
        (buffer ? d1 : d0).download(got.data(), 8);
        std::printf("     launch %d (width %zu): %s\n", pass + 1, width, spacedKeys(got).c_str());
        ok = compareExact(("14.2 the seed's pass " + std::to_string(pass + 1)).c_str(), got.data(), want[pass].data(), 8) && ok;
        ++pass;
    });
    return ok && pass == 3;
}

// ================================================================ Part B
// Production. Keys travel as ranks (common's RankMap, applied as the block sort loads and undone as the last
// pass stores: every kernel is compiled once for all key types and orders), so each comparison is one unsigned
// compare. Ties take the left run in every merge (and with values in every thread's sort): the sort is stable.
// A kernel is a few steps over a tile in shared memory, each merge one mergePath and one serialMerge:
//   block sort:  loadTile | threadSort | (stageThread | blockRound) x log2(blockNt) | stageThread | storeTile
//   partition:   tileSplit, a thread a tile (partitionKernel): four-way, and two-way past kOwnSplitWaves; else in the block
//   merge pass:  (tileSplit x 2) | loadSpans | mergeRound (once two-way, twice four-way) | storeTile

// ------------------------------------------------------------------ tuning
// One struct a tile shape, the only source of tile and shared-memory sizes: nt threads, vt keys a thread,
// nv = nt * vt keys a merge tile; blockNt, blockVt and tile the same for the block sort, whose tiles are the
// runs the passes start from. vt odd: thread t's accesses t * vt + i miss each other's banks.
template <int kNt, int kVt, int kBlockNt, int kBlockVt, int kKeysMergeBlocks = 0> struct Tuning {
    static constexpr int nt = kNt, vt = kVt, nv = kNt * kVt;
    static constexpr int blockNt = kBlockNt, blockVt = kBlockVt, tile = kBlockNt * kBlockVt;
    static constexpr int keysMergeBlocks = blocksFromSm80(kKeysMergeBlocks);  // keys-alone passes' blocks an SM (none in an sm_75 build)
    // A buffer: its keys, a slot for the sentinel, whole 16-byte chunks. The block sort has one (it merges into
    // registers), a pass two (ping-pong).
    static constexpr int tileSlots = (tile + 4) / 4 * 4, nvSlots = (nv + 4) / 4 * 4;
    static constexpr size_t blockSortBytes(bool pairs) { return size_t{4} * tileSlots * (pairs ? 2 : 1); }
    static constexpr size_t mergeBytes(bool pairs) { return size_t{8} * nvSlots * (pairs ? 2 : 1); }
    static constexpr size_t bytes(bool pairs) { return std::max(blockSortBytes(pairs), mergeBytes(pairs)); }
    static_assert(kVt % 2 == 1 && kBlockVt % 2 == 1, "vt must be odd (conflict-free strided shared access)");
    static_assert((kNt & (kNt - 1)) == 0 && (kBlockNt & (kBlockNt - 1)) == 0 && kNt >= 64,
                  "threads a power of two, two warps or more (a two-way merge block's two searches)");
    static_assert(tile % nv == 0, "a merge tile must not straddle two groups of runs (they start at multiples of tile)");
    static_assert(nv % 4 == 0 && tile % 4 == 0, "tiles start on 16-byte boundaries (vector loads and stores)");
    static_assert(bytes(true) <= 227 * 1024, "a shape must fit an sm_90 block (227 KiB, opted in)");
};

// The shapes, smallest first, two rows each (two-way, four-way passes); rows the card cannot hold are left out.
using TuneT4 = Tuning<128, 15, 256, 15>;       // tile 3840 (30 KiB with values): a T4's
using TuneKeys = Tuning<256, 11, 512, 33, 8>;  // tile 16896 (66 KiB): two block-sort blocks an SM
using TunePairs = Tuning<128, 11, 512, 33>;    // tile 16896 keys and values (132 KiB)
static_assert(TuneT4::bytes(true) <= 48 * 1024, "the T4 shape must fit 48 KiB (every card, no opt-in)");
template <class... T> struct Shapes { static constexpr int smallestNv = std::min({T::nv...}); };
using KeysShapes = Shapes<TuneT4, TuneKeys>;
using PairsShapes = Shapes<TuneT4, TunePairs>;
constexpr int kSmallestNv = std::min(KeysShapes::smallestNv, PairsShapes::smallestNv);  // sizes the partitions
constexpr int kPartitionThreads = 256;
constexpr uint32_t kSentinel = 0xFFFFFFFFu;  // the largest rank: pads the last tile, ends a buffer's last run

// ---------------------------------------------------------------- pieces
// All __host__ __device__: --selftest runs every kernel's steps thread by thread.

// The first index in [begin, end) where takesA fails (end if none; it holds on a prefix), found by a whole warp: the
// lanes test 32 evenly spaced indices at once and the ballot keeps the stretch where it turns. A partition in global
// memory is a chain of dependent loads: over 2^22 keys 5 rounds of them, not 22. (The selftest runs the lanes in turn.)
#pragma nv_exec_check_disable  // takesA: mergePath's, or the selftest's host lambda
template <class Index, class Test> __host__ __device__ inline Index warpSearch(Index begin, Index end, Test takesA) {
    while (begin < end) {
        const Index step = (end - begin + 31) / 32;  // lane l tests begin + (l + 1) step - 1
#ifdef __CUDA_ARCH__
        const Index at = begin + static_cast<Index>((threadIdx.x & 31) + 1) * step - 1;
        const unsigned held = __popc(__ballot_sync(0xFFFFFFFFu, at < end && takesA(at)));
#else
        unsigned held = 0;
        for (Index at = begin + step - 1; at < end && takesA(at); at += step) ++held;
#endif
        begin += held * step;  // past the last index that holds; the next lane's (or end) fails
        end = begin + step - 1 < end ? begin + step - 1 : end;
    }
    return begin;
}

// Merge path on diagonal `diag` of runs a and b: how many of the first diag outputs come from a. Ties go to a (a[mid]
// is taken while a[mid] <= b[diag - 1 - mid]). co_rank as a lower bound: one test a step instead of two. kByWarp:
// the whole warp searches (warpSearch), every lane with the same arguments.
template <class Index, bool kByWarp = false>
__host__ __device__ inline Index mergePath(const uint32_t* a, Index aCount, const uint32_t* b, Index bCount, Index diag) {
    Index begin = diag > bCount ? diag - bCount : 0, end = diag < aCount ? diag : aCount;
    auto takesA = [&](Index mid) { return !(b[diag - 1 - mid] < a[mid]); };
    if constexpr (kByWarp) return warpSearch(begin, end, takesA);
    else {
        while (begin < end) {
            const Index mid = (begin + end) >> 1;  // both non-negative: a shift, no signed-division fix-up
            if (takesA(mid)) begin = mid + 1;
            else end = mid;
        }
        return begin;
    }
}

// The serial merge: steps [first, last) of a walk from split (a, b) of runs a[.., aEnd) and b[.., bEnd) in one array;
// step i's key goes to out[i], its position to from[i]. Ties take a. An exhausted b offers the sentinel, which never
// beats an a key, so only a's bound is tested. Nothing past b is read: the sentinel is keys[bEnd] (kBSentinel) or
// given. kFull: every step is real. Pos: a pointer (mergeWindow's, keys alone: one add a step) or an index.
__host__ __device__ inline uint32_t keyAt(const uint32_t* keys, int pos) { return keys[pos]; }
__host__ __device__ inline uint32_t keyAt(const uint32_t*, const uint32_t* pos) { return *pos; }
__host__ __device__ inline int indexOf(const uint32_t*, int pos) { return pos; }
__host__ __device__ inline int indexOf(const uint32_t* keys, const uint32_t* pos) { return static_cast<int>(pos - keys); }
template <int kVt, bool kFull, bool kBSentinel, class Pos>
__host__ __device__ inline void serialMerge(const uint32_t* keys, Pos a, Pos aEnd, Pos b, Pos bEnd, int first, int last,
                                            uint32_t (&out)[kVt], int (&from)[kVt]) {
    auto read = [&](Pos at) { return kBSentinel || at < bEnd ? keyAt(keys, at) : kSentinel; };
    uint32_t aKey = read(a), bKey = read(b);
    DEVICE_UNROLL
    for (int i = 0; i < kVt; ++i) {
        if (kFull || (i >= first && i < last)) {
            const bool takeA = a < aEnd && !(bKey < aKey);
            const Pos at = takeA ? a : b;
            out[i] = takeA ? aKey : bKey;
            from[i] = indexOf(keys, at);
            const uint32_t next = read(at + 1);
            if (takeA) aKey = next, a = at + 1;
            else bKey = next, b = at + 1;
        }
    }
}

// Per-thread networks. With values: odd-even transposition sort (a swap only when the right key is strictly smaller:
// stable). Keys alone (stability is invisible): Batcher's odd-even merge sort without the comparators past vt: 246 for
// 33 keys, not 528, listed at compile time and applied by a fold.
template <int kVt> __host__ __device__ inline void oddEvenTranspositionSort(uint32_t (&k)[kVt], uint32_t (&v)[kVt]) {
    DEVICE_UNROLL
    for (int round = 0; round < kVt; ++round) {
        DEVICE_UNROLL
        for (int i = round & 1; i + 1 < kVt; i += 2) {
            const bool swap = k[i + 1] < k[i];
            const uint32_t k0 = k[i], k1 = k[i + 1], v0 = v[i], v1 = v[i + 1];
            k[i] = swap ? k1 : k0, k[i + 1] = swap ? k0 : k1;
            v[i] = swap ? v1 : v0, v[i + 1] = swap ? v0 : v1;
        }
    }
}
struct Comparator { int a, b, count; };  // comparator number `at` of the network, and how many it has
__host__ __device__ constexpr Comparator oddEvenComparator(int vt, int at) {
    int n = 1, c = 0;
    while (n < vt) n *= 2;
    Comparator found{0, 0, 0};
    for (int p = 1; p < n; p *= 2)
        for (int q = p; q >= 1; q /= 2)
            for (int j = q % p; j + q < n; j += 2 * q)
                for (int i = 0; i < q; ++i)
                    if (i + j + q < vt && (i + j) / (2 * p) == (i + j + q) / (2 * p)) {
                        if (c == at) found = {i + j, i + j + q, 0};
                        ++c;
                    }
    found.count = c;
    return found;
}
template <int kA, int kB, int kVt> __host__ __device__ __forceinline__ void compareExchange(uint32_t (&k)[kVt]) {
    const uint32_t lo = k[kA] < k[kB] ? k[kA] : k[kB], hi = k[kA] < k[kB] ? k[kB] : k[kA];
    k[kA] = lo, k[kB] = hi;
}
template <int kVt, int... kAt>
__host__ __device__ __forceinline__ void applyNetwork(uint32_t (&k)[kVt], std::integer_sequence<int, kAt...>) {
    (compareExchange<oddEvenComparator(kVt, kAt).a, oddEvenComparator(kVt, kAt).b>(k), ...);
}
template <int kVt> __host__ __device__ inline void oddEvenMergeSort(uint32_t (&k)[kVt]) {
    applyNetwork(k, std::make_integer_sequence<int, oddEvenComparator(kVt, 0).count>{});
}

// Every kernel's last step: a tile's count keys from shared memory to keysOut (16-byte aligned), a 16-byte chunk a
// thread (a ragged end key by key), ranks turned back into keys on the sort's last pass (toKey).
template <int kNt, int kItems, bool kPairs>
__host__ __device__ inline void storeTile(int tid, int count, const uint32_t* sKeys, const uint32_t* sVals,
                                          uint32_t* keysOut, uint32_t* valsOut, RankMap map, bool toKey) {
    DEVICE_UNROLL
    for (int r = 0; r < ceilDiv(kItems, 4 * kNt); ++r) {
        const int x = (r * kNt + tid) * 4;
        if (x + 4 <= count) {
            uint4 k = load16(sKeys + x);
            if (toKey) k = make_uint4(map.word(k.x), map.word(k.y), map.word(k.z), map.word(k.w));
            store16(keysOut + x, k);
            if (kPairs) store16(valsOut + x, load16(sVals + x));
        } else {
            for (int e = x; e < count; ++e) {
                keysOut[e] = toKey ? map.word(sKeys[e]) : sKeys[e];
                if (kPairs) valsOut[e] = sVals[e];
            }
        }
    }
}

// ------------------------------------------------------------- block sort
// A block sorts a tile: vt keys a thread by a network, then log2(blockNt) rounds merging runs of vt, 2 vt, ... keys,
// outputs held in registers. The last tile is padded with the largest rank, which sorts after every real key (padding
// sits at the end, and every merge is stable).

// loadTile: 16-byte loads where four keys are whole, key by key at the tail.
template <int kNt, int kItems, bool kPairs>
__host__ __device__ inline void loadTile(int tid, int count, const uint32_t* keysIn, const uint32_t* valsIn, RankMap map,
                                         uint32_t* sKeys, uint32_t* sVals) {
    DEVICE_UNROLL
    for (int r = 0; r < ceilDiv(kItems, 4 * kNt); ++r) {
        const int x = (r * kNt + tid) * 4;
        if (x + 4 <= count) {
            const uint4 w = load16(keysIn + x);
            store16(sKeys + x, make_uint4(map.rank(w.x), map.rank(w.y), map.rank(w.z), map.rank(w.w)));
            if (kPairs) store16(sVals + x, load16(valsIn + x));
        } else if (x < kItems) {
            for (int e = x; e < x + 4; ++e) {
                sKeys[e] = e < count ? map.rank(keysIn[e]) : kSentinel;
                if (kPairs) sVals[e] = e < count ? valsIn[e] : 0u;
            }
        }
    }
    if (tid == 0) sKeys[kItems] = kSentinel;
}

// threadSort: the thread's vt consecutive keys into registers, sorted.
template <int kVt, bool kPairs>
__host__ __device__ inline void threadSort(int tid, const uint32_t* sKeys, const uint32_t* sVals, uint32_t (&k)[kVt],
                                           uint32_t (&v)[kVt]) {
    DEVICE_UNROLL
    for (int i = 0; i < kVt; ++i) k[i] = sKeys[tid * kVt + i], v[i] = kPairs ? sVals[tid * kVt + i] : 0u;
    if constexpr (kPairs) oddEvenTranspositionSort(k, v);
    else oddEvenMergeSort(k);
}

// stageThread: the thread's vt keys back where its run of the tile lies.
template <int kVt, bool kPairs>
__host__ __device__ inline void stageThread(int tid, const uint32_t (&k)[kVt], const uint32_t (&v)[kVt], uint32_t* sKeys,
                                            uint32_t* sVals) {
    DEVICE_UNROLL
    for (int i = 0; i < kVt; ++i) {
        sKeys[tid * kVt + i] = k[i];
        if (kPairs) sVals[tid * kVt + i] = v[i];
    }
}

// blockRound: runs of coop / 2 * vt keys merged in pairs, coop threads a pair. Each window is whole and in one pair:
// the full walk at once (mergeWindow's pair lookup and dispatch cost the block sort 9 %).
template <int kVt, bool kPairs>
__host__ __device__ inline void blockRound(int tid, int coop, const uint32_t* sKeys, const uint32_t* sVals,
                                           uint32_t (&k)[kVt], uint32_t (&v)[kVt]) {
    int from[kVt];
    const int width = coop / 2 * kVt, begin = (tid & ~(coop - 1)) * kVt, mid = begin + width, diag = tid * kVt - begin;
    const int a = begin + mergePath<int>(sKeys + begin, width, sKeys + mid, width, diag);
    serialMerge<kVt, true, false>(sKeys, a, mid, mid + diag - (a - begin), mid + width, 0, kVt, k, from);
    DEVICE_UNROLL
    for (int i = 0; i < kVt; ++i) v[i] = kPairs ? sVals[from[i]] : 0u;
}

// coop threads share a pair's keys: up to a warp's worth a warp barrier is enough, and the other warps go on.
__device__ inline void syncGroup(int threads) { threads <= 32 ? __syncwarp() : __syncthreads(); }

template <class T, bool kPairs> __global__ void __launch_bounds__(T::blockNt) blockSortKernel(const uint32_t* keysIn, const uint32_t* valsIn, uint32_t* keysOut, uint32_t* valsOut, size_t n, RankMap map, bool toKey) {
    extern __shared__ uint4 smem[];  // uint4: 16-byte aligned; T::blockSortBytes(kPairs)
    uint32_t *sKeys = reinterpret_cast<uint32_t*>(smem), *sVals = sKeys + T::tileSlots;
    const int tid = threadIdx.x;
    const size_t base = static_cast<size_t>(blockIdx.x) * T::tile;
    const int count = static_cast<int>(n - base < size_t{T::tile} ? n - base : size_t{T::tile});
    loadTile<T::blockNt, T::tile, kPairs>(tid, count, keysIn + base, kPairs ? valsIn + base : nullptr, map, sKeys, sVals);
    __syncthreads();
    uint32_t k[T::blockVt], v[T::blockVt];
    threadSort<T::blockVt, kPairs>(tid, sKeys, sVals, k, v);
    for (int coop = 2; coop <= T::blockNt; coop *= 2) {
        syncGroup(coop);  // the pair's threads have read the last round's keys
        stageThread<T::blockVt, kPairs>(tid, k, v, sKeys, sVals);
        syncGroup(coop);
        blockRound<T::blockVt, kPairs>(tid, coop, sKeys, sVals, k, v);
    }
    __syncthreads();
    stageThread<T::blockVt, kPairs>(tid, k, v, sKeys, sVals);
    __syncthreads();
    storeTile<T::blockNt, T::tile, kPairs>(tid, count, sKeys, sVals, keysOut + base, kPairs ? valsOut + base : nullptr, map, toKey);
}

// ------------------------------------------------------------ merge passes
// A pass merges groups of kWays runs of `width`. Output r of runs A, B, C, D is output r of merge(merge(A, B),
// merge(C, D)), ties to the left: the stable order of A B C D, the r smallest keys by (rank, run, position).

// The group of kWays runs that position g lies in: it starts at a multiple of kWays * width; run i, at start + i *
// width, holds up to width keys.
template <int kWays> struct Group {
    size_t start, len[kWays];
    __host__ __device__ size_t total() const { size_t sum = 0; for (int i = 0; i < kWays; ++i) sum += len[i]; return sum; }
};
template <int kWays> __host__ __device__ inline Group<kWays> groupOf(size_t g, size_t width, size_t n) {
    Group<kWays> q;
    q.start = g / (kWays * width) * (kWays * width);
    size_t rest = n - q.start;
    for (int i = 0; i < kWays; ++i) q.len[i] = rest < width ? rest : width, rest -= q.len[i];
    return q;
}

// The k-way co-rank: how many of a group's first r outputs come from each run. Two runs: mergePath. Four: bracket
// halving, at most 4 (log2 width + 1) rounds of one load (a nested merge path takes log^2). Split i lies in [lo_i,
// hi_i]; with sum the sum of the open midpoints mid_i (closed: lo_i): sum >= r: the largest open midpoint key (by rank,
// then run) has sum keys or more before it, not among the first r: hi = mid; sum < r: the smallest has at most sum, so
// is among them: lo = mid + 1. All closed: lo is the split.
template <int kWays, bool kByWarp>
__host__ __device__ inline void kWaySplit(const uint32_t* group, size_t width, const Group<kWays>& q, size_t r, size_t* split) {
    if constexpr (kWays == 2) {
        split[0] = mergePath<size_t, kByWarp>(group, q.len[0], group + width, q.len[1], r);
        split[1] = r - split[0];
    } else {
        const size_t total = q.total();
        size_t lo[kWays], hi[kWays];
        uint32_t midKey[kWays];
        DEVICE_UNROLL
        for (int i = 0; i < kWays; ++i) {
            const size_t others = total - q.len[i];  // run i gives at least r - others
            lo[i] = r > others ? r - others : 0;
            hi[i] = r < q.len[i] ? r : q.len[i];
            if (lo[i] < hi[i]) midKey[i] = group[i * width + (lo[i] + hi[i]) / 2];
        }
        while (true) {
            size_t sum = 0;
            int least = -1, most = -1;
            uint32_t leastKey = 0, mostKey = 0;
            DEVICE_UNROLL
            for (int i = 0; i < kWays; ++i) {
                const bool open = lo[i] < hi[i];
                sum += open ? (lo[i] + hi[i]) / 2 : lo[i];
                if (open && (least < 0 || midKey[i] < leastKey)) least = i, leastKey = midKey[i];  // ties: the earlier run
                if (open && (most < 0 || !(midKey[i] < mostKey))) most = i, mostKey = midKey[i];   // ties: the later run
            }
            if (least < 0) break;
            const bool tooMany = sum >= r;
            const int j = tooMany ? most : least;
            DEVICE_UNROLL
            for (int i = 0; i < kWays; ++i) {  // static indices only: the arrays stay in registers
                if (i != j) continue;
                const size_t mid = (lo[i] + hi[i]) / 2;
                if (tooMany) hi[i] = mid;
                else lo[i] = mid + 1;
                if (lo[i] < hi[i]) midKey[i] = group[i * width + (lo[i] + hi[i]) / 2];
            }
        }
        DEVICE_UNROLL
        for (int i = 0; i < kWays; ++i) split[i] = lo[i];
    }
}

// The partition: tile t's first output's k-way co-rank in its group, into split[0 .. kWays) (each entry from its
// run's start). Four-way by one thread; two-way by one thread, or kByWarp by a whole warp (mergePath's warpSearch).
template <int kWays, bool kByWarp = false>
__host__ __device__ inline void tileSplit(size_t t, const uint32_t* keys, size_t n, size_t width, size_t nv, size_t* split) {
    const Group<kWays> q = groupOf<kWays>(t * nv, width, n);
    kWaySplit<kWays, kByWarp>(keys + q.start, width, q, t * nv - q.start, split);
}

// A tile's runs end to end in a buffer, run r at [bound[r], bound[r + 1]); a round merges run 2q with run 2q + 1;
// merged() gives the next round's.
struct RunPair { int begin, mid, end; };  // a = [begin, mid), b = [mid, end)
template <int kRuns> struct TileRuns {
    int bound[kRuns + 1];
    __host__ __device__ int count() const { return bound[kRuns]; }
    __host__ __device__ RunPair pairAt(int p) const {
        RunPair s{bound[0], bound[1], bound[2]};
        DEVICE_UNROLL
        for (int q = 1; q < kRuns / 2; ++q)
            if (p >= bound[2 * q]) s = {bound[2 * q], bound[2 * q + 1], bound[2 * q + 2]};
        return s;
    }
    __host__ __device__ TileRuns<kRuns / 2> merged() const {
        TileRuns<kRuns / 2> next;
        DEVICE_UNROLL
        for (int r = 0; r <= kRuns / 2; ++r) next.bound[r] = bound[2 * r];
        return next;
    }
};

// Where tile t's spans lie: shared position x of run i comes from global bias[i] + x. splits: the tile's split,
// then the next tile's, where its span ends (or at its run's end where the group ends here).
template <int kWays> struct TileSpans {
    size_t t0, bias[kWays];
    TileRuns<kWays> runs;
};
template <int kWays>
__host__ __device__ inline TileSpans<kWays> tileSpansOf(size_t t, size_t nv, size_t n, size_t width, const size_t* splits) {
    TileSpans<kWays> s;
    s.t0 = t * nv;
    const Group<kWays> q = groupOf<kWays>(s.t0, width, n);
    const bool lastInGroup = s.t0 + nv >= q.start + q.total();  // a tile never straddles groups
    s.runs.bound[0] = 0;
    for (int i = 0; i < kWays; ++i) {
        const size_t from = splits[i], to = lastInGroup ? q.len[i] : splits[kWays + i];
        s.runs.bound[i + 1] = s.runs.bound[i] + static_cast<int>(to - from);
        s.bias[i] = q.start + i * width + from - static_cast<size_t>(s.runs.bound[i]);
    }
    return s;
}

// loadSpans: the spans into one buffer, the sentinel after them. From sm_80 an asynchronous copy (all the block's
// copies in flight, none held in registers); on a T4 a load and a store. waitForCopies ends them.
__host__ __device__ inline void copyWord(uint32_t* sharedDst, const uint32_t* globalSrc) {
#ifdef __CUDA_ARCH__
    __pipeline_memcpy_async(sharedDst, globalSrc, sizeof(uint32_t));
#else
    *sharedDst = *globalSrc;
#endif
}
__device__ inline void waitForCopies() { __pipeline_commit(); __pipeline_wait_prior(0); }
template <int kNt, int kWays, bool kPairs>
__host__ __device__ inline void loadSpans(int tid, const TileSpans<kWays>& s, const uint32_t* keysIn, const uint32_t* valsIn,
                                          uint32_t* sKeys, uint32_t* sVals) {
    for (int i = 0; i < kWays; ++i)
        for (int x = s.runs.bound[i] + tid; x < s.runs.bound[i + 1]; x += kNt) {
            copyWord(sKeys + x, keysIn + s.bias[i] + x);
            if (kPairs) copyWord(sVals + x, valsIn + s.bias[i] + x);
        }
    if (tid == 0) sKeys[s.runs.count()] = kSentinel;
}

// Thread tid's outputs [p, p + vt) of a round, p = tid * vt (fewer at the end): out[i] is output p + i, from[i] its
// position in keys. A window that runs into the next pair (a four-way first round: runs may be shorter than vt) walks
// its part of each. Returns how many it made.
template <int kVt, bool kPairs, class Runs>
__host__ __device__ inline int mergeWindow(int tid, const Runs& runs, const uint32_t* keys, uint32_t (&out)[kVt],
                                           int (&from)[kVt]) {
    const int count = runs.count();
    const int p = tid * kVt < count ? tid * kVt : count, end = p + kVt < count ? p + kVt : count;
    for (int q = p; q < end;) {
        const RunPair s = runs.pairAt(q);
        const int stop = end < s.end ? end : s.end, diag = q - s.begin;
        const int a = s.begin + mergePath<int>(keys + s.begin, s.mid - s.begin, keys + s.mid, s.end - s.mid, diag);
        const int b = s.mid + diag - (a - s.begin), first = q - p, last = stop - p;
        const bool full = first == 0 && last == kVt, sentinel = s.end == count;  // keys[count] holds the sentinel
        auto walk = [&](auto a, auto aEnd, auto b, auto bEnd) {  // positions: indices with values, pointers without
            if (full && sentinel) serialMerge<kVt, true, true>(keys, a, aEnd, b, bEnd, first, last, out, from);
            else if (full) serialMerge<kVt, true, false>(keys, a, aEnd, b, bEnd, first, last, out, from);
            else serialMerge<kVt, false, false>(keys, a, aEnd, b, bEnd, first, last, out, from);
        };
        if constexpr (kPairs) walk(a, s.mid, b, s.end);
        else walk(keys + a, keys + s.mid, keys + b, keys + s.end);
        q = stop;
    }
    return end - p;
}

// mergeRound: one round, from one buffer into the other, and the sentinel after its outputs for the next.
template <int kVt, bool kPairs, class Runs>
__host__ __device__ inline void mergeRound(int tid, const Runs& runs, const uint32_t* keys, const uint32_t* vals,
                                           uint32_t* outKeys, uint32_t* outVals) {
    uint32_t k[kVt];
    int from[kVt];
    const int p = tid * kVt, made = mergeWindow<kVt, kPairs>(tid, runs, keys, k, from);
    auto put = [&](int i) {
        outKeys[p + i] = k[i];
        if (kPairs) outVals[p + i] = vals[from[i]];
    };
    if (made == kVt) {  // every thread but a tile's last: no test a key
        DEVICE_UNROLL
        for (int i = 0; i < kVt; ++i) put(i);
    } else {
        DEVICE_UNROLL
        for (int i = 0; i < kVt; ++i)
            if (i < made) put(i);
    }
    if (tid == 0) outKeys[runs.count()] = kSentinel;
}

// The partition, a thread a tile, before the pass: four-way (too deep for the merge block), two-way past kOwnSplitWaves.
template <int kWays> __global__ void __launch_bounds__(kPartitionThreads) partitionKernel(const uint32_t* keys, size_t* partitions, size_t n, size_t width, size_t nv, size_t tiles) {
    const size_t t = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t < tiles) tileSplit<kWays>(t, keys, n, width, nv, partitions + kWays * t);
}

// A block a merge tile of nv outputs: its spans, merged in one round (two-way) or two (four-way: A with B and C with D,
// then the results). Its splits are partitionKernel's, or two-way without them (partitions null) the block's own: warp 0
// finds its tile's, warp 1 the next tile's (where the spans end; none past the group), a warpSearch each: one launch.
template <class T, int kWays, bool kPairs> __global__ void __launch_bounds__(T::nt, kPairs ? 0 : T::keysMergeBlocks) mergePassKernel(const uint32_t* keysIn, const uint32_t* valsIn, uint32_t* keysOut, uint32_t* valsOut, const size_t* partitions, size_t n, size_t width, RankMap map, bool toKey) {
    static_assert(kWays == 2 || kWays == 4, "two-way or four-way passes");
    extern __shared__ uint4 smem[];
    uint32_t* const keys[2] = {reinterpret_cast<uint32_t*>(smem), reinterpret_cast<uint32_t*>(smem) + T::nvSlots};
    uint32_t* const vals[2] = {keys[1] + T::nvSlots, keys[1] + 2 * T::nvSlots};  // pairs only
    const int tid = threadIdx.x, warp = tid / 32;
    __shared__ size_t ownSplits[4];  // this tile's split, then the next tile's
    const bool own = kWays == 2 && partitions == nullptr;
    const size_t next = blockIdx.x + size_t{1};  // warp-uniform: all 32 lanes search
    if (own && (warp == 0 || (warp == 1 && next < gridDim.x && next * T::nv % (2 * width) != 0))) {
        size_t split[2];
        tileSplit<2, true>(blockIdx.x + warp, keysIn, n, width, T::nv, split);
        if (tid % 32 == 0) ownSplits[2 * warp] = split[0], ownSplits[2 * warp + 1] = split[1];
    }
    if (own) __syncthreads();
    const TileSpans<kWays> s = tileSpansOf<kWays>(blockIdx.x, T::nv, n, width, own ? ownSplits : partitions + kWays * blockIdx.x);
    loadSpans<T::nt, kWays, kPairs>(tid, s, keysIn, valsIn, keys[0], vals[0]);
    waitForCopies();
    __syncthreads();
    mergeRound<T::vt, kPairs>(tid, s.runs, keys[0], vals[0], keys[1], vals[1]);
    if constexpr (kWays == 4) {
        __syncthreads();
        mergeRound<T::vt, kPairs>(tid, s.runs.merged(), keys[1], vals[1], keys[0], vals[0]);
    }
    __syncthreads();
    constexpr int last = kWays == 4 ? 0 : 1;
    storeTile<T::nt, T::nv, kPairs>(tid, s.runs.count(), keys[last], vals[last], keysOut + s.t0, kPairs ? valsOut + s.t0 : nullptr,
                                    map, toKey);
}

// --------------------------------------------------------------- the plan
// d doublings take the run width from the tile to n. Four-way passes take them two at a time, a two-way pass first when
// d is odd (where its partition search is shallowest, and the later passes are all four-way).
__host__ __device__ inline int doublings(size_t n, size_t tile) {
    int d = 0;
    for (size_t width = tile; width < n; width *= 2) ++d;
    return d;
}
struct MergeStep { size_t width; int ways; };
inline std::vector<MergeStep> mergeSteps(size_t n, size_t tile, int ways) {
    std::vector<MergeStep> steps;
    size_t width = tile;
    for (int d = doublings(n, tile); d > 0; d -= steps.back().ways / 2) {
        steps.push_back({width, ways == 4 && d % 2 == 0 ? 4 : 2});
        width *= steps.back().ways;
    }
    return steps;
}

// What a sort's passes read and write.
struct PassBuffers {
    const void* keysIn;      // n keys (Key)
    const uint32_t* valsIn;  // n values, or null for keys only
    void* keysOut;           // n keys (Key)
    uint32_t *valsOut, *tmpKeys, *tmpVals;  // n values; n words of scratch (ranks); n (pairs only)
    size_t* partitions;      // 4 * ceilDiv(n, kSmallestNv) + 1 entries
};

// A sort: passes over memory, each a timed step (common's TimedStep: a name, the run width it merges (the block
// sort: its tile) and a launch), ping-ponging so the last one lands in out.
// Two-way merge blocks find their own splits (a launch saved) up to this many waves of tiles; past it their wait idles SMs.
constexpr size_t kOwnSplitWaves = 8;
template <class T, bool kPairs> std::vector<TimedStep> planSort(const PassBuffers& buf, size_t n, RankMap map, int ways, int sms) {
    std::vector<TimedStep> plan;
    if (n == 0) return plan;
    const std::vector<MergeStep> steps = mergeSteps(n, T::tile, ways);
    const int merges = static_cast<int>(steps.size());
    auto keysAt = [&](int pass) {  // where pass p (0: the block sort) writes: the last one writes out
        return (merges - pass) % 2 == 0 ? static_cast<uint32_t*>(buf.keysOut) : buf.tmpKeys;
    };
    auto valsAt = [&](int pass) { return (merges - pass) % 2 == 0 ? buf.valsOut : buf.tmpVals; };
    const auto sortKernel = blockSortKernel<T, kPairs>;
    requireShared(sortKernel, T::blockSortBytes(kPairs), "blockSortKernel");  // past 48 KiB: the opt-in
    const unsigned sortBlocks = gridFor(n, T::tile, "blockSortKernel");
    const auto in = static_cast<const uint32_t*>(buf.keysIn);
    const uint32_t* vin = buf.valsIn;
    uint32_t *out = keysAt(0), *vout = valsAt(0);
    plan.push_back({"block sort", std::to_string(T::tile), [=] {
                        sortKernel<<<sortBlocks, T::blockNt, T::blockSortBytes(kPairs)>>>(in, vin, out, vout, n, map, merges == 0);
                        CUDA_CHECK_LAUNCH("blockSortKernel");
                    }});
    const size_t tiles = ceilDiv<size_t>(n, T::nv);
    const unsigned mergeBlocks = gridFor(tiles, 1, "mergePassKernel");
    for (int pass = 1; pass <= merges; ++pass) {
        const size_t width = steps[pass - 1].width;
        const bool four = steps[pass - 1].ways == 4, toKey = pass == merges;
        const uint32_t *in = keysAt(pass - 1), *vin = valsAt(pass - 1);
        uint32_t *out = keysAt(pass), *vout = valsAt(pass);
        const unsigned partitionBlocks = gridFor(tiles, kPartitionThreads, "partitionKernel");
        const auto kernel = four ? mergePassKernel<T, 4, kPairs> : mergePassKernel<T, 2, kPairs>;
        const auto partition = four ? partitionKernel<4> : partitionKernel<2>;
        requireShared(kernel, T::mergeBytes(kPairs), "mergePassKernel");
        int perSm = 0;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, T::nt, T::mergeBytes(kPairs)));
        size_t* parts = four || tiles > kOwnSplitWaves * perSm * sms ? buf.partitions : nullptr;  // null: the blocks' own
        plan.push_back({four ? "merge x4" : "merge x2", std::to_string(width), [=] {
                            if (parts) {
                                partition<<<partitionBlocks, kPartitionThreads>>>(in, parts, n, width, T::nv, tiles);
                                CUDA_CHECK_LAUNCH("partitionKernel");
                            }
                            kernel<<<mergeBlocks, T::nt, T::mergeBytes(kPairs)>>>(in, vin, out, vout, parts, n, width, map, toKey);
                            CUDA_CHECK_LAUNCH("mergePassKernel");
                        }});
    }
    return plan;
}

// ======================================================== the variant table
// One sort on the device: common's buffers (--pairs: values = the original index), the passes' scratch, each row's plan.
template <class Key> struct Sorting {
    SortBuffers<Key> d;
    bool descending;
    DeviceBuffer<uint32_t> tmpKeys, tmpVals;
    DeviceBuffer<size_t> partitions;  // four entries a tile at the smallest nv: the most
    std::map<std::string, std::vector<TimedStep>> plans;
    Sorting(const std::vector<Key>& input, bool pairs, bool descending_)
        : d(uploadSort(input, pairs)), descending(descending_), tmpKeys(input.size()), tmpVals(pairs ? input.size() : 0),
          partitions(4 * ceilDiv<size_t>(input.size(), kSmallestNv) + 1) {}
    void poison() { d.poison(); }
    PassBuffers buffers() { return {d.in.get(), d.vin.get(), d.out.get(), d.vout.get(), tmpKeys.get(), tmpVals.get(), partitions.get()}; }
};
template <class Key> using Row = Variant<Sorting<Key>>;

// A production row: a shape with two-way or four-way passes, its plan built once on the problem's buffers, the key
// order a RankMap.
template <class T, int kWays> std::string rowName() {
    return "blocksort " + std::to_string(T::blockNt) + "x" + std::to_string(T::blockVt) + ", " + std::to_string(kWays) +
           "-way merge " + std::to_string(T::nt) + "x" + std::to_string(T::vt);
}
template <class T, int kWays, class Key, bool kPairs>
void addRow(std::vector<Row<Key>>& rows, Sorting<Key>& s, const Run& run) {
    // Asked before the plan is built, which sets kernel attributes.
    const std::string name = rowName<T, kWays>();
    if (T::bytes(kPairs) > run.device.sharedPerBlock || !run.wants(name)) return;
    const auto plan = s.plans[name] = planSort<T, kPairs>(s.buffers(), s.d.n, rankMapOf<Key>(s.descending ? ~0u : 0u), kWays, run.device.smCount);
    rows.push_back({name, {std::to_string(T::tile), std::to_string(T::nv), std::to_string(plan.size())},
                    [plan](Sorting<Key>&) { for (const TimedStep& pass : plan) pass.launch(); }, static_cast<double>(plan.size())});
}
template <class Key, bool kPairs, class... T>
void addRows(std::vector<Row<Key>>& rows, Sorting<Key>& s, const Run& run, Shapes<T...>) {
    ((addRow<T, 2, Key, kPairs>(rows, s, run), addRow<T, 4, Key, kPairs>(rows, s, run)), ...);
}

// The row the sort runs at n, and why (the size sweep prints both beside the fastest row measured): the largest
// shape the card holds (the most keys a tile: the fewest passes), two-way passes below 2^25 keys, four-way from there.
template <class... T> std::pair<std::string, std::string> chosenRow(size_t n, bool pairs, const DeviceInfo& device, Shapes<T...>) {
    const bool fourWay = n >= size_t{1} << 25;
    std::string name;
    ((name = T::bytes(pairs) <= device.sharedPerBlock ? (fourWay ? rowName<T, 4>() : rowName<T, 2>()) : name), ...);
    return {name, fourWay ? "four-way from 2^25 keys: half the passes over memory (2^26: 2.50 ms, two-way 3.13; H200)"
                          : "two-way below 2^25 keys: a shallow partition, four-way's is deep (2^24: 0.747 ms, four-way 0.783; H200)"};
}

// The course's sort as a row: out = in, a launch a width between out and the scratch, a copy back if it ends there.
template <class Key> Row<Key> seedRow(Sorting<Key>& s) {
    const size_t n = s.d.n, launches = doublings(n, 1);
    return {"seed 14.2: one launch per width", {"1", "-", std::to_string(launches)},
            [](Sorting<Key>& p) {  // 4-byte keys: the scratch holds them
                uint32_t *tmp = p.tmpKeys.get(), *tmpVals = p.d.pairs ? p.tmpVals.get() : nullptr, *vout = p.d.pairs ? p.d.vout.get() : nullptr;
                auto copy = [&p](void* to, const void* from) { if (to) CUDA_CHECK(cudaMemcpyAsync(to, from, p.d.n * 4, cudaMemcpyDeviceToDevice)); };
                copy(p.d.out.get(), p.d.in.get()), copy(vout, p.d.vin.get());
                if (seedSort(p.d.out.get(), vout, reinterpret_cast<Key*>(tmp), tmpVals, p.d.n, RankLess<Key>{p.descending ? ~0u : 0u}) == 1)
                    copy(p.d.out.get(), tmp), copy(vout, tmpVals);
            }, static_cast<double>(launches + 1)};
}
constexpr size_t kSeedRowLimit = size_t{1} << 24;  // past this the course's O(n log^2 n) sort takes seconds
constexpr size_t kSeedVerifyLimit = size_t{1} << 22;  // --verify's many inputs: the course's row up to here

// The rows, simplest first, each a step from the one before (a T4 runs the 256x15 ones).
template <class Key> std::vector<Row<Key>> variantRows(Sorting<Key>& s, const Run& run, bool withSeed) {
    std::vector<Row<Key>> rows;
    if (withSeed && run.wants("seed")) rows.push_back(seedRow(s));
    s.d.pairs ? addRows<Key, true>(rows, s, run, PairsShapes{}) : addRows<Key, false>(rows, s, run, KeysShapes{});
    return rows;
}

// ================================================================= selftest
// Host only: the course's per-thread bodies and every kernel's own steps for every thread of every launch,
// each step for all threads before any thread's next (the barriers).

// The course's sort through passOutput, every width and output; one key past the end holds a sentinel (the
// smallest key), so that a read past a run's end changes the output.
template <class Key> std::vector<Key> hostSeedSort(std::vector<Key> keys, std::vector<uint32_t>& vals, bool descending,
                                                  std::vector<std::vector<Key>>* trace = nullptr) {
    const size_t n = keys.size();
    keys.push_back(keyOfRank<Key>(0, descending ? ~0u : 0u));
    vals.resize(n);
    std::iota(vals.begin(), vals.end(), 0u);
    vals.push_back(0xFFFFFFFFu);
    std::vector<Key> next(keys);
    std::vector<uint32_t> nextVals(vals);
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t k = 0; k < n; ++k)
            passOutput(k, keys.data(), next.data(), vals.data(), nextVals.data(), n, width, RankLess<Key>{descending ? ~0u : 0u});
        keys.swap(next), vals.swap(nextVals);
        if (trace) trace->push_back(std::vector<Key>(keys.begin(), keys.begin() + n));
    }
    keys.pop_back(), vals.pop_back();
    return keys;
}
template <class Key> bool hostSeedSortMatches(const std::vector<Key>& input, bool descending, const std::string& what) {
    std::vector<uint32_t> vals;
    const std::vector<Key> got = hostSeedSort(input, vals, descending);
    const SortReference<Key> want = referenceSort(input, descending);
    std::vector<size_t> sources(vals.begin(), vals.end());
    for (auto& s : sources) s = s == 0xFFFFFFFFu ? SIZE_MAX : s;
    return compareExact(what.c_str(), got.data(), want.keys.data(), input.size()) &&
           compareProvenance(what.c_str(), sources.data(), want.indices.data(), input.size(), describeInput);
}

// Keys from an alphabet (3: ties everywhere) in sorted runs of `width`, values their positions. matches():
// output p holds the key the stable sort of its group of runs puts there, and with values that key's position.
struct HostRuns {
    std::vector<uint32_t> keys, vals, outKeys, outVals;
    HostRuns(size_t n, size_t width, uint64_t alphabet, uint64_t seed)
        : keys(n), vals(n), outKeys(n, 0xDEADBEEFu), outVals(n, 0xFFFFFFFFu) {
        SplitMix64 rng(seed);
        for (auto& k : keys) k = static_cast<uint32_t>(rng.below(alphabet));
        for (size_t r = 0; r < n; r += width) std::sort(keys.begin() + r, keys.begin() + std::min(n, r + width));
        std::iota(vals.begin(), vals.end(), 0u);
    }
    bool matches(size_t group, bool pairs, const std::string& what) const {
        const size_t n = keys.size();
        std::vector<size_t> want(n);
        std::iota(want.begin(), want.end(), size_t{0});
        for (size_t g = 0; g < n; g += group)
            std::stable_sort(want.begin() + g, want.begin() + std::min(n, g + group), [&](size_t x, size_t y) { return keys[x] < keys[y]; });
        size_t p = 0;
        while (p < n && outKeys[p] == keys[want[p]] && (!pairs || outVals[p] == want[p])) ++p;
        if (p < n)
            std::printf("%s: output %zu holds key %u from %u, expected key %u from %zu\n", what.c_str(), p, outKeys[p],
                        pairs ? outVals[p] : 0u, keys[want[p]], want[p]);
        return p == n;
    }
};

// One pass through mergePassKernel's steps, tile by tile, on shared memory that starts as junk.
template <class T, int kWays, bool kPairs> bool passMatches(size_t n, size_t width, uint64_t alphabet, uint64_t seed) {
    HostRuns h(n, width, alphabet, seed);
    const size_t tiles = ceilDiv<size_t>(n, T::nv);
    std::vector<size_t> parts(kWays * tiles + kWays);
    for (size_t t = 0; t < tiles; ++t)  // two-way, every other tile by a warp (lanes in turn), as a merge block does
        if (t % 2) tileSplit<kWays, true>(t, h.keys.data(), n, width, T::nv, parts.data() + kWays * t);
        else tileSplit<kWays>(t, h.keys.data(), n, width, T::nv, parts.data() + kWays * t);
    std::vector<uint32_t> smem(T::mergeBytes(true) / 4);
    uint32_t* keys[2] = {smem.data(), smem.data() + T::nvSlots};
    uint32_t* vals[2] = {keys[1] + T::nvSlots, keys[1] + 2 * T::nvSlots};
    for (size_t t = 0; t < tiles; ++t) {
        std::fill(smem.begin(), smem.end(), 0xA5A5A5A5u);
        const TileSpans<kWays> s = tileSpansOf<kWays>(t, T::nv, n, width, parts.data() + kWays * t);
        for (int tid = 0; tid < T::nt; ++tid) loadSpans<T::nt, kWays, kPairs>(tid, s, h.keys.data(), h.vals.data(), keys[0], vals[0]);
        for (int tid = 0; tid < T::nt; ++tid) mergeRound<T::vt, kPairs>(tid, s.runs, keys[0], vals[0], keys[1], vals[1]);
        if constexpr (kWays == 4)
            for (int tid = 0; tid < T::nt; ++tid) mergeRound<T::vt, kPairs>(tid, s.runs.merged(), keys[1], vals[1], keys[0], vals[0]);
        for (int tid = 0, last = kWays == 4 ? 0 : 1; tid < T::nt; ++tid)
            storeTile<T::nt, T::nv, kPairs>(tid, s.runs.count(), keys[last], vals[last], h.outKeys.data() + s.t0,
                                            h.outVals.data() + s.t0, RankMap{}, false);
    }
    return h.matches(kWays * width, kPairs, std::to_string(kWays) + "-way pass (nv " + std::to_string(T::nv) + ", width " +
                                                 std::to_string(width) + ", n " + std::to_string(n) + ")");
}

// The block sort through blockSortKernel's steps, tile by tile, each thread's registers kept across the rounds.
template <class T, bool kPairs> bool blockSortMatches(size_t n, uint64_t alphabet, uint64_t seed) {
    HostRuns h(n, 1, alphabet, seed);
    std::vector<uint32_t> smem(T::blockSortBytes(true) / 4);
    uint32_t *sKeys = smem.data(), *sVals = sKeys + T::tileSlots;
    struct Regs { uint32_t r[T::blockVt]; };  // a thread's register array, kept across the barriers
    std::vector<Regs> k(T::blockNt), v(T::blockNt);
    for (size_t base = 0; base < n; base += T::tile) {
        const int count = static_cast<int>(std::min<size_t>(n - base, T::tile));
        std::fill(smem.begin(), smem.end(), 0xA5A5A5A5u);
        for (int tid = 0; tid < T::blockNt; ++tid)
            loadTile<T::blockNt, T::tile, kPairs>(tid, count, h.keys.data() + base, h.vals.data() + base, RankMap{}, sKeys, sVals);
        for (int tid = 0; tid < T::blockNt; ++tid) threadSort<T::blockVt, kPairs>(tid, sKeys, sVals, k[tid].r, v[tid].r);
        for (int coop = 2; coop <= T::blockNt; coop *= 2) {
            for (int tid = 0; tid < T::blockNt; ++tid) stageThread<T::blockVt, kPairs>(tid, k[tid].r, v[tid].r, sKeys, sVals);
            for (int tid = 0; tid < T::blockNt; ++tid) blockRound<T::blockVt, kPairs>(tid, coop, sKeys, sVals, k[tid].r, v[tid].r);
        }
        for (int tid = 0; tid < T::blockNt; ++tid) stageThread<T::blockVt, kPairs>(tid, k[tid].r, v[tid].r, sKeys, sVals);
        for (int tid = 0; tid < T::blockNt; ++tid)
            storeTile<T::blockNt, T::tile, kPairs>(tid, count, sKeys, sVals, h.outKeys.data() + base, h.outVals.data() + base,
                                                   RankMap{}, false);
    }
    return h.matches(T::tile, kPairs, "block sort (tile " + std::to_string(T::tile) + ", n " + std::to_string(n) + ")");
}

int runSelftest() {
    // 14.1 on the course's example, every output position through mergeOutput; B follows A in one buffer that
    // ends in a sentinel (the smallest key), so a read past either run's end changes the output.
    const std::vector<int32_t> AB = {1, 3, 6, 8, 2, 4, 5, 7, INT32_MIN};
    std::vector<int32_t> merged(8);
    for (size_t k = 0; k < 8; ++k) mergeOutput(k, AB.data(), 4, AB.data() + 4, 4, merged.data(), nullptr, RankLess<int32_t>{0});
    expect(merged == std::vector<int32_t>({1, 2, 3, 4, 5, 6, 7, 8}), "14.1: the course's merge of 1 3 6 8 and 2 4 5 7");
    std::vector<std::vector<int32_t>> trace;  // 14.2: the course's trace, pass by pass
    std::vector<uint32_t> vals;
    hostSeedSort<int32_t>({5, 2, 8, 1, 9, 3, 7, 4}, vals, false, &trace);
    expect(trace == std::vector<std::vector<int32_t>>({{2, 5, 1, 8, 3, 9, 4, 7}, {1, 2, 5, 8, 3, 4, 7, 9}, {1, 2, 3, 4, 5, 7, 8, 9}}),
           "14.2: the course's trace 2 5 1 8 3 9 4 7 / 1 2 5 8 3 4 7 9 / 1 2 3 4 5 7 8 9");
    // Every n up to 64 with ties (keys from {0, 1, 2}), then random n up to 2^14, both orders: the course's
    // sort equals the stable reference, keys and indices.
    bool ok = true;
    SplitMix64 rng(2);
    for (size_t n = 0; n <= 64 && ok; ++n) {
        std::vector<int32_t> keys(n);
        for (auto& k : keys) k = static_cast<int32_t>(rng.below(3));
        ok = hostSeedSortMatches(keys, false, "seed sort, n=" + std::to_string(n)) &&
             hostSeedSortMatches(keys, true, "seed sort descending, n=" + std::to_string(n));
    }
    for (int trial = 0; trial < 12 && ok; ++trial) {
        const size_t n = 65 + rng.below(size_t{1} << 14);
        const SortShape shape = trial % 2 ? SortShape::ManyTies : SortShape::Uniform;
        ok = hostSeedSortMatches(makeSortInput<float>(shape, n, trial), trial % 3 == 0,
                                 "seed sort, " + std::string(sortShapeName(shape)) + " n=" + std::to_string(n));
    }
    expect(ok, "the course's sort equals the stable sort (every n <= 64 with ties, random n to 2^14)");
    ok = true;  // groups of two and four runs cover [0, n) once per width, short only at the tail
    for (size_t n = 1; n <= 300 && ok; ++n)
        for (size_t width = 1; width < 2 * n && ok; width *= 2)
            for (size_t g = 0; g < n && ok; ++g) {
                const Group<2> p = groupOf<2>(g, width, n);
                const Group<4> q = groupOf<4>(g, width, n);
                ok = p.start % (2 * width) == 0 && p.start <= g && g < p.start + p.total() && p.start + p.total() <= n &&
                     (p.len[1] == 0 || p.len[0] == width) && q.start % (4 * width) == 0 && q.start <= g &&
                     g < q.start + q.total() && q.start + q.total() <= n && (q.len[3] == 0 || q.len[2] == width);
            }
    expect(ok, "groupOf: every position lies in one group of two (four) runs of the width, short only at the tail");
    ok = true;  // the warp's search: lengths 0..64, then about every 1.5 % to 2100, past 2^32, turning at every index
    for (size_t len = 0; len <= 2100 && ok; len += 1 + len / 64)
        for (size_t turn = 0, at = 7 + (len << 21); turn <= len && ok; ++turn)
            ok = warpSearch(at, at + len, [&](size_t i) { return i < at + turn; }) == at + turn;
    expect(ok, "warpSearch finds where a test that holds on a prefix turns");
    const auto steps = mergeSteps(size_t{1} << 28, TuneKeys::tile, 4), odd = mergeSteps(5 * 16, 16, 4);
    expect(doublings(1, 4) == 0 && doublings(4, 4) == 0 && doublings(5, 4) == 1 &&
               doublings(size_t{1} << 28, TuneKeys::tile) == 14 && steps.size() == 7 && steps[0].ways == 4 &&
               steps[6].width == size_t{TuneKeys::tile} << 12 && odd.size() == 2 && odd[0].ways == 2 && odd[1].width == 32 &&
               mergeSteps(size_t{1} << 28, TuneKeys::tile, 2).size() == 14,
           "mergeSteps: 14 doublings at 2^28 keys = seven four-way passes; 3 = a two-way pass, then a four-way one");
    // The block sort (its networks too) and both passes through their kernels' steps: sizes around tiles and
    // groups of runs, ties (3 keys) and none, keys and key-value, every shape.
    ok = true;
    for (size_t n : {size_t{1}, size_t{100}, size_t{TuneT4::tile} - 1, size_t{TuneT4::tile}, 2 * size_t{TuneT4::tile} + 5})
        for (uint64_t alphabet : {uint64_t{3}, uint64_t{1} << 32})
            ok = ok && blockSortMatches<TuneT4, true>(n, alphabet, n) && blockSortMatches<TuneT4, false>(n, alphabet, n + 1);
    ok = ok && blockSortMatches<TuneKeys, false>(TuneKeys::tile + 7, 3, 1) && blockSortMatches<TunePairs, true>(TuneKeys::tile - 7, 5, 2);
    expect(ok, "the block sort's steps (Batcher's network for keys, the transposition sort with values) sort every tile stably");
    ok = true;
    for (size_t width : {size_t{TuneT4::tile}, 2 * size_t{TuneT4::tile}})
        for (size_t n : {size_t{1}, size_t{100}, width - 1, width, width + 1, 2 * width + 5, 3 * width, 4 * width - 1, 4 * width,
                         4 * width + 1, 9 * width + 77})
            for (uint64_t alphabet : {uint64_t{3}, uint64_t{1} << 32})
                ok = ok && passMatches<TuneT4, 2, true>(n, width, alphabet, n + width) && passMatches<TuneT4, 2, false>(n, width, alphabet, n ^ width) &&
                     passMatches<TuneT4, 4, true>(n, width, alphabet, n + width) && passMatches<TuneT4, 4, false>(n, width, alphabet, n ^ width);
    ok = ok && passMatches<TuneKeys, 4, false>(5 * TuneKeys::tile + 3, TuneKeys::tile, 3, 1) &&
         passMatches<TuneKeys, 2, false>(3 * TuneKeys::tile + 3, TuneKeys::tile, 3, 1) &&
         passMatches<TunePairs, 4, true>(4 * TunePairs::tile + 1, TunePairs::tile, 5, 2) &&
         passMatches<TunePairs, 2, true>(2 * TunePairs::tile - 1, TunePairs::tile, 5, 2);
    expect(ok, "the two-way and four-way passes equal the stable merge of every group of runs");
    return selftestVerdict();
}

// =============================================================== the lesson
// The reference: the host's stable sort; past 2^31 keys CUB's merge sort (common's stableReference).
constexpr size_t kHostReferenceLimit = size_t{1} << 31;

// Every row and CUB's two sorts (made here) on one input, held to the stable order; CUB's merge not where it is the reference.
template <class Key>
bool checkInput(const std::vector<Key>& input, Sorting<Key>& s, const std::vector<Row<Key>>& rows,
                std::optional<LibraryRows<Key, Sorting<Key>>>& cub, const std::string& label, bool announce) {
    const SortReference<Key> want = stableReference(input, s.d, s.descending, kHostReferenceLimit);
    cub.emplace(s.d, s.descending);  // after want: past 2^31 its CUB sort and the rows' scratch never share the card
    return checkSortRows(rows, s, s.d, input, want, SortCheck::Stable, label, announce) &&
           cub->check(s, s.d, input, want, label, announce, input.size() <= kHostReferenceLimit);
}

template <class Key> int verifyAs(const SortOptions& o, const Run& run) {
    std::vector<SortCase> cases = adversarialSortCases();
    // Around every tile, and where the plan changes: 1, 2, 3 and 4 doublings after the block sort.
    for (size_t n : {size_t{TuneT4::tile} - 1, size_t{TuneT4::tile} + 1, 2 * size_t{TuneT4::tile} + 1, 4 * size_t{TuneT4::tile} + 1,
                     8 * size_t{TuneT4::tile} + 1, size_t{TuneKeys::tile} - 1, size_t{TuneKeys::tile}, size_t{TuneKeys::tile} + 1,
                     3 * size_t{TuneKeys::tile} + 5, 4 * size_t{TuneKeys::tile} + 1})
        cases.push_back({SortShape::FewDistinct, n});
    for (SortShape shape : sortTableShapes()) cases.push_back({shape, 3000017});
    if (o.nGiven) cases = {{SortShape::Uniform, o.n}};
    int failed = 0, sorts = 0;
    for (size_t at = 0; at < cases.size(); ++at)
        for (int mode = 0; mode < 3; ++mode) {  // keys (descending every other case), pairs ascending, pairs descending
            const SortCase& c = cases[at];
            const bool pairs = mode > 0, descending = mode == 2 || (mode == 0 && at % 2 == 1 && !o.nGiven);
            if (pairs && (!sortValuesFit(c.n) || (o.nGiven && !o.pairs))) continue;
            const std::vector<Key> input = makeSortInput<Key>(c.shape, c.n, 7 + c.n + mode);
            Sorting<Key> s(input, pairs, descending);
            Run planned = run;  // half the sorts plan as a one-SM card would: two-way passes partitioned past 56-112 tiles
            if ((at / 2 + mode) % 2) planned.device.smCount = 1;  // (at / 2: keys both orders, both forms)
            const auto rows = variantRows(s, planned, c.n <= kSeedVerifyLimit);
            std::optional<LibraryRows<Key, Sorting<Key>>> cub;
            failed += !checkInput(input, s, rows, cub, sortCaseLabel<Key>(sortShapeName(c.shape), c.n, descending, pairs), false);
            sorts += static_cast<int>(rows.size()) + (c.n > kHostReferenceLimit ? 1 : 2);  // and CUB (merge: the oracle past the limit)
        }
    std::printf("verify %s: %zu inputs, %d sorts (every row and both CUB sorts; %s): %s\n", keyName<Key>(), cases.size(), sorts,
                !o.nGiven ? "keys and key-value, both orders" : o.pairs ? "keys ascending, key-value both orders" : "keys, ascending", failed ? "FAILED" : "all exact, stable");
    return failed;
}

int runVerify(const SortOptions& o, const Run& run) {
    int failed = 0;
    if (!o.nGiven || o.key == "uint32") failed += verifyAs<uint32_t>(o, run);
    if (!o.nGiven || o.key == "int32") failed += verifyAs<int32_t>(o, run);
    if (!o.nGiven || o.key == "float") failed += verifyAs<float>(o, run);
    std::printf("verify: %s\n", failed ? "FAIL" : "PASS");
    return failed ? kExitCheckFailed : kExitPass;
}

// One table: n keys of one shape, every row and CUB's two sorts checked, then timed; echo false: nothing printed.
template <class Key>
int runShape(const SortOptions& o, const Run& run, SortShape shape, size_t n, bool echo, CsvFile* csv, std::vector<DistributionPoint>& summary) {
    const std::vector<Key> input = makeSortInput<Key>(shape, n);
    Sorting<Key> s(input, o.pairs, o.descending);
    const std::string label = sortCaseLabel<Key>(sortShapeName(shape), n, o.descending, o.pairs);
    const auto rows = variantRows(s, run, n <= kSeedRowLimit);
    std::optional<LibraryRows<Key, Sorting<Key>>> cub;
    if (!checkInput(input, s, rows, cub, label, echo && summary.empty() && !o.all)) return kExitCheckFailed;
    if (echo) std::printf("%s: %zu rows and both CUB sorts match the reference exactly%s\n", label.c_str(), rows.size(),
                o.pairs ? " (keys, and every value is the original index the stable order puts there)" : "");
    if (!run.timing || n == 0 || rows.empty()) return kExitPass;
    TimedTable<Sorting<Key>> spec = cub->table("merge sort, " + label, {{"tile", 6}, {"merge nv", 8}, {"passes", 6}}, s.d);
    spec.echo = echo;
    const TimedRows t = timeRows(spec, rows, s, run, csv);
    const auto [chosen, why] = o.pairs ? chosenRow(n, true, run.device, PairsShapes{}) : chosenRow(n, false, run.device, KeysShapes{});
    summary.push_back({sortShapeName(shape), sweepPoint(t, rowNames(rows), chosen, why), {}});
    if (echo && csv && summary.size() == 1 && s.plans.count(chosen))  // the passes of the row the sort chooses
        stepTable("each pass of " + chosen + " (" + label + ")", {"pass", "width"}, s.plans[chosen], s.d.bytesPerPass(), t.copyMs, run, *csv);
    return kExitPass;
}

template <class Key> int runLessonAs(const SortOptions& o, const Run& run) {
    const std::string title = "merge sort by distribution, " + std::string(keyName<Key>()) + " n=" + std::to_string(o.n);
    return runSortLesson<Key>(o, run, {"merge_sort", "merge_sort (keys, values, scratch and CUB's)", "merge sort",
        title + (o.pairs ? " pairs" : ""), {},
        [&](size_t n) {  // buffers, as many again for the scratch and CUB's, the partitions, CUB's input words
            return 2 * sortBytesNeeded<Key>(n, o.pairs, 0) + n / 8 + libraryWordBytes<Key>(n, o.descending) +
                   (size_t{64} << 20);
        },
        seedExamples, [&](auto&&... table) { return runShape<Key>(o, run, table...); }});  // &&: summary by reference
}

// ===================================================================== main
int main(int argc, char** argv) {
    SortOptions o;
    return lessonEntry(argc, argv, {"merge_sort", "Chapter 14.1-14.2: merge sort -- co-rank merges, bottom-up passes, a sort beside CUB's.",
        sortOptions("keys to sort (default 2^28; --quick 2^22)", "sort uint32 values (each key's original index) with the keys; checked as stable",
                    "a table per distribution (uniform ... organ-pipe), then a summary", true), {"seed", "blocksort"},
        [&](const Args& args, const Run& run) { readSortOptions(args, run, o, size_t{1} << 28, size_t{1} << 22); },
        runSelftest, [&](const Run& run) { return runVerify(o, run); },
        [&](const Run& run) { return onKeyType(o.key, [&](auto key) { return runLessonAs<decltype(key)>(o, run); }); }});
}

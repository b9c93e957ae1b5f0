// Chapter 14.1-14.2: merge sort. A merge of two sorted runs is parallel once
// every output position finds its co-rank (how many of the first k outputs
// come from the left run) by its own binary search; a bottom-up merge sort
// is that merge applied to every pair of runs, once per doubling width.
// Part A launches the seed's two kernels (one thread per output, one launch
// per width). Part B grows them into a sort that stands beside CUB's: a
// block sort of large tiles in registers and shared memory, then merge
// passes that partition each pair of runs by merge path and merge tile by
// tile with coalesced loads and stores. Every pass reads and writes every
// key once, so fewer passes is the lever; the table prints each pass.
//
// Build (one file):  nvcc -std=c++17 -O3 -arch=sm_75 -o merge_sort merge_sort.cu
//                    (use your card's -arch, e.g. sm_90 on an H100/H200; the tile shape is chosen at run time)
// Run:
//   ./merge_sort                  the seed's traces, checks, the table and each pass (2^28 uint32 keys)
//   ./merge_sort --dist all       a row per distribution (uniform, sorted, ..., organ-pipe)
//   ./merge_sort --pairs --key float --descending --n 1000003    key-value (values = original index)
//   ./merge_sort --verify         every row on the adversarial inputs, every key type and order
//   ./merge_sort --selftest       the seed's traces and the pass logic on the host (no GPU)
// Reading map: "Part A" (the tie rule, co_rank, the 14.1 and 14.2 kernels),
// "Part B" (Tuning, pieces, kernels, the pass plan), "the variant table",
// "selftest", "the lesson", "main".
// Change: --n, --key, --input/--dist, --pairs, --descending, --only. Exercises (README.md):
//   -DEXERCISE_NO_BOUNDARY_GUARD  14.1's trap: read the exhausted run
//   -DEXERCISE_FORGET_PAIR_START  14.2's trap: a pair-local index used as a global one
//   -DEXERCISE_SEED_TIE_TEST      the seed's strict A[i] < B[j-1]: ties leave unstably
// Each is caught by the checks (the last only by provenance).

#include "../common/inputs.hpp"
#include "../common/selftest.hpp"
#include "../common/sort_buffers.cuh"
#include "../common/sort_options.hpp"
#include "../common/variants.hpp"

#include <climits>
#include <functional>
#include <map>
#include <utility>

// The order: common's rank (key_order.hpp, IEEE totalOrder for floats),
// fixed at compile time for the kernels. Inside Part B every key travels as
// its rank, so every comparison is one unsigned compare.
template <class Key, bool kDescending>
struct Order {
    using key_type = Key;
    static constexpr bool descending = kDescending;
    static constexpr uint32_t flip = kDescending ? ~0u : 0u;
    __host__ __device__ static uint32_t rank(Key k) { return rankOf(k, flip); }
    __host__ __device__ static Key key(uint32_t r) { return keyOfRank<Key>(r, flip); }
    __host__ __device__ bool operator()(const Key& a, const Key& b) const { return rank(a) < rank(b); }
};

// ================================================================ Part A
//
// The seed's building block, in the seed's form: bisection on i with the
// midpoint rounded up ((i_low + i_high + 1) / 2), three outcomes. One change
// from the printed seed: its first test is A[i] < B[j - 1], which accepts a
// split that takes a B equal to an untaken A (unstable; the values check
// cannot see it). Here the first test is A[i] <= B[j - 1]: an untaken A
// equal to a taken B must be taken first. (A few lines of co-rank repeat
// the other merge lessons on purpose: they are this chapter's subject.)

template <class Key, class Less>
__host__ __device__ inline void co_rank(size_t k, const Key* A, size_t m, const Key* B, size_t n,
                                        size_t* out_i, size_t* out_j, Less less) {
    size_t i_low = (k > n) ? (k - n) : 0;
    size_t i_high = (k < m) ? k : m;
    while (i_low < i_high) {
        const size_t i = (i_low + i_high + 1) / 2;
        const size_t j = k - i;
#ifdef EXERCISE_SEED_TIE_TEST
        if (j > 0 && i < m && less(A[i], B[j - 1])) {  // the seed's strict test
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

// Which output of the merge position k is, once its co-rank (i, j) is
// known. The boundary guard is the seed's first trap: once i == m (or
// j == n) that run is exhausted and A[i] (B[j]) lies past its end.
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

// 14.1, one output position k: its co-rank, then the one key it takes.
// `source` (may be null) records provenance: s < m is A[s], else B[s - m].
// The kernel runs it for its thread; --selftest runs it for every k.
template <class Key, class Less>
__host__ __device__ inline void mergeOutput(size_t k, const Key* A, size_t m, const Key* B, size_t n, Key* out,
                                            size_t* source, Less less) {
    size_t i, j;
    co_rank(k, A, m, B, n, &i, &j, less);
    const bool fromA = take_from_A(A, m, B, n, i, j, less);
    out[k] = fromA ? A[i] : B[j];
    if (source) source[k] = fromA ? i : m + j;
}

template <class Key, class Less>
__global__ void merge_corank_kernel(const Key* A, size_t m, const Key* B, size_t n, Key* out, size_t* source,
                                    Less less) {
    const size_t k = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < m + n) mergeOutput(k, A, m, B, n, out, source, less);
}

// 14.2, one output position of one pass of the bottom-up sort: the thread
// finds its pair of runs from its global position (pair_start), then merges
// within that pair. `vin`/`vout` (may be null) carry a value with each key
// (the original index, for the checks).
template <class Key, class Less>
__host__ __device__ inline void passOutput(size_t global_k, const Key* in, Key* out, const uint32_t* vin,
                                           uint32_t* vout, size_t n, size_t width, Less less) {
    const size_t pair_start = (global_k / (2 * width)) * (2 * width);
    const size_t left_len = (n - pair_start < width) ? n - pair_start : width;
    const size_t mid = pair_start + left_len;
    const size_t right_len = (n - mid < width) ? n - mid : width;
    const size_t k = global_k - pair_start;  // this thread's output index within its pair
    const Key* A = in + pair_start;
    const Key* B = in + mid;
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

template <class Key, class Less>
__global__ void mergesort_pass_kernel(const Key* in, Key* out, const uint32_t* vin, uint32_t* vout, size_t n,
                                      size_t width, Less less) {
    const size_t global_k = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (global_k < n) passOutput(global_k, in, out, vin, vout, n, width, less);
}

// Launch geometry of the seed's kernels: one thread per output position.
constexpr unsigned kSeedThreads = 256;

template <class Key, class Less>
void launchSeedMerge(const Key* A, size_t m, const Key* B, size_t n, Key* out, size_t* source, Less less) {
    if (m + n == 0) return;
    merge_corank_kernel<<<gridFor(m + n, kSeedThreads, "merge_corank_kernel"), kSeedThreads>>>(A, m, B, n, out,
                                                                                               source, less);
    CUDA_CHECK_LAUNCH("merge_corank_kernel");
}

// The seed's sort: widths 1, 2, 4, ... one launch each, ping-ponging between
// two buffers. Returns which buffer holds the result (0: keys/vals, 1:
// tmpKeys/tmpVals). `onPass(width, buffer)` lets the trace print.
template <class Key, class Less>
int seedSort(Key* keys, uint32_t* vals, Key* tmpKeys, uint32_t* tmpVals, size_t n, Less less,
             const std::function<void(size_t, int)>& onPass = {}) {
    int current = 0;
    for (size_t width = 1; width < n; width *= 2) {
        Key* src = current ? tmpKeys : keys;
        Key* dst = current ? keys : tmpKeys;
        uint32_t* vsrc = vals ? (current ? tmpVals : vals) : nullptr;
        uint32_t* vdst = vals ? (current ? vals : tmpVals) : nullptr;
        mergesort_pass_kernel<<<gridFor(n, kSeedThreads, "mergesort_pass_kernel"), kSeedThreads>>>(src, dst, vsrc,
                                                                                                   vdst, n, width, less);
        CUDA_CHECK_LAUNCH("mergesort_pass_kernel");
        current ^= 1;
        if (onPass) onPass(width, current);
    }
    return current;
}

// ================================================================ Part B
//
// Production. Inside the sort every key travels as its rank (a uint32), so
// every comparison is one unsigned compare; the block sort converts on
// load and the last pass converts back on store.

// The tuning struct: the only source of tile and shared-memory sizes.
//   nt, vt   threads per block and keys per thread of a merge pass; vt odd,
//            so that thread t's strided shared accesses (t * vt + i) fall
//            in distinct banks
//   nv       keys per merge tile, nt * vt
//   blockNt, blockVt   the same for the block sort
//   tile     keys per block-sort tile, blockNt * blockVt: the first run width
// A merge tile must never straddle two pairs of runs: pair boundaries are
// multiples of 2 * tile, so nv must divide tile.
template <int kNt, int kVt, int kBlockNt, int kBlockVt>
struct Tuning {
    static constexpr int nt = kNt;
    static constexpr int vt = kVt;
    static constexpr int nv = kNt * kVt;
    static constexpr int blockNt = kBlockNt;
    static constexpr int blockVt = kBlockVt;
    static constexpr int tile = kBlockNt * kBlockVt;
    // Shared memory. Block sort: one key buffer (+1 slot: the serial merge
    // may read one past a run's end) and, with values, one value buffer.
    // Merge: input and output buffers for keys (and values), so that the
    // serial merge writes its outputs straight to shared memory and holds
    // no vt-wide arrays in registers (more resident blocks per SM).
    static constexpr size_t blockSortBytes(bool kv) { return (size_t{tile} + 1 + (kv ? tile : 0)) * 4; }
    static constexpr size_t mergeBytes(bool kv) { return (2 * size_t{nv} + 1 + (kv ? 2 * nv : 0)) * 4; }
    // Four-way merge: the tile's four input spans (+1 slot), the two round-1
    // merges AB and CD (+1 slot); round 2 writes over the inputs.
    static constexpr size_t merge4Bytes(bool kv) { return (2 * (size_t{nv} + 1) + (kv ? 2 * nv : 0)) * 4; }
    static_assert(kVt % 2 == 1 && kBlockVt % 2 == 1, "vt must be odd (conflict-free strided shared access)");
    static_assert((kNt & (kNt - 1)) == 0 && (kBlockNt & (kBlockNt - 1)) == 0, "powers of two");
    static_assert(tile % nv == 0, "a merge tile must not straddle two pairs of runs");
};

// H200/H100 shapes (sm_90: up to 227 KiB of shared memory per block), and
// the T4-safe shape (sm_75: 64 KiB opt-in, 48 KiB without it).
using TuneKeysLarge = Tuning<128, 33, 1024, 33>;   // tile 33792: 132 KiB keys
using TuneKeysWide = Tuning<256, 11, 1024, 33>;    // same tile, shorter merge chains
using TuneKeysTwoPerSm = Tuning<256, 11, 512, 33>; // tile 16896: 66 KiB, two block-sort blocks per SM
using TunePairsLarge = Tuning<128, 11, 512, 33>;   // tile 16896: 132 KiB keys + values
using TuneFallback = Tuning<128, 15, 256, 15>;     // tile 3840: 15 KiB keys, 30 KiB pairs
constexpr size_t kSm90SharedLimit = 227 * 1024;
constexpr size_t kT4SharedLimit = 48 * 1024;  // fits even without the opt-in
static_assert(TuneKeysLarge::blockSortBytes(false) <= kSm90SharedLimit, "keys tile too large");
static_assert(TunePairsLarge::blockSortBytes(true) <= kSm90SharedLimit, "pairs tile too large");
static_assert(TuneFallback::blockSortBytes(true) <= kT4SharedLimit, "fallback tile too large for a T4");
static_assert(TuneKeysLarge::mergeBytes(true) <= kSm90SharedLimit, "merge tile too large");
static_assert(TuneFallback::mergeBytes(true) <= kT4SharedLimit, "fallback merge tile too large");
static_assert(TuneKeysLarge::merge4Bytes(true) <= kSm90SharedLimit, "four-way merge tile too large");
// The smallest merge tile of any shape: it makes the most tiles, so it sizes the partition buffer.
constexpr int kSmallestNv =
    std::min({TuneKeysLarge::nv, TuneKeysWide::nv, TuneKeysTwoPerSm::nv, TunePairsLarge::nv, TuneFallback::nv});
static_assert(TuneFallback::merge4Bytes(true) <= kT4SharedLimit, "fallback four-way merge tile too large");

// ----------------------------------------------------- pieces (host + device)

// The pair of runs that global position g belongs to, in a pass that merges
// runs of `width`: the pair starts at a multiple of 2 * width; the left run
// holds up to width keys, the right run the rest (either may be short at
// the tail; the right one may be empty).
struct PairSpan {
    size_t start, aLen, bLen;
};
__host__ __device__ inline PairSpan pairOf(size_t g, size_t width, size_t n) {
    PairSpan p;
    p.start = g / (2 * width) * (2 * width);
    p.aLen = (n - p.start < width) ? n - p.start : width;
    const size_t rest = n - p.start - p.aLen;
    p.bLen = rest < width ? rest : width;
    return p;
}

// Merge path on diagonal `diag` of runs a (aCount) and b (bCount): how many
// of the first diag outputs come from a. Ties go to a: a[mid] is taken
// while a[mid] <= b[diag - 1 - mid]. The same search as co_rank, written as
// a lower bound over the diagonal (one test per step instead of two).
template <class Index>
__host__ __device__ inline Index mergePath(const uint32_t* a, Index aCount, const uint32_t* b,
                                           Index bCount, Index diag) {
    Index begin = diag > bCount ? diag - bCount : 0;
    Index end = diag < aCount ? diag : aCount;
    while (begin < end) {
        const Index mid = (begin + end) >> 1;  // both are non-negative: a shift, no signed-division fix-up
        if (!(b[diag - 1 - mid] < a[mid])) begin = mid + 1;
        else end = mid;
    }
    return begin;
}

// The serial merge of vt outputs from a[aBegin, aEnd) and b[bBegin, bEnd),
// both in one shared array; writes keys and the shared index each came
// from. `count` (<= vt) outputs are valid. May read keys[aEnd] / keys[bEnd]
// (never used), hence the +1 slot of every key buffer.
template <int kVt>
__device__ inline void serialMerge(const uint32_t* keys, int a, int aEnd, int b, int bEnd, int count,
                                   uint32_t (&out)[kVt], int (&index)[kVt]) {
    uint32_t aKey = keys[a];
    uint32_t bKey = keys[b];
#pragma unroll
    for (int i = 0; i < kVt; ++i) {
        if (i < count) {
            const bool takeA = (b >= bEnd) || (a < aEnd && !(bKey < aKey));
            out[i] = takeA ? aKey : bKey;
            index[i] = takeA ? a : b;
            if (takeA) aKey = keys[++a];
            else bKey = keys[++b];
        }
    }
}

// The same walk, writing each output straight to shared memory (keys, and
// with values the value each key came with).
// kFull: count == kVt, so no step needs its guard (every thread but a
// tile's last one). kBSentinel: keys at bEnd hold kSentinel, the largest
// rank, so B's bound needs no test: an exhausted B offers the sentinel,
// which never beats an A key (ties go to A), and an exhausted A is still
// caught by its own test (a real A key may equal the sentinel, so A keeps
// its bound). Pos is where the walk stands: a pointer for keys alone (one
// address computation less per step than an index), an index with values,
// which addresses both arrays (a pointer would need a subtraction and a
// mask per step to reach the value: 20 instructions a step against 15).
__host__ __device__ inline uint32_t keyAt(const uint32_t* keys, int pos) { return keys[pos]; }
__host__ __device__ inline uint32_t keyAt(const uint32_t*, const uint32_t* pos) { return *pos; }
constexpr uint32_t kSentinel = 0xFFFFFFFFu;
template <int kVt, bool kPairs, bool kFull, bool kBSentinel, class Pos>
__host__ __device__ inline void serialMergeSteps(const uint32_t* keys, const uint32_t* vals, Pos a, Pos aEnd, Pos b,
                                                 Pos bEnd, int count, uint32_t* outKeys, uint32_t* outVals) {
    uint32_t aKey = keyAt(keys, a);
    uint32_t bKey = keyAt(keys, b);
#pragma unroll
    for (int i = 0; i < kVt; ++i) {
        if (kFull || i < count) {
            const bool takeA = kBSentinel ? a < aEnd && !(bKey < aKey) : (b >= bEnd) || (a < aEnd && !(bKey < aKey));
            const Pos from = takeA ? a : b;
            outKeys[i] = takeA ? aKey : bKey;
            if constexpr (kPairs) outVals[i] = vals[from];
            const uint32_t next = keyAt(keys, from + 1);
            if (takeA) {
                aKey = next;
                a = from + 1;
            } else {
                bKey = next;
                b = from + 1;
            }
        }
    }
}
template <int kVt, bool kPairs, bool kBSentinel = false>
__host__ __device__ inline void serialMergeToShared(const uint32_t* keys, const uint32_t* vals, int a, int aEnd, int b,
                                                    int bEnd, int count, uint32_t* outKeys, uint32_t* outVals) {
    if constexpr (kPairs) {
        if (count == kVt)
            serialMergeSteps<kVt, true, true, kBSentinel>(keys, vals, a, aEnd, b, bEnd, count, outKeys, outVals);
        else
            serialMergeSteps<kVt, true, false, kBSentinel>(keys, vals, a, aEnd, b, bEnd, count, outKeys, outVals);
    } else if (count == kVt) {
        serialMergeSteps<kVt, false, true, kBSentinel>(keys, vals, keys + a, keys + aEnd, keys + b, keys + bEnd, count,
                                                       outKeys, outVals);
    } else {
        serialMergeSteps<kVt, false, false, kBSentinel>(keys, vals, keys + a, keys + aEnd, keys + b, keys + bEnd, count,
                                                        outKeys, outVals);
    }
}

// Per-thread sorting network: odd-even transposition sort of vt keys in
// registers (vt rounds of adjacent compare-exchanges). It swaps only when
// the right key is strictly smaller, so equal keys keep their order: stable.
template <int kVt, bool kPairs, class Value>
__host__ __device__ inline void oddEvenTranspositionSort(uint32_t (&k)[kVt], Value (&v)[kVt]) {
#pragma unroll
    for (int round = 0; round < kVt; ++round) {
#pragma unroll
        for (int i = round & 1; i + 1 < kVt; i += 2) {
            if (kPairs) {
                const bool swap = k[i + 1] < k[i];
                const uint32_t k0 = k[i], k1 = k[i + 1];
                const Value v0 = v[i], v1 = v[i + 1];
                k[i] = swap ? k1 : k0;
                k[i + 1] = swap ? k0 : k1;
                v[i] = swap ? v1 : v0;
                v[i + 1] = swap ? v0 : v1;
            } else {
                const uint32_t lo = k[i] < k[i + 1] ? k[i] : k[i + 1];
                const uint32_t hi = k[i] < k[i + 1] ? k[i + 1] : k[i];
                k[i] = lo;
                k[i + 1] = hi;
            }
        }
    }
}

// Keys only, stability is invisible (equal ranks are equal bits), so the
// block sort may use a network with fewer compare-exchanges: Batcher's
// odd-even merge sort on the next power of two, with every comparator that
// touches a position >= vt dropped (as if those held +infinity, which never
// moves down). 246 comparators for 33 keys instead of the transposition
// sort's 528. The comparator list is computed at compile time and applied
// by a fold over its indices, so every register index is a constant.
struct Comparator {
    int a, b, count;  // comparator number `at` of the network (count: how many it has)
};
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
template <int kA, int kB, int kVt>
__host__ __device__ __forceinline__ void compareExchange(uint32_t (&k)[kVt]) {
    const uint32_t lo = k[kA] < k[kB] ? k[kA] : k[kB];
    const uint32_t hi = k[kA] < k[kB] ? k[kB] : k[kA];
    k[kA] = lo;
    k[kB] = hi;
}
template <int kVt, int... kAt>
__host__ __device__ __forceinline__ void applyNetwork(uint32_t (&k)[kVt], std::integer_sequence<int, kAt...>) {
    (compareExchange<oddEvenComparator(kVt, kAt).a, oddEvenComparator(kVt, kAt).b>(k), ...);
}
template <int kVt>
__host__ __device__ inline void oddEvenMergeSort(uint32_t (&k)[kVt]) {
    applyNetwork(k, std::make_integer_sequence<int, oddEvenComparator(kVt, 0).count>{});
}

// The pass plan's arithmetic: merge passes needed after a block sort of
// `tile`-key runs (run width doubles from tile until one run holds all n).
__host__ __device__ inline int mergePassCount(size_t n, size_t tile) {
    int passes = 0;
    for (size_t width = tile; width < n; width *= 2) ++passes;
    return passes;
}
__host__ __device__ inline size_t mergePassWidth(size_t tile, int pass) { return tile << pass; }

// The coalesced store of a tile from shared memory, shared by every kernel
// of Part B: thread tid writes x = i * nt + tid (x < count) at base + x,
// converting ranks back to keys on the sort's last pass (kToKey).
template <int kNt, int kVt, class Ord, bool kPairs, bool kToKey>
__host__ __device__ inline void storeTile(int tid, int count, const uint32_t* sKeys, const uint32_t* sVals,
                                          uint32_t* keysOut, uint32_t* valsOut, size_t base) {
#pragma unroll
    for (int i = 0; i < kVt; ++i) {
        const int x = i * kNt + tid;
        if (x < count) {
            const uint32_t r = sKeys[x];
            keysOut[base + x] = kToKey ? wordOf(Ord::key(r)) : r;
            if (kPairs) valsOut[base + x] = sVals[x];
        }
    }
}

// ----------------------------------------------------------------- kernels

// Block sort: each block sorts one tile of T::tile keys (the tail tile is
// padded with the largest rank, which sorts after every real key of equal
// rank because padding sits at the end and every merge is stable).
//   load coalesced -> ranks in shared -> vt consecutive keys per thread
//   -> per-thread network (keys: Batcher's; pairs: the stable transposition
//   sort) -> log2(blockNt) in-block merge rounds (runs of
//   vt, 2vt, ... merged by merge path in shared) -> store coalesced.
// kToKey: this is the only pass, so write keys (not ranks) out.
template <class T, class Ord, bool kPairs, bool kFromKey, bool kToKey>
__global__ void __launch_bounds__(T::blockNt)
blockSortKernel(const uint32_t* keysIn, const uint32_t* valsIn, uint32_t* keysOut, uint32_t* valsOut,
                size_t n) {
    constexpr int nt = T::blockNt, vt = T::blockVt, tile = T::tile;
    extern __shared__ uint32_t smem[];
    uint32_t* sKeys = smem;              // tile + 1
    uint32_t* sVals = smem + tile + 1;   // tile (pairs only)
    const int tid = threadIdx.x;
    const size_t tileStart = static_cast<size_t>(blockIdx.x) * tile;
    const int count = static_cast<int>(n - tileStart < size_t{tile} ? n - tileStart : size_t{tile});

#pragma unroll
    for (int i = 0; i < vt; ++i) {
        const int x = i * nt + tid;
        uint32_t r = 0xFFFFFFFFu;
        if (x < count) {
            const uint32_t word = keysIn[tileStart + x];
            r = kFromKey ? Ord::rank(fromWord<typename Ord::key_type>(word)) : word;
        }
        sKeys[x] = r;
        if (kPairs) sVals[x] = x < count ? valsIn[tileStart + x] : 0u;
    }
    __syncthreads();
    uint32_t k[vt];
    uint32_t v[vt];
#pragma unroll
    for (int i = 0; i < vt; ++i) {
        k[i] = sKeys[tid * vt + i];
        if (kPairs) v[i] = sVals[tid * vt + i];
    }
    if constexpr (kPairs) oddEvenTranspositionSort<vt, kPairs>(k, v);  // stable: values keep their keys' order
    else oddEvenMergeSort<vt>(k);

#pragma unroll 1
    for (int coop = 2; coop <= nt; coop *= 2) {
        __syncthreads();  // everyone has read the previous round's shared data
#pragma unroll
        for (int i = 0; i < vt; ++i) {
            sKeys[tid * vt + i] = k[i];
            if (kPairs) sVals[tid * vt + i] = v[i];
        }
        __syncthreads();
        const int first = (tid & ~(coop - 1)) * vt;  // this thread's pair of runs
        const int width = (coop / 2) * vt;
        const int diag = (tid & (coop - 1)) * vt;
        const int a = mergePath<int>(sKeys + first, width, sKeys + first + width, width, diag);
        int index[vt];
        serialMerge<vt>(sKeys, first + a, first + width, first + width + diag - a, first + 2 * width, vt,
                        k, index);
        if (kPairs) {
#pragma unroll
            for (int i = 0; i < vt; ++i) v[i] = sVals[index[i]];
        }
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < vt; ++i) {
        sKeys[tid * vt + i] = k[i];
        if (kPairs) sVals[tid * vt + i] = v[i];
    }
    __syncthreads();
    storeTile<nt, vt, Ord, kPairs, kToKey>(tid, count, sKeys, sVals, keysOut, valsOut, tileStart);
}

// Partition: for every merge tile, where its first output's co-rank lies
// in the left run of its pair (merge path on global memory, one thread per
// tile boundary). Stored relative to the left run's start.
__global__ void partitionKernel(const uint32_t* keys, size_t* partitions, size_t n, size_t width,
                                size_t nv, size_t tiles) {
    const size_t t = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t >= tiles) return;
    const size_t g = t * nv;
    const PairSpan p = pairOf(g, width, n);
    const uint32_t* a = keys + p.start;
    partitions[t] = mergePath<size_t>(a, p.aLen, a + p.aLen, p.bLen, g - p.start);
}

// Merge: one block per tile of nv outputs. Its two input spans come from
// the partitions of its own start and of the next tile's start (or the
// pair's end); both are loaded coalesced into one shared array (a span then
// b span), each thread merges vt outputs from its merge-path split, and the
// results go out through shared memory as coalesced stores.
template <class T, class Ord, bool kPairs, bool kToKey>
__global__ void __launch_bounds__(T::nt)
mergeKernel(const uint32_t* keysIn, const uint32_t* valsIn, uint32_t* keysOut, uint32_t* valsOut,
            const size_t* partitions, size_t n, size_t width) {
    constexpr int nt = T::nt, vt = T::vt, nv = T::nv;
    extern __shared__ uint32_t smem[];
    uint32_t* sKeys = smem;                 // nv + 1: the tile's inputs (a span, then b span)
    uint32_t* sOut = smem + nv + 1;         // nv: merged keys
    uint32_t* sVals = sOut + nv;            // nv (pairs only)
    uint32_t* sOutVals = sVals + nv;        // nv (pairs only)
    const int tid = threadIdx.x;
    const size_t t = blockIdx.x;
    const size_t t0 = t * nv;
    const PairSpan p = pairOf(t0, width, n);
    const size_t pairEnd = p.start + p.aLen + p.bLen;
    const size_t t1 = (t0 + nv < pairEnd) ? t0 + nv : pairEnd;  // a tile never straddles pairs
    const size_t a0 = partitions[t];
    const size_t a1 = (t1 == pairEnd) ? p.aLen : partitions[t + 1];
    const size_t b0 = (t0 - p.start) - a0;
    const int aCount = static_cast<int>(a1 - a0);
    const int count = static_cast<int>(t1 - t0);
    const uint32_t* A = keysIn + p.start + a0;
    const uint32_t* B = keysIn + p.start + p.aLen + b0 - aCount;  // B[x] for x >= aCount
    const uint32_t* VA = valsIn + p.start + a0;
    const uint32_t* VB = valsIn + p.start + p.aLen + b0 - aCount;

#pragma unroll
    for (int i = 0; i < vt; ++i) {
        const int x = i * nt + tid;
        if (x < count) {
            sKeys[x] = x < aCount ? A[x] : B[x];
            if (kPairs) sVals[x] = x < aCount ? VA[x] : VB[x];
        }
    }
    if (tid == 0) sKeys[count] = kSentinel;  // B's end (the +1 slot)
    __syncthreads();
    const int diag = tid * vt < count ? tid * vt : count;
    const int a = mergePath<int>(sKeys, aCount, sKeys + aCount, count - aCount, diag);
    const int mine = count - diag < vt ? count - diag : vt;
    serialMergeToShared<vt, kPairs, true>(sKeys, sVals, a, aCount, aCount + diag - a, count, mine, sOut + diag,
                                          sOutVals + diag);
    __syncthreads();
    storeTile<nt, vt, Ord, kPairs, kToKey>(tid, count, sOut, sOutVals, keysOut, valsOut, t0);
}

// ---------------------------------------------------- four-way merge passes
//
// A four-way pass merges runs of `width`, four at a time, into runs of
// 4 * width: half the passes of two-way merging, each still one read and
// one write of every key. Output r of a group of runs A, B, C, D is output r
// of merge(merge(A, B), merge(C, D)) with every tie to the left, so equal
// keys leave in the order A, B, C, D, each run in its own order: the stable
// order of the concatenation A B C D. Equivalently, the first r outputs are
// the r smallest keys under (rank, run, position), and that is the order
// the partition search below uses.

// The group of four runs that global position g belongs to, in a pass that
// merges runs of `width` into runs of 4 * width. Run i starts at
// start + i * width; each holds up to width keys (short or empty at the tail).
struct QuadSpan {
    size_t start;
    size_t len[4];
};
__host__ __device__ inline QuadSpan quadOf(size_t g, size_t width, size_t n) {
    QuadSpan q;
    q.start = g / (4 * width) * (4 * width);
    size_t rest = n - q.start;
    for (int i = 0; i < 4; ++i) {
        q.len[i] = rest < width ? rest : width;
        rest -= q.len[i];
    }
    return q;
}
__host__ __device__ inline size_t quadTotal(const QuadSpan& q) { return q.len[0] + q.len[1] + q.len[2] + q.len[3]; }

// Four-way co-rank: how many of the group's first r outputs come from each
// run (split[i] keys from run i, the four summing to r). `group` points at
// run A; run i is group + i * width.
//
// Not the nested merge path (bisection on AB's count, each probe of
// merge(A, B) a second bisection: ~log^2 dependent loads, ~700 at width
// 2^25), but bracket halving: one key loaded per round, at most
// 4 * (floor(log2 width) + 1) rounds (~100 at 2^25; the selftest counts).
// Each run's split lies in a bracket [lo, hi]; every round takes the
// midpoints m_i of the open brackets and their keys, counts a closed run as
// m_i = lo_i (its split is known), and with M = the sum of the m_i:
//   M >= r: the largest open midpoint key (by rank, then run) has at least
//           M keys before it, so it is not among the first r: its hi = m;
//   M <  r: the smallest open midpoint key has at most M keys before it,
//           so it is among the first r: its lo = m + 1.
// Either way one bracket halves; when all are closed, lo is the split.
// (Keys: a const uint32_t*, or anything indexable like one: the selftest
// counts the loads.)
template <class Keys>
__host__ __device__ inline void quadSplit(Keys group, size_t width, const QuadSpan& q, size_t r, size_t (&split)[4]) {
    const size_t total = quadTotal(q);
    size_t lo[4], hi[4];
    uint32_t midKey[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const size_t others = total - q.len[i];  // run i gives at least r - others
        lo[i] = r > others ? r - others : 0;
        hi[i] = r < q.len[i] ? r : q.len[i];
        if (lo[i] < hi[i]) midKey[i] = group[i * width + (lo[i] + hi[i]) / 2];
    }
    while (true) {
        size_t m = 0;
        int least = -1, most = -1;
        uint32_t leastKey = 0, mostKey = 0;
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const bool open = lo[i] < hi[i];
            m += open ? (lo[i] + hi[i]) / 2 : lo[i];
            if (open && (least < 0 || midKey[i] < leastKey)) {  // ties: the earlier run is the smaller
                least = i;
                leastKey = midKey[i];
            }
            if (open && (most < 0 || !(midKey[i] < mostKey))) {  // ties: the later run is the larger
                most = i;
                mostKey = midKey[i];
            }
        }
        if (least < 0) break;
        const bool tooMany = m >= r;
        const int j = tooMany ? most : least;
#pragma unroll
        for (int i = 0; i < 4; ++i) {  // static indices only: the arrays stay in registers
            if (i == j) {
                const size_t mid = (lo[i] + hi[i]) / 2;
                if (tooMany) hi[i] = mid;
                else lo[i] = mid + 1;
                if (lo[i] < hi[i]) midKey[i] = group[i * width + (lo[i] + hi[i]) / 2];
            }
        }
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) split[i] = lo[i];
}

// One merge tile of a four-way pass: where its four input spans lie in
// global memory and in the tile's shared buffer (run i's span at
// [offset[i], offset[i + 1]), the four in run order; offset[4] = count).
// Key x of the shared buffer comes from global bias[i] + x for x in run i's
// span (unsigned arithmetic wraps, so a bias "below zero" is fine).
// Partitions: 4 entries per tile (the splits of its first output).
struct Tile4 {
    size_t t0;
    size_t bias[4];
    int offset[5];
};
__host__ __device__ inline Tile4 tile4Of(size_t t, size_t nv, size_t n, size_t width, const size_t* partitions) {
    Tile4 s;
    s.t0 = t * nv;
    const QuadSpan q = quadOf(s.t0, width, n);
    const size_t groupEnd = q.start + quadTotal(q);
    const size_t t1 = (s.t0 + nv < groupEnd) ? s.t0 + nv : groupEnd;  // a tile never straddles groups
    s.offset[0] = 0;
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const size_t from = partitions[4 * t + i];
        const size_t to = (t1 == groupEnd) ? q.len[i] : partitions[4 * (t + 1) + i];
        s.offset[i + 1] = s.offset[i] + static_cast<int>(to - from);
        s.bias[i] = q.start + i * width + from - static_cast<size_t>(s.offset[i]);
    }
    return s;
}

// The kernel's per-thread steps, each callable from the host selftest
// (run every thread's step before any thread's next: the barriers).

// Load: the four spans into one shared array, coalesced (consecutive x,
// consecutive threads; a span switch costs one partial sector per span).
template <class T, bool kPairs>
__host__ __device__ inline void merge4Load(int tid, const Tile4& s, const uint32_t* keysIn, const uint32_t* valsIn,
                                           uint32_t* sKeys, uint32_t* sVals) {
    const int count = s.offset[4];
#pragma unroll
    for (int i = 0; i < T::vt; ++i) {
        const int x = i * T::nt + tid;
        if (x < count) {
            const size_t bias = x < s.offset[2] ? (x < s.offset[1] ? s.bias[0] : s.bias[1])
                                                : (x < s.offset[3] ? s.bias[2] : s.bias[3]);
            const size_t at = bias + static_cast<size_t>(x);
            sKeys[x] = keysIn[at];
            if (kPairs) sVals[x] = valsIn[at];
        }
    }
    if (tid == 0) sKeys[count] = kSentinel;  // D's end, for round 1's merge(C, D)
}

// Round 1: merge(A, B) and merge(C, D), side by side into sMid (AB at
// [0, offset[2]), CD after it). Thread tid makes outputs [tid * vt, +vt)
// of the two merges laid end to end; the one thread whose outputs straddle
// the AB/CD boundary makes its AB part, then its CD part.
template <class T, bool kPairs>
__host__ __device__ inline void merge4Round1(int tid, const Tile4& s, const uint32_t* sKeys, const uint32_t* sVals,
                                             uint32_t* sMid, uint32_t* sMidVals) {
    constexpr int vt = T::vt;
    const int count = s.offset[4], ab = s.offset[2];
    const int p = tid * vt < count ? tid * vt : count;
    const int mine = count - p < vt ? count - p : vt;
    const int inAB = p < ab ? (ab - p < mine ? ab - p : mine) : 0;
    if (tid == 0) sMid[count] = kSentinel;  // CD's end, for round 2
    if (inAB > 0) {
        const int b0 = s.offset[1];
        const int a = mergePath<int>(sKeys, b0, sKeys + b0, ab - b0, p);
        serialMergeToShared<vt, kPairs>(sKeys, sVals, a, b0, b0 + p - a, ab, inAB, sMid + p, sMidVals + p);
    }
    if (mine > inAB) {
        const int c0 = ab, d0 = s.offset[3];
        const int diag = p + inAB - ab;  // this thread's first output within merge(C, D)
        const int c = mergePath<int>(sKeys + c0, d0 - c0, sKeys + d0, count - d0, diag);
        serialMergeToShared<vt, kPairs, true>(sKeys, sVals, c0 + c, d0, d0 + diag - c, count, mine - inAB,
                                              sMid + p + inAB, sMidVals + p + inAB);
    }
}

// Round 2: merge(AB, CD) from sMid into sOut (the input buffer, free again
// after the barrier), vt outputs per thread from its merge-path split.
template <class T, bool kPairs>
__host__ __device__ inline void merge4Round2(int tid, const Tile4& s, const uint32_t* sMid, const uint32_t* sMidVals,
                                             uint32_t* sOut, uint32_t* sOutVals) {
    constexpr int vt = T::vt;
    const int count = s.offset[4], ab = s.offset[2];
    const int p = tid * vt < count ? tid * vt : count;
    const int mine = count - p < vt ? count - p : vt;
    const int a = mergePath<int>(sMid, ab, sMid + ab, count - ab, p);
    serialMergeToShared<vt, kPairs, true>(sMid, sMidVals, a, ab, ab + p - a, count, mine, sOut + p, sOutVals + p);
}

// Store: coalesced, converting ranks back to keys on the last pass.
template <class T, class Ord, bool kPairs, bool kToKey>
__host__ __device__ inline void merge4Store(int tid, const Tile4& s, const uint32_t* sOut, const uint32_t* sOutVals,
                                            uint32_t* keysOut, uint32_t* valsOut) {
    storeTile<T::nt, T::vt, Ord, kPairs, kToKey>(tid, s.offset[4], sOut, sOutVals, keysOut, valsOut, s.t0);
}

// Partition: one thread per merge tile, the four-way co-rank of the tile's
// first output within its group, stored as 4 entries (one per run, each
// relative to its run's start) at partitions[4 * t].
__host__ __device__ inline void partition4Tile(size_t t, const uint32_t* keys, size_t* partitions, size_t n,
                                               size_t width, size_t nv) {
    const size_t g = t * nv;
    const QuadSpan q = quadOf(g, width, n);
    size_t split[4];
    quadSplit(keys + q.start, width, q, g - q.start, split);
#pragma unroll
    for (int i = 0; i < 4; ++i) partitions[4 * t + i] = split[i];
}
__global__ void partition4Kernel(const uint32_t* keys, size_t* partitions, size_t n, size_t width, size_t nv,
                                 size_t tiles) {
    const size_t t = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (t < tiles) partition4Tile(t, keys, partitions, n, width, nv);
}

// Merge: one block per tile of nv outputs: load the four spans, merge them
// pairwise (round 1), merge the two results (round 2), store. Three
// barriers; shared memory T::merge4Bytes(kPairs).
template <class T, class Ord, bool kPairs, bool kToKey>
__global__ void __launch_bounds__(T::nt)
merge4Kernel(const uint32_t* keysIn, const uint32_t* valsIn, uint32_t* keysOut, uint32_t* valsOut,
             const size_t* partitions, size_t n, size_t width) {
    constexpr int nv = T::nv;
    extern __shared__ uint32_t smem[];
    uint32_t* sKeys = smem;              // nv + 1: the four spans; round 2's output
    uint32_t* sMid = smem + nv + 1;      // nv + 1: AB then CD
    uint32_t* sVals = sMid + nv + 1;     // nv (pairs only)
    uint32_t* sMidVals = sVals + nv;     // nv (pairs only)
    const int tid = threadIdx.x;
    const Tile4 s = tile4Of(blockIdx.x, nv, n, width, partitions);
    merge4Load<T, kPairs>(tid, s, keysIn, valsIn, sKeys, sVals);
    __syncthreads();
    merge4Round1<T, kPairs>(tid, s, sKeys, sVals, sMid, sMidVals);
    __syncthreads();
    merge4Round2<T, kPairs>(tid, s, sMid, sMidVals, sKeys, sVals);
    __syncthreads();
    merge4Store<T, Ord, kPairs, kToKey>(tid, s, sKeys, sVals, keysOut, valsOut);
}

// --------------------------------------------------- the pass plan, 4-way
//
// d doublings after the block sort (mergePassCount) take d / 2 four-way
// passes, plus one two-way pass when d is odd: ceil(d / 2) = ceil(log4 of
// the run count) passes, the fewest for merges of at most four runs. The
// two-way pass goes first, at width = tile. Either end costs the same
// bytes; first keeps the plan's tail uniform (every sort with d >= 2 ends
// on the four-way kernel, which writes keys back) and puts the two-way
// pass where its partition search is shallowest. Widths:
//   d odd:  tile (2-way), then 2 * tile * 4^k (4-way), k = 0 .. d/2 - 1
//   d even: tile * 4^k (4-way), k = 0 .. d/2 - 1
struct MergeStep {
    size_t width;
    int ways;  // 2 or 4
};
__host__ __device__ inline int mergeStepCount(size_t n, size_t tile) { return (mergePassCount(n, tile) + 1) / 2; }
__host__ __device__ inline MergeStep mergeStep(size_t n, size_t tile, int step) {
    const bool odd = mergePassCount(n, tile) % 2 == 1;
    if (odd && step == 0) return {tile, 2};
    return {tile << (odd ? 2 * step - 1 : 2 * step), 4};
}

// --------------------------------------------------------------- the plan
//
// A sort is a list of passes over memory, each a name, the run width it
// merges (the block sort: the tile it produces) and a launch. Buffers
// ping-pong between `out` and `tmp` so that the last pass lands in `out`.

struct Pass {
    std::string name;
    size_t width;
    std::function<void()> launch;
};

struct PassBuffers {
    const void* keysIn;      // n keys (Key)
    const uint32_t* valsIn;  // n values, or null for keys only
    void* keysOut;           // n keys (Key)
    uint32_t* valsOut;
    uint32_t* tmpKeys;       // n words of scratch (ranks)
    uint32_t* tmpVals;       // n words (pairs only)
    size_t* partitions;      // ceilDiv(n, nv) + 1 entries
};

// kFourWay: merge four runs a pass (mergeStep), else two.
template <class T, class Ord, bool kPairs, bool kFourWay>
std::vector<Pass> planSortWith(const PassBuffers& buf, size_t n) {
    std::vector<Pass> plan;
    if (n == 0) return plan;
    const int merges = kFourWay ? mergeStepCount(n, T::tile) : mergePassCount(n, T::tile);
    auto keysAt = [&](int pass) {  // where pass p (0: block sort) writes: the last one writes out
        return ((merges - pass) % 2 == 0) ? static_cast<uint32_t*>(buf.keysOut) : buf.tmpKeys;
    };
    auto valsAt = [&](int pass) { return ((merges - pass) % 2 == 0) ? buf.valsOut : buf.tmpVals; };
    {
        auto kernel = merges == 0 ? blockSortKernel<T, Ord, kPairs, true, true> : blockSortKernel<T, Ord, kPairs, true, false>;
        const size_t bytes = T::blockSortBytes(kPairs);
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
        const auto in = static_cast<const uint32_t*>(buf.keysIn);
        const uint32_t* vin = buf.valsIn;
        uint32_t *out = keysAt(0), *vout = valsAt(0);
        const unsigned blocks = gridFor(n, T::tile, "blockSortKernel");
        plan.push_back({"block sort", size_t{T::tile}, [=] {
                            kernel<<<blocks, T::blockNt, bytes>>>(in, vin, out, vout, n);
                            CUDA_CHECK_LAUNCH("blockSortKernel");
                        }});
    }
    for (int pass = 1; pass <= merges; ++pass) {
        const MergeStep step = kFourWay ? mergeStep(n, T::tile, pass - 1) : MergeStep{mergePassWidth(T::tile, pass - 1), 2};
        const size_t width = step.width;
        const bool last = pass == merges;
        const uint32_t *in = keysAt(pass - 1), *vin = valsAt(pass - 1);
        uint32_t *out = keysAt(pass), *vout = valsAt(pass);
        size_t* parts = buf.partitions;
        const size_t tiles = ceilDiv<size_t>(n, T::nv);
        const unsigned partitionBlocks = gridFor(tiles, 256, "partition"), mergeBlocks = gridFor(tiles, 1, "merge");
        const bool four = step.ways == 4;  // the two kernels of each kind share one signature
        auto partition = four ? partition4Kernel : partitionKernel;
        auto kernel = four ? (last ? merge4Kernel<T, Ord, kPairs, true> : merge4Kernel<T, Ord, kPairs, false>)
                           : (last ? mergeKernel<T, Ord, kPairs, true> : mergeKernel<T, Ord, kPairs, false>);
        const size_t bytes = four ? T::merge4Bytes(kPairs) : T::mergeBytes(kPairs);
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
        plan.push_back({four ? "merge x4" : "merge", width, [=] {
                            partition<<<partitionBlocks, 256>>>(in, parts, n, width, T::nv, tiles);
                            CUDA_CHECK_LAUNCH("the partition kernel");
                            kernel<<<mergeBlocks, T::nt, bytes>>>(in, vin, out, vout, parts, n, width);
                            CUDA_CHECK_LAUNCH("the merge kernel");
                        }});
    }
    return plan;
}

inline void runPlan(const std::vector<Pass>& plan) {
    for (const auto& pass : plan) pass.launch();
}

// ======================================================== the variant table
//
// One sort on the device: common's buffers (keys in and out; in key-value
// mode values = the original index), the scratch the passes ping-pong
// through, and the order.
template <class Key>
struct Sorting {
    SortBuffers<Key> d;
    bool descending;
    DeviceBuffer<uint32_t> tmpKeys, tmpVals;
    DeviceBuffer<size_t> partitions;
    std::map<std::string, std::vector<Pass>> plans;  // each production row's passes, by row name
    Sorting(const std::vector<Key>& input, bool pairs, bool descending_)
        : d(uploadSort(input, pairs)), descending(descending_), tmpKeys(input.size()), tmpVals(pairs ? input.size() : 0),
          partitions(4 * ceilDiv<size_t>(input.size(), kSmallestNv) + 1) {}  // four entries a tile at the smallest nv: the most
    void poison() { d.poison(); }
    PassBuffers buffers() {
        return {d.in.get(), d.vin.get(), d.out.get(), d.vout.get(), tmpKeys.get(), tmpVals.get(), partitions.get()};
    }
};

// Device bytes a sort of n keys needs: buffers, scratch, partitions and CUB's
// scratch (about the buffers again), saturating.
template <class Key>
size_t sortingBytes(size_t n, bool pairs) {
    const size_t buffers = sortBytesNeeded<Key>(n, pairs, 0);
    return buffers > SIZE_MAX / 3 ? SIZE_MAX : 2 * buffers + n / 8 + (size_t{64} << 20);
}

template <class T, class Key, bool kPairs, bool kFourWay>
std::vector<Pass> planFor(Sorting<Key>& s) {
    return s.descending ? planSortWith<T, Order<Key, true>, kPairs, kFourWay>(s.buffers(), s.d.n)
                        : planSortWith<T, Order<Key, false>, kPairs, kFourWay>(s.buffers(), s.d.n);
}

template <class Key>
using Row = Variant<Sorting<Key>>;

// A production row: the plan is built once, on the problem's buffers.
template <class T, bool kFourWay>
std::string tiledRowName() {
    return "blocksort " + std::to_string(T::blockNt) + "x" + std::to_string(T::blockVt) + ", " +
           (kFourWay ? "4-way " : "") + "merge " + std::to_string(T::nt) + "x" + std::to_string(T::vt);
}
template <class T, bool kFourWay, class Key, bool kPairs>
Row<Key> tiledRow(Sorting<Key>& s) {
    auto plan = planFor<T, Key, kPairs, kFourWay>(s);
    const std::string name = tiledRowName<T, kFourWay>();
    s.plans[name] = plan;
    return {name, {std::to_string(T::tile), std::to_string(T::nv), std::to_string(plan.size())},
            [plan](Sorting<Key>&) { runPlan(plan); }, static_cast<double>(plan.size())};
}

// The seed's sort as a row: out = in, then one launch per width between out
// and the scratch, and a copy back when the last width lands in the scratch.
template <class Key>
Row<Key> seedRow(Sorting<Key>& s) {
    const size_t n = s.d.n, launches = n > 1 ? mergePassCount(n, 1) : 0;
    return {"seed 14.2: one launch per width", {"1", "-", std::to_string(launches)},
            [](Sorting<Key>& p) {
                const size_t n = p.d.n;
                if (n == 0) return;
                Key* tmp = reinterpret_cast<Key*>(p.tmpKeys.get());  // 4-byte keys: the scratch holds them
                uint32_t* tmpVals = p.d.pairs ? p.tmpVals.get() : nullptr;
                CUDA_CHECK(cudaMemcpyAsync(p.d.out.get(), p.d.in.get(), n * sizeof(Key), cudaMemcpyDeviceToDevice));
                if (p.d.pairs) CUDA_CHECK(cudaMemcpyAsync(p.d.vout.get(), p.d.vin.get(), n * 4, cudaMemcpyDeviceToDevice));
                const int where = p.descending ? seedSort(p.d.out.get(), p.d.vout.get(), tmp, tmpVals, n, Order<Key, true>{})
                                               : seedSort(p.d.out.get(), p.d.vout.get(), tmp, tmpVals, n, Order<Key, false>{});
                if (where == 0) return;
                CUDA_CHECK(cudaMemcpyAsync(p.d.out.get(), tmp, n * sizeof(Key), cudaMemcpyDeviceToDevice));
                if (p.d.pairs) CUDA_CHECK(cudaMemcpyAsync(p.d.vout.get(), tmpVals, n * 4, cudaMemcpyDeviceToDevice));
            },
            static_cast<double>(launches + 1)};
}

constexpr size_t kSeedRowLimit = size_t{1} << 24;  // past this the seed's O(n log^2 n) sort takes seconds

// The rows, simplest first, each a step from the one before; shapes the
// card's shared memory cannot hold are left out (a T4 runs the 256x15 ones).
template <class T, bool kFourWay, class Key, bool kPairs>
void addTiled(std::vector<Row<Key>>& rows, Sorting<Key>& s, const Run& run) {
    const size_t bytes = std::max(T::blockSortBytes(kPairs), kFourWay ? T::merge4Bytes(kPairs) : T::mergeBytes(kPairs));
    // --only is tested on the name before the plan is built (building sets kernel attributes).
    if (bytes <= run.device.sharedPerBlockOptin && run.wants(tiledRowName<T, kFourWay>()))
        rows.push_back(tiledRow<T, kFourWay, Key, kPairs>(s));
}

template <class Key>
std::vector<Row<Key>> variantRows(Sorting<Key>& s, const Run& run, bool withSeed) {
    std::vector<Row<Key>> rows;
    if (withSeed && run.wants("seed")) rows.push_back(seedRow(s));
    if (s.d.pairs) {
        addTiled<TuneFallback, false, Key, true>(rows, s, run);
        addTiled<TuneFallback, true, Key, true>(rows, s, run);
        addTiled<TunePairsLarge, false, Key, true>(rows, s, run);
        addTiled<TunePairsLarge, true, Key, true>(rows, s, run);
    } else {
        addTiled<TuneFallback, false, Key, false>(rows, s, run);
        addTiled<TuneFallback, true, Key, false>(rows, s, run);
        addTiled<TuneKeysLarge, false, Key, false>(rows, s, run);
        addTiled<TuneKeysWide, false, Key, false>(rows, s, run);
        addTiled<TuneKeysWide, true, Key, false>(rows, s, run);
        addTiled<TuneKeysTwoPerSm, true, Key, false>(rows, s, run);
    }
    return rows;
}

// ================================================================= selftest
// Host only: the seed's per-thread bodies (the same functions the kernels
// call) run for every thread of every launch, and the pass arithmetic.

// The seed's sort on the host: every width, every output position, through
// passOutput; buffers one key longer than n, holding a sentinel past the end
// (the smallest key), so that a read past a run's end changes the output.
template <class Key>
std::vector<Key> hostSeedSort(std::vector<Key> keys, std::vector<uint32_t>& vals, bool descending,
                              std::vector<std::vector<Key>>* trace = nullptr) {
    const size_t n = keys.size();
    const Key sentinel = keyOfRank<Key>(0, descending ? ~0u : 0u);
    keys.push_back(sentinel);
    vals.resize(n);
    std::iota(vals.begin(), vals.end(), 0u);
    vals.push_back(0xFFFFFFFFu);
    std::vector<Key> next(keys);
    std::vector<uint32_t> nextVals(vals);
    for (size_t width = 1; width < n; width *= 2) {
        for (size_t k = 0; k < n; ++k) {
            if (descending) passOutput(k, keys.data(), next.data(), vals.data(), nextVals.data(), n, width, Order<Key, true>{});
            else passOutput(k, keys.data(), next.data(), vals.data(), nextVals.data(), n, width, Order<Key, false>{});
        }
        keys.swap(next);
        vals.swap(nextVals);
        if (trace) trace->push_back(std::vector<Key>(keys.begin(), keys.begin() + n));
    }
    keys.pop_back();
    vals.pop_back();
    return keys;
}

template <class Key>
bool hostSeedSortMatches(const std::vector<Key>& input, bool descending, const std::string& what) {
    std::vector<uint32_t> vals;
    const std::vector<Key> got = hostSeedSort(input, vals, descending);
    const SortReference<Key> want = referenceSort(input, descending);
    std::vector<size_t> sources(vals.begin(), vals.end());
    for (auto& s : sources) s = s == 0xFFFFFFFFu ? SIZE_MAX : s;
    return compareExact(what.c_str(), got.data(), want.keys.data(), input.size()) &&
           compareProvenance(what.c_str(), sources.data(), want.indices.data(), input.size(), describeInput);
}

// One four-way pass on the host through the kernels' own pieces, tile by
// tile: the partition for every tile, then each step for every thread
// before the next step (the kernel's barriers). The input holds sorted runs
// of `width`; values are positions, so the output names where each key came
// from. Compared with the stable sort of each group of four runs.
template <class T, bool kPairs>
bool merge4Matches(size_t n, size_t width, uint64_t alphabet, uint64_t seed) {
    SplitMix64 rng(seed);
    std::vector<uint32_t> keys(n), vals(n), outKeys(n, 0xDEADBEEFu), outVals(n, 0xFFFFFFFFu);
    for (auto& k : keys) k = static_cast<uint32_t>(rng.below(alphabet));
    for (size_t r = 0; r < n; r += width) std::sort(keys.begin() + r, keys.begin() + std::min(n, r + width));
    std::iota(vals.begin(), vals.end(), 0u);
    const size_t tiles = ceilDiv<size_t>(n, T::nv);
    std::vector<size_t> parts(4 * tiles + 1);
    for (size_t t = 0; t < tiles; ++t) partition4Tile(t, keys.data(), parts.data(), n, width, T::nv);
    std::vector<uint32_t> smem(T::merge4Bytes(true) / 4);
    uint32_t *sKeys = smem.data(), *sMid = sKeys + T::nv + 1, *sVals = sMid + T::nv + 1, *sMidVals = sVals + T::nv;
    for (size_t t = 0; t < tiles; ++t) {
        std::fill(smem.begin(), smem.end(), 0xA5A5A5A5u);  // junk where nothing was loaded
        const Tile4 tile = tile4Of(t, T::nv, n, width, parts.data());
        for (int tid = 0; tid < T::nt; ++tid) merge4Load<T, kPairs>(tid, tile, keys.data(), vals.data(), sKeys, sVals);
        for (int tid = 0; tid < T::nt; ++tid) merge4Round1<T, kPairs>(tid, tile, sKeys, sVals, sMid, sMidVals);
        for (int tid = 0; tid < T::nt; ++tid) merge4Round2<T, kPairs>(tid, tile, sMid, sMidVals, sKeys, sVals);
        for (int tid = 0; tid < T::nt; ++tid)
            merge4Store<T, Order<uint32_t, false>, kPairs, false>(tid, tile, sKeys, sVals, outKeys.data(), outVals.data());
    }
    std::vector<size_t> want(n);
    std::iota(want.begin(), want.end(), size_t{0});
    for (size_t g = 0; g < n; g += 4 * width)
        std::stable_sort(want.begin() + g, want.begin() + std::min(n, g + 4 * width), [&](size_t x, size_t y) { return keys[x] < keys[y]; });
    for (size_t p = 0; p < n; ++p) {
        if (outKeys[p] != keys[want[p]] || (kPairs && outVals[p] != want[p])) {
            std::printf("four-way pass (nv %d, width %zu, n %zu): output %zu holds key %u from %u, expected key %u from %zu\n",
                        T::nv, width, n, p, outKeys[p], kPairs ? outVals[p] : 0u, keys[want[p]], want[p]);
            return false;
        }
    }
    return true;
}

int runSelftest() {
    // 14.1 on the seed's example, every output position through mergeOutput;
    // B follows A in one buffer that ends in a sentinel (the smallest key), so
    // a read past either run's end changes the output instead of being undefined.
    const std::vector<int32_t> AB = {1, 3, 6, 8, 2, 4, 5, 7, INT32_MIN};
    std::vector<int32_t> merged(8);
    for (size_t k = 0; k < 8; ++k) mergeOutput(k, AB.data(), 4, AB.data() + 4, 4, merged.data(), nullptr, Order<int32_t, false>{});
    expect(merged == std::vector<int32_t>({1, 2, 3, 4, 5, 6, 7, 8}), "14.1: the seed's merge of 1 3 6 8 and 2 4 5 7");
    // 14.2: the seed's trace, pass by pass.
    std::vector<std::vector<int32_t>> trace;
    std::vector<uint32_t> vals;
    hostSeedSort<int32_t>({5, 2, 8, 1, 9, 3, 7, 4}, vals, false, &trace);
    expect(trace == std::vector<std::vector<int32_t>>({{2, 5, 1, 8, 3, 9, 4, 7}, {1, 2, 5, 8, 3, 4, 7, 9}, {1, 2, 3, 4, 5, 7, 8, 9}}),
           "14.2: the seed's trace 2 5 1 8 3 9 4 7 / 1 2 5 8 3 4 7 9 / 1 2 3 4 5 7 8 9");
    // Every n up to 64 with ties (keys from {0, 1, 2}), then random n up to
    // 2^14, both orders: the sort equals the stable reference, keys and indices.
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
    expect(ok, "the seed's sort equals the stable sort (every n <= 64 with ties, random n to 2^14)");
    // The pass structure: pairs of runs cover [0, n) once per width; the
    // pass count is the doublings from the tile to n.
    ok = true;
    for (size_t n = 1; n <= 300 && ok; ++n)
        for (size_t width = 1; width < 2 * n && ok; width *= 2)
            for (size_t g = 0; g < n && ok; ++g) {
                const PairSpan p = pairOf(g, width, n);
                ok = p.start % (2 * width) == 0 && p.start <= g && g < p.start + p.aLen + p.bLen && p.aLen <= width &&
                     p.bLen <= width && p.start + p.aLen + p.bLen <= n && (p.bLen == 0 || p.aLen == width);
            }
    expect(ok, "pairOf: every position lies in one pair of runs of the width, short only at the tail");
    expect(mergePassCount(1, 4) == 0 && mergePassCount(4, 4) == 0 && mergePassCount(5, 4) == 1 &&
               mergePassCount(size_t{1} << 28, TuneKeysWide::tile) == 13 && mergePassWidth(TuneKeysWide::tile, 12) == size_t{TuneKeysWide::tile} << 12,
           "mergePassCount: 13 merge passes after 33792-key tiles at 2^28 keys");
    // mergePath (Part B's search) agrees with co_rank (the seed's) on every
    // diagonal of sorted runs with ties.
    ok = true;
    for (int trial = 0; trial < 2000 && ok; ++trial) {
        std::vector<uint32_t> a(rng.below(20)), b(rng.below(20));
        for (auto& x : a) x = static_cast<uint32_t>(rng.below(4));
        for (auto& x : b) x = static_cast<uint32_t>(rng.below(4));
        std::sort(a.begin(), a.end());
        std::sort(b.begin(), b.end());
        for (size_t diag = 0; diag <= a.size() + b.size() && ok; ++diag) {
            size_t i, j;
            co_rank(diag, a.data(), a.size(), b.data(), b.size(), &i, &j, Order<uint32_t, false>{});
            ok = mergePath<size_t>(a.data(), a.size(), b.data(), b.size(), diag) == i;
        }
    }
    expect(ok, "mergePath equals co_rank on every diagonal (ties to the left run)");
    // The per-thread network sorts vt keys stably (values = positions).
    ok = true;
    for (int trial = 0; trial < 3000 && ok; ++trial) {
        uint32_t k[11], v[11];
        for (int x = 0; x < 11; ++x) k[x] = static_cast<uint32_t>(rng.below(trial % 2 ? 3 : 1000)), v[x] = x;
        std::vector<std::pair<uint32_t, uint32_t>> want;
        for (int x = 0; x < 11; ++x) want.push_back({k[x], v[x]});
        std::stable_sort(want.begin(), want.end(), [](auto p, auto q) { return p.first < q.first; });
        oddEvenTranspositionSort<11, true>(k, v);
        for (int x = 0; x < 11 && ok; ++x) ok = k[x] == want[x].first && v[x] == want[x].second;
    }
    expect(ok, "oddEvenTranspositionSort sorts 11 keys stably");
    ok = true;  // keys only: Batcher's network, pruned to 33 and 15 keys, sorts (ties and none)
    for (int trial = 0; trial < 3000 && ok; ++trial) {
        uint32_t k33[33], k15[15];
        for (int x = 0; x < 33; ++x) k33[x] = static_cast<uint32_t>(rng.below(trial % 2 ? 3 : 1000));
        std::copy(k33, k33 + 15, k15);
        std::vector<uint32_t> want33(k33, k33 + 33), want15(k15, k15 + 15);
        std::sort(want33.begin(), want33.end());
        std::sort(want15.begin(), want15.end());
        oddEvenMergeSort<33>(k33);
        oddEvenMergeSort<15>(k15);
        ok = std::equal(want33.begin(), want33.end(), k33) && std::equal(want15.begin(), want15.end(), k15);
    }
    expect(ok, "oddEvenMergeSort sorts 33 and 15 keys");
    // The four-way pass, through the kernels' pieces: sizes around the
    // groups of four runs, ties (3 keys) and none, keys and key-value.
    ok = true;
    for (size_t width : {size_t{TuneFallback::tile}, 2 * size_t{TuneFallback::tile}})
        for (size_t n : {size_t{1}, size_t{100}, width - 1, width, width + 1, 2 * width + 5, 3 * width, 4 * width - 1,
                         4 * width, 4 * width + 1, 9 * width + 77})
            for (uint64_t alphabet : {uint64_t{3}, uint64_t{1} << 32})
                ok = ok && merge4Matches<TuneFallback, true>(n, width, alphabet, n + width) &&
                     merge4Matches<TuneFallback, false>(n, width, alphabet, n ^ width);
    ok = ok && merge4Matches<TuneKeysWide, false>(5 * TuneKeysWide::tile + 3, TuneKeysWide::tile, 3, 1) &&
         merge4Matches<TunePairsLarge, true>(4 * TunePairsLarge::tile + 1, TunePairsLarge::tile, 5, 2);
    expect(ok, "the four-way pass equals the stable merge of every group of four runs");
    expect(mergeStepCount(size_t{1} << 28, TuneKeysWide::tile) == 7 && mergeStep(size_t{1} << 28, TuneKeysWide::tile, 0).ways == 2 &&
               mergeStep(size_t{1} << 28, TuneKeysWide::tile, 1).width == 2 * size_t{TuneKeysWide::tile},
           "mergeStep: 13 doublings at 2^28 keys = one two-way pass, then six four-way passes");
    return selftestVerdict();
}

// =============================================================== the lesson

// The reference every row is checked against: the host's stable sort (an
// LSD radix sort, a few seconds at 2^28 keys), or past 2^31 keys (where it
// needs tens of GB of host memory) CUB's stable merge sort on the GPU, whose
// output --verify holds to the host's at every smaller size; CUB's own row
// is then not checked, since it would be compared with itself.
constexpr size_t kHostReferenceLimit = size_t{1} << 31;
template <class Key>
SortReference<Key> referenceFor(const std::vector<Key>& input, Sorting<Key>& s) {
    if (input.size() <= kHostReferenceLimit) return referenceSort(input, s.descending);
    LibrarySort<Key> cub(LibrarySort<Key>::Kind::Merge, s.d, s.descending);
    s.poison();
    cub();
    CUDA_CHECK(cudaDeviceSynchronize());
    SortReference<Key> r;
    r.keys.resize(s.d.n);
    s.d.out.download(r.keys.data(), s.d.n);
    if (s.d.pairs) {
        std::vector<uint32_t> values(s.d.n);
        s.d.vout.download(values.data(), s.d.n);
        r.indices.assign(values.begin(), values.end());
    }
    std::printf("reference: %s on the GPU (past 2^31 keys; --verify holds it to the host's stable sort)\n", cub.name().c_str());
    return r;
}

// Checks every row and both CUB sorts on one input: the rows and CUB's
// merge sort stable, CUB's radix sort as a permutation (it holds -0.0 and
// +0.0 equal, so those two may swap).
template <class Key>
bool checkInput(const std::vector<Key>& input, Sorting<Key>& s, const std::vector<Row<Key>>& rows,
                const std::string& label, bool announce) {
    const SortReference<Key> want = referenceFor(input, s);
    using Lib = LibrarySort<Key>;
    Lib merge(Lib::Kind::Merge, s.d, s.descending), radix(Lib::Kind::Radix, s.d, s.descending);
    const Row<Key> mergeRow{merge.name(), {}, [&](Sorting<Key>&) { merge(); }}, radixRow{radix.name(), {}, [&](Sorting<Key>&) { radix(); }};
    auto checkAs = [&](SortCheck rule) {
        return [&, rule](const std::string& what) { return sortMatches(what, s.d, input, want, rule); };
    };
    const bool cubIsReference = input.size() > kHostReferenceLimit;
    return checkRows(rows, s, checkAs(SortCheck::Stable), label, announce) &&
           (cubIsReference || checkRows({mergeRow}, s, checkAs(merge.rule()), label, announce)) &&
           checkRows({radixRow}, s, checkAs(radix.rule()), label, announce);
}

template <class Key>
int verifyAs(const SortOptions& o, const Run& run) {
    std::vector<SortCase> cases = adversarialSortCases();
    for (size_t n : {size_t{TuneFallback::tile} - 1, size_t{TuneFallback::tile} + 1, size_t{TunePairsLarge::tile} + 1,
                     size_t{TuneKeysWide::tile} - 1, size_t{TuneKeysWide::tile}, 3 * size_t{TuneKeysWide::tile} + 5})
        cases.push_back({SortShape::FewDistinct, n});
    for (SortShape shape : sortTableShapes()) cases.push_back({shape, 3000017});
    if (o.nGiven) cases = {{SortShape::Uniform, o.n}};
    int failed = 0, sorts = 0;
    for (const SortCase& c : cases)
        for (int mode = 0; mode < 3; ++mode) {  // keys ascending, pairs ascending, pairs descending
            const bool pairs = mode > 0, descending = mode == 2;
            if (pairs && (!sortValuesFit(c.n) || (o.nGiven && !o.pairs))) continue;
            const std::vector<Key> input = makeSortInput<Key>(c.shape, c.n, 7 + c.n + mode);
            Sorting<Key> s(input, pairs, descending);
            const auto rows = variantRows(s, run, c.n <= (size_t{1} << 22));
            const bool ok = checkInput(input, s, rows, sortCaseLabel<Key>(sortShapeName(c.shape), c.n, descending, pairs), false);
            failed += !ok;
            sorts += static_cast<int>(rows.size()) + (c.n > kHostReferenceLimit ? 1 : 2);  // and both CUB sorts (merge: the oracle past the limit)
        }
    const char* modes = o.nGiven && !o.pairs ? "keys, ascending" : "keys ascending, and key-value both orders";
    std::printf("verify %s: %zu inputs, %d sorts (every row and both CUB sorts; %s): %s\n", keyName<Key>(), cases.size(), sorts,
                modes, failed ? "FAILED" : "all exact, stable");
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

// The seed's worked examples from real launches, checked.
bool seedExamples() {
    using Ord = Order<int32_t, false>;
    const std::vector<int32_t> A = {1, 3, 6, 8}, B = {2, 4, 5, 7}, input = {5, 2, 8, 1, 9, 3, 7, 4};
    DeviceBuffer<int32_t> dA(4), dB(4), dOut(8), d0(8), d1(8);
    dA.upload(A.data(), 4);
    dB.upload(B.data(), 4);
    dOut.poison();
    launchSeedMerge(dA.get(), 4, dB.get(), 4, dOut.get(), nullptr, Ord{});
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
    seedSort<int32_t>(d0.get(), nullptr, d1.get(), nullptr, 8, Ord{}, [&](size_t width, int buffer) {
        (buffer ? d1 : d0).download(got.data(), 8);
        std::printf("     launch %d (width %zu): %s\n", pass + 1, width, spacedKeys(got).c_str());
        ok = compareExact(("14.2 the seed's pass " + std::to_string(pass + 1)).c_str(), got.data(), want[pass].data(), 8) && ok;
        ++pass;
    });
    return ok && pass == 3;
}

// Each pass of a plan timed on its own: events between the passes of whole
// sorts (each pass reads what the one before wrote), median per pass.
template <class Key>
void passTable(const std::vector<Pass>& plan, const std::string& title, double bytesPerPass, double copyMs,
               const Run& run, CsvFile& csv) {
    std::vector<cudaEvent_t> events(plan.size() + 1);
    for (auto& e : events) CUDA_CHECK(cudaEventCreate(&e));
    std::vector<std::vector<float>> samples(plan.size());
    for (int r = 0; r < run.plan.warmups + run.plan.repeats; ++r) {
        CUDA_CHECK(cudaEventRecord(events[0]));
        for (size_t p = 0; p < plan.size(); ++p) {
            plan[p].launch();
            CUDA_CHECK(cudaEventRecord(events[p + 1]));
        }
        CUDA_CHECK(cudaEventSynchronize(events.back()));
        for (size_t p = 0; p < plan.size() && r >= run.plan.warmups; ++p) {
            float ms = 0;
            CUDA_CHECK(cudaEventElapsedTime(&ms, events[p], events[p + 1]));
            samples[p].push_back(ms);
        }
    }
    for (auto& e : events) CUDA_CHECK(cudaEventDestroy(e));
    Table table(title, {{"pass", 12, true}, {"width", 10}, {"time (ms)", 9}, {"GB/s", 7}, {"% of copy", 9}}, &csv);
    double sum = 0;
    for (size_t p = 0; p < plan.size(); ++p) {
        auto& s = samples[p];
        std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
        const double ms = s[s.size() / 2];
        sum += ms;
        table.row({plan[p].name, std::to_string(plan[p].width), fixed(ms, 4), fixed(gbPerSecond(bytesPerPass, ms), 0),
                   fixed(100.0 * copyMs / ms, 1)});
    }
    table.row({"sum", "", fixed(sum, 3), "", fixed(100.0 * copyMs * plan.size() / sum, 1)});
}

struct Summary {
    std::string shape;
    double ms, mergeMs, radixMs;
};

template <class Key>
int runShape(const SortOptions& o, const Run& run, SortShape shape, CsvFile& csv, std::vector<Summary>& summary) {
    const std::vector<Key> input = makeSortInput<Key>(shape, o.n);
    Sorting<Key> s(input, o.pairs, o.descending);
    const std::string label = sortCaseLabel<Key>(sortShapeName(shape), o.n, o.descending, o.pairs);
    const auto rows = variantRows(s, run, o.n <= kSeedRowLimit);
    if (!checkInput(input, s, rows, label, summary.empty() && !o.all)) return kExitCheckFailed;
    std::printf("%s: %zu rows and both CUB sorts match the reference exactly%s\n", label.c_str(), rows.size(),
                o.pairs ? " (keys, and every value is the original index the stable order puts there)" : "");
    if (!run.timing || o.n == 0 || rows.empty()) return kExitPass;
    using Lib = LibrarySort<Key>;
    Lib merge(Lib::Kind::Merge, s.d, o.descending), radix(Lib::Kind::Radix, s.d, o.descending);
    TimedTable<Sorting<Key>> spec{"merge sort, " + label, {{"tile", 6}, {"merge nv", 8}, {"passes", 6}}, s.d.bytesPerPass(),
                                  static_cast<double>(o.n), [&] { s.d.copy(); },
                                  {merge.name(), {}, [&](Sorting<Key>&) { merge(); }, 0}};
    spec.others = {{radix.name(), {}, [&](Sorting<Key>&) { radix(); }, 0}};
    const TimedRows t = timeRows(spec, rows, s, run, &csv);
    summary.push_back({sortShapeName(shape), t.ms[t.best], t.libraryMs, t.othersMs[0]});
    if (summary.size() == 1 && s.plans.count(rows.back().name))  // the passes of the last (most refined) row
        passTable<Key>(s.plans[rows.back().name], "each pass of " + rows.back().name + " (" + label + ")",
                       s.d.bytesPerPass(), t.copyMs, run, csv);
    return kExitPass;
}

template <class Key>
int runLessonAs(const SortOptions& o, const Run& run) {
    requireDeviceMemory(sortingBytes<Key>(o.n, o.pairs), "merge_sort (keys, values, scratch and CUB's)");
    CsvFile csv;
    csv.open(run.csvPath, "merge_sort");
    if (!seedExamples()) return kExitCheckFailed;
    std::vector<Summary> summary;
    for (SortShape shape : o.all ? sortTableShapes() : std::vector<SortShape>{sortShapeFromName(o.input)})
        if (const int rc = runShape<Key>(o, run, shape, csv, summary); rc != kExitPass) return rc;
    if (summary.size() > 1) {
        Table table("merge sort by distribution, " + std::string(keyName<Key>()) + " n=" + std::to_string(o.n) +
                        (o.pairs ? " pairs" : ""),
                    {{"distribution", 12, true}, {"time (ms)", 9}, {"Gkeys/s", 7}, {"vs CUB", 6}, {"vs radix", 8},
                     {"CUB merge Gkeys/s", 17}, {"CUB radix Gkeys/s", 17}}, &csv);  // the last two for plot_sweep.py
        const double gkeys = o.n / 1e6;  // over a time in ms: Gkeys/s
        for (const Summary& r : summary)
            table.row({r.shape, fixed(r.ms, 3), fixed(gkeys / r.ms, 2), fixed(r.mergeMs / r.ms, 2), fixed(r.radixMs / r.ms, 2),
                       fixed(gkeys / r.mergeMs, 2), fixed(gkeys / r.radixMs, 2)});
    }
    return kExitPass;
}

// ===================================================================== main

int main(int argc, char** argv) {
    SortOptions o;
    return lessonEntry(argc, argv, {"merge_sort", "Chapter 14.1-14.2: merge sort -- co-rank merges, bottom-up passes, a sort beside CUB's.",
        sortOptions("keys to sort (default 2^28; --quick 2^22)",
                    "sort uint32 values (each key's original index) with the keys; checked as stable",
                    "a table per distribution of DESIGN.md, then a summary"),
        {"seed", "blocksort"},
        [&](const Args& args, const Run& run) { readSortOptions(args, run, o, size_t{1} << 28, size_t{1} << 22); },
        runSelftest, [&](const Run& run) { return runVerify(o, run); },
        [&](const Run& run) { return onKeyType(o.key, [&](auto key) { return runLessonAs<decltype(key)>(o, run); }); }});
}

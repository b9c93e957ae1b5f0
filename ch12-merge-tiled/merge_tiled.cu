// Chapter 12, sections 12.5-12.8 (seed 001): the co-rank merge, made fast one step at a time.
// Part A, the seed: merge_basic (12.5: each thread co-ranks and merges in global memory),
// merge_tiled (12.6: a block loads its two spans coalesced into shared memory first) and
// merge_circular (12.7: the same shared memory as two circular buffers, refilled round by
// round), with 12.8's coarsening (tile, outputs per thread) as their runtime knobs.
// Part B, production: a merge-path partition, then path_tiles (the tile's spans copied into
// shared memory with 16-byte cp.async, vt outputs per thread merged in registers, stores
// coalesced through shared memory).
//
// Build:  nvcc -std=c++17 -O3 -arch=sm_75 -o merge_tiled merge_tiled.cu   (sm_90 on an H200)
// Run:    ./merge_tiled                     device report, checks, then keys and key-value tables
//         ./merge_tiled --only merge        part A's rows (merge_basic, merge_tiled, merge_circular)
//         ./merge_tiled --only path --m 2^27 --n 2^27     part B at the performance target's size
//         ./merge_tiled --verify            every row x key type on the adversarial inputs
//         ./merge_tiled --selftest          host tests of the building blocks (no GPU); --help
//
// Reading map (section names as they appear below): PART A: building blocks (co_rank,
// serial_merge, the circular buffer), kernels, launchers. PART B: PathTuning, pieces,
// kernels, launchers. THE VARIANT TABLE. SELFTESTS. VERIFY AND THE LESSON. MAIN.
//
// A learner may change: the coarsening sweep (--tiles, --per-thread, --basic-per-thread,
// --rounds), the input (--m, --n, --input, --key), and the production shapes, one line
// each, in variantTable().
//
// The tie rule, once, kept by every piece: equal keys come from a first, so every kernel is
// a stable merge. The key-value table carries each element's position in a||b as its value.

#include "../common/check.hpp"
#include "../common/device_utils.cuh"
#include "../common/inputs.hpp"
#include "../common/library_merge.cuh"
#include "../common/merge_buffers.cuh"
#include "../common/selftest.hpp"
#include "../common/variants.hpp"

#include <cuda_pipeline.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

// ================================================================= PART A: the seed
// ---- building blocks (__host__ __device__: --selftest runs these same bodies)

template <class T> __host__ __device__ constexpr T min_of(T x, T y) { return y < x ? y : x; }

// The co-rank of output index k: how many of the first k outputs of the stable merge of a[0, m) and b[0, n) come
// from a. a and b are anything indexable: global memory, a shared tile, a circular buffer. a[mid] is among the first
// k outputs exactly when fewer than k - mid keys of b are below it (ties: a first), i.e. !(b[k - 1 - mid] < a[mid]):
// true for small mid, false for large, so bisect for the first mid where it fails. Reads a[lo, hi), b[k - hi, k - lo).
template <class Index, class ArrayA, class ArrayB>
__host__ __device__ Index co_rank(Index k, const ArrayA& a, Index m, const ArrayB& b, Index n) {
    Index lo = k > n ? k - n : 0;  // at least k - n outputs must come from a
    Index hi = k < m ? k : m;      // at most min(k, m) can
    while (lo < hi) {
        const Index mid = lo + (hi - lo) / 2;  // lo <= mid < hi: k - 1 - mid is in [0, n)
        if (b[k - 1 - mid] < a[mid]) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

// The serial merge of a[i, iEnd) and b[j, jEnd), ties from a. Output number k (from 0) goes to emit(k, key, fromA,
// index), index being its position in a (fromA) or b.
template <class Index, class ArrayA, class ArrayB, class Emit>
__host__ __device__ void serial_merge(const ArrayA& a, Index i, Index iEnd, const ArrayB& b, Index j, Index jEnd,
                                      Emit&& emit) {
    Index k = 0;
    while (i < iEnd && j < jEnd) {
        if (b[j] < a[i]) { emit(k++, b[j], false, j); ++j; }
        else { emit(k++, a[i], true, i); ++i; }  // a[i] <= b[j]: the tie goes to a
    }
    for (; i < iEnd; ++i) emit(k++, a[i], true, i);
    for (; j < jEnd; ++j) emit(k++, b[j], false, j);
}

// ---- the circular buffer (12.7). A buffer of `size` slots holds a run of one input; logical element x (0: the
// oldest not merged yet) sits in slot head + x, wrapped. Both are below size: one subtraction wraps, no modulo.

__host__ __device__ inline int wrap_slot(int head, int x, int size) {
    const int s = head + x;
    return s >= size ? s - size : s;
}

template <class Key> struct CircularView {
    const Key* slots; int head, size;
    __host__ __device__ Key operator[](int x) const { return slots[wrap_slot(head, x, size)]; }
};

// One input's side of a block: `length` span elements to merge; [consumed, loaded) are in the buffer, element g in
// slot g % size. A refill loads [loaded, refill_end()): the slots the last round consumed, nowhere else. Keeping
// `loaded` and `consumed` apart stays right when one side drains faster (every a below every b, m >> n).
struct CircularWindow {
    int size, length;
    int consumed = 0, loaded = 0;
    __host__ __device__ int head() const { return consumed % size; }
    __host__ __device__ int available() const { return loaded - consumed; }
    __host__ __device__ int refill_end() const { return min_of(consumed + size, length); }
};

// Thread tid of nt loads its share of the refill; every thread keeps its own (identical) copy of the counters.
template <class Slots, class Span>
__host__ __device__ void refill(int tid, int nt, Slots slots, const Span& span, CircularWindow& w) {
    const int end = w.refill_end(), firstSlot = w.loaded % w.size;
    for (int t = tid; t < end - w.loaded; t += nt) slots[wrap_slot(firstSlot, t, w.size)] = span[w.loaded + t];
    w.loaded = end;
}

// Thread tid's share of one round: round outputs [tid * vt, + vt) of roundOut, from the buffers' heads; emit(k, key,
// fromA, index) with k counted in the round and index counted from the window's head (logical).
template <class Key, class Emit>
__host__ __device__ void circular_round(int tid, int vt, const Key* sA, const CircularWindow& wa, const Key* sB,
                                        const CircularWindow& wb, int roundOut, Emit&& emit) {
    const CircularView<Key> a{sA, wa.head(), wa.size}, b{sB, wb.head(), wb.size};
    const int kLo = min_of(tid * vt, roundOut), kHi = min_of(kLo + vt, roundOut);
    const int iLo = co_rank(kLo, a, wa.available(), b, wb.available());
    const int iHi = co_rank(kHi, a, wa.available(), b, wb.available());
    serial_merge(a, iLo, iHi, b, kLo - iLo, kHi - iHi,
                 [&](int k, Key key, bool fromA, int index) { emit(kLo + k, key, fromA, index); });
}

// After the round: how many a's the whole round took (the same in every thread), then (past the barrier) both windows
// move on by what was used.
template <class Key> __host__ __device__ int round_a_used(const Key* sA, const CircularWindow& wa, const Key* sB,
                                                          const CircularWindow& wb, int roundOut) {
    return co_rank(roundOut, CircularView<Key>{sA, wa.head(), wa.size}, wa.available(),
                   CircularView<Key>{sB, wb.head(), wb.size}, wb.available());
}
__host__ __device__ inline void advance(CircularWindow& wa, CircularWindow& wb, int aUsed, int roundOut) {
    wa.consumed += aUsed;
    wb.consumed += roundOut - aUsed;
}

// ---- kernels. Each takes a (m keys), b (n keys), out (m + n), and in key-value mode va, vb, vout; Value = NoValues
// (common/library_merge.cuh) compiles the value code away.

// 12.5: thread t owns outputs [t * vt, + vt): two co-ranks in global memory find its split at both ends, then the
// serial merge walks a and b there. Neighbouring threads walk far-apart addresses: a warp's loads are not coalesced.
template <class Key, class Value>
__global__ void merge_basic(const Key* a, size_t m, const Key* b, size_t n, Key* out, const Value* va,
                            const Value* vb, Value* vout, size_t vt) {
    const size_t total = m + n;
    const size_t kLo = (static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x) * vt;
    if (kLo >= total) return;  // the last block's spare threads
    const size_t kHi = min_of(kLo + vt, total);
    const size_t iLo = co_rank(kLo, a, m, b, n), iHi = co_rank(kHi, a, m, b, n);
    serial_merge(a, iLo, iHi, b, kLo - iLo, kHi - iHi, [&](size_t k, Key key, bool fromA, size_t index) {
        out[kLo + k] = key;
        if constexpr (kPairs<Value>) vout[kLo + k] = fromA ? va[index] : vb[index];
        else (void)fromA, (void)index;
    });
}

// 12.6: block t owns outputs [t * tile, + tile). Its two co-ranks (threads 0 and 1, in global memory) give its a-span
// and b-span; the block loads them with consecutive threads on consecutive addresses (coalesced), then each thread
// co-ranks and merges its vt outputs inside shared memory. sA and sB hold `tile` keys each (the seed's layout: either
// input may supply the whole tile); the last, partial tile reads only its spans.
template <class Key, class Value>
__global__ void merge_tiled(const Key* a, size_t m, const Key* b, size_t n, Key* out, const Value* va,
                            const Value* vb, Value* vout, int tile, int vt) {
    extern __shared__ __align__(16) unsigned char dynamicShared[];
    Key* sA = reinterpret_cast<Key*>(dynamicShared);
    Key* sB = sA + tile;
    __shared__ size_t split[2];
    const size_t k0 = static_cast<size_t>(blockIdx.x) * tile, k1 = min_of(k0 + tile, m + n);
    for (int e = threadIdx.x; e < 2; e += blockDim.x) split[e] = co_rank(e == 0 ? k0 : k1, a, m, b, n);
    __syncthreads();
    const size_t a0 = split[0], b0 = k0 - a0;
    const int aCount = static_cast<int>(split[1] - a0), bCount = static_cast<int>((k1 - split[1]) - b0);
    for (int t = threadIdx.x; t < aCount; t += blockDim.x) sA[t] = a[a0 + t];
    for (int t = threadIdx.x; t < bCount; t += blockDim.x) sB[t] = b[b0 + t];
    __syncthreads();
    const int count = aCount + bCount;
    const int kLo = min_of(static_cast<int>(threadIdx.x) * vt, count), kHi = min_of(kLo + vt, count);
    const int iLo = co_rank(kLo, sA, aCount, sB, bCount), iHi = co_rank(kHi, sA, aCount, sB, bCount);
    Key* myOut = out + k0 + kLo;
    serial_merge(sA, iLo, iHi, sB, kLo - iLo, kHi - iHi, [&](int k, Key key, bool fromA, int index) {
        myOut[k] = key;
        if constexpr (kPairs<Value>) vout[k0 + kLo + k] = fromA ? va[a0 + index] : vb[b0 + index];
        else (void)fromA, (void)index;
    });
}

// 12.7: block t owns `rounds` tiles of outputs with the same 2 * window keys of shared memory merge_tiled spends on
// one. Each round refills the slots the last one consumed, merges the next `window` outputs from the two circular
// buffers, and counts its a's.
template <class Key, class Value>
__global__ void merge_circular(const Key* a, size_t m, const Key* b, size_t n, Key* out, const Value* va,
                               const Value* vb, Value* vout, int window, int vt, int rounds) {
    extern __shared__ __align__(16) unsigned char dynamicShared[];
    Key* sA = reinterpret_cast<Key*>(dynamicShared);
    Key* sB = sA + window;
    __shared__ size_t split[2];
    const size_t perBlock = static_cast<size_t>(window) * rounds;
    const size_t k0 = static_cast<size_t>(blockIdx.x) * perBlock, k1 = min_of(k0 + perBlock, m + n);
    for (int e = threadIdx.x; e < 2; e += blockDim.x) split[e] = co_rank(e == 0 ? k0 : k1, a, m, b, n);
    __syncthreads();
    const size_t a0 = split[0], b0 = k0 - a0;
    CircularWindow wa{window, static_cast<int>(split[1] - a0)}, wb{window, static_cast<int>((k1 - split[1]) - b0)};
    const int blockOut = static_cast<int>(k1 - k0);
    for (int produced = 0; produced < blockOut; produced += window) {  // block-uniform: the barriers are safe
        refill(threadIdx.x, blockDim.x, sA, a + a0, wa);
        refill(threadIdx.x, blockDim.x, sB, b + b0, wb);
        __syncthreads();
        const int roundOut = min_of(window, blockOut - produced);
        const size_t base = k0 + produced, aDone = a0 + wa.consumed, bDone = b0 + wb.consumed;
        circular_round(threadIdx.x, vt, sA, wa, sB, wb, roundOut, [&](int k, Key key, bool fromA, int index) {
            out[base + k] = key;
            if constexpr (kPairs<Value>) vout[base + k] = fromA ? va[aDone + index] : vb[bDone + index];
            else (void)fromA, (void)index;
        });
        const int aUsed = round_a_used(sA, wa, sB, wb, roundOut);
        __syncthreads();  // every thread is done with the slots the next refill overwrites
        advance(wa, wb, aUsed, roundOut);
    }
}

// ---- launchers. A merge on the device: common's MergeBuffers (a||b, out, values = provenance) plus the split buffer
// part B's partition writes.
template <class Key, class Value> struct MergeProblem : MergeBuffers<Key, Value> { DeviceBuffer<size_t> splits; };

// The seed kernels' geometry, in one place. tile: outputs per block and round (merge_basic: threads * vt); rounds:
// tiles per merge_circular block.
enum class Seed { Basic, Tiled, Circular };
struct SeedKnobs {
    static constexpr int kBasicThreads = 256;
    static constexpr size_t kSharedLimit = 48 * 1024;  // dynamic shared memory with no opt-in, on every card
    static constexpr size_t kMaxTile = (kSharedLimit - 2 * sizeof(size_t)) / 8;  // 2 x tile 4-byte keys + split
    Seed kind;
    int tile, vt, rounds = 1;
    int threads() const { return kind == Seed::Basic ? kBasicThreads : tile / vt; }
    size_t perBlock() const { return static_cast<size_t>(tile) * rounds; }
    size_t dynamicShared(size_t keyBytes) const { return kind == Seed::Basic ? 0 : 2 * tile * keyBytes; }
};
static_assert(2 * SeedKnobs::kMaxTile * sizeof(float) + 2 * sizeof(size_t) <= SeedKnobs::kSharedLimit,
              "merge_tiled and merge_circular: two tiles of 4-byte keys and the split fit 48 KiB");

template <class Key, class Value> void launchSeed(const SeedKnobs& k, MergeProblem<Key, Value>& p) {
    if (p.total() == 0) return;  // a grid of 0 blocks is an error
    const unsigned blocks = gridFor(p.total(), k.perBlock(), "merge_tiled (seed kernels)");
    const size_t shared = k.dynamicShared(sizeof(Key));
    switch (k.kind) {
        case Seed::Basic:
            merge_basic<Key, Value><<<blocks, k.threads()>>>(p.a(), p.m, p.b(), p.n, p.keysOut.get(), p.va(), p.vb(),
                                                             p.valuesOut.get(), static_cast<size_t>(k.vt));
            CUDA_CHECK_LAUNCH("merge_basic"); break;
        case Seed::Tiled:
            merge_tiled<Key, Value><<<blocks, k.threads(), shared>>>(p.a(), p.m, p.b(), p.n, p.keysOut.get(), p.va(),
                                                                     p.vb(), p.valuesOut.get(), k.tile, k.vt);
            CUDA_CHECK_LAUNCH("merge_tiled"); break;
        case Seed::Circular:
            merge_circular<Key, Value><<<blocks, k.threads(), shared>>>(
                p.a(), p.m, p.b(), p.n, p.keysOut.get(), p.va(), p.vb(), p.valuesOut.get(), k.tile, k.vt, k.rounds);
            CUDA_CHECK_LAUNCH("merge_circular"); break;
    }
}

// ================================================================= PART B: production
// ---- PathTuning: the one source of the production merge's tile and shared-memory sizes, read by the kernels, the
// launchers and the table alike: nt threads per block, vt values per thread, nv = nt * vt outputs per tile.
constexpr int kPartitionThreads = 128;
constexpr int kMinPathTile = 1024;  // the smallest nv allowed; sizes the split buffer

// MinBlocks: the resident blocks per SM the kernel is compiled for (common's blocksFromSm80: not on a T4, whose SM
// holds 1024 threads, too few for 3 blocks of 512).
template <int NT, int VT, int MinBlocks = 0> struct PathTuning {
    static constexpr int nt = NT, vt = VT, nv = NT * VT;
    static constexpr int minBlocks = blocksFromSm80(MinBlocks);
    // The key buffer (and the value buffer after it) holds nv elements after at most 3 + 3 + 3 alignment slots
    // (span_slots), then the sentinel, in whole 32-word rows for the swizzle.
    static constexpr int slots = (nv + 12 + 31) / 32 * 32;
    template <class Key, class Value> __host__ __device__ static constexpr size_t sharedBytes() {
        return static_cast<size_t>(slots) * (sizeof(Key) + (kPairs<Value> ? sizeof(Value) : 0));
    }
    static_assert(nv % 4 == 0, "tiles start on 16-byte boundaries for the vector stores");
    static_assert(VT % 4 == 0, "threads stage their outputs as vt / 4 16-byte chunks");
};

// ---- pieces, path_tiles' steps. Its shared-memory layout: a 16-byte access (a vector store, a cp.async) needs a
// 16-byte-aligned slot, so each span keeps its offset from a 16-byte boundary in the buffer (span_slots), and the
// buffer is swizzled against bank conflicts: in each 32-word row, 4-word chunk c sits at chunk c ^ (row & 7). Chunks
// stay whole; the reads for the global stores are conflict-free, so are the staging stores at vt 16 and 32 (3-way at
// 24); merge reads that march in step are 4-way (--selftest checks all three).
__host__ __device__ constexpr int swizzled(int x) { return x ^ ((x >> 3) & 0x1C); }

template <class T> struct SwizzledView {
    const T* words; int base;
    __host__ __device__ T operator[](int x) const { return words[swizzled(base + x)]; }
};

template <class T> __host__ __device__ const T* align_down_16(const T* p) {
    return reinterpret_cast<const T*>(reinterpret_cast<uintptr_t>(p) & ~uintptr_t{15});
}

// A tile's place in the inputs and the output, from its two splits; where its spans a[0, aCount) and b[0, ...) land
// in a buffer.
struct TileSpans {
    size_t k0, a0, b0;  // first output, first element of a, first of b
    int aCount, count;  // elements from a; outputs
};
__host__ __device__ inline TileSpans tile_spans(size_t tile, int nv, size_t total, size_t a0, size_t a1) {
    const size_t k0 = tile * nv, k1 = min_of(k0 + nv, total);
    return {k0, a0, k0 - a0, static_cast<int>(a1 - a0), static_cast<int>(k1 - k0)};
}
struct SpanSlots {
    int aStart, bStart;
};
template <class T> __host__ __device__ SpanSlots span_slots(const T* a, int aCount, const T* b) {
    const int aStart = static_cast<int>(a - align_down_16(a));
    return {aStart, ceilDiv(aStart + aCount, 4) * 4 + static_cast<int>(b - align_down_16(b))};
}

// How a span of `count` elements lies against 16-byte boundaries: it starts `shift` elements into an aligned chunk
// of kVec, so chunk c covers span positions [first(c), + kVec). Full chunks are one 16-byte access, ragged ends not.
template <int kVec> struct SpanChunks {
    int shift, count;
    __host__ __device__ int chunks() const { return count == 0 ? 0 : ceilDiv(shift + count, kVec); }
    __host__ __device__ int first(int c) const { return c * kVec - shift; }
    __host__ __device__ bool full(int c) const { return first(c) >= 0 && first(c) + kVec <= count; }
};

// The serial merge again, vt outputs into registers: from split (ai, bi) of an array holding a at [ai.., aEnd) and b
// at [bi.., bEnd), a's span first. bEnd >= 1. Reads never leave [0, bEnd): an exhausted side re-reads the last slot,
// whose value no longer matters. keys[r] is output r, from[r] its array position (< aEnd: from a); past the tile's
// last output both are junk (from stays inside [0, bEnd)).
template <int VT, class Key, class Array>
__host__ __device__ void serial_merge(const Array& tile, int ai, int aEnd, int bi, int bEnd, Key (&keys)[VT],
                                      int (&from)[VT]) {
    const int last = bEnd - 1;
    Key aKey = tile[min_of(ai, last)];
    Key bKey = tile[min_of(bi, last)];
    DEVICE_UNROLL  // VT is a constant: keys and from stay in registers
    for (int r = 0; r < VT; ++r) {
        const bool takeA = bi >= bEnd || (ai < aEnd && !(bKey < aKey));  // ties: a
        keys[r] = takeA ? aKey : bKey;
        from[r] = min_of(takeA ? ai : bi, last);
        if (takeA) aKey = tile[min_of(++ai, last)];
        else bKey = tile[min_of(++bi, last)];
    }
}

// The sentinel: the largest key (+inf for floats), which thread 0 puts just after b's span with the tile's loads. A b
// that has run out offers it, and it never beats an a key (ties go to a), so serial_merge_full tests only a's bound
// (a real key may equal the sentinel).
template <class Key> __host__ __device__ void put_sentinel(int tid, Key* slot) {
    static_assert(std::is_same<Key, float>::value || std::is_same<Key, uint32_t>::value,
                  "the sentinel is the largest float or uint32 (for int32 it would be -1)");
    if (tid == 0) *slot = fromWord<Key>(std::is_same<Key, float>::value ? 0x7F800000u : 0xFFFFFFFFu);
}

// serial_merge for a thread whose vt outputs all lie in the tile (every busy thread but the last): no clamps, no test
// of b's bound. With every output real, a and b never run out together, so reads stay in [0, bEnd]; slot aEnd, read
// once a has run out, is b's first key, a gap slot or the sentinel, and is never taken.
template <int VT, class Key, class Array>
__host__ __device__ void serial_merge_full(const Array& tile, int ai, int aEnd, int bi, Key (&keys)[VT],
                                           int (&from)[VT]) {
    Key aKey = tile[ai];
    Key bKey = tile[bi];
    DEVICE_UNROLL
    for (int r = 0; r < VT; ++r) {
        const bool takeA = ai < aEnd && !(bKey < aKey);  // ties: a
        const int taken = takeA ? ai : bi;
        keys[r] = takeA ? aKey : bKey;
        from[r] = taken;
        const Key next = tile[taken + 1];  // one successor, one address, one load
        if (takeA) aKey = next, ai = taken + 1;
        else bKey = next, bi = taken + 1;
    }
}

// Step 1, thread tid's share of a tile's spans into a buffer at span_slots, the sentinel after b's
// span. One asynchronous copy of kBytes (4 or 16) from global to shared memory: cp.async on sm_80 and later (every
// copy of the block in flight at once, no registers held: memory-level parallelism is what reaches copy bandwidth);
// on older cards (T4) the same call compiles to a plain load and store. Thread tid's copies of span src[0, count)
// into slots start, start + 1, ... (start % 4 is the span's own shift): whole chunks as one 16-byte copy, ragged
// ends one by one, so nothing outside the span is read.
template <int kBytes, class T> __host__ __device__ void copy_async(T* sharedDst, const T* globalSrc) {
#ifdef __CUDA_ARCH__
    __pipeline_memcpy_async(sharedDst, globalSrc, kBytes);
#else
    memcpy(sharedDst, globalSrc, kBytes);
#endif
}
template <int NT, class T>
__host__ __device__ void copy_span_async(int tid, const T* src, int count, T* buffer, int start) {
    constexpr int kVec = 4;
    const T* base = align_down_16(src);
    const SpanChunks<kVec> s{static_cast<int>(src - base), count};
    for (int c = tid; c < s.chunks(); c += NT) {
        if (s.full(c)) {
            copy_async<16>(buffer + swizzled(start + s.first(c)), base + c * kVec);
        } else {
            for (int e = 0; e < kVec; ++e) {
                const int x = s.first(c) + e;
                if (x >= 0 && x < count) copy_async<4>(buffer + swizzled(start + x), src + x);
            }
        }
    }
}
template <int NT, class Key, class Value>
__host__ __device__ void tile_copy(int tid, const TileSpans& t, const Key* a, const Key* b, const Value* va,
                                        const Value* vb, Key* keyBuffer, Value* valueBuffer) {
    const int bCount = t.count - t.aCount;
    const SpanSlots ks = span_slots(a + t.a0, t.aCount, b + t.b0);
    copy_span_async<NT>(tid, a + t.a0, t.aCount, keyBuffer, ks.aStart);
    copy_span_async<NT>(tid, b + t.b0, bCount, keyBuffer, ks.bStart);
    put_sentinel(tid, keyBuffer + swizzled(ks.bStart + bCount));  // no copy lands there; visible after barrier (1)
    if constexpr (kPairs<Value>) {
        const SpanSlots vs = span_slots(va + t.a0, t.aCount, vb + t.b0);
        copy_span_async<NT>(tid, va + t.a0, t.aCount, valueBuffer, vs.aStart);
        copy_span_async<NT>(tid, vb + t.b0, bCount, valueBuffer, vs.bStart);
    }
}

// Step 2: thread tid's vt outputs of a tile that has landed in a buffer start on diagonal tid * vt:
// its co-rank there, then the serial merge into registers (from[r]: slots). Its values: a key's slot moved to its
// value's slot (the value spans have their own shifts; past the tile's end nothing is read).
template <int VT, class Key>
__host__ __device__ void thread_merge(int tid, const Key* buffer, const SpanSlots& ks, const TileSpans& t,
                                      Key (&keys)[VT], int (&from)[VT]) {
    const int diag = min_of(tid * VT, t.count), bCount = t.count - t.aCount;
    const int i = co_rank(diag, SwizzledView<Key>{buffer, ks.aStart}, t.aCount, SwizzledView<Key>{buffer, ks.bStart},
                          bCount);
    const SwizzledView<Key> tile{buffer, 0};
    const int ai = ks.aStart + i, aEnd = ks.aStart + t.aCount, bi = ks.bStart + diag - i;
    if (diag + VT <= t.count) serial_merge_full<VT>(tile, ai, aEnd, bi, keys, from);
    else serial_merge<VT>(tile, ai, aEnd, bi, ks.bStart + bCount, keys, from);
}
template <int VT, class Value>
__host__ __device__ void tile_values(int tid, const TileSpans& t, const SpanSlots& ks, const SpanSlots& vs,
                                     const Value* valueBuffer, const int (&from)[VT], Value (&values)[VT]) {
    const int diag = min_of(tid * VT, t.count);
    DEVICE_UNROLL
    for (int r = 0; r < VT; ++r) {
        const int slot = from[r] < ks.aStart + t.aCount ? from[r] - ks.aStart + vs.aStart
                                                        : from[r] - ks.bStart + vs.bStart;
        values[r] = diag + r < t.count ? valueBuffer[swizzled(slot)] : Value{};
    }
}

// Step 3 (after every thread has read the buffer): stage the outputs in it as vt / 4 16-byte stores. Step 4: buffer
// positions [0, count) to dst[0, count), consecutive threads on consecutive 16-byte chunks (one vector store each,
// the swizzle keeps each chunk whole); a ragged end element by element.
template <class T> __host__ __device__ uint4 chunk_of(const T* x) {  // four registers as one uint4
    return make_uint4(wordOf(x[0]), wordOf(x[1]), wordOf(x[2]), wordOf(x[3]));
}
template <int VT, class T> __host__ __device__ void tile_stage(int tid, const T (&x)[VT], T* buffer) {
    DEVICE_UNROLL
    for (int r = 0; r < VT; r += 4) store16(buffer + swizzled(tid * VT + r), chunk_of(x + r));
}
template <int NT, int NV, class T> __host__ __device__ void tile_store(int tid, const T* buffer, int count, T* dst) {
    constexpr int kVec = 4;
    const bool aligned = (reinterpret_cast<uintptr_t>(dst) & 15) == 0;
    DEVICE_UNROLL
    for (int r = 0; r < ceilDiv(NV, kVec * NT); ++r) {
        const int x = (tid + r * NT) * kVec;
        if (x >= count) continue;
        if (aligned && x + kVec <= count) store16(dst + x, load16(buffer + swizzled(x)));
        else for (int e = 0; e < kVec && x + e < count; ++e) dst[x + e] = buffer[swizzled(x + e)];
    }
}

// Programmatic dependent launch (sm_90 and up): the partition lets the merge grid launch at once, so the merge
// blocks' launch and start overlap the partition's short wave; each waits in wait_for_partition until the partition
// has finished and its splits are visible. Elsewhere the merge is an ordinary launch and both calls compile to nothing.
__device__ inline void let_merge_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ inline void wait_for_partition() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// ---- kernels. The merge path partition: one co-rank per tile boundary, splits[p] for output p * nv (the last for
// m + n), all in one short wave instead of at the start of every merge block.
template <class Key> __global__ void path_partition(const Key* a, size_t m, const Key* b, size_t n, size_t nv,
                                                    size_t tiles, size_t* splits) {
    let_merge_start();
    const size_t p = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (p > tiles) return;
    splits[p] = co_rank(min_of(p * nv, m + n), a, m, b, n);
}

// path_tiles: one tile of nv outputs per block. Its spans come from the partition, so they hold exactly the tile's
// outputs and one buffer of nv keys takes both (merge_tiled needs 2 x tile). Barriers: (1) the tile has landed;
// (2) every thread has read it; (3) the outputs are staged.
template <class Key, class Value, class T>
__global__ void __launch_bounds__(T::nt, T::minBlocks) path_tiles(const Key* a, size_t m, const Key* b, size_t n,
                                                                   const size_t* splits, Key* out, const Value* va,
                                                                   const Value* vb, Value* vout) {
    extern __shared__ uint4 sharedChunks[];  // uint4: the buffers start 16-byte aligned; PathTuning sizes them
    Key* keyBuffer = reinterpret_cast<Key*>(sharedChunks);
    Value* valueBuffer = reinterpret_cast<Value*>(keyBuffer + T::slots);  // (pairs only)
    wait_for_partition();
    const TileSpans t = tile_spans(blockIdx.x, T::nv, m + n, splits[blockIdx.x], splits[blockIdx.x + 1]);
    tile_copy<T::nt>(threadIdx.x, t, a, b, va, vb, keyBuffer, valueBuffer);
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();  // (1)
    const SpanSlots ks = span_slots(a + t.a0, t.aCount, b + t.b0);
    Key keys[T::vt];
    int from[T::vt];
    thread_merge<T::vt>(threadIdx.x, keyBuffer, ks, t, keys, from);
    Value values[kPairs<Value> ? T::vt : 1];
    if constexpr (kPairs<Value>)
        tile_values<T::vt>(threadIdx.x, t, ks, span_slots(va + t.a0, t.aCount, vb + t.b0), valueBuffer, from, values);
    __syncthreads();  // (2)
    tile_stage<T::vt>(threadIdx.x, keys, keyBuffer);
    if constexpr (kPairs<Value>) tile_stage<T::vt>(threadIdx.x, values, valueBuffer);
    else (void)values;
    __syncthreads();  // (3)
    tile_store<T::nt, T::nv>(threadIdx.x, keyBuffer, t.count, out + t.k0);
    if constexpr (kPairs<Value>) tile_store<T::nt, T::nv>(threadIdx.x, valueBuffer, t.count, vout + t.k0);
}

// ---- launchers. The partition writes the co-rank of every tile boundary into p.splits and returns the tile count.
template <class T, class Key, class Value> size_t launchPartition(MergeProblem<Key, Value>& p) {
    static_assert(T::nv >= kMinPathTile, "the split buffer is sized for tiles of at least kMinPathTile");
    const size_t tiles = ceilDiv(p.total(), static_cast<size_t>(T::nv));
    path_partition<Key><<<gridFor(tiles + 1, kPartitionThreads, "path_partition"), kPartitionThreads>>>(
        p.a(), p.m, p.b(), p.n, T::nv, tiles, p.splits.get());
    CUDA_CHECK_LAUNCH("path_partition");
    return tiles;
}

// Whether the merge kernel that runs here was compiled for sm_90 or later, so that its wait_for_partition is a real
// wait. Not the card's compute capability: an sm_75 build runs on an H200 from its PTX, with both calls compiled to
// nothing, and launched early its merge would read the splits before the partition wrote them. (Both kernels come
// from this one file, so they share the PTX version.)
template <class Kernel> bool overlapsLaunches(Kernel kernel) {
    cudaFuncAttributes attributes = {};
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
    return attributes.ptxVersion >= 90;
}

// The merge follows the partition on the stream; where its code waits (above), it is launched while the partition
// runs (see let_merge_start), which takes cudaLaunchKernelEx and the attribute below instead of <<<>>>.
template <class T, class Key, class Value> void launchPathTiles(MergeProblem<Key, Value>& p) {
    if (p.total() == 0) return;
    launchPartition<T>(p);
    cudaLaunchAttribute early = {};
    early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    early.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t launch = {};
    launch.gridDim = gridFor(p.total(), T::nv, "path_tiles");
    launch.blockDim = T::nt;
    launch.dynamicSmemBytes = T::template sharedBytes<Key, Value>();
    launch.attrs = &early;
    static const bool overlap = overlapsLaunches(path_tiles<Key, Value, T>);  // asked once a kernel
    launch.numAttrs = overlap ? 1 : 0;
    CUDA_CHECK(cudaLaunchKernelEx(&launch, path_tiles<Key, Value, T>, p.a(), p.m, p.b(), p.n,
                                  static_cast<const size_t*>(p.splits.get()), p.keysOut.get(), p.va(), p.vb(),
                                  p.valuesOut.get()));
    CUDA_CHECK_LAUNCH("path_tiles");
}

// ================================================================= THE VARIANT TABLE
// One list: a row's name (--only matches its beginning), its knob cells (tile, vt, threads, blocks, smem/block,
// out/block) and its launcher. It drives --verify and every printed table.
template <class Key, class Value> using Row = Variant<MergeProblem<Key, Value>>;
const std::vector<Column> kKnobColumns = {{"tile", 5},   {"vt", 3},          {"threads", 7},
                                          {"blocks", 9}, {"smem/block", 10}, {"out/block", 9}};
const std::vector<std::string> kRowFamilies = {"merge_basic", "merge_tiled", "merge_circular", "path_tiles"};

std::string kib(size_t bytes) { return bytes ? fixed(bytes / 1024.0, 1) + " KiB" : "-"; }
std::vector<std::string> knobCells(size_t tile, int vt, int threads, size_t blocks, size_t smem, size_t perBlock) {
    return {std::to_string(tile), std::to_string(vt),       std::to_string(threads), std::to_string(blocks),
            kib(smem),            std::to_string(perBlock)};
}

template <class Key, class Value> Row<Key, Value> seedRow(const SeedKnobs& k, size_t total) {
    const size_t smem = k.kind == Seed::Basic ? 0 : k.dynamicShared(sizeof(Key)) + 2 * sizeof(size_t);
    return {kRowFamilies[static_cast<int>(k.kind)],
            knobCells(k.tile, k.vt, k.threads(), ceilDiv(total, k.perBlock()), smem, k.perBlock()),
            [k](MergeProblem<Key, Value>& p) { launchSeed(k, p); }};
}

// A production row where its buffers fit the card's shared memory per block (key-value buffers take twice the keys').
template <class T, class Key, class Value> void addPath(std::vector<Row<Key, Value>>& rows, size_t total) {
    constexpr size_t smem = T::template sharedBytes<Key, Value>();
    if (grantShared(path_tiles<Key, Value, T>, smem))
        rows.push_back({"path_tiles " + std::to_string(T::nt) + "x" + std::to_string(T::vt),
                        knobCells(T::nv, T::vt, T::nt, ceilDiv(total, size_t{T::nv}), smem, T::nv),
                        launchPathTiles<T, Key, Value>});
}

// The seed rows (their knobs come from the sweep options or verify's list), then every compiled production shape.
// NOTES.md "Rows that left the table" lists the shapes that left.
template <class Key, class Value>
std::vector<Row<Key, Value>> variantTable(const std::vector<SeedKnobs>& seed, size_t total) {
    std::vector<Row<Key, Value>> rows;
    for (const SeedKnobs& k : seed) rows.push_back(seedRow<Key, Value>(k, total));
    addPath<PathTuning<256, 16>, Key, Value>(rows, total);  // key-value below 2^26 elements; a T4's key-value row
    addPath<PathTuning<256, 32>, Key, Value>(rows, total);  // keys below 2^26; key-value above (not on a T4: 66 KiB)
    // Keys at 2^28: tiles of 16384 outputs (a quarter of 384x32's partition searches gone), registers capped at 40
    // so that 3 blocks fit an SM (64 KiB of keys each; not on a T4). Key-value buffers would be 128 KiB: left out.
    if constexpr (!kPairs<Value>) addPath<PathTuning<512, 32, 3>, Key, Value>(rows, total);
    return rows;
}

// ================================================================= SELFTESTS
// Host only. Every test calls the kernels' own __host__ __device__ steps, one thread index at a time, with the
// barriers between the loops over threads, and compares keys and provenance with common's stable host merge.

// keys[p] and source[p] (position in a||b) against common's stable reference merge of a and b.
template <class Source> bool matchesReference(const std::string& what, const std::vector<float>& a,
                                              const std::vector<float>& b, const float* keys, const Source* source) {
    return MergeReference<float>(a, b, MergeReference<float>::Keep::Never)
        .matches(what, [&](size_t p, size_t count, float* got) { std::copy_n(keys + p, count, got); },
                 [&](size_t p, size_t count, size_t* got) { std::copy_n(source + p, count, got); });
}
template <class... Parts> std::string cat(const Parts&... parts) {  // the tests' messages: text and numbers in a row
    std::ostringstream s;
    (s << ... << parts);
    return s.str();
}
bool failed(const std::string& what) { return std::printf("%s\n", what.c_str()), false; }  // one line; false

template <class T> struct GuardedArray {  // records whether anything read outside [0, size)
    const T* items;
    size_t size;
    bool* outside;
    __host__ __device__ T operator[](size_t i) const { return i < size ? items[i] : (*outside = true, T{}); }
};

// A key that knows its position in a||b: the seed tests merge these, so every output also names the element it
// really read, and a refill over a live slot or a stray read shows up as a source that is not the one emitted.
struct Tagged {
    float key; size_t source;
    __host__ __device__ bool operator<(const Tagged& o) const { return key < o.key; }
};
struct Recorder {  // the tests' emit: output base + k, its source from (fromA, index) as the kernels compute it
    float* keys;
    size_t *source, *read, base, aOrigin, bOrigin;
    template <class Index> __host__ __device__ void operator()(Index k, Tagged key, bool fromA, Index index) const {
        keys[base + k] = key.key, source[base + k] = (fromA ? aOrigin : bOrigin) + index, read[base + k] = key.source;
    }
};

// The seed's pieces on one input: co_rank at every k (the stable split, reads inside the arrays), then
// merge_circular's rounds for windows 1..8 at 1..3 per thread (a window of at least m + n is merge_basic's and
// merge_tiled's cut: co_rank at both ends of each thread's slice, then serial_merge), its own steps thread by
// thread: every thread's refill (own window copies, as in the kernel), barrier, every thread's circular_round and
// round_a_used, barrier, advance. Refills must read only inside the span, a buffer never hold more than its
// window, every output be the element its source names, and the whole the stable merge.
bool seedPiecesMatch(const std::vector<float>& a, const std::vector<float>& b) {
    const size_t m = a.size(), n = b.size(), total = m + n;
    std::vector<float> keys(total);
    std::vector<size_t> source(total), read(total);
    ReferenceMerge<float>(a.data(), m, b.data(), n).next(total, keys.data(), source.data());
    const std::string input = "a=" + formatKeys(a) + " b=" + formatKeys(b);
    std::vector<Tagged> ta(m), tb(n);
    for (size_t e = 0; e < total; ++e) (e < m ? ta[e] : tb[e - m]) = Tagged{e < m ? a[e] : b[e - m], e};
    bool outside = false;
    const GuardedArray<Tagged> ga{ta.data(), m, &outside}, gb{tb.data(), n, &outside};
    for (size_t k = 0, fromA = 0; k <= total; fromA += k < total && source[k] < m, ++k)
        if (const size_t i = co_rank(k, ga, m, gb, n); outside || i != fromA)
            return failed(cat("co_rank(k=", k, ", ", input, ") = ", i, outside ? " and read outside" : "",
                              "; the stable split takes ", fromA, " from a"));
    for (int size = 1; size <= 8; ++size)
        for (int vt = 1; vt <= 3; ++vt) {
            keys.assign(total, -1.0f), source.assign(total, SIZE_MAX), read.assign(total, SIZE_MAX);
            const int threads = ceilDiv(size, vt);
            std::vector<Tagged> sA(size + 8, Tagged{-1000.0f, SIZE_MAX}), sB(size + 8, Tagged{1000.0f, SIZE_MAX});
            std::vector<CircularWindow> wa(threads, {size, int(m)}), wb(threads, {size, int(n)});
            std::vector<int> aUsed(threads);
            bool overfull = false;
            for (int produced = 0; produced < int(total); produced += size) {
                for (int t = 0; t < threads; ++t) {
                    refill(t, threads, sA.data(), ga, wa[t]), refill(t, threads, sB.data(), gb, wb[t]);
                    overfull = overfull || wa[t].available() > size || wb[t].available() > size;
                }
                const int roundOut = std::min(size, int(total) - produced);
                for (int t = 0; t < threads; ++t) {
                    circular_round(t, vt, sA.data(), wa[t], sB.data(), wb[t], roundOut,
                                   Recorder{keys.data(), source.data(), read.data(), size_t(produced),
                                            size_t(wa[t].consumed), m + wb[t].consumed});
                    aUsed[t] = round_a_used(sA.data(), wa[t], sB.data(), wb[t], roundOut);
                }
                for (int t = 0; t < threads; ++t) advance(wa[t], wb[t], aUsed[t], roundOut);
            }
            const std::string what = cat("circular rounds, window ", size, ", ", vt, " per thread, ", input);
            if (outside) return failed(what + ": a read outside the span");
            if (overfull) return failed(what + ": a buffer held more than its window");
            if (read != source) return failed(what + ": an output is not the element its source names (a live slot overwritten?)");
            if (!matchesReference(what, a, b, keys.data(), source.data())) return false;
        }
    return true;
}

// One input sweep for all the seed's pieces: every pair of sorted arrays of length <= 6 over 3 keys (ties across
// the inputs everywhere), then skewed and all-equal inputs up to 24 + 24 (many rounds of every window).
void testSeedPieces() {
    std::vector<std::pair<std::vector<float>, std::vector<float>>> inputs;
    const auto arrays = allSortedArrays<float>(6, 3);
    for (const auto& a : arrays)
        for (const auto& b : arrays) inputs.push_back({a, b});
    for (MergeShape shape : {MergeShape::ABelowB, MergeShape::BBelowA, MergeShape::AllEqual})
        for (size_t m = 0; m <= 24; ++m)
            for (size_t n = 0; n <= 24; ++n) {
                inputs.emplace_back();
                makeMergeInput(shape, m, n, inputs.back().first, inputs.back().second);
            }
    size_t passed = 0;
    while (passed < inputs.size() && seedPiecesMatch(inputs[passed].first, inputs[passed].second)) ++passed;
    expect(passed == inputs.size(), "co_rank, serial_merge, the circular rounds: the stable split and merge");
    std::printf("seed pieces: %zu inputs (all pairs of length <= 6 over 3 keys; skewed and all-equal up to 24 + 24): "
                "co_rank at every k, circular windows 1..8 at 1..3 per thread\n", inputs.size());
}

// The conflict degree of a warp's access where lane t touches word index(t * vt + r): the most lanes on one bank,
// worst over r (staging stores; merge reads in step).
template <class Index> int worstBank(Index index, int vt) {
    int worst = 0;
    for (int r = 0; r < vt; ++r) {
        int banks[32] = {};
        for (int t = 0; t < 32; ++t) worst = std::max(worst, ++banks[index(t * vt + r) % 32]);
    }
    return worst;
}

// The span chunking's and the swizzle's promises.
void testLayouts() {
    bool chunksOk = true;
    for (int shift = 0; shift < 4; ++shift)
        for (int count = 0; count <= 40; ++count) {
            const SpanChunks<4> s{shift, count};
            std::vector<int> seen(count, 0);
            for (int c = 0; c < s.chunks(); ++c)
                for (int x = s.first(c); x < s.first(c) + 4; ++x)
                    if (x >= 0 && x < count) ++seen[x];
                    else chunksOk = chunksOk && !s.full(c);  // a vector access past the span
            chunksOk = chunksOk && std::count(seen.begin(), seen.end(), 1) == count;
        }
    expect(chunksOk, "SpanChunks: every element once, full chunks inside the span");
    bool swizzleOk = true;
    for (int x = 0; x < 1 << 16; ++x)
        swizzleOk = swizzleOk && swizzled(x) / 32 == x / 32 && swizzled(x) % 4 == x % 4 &&
                    swizzled(x - x % 4) + x % 4 == swizzled(x) && swizzled(swizzled(x)) == x;
    expect(swizzleOk, "swizzled(): a permutation within each 32-word row that keeps 4-word chunks whole");
    auto worstStaging = [](int vt) {  // 16-byte groups a quarter-warp's staging stores hit (lanes 8q..8q+7, chunk j)
        int worst = 0;
        for (int j = 0; j < vt / 4; ++j)
            for (int q = 0; q < 4; ++q) {
                int groups[8] = {};
                for (int t = 8 * q; t < 8 * q + 8; ++t) worst = std::max(worst, ++groups[swizzled(t * vt + 4 * j) / 4 % 8]);
            }
        return worst;
    };
    expect(worstStaging(16) == 1 && worstStaging(32) == 1 && worstStaging(24) == 3,
           "swizzled(): staging stores conflict-free at vt 16 and 32, 3-way at vt 24");
    expect(worstBank(swizzled, 16) == 4 && worstBank(swizzled, 24) == 4 && worstBank(swizzled, 32) == 4,
           "swizzled(): merge reads in step (lane t at t * vt + r) are 4-way at vt 16, 24 and 32");
}

// max(v.size(), count) elements `shift` elements past a 16-byte boundary, v's first, junk after and around them: how
// the tile tests place the inputs and outputs (at offsets the kernels meet) and the shared buffers (16-byte aligned).
template <class T> struct Placed {
    std::vector<T> store;
    T* p;
    T junk;
    Placed(const std::vector<T>& v, int shift, T junk, size_t count = 0)
        : store(std::max(v.size(), count) + 16, junk), junk(junk) {
        p = store.data() + (16 - reinterpret_cast<uintptr_t>(store.data()) % 16) % 16 / sizeof(T) + shift;
        std::copy(v.begin(), v.end(), p);
    }
    bool untouchedOutside(size_t count) const {  // only junk outside [p, p + count)
        auto isJunk = [this](T x) { return x == junk; };
        return std::all_of<const T*>(store.data(), p, isJunk) &&
               std::all_of<const T*>(p + count, store.data() + store.size(), isJunk);
    }
};
template <class T, int N> struct Registers { T r[N]; };  // one thread's register array, kept across a barrier

// path_tiles' own steps, thread by thread, tile after tile, the barriers between the loops over threads: tile_copy |
// thread_merge, tile_values | tile_stage | tile_store. The buffers start as junk and keep older tiles' leftovers,
// which nothing may read. Values are positions in a||b (shifted unlike their keys), so the output's values are their
// provenance. Also: span_slots keeps 16-byte accesses on 16-byte slots and inside the buffer, and nothing is stored
// outside the output.
template <class T>
bool tilesMatch(const std::vector<float>& ka, const std::vector<float>& kb, int aShift, int bShift, int outShift) {
    constexpr int NT = T::nt, VT = T::vt, NV = T::nv;
    const int m = static_cast<int>(ka.size()), n = static_cast<int>(kb.size()), total = m + n;
    std::vector<uint32_t> positions(total);
    std::iota(positions.begin(), positions.end(), 0u);
    const Placed<float> a(ka, aShift, -500.0f), b(kb, bShift, -500.0f), out({}, outShift, -7777.0f, total),
        keyBuffers({}, 0, -1000.0f, T::slots);  // junk below every key: a stray read would merge it
    const Placed<uint32_t> va({positions.begin(), positions.begin() + m}, bShift, 99999),
        vb({positions.begin() + m, positions.end()}, aShift, 99999), vout({}, outShift, 77777, total),
        valueBuffers({}, 0, 55555, T::slots);
    std::vector<Registers<float, VT>> keys(NT);
    std::vector<Registers<uint32_t, VT>> values(NT);
    bool slotsOk = true;
    for (size_t tile = 0; tile * NV < size_t(total); ++tile) {
        float* sk = keyBuffers.p;
        uint32_t* sv = valueBuffers.p;
        const size_t k0 = tile * NV, k1 = std::min<size_t>(k0 + NV, total);
        const TileSpans t = tile_spans(tile, NV, total, co_rank<size_t>(k0, a.p, m, b.p, n), co_rank<size_t>(k1, a.p, m, b.p, n));
        const SpanSlots ks = span_slots(a.p + t.a0, t.aCount, b.p + t.b0), vs = span_slots(va.p + t.a0, t.aCount, vb.p + t.b0);
        for (const SpanSlots& s : {ks, vs}) slotsOk = slotsOk && s.aStart < 4 && s.bStart + t.count - t.aCount <= NV + 12;
        slotsOk = slotsOk && ks.aStart == static_cast<int>(a.p + t.a0 - align_down_16(a.p + t.a0)) &&
                  ks.bStart % 4 == static_cast<int>(b.p + t.b0 - align_down_16(b.p + t.b0));
        for (int tid = 0; tid < NT; ++tid) tile_copy<NT>(tid, t, a.p, b.p, va.p, vb.p, sk, sv);
        for (int tid = 0; tid < NT; ++tid) {  // barrier (1)
            int from[VT];
            thread_merge<VT>(tid, sk, ks, t, keys[tid].r, from), tile_values<VT>(tid, t, ks, vs, sv, from, values[tid].r);
        }
        for (int tid = 0; tid < NT; ++tid)  // barrier (2)
            tile_stage<VT>(tid, keys[tid].r, sk), tile_stage<VT>(tid, values[tid].r, sv);
        for (int tid = 0; tid < NT; ++tid)  // barrier (3)
            tile_store<NT, NV>(tid, sk, t.count, out.p + t.k0), tile_store<NT, NV>(tid, sv, t.count, vout.p + t.k0);
    }
    const std::string what = cat("path_tiles ", NT, "x", VT,
                                 ", shifts ", aShift, "/", bShift, "/", outShift, ", m=", m, " n=", n);
    if (!slotsOk) return failed(what + ": a span's slots break the 16-byte alignment or pass the buffer");
    if (!out.untouchedOutside(total) || !vout.untouchedOutside(total)) return failed(what + ": a store landed outside the output");
    return matchesReference(what, ka, kb, out.p, vout.p);
}

// T's steps on every pair of lengths around 0, one tile and several tiles, in three shapes (runs of 4 values: ties
// across the inputs; every a below every b; the reverse), a and b at every offset from a 16-byte boundary, out at 2.
template <class T> bool sweepTiles(size_t& runs) {
    SplitMix64 rng(12);
    auto sortedRun = [&](int length, int alphabet) {
        std::vector<float> v(length);
        for (float& x : v) x = static_cast<float>(rng.below(alphabet));
        std::sort(v.begin(), v.end());
        return v;
    };
    const int lengths[] = {0, 1, 3, 4, 5, T::nv - 1, T::nv, T::nv + 1, 2 * T::nv + 3, 5 * T::nv - 2};
    for (int m : lengths)
        for (int n : lengths)
            for (int shape = 0; shape < 3; ++shape) {
                std::vector<float> a = sortedRun(m, shape == 0 ? 4 : 1000), b = sortedRun(n, shape == 0 ? 4 : 1000);
                for (float& x : shape == 1 ? b : a) x += shape == 0 ? 0.0f : 2000.0f;
                for (int shifts = 0; shifts < 32; ++shifts, ++runs)
                    if (!tilesMatch<T>(a, b, shifts / 2 / 4, shifts / 2 % 4, shifts % 2)) return false;
            }
    return true;
}
template <class... T> bool sweepAll(size_t& runs) { return (sweepTiles<T>(runs) && ...); }  // in order; stops at a failure

void testProductionTiles() {
    size_t runs = 0;  // tiny nt run the code of 256x16, 256x32 and 512x32 (3x32: a thread count that is no power of 2)
    expect(sweepAll<PathTuning<4, 4>, PathTuning<8, 8>, PathTuning<2, 16>, PathTuning<4, 32>, PathTuning<3, 32>>(runs),
           "path_tiles steps: tile_copy, thread_merge, tile_values, tile_stage, tile_store");
    std::printf("production tiles: path_tiles 4x4, 8x8, 2x16, 4x32, 3x32 (%zu runs); inputs x 16-byte offsets of a, "
                "b, out\n", runs);
}

int runSelftest() {
    // The seed's ceil bug: 10 outputs over 4 threads need 3 each; integer division before ceil gives 2 and leaves
    // outputs 8 and 9 to no one.
    expect(ceilDiv<size_t>(10, 4) == 3, "ceilDiv(10, 4) == 3 (10 / 4 == 2 would fall short)");
    const std::vector<float> a = {1, 4, 6, 9}, b = {2, 3, 5, 7};  // the seed's worked example (12.4)
    expect(co_rank<size_t>(3, a.data(), 4, b.data(), 4) == 1, "seed example: co-rank of 3 is 1");
    const std::vector<float> ta = {1, 5, 9}, tb = {5, 5, 5};  // Day 36's ties: 1, a's 5, then b's 5s
    expect(co_rank<size_t>(2, ta.data(), 3, tb.data(), 3) == 2, "ties: a's 5 comes before b's");
    testSeedPieces(), testLayouts(), testProductionTiles();
    return selftestVerdict();
}

// ================================================================= VERIFY AND THE LESSON
struct Options {  // the lesson's own (the standard ones live in common/lesson.hpp); read in main
    MergeShape shape = MergeShape::Random; size_t m = 0, n = 0; std::string key = "float"; int rounds = 2;
    bool bothKeys = true, oneInput = false, pairs = true; std::vector<size_t> basicVts, tiles, vts;
};

template <class Key, class Value>
MergeProblem<Key, Value> upload(const std::vector<Key>& a, const std::vector<Key>& b) {
    MergeProblem<Key, Value> p;
    const size_t splitCount = ceilDiv(a.size() + b.size(), static_cast<size_t>(kMinPathTile)) + 1;
    static_cast<MergeBuffers<Key, Value>&>(p) = uploadMerge<Key, Value>(
        a, b, true, splitCount * sizeof(size_t) + (64u << 20), "merge_tiled (inputs, outputs, splits, library scratch)");
    p.splits.allocate(splitCount);
    return p;
}
bool fitsProvenance(size_t total) { return total < 0xFFFFFFFFu; }  // uint32 positions; all ones is the poison
bool seedShapeFits(size_t tile, size_t vt) { return tile % vt == 0 && tile / vt <= 1024; }  // tile / vt threads

// The seed kernels with knobs that stress them: odd vt, thread counts that are not powers of two, windows down to 5
// slots with many rounds.
const std::vector<SeedKnobs> kVerifySeed = {
    {Seed::Basic, 256, 1}, {Seed::Basic, 768, 3},   {Seed::Basic, 4096, 16},   {Seed::Tiled, 1024, 4},
    {Seed::Tiled, 960, 8}, {Seed::Tiled, 4096, 16}, {Seed::Circular, 5, 1, 9}, {Seed::Circular, 32, 4, 7},
    {Seed::Circular, 1024, 8, 2}, {Seed::Circular, 2048, 16, 3}};

// Every row, keys and key-value, on each input; one host merge serves every row of an input.
template <class Key> int verifyKey(const char* keyName, const std::vector<MergeCase>& cases) {
    int failed = 0;
    for (const MergeCase& c : cases) {
        std::vector<Key> a, b;
        makeMergeInput(c.shape, c.m, c.n, a, b);
        const bool pairs = fitsProvenance(a.size() + b.size());
        const MergeReference<Key> reference(a, b);
        size_t keyRows = 0, pairRows = 0;
        auto rowsMatch = [&](auto value, size_t& rows) {  // value: NoValues or uint32_t
            using Value = decltype(value);
            MergeProblem<Key, Value> p = upload<Key, Value>(a, b);
            const auto table = variantTable<Key, Value>(kVerifySeed, p.total());
            rows = table.size();
            return checkRows(table, p, [&](const std::string& what) { return mergeMatches(what, reference, p); },
                             kPairs<Value> ? "key-value" : "");
        };
        const bool ok = rowsMatch(NoValues{}, keyRows) && (!pairs || rowsMatch(uint32_t{}, pairRows));
        std::printf("%-5s %-6s %-13s m=%-10zu n=%-10zu %zu rows keys, %s\n", ok ? "ok" : "FAIL", keyName,
                    mergeShapeName(c.shape), a.size(), b.size(), keyRows,
                    pairs ? (std::to_string(pairRows) + " key-value (provenance)").c_str() : "no key-value (too long for uint32)");
        failed += !ok;
    }
    return failed;
}

// The adversarial set for tiles 1024, 2048 and 4096, plus inputs of thousands of tiles (the random one takes more
// than one wave of 512x32 tiles on an H200, so some merge blocks start after the partition is done), skewed ones
// (m >> n, every a below every b), and odd m (b then starts off 16 bytes); or the one input --m/--n name (e.g. past
// 2^31).
int runVerify(const Options& o, const Run&) {
    std::vector<MergeCase> cases;
    for (size_t tile : {1024, 2048, 4096})
        for (const MergeCase& c : adversarialMergeCases(tile))  // each case once
            if (std::none_of(cases.begin(), cases.end(),
                             [&](const MergeCase& d) { return d.shape == c.shape && d.m == c.m && d.n == c.n; }))
                cases.push_back(c);
    using S = MergeShape;
    cases.insert(cases.end(), {{S::Random, (1u << 23) + 3, (1u << 22) + 5}, {S::ABelowB, (1u << 22) + 1, 3},
                               {S::BBelowA, 3, (1u << 22) + 1}, {S::ABelowB, (1u << 21) + 1, (1u << 21) - 1},
                               {S::ManyTies, (1u << 21) + 2, (1u << 20) + 1}});
    if (o.oneInput) cases = {{o.shape, o.m, o.n}};
    int failed = 0;
    if (o.bothKeys || o.key == "float") failed += verifyKey<float>("float", cases);
    if (o.bothKeys || o.key == "uint32") failed += verifyKey<uint32_t>("uint32", cases);
    std::printf("verify: %zu inputs x %d key type(s), %d failed\n", cases.size(), o.bothKeys ? 2 : 1, failed);
    return failed ? kExitCheckFailed : kExitPass;
}

// One table: every row and the library checked on the same input, then the copy, the library and every row timed in
// one run. ms: the rows' times (none when untimed).
template <class Key, class Value>
bool runSection(const std::string& title, const std::vector<Key>& a, const std::vector<Key>& b,
                const std::vector<SeedKnobs>& seed, const Run& run, CsvFile& csv, std::vector<double>& ms) {
    MergeProblem<Key, Value> p = upload<Key, Value>(a, b);
    const auto rows = selectRows(variantTable<Key, Value>(seed, p.total()), run);
    LibraryMerge<Key, Value> library(p.a(), p.m, p.b(), p.n, p.keysOut.get(), p.va(), p.vb(), p.valuesOut.get());
    const Row<Key, Value> libraryRow{library.name(), {}, [&library](MergeProblem<Key, Value>&) { library(); }};
    const MergeReference<Key> reference(a, b);
    auto check = [&](const std::string& what) { return mergeMatches(what, reference, p); };
    if (!checkRows(rows, p, check) || !checkRows(std::vector<Row<Key, Value>>{libraryRow}, p, check)) return false;
    std::printf("\n%s: checks: %zu kernel rows and %s match the host merge exactly (keys%s)\n", title.c_str(),
                rows.size(), library.name(), kPairs<Value> ? ", and every element's source through its value" : "");
    if (!run.timing || p.total() == 0) return true;
    const TimedTable<MergeProblem<Key, Value>> spec{title, kKnobColumns, p.bytesMoved(), 0, [&] { p.copy(); },
                                                    libraryRow, HAVE_CUB_DEVICE_MERGE ? "vs CUB" : "vs thrust"};
    ms = timeRows(spec, rows, p, run, &csv).ms;
    return true;
}

template <class Key> int runLessonFor(const Options& o, const Run& run, const char* keyName, CsvFile& csv) {
    std::vector<Key> a, b;
    makeMergeInput(o.shape, o.m, o.n, a, b);
    const size_t total = a.size() + b.size();
    std::printf("input %s, %s keys; a: %zu, b: %zu, merged: %zu\n", mergeShapeName(o.shape), keyName, a.size(),
                b.size(), total);
    std::vector<SeedKnobs> seed;  // the coarsening sweep (12.8), the rows --only keeps
    if (run.wants("merge_basic"))
        for (size_t vt : o.basicVts) seed.push_back({Seed::Basic, SeedKnobs::kBasicThreads * static_cast<int>(vt), static_cast<int>(vt)});
    for (Seed kind : {Seed::Tiled, Seed::Circular})
        for (size_t tile : o.tiles)
            for (size_t vt : o.vts)
                if (run.wants(kRowFamilies[static_cast<int>(kind)]) && seedShapeFits(tile, vt))
                    seed.push_back({kind, static_cast<int>(tile), static_cast<int>(vt), kind == Seed::Circular ? o.rounds : 1});
    if (run.only.empty()) {  // the seed's claim: merge_circular spends merge_tiled's shared memory on `rounds` x the output
        const SeedKnobs tiled{Seed::Tiled, static_cast<int>(o.tiles.front()), 1}, circular{Seed::Circular, tiled.tile, 1, o.rounds};
        const std::string smem = kib(tiled.dynamicShared(sizeof(Key)) + 16);  // the same for both, split included
        std::printf("\nshared memory budget at tile %d: merge_tiled %s per block for %zu outputs; merge_circular the same "
                    "%s for %zu outputs (%d rounds, %dx the output)\n", tiled.tile, smem.c_str(), tiled.perBlock(),
                    smem.c_str(), circular.perBlock(), o.rounds, o.rounds);
    }
    const std::string what = std::string(keyName) + " keys, " + std::to_string(a.size()) + " + " + std::to_string(b.size());
    std::vector<double> ms;
    if (!runSection<Key, NoValues>("Merging " + what + " (GB/s counts read m+n keys + write m+n keys)", a, b, seed, run, csv, ms))
        return kExitCheckFailed;
    if (!o.pairs) return kExitPass;
    if (!fitsProvenance(total))
        return std::printf("\nkey-value table skipped: %zu elements do not fit uint32 positions\n", total), kExitPass;
    std::vector<SeedKnobs> best;  // the key-value table: each seed kernel at its fastest knobs above (untimed: its first)
    for (size_t r = 0, bestRow = 0; r < seed.size(); ++r)  // seed holds each kernel's rows together
        if (best.empty() || best.back().kind != seed[r].kind) best.push_back(seed[bestRow = r]);
        else if (!ms.empty() && ms[r] < ms[bestRow]) best.back() = seed[bestRow = r];
    return runSection<Key, uint32_t>("Key-value: " + what + ", uint32 values = source position (GB/s counts keys and values)",
                                     a, b, best, run, csv, ms) ? kExitPass : kExitCheckFailed;
}

int runLesson(const Options& o, const Run& run) {
    CsvFile csv;
    csv.open(run.csvPath, "merge_tiled");
    return o.key == "float" ? runLessonFor<float>(o, run, "float", csv) : runLessonFor<uint32_t>(o, run, "uint32", csv);
}

// ================================================================= MAIN
void readOptions(const Args& args, const Run& run, Options& o) {
    auto atMost = [&](const std::string& name, const std::vector<size_t>& values, size_t most, const char* why = "") {
        for (size_t v : values) if (v > most) args.fail(name + " must be at most " + std::to_string(most) + why);
    };
    o.shape = mergeShapeFromName(args.choice("--input", "random", mergeShapeWords()));
    o.key = args.choice("--key", "float", {"float", "uint32"});
    o.m = args.count("--m", run.quick ? 1677722 : 1u << 24), o.n = args.count("--n", run.quick ? 1677721 : 1u << 24);
    o.bothKeys = !args.has("--key"), o.oneInput = args.has("--m") || args.has("--n"), o.pairs = !args.has("--no-pairs");
    o.tiles = args.countList("--tiles", {1024, 2048, 4096}, 1), o.vts = args.countList("--per-thread", {4, 8, 16}, 1);
    o.basicVts = args.countList("--basic-per-thread", {1, 4, 16}, 1), atMost("--m and --n", {o.m, o.n}, size_t{1} << 40);
    atMost("--basic-per-thread values", o.basicVts, 4096), atMost("--per-thread values", o.vts, 1024);
    atMost("--tiles values", o.tiles, SeedKnobs::kMaxTile, " (2 x tile keys in 48 KiB of shared memory)");
    atMost("--rounds", {args.count("--rounds", 2, 1)}, 4096), o.rounds = static_cast<int>(args.count("--rounds", 2, 1));
    for (size_t tile : o.tiles) for (size_t vt : o.vts) if (seedShapeFits(tile, vt)) return;
    args.fail("no --tiles value is a multiple of a --per-thread value with at most 1024 threads");
}

int main(int argc, char** argv) {
    Options o;
    return lessonEntry(argc, argv, {"merge_tiled",
        "Chapter 12: basic, tiled and circular-buffer merges, coarsening, and a merge-path merge near copy speed.",
        {{"--m", "N", "length of a (default 2^24)"}, {"--n", "N", "length of b (default 2^24)"},
         {"--key", "TYPE", "float (default) or uint32; --verify checks both unless given"},
         {"--input", "SHAPE", "random (default), evens-odds, all-equal, few-distinct, many-ties, a-below-b, b-below-a, seed-ties"},
         {"--tiles", "LIST", "tile sizes for merge_tiled and merge_circular (default 1024,2048,4096)"},
         {"--per-thread", "LIST", "outputs per thread for merge_tiled and merge_circular (default 4,8,16)"},
         {"--basic-per-thread", "LIST", "outputs per thread for merge_basic (default 1,4,16)"},
         {"--rounds", "N", "tiles per merge_circular block (default 2)"}, {"--no-pairs", "", "skip the key-value table"}},
        kRowFamilies, [&](const Args& args, const Run& run) { readOptions(args, run, o); }, runSelftest,
        [&](const Run& run) { return runVerify(o, run); }, [&](const Run& run) { return runLesson(o, run); }});
}

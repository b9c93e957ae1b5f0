// Chapter 12, sections 12.5-12.8: from the naive co-rank merge to a merge that
// runs near the card's copy bandwidth, one step at a time.
//
//   merge_basic      (12.5) each thread: two co-ranks in global memory, then the
//                    serial merge straight from global memory. Uncoalesced.
//   merge_tiled      (12.6) each block: its two co-ranks, both input spans loaded
//                    cooperatively (coalesced) into shared memory, then each
//                    thread's co-rank and serial merge inside shared memory.
//   merge_circular   (12.7) the same shared memory as two circular buffers: a
//                    block merges many tiles in rounds and refills only the slots
//                    the last round consumed, so the block's output is no longer
//                    bounded by its shared memory.
//   coarsening       (12.8) tile size and elements per thread are runtime knobs
//                    of the three kernels above; the table sweeps them.
//   merge_path       the production shape: a partition kernel writes one co-rank
//                    per tile boundary, then each block loads its spans with
//                    16-byte loads, merges vt elements per thread into registers
//                    and stores them coalesced through shared memory. Then, row
//                    by row: larger tiles (vt 24, 32); "direct": each thread's vt
//                    outputs leave straight from registers as 16-byte stores;
//                    "pipelined": resident blocks walk the tiles and copy the
//                    next tile into a second shared buffer (cp.async on sm_80+,
//                    plain loads on a T4) while they merge the current one.
//
// The tie rule, kept by every piece: equal keys come from a first, so every
// kernel here is a stable merge; the key-value mode carries each element's
// source position as its value and proves it.
//
// Build (one file):  nvcc -std=c++17 -O3 -arch=sm_75 -o merge_tiled merge_tiled.cu
//                    (use your card's -arch, e.g. sm_90 on an H100/H200)
// Run:
//   ./merge_tiled                    device report, checks, then the tables (2 x 2^24 floats)
//   ./merge_tiled --quick            a tenth of the sizes, meant for a short Colab cell on a T4
//   ./merge_tiled --m 2^27 --n 2^27 --only path     the performance target's size
//   ./merge_tiled --verify           every kernel x key type on the adversarial inputs
//   ./merge_tiled --selftest         host tests of the building blocks (no GPU)
//   ./merge_tiled --help             every option

#include "../common/args.hpp"
#include "../common/check.hpp"
#include "../common/cuda_check.cuh"
#include "../common/device_report.cuh"
#include "../common/inputs.hpp"
#include "../common/library_merge.cuh"
#include "../common/selftest.hpp"
#include "../common/table.hpp"
#include "../common/timer.cuh"

#include <cuda_pipeline.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

// ------------------------------------------------ building blocks (host + device)

// Integer ceiling of x / y. The textbook's `ceil((m + n) / threads)` divides
// in integers first, so the ceil does nothing and the last (m + n) % threads
// outputs belong to no thread.
template <class T>
__host__ __device__ constexpr T ceil_div(T x, T y) {
    return x / y + (x % y != 0);
}

template <class T>
__host__ __device__ constexpr T min_of(T x, T y) {
    return y < x ? y : x;
}

// `#pragma unroll` in device code only (host compilers warn about the
// pragma). Loops over a compile-time vt must unroll on the device: only then
// do the per-thread arrays they index stay in registers.
#ifdef __CUDA_ARCH__
#define DEVICE_UNROLL _Pragma("unroll")
#else
#define DEVICE_UNROLL
#endif

// The co-rank of output index k: how many of the first k outputs of the
// stable merge of a[0, m) and b[0, n) come from a. a and b are anything
// indexable: global memory, a shared tile, a circular buffer.
//
// a[mid] is among the first k outputs exactly when fewer than k - mid keys
// of b are strictly below it (equal b's go after it: ties come from a),
// that is when !(b[k - 1 - mid] < a[mid]). That test is true for small mid
// and false for large mid, so bisect for the first mid where it fails.
// Only a[lo, hi) and b[k - hi, k - lo) are read: never past m or n.
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

// The serial merge of a[i, iEnd) and b[j, jEnd), ties from a. Each output
// goes to emit(offset, key, fromA, index): offset counts from 0, index is
// the element's position in a (fromA) or in b. The kernels' emits write
// the key and, in key-value mode, the value found through (fromA, index).
template <class Index, class ArrayA, class ArrayB, class Emit>
__host__ __device__ void merge_sequential(const ArrayA& a, Index i, Index iEnd, const ArrayB& b, Index j,
                                          Index jEnd, Emit&& emit) {
    Index k = 0;
    while (i < iEnd && j < jEnd) {
        if (b[j] < a[i]) {
            emit(k++, b[j], false, j);
            ++j;
        } else {  // a[i] <= b[j]: the tie goes to a
            emit(k++, a[i], true, i);
            ++i;
        }
    }
    for (; i < iEnd; ++i) emit(k++, a[i], true, i);
    for (; j < jEnd; ++j) emit(k++, b[j], false, j);
}

// ---- circular buffers (12.7)
//
// A buffer of `size` slots holds a run of one input. Logical element x of
// the run (x = 0: the oldest element not merged yet) sits in slot head + x,
// wrapped around. Both head and x are below size, so one subtraction does
// the wrap: no modulo in the inner loops, and any size works (not only
// powers of two).
__host__ __device__ inline int wrap_slot(int head, int x, int size) {
    const int s = head + x;
    return s >= size ? s - size : s;
}

template <class Key>
struct CircularView {
    const Key* slots;
    int head, size;
    __host__ __device__ Key operator[](int x) const { return slots[wrap_slot(head, x, size)]; }
};

// The co-rank inside two circular buffers holding aCount and bCount
// elements. The search itself is unchanged; only the way a logical index
// becomes a slot differs.
template <class Key>
__host__ __device__ int co_rank_circular(int k, const Key* sA, int aHead, int aCount, const Key* sB, int bHead,
                                         int bCount, int size) {
    return co_rank(k, CircularView<Key>{sA, aHead, size}, aCount, CircularView<Key>{sB, bHead, size}, bCount);
}

// The serial merge of logical elements [i, iEnd) of circular A with
// [j, jEnd) of circular B; emit as in merge_sequential (index is logical).
template <class Key, class Emit>
__host__ __device__ void merge_sequential_circular(const Key* sA, int aHead, int i, int iEnd, const Key* sB,
                                                   int bHead, int j, int jEnd, int size, Emit&& emit) {
    merge_sequential(CircularView<Key>{sA, aHead, size}, i, iEnd, CircularView<Key>{sB, bHead, size}, j, jEnd,
                     emit);
}

// One input's side of the circular-buffer merge. The block merges `length`
// elements of this input (its span). Span elements [consumed, loaded) are in
// the buffer, element g in slot g % size.
//
// A refill loads span elements [loaded, refill_end()): they land in the
// slots the last round consumed (at the start: every slot), and nowhere
// else. Keeping `loaded` and `consumed` apart is what makes it right when a
// side is drained unevenly: a refill written only from the last round's
// consumption ("load as many as were used, after the unused ones") runs
// past the span's end or leaves holes once one input is exhausted, which is
// exactly what every-a-below-every-b and m >> n inputs provoke.
struct CircularWindow {
    int size;    // slots
    int length;  // span elements this block merges from this input
    int consumed = 0;
    int loaded = 0;
    __host__ __device__ int head() const { return consumed % size; }
    __host__ __device__ int available() const { return loaded - consumed; }
    __host__ __device__ int refill_end() const { return min_of(consumed + size, length); }
};

// ---- the production merge's pieces
//
// Shared-memory index with one pad word after every 32. A warp staging its
// outputs writes word t * vt + r in lane t; unpadded, vt = 16 sends those 32
// words to two banks (16-way conflicts), vt = 8 to four, vt = 32 to one.
// Padded, powers of two up to 32 are conflict-free and every other vt up to
// 30 is at most 2-way (odd vt pays that 2-way; unpadded they would be free;
// vt = 31 is the one bad shape: padded, it is 31-way). The same holds for
// the merge's reads, which start near t * vt / 2 in each input.
__host__ __device__ constexpr int padded(int x) { return x + (x >> 5); }

template <class T>
struct PaddedView {
    const T* words;
    int base;
    __host__ __device__ T operator[](int x) const { return words[padded(base + x)]; }
};

// The serial merge in registers: vt outputs starting at split (ai, bi) of a
// tile that holds a at [ai.., aEnd) and b at [bi.., bEnd), in one array
// with a's span before b's (merge_path_tiles: back to back, so bEnd is the
// tile's element count; merge_path_pipelined: a few alignment slots may lie
// between them). bEnd must be >= 1. Reads never leave [0, bEnd): an
// exhausted side re-reads the last slot, whose value no longer matters.
// keys[r] is output r, from[r] its tile position (from < aEnd: from a);
// past the tile's last output both are junk (from stays inside [0, bEnd)).
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

// How a span of `count` elements lies against 16-byte boundaries: it starts
// `shift` elements into an aligned chunk of kVec elements, so chunk c covers
// span positions [first(c), first(c) + kVec). Full chunks travel as one
// 16-byte load; the ragged chunk at either end goes element by element.
template <int kVec>
struct SpanChunks {
    int shift, count;
    __host__ __device__ int chunks() const { return count == 0 ? 0 : ceil_div(shift + count, kVec); }
    __host__ __device__ int first(int c) const { return c * kVec - shift; }
    __host__ __device__ bool full(int c) const { return first(c) >= 0 && first(c) + kVec <= count; }
};

// The production merge moves 4-byte keys and values as raw bits, four to a
// 16-byte uint4, so the loads are ld.global.nc.v4 and the stores st.global.v4.
// On the host (--selftest runs the same loaders and stores) they are copies.
template <class T>
__host__ __device__ uint32_t to_bits(T x) {
    static_assert(sizeof(T) == 4, "the vector paths move 4-byte keys and values");
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}
template <class T>
__host__ __device__ T from_bits(uint32_t u) {
    T x;
    memcpy(&x, &u, 4);
    return x;
}
template <class T>
__host__ __device__ uint4 load_chunk(const T* p) {  // p is 16-byte aligned
#ifdef __CUDA_ARCH__
    return __ldg(reinterpret_cast<const uint4*>(p));
#else
    uint4 v;
    memcpy(&v, p, sizeof v);
    return v;
#endif
}
template <class T>
__host__ __device__ T load_one(const T* p) {
#ifdef __CUDA_ARCH__
    return __ldg(p);
#else
    return *p;
#endif
}
template <class T>
__host__ __device__ void store_chunk(T* p, uint4 v) {  // p is 16-byte aligned
#ifdef __CUDA_ARCH__
    *reinterpret_cast<uint4*>(p) = v;
#else
    memcpy(p, &v, sizeof v);
#endif
}
template <class T>
__host__ __device__ const T* align_down_16(const T* p) {
    return reinterpret_cast<const T*>(reinterpret_cast<uintptr_t>(p) & ~uintptr_t{15});
}

// One thread's share of copying a tile's two spans, a[0, aCount) and
// b[0, bCount), into tile positions [0, aCount) and [aCount, aCount + bCount)
// of a padded shared array. First every 16-byte load of this thread goes
// into registers (staged[]), all in flight at once: memory-level parallelism
// is what reaches the copy bandwidth. Then the registers go into the tile.
// Thread tid takes chunks tid, tid + NT, ... of a's span, then b's.
template <int NT, int NV, class T>
__host__ __device__ void load_two_spans(int tid, const T* a, int aCount, const T* b, int bCount, T* shared) {
    constexpr int kVec = 4;                                  // 4-byte elements per 16-byte chunk
    constexpr int kPerThread = ceil_div(NV / kVec + 4, NT);  // each span adds at most two ragged chunks
    const T* aBase = align_down_16(a);
    const T* bBase = align_down_16(b);
    const SpanChunks<kVec> sa{static_cast<int>(a - aBase), aCount};
    const SpanChunks<kVec> sb{static_cast<int>(b - bBase), bCount};
    const int aChunks = sa.chunks();
    const int allChunks = aChunks + sb.chunks();

    uint4 staged[kPerThread];
    DEVICE_UNROLL
    for (int r = 0; r < kPerThread; ++r) {
        const int c = tid + r * NT;
        if (c >= allChunks) continue;
        const bool inA = c < aChunks;
        const SpanChunks<kVec> s = inA ? sa : sb;
        const int cc = inA ? c : c - aChunks;
        const T* chunk = (inA ? aBase : bBase) + cc * kVec;
        if (s.full(cc)) {
            staged[r] = load_chunk(chunk);
        } else {  // a ragged end: only the elements inside the span
            uint32_t w[kVec] = {0, 0, 0, 0};
            DEVICE_UNROLL
            for (int e = 0; e < kVec; ++e) {
                const int x = s.first(cc) + e;
                if (x >= 0 && x < s.count) w[e] = to_bits(load_one(chunk + e));
            }
            staged[r] = make_uint4(w[0], w[1], w[2], w[3]);
        }
    }

    DEVICE_UNROLL
    for (int r = 0; r < kPerThread; ++r) {
        const int c = tid + r * NT;
        if (c >= allChunks) continue;
        const bool inA = c < aChunks;
        const SpanChunks<kVec> s = inA ? sa : sb;
        const int first = s.first(inA ? c : c - aChunks);
        const int offset = inA ? 0 : sa.count;  // b's span follows a's in the tile
        const uint32_t w[kVec] = {staged[r].x, staged[r].y, staged[r].z, staged[r].w};
        DEVICE_UNROLL
        for (int e = 0; e < kVec; ++e) {
            const int x = first + e;
            if (x >= 0 && x < s.count) shared[padded(offset + x)] = from_bits<T>(w[e]);
        }
    }
}

// Writes one thread's merged outputs straight from registers: its outputs
// are tile positions [diag, diag + VT) clipped to the tile's count, and
// they are consecutive in the output too, dst[diag, ...). When vt is a
// multiple of 4 and dst + diag is 16-byte aligned (tiles start at multiples
// of nv and diag = tid * vt, so whenever the output array is), the vt keys
// go out as vt / 4 16-byte stores: no barrier and no pass through shared
// memory. One such warp store writes 16 bytes every 4 * vt bytes rather than
// 512 contiguous bytes; the warp's vt / 4 stores together fill a contiguous
// 128 * vt bytes, which L2 merges into full sectors. That is free at vt 16
// (64 bytes per thread) but not at vt 32, where each warp store touches 32
// different 128-byte lines (the rows in pathVariants show both). The last
// tile's ragged end goes element by element.
template <int VT, class T>
__host__ __device__ void store_registers(const T (&x)[VT], int diag, int count, T* dst) {
    T* mine = dst + diag;
    if constexpr (VT % 4 == 0) {
        if (diag + VT <= count && (reinterpret_cast<uintptr_t>(mine) & 15) == 0) {
            DEVICE_UNROLL
            for (int r = 0; r < VT; r += 4)
                store_chunk(mine + r, make_uint4(to_bits(x[r]), to_bits(x[r + 1]), to_bits(x[r + 2]), to_bits(x[r + 3])));
            return;
        }
    }
    DEVICE_UNROLL
    for (int r = 0; r < VT; ++r)
        if (diag + r < count) mine[r] = x[r];
}

// ------------------------------------------------------------------ kernels
//
// Every kernel takes a (m keys), b (n keys), out (m + n keys), and in
// key-value mode the values va, vb and vout; Value = NoValues (from
// common/library_merge.cuh) is the keys-only build, where the value code
// compiles away.

// 12.5: thread t owns outputs [t * vt, t * vt + vt). Two co-ranks in global
// memory find its split at both ends; the serial merge then walks a and b
// in global memory. Neighbouring threads walk far-apart addresses, so a
// warp's loads are not coalesced.
template <class Key, class Value>
__global__ void merge_basic(const Key* a, size_t m, const Key* b, size_t n, Key* out, const Value* va,
                            const Value* vb, Value* vout, size_t vt) {
    const size_t total = m + n;
    const size_t thread = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t kLo = thread * vt;
    if (kLo >= total) return;  // the last block's spare threads
    const size_t kHi = min_of(kLo + vt, total);
    const size_t iLo = co_rank(kLo, a, m, b, n);
    const size_t iHi = co_rank(kHi, a, m, b, n);
    merge_sequential(a, iLo, iHi, b, kLo - iLo, kHi - iHi, [&](size_t k, Key key, bool fromA, size_t index) {
        out[kLo + k] = key;
        if constexpr (kPairs<Value>) vout[kLo + k] = fromA ? va[index] : vb[index];
        else (void)fromA, (void)index;
    });
}

// 12.6: block t owns outputs [t * tile, t * tile + tile). Its two co-ranks
// (threads 0 and 1, in global memory) give the a-span and b-span it needs;
// the block loads them with consecutive threads on consecutive addresses
// (coalesced), then each thread co-ranks and merges its vt outputs inside
// shared memory. sA and sB hold `tile` keys each, the seed's layout: either
// input may supply every output of the tile. The last tile is partial: its
// spans are shorter and nothing reads past them, so no stale slot is seen.
// Values (key-value mode) are fetched from global memory by index.
template <class Key, class Value>
__global__ void merge_tiled(const Key* a, size_t m, const Key* b, size_t n, Key* out, const Value* va,
                            const Value* vb, Value* vout, int tile, int vt) {
    extern __shared__ __align__(16) unsigned char dynamicShared[];
    Key* sA = reinterpret_cast<Key*>(dynamicShared);
    Key* sB = sA + tile;
    __shared__ size_t split[2];

    const size_t total = m + n;
    const size_t k0 = static_cast<size_t>(blockIdx.x) * tile;
    const size_t k1 = min_of(k0 + tile, total);
    for (int e = threadIdx.x; e < 2; e += blockDim.x) split[e] = co_rank(e == 0 ? k0 : k1, a, m, b, n);
    __syncthreads();
    const size_t a0 = split[0], b0 = k0 - a0;
    const int aCount = static_cast<int>(split[1] - a0);
    const int bCount = static_cast<int>((k1 - split[1]) - b0);

    for (int t = threadIdx.x; t < aCount; t += blockDim.x) sA[t] = a[a0 + t];
    for (int t = threadIdx.x; t < bCount; t += blockDim.x) sB[t] = b[b0 + t];
    __syncthreads();

    const int count = aCount + bCount;
    const int kLo = min_of(static_cast<int>(threadIdx.x) * vt, count);
    const int kHi = min_of(kLo + vt, count);
    const int iLo = co_rank(kLo, sA, aCount, sB, bCount);
    const int iHi = co_rank(kHi, sA, aCount, sB, bCount);
    Key* myOut = out + k0 + kLo;
    merge_sequential(sA, iLo, iHi, sB, kLo - iLo, kHi - iHi, [&](int k, Key key, bool fromA, int index) {
        myOut[k] = key;
        if constexpr (kPairs<Value>) vout[k0 + kLo + k] = fromA ? va[a0 + index] : vb[b0 + index];
        else (void)fromA, (void)index;
    });
}

// Loads span elements [w.loaded, w.refill_end()) into their slots: only the
// slots the last round consumed. Every thread keeps its own (identical)
// copy of the window's counters.
template <class Key>
__device__ void refill(Key* slots, const Key* span, CircularWindow& w) {
    const int end = w.refill_end();
    const int firstSlot = w.loaded % w.size;
    for (int t = threadIdx.x; t < end - w.loaded; t += blockDim.x)
        slots[wrap_slot(firstSlot, t, w.size)] = span[w.loaded + t];
    w.loaded = end;
}

// 12.7: block t owns outputs [t * rounds * window, ...): `rounds` times the
// tile, with the same 2 * window keys of shared memory that merge_tiled
// spends on one tile. Each round merges the next `window` outputs from the
// two circular buffers (each thread vt of them), works out how many of each
// input the round used, and the next refill replaces just those.
template <class Key, class Value>
__global__ void merge_circular(const Key* a, size_t m, const Key* b, size_t n, Key* out, const Value* va,
                               const Value* vb, Value* vout, int window, int vt, int rounds) {
    extern __shared__ __align__(16) unsigned char dynamicShared[];
    Key* sA = reinterpret_cast<Key*>(dynamicShared);
    Key* sB = sA + window;
    __shared__ size_t split[2];

    const size_t total = m + n;
    const size_t perBlock = static_cast<size_t>(window) * rounds;
    const size_t k0 = static_cast<size_t>(blockIdx.x) * perBlock;
    const size_t k1 = min_of(k0 + perBlock, total);
    for (int e = threadIdx.x; e < 2; e += blockDim.x) split[e] = co_rank(e == 0 ? k0 : k1, a, m, b, n);
    __syncthreads();
    const size_t a0 = split[0], b0 = k0 - a0;
    CircularWindow wa{window, static_cast<int>(split[1] - a0)};
    CircularWindow wb{window, static_cast<int>((k1 - split[1]) - b0)};

    const int blockOut = static_cast<int>(k1 - k0);
    for (int produced = 0; produced < blockOut; produced += window) {  // block-uniform: the barriers are safe
        refill(sA, a + a0, wa);
        refill(sB, b + b0, wb);
        __syncthreads();

        // This round's `roundOut` outputs come from the buffers' first
        // `window` elements of each side: at most that many of either are used.
        const int roundOut = min_of(window, blockOut - produced);
        const int aHead = wa.head(), bHead = wb.head();
        const int aAvail = wa.available(), bAvail = wb.available();
        const int kLo = min_of(static_cast<int>(threadIdx.x) * vt, roundOut);
        const int kHi = min_of(kLo + vt, roundOut);
        const int iLo = co_rank_circular(kLo, sA, aHead, aAvail, sB, bHead, bAvail, window);
        const int iHi = co_rank_circular(kHi, sA, aHead, aAvail, sB, bHead, bAvail, window);
        const size_t outBase = k0 + produced + kLo;
        const size_t aDone = a0 + wa.consumed, bDone = b0 + wb.consumed;  // global index of logical 0
        merge_sequential_circular(sA, aHead, iLo, iHi, sB, bHead, kLo - iLo, kHi - iHi, window,
                                  [&](int k, Key key, bool fromA, int index) {
                                      out[outBase + k] = key;
                                      if constexpr (kPairs<Value>)
                                          vout[outBase + k] = fromA ? va[aDone + index] : vb[bDone + index];
                                      else (void)fromA, (void)index;
                                  });

        // The same answer in every thread: how many a's the whole round took.
        const int aUsed = co_rank_circular(roundOut, sA, aHead, aAvail, sB, bHead, bAvail, window);
        __syncthreads();  // every thread is done with the slots the next refill overwrites
        wa.consumed += aUsed;
        wb.consumed += roundOut - aUsed;
    }
}

// ---- the production merge: merge path partition, then tiles in registers

// The knobs of the production merge, read by the partition kernel, the merge
// kernel and the launcher alike, so they cannot disagree: nt threads per
// block, vt values per thread, nv = nt * vt outputs per tile.
template <int NT, int VT>
struct PathTuning {
    static constexpr int nt = NT, vt = VT, nv = NT * VT;
    static constexpr int slots = nv + nv / 32;  // padded(nv - 1) < slots
    static_assert(nv % 4 == 0, "tiles must start on 16-byte boundaries for the vector stores");
};

template <class Key, class Value, int kSlots>
struct TileStorage {
    Key keys[kSlots];
    Value values[kSlots];
};
template <class Key, int kSlots>
struct TileStorage<Key, NoValues, kSlots> {
    Key keys[kSlots];
};

constexpr int kPartitionThreads = 128;
constexpr int kMinPathTile = 1024;  // the smallest nv among the instantiations; sizes the split buffer

// The merge path partition: one co-rank per tile boundary, splits[p] for
// output index p * nv (the last one for m + n), written to global memory.
// Each search is independent, so all of them run in one short wave instead
// of at the start of every merge block.
template <class Key>
__global__ void merge_path_partition(const Key* a, size_t m, const Key* b, size_t n, size_t nv, size_t tiles,
                                     size_t* splits) {
    const size_t p = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (p > tiles) return;
    splits[p] = co_rank(min_of(p * nv, m + n), a, m, b, n);
}

// Writes tile positions [0, count) of a padded shared array to dst[0, count):
// consecutive threads write consecutive 16-byte chunks (coalesced, one
// vector store each); the last tile's ragged end goes element by element.
template <int NT, int NV, class T>
__device__ void store_tile(const T* shared, int count, T* dst) {
    constexpr int kVec = 4;
    const bool aligned = (reinterpret_cast<uintptr_t>(dst) & 15) == 0;
#pragma unroll
    for (int r = 0; r < ceil_div(NV, kVec * NT); ++r) {
        const int x = (threadIdx.x + r * NT) * kVec;
        if (x >= count) continue;
        if (aligned && x + kVec <= count) {
            *reinterpret_cast<uint4*>(dst + x) =
                make_uint4(to_bits(shared[padded(x)]), to_bits(shared[padded(x + 1)]),
                           to_bits(shared[padded(x + 2)]), to_bits(shared[padded(x + 3)]));
        } else {
            for (int e = 0; e < kVec && x + e < count; ++e) dst[x + e] = shared[padded(x + e)];
        }
    }
}

// The production merge's row styles. Staged: merge_path_tiles, outputs
// stored through the shared tile, so a warp's stores are contiguous (two
// more barriers and two shared-memory passes). Direct: merge_path_tiles,
// store_registers straight from each thread's registers. Pipelined:
// merge_path_pipelined (below), resident blocks, the next tile's copies in
// flight during the merge.
enum class PathStyle { Staged, Direct, Pipelined };

// One tile of nv outputs per block: its spans come from the partition, so
// aCount + bCount is exactly the tile's output count and one shared array
// of nv keys holds both (merge_tiled needs 2 * tile). Staged: three
// barriers (after the load, after the merge has read the tile, after the
// staging); direct: only the first.
template <class Key, class Value, int NT, int VT, PathStyle kStyle>
__global__ void __launch_bounds__(NT) merge_path_tiles(const Key* a, size_t m, const Key* b, size_t n,
                                                       const size_t* splits, Key* out, const Value* va,
                                                       const Value* vb, Value* vout) {
    using T = PathTuning<NT, VT>;
    __shared__ TileStorage<Key, Value, T::slots> tile;
    static_assert(sizeof(tile) <= 48 * 1024, "static shared memory is limited to 48 KiB per block");

    const size_t k0 = static_cast<size_t>(blockIdx.x) * T::nv;
    const size_t k1 = min_of(k0 + T::nv, m + n);
    const size_t a0 = splits[blockIdx.x], a1 = splits[blockIdx.x + 1];
    const size_t b0 = k0 - a0, b1 = k1 - a1;
    const int aCount = static_cast<int>(a1 - a0);
    const int count = static_cast<int>(k1 - k0);

    // 1. Both spans into the tile: a's at [0, aCount), b's at [aCount, count).
    load_two_spans<NT, T::nv>(threadIdx.x, a + a0, aCount, b + b0, static_cast<int>(b1 - b0), tile.keys);
    if constexpr (kPairs<Value>)
        load_two_spans<NT, T::nv>(threadIdx.x, va + a0, aCount, vb + b0, static_cast<int>(b1 - b0), tile.values);
    __syncthreads();

    // 2. This thread's vt outputs start on diagonal tid * vt of the tile: its
    // co-rank there, then the serial merge into registers.
    const int diag = min_of(static_cast<int>(threadIdx.x) * VT, count);
    const PaddedView<Key> tileView{tile.keys, 0};
    const int i = co_rank(diag, tileView, aCount, PaddedView<Key>{tile.keys, aCount}, count - aCount);
    Key keys[VT];
    int from[VT];
    serial_merge<VT>(tileView, i, aCount, aCount + diag - i, count, keys, from);
    Value values[kPairs<Value> ? VT : 1];
    if constexpr (kPairs<Value>) {
#pragma unroll
        for (int r = 0; r < VT; ++r) values[r] = tile.values[padded(from[r])];
    }

    // 3. The stores to out[k0, k0 + count).
    if constexpr (kStyle == PathStyle::Direct) {
        store_registers<VT>(keys, diag, count, out + k0);
        if constexpr (kPairs<Value>) store_registers<VT>(values, diag, count, vout + k0);
        else (void)values, (void)vout;
    } else {
        __syncthreads();  // every thread has read the tile: its slots can stage the outputs
#pragma unroll
        for (int r = 0; r < VT; ++r) tile.keys[padded(threadIdx.x * VT + r)] = keys[r];
        if constexpr (kPairs<Value>) {
#pragma unroll
            for (int r = 0; r < VT; ++r) tile.values[padded(threadIdx.x * VT + r)] = values[r];
        } else {
            (void)values;
        }
        __syncthreads();
        store_tile<NT, NT * VT>(tile.keys, count, out + k0);
        if constexpr (kPairs<Value>) store_tile<NT, NT * VT>(tile.values, count, vout + k0);
    }
}

// ---- merge_path pipelined: the next tile's loads in flight while this one merges
//
// merge_path_tiles runs load, merge and store one after the other, so a
// block has nothing in flight while it merges, and its loads sit in
// registers (a 256x32 tile stages 36 of its 64 registers). Here a block
// stays resident and walks tiles blockIdx.x, + gridDim.x, ...; it starts the
// copies of its next tile before it merges the current one, into the other
// of two shared buffers. The copies are asynchronous (cp.async on sm_80 and
// later: global memory straight into shared memory, no registers, no wait
// until the data is needed); on older cards such as the T4 the same calls
// compile to ordinary loads and stores, so the kernel is correct there and
// simply does not overlap.
//
// A 16-byte copy needs 16-byte-aligned addresses on both sides, which the
// pad word of padded() breaks. So each span keeps its offset from a 16-byte
// boundary in the buffer (a's first element at slot aStart = its shift, b's
// at the next multiple of 4 plus its own shift), and the buffer is swizzled
// instead of padded: in each 32-word row, the 4-word chunk c sits at chunk
// c ^ (row & 7). Chunks stay whole and aligned; the coalesced 16-byte reads
// for the global stores are conflict-free, and so are the 16-byte stores
// that stage the outputs at vt 16 and 32 (3-way at vt 24). The price: where
// a warp's merge reads march in step (every a below every b: lane t reads
// t * vt + r) they are 4-way, where padding made them conflict-free; on
// random keys the lanes' reads land on the banks at random either way.
__host__ __device__ constexpr int swizzled(int x) { return x ^ ((x >> 3) & 0x1C); }

template <class T>
struct SwizzledView {
    const T* words;
    int base;
    __host__ __device__ T operator[](int x) const { return words[swizzled(base + x)]; }
};

// Where a tile's spans a[0, aCount) and b[0, ...) land in a buffer.
struct SpanSlots {
    int aStart, bStart;
};
template <class T>
__host__ __device__ SpanSlots span_slots(const T* a, int aCount, const T* b) {
    const int aStart = static_cast<int>(a - align_down_16(a));
    return {aStart, ceil_div(aStart + aCount, 4) * 4 + static_cast<int>(b - align_down_16(b))};
}

// The knobs of the pipelined merge. A buffer holds one tile's spans: nv
// elements after at most 3 + 3 + 3 slots of alignment, rounded to whole
// 32-word rows for the swizzle.
template <int NT, int VT>
struct PipelinedTuning {
    static constexpr int nt = NT, vt = VT, nv = NT * VT;
    static constexpr int slots = (nv + 12 + 31) / 32 * 32;
    static_assert(VT % 4 == 0, "each thread stages its outputs as vt / 4 16-byte chunks");
};

// One asynchronous copy of kBytes (4 or 16) from global to shared memory.
// On the host (--selftest) it is a plain copy.
template <int kBytes, class T>
__host__ __device__ void copy_async(T* sharedDst, const T* globalSrc) {
#ifdef __CUDA_ARCH__
    __pipeline_memcpy_async(sharedDst, globalSrc, kBytes);
#else
    memcpy(sharedDst, globalSrc, kBytes);
#endif
}

// One thread's share of the copies of span src[0, count) into buffer slots
// start, start + 1, ... (start % 4 must be the span's own 16-byte shift):
// whole chunks as one 16-byte copy, the ragged ends element by element, so
// nothing outside the span is read.
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

// A tile's place in the inputs and the output, from its two splits (the
// co-ranks of its first output and of the one after its last).
struct TileSpans {
    size_t k0, a0, b0;  // first output, first element of a, first of b
    int aCount, count;  // elements from a; outputs (from a and b together)
};
__host__ __device__ inline TileSpans tile_spans(size_t tile, int nv, size_t total, size_t a0, size_t a1) {
    const size_t k0 = tile * nv, k1 = min_of(k0 + nv, total);
    return {k0, a0, k0 - a0, static_cast<int>(a1 - a0), static_cast<int>(k1 - k0)};
}

// Starts the copies of one tile (keys, and values in key-value mode) into
// one buffer, as one group of asynchronous copies.
template <int NT, class Key, class Value>
__device__ void start_tile_copies(const TileSpans& t, const Key* a, const Key* b, const Value* va, const Value* vb,
                                  Key* keyBuffer, Value* valueBuffer) {
    const int bCount = t.count - t.aCount;
    const SpanSlots ks = span_slots(a + t.a0, t.aCount, b + t.b0);
    copy_span_async<NT>(threadIdx.x, a + t.a0, t.aCount, keyBuffer, ks.aStart);
    copy_span_async<NT>(threadIdx.x, b + t.b0, bCount, keyBuffer, ks.bStart);
    if constexpr (kPairs<Value>) {
        const SpanSlots vs = span_slots(va + t.a0, t.aCount, vb + t.b0);
        copy_span_async<NT>(threadIdx.x, va + t.a0, t.aCount, valueBuffer, vs.aStart);
        copy_span_async<NT>(threadIdx.x, vb + t.b0, bCount, valueBuffer, vs.bStart);
    }
    __pipeline_commit();
}

// Writes buffer positions [0, count) (the staged outputs, swizzled) to
// dst[0, count): consecutive threads, consecutive 16-byte chunks.
template <int NT, int NV, class T>
__device__ void store_swizzled_tile(const T* buffer, int count, T* dst) {
    constexpr int kVec = 4;
    const bool aligned = (reinterpret_cast<uintptr_t>(dst) & 15) == 0;
#pragma unroll
    for (int r = 0; r < ceil_div(NV, kVec * NT); ++r) {
        const int x = (threadIdx.x + r * NT) * kVec;
        if (x >= count) continue;
        if (aligned && x + kVec <= count) store_chunk(dst + x, *reinterpret_cast<const uint4*>(buffer + swizzled(x)));
        else for (int e = 0; e < kVec && x + e < count; ++e) dst[x + e] = buffer[swizzled(x + e)];
    }
}

// Three barriers per tile: (1) this tile's copies have landed and every
// thread is done with the other buffer, so the next tile's copies may
// start there; (2) every thread has read this tile, so its buffer can
// stage the outputs; (3) the staging is complete.
//
// Nothing in the loop waits on global memory: the copies of a tile start a
// whole round before it is merged, and the splits that place a tile are
// loaded a round before its copies start. (Read on the spot, they cost two
// global-memory latencies per tile with every warp of the block idle.)
template <class Key, class Value, int NT, int VT>
__global__ void __launch_bounds__(NT) merge_path_pipelined(const Key* a, size_t m, const Key* b, size_t n,
                                                           const size_t* splits, size_t tiles, Key* out,
                                                           const Value* va, const Value* vb, Value* vout) {
    using T = PipelinedTuning<NT, VT>;
    extern __shared__ uint4 sharedChunks[];  // uint4: the buffers start 16-byte aligned
    Key* keyBuffers = reinterpret_cast<Key*>(sharedChunks);                  // 2 x slots keys
    Value* valueBuffers = reinterpret_cast<Value*>(keyBuffers + 2 * T::slots);  // 2 x slots values (pairs only)
    const size_t total = m + n;

    size_t tile = blockIdx.x;
    TileSpans t = tile_spans(tile, T::nv, total, splits[tile], splits[tile + 1]);
    start_tile_copies<NT>(t, a, b, va, vb, keyBuffers, valueBuffers);
    size_t nextSplit0 = 0, nextSplit1 = 0;  // the splits of tile + gridDim.x, loaded ahead
    if (tile + gridDim.x < tiles) {
        nextSplit0 = splits[tile + gridDim.x];
        nextSplit1 = splits[tile + gridDim.x + 1];
    }
    for (int round = 0; tile < tiles; ++round, tile += gridDim.x) {
        const int cur = (round & 1) * T::slots, other = T::slots - cur;
        Key* keyBuffer = keyBuffers + cur;
        __pipeline_wait_prior(0);
        __syncthreads();  // (1)
        const size_t next = tile + gridDim.x, afterNext = next + gridDim.x;
        TileSpans nextSpans{};
        if (next < tiles) {
            nextSpans = tile_spans(next, T::nv, total, nextSplit0, nextSplit1);
            start_tile_copies<NT>(nextSpans, a, b, va, vb, keyBuffers + other, valueBuffers + other);
        }
        if (afterNext < tiles) {  // used only next round: this round never waits for it
            nextSplit0 = splits[afterNext];
            nextSplit1 = splits[afterNext + 1];
        }

        const int bCount = t.count - t.aCount;
        const SpanSlots ks = span_slots(a + t.a0, t.aCount, b + t.b0);
        const int diag = min_of(static_cast<int>(threadIdx.x) * VT, t.count);
        const int i = co_rank(diag, SwizzledView<Key>{keyBuffer, ks.aStart}, t.aCount,
                              SwizzledView<Key>{keyBuffer, ks.bStart}, bCount);
        Key keys[VT];
        int from[VT];
        serial_merge<VT>(SwizzledView<Key>{keyBuffer, 0}, ks.aStart + i, ks.aStart + t.aCount,
                         ks.bStart + diag - i, ks.bStart + bCount, keys, from);
        Value values[kPairs<Value> ? VT : 1];
        if constexpr (kPairs<Value>) {
            // A key's slot, moved to its value's slot: the value spans have their own shifts.
            const SpanSlots vs = span_slots(va + t.a0, t.aCount, vb + t.b0);
            const Value* valueBuffer = valueBuffers + cur;
#pragma unroll
            for (int r = 0; r < VT; ++r) {
                const int slot = from[r] < ks.aStart + t.aCount ? from[r] - ks.aStart + vs.aStart
                                                                : from[r] - ks.bStart + vs.bStart;
                values[r] = diag + r < t.count ? valueBuffer[swizzled(slot)] : Value{};  // past the end: no read
            }
        }
        __syncthreads();  // (2)
#pragma unroll
        for (int r = 0; r < VT; r += 4) {
            *reinterpret_cast<uint4*>(keyBuffer + swizzled(threadIdx.x * VT + r)) =
                make_uint4(to_bits(keys[r]), to_bits(keys[r + 1]), to_bits(keys[r + 2]), to_bits(keys[r + 3]));
            if constexpr (kPairs<Value>)
                *reinterpret_cast<uint4*>(valueBuffers + cur + swizzled(threadIdx.x * VT + r)) =
                    make_uint4(to_bits(values[r]), to_bits(values[r + 1]), to_bits(values[r + 2]),
                               to_bits(values[r + 3]));
        }
        __syncthreads();  // (3)
        store_swizzled_tile<NT, T::nv>(keyBuffer, t.count, out + t.k0);
        if constexpr (kPairs<Value>) store_swizzled_tile<NT, T::nv>(valueBuffers + cur, t.count, vout + t.k0);
        t = nextSpans;
    }
}

// The key-value mode's values: each element's position in a||b.
__global__ void fill_provenance(uint32_t* values, size_t count) {
    const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
    for (size_t s = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; s < count; s += stride)
        values[s] = static_cast<uint32_t>(s);
}

// ----------------------------------------------------------------- launchers

// The inputs and outputs of one merge on the device. a and b are one
// allocation, a = keys[0, m) and b = keys[m, m + n), so the copy reference
// is one cudaMemcpy of the same bytes and a value can be its own position
// in a||b (the provenance). b is then 16-byte aligned only when m is a
// multiple of 4: the verify sizes exercise both load paths.
template <class Key, class Value>
struct MergeProblem {
    size_t m = 0, n = 0;
    DeviceBuffer<Key> keys, keysOut;
    DeviceBuffer<Value> values, valuesOut;  // key-value mode only
    DeviceBuffer<size_t> splits;            // merge path: the co-rank of every tile boundary
    size_t total() const { return m + n; }
    const Key* a() const { return keys.get(); }
    const Key* b() const { return keys.get() + m; }
    const Value* va() const { return kPairs<Value> ? values.get() : nullptr; }
    const Value* vb() const { return kPairs<Value> ? values.get() + m : nullptr; }
    double bytesMoved() const {  // read m + n, write m + n
        return 2.0 * static_cast<double>(total()) * (sizeof(Key) + (kPairs<Value> ? sizeof(Value) : 0));
    }
};

constexpr int kBasicThreads = 256;
constexpr int kMaxDynamicShared = 48 * 1024;  // no opt-in needed up to here, on every card
// merge_tiled and merge_circular: 2 * tile 4-byte keys plus the 16-byte split.
constexpr size_t kMaxTile = (kMaxDynamicShared - 2 * sizeof(size_t)) / 8;
constexpr size_t kMaxProvenance = 0xFFFFFFFFu;  // uint32 values name positions below this; 0xFFFFFFFF is the poison

enum class Kind { Basic, Tiled, Circular, Path };
const char* kindName(Kind kind) {
    switch (kind) {
        case Kind::Basic: return "merge_basic";
        case Kind::Tiled: return "merge_tiled";
        case Kind::Circular: return "merge_circular";
        case Kind::Path: return "merge_path";
    }
    return "?";
}

// A row's knobs. tile: outputs per shared-memory fill (the window for
// merge_circular, nt * vt for merge_path, threads * vt for merge_basic);
// vt: outputs per thread; rounds: tiles per merge_circular block; style:
// which merge_path kernel and how its outputs leave the block;
// residentBlocks: the pipelined kernel's grid (the blocks the card holds
// at once; each walks tiles until none are left).
struct Knobs {
    Kind kind;
    int tile;
    int vt;
    int rounds = 1;
    PathStyle style = PathStyle::Staged;
    size_t residentBlocks = 0;
    int threads() const { return kind == Kind::Basic ? kBasicThreads : tile / vt; }
    size_t tilesPerBlock(size_t total) const {
        return style == PathStyle::Pipelined ? ceil_div(ceil_div(total, static_cast<size_t>(tile)), blocks(total))
                                             : static_cast<size_t>(rounds);
    }
    size_t outputsPerBlock(size_t total) const { return static_cast<size_t>(tile) * tilesPerBlock(total); }
    size_t blocks(size_t total) const {
        const size_t fills = ceil_div(total, static_cast<size_t>(tile) * rounds);
        return style == PathStyle::Pipelined ? min_of(fills, residentBlocks) : fills;
    }
};

// A row's name in the tables: merge_path rows add nt x vt and their style.
std::string knobLabel(const Knobs& k) {
    if (k.kind != Kind::Path) return kindName(k.kind);
    std::string s = std::string(kindName(k.kind)) + " " + std::to_string(k.threads()) + "x" + std::to_string(k.vt);
    if (k.style == PathStyle::Direct) s += " direct";
    if (k.style == PathStyle::Pipelined) s += " pipelined";
    return s;
}

template <class Key, class Value>
size_t sharedBytes(const Knobs& k) {
    switch (k.kind) {
        case Kind::Basic: return 0;
        case Kind::Tiled:
        case Kind::Circular: return 2 * static_cast<size_t>(k.tile) * sizeof(Key) + 2 * sizeof(size_t);
        case Kind::Path: {
            const size_t perSlot = sizeof(Key) + (kPairs<Value> ? sizeof(Value) : 0);
            if (k.style == PathStyle::Pipelined)  // two buffers of PipelinedTuning::slots
                return 2 * static_cast<size_t>((k.tile + 12 + 31) / 32 * 32) * perSlot;
            return static_cast<size_t>(k.tile + k.tile / 32) * perSlot;
        }
    }
    return 0;
}

unsigned gridBlocks(size_t blocks, const char* kernel) {
    if (blocks > 0x7FFFFFFFu) {
        std::fprintf(stderr, "merge_tiled: %s needs %zu blocks, past the grid limit; use larger tiles\n", kernel,
                     blocks);
        std::exit(kExitBadArgument);
    }
    return static_cast<unsigned>(blocks);
}

template <class Key, class Value>
void launchBasic(const Knobs& k, MergeProblem<Key, Value>& p) {
    if (p.total() == 0) return;  // a grid of 0 blocks is an error
    merge_basic<Key, Value><<<gridBlocks(k.blocks(p.total()), "merge_basic"), kBasicThreads>>>(
        p.a(), p.m, p.b(), p.n, p.keysOut.get(), p.va(), p.vb(), p.valuesOut.get(), static_cast<size_t>(k.vt));
    CUDA_CHECK_LAUNCH("merge_basic");
}

template <class Key, class Value>
void launchTiled(const Knobs& k, MergeProblem<Key, Value>& p) {
    if (p.total() == 0) return;
    merge_tiled<Key, Value><<<gridBlocks(k.blocks(p.total()), "merge_tiled"), k.threads(),
                              2 * k.tile * sizeof(Key)>>>(p.a(), p.m, p.b(), p.n, p.keysOut.get(), p.va(), p.vb(),
                                                          p.valuesOut.get(), k.tile, k.vt);
    CUDA_CHECK_LAUNCH("merge_tiled");
}

template <class Key, class Value>
void launchCircular(const Knobs& k, MergeProblem<Key, Value>& p) {
    if (p.total() == 0) return;
    merge_circular<Key, Value><<<gridBlocks(k.blocks(p.total()), "merge_circular"), k.threads(),
                                 2 * k.tile * sizeof(Key)>>>(p.a(), p.m, p.b(), p.n, p.keysOut.get(), p.va(),
                                                             p.vb(), p.valuesOut.get(), k.tile, k.vt, k.rounds);
    CUDA_CHECK_LAUNCH("merge_circular");
}

// The production merge's first kernel: the co-rank of every tile boundary
// into p.splits. Returns the tile count.
template <int NV, class Key, class Value>
size_t launchPartition(MergeProblem<Key, Value>& p) {
    static_assert(NV >= kMinPathTile, "the split buffer is sized for tiles of at least kMinPathTile");
    const size_t tiles = ceil_div(p.total(), static_cast<size_t>(NV));
    merge_path_partition<Key>
        <<<gridBlocks(ceil_div(tiles + 1, static_cast<size_t>(kPartitionThreads)), "merge_path_partition"),
           kPartitionThreads>>>(p.a(), p.m, p.b(), p.n, NV, tiles, p.splits.get());
    CUDA_CHECK_LAUNCH("merge_path_partition");
    return tiles;
}

template <class Key, class Value, int NT, int VT, PathStyle kStyle>
void launchPath(const Knobs&, MergeProblem<Key, Value>& p) {
    if (p.total() == 0) return;
    const size_t tiles = launchPartition<NT * VT>(p);
    merge_path_tiles<Key, Value, NT, VT, kStyle><<<gridBlocks(tiles, "merge_path_tiles"), NT>>>(
        p.a(), p.m, p.b(), p.n, p.splits.get(), p.keysOut.get(), p.va(), p.vb(), p.valuesOut.get());
    CUDA_CHECK_LAUNCH("merge_path_tiles");
}

template <class Key, class Value, int NT, int VT>
constexpr size_t kPipelinedShared = 2 * PipelinedTuning<NT, VT>::slots * (sizeof(Key) + (kPairs<Value> ? sizeof(Value) : 0));

// The pipelined kernel's grid: as many blocks as the card holds at once,
// or 0 when its two buffers pass this card's shared memory per block
// (a 256x32 key-value block needs 128.5 KiB; a T4 gives 64).
template <class Key, class Value, int NT, int VT>
size_t pipelinedResidentBlocks() {
    constexpr size_t bytes = kPipelinedShared<Key, Value, NT, VT>;
    int device = 0, optIn = 0, sms = 0, perSm = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&optIn, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    if (bytes > static_cast<size_t>(optIn)) return 0;
    const auto kernel = merge_path_pipelined<Key, Value, NT, VT>;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&perSm, kernel, NT, bytes));
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return static_cast<size_t>(perSm) * sms;
}

template <class Key, class Value, int NT, int VT>
void launchPipelined(const Knobs& k, MergeProblem<Key, Value>& p) {
    if (p.total() == 0) return;
    const size_t tiles = launchPartition<NT * VT>(p);
    constexpr size_t bytes = kPipelinedShared<Key, Value, NT, VT>;
    merge_path_pipelined<Key, Value, NT, VT><<<gridBlocks(k.blocks(p.total()), "merge_path_pipelined"), NT, bytes>>>(
            p.a(), p.m, p.b(), p.n, p.splits.get(), tiles, p.keysOut.get(), p.va(), p.vb(), p.valuesOut.get());
    CUDA_CHECK_LAUNCH("merge_path_pipelined");
}

// The variant table: one row per kernel and knob setting. It drives the
// checks, the timing and the printed tables.
template <class Key, class Value>
struct Variant {
    Knobs knobs;
    void (*launch)(const Knobs&, MergeProblem<Key, Value>&);
    std::string label() const { return knobLabel(knobs); }
};

template <class Key, class Value>
Variant<Key, Value> makeVariant(const Knobs& k) {
    switch (k.kind) {
        case Kind::Basic: return {k, launchBasic<Key, Value>};
        case Kind::Tiled: return {k, launchTiled<Key, Value>};
        default: return {k, launchCircular<Key, Value>};
    }
}

// A shape is compiled only where its tile fits the 48 KiB of static shared
// memory every card gives a block: key-value tiles take twice the keys'.
template <class Key, class Value, int NT, int VT>
constexpr bool kFitsStatic = sizeof(TileStorage<Key, Value, PathTuning<NT, VT>::slots>) <= 48 * 1024;

template <class Key, class Value, int NT, int VT, PathStyle kStyle = PathStyle::Staged>
void addPath(std::vector<Variant<Key, Value>>& rows) {
    if constexpr (kFitsStatic<Key, Value, NT, VT>)
        rows.push_back({Knobs{Kind::Path, NT * VT, VT, 1, kStyle}, launchPath<Key, Value, NT, VT, kStyle>});
}

template <class Key, class Value, int NT, int VT>
void addPipelined(std::vector<Variant<Key, Value>>& rows) {
    const size_t resident = pipelinedResidentBlocks<Key, Value, NT, VT>();
    if (resident > 0)
        rows.push_back({Knobs{Kind::Path, NT * VT, VT, 1, PathStyle::Pipelined, resident},
                        launchPipelined<Key, Value, NT, VT>});
}

// The production merge's compiled shapes (nt x vt), one step at a time.
template <class Key, class Value>
std::vector<Variant<Key, Value>> pathVariants() {
    constexpr PathStyle kDirect = PathStyle::Direct;
    std::vector<Variant<Key, Value>> rows;
    // One tile per block, outputs staged through shared memory. vt = 15 is
    // odd, the classic way to spread an unpadded tile's accesses over the
    // banks; with the padding here it pays 2-way where powers of two are
    // conflict-free (see padded()).
    addPath<Key, Value, 128, 8>(rows);
    addPath<Key, Value, 256, 8>(rows);
    addPath<Key, Value, 128, 16>(rows);
    addPath<Key, Value, 256, 15>(rows);
    addPath<Key, Value, 256, 16>(rows);
    // Larger tiles: vt 8 -> 16 paid off, because each tile has fixed costs
    // (three barriers, the per-thread co-rank in shared memory, the block's
    // load, merge and store phases one after the other) that more outputs
    // per tile spread thinner. More in flight per block too: a 256x32 tile
    // loads 32 KiB at once. Key-value tiles of 256x24 and 256x32 pass 48 KiB.
    addPath<Key, Value, 128, 32>(rows);
    addPath<Key, Value, 256, 24>(rows);
    addPath<Key, Value, 256, 32>(rows);
    // Direct stores: each thread's vt outputs leave from its registers as
    // vt / 4 16-byte stores; no staging barrier, no two shared-memory passes.
    // At vt 16 a thread writes 64 contiguous bytes and that is as fast as
    // staging; at vt 32 (128 bytes per thread) each warp store instruction
    // touches 32 different 128-byte lines and the row costs about 1.7x the
    // staged one, which writes whole lines.
    addPath<Key, Value, 256, 16, kDirect>(rows);
    addPath<Key, Value, 256, 32, kDirect>(rows);
    // Pipelined: the next tile's copies in flight during the merge, no
    // registers held for them. Two buffers per block halve the blocks that
    // fit, so the overlap is bought with occupancy: on the H200 it wins for
    // key-value (the rows that move twice the bytes) and ties the staged
    // rows for keys. Shapes whose two buffers pass the card's shared memory
    // per block are left out (256x32 key-value needs 128.5 KiB).
    addPipelined<Key, Value, 256, 16>(rows);
    addPipelined<Key, Value, 128, 32>(rows);
    addPipelined<Key, Value, 256, 24>(rows);
    addPipelined<Key, Value, 256, 32>(rows);
    return rows;
}

// ---------------------------------------------------------------- checking

template <class Key, class Value>
MergeProblem<Key, Value> uploadMerge(const std::vector<Key>& a, const std::vector<Key>& b) {
    MergeProblem<Key, Value> p;
    p.m = a.size();
    p.n = b.size();
    const size_t total = p.total();
    const size_t splitCount = ceil_div(total, static_cast<size_t>(kMinPathTile)) + 1;
    const size_t perElement = 2 * sizeof(Key) + (kPairs<Value> ? 2 * sizeof(Value) : 0);
    requireDeviceMemory(total * perElement + splitCount * sizeof(size_t) + (64u << 20),
                        "merge_tiled (inputs, outputs, splits, library scratch)");
    p.keys.allocate(total);
    p.keysOut.allocate(total);
    p.splits.allocate(splitCount);
    p.keys.upload(a.data(), p.m);
    p.keys.upload(b.data(), p.n, p.m);  // b right after a
    if constexpr (kPairs<Value>) {
        static_assert(std::is_same<Value, uint32_t>::value, "the values are uint32 positions in a||b");
        p.values.allocate(total);
        p.valuesOut.allocate(total);
        if (total) {
            fill_provenance<<<1024, 256>>>(p.values.get(), total);
            CUDA_CHECK_LAUNCH("fill_provenance");
        }
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    return p;
}

// Compares the device's output with the stable host merge, streamed in
// chunks (outputs past host memory can be checked): keys bit for bit, and
// in key-value mode every element's source. Prints the first difference.
template <class Key, class Value>
bool matchesReference(const std::string& what, const MergeReference<Key>& reference,
                      const MergeProblem<Key, Value>& p) {
    auto fetchKeys = [&p](size_t start, size_t count, Key* keys) { p.keysOut.download(keys, count, start); };
    FetchSources fetchSources;
    if constexpr (kPairs<Value>) {
        // The values are the sources (uint32); 0xFFFFFFFF is the poison: never written.
        fetchSources = [&p](size_t start, size_t count, size_t* sources) {
            std::vector<uint32_t> values(count);
            p.valuesOut.download(values.data(), count, start);
            for (size_t q = 0; q < count; ++q) sources[q] = values[q] == 0xFFFFFFFFu ? SIZE_MAX : values[q];
        };
    }
    return reference.matches(what, fetchKeys, fetchSources);
}

std::string knobText(const Knobs& k) {
    std::string s = knobLabel(k);
    s += " tile " + std::to_string(k.tile) + ", " + std::to_string(k.vt) + " per thread";
    if (k.kind == Kind::Circular) s += ", " + std::to_string(k.rounds) + " rounds";
    return s;
}

// The gate every row passes before it is timed: poison, launch, compare.
template <class Key, class Value>
bool checkVariant(const Variant<Key, Value>& v, const MergeReference<Key>& reference, MergeProblem<Key, Value>& p) {
    p.keysOut.poison();
    if constexpr (kPairs<Value>) p.valuesOut.poison();
    v.launch(v.knobs, p);
    CUDA_CHECK(cudaDeviceSynchronize());
    return matchesReference(knobText(v.knobs) + (kPairs<Value> ? " (key-value)" : ""), reference, p);
}

template <class Key, class Value>
bool checkLibrary(LibraryMerge<Key, Value>& library, const MergeReference<Key>& reference,
                  MergeProblem<Key, Value>& p) {
    p.keysOut.poison();
    if constexpr (kPairs<Value>) p.valuesOut.poison();
    library();
    CUDA_CHECK(cudaDeviceSynchronize());
    return matchesReference(library.name(), reference, p);
}

// ---------------------------------------------------------------- selftest

struct Reference {
    std::vector<float> keys;
    std::vector<size_t> source;
};

Reference referenceOf(const std::vector<float>& a, const std::vector<float>& b) {
    Reference r{std::vector<float>(a.size() + b.size()), std::vector<size_t>(a.size() + b.size())};
    ReferenceMerge<float>(a.data(), a.size(), b.data(), b.size()).next(r.keys.size(), r.keys.data(), r.source.data());
    return r;
}

size_t takenFromA(const Reference& r, size_t k, size_t m) {
    size_t fromA = 0;
    for (size_t p = 0; p < k; ++p) fromA += r.source[p] < m;
    return fromA;
}

bool sameAsReference(const std::string& what, const std::vector<float>& keys, const std::vector<size_t>& source,
                     const Reference& r, size_t m) {
    auto describe = [m](size_t s) { return describeMergeSource(s, m); };
    return compareExact(what.c_str(), keys.data(), r.keys.data(), keys.size()) &&
           compareProvenance(what.c_str(), source.data(), r.source.data(), source.size(), describe);
}

// An array that records whether anything read outside [0, size).
struct GuardedArray {
    const float* keys;
    size_t size;
    bool* outside;
    __host__ __device__ float operator[](size_t i) const {
        if (i >= size) {
            *outside = true;
            return 0.0f;
        }
        return keys[i];
    }
};

// The tests' emit: output k goes to keys[base + k], and its source, as a
// position in a||b, to source[base + k].
struct Recorder {
    float* keys;
    size_t* source;
    size_t base, aOrigin, bOrigin;
    template <class Index>
    __host__ __device__ void operator()(Index k, float key, bool fromA, Index index) const {
        keys[base + k] = key;
        source[base + k] = (fromA ? aOrigin : bOrigin) + index;
    }
};

// co_rank and merge_sequential on every pair of small sorted arrays, every k:
// the split is the stable reference's, no read leaves the arrays, and the
// slices of every size 1..7 put together are the reference merge.
void testLinear() {
    const auto arrays = allSortedArrays<float>(6, 3);
    bool splitOk = true, sliceOk = true;
    size_t pairs = 0;
    for (const auto& a : arrays) {
        for (const auto& b : arrays) {
            ++pairs;
            const size_t m = a.size(), n = b.size(), total = m + n;
            const Reference r = referenceOf(a, b);
            for (size_t k = 0; k <= total && splitOk; ++k) {
                bool outside = false;
                const size_t i = co_rank(k, GuardedArray{a.data(), m, &outside}, m, GuardedArray{b.data(), n, &outside}, n);
                splitOk = !outside && i == takenFromA(r, k, m);
                if (!splitOk)
                    std::printf("co_rank(k=%zu, a=%s, b=%s) = %zu%s; the stable split takes %zu from a\n", k,
                                formatKeys(a).c_str(), formatKeys(b).c_str(), i, outside ? " and read outside" : "",
                                takenFromA(r, k, m));
            }
            for (size_t vt = 1; vt <= 7 && sliceOk; ++vt) {
                std::vector<float> keys(total);
                std::vector<size_t> source(total, SIZE_MAX);
                for (size_t kLo = 0; kLo < total; kLo += vt) {
                    const size_t kHi = std::min(kLo + vt, total);
                    const size_t iLo = co_rank(kLo, a.data(), m, b.data(), n);
                    const size_t iHi = co_rank(kHi, a.data(), m, b.data(), n);
                    merge_sequential(a.data(), iLo, iHi, b.data(), kLo - iLo, kHi - iHi,
                                     Recorder{keys.data(), source.data(), kLo, 0, m});
                }
                sliceOk = sameAsReference("slices of " + formatKeys(a) + " and " + formatKeys(b) + ", " +
                                              std::to_string(vt) + " per thread",
                                          keys, source, r, m);
            }
            if (!splitOk || !sliceOk) break;
        }
        if (!splitOk || !sliceOk) break;
    }
    expect(splitOk, "co_rank: the stable split, reads inside the arrays");
    expect(sliceOk, "merge_sequential: slices of 1..7 per thread tile the stable merge");
    std::printf("linear: %zu pairs of sorted arrays (length <= 6, 3 keys), every k, slices of 1..7\n", pairs);
}

// The circular building blocks against the linear ones: every window size
// 1..8, every pair of heads (wrap-around at every offset), every pair of
// sorted runs that fit the window, every k; the slots outside the runs
// hold a junk key (once very low, once very high) that a stray read would
// turn into a wrong answer.
void testCircular() {
    bool ok = true;
    size_t checks = 0;
    for (int size = 1; size <= 8 && ok; ++size) {
        const auto arrays = allSortedArrays<float>(static_cast<size_t>(size), size <= 6 ? 3 : 2);
        for (float junk : {-1000.0f, 1000.0f}) {
            for (int aHead = 0; aHead < size && ok; ++aHead) {
                for (int bHead = 0; bHead < size && ok; ++bHead) {
                    for (const auto& a : arrays) {
                        for (const auto& b : arrays) {
                            const int m = static_cast<int>(a.size()), n = static_cast<int>(b.size());
                            // Junk past the last slot too: a wrap that forgets to wrap reads it.
                            std::vector<float> sA(size + 8, junk), sB(size + 8, junk);
                            for (int x = 0; x < m; ++x) sA[(aHead + x) % size] = a[x];
                            for (int x = 0; x < n; ++x) sB[(bHead + x) % size] = b[x];
                            const Reference r = referenceOf(a, b);
                            for (int k = 0; k <= m + n && ok; ++k) {
                                ++checks;
                                const int want = co_rank(k, a.data(), m, b.data(), n);
                                const int got = co_rank_circular(k, sA.data(), aHead, m, sB.data(), bHead, n, size);
                                // Merge [0, k) and [k, m + n) separately, as two threads would.
                                std::vector<float> keys(m + n);
                                std::vector<size_t> source(m + n, SIZE_MAX);
                                int kStart = 0;
                                for (int kEnd : {k, m + n}) {
                                    const int iLo = co_rank_circular(kStart, sA.data(), aHead, m, sB.data(), bHead, n, size);
                                    const int iHi = co_rank_circular(kEnd, sA.data(), aHead, m, sB.data(), bHead, n, size);
                                    merge_sequential_circular(sA.data(), aHead, iLo, iHi, sB.data(), bHead,
                                                              kStart - iLo, kEnd - iHi, size,
                                                              Recorder{keys.data(), source.data(),
                                                                       static_cast<size_t>(kStart), 0,
                                                                       static_cast<size_t>(m)});
                                    kStart = kEnd;
                                }
                                if (got == want && keys == r.keys && source == r.source) continue;
                                const std::string what = "window " + std::to_string(size) + ", heads " +
                                                         std::to_string(aHead) + "/" + std::to_string(bHead) +
                                                         ", a=" + formatKeys(a) + " b=" + formatKeys(b) + ", k=" +
                                                         std::to_string(k);
                                if (got != want)
                                    std::printf("%s: co_rank_circular = %d, co_rank = %d\n", what.c_str(), got, want);
                                else
                                    sameAsReference(what, keys, source, r, m);  // prints the first difference
                                ok = false;
                            }
                            if (!ok) break;
                        }
                        if (!ok) break;
                    }
                }
            }
        }
    }
    expect(ok, "co_rank_circular and merge_sequential_circular match the linear merge at every wrap");
    std::printf("circular: windows 1..8, every head pair, %zu co-ranks and split merges\n", checks);
}

// The round schedule of merge_circular, one block, on the host: the same
// CircularWindow counters and slot formula as the kernel's refill, with
// every thread's vt-slice of each round. Checks that a refill writes only
// consumed (or never used) slots and reads only inside the span, that a
// buffer never holds more than its window, and that the output is the
// stable merge.
bool circularRoundsMatch(const std::vector<float>& a, const std::vector<float>& b, int size, int vt) {
    const int m = static_cast<int>(a.size()), n = static_cast<int>(b.size());
    CircularWindow wa{size, m}, wb{size, n};
    std::vector<float> sA(size), sB(size);
    std::vector<int> heldA(size, -1), heldB(size, -1);  // span element in each slot, -1: never filled
    std::vector<float> keys(m + n);
    std::vector<size_t> source(m + n, SIZE_MAX);
    const int threads = size;  // enough for vt = 1; more than enough otherwise
    auto hostRefill = [&](std::vector<float>& slots, std::vector<int>& held, const std::vector<float>& span,
                          CircularWindow& w) {
        const int end = w.refill_end();
        if (end > static_cast<int>(span.size())) return false;  // would read past the block's span
        const int firstSlot = w.loaded % w.size;
        for (int t = 0; t < end - w.loaded; ++t) {
            const int slot = wrap_slot(firstSlot, t, w.size);
            if (held[slot] >= w.consumed) return false;  // would overwrite an element not merged yet
            slots[slot] = span[w.loaded + t];
            held[slot] = w.loaded + t;
        }
        w.loaded = end;
        return w.available() <= w.size;
    };
    for (int produced = 0; produced < m + n; produced += size) {
        if (!hostRefill(sA, heldA, a, wa) || !hostRefill(sB, heldB, b, wb)) {
            std::printf("window %d: a refill overwrote live slots or read past the span (a=%s b=%s)\n", size, formatKeys(a).c_str(),
                        formatKeys(b).c_str());
            return false;
        }
        const int roundOut = std::min(size, m + n - produced);
        const int aHead = wa.head(), bHead = wb.head();
        for (int t = 0; t < threads; ++t) {
            const int kLo = std::min(t * vt, roundOut), kHi = std::min(kLo + vt, roundOut);
            const int iLo = co_rank_circular(kLo, sA.data(), aHead, wa.available(), sB.data(), bHead, wb.available(), size);
            const int iHi = co_rank_circular(kHi, sA.data(), aHead, wa.available(), sB.data(), bHead, wb.available(), size);
            merge_sequential_circular(sA.data(), aHead, iLo, iHi, sB.data(), bHead, kLo - iLo, kHi - iHi, size,
                                      Recorder{keys.data(), source.data(), static_cast<size_t>(produced + kLo),
                                               static_cast<size_t>(wa.consumed),
                                               static_cast<size_t>(m + wb.consumed)});
        }
        const int aUsed = co_rank_circular(roundOut, sA.data(), aHead, wa.available(), sB.data(), bHead,
                                           wb.available(), size);
        wa.consumed += aUsed;
        wb.consumed += roundOut - aUsed;
    }
    return sameAsReference("circular rounds, window " + std::to_string(size) + ", " + std::to_string(vt) +
                               " per thread, a=" + formatKeys(a) + " b=" + formatKeys(b),
                           keys, source, referenceOf(a, b), static_cast<size_t>(m));
}

void testCircularRounds() {
    bool ok = true;
    size_t runs = 0;
    for (int size = 1; size <= 8 && ok; ++size) {
        for (int vt : {1, 2, 3}) {
            // Every pair of short runs over two keys (ties across the inputs)...
            for (const auto& a : allSortedArrays<float>(static_cast<size_t>(size) + 1, 2)) {
                for (const auto& b : allSortedArrays<float>(static_cast<size_t>(size) + 1, 2)) {
                    ++runs;
                    if (!(ok = circularRoundsMatch(a, b, size, vt))) break;
                }
                if (!ok) break;
            }
            // ...and the skewed shapes over many rounds: every a below every
            // b, the reverse, all equal, with m and n from 0 to 3 windows.
            for (MergeShape shape : {MergeShape::ABelowB, MergeShape::BBelowA, MergeShape::AllEqual})
                for (int m = 0; m <= 3 * size && ok; ++m)
                    for (int n = 0; n <= 3 * size && ok; ++n) {
                        std::vector<float> a, b;
                        makeMergeInput(shape, static_cast<size_t>(m), static_cast<size_t>(n), a, b);
                        ++runs;
                        ok = circularRoundsMatch(a, b, size, vt);
                    }
            if (!ok) break;
        }
    }
    expect(ok, "circular rounds: refills touch only consumed slots, output is the stable merge");
    std::printf("circular rounds: windows 1..8, 1..3 per thread, %zu inputs (all short pairs and skewed ones)\n",
                runs);
}

// The conflict degree of a warp's shared-memory access where lane t reads or
// writes word index(t * vt + r): the most lanes on one bank, worst over r.
// (Staging stores, and merge reads that march in step, look like this.)
template <class Index>
int worstBank(Index index, int vt) {
    int worst = 0;
    for (int r = 0; r < vt; ++r) {
        std::vector<int> banks(32, 0);
        for (int t = 0; t < 32; ++t) ++banks[index(t * vt + r) % 32];
        worst = std::max(worst, *std::max_element(banks.begin(), banks.end()));
    }
    return worst;
}

// The production merge's pieces: the chunking of a span against 16-byte
// boundaries, the padding's promise, and the per-thread search and
// register merge on a padded tile, all small pairs, vt 1..8.
void testPathPieces() {
    bool chunksOk = true;
    for (int shift = 0; shift < 4; ++shift)
        for (int count = 0; count <= 40; ++count) {
            const SpanChunks<4> s{shift, count};
            std::vector<int> seen(count, 0);
            for (int c = 0; c < s.chunks(); ++c)
                for (int e = 0; e < 4; ++e) {
                    const int x = s.first(c) + e;
                    if (x >= 0 && x < count) ++seen[x];
                    if (s.full(c) && (x < 0 || x >= count)) chunksOk = false;  // a vector load past the span
                }
            for (int x = 0; x < count; ++x) chunksOk = chunksOk && seen[x] == 1;
        }
    expect(chunksOk, "SpanChunks: every element once, full chunks inside the span");

    bool padOk = true;
    for (int vt = 1; vt <= 32; ++vt)
        if (vt != 31)  // the one bad shape (31-way), compiled nowhere
            padOk = padOk && worstBank(padded, vt) <= ((vt & (vt - 1)) == 0 ? 1 : 2);
    expect(padOk, "padded(): staging stores conflict-free for vt = 1, 2, 4, 8, 16, 32, at most 2-way for every "
                  "other vt up to 30");
    auto unpadded = [](int x) { return x; };
    expect(worstBank(unpadded, 16) == 16 && worstBank(unpadded, 32) == 32,
           "unpadded, the same stores are 16-way at vt = 16 and 32-way at vt = 32");

    const auto arrays = allSortedArrays<float>(6, 3);
    bool mergeOk = true;
    auto check = [&](auto vtConstant) {
        constexpr int VT = decltype(vtConstant)::value;
        for (const auto& a : arrays)
            for (const auto& b : arrays) {
                const int aCount = static_cast<int>(a.size()), count = aCount + static_cast<int>(b.size());
                if (count == 0 || !mergeOk) continue;
                std::vector<float> words(padded(count) + 1, -1000.0f);
                for (int x = 0; x < aCount; ++x) words[padded(x)] = a[x];
                for (int x = aCount; x < count; ++x) words[padded(x)] = b[x - aCount];
                const PaddedView<float> tile{words.data(), 0};
                std::vector<float> keys(count);
                std::vector<size_t> source(count, SIZE_MAX);
                for (int diag = 0; diag < count; diag += VT) {
                    const int i = co_rank(diag, tile, aCount, PaddedView<float>{words.data(), aCount}, count - aCount);
                    float out[VT];
                    int from[VT];
                    serial_merge<VT>(tile, i, aCount, aCount + diag - i, count, out, from);
                    for (int r = 0; r < VT && diag + r < count; ++r) {
                        keys[diag + r] = out[r];
                        source[diag + r] = from[r];  // tile position: a's first, then b's, as in a||b
                    }
                }
                mergeOk = sameAsReference("padded tile, " + std::to_string(VT) + " per thread, a=" + formatKeys(a) +
                                              " b=" + formatKeys(b),
                                          keys, source, referenceOf(a, b), a.size());
            }
    };
    check(std::integral_constant<int, 1>{});
    check(std::integral_constant<int, 2>{});
    check(std::integral_constant<int, 3>{});
    check(std::integral_constant<int, 5>{});
    check(std::integral_constant<int, 8>{});
    check(std::integral_constant<int, 24>{});
    check(std::integral_constant<int, 32>{});
    expect(mergeOk, "serial_merge on a padded tile: per-thread diagonals tile the stable merge");
}

// The first 16-byte boundary inside v (the tile tests place a, b and the
// output at chosen offsets from one).
float* aligned(std::vector<float>& v) {
    const uintptr_t p = reinterpret_cast<uintptr_t>(v.data());
    return v.data() + ((16 - p % 16) % 16) / sizeof(float);
}

// The inputs of the tile tests, for tiles of kNv outputs: every pair of
// lengths around 0, one tile and several tiles, in three shapes (sorted
// runs of 4 values, so ties across the inputs; every a below every b;
// every b below every a), with a and b at every offset from a 16-byte
// boundary. visit(a, b, aShift, bShift) returns false to stop the sweep;
// so does this function's result.
template <int kNv, class Visit>
bool sweepTileInputs(uint64_t seed, Visit&& visit) {
    SplitMix64 rng(seed);
    auto sortedRun = [&](int length, int alphabet) {
        std::vector<float> v(length);
        for (float& x : v) x = static_cast<float>(rng.below(alphabet));
        std::sort(v.begin(), v.end());
        return v;
    };
    const int lengths[] = {0, 1, 3, 4, 5, kNv - 1, kNv, kNv + 1, 2 * kNv + 3, 5 * kNv - 2};
    for (int m : lengths)
        for (int n : lengths)
            for (int shape = 0; shape < 3; ++shape) {
                std::vector<float> a = sortedRun(m, shape == 0 ? 4 : 1000), b = sortedRun(n, shape == 0 ? 4 : 1000);
                if (shape == 1) for (float& x : b) x += 2000.0f;
                if (shape == 2) for (float& x : a) x += 2000.0f;
                for (int aShift = 0; aShift < 4; ++aShift)
                    for (int bShift = 0; bShift < 4; ++bShift)
                        if (!visit(a, b, aShift, bShift)) return false;
            }
    return true;
}

// The production merge's tile path on the host, thread by thread, tile after
// tile of one input, as merge_path_tiles runs it: every thread's
// load_two_spans (then the barrier), each thread's co-rank and serial merge,
// and store_registers into the output. One shared tile serves every tile:
// it starts out as junk and keeps the last tile's leftovers, which nothing
// may read (a block's shared memory holds junk at its start too). a and b
// start at every offset from a 16-byte boundary (the ragged chunks), the
// output at two (the vector stores and their scalar fallback), with
// sentinels on both sides of it.
template <int NT, int VT>
bool pathTilesMatch(const std::vector<float>& a, const std::vector<float>& b, int aShift, int bShift,
                    int outShift) {
    constexpr int kNv = NT * VT;
    const int m = static_cast<int>(a.size()), n = static_cast<int>(b.size()), total = m + n;
    std::vector<float> aStore(m + 8, -500.0f), bStore(n + 8, -500.0f), outStore(total + 16, -7777.0f);
    float* aPtr = aligned(aStore) + aShift;
    float* bPtr = aligned(bStore) + bShift;
    float* outPtr = aligned(outStore) + outShift;
    std::copy(a.begin(), a.end(), aPtr);
    std::copy(b.begin(), b.end(), bPtr);
    std::vector<size_t> source(total, SIZE_MAX);

    std::vector<float> shared(padded(kNv - 1) + 1, 1000.0f);  // junk a stray read would merge
    for (int k0 = 0; k0 < total; k0 += kNv) {
        const int k1 = std::min(k0 + kNv, total), count = k1 - k0;
        const int a0 = co_rank(k0, aPtr, m, bPtr, n), a1 = co_rank(k1, aPtr, m, bPtr, n);
        const int aCount = a1 - a0, b0 = k0 - a0;
        for (int tid = 0; tid < NT; ++tid)
            load_two_spans<NT, kNv>(tid, aPtr + a0, aCount, bPtr + b0, count - aCount, shared.data());
        for (int tid = 0; tid < NT; ++tid) {
            const int diag = std::min(tid * VT, count);
            const PaddedView<float> tile{shared.data(), 0};
            const int i = co_rank(diag, tile, aCount, PaddedView<float>{shared.data(), aCount}, count - aCount);
            float keys[VT];
            int from[VT];
            serial_merge<VT>(tile, i, aCount, aCount + diag - i, count, keys, from);
            store_registers<VT>(keys, diag, count, outPtr + k0);
            for (int r = 0; r < VT && diag + r < count; ++r)
                source[k0 + diag + r] = from[r] < aCount ? a0 + from[r] : m + b0 + (from[r] - aCount);
        }
    }
    const std::string what = "tile path " + std::to_string(NT) + "x" + std::to_string(VT) + ", shifts " +
                             std::to_string(aShift) + "/" + std::to_string(bShift) + "/" + std::to_string(outShift) +
                             ", m=" + std::to_string(m) + " n=" + std::to_string(n);
    for (size_t s = 0; s < outStore.size(); ++s) {
        const float* slot = outStore.data() + s;
        if ((slot < outPtr || slot >= outPtr + total) && *slot != -7777.0f) {
            std::printf("%s: a store landed outside the output\n", what.c_str());
            return false;
        }
    }
    return sameAsReference(what, std::vector<float>(outPtr, outPtr + total), source, referenceOf(a, b),
                           static_cast<size_t>(m));
}

void testPathTiles() {
    bool ok = true;
    size_t runs = 0;
    auto sweep = [&](auto ntConstant, auto vtConstant) {
        constexpr int NT = decltype(ntConstant)::value, VT = decltype(vtConstant)::value;
        ok = ok && sweepTileInputs<NT * VT>(12, [&](const std::vector<float>& a, const std::vector<float>& b,
                                                    int aShift, int bShift) {
                 for (int outShift : {0, 1}) {
                     ++runs;
                     if (!pathTilesMatch<NT, VT>(a, b, aShift, bShift, outShift)) return false;
                 }
                 return true;
             });
    };
    sweep(std::integral_constant<int, 4>{}, std::integral_constant<int, 3>{});
    sweep(std::integral_constant<int, 4>{}, std::integral_constant<int, 4>{});
    sweep(std::integral_constant<int, 8>{}, std::integral_constant<int, 8>{});
    sweep(std::integral_constant<int, 2>{}, std::integral_constant<int, 16>{});
    sweep(std::integral_constant<int, 4>{}, std::integral_constant<int, 32>{});
    expect(ok, "tile path: load_two_spans, serial_merge and store_registers, one shared tile for many tiles");
    std::printf("tile path: nt x vt 4x3, 4x4, 8x8, 2x16, 4x32; %zu runs (inputs x 16-byte offsets of a, b, out)\n",
                runs);
}

// The pipelined merge's pieces on the host, tile after tile through two
// buffers that start as junk and keep older tiles' leftovers, as the
// kernel's do: tile_spans and span_slots place the spans, every thread's
// copy_span_async fills the buffer (16-byte copies land on 16-byte slots),
// then each thread's co-rank and serial merge through SwizzledView, the
// staging of its vt outputs at swizzled slots, and the read-back of the
// staged tile in output order.
template <int NT, int VT>
bool pipelinedTilesMatch(const std::vector<float>& a, const std::vector<float>& b, int aShift, int bShift) {
    using T = PipelinedTuning<NT, VT>;
    const int m = static_cast<int>(a.size()), n = static_cast<int>(b.size()), total = m + n;
    std::vector<float> aStore(m + 8, -500.0f), bStore(n + 8, -500.0f);
    float* aPtr = aligned(aStore) + aShift;
    float* bPtr = aligned(bStore) + bShift;
    std::copy(a.begin(), a.end(), aPtr);
    std::copy(b.begin(), b.end(), bPtr);
    std::vector<float> out(total, -7777.0f);
    std::vector<size_t> source(total, SIZE_MAX);
    std::vector<float> buffers(2 * T::slots + 4, 1000.0f);  // junk a stray read would merge
    float* first = aligned(buffers);                          // the kernel's buffers start 16-byte aligned
    bool slotsAligned = true;
    const size_t tiles = ceil_div(static_cast<size_t>(total), static_cast<size_t>(T::nv));
    for (size_t tile = 0; tile < tiles; ++tile) {
        float* buffer = first + (tile & 1) * T::slots;
        const size_t k0 = tile * T::nv, k1 = std::min(k0 + T::nv, static_cast<size_t>(total));
        const TileSpans t = tile_spans(tile, T::nv, total, co_rank<size_t>(k0, aPtr, m, bPtr, n),
                                       co_rank<size_t>(k1, aPtr, m, bPtr, n));
        const int bCount = t.count - t.aCount;
        const SpanSlots ks = span_slots(aPtr + t.a0, t.aCount, bPtr + t.b0);
        slotsAligned = slotsAligned && ks.aStart < 4 && ks.bStart + bCount <= T::nv + 12 &&
                       ks.aStart % 4 == static_cast<int>(aPtr + t.a0 - align_down_16(aPtr + t.a0)) &&
                       ks.bStart % 4 == static_cast<int>(bPtr + t.b0 - align_down_16(bPtr + t.b0));
        for (int tid = 0; tid < NT; ++tid) {
            copy_span_async<NT>(tid, aPtr + t.a0, t.aCount, buffer, ks.aStart);
            copy_span_async<NT>(tid, bPtr + t.b0, bCount, buffer, ks.bStart);
        }
        std::vector<float> staged(T::slots, 2000.0f);
        for (int tid = 0; tid < NT; ++tid) {
            const int diag = std::min(tid * VT, t.count);
            const int i = co_rank(diag, SwizzledView<float>{buffer, ks.aStart}, t.aCount,
                                  SwizzledView<float>{buffer, ks.bStart}, bCount);
            float keys[VT];
            int from[VT];
            serial_merge<VT>(SwizzledView<float>{buffer, 0}, ks.aStart + i, ks.aStart + t.aCount,
                             ks.bStart + diag - i, ks.bStart + bCount, keys, from);
            for (int r = 0; r < VT; ++r) staged[swizzled(tid * VT + r)] = keys[r];
            for (int r = 0; r < VT && diag + r < t.count; ++r)
                source[t.k0 + diag + r] = from[r] < ks.aStart + t.aCount ? t.a0 + (from[r] - ks.aStart)
                                                                          : m + t.b0 + (from[r] - ks.bStart);
        }
        for (int x = 0; x < t.count; ++x) out[t.k0 + x] = staged[swizzled(x)];
    }
    const std::string what = "pipelined tiles " + std::to_string(NT) + "x" + std::to_string(VT) + ", shifts " +
                             std::to_string(aShift) + "/" + std::to_string(bShift) + ", m=" + std::to_string(m) +
                             " n=" + std::to_string(n);
    if (!slotsAligned) {
        std::printf("%s: a span's slots break the 16-byte alignment or pass the buffer\n", what.c_str());
        return false;
    }
    return sameAsReference(what, out, source, referenceOf(a, b), static_cast<size_t>(m));
}

void testPipelinedPieces() {
    // The swizzle keeps every 4-word chunk whole, aligned and in its own
    // 32-word row, and moves each row's 8 chunks to 8 different places.
    bool swizzleOk = true;
    for (int x = 0; x < 1 << 16; ++x) {
        const int y = swizzled(x);
        swizzleOk = swizzleOk && y / 32 == x / 32 && y % 4 == x % 4 && swizzled(x - x % 4) + x % 4 == y &&
                    swizzled(y) == x;
    }
    // Bank groups (16 bytes) a quarter-warp's 16-byte staging stores hit:
    // lanes 8q..8q+7 write chunk j of their vt outputs.
    auto worstStaging = [](int vt) {
        int worst = 0;
        for (int j = 0; j < vt / 4; ++j)
            for (int q = 0; q < 4; ++q) {
                std::vector<int> groups(8, 0);
                for (int t = 8 * q; t < 8 * q + 8; ++t) ++groups[swizzled(t * vt + 4 * j) / 4 % 8];
                worst = std::max(worst, *std::max_element(groups.begin(), groups.end()));
            }
        return worst;
    };
    expect(swizzleOk, "swizzled(): a permutation within each 32-word row that keeps 4-word chunks whole");
    expect(worstStaging(16) == 1 && worstStaging(32) == 1 && worstStaging(24) == 3,
           "swizzled(): staging stores conflict-free at vt 16 and 32, 3-way at vt 24");
    auto swizzledIndex = [](int x) { return swizzled(x); };
    expect(worstBank(swizzledIndex, 16) == 4 && worstBank(swizzledIndex, 24) == 4 && worstBank(swizzledIndex, 32) == 4,
           "swizzled(): merge reads in step (lane t at t * vt + r) are 4-way at vt 16, 24 and 32");

    bool ok = true;
    size_t runs = 0;
    auto sweep = [&](auto ntConstant, auto vtConstant) {
        constexpr int NT = decltype(ntConstant)::value, VT = decltype(vtConstant)::value;
        ok = ok && sweepTileInputs<NT * VT>(34, [&](const std::vector<float>& a, const std::vector<float>& b,
                                                    int aShift, int bShift) {
                 ++runs;
                 return pipelinedTilesMatch<NT, VT>(a, b, aShift, bShift);
             });
    };
    sweep(std::integral_constant<int, 4>{}, std::integral_constant<int, 4>{});
    sweep(std::integral_constant<int, 8>{}, std::integral_constant<int, 8>{});
    sweep(std::integral_constant<int, 2>{}, std::integral_constant<int, 24>{});
    sweep(std::integral_constant<int, 4>{}, std::integral_constant<int, 32>{});
    expect(ok, "pipelined tiles: span_slots, copy_span_async, the swizzled merge and staging, two buffers");
    std::printf("pipelined tiles: nt x vt 4x4, 8x8, 2x24, 4x32; %zu runs (inputs x 16-byte offsets of a, b)\n", runs);
}

int runSelftest() {
    // The seed's ceil bug: 10 outputs over 4 threads need 3 each; integer
    // division before ceil gives 2 and leaves outputs 8 and 9 to no one.
    expect(ceil_div<size_t>(10, 4) == 3, "ceil_div(10, 4) == 3 (10 / 4 == 2 would fall short)");
    expect(ceil_div<size_t>(SIZE_MAX, 2) == SIZE_MAX / 2 + 1, "ceil_div does not overflow");
    // The seed's worked example (12.4): a = 1, 4, 6, 9 and b = 2, 3, 5, 7.
    {
        const std::vector<float> a = {1, 4, 6, 9}, b = {2, 3, 5, 7};
        expect(co_rank<size_t>(3, a.data(), 4, b.data(), 4) == 1, "seed example: co-rank of 3 is 1");
    }
    // The ties example of Day 36: a = 1, 5, 9 and b = 5, 5, 5; the first
    // three outputs are 1, a's 5, then b's 5s.
    {
        const std::vector<float> a = {1, 5, 9}, b = {5, 5, 5};
        expect(co_rank<size_t>(2, a.data(), 3, b.data(), 3) == 2, "ties: a's 5 comes before b's");
    }
    testLinear();
    testCircular();
    testCircularRounds();
    testPathPieces();
    testPathTiles();
    testPipelinedPieces();
    return selftestVerdict();
}

// ------------------------------------------------------------------ verify

// Every kind with knobs that stress it: odd vt, thread counts that are not
// powers of two, windows down to 5 slots with many rounds.
std::vector<Knobs> verifyKnobs() {
    return {
        {Kind::Basic, kBasicThreads * 1, 1},  {Kind::Basic, kBasicThreads * 3, 3},
        {Kind::Basic, kBasicThreads * 16, 16}, {Kind::Tiled, 1024, 4},
        {Kind::Tiled, 960, 8},                {Kind::Tiled, 4096, 16},
        {Kind::Circular, 5, 1, 9},            {Kind::Circular, 32, 4, 7},
        {Kind::Circular, 1024, 8, 2},         {Kind::Circular, 2048, 16, 3},
    };
}

template <class Key, class Value>
std::vector<Variant<Key, Value>> verifyVariants() {
    std::vector<Variant<Key, Value>> variants;
    for (const Knobs& k : verifyKnobs()) variants.push_back(makeVariant<Key, Value>(k));
    for (const auto& v : pathVariants<Key, Value>()) variants.push_back(v);
    return variants;
}

template <class Key, class Value>
bool verifyCase(const std::vector<Key>& a, const std::vector<Key>& b, const MergeReference<Key>& reference) {
    MergeProblem<Key, Value> p = uploadMerge<Key, Value>(a, b);
    for (const auto& v : verifyVariants<Key, Value>())
        if (!checkVariant(v, reference, p)) return false;
    return true;
}

template <class Key>
int verifyKey(const char* keyName, const std::vector<MergeCase>& cases) {
    int failed = 0;
    for (const MergeCase& c : cases) {
        std::vector<Key> a, b;
        makeMergeInput(c.shape, c.m, c.n, a, b);
        const bool pairs = a.size() + b.size() <= kMaxProvenance;
        const MergeReference<Key> reference(a, b);  // one host merge serves every kernel of this input
        const bool ok = verifyCase<Key, NoValues>(a, b, reference) &&
                        (!pairs || verifyCase<Key, uint32_t>(a, b, reference));
        std::printf("%-5s %-6s %-13s m=%-10zu n=%-10zu %zu kernels, keys%s\n", ok ? "ok" : "FAIL", keyName,
                    mergeShapeName(c.shape), a.size(), b.size(), verifyVariants<Key, NoValues>().size(),
                    pairs ? " and key-value (provenance)" : " only (too long for uint32 provenance)");
        std::fflush(stdout);
        failed += !ok;
    }
    return failed;
}

// The adversarial set for the tiles used here, plus inputs long enough for
// thousands of tiles, skewed ones (m >> n, every a below every b), and odd m
// (b then starts off a 16-byte boundary).
std::vector<MergeCase> verifyCases() {
    std::vector<MergeCase> cases;
    for (size_t tile : {size_t{1024}, size_t{2048}, size_t{4096}})
        for (const MergeCase& c : adversarialMergeCases(tile)) {
            const bool seen = std::any_of(cases.begin(), cases.end(), [&](const MergeCase& d) {
                return d.shape == c.shape && d.m == c.m && d.n == c.n;
            });
            if (!seen) cases.push_back(c);
        }
    using S = MergeShape;
    for (MergeCase c : {MergeCase{S::Random, (1u << 22) + 3, (1u << 21) + 5}, MergeCase{S::ABelowB, (1u << 22) + 1, 3},
                        MergeCase{S::BBelowA, 3, (1u << 22) + 1}, MergeCase{S::ABelowB, (1u << 21) + 1, (1u << 21) - 1},
                        MergeCase{S::ManyTies, (1u << 21) + 2, (1u << 20) + 1}})
        cases.push_back(c);
    return cases;
}

// ---------------------------------------------------------------- the lesson

struct LessonOptions {
    MergeShape shape;
    size_t m, n;
    std::string key;
    std::vector<size_t> basicVts, tiles, vts;
    int rounds;
    std::string only;
    bool pairs, timing;
    TimingPlan plan;
    std::string csvPath;
};

// The rows of the keys table: each kind over the knob sweep, then every
// compiled shape of the production merge.
template <class Key, class Value>
std::vector<Variant<Key, Value>> lessonVariants(const LessonOptions& o) {
    std::vector<Variant<Key, Value>> rows;
    auto wanted = [&](Kind kind) { return o.only == "all" || o.only == std::string(kindName(kind)).substr(6); };
    if (wanted(Kind::Basic))
        for (size_t vt : o.basicVts)
            rows.push_back(makeVariant<Key, Value>({Kind::Basic, kBasicThreads * static_cast<int>(vt), static_cast<int>(vt)}));
    for (Kind kind : {Kind::Tiled, Kind::Circular}) {
        if (!wanted(kind)) continue;
        for (size_t tile : o.tiles)
            for (size_t vt : o.vts)
                if (tile % vt == 0 && tile / vt <= 1024)
                    rows.push_back(makeVariant<Key, Value>(
                        {kind, static_cast<int>(tile), static_cast<int>(vt), kind == Kind::Circular ? o.rounds : 1}));
    }
    if (wanted(Kind::Path))
        for (const auto& v : pathVariants<Key, Value>()) rows.push_back(v);
    return rows;
}

std::string kib(size_t bytes) { return bytes ? fixed(bytes / 1024.0, 1) + " KiB" : "-"; }

struct SectionResult {
    bool ok = true;
    std::vector<Knobs> bestPerKind;  // the fastest row of each kind, in table order
};

// One table: check every row (and the library) on the same input, then time
// the copy reference, the library and every row, in one run.
template <class Key, class Value>
SectionResult runSection(const std::string& title, const std::vector<Key>& a, const std::vector<Key>& b,
                         const std::vector<Variant<Key, Value>>& rows, const LessonOptions& o, CsvFile& csv) {
    SectionResult result;
    MergeProblem<Key, Value> p = uploadMerge<Key, Value>(a, b);
    LibraryMerge<Key, Value> library(p.a(), p.m, p.b(), p.n, p.keysOut.get(), p.va(), p.vb(),
                                     p.valuesOut.get());  // on the same buffers
    const MergeReference<Key> reference(a, b);
    for (const auto& v : rows)
        if (!checkVariant(v, reference, p)) return {false, {}};
    if (!checkLibrary(library, reference, p)) return {false, {}};
    std::printf("\n%s: checks: %zu kernel rows and %s match the host merge exactly (keys%s)\n", title.c_str(),
                rows.size(), library.name(), kPairs<Value> ? ", and every element's source through its value" : "");
    if (!o.timing || p.total() == 0) return result;

    const double copyMs = medianMs([&] {
        CUDA_CHECK(cudaMemcpyAsync(p.keysOut.get(), p.keys.get(), p.total() * sizeof(Key), cudaMemcpyDeviceToDevice));
        if constexpr (kPairs<Value>)
            CUDA_CHECK(cudaMemcpyAsync(p.valuesOut.get(), p.values.get(), p.total() * sizeof(Value),
                                       cudaMemcpyDeviceToDevice));
    }, o.plan);
    const double libraryMs = medianMs(library, o.plan);
    const double bytes = p.bytesMoved();
    const double copyGbs = gbPerSecond(bytes, copyMs);
    const char* versus = HAVE_CUB_DEVICE_MERGE ? "vs CUB" : "vs thrust";

    Table table(title, {{"kernel", 29, true}, {"tile", 5}, {"vt", 3}, {"threads", 7}, {"blocks", 9},
                        {"smem/block", 10}, {"out/block", 9}, {"time (ms)", 9}, {"GB/s", 7}, {"% of copy", 9},
                        {versus, 9}},
                &csv);
    const Variant<Key, Value>* best = nullptr;
    double bestMs = 0;
    std::vector<std::pair<Knobs, double>> bestOfKind;
    for (const auto& v : rows) {
        const double ms = medianMs([&] { v.launch(v.knobs, p); }, o.plan);
        const Knobs& k = v.knobs;
        table.row({v.label(), std::to_string(k.tile), std::to_string(k.vt), std::to_string(k.threads()),
                   std::to_string(k.blocks(p.total())), kib(sharedBytes<Key, Value>(k)),
                   std::to_string(k.outputsPerBlock(p.total())), fixed(ms, 4), fixed(gbPerSecond(bytes, ms), 0),
                   fixed(100.0 * gbPerSecond(bytes, ms) / copyGbs, 1), fixed(libraryMs / ms, 2)});
        if (!best || ms < bestMs) {
            best = &v;
            bestMs = ms;
        }
        auto same = std::find_if(bestOfKind.begin(), bestOfKind.end(),
                                 [&](const std::pair<Knobs, double>& e) { return e.first.kind == k.kind; });
        if (same == bestOfKind.end()) bestOfKind.push_back({k, ms});
        else if (ms < same->second) *same = {k, ms};
    }
    table.row({"cudaMemcpy D2D", "", "", "", "", "", "", fixed(copyMs, 4), fixed(copyGbs, 0), "100.0",
               fixed(libraryMs / copyMs, 2)});
    table.row({library.name(), "", "", "", "", "", "", fixed(libraryMs, 4), fixed(gbPerSecond(bytes, libraryMs), 0),
               fixed(100.0 * gbPerSecond(bytes, libraryMs) / copyGbs, 1), "1.00"});
    for (const auto& e : bestOfKind) result.bestPerKind.push_back(e.first);
    if (best)
        std::printf("best: %s (tile %d, %d per thread), %.4f ms = %.2f x the copy, %.2f x %s\n",
                    best->label().c_str(), best->knobs.tile, best->knobs.vt, bestMs, copyMs / bestMs,
                    libraryMs / bestMs, library.name());
    return result;
}

// The seed's claim, read off the knobs: merge_tiled spends 2 * tile keys of
// shared memory per tile of output, merge_circular spends the same on
// `rounds` tiles.
template <class Key>
void printSharedBudget(const LessonOptions& o) {
    if (o.only != "all" || o.tiles.empty() || o.vts.empty()) return;
    const int tile = static_cast<int>(o.tiles.front());
    const Knobs tiled{Kind::Tiled, tile, 1}, circular{Kind::Circular, tile, 1, o.rounds};
    std::printf("\nshared memory budget at tile %d: merge_tiled %s per block for %zu outputs; merge_circular the "
                "same %s for %zu outputs (%d rounds, %.0fx the output)\n",
                tile, kib(sharedBytes<Key, NoValues>(tiled)).c_str(), tiled.outputsPerBlock(o.m + o.n),
                kib(sharedBytes<Key, NoValues>(circular)).c_str(), circular.outputsPerBlock(o.m + o.n), o.rounds,
                static_cast<double>(circular.outputsPerBlock(o.m + o.n)) / tiled.outputsPerBlock(o.m + o.n));
}

template <class Key>
int runLessonFor(const LessonOptions& o, const char* keyName, CsvFile& csv) {
    std::vector<Key> a, b;
    makeMergeInput(o.shape, o.m, o.n, a, b);
    std::printf("input %s, %s keys; a: %zu, b: %zu, merged: %zu\n", mergeShapeName(o.shape), keyName, a.size(),
                b.size(), a.size() + b.size());
    printSharedBudget<Key>(o);

    const std::string what = std::string(keyName) + " keys, " + std::to_string(a.size()) + " + " +
                             std::to_string(b.size());
    const SectionResult keys = runSection<Key, NoValues>(
        "Merging " + what + " (GB/s counts read m+n keys + write m+n keys)", a, b, lessonVariants<Key, NoValues>(o),
        o, csv);
    if (!keys.ok) return kExitCheckFailed;
    if (!o.pairs) return kExitPass;
    if (a.size() + b.size() > kMaxProvenance) {
        std::printf("\nkey-value table skipped: %zu elements do not fit uint32 positions\n", a.size() + b.size());
        return kExitPass;
    }
    // The key-value table: each simple kind at its fastest knobs above (with
    // --no-timing: its first knobs), and every production shape.
    std::vector<Knobs> simple = keys.bestPerKind;
    if (simple.empty())
        for (const auto& v : lessonVariants<Key, NoValues>(o))
            if (simple.empty() || simple.back().kind != v.knobs.kind) simple.push_back(v.knobs);
    std::vector<Variant<Key, uint32_t>> rows;
    for (const Knobs& k : simple)
        if (k.kind != Kind::Path) rows.push_back(makeVariant<Key, uint32_t>(k));
    if (o.only == "all" || o.only == "path")
        for (const auto& v : pathVariants<Key, uint32_t>()) rows.push_back(v);
    const SectionResult pairs = runSection<Key, uint32_t>(
        "Key-value: " + what + ", uint32 values = source position (GB/s counts keys and values)", a, b, rows, o, csv);
    return pairs.ok ? kExitPass : kExitCheckFailed;
}

LessonOptions readOptions(const Args& args) {
    const bool quick = args.has("--quick");
    LessonOptions o;
    o.shape = mergeShapeFromName(args.choice("--input", "random", mergeShapeWords()));
    o.m = args.count("--m", quick ? 1677722 : size_t{1} << 24);  // 2^24, or about a tenth
    o.n = args.count("--n", quick ? 1677721 : size_t{1} << 24);
    o.key = args.choice("--key", "float", {"float", "uint32"});
    o.basicVts = args.countList("--basic-per-thread", {1, 4, 16}, 1);
    o.tiles = args.countList("--tiles", {1024, 2048, 4096}, 1);
    o.vts = args.countList("--per-thread", {4, 8, 16}, 1);
    o.rounds = static_cast<int>(args.count("--rounds", 2, 1));
    o.only = args.choice("--only", "all", {"all", "basic", "tiled", "circular", "path"});
    o.pairs = !args.has("--no-pairs");
    o.timing = !args.has("--no-timing");
    o.plan.repeats = static_cast<int>(args.count("--repeats", 15, 1));
    o.csvPath = args.text("--csv", "");
    for (size_t vt : o.basicVts)
        if (vt > 4096) args.fail("--basic-per-thread values must be at most 4096");
    for (size_t tile : o.tiles)
        if (tile > kMaxTile)
            args.fail("--tiles values must be at most " + std::to_string(kMaxTile) +
                      " (2 x tile keys in 48 KiB of shared memory)");
    for (size_t vt : o.vts)
        if (vt > 1024) args.fail("--per-thread values must be at most 1024");
    if (o.rounds > 4096) args.fail("--rounds must be at most 4096");
    bool anyShape = false;
    for (size_t tile : o.tiles)
        for (size_t vt : o.vts) anyShape = anyShape || (tile % vt == 0 && tile / vt <= 1024);
    if (!anyShape) args.fail("no --tiles value is a multiple of a --per-thread value with at most 1024 threads");
    if (o.m > (size_t{1} << 40) || o.n > (size_t{1} << 40)) args.fail("--m and --n must be at most 2^40");
    return o;
}

int runLesson(const LessonOptions& o) {
    CsvFile csv;
    csv.open(o.csvPath, "merge_tiled");
    printDeviceReport();
    return o.key == "float" ? runLessonFor<float>(o, "float", csv) : runLessonFor<uint32_t>(o, "uint32", csv);
}

int runVerify(const Args& args, const LessonOptions& o) {
    std::vector<MergeCase> cases = verifyCases();
    if (args.has("--m") || args.has("--n")) cases = {{o.shape, o.m, o.n}};  // one long input, e.g. past 2^31
    const bool both = !args.has("--key");
    int failed = 0;
    if (both || o.key == "float") failed += verifyKey<float>("float", cases);
    if (both || o.key == "uint32") failed += verifyKey<uint32_t>("uint32", cases);
    std::printf("verify: %zu inputs x %d key type(s), %d failed\n", cases.size(), both ? 2 : 1, failed);
    return failed ? kExitCheckFailed : kExitPass;
}

// The command line: one mode per run (see the first comment).
int runCommandLine(int argc, char** argv) {
    const Args args(
        "merge_tiled",
        "Chapter 12: basic, tiled and circular-buffer merges, coarsening, and a merge-path merge near copy speed.",
        {{"--quick", "", "about a tenth of the default sizes (meant for a short Colab cell on a T4)"},
         {"--m", "N", "length of a (default 2^24)"},
         {"--n", "N", "length of b (default 2^24)"},
         {"--key", "TYPE", "float (default) or uint32; --verify checks both unless given"},
         {"--input", "SHAPE", "random (default), evens-odds, all-equal, few-distinct, many-ties, a-below-b, "
                              "b-below-a, seed-ties"},
         {"--tiles", "LIST", "tile sizes for merge_tiled and merge_circular (default 1024,2048,4096)"},
         {"--per-thread", "LIST", "outputs per thread for merge_tiled and merge_circular (default 4,8,16)"},
         {"--basic-per-thread", "LIST", "outputs per thread for merge_basic (default 1,4,16)"},
         {"--rounds", "N", "tiles per merge_circular block (default 2)"},
         {"--only", "KIND", "all (default), basic, tiled, circular or path"},
         {"--no-pairs", "", "skip the key-value table"},
         {"--repeats", "N", "timed runs per row; the median is reported (default 15)"},
         {"--no-timing", "", "run the checks only"},
         {"--csv", "FILE", "also write the tables as CSV"},
         {"--verify", "", "every kernel x key type on the adversarial inputs (or on --m/--n), exact checks"},
         {"--selftest", "", "host-only tests of the building blocks (no GPU needed)"}},
        argc, argv);
    if (args.has("--selftest")) return runSelftest();
    const LessonOptions options = readOptions(args);
    requireCudaDevice("merge_tiled");
    if (args.has("--verify")) return runVerify(args, options);
    return runLesson(options);
}

int main(int argc, char** argv) {
    return lessonMain("merge_tiled", [&] { return runCommandLine(argc, argv); });
}

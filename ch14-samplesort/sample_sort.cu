// Chapter 14.3: sample sort. Splitters cut the key range into buckets; one
// pass (histogram, scan, rank, scatter) sends every key to its bucket, and
// every bucket is then sorted on its own, with no merge. Part A launches the
// course's pipeline on its 8 keys and shows its trap (bad splitters: one huge
// bucket). Part B sorts arrays that fill a GPU, stably: splitters from an
// oversampled random sample, a table of cells that finds a key's bucket,
// equality buckets for duplicates, further levels for big buckets, one-block
// radix sorts for the rest.
//
// Build (one file):  nvcc -std=c++17 -O3 -arch=sm_75 -o sample_sort sample_sort.cu
//                    (your card's -arch, e.g. sm_90 on an H100/H200)
// Run:
//   ./sample_sort                  device report, Part A, checks, the 2^28-key table (uniform uint32), the size sweep
//   ./sample_sort --dist all       a table per distribution, then the summary
//   ./sample_sort --quick          2^22 keys, for a short Colab cell on a T4
//   ./sample_sort --verify         every kernel on the adversarial set, every distribution
//   ./sample_sort --selftest       host tests of the building blocks (no GPU)
//   ./sample_sort --key float --pairs --descending --input zipf --n 2^24
// Reading map: "Part A" (bucketOf, the seed's kernels, the trap); "Part B": "tuning" (Tuning, the
// bucket-sort tiers, the packed fields, the plan), "pieces" (buckets of leaves, splitters, cell table, bucket ranges, peer
// rank, the histogram's layout, sample positions), "block-level helpers" (striped loads, warp ranks, block scans,
// counting a tile), "kernels" (splitters, histogram, scatter, classify, bucket sort, each with its
// steps), "launchers" (configs, balance, CUB's scan of the counts, scratch, the level loop); "the variant
// table"; "selftest"; "the lesson" (verify, the tables); "main". sample_sort_gpus.cu includes this file
// (with SAMPLE_SORT_NO_MAIN) and runs Part B as it is on every GPU's share of the keys.
// Change: --n, --key, --pairs, --descending, --input/--dist, --only, --sizes; Tuning (oversampling, tile).
// Exercise (README.md): -DEXERCISE_UNSTABLE_RANK makes the stable ranks unstable, which provenance shows.

#include "../common/selftest.hpp"
#include "../common/sort_lesson.hpp"  // and with it the options, the inputs, the sort buffers, the variant table

#include <cub/device/device_scan.cuh>

#include <climits>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <tuple>
#include <utility>

// ======================================================= Part A: the seed
// The tie rule: a key equal to a splitter goes to the bucket that splitter opens (bucketOf counts the
// splitters <= key), and keys of one bucket keep their input order (a key's rank counts the earlier keys of
// its bucket), so the scatter is stable. Part B keeps it wherever values travel (keys alone: Part B's intro).

// The seed's bucket search: splitters ascending; bucket b holds [s[b-1], s[b]).
__host__ __device__ inline int bucketOf(uint32_t value, const uint32_t* splitters, int numSplitters) {
    int b = 0;
    for (int s = 0; s < numSplitters; s++) {
        if (value >= splitters[s]) b++;
        else break;
    }
    return b;
}

// One step of the seed's scan (Hillis-Steele): element tid adds the one d back.
__host__ __device__ inline unsigned scanStep(const unsigned* src, int tid, int d) {
    return tid >= d ? src[tid] + src[tid - d] : src[tid];
}

// Element i's rank within its bucket: its bucket's earlier elements (the seed's indicator scan, a thread each).
__host__ __device__ inline unsigned rankInBucket(const int* bucket, size_t i) {
    unsigned rank = 0;
    for (size_t j = 0; j < i; ++j) rank += bucket[j] == bucket[i];
    return rank;
}

// Insertion sort of one bucket: stable, a key moves only past larger ones.
__host__ __device__ inline void insertionSort(uint32_t* keys, size_t count) {
    for (size_t i = 1; i < count; ++i) {
        const uint32_t key = keys[i];
        size_t j = i;
        for (; j > 0 && keys[j - 1] > key; --j) keys[j] = keys[j - 1];
        keys[j] = key;
    }
}

__global__ void seedBucketKernel(const uint32_t* a, size_t n, const uint32_t* splitters, int numSplitters,
    int* bucket) {
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) bucket[i] = bucketOf(a[i], splitters, numSplitters);
}

__global__ void seedHistogramKernel(const int* bucket, size_t n, unsigned* count) {
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&count[bucket[i]], 1u);
}

// One block of exactly `base` threads, so every thread reaches every barrier (the seed's returned early past n).
__global__ void seedScanKernel(const unsigned* count, unsigned* offset, int base) {
    extern __shared__ unsigned scanBuffers[];
    unsigned *src = scanBuffers, *dst = scanBuffers + base;
    const int tid = threadIdx.x;
    src[tid] = count[tid];
    __syncthreads();
    for (int d = 1; d < base; d *= 2) {
        dst[tid] = scanStep(src, tid, d);
        __syncthreads();
        unsigned* swap = src;  // this step's output is the next one's input
        src = dst, dst = swap;
    }
    offset[tid] = src[tid] - count[tid];  // inclusive minus own: exclusive
}

__global__ void seedRankKernel(const int* bucket, size_t n, unsigned* rank) {
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) rank[i] = rankInBucket(bucket, i);
}

__global__ void seedScatterKernel(const uint32_t* a, size_t n, const int* bucket, const unsigned* offset,
    const unsigned* rank, uint32_t* out) {
    const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[offset[bucket[i]] + rank[i]] = a[i];
}

// Every bucket sorted on its own: one thread per bucket ("its own block's job").
__global__ void seedBucketSortKernel(uint32_t* out, const unsigned* offset, const unsigned* count, int base) {
    const int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b < base) insertionSort(out + offset[b], count[b]);
}

// What each launch of the seed's pipeline left, downloaded for printing.
struct SeedRun {
    std::vector<int> bucket;
    std::vector<unsigned> rank, count, offset;
    std::vector<uint32_t> scattered, sorted;
};

// The seed's pipeline, launched. withSort = false stops at the histogram, for the trap's many keys (a rank costs O(n)).
SeedRun seedPipeline(const std::vector<uint32_t>& a, const std::vector<uint32_t>& splitters, bool withSort) {
    const size_t n = a.size();
    const int ns = static_cast<int>(splitters.size()), base = ns + 1;
    DeviceBuffer<uint32_t> dA(n), dSplitters(ns), dOut(n);
    DeviceBuffer<int> dBucket(n);
    DeviceBuffer<unsigned> dCount(base), dOffset(base), dRank(n);
    dA.upload(a.data(), n);
    dSplitters.upload(splitters.data(), ns);
    CUDA_CHECK(cudaMemset(dCount.get(), 0, base * sizeof(unsigned)));
    const unsigned blocks = gridFor(n, 256, "seed pipeline");
    auto get = [](const auto& from, auto& to, size_t count) { to.resize(count), from.download(to.data(), count); };
    SeedRun r;
    seedBucketKernel<<<blocks, 256>>>(dA.get(), n, dSplitters.get(), ns, dBucket.get());
    CUDA_CHECK_LAUNCH("seedBucketKernel");
    seedHistogramKernel<<<blocks, 256>>>(dBucket.get(), n, dCount.get());
    CUDA_CHECK_LAUNCH("seedHistogramKernel");
    get(dBucket, r.bucket, n), get(dCount, r.count, base);
    if (!withSort) return r;
    seedScanKernel<<<1, base, 2 * base * sizeof(unsigned)>>>(dCount.get(), dOffset.get(), base);
    CUDA_CHECK_LAUNCH("seedScanKernel");
    seedRankKernel<<<blocks, 256>>>(dBucket.get(), n, dRank.get());
    CUDA_CHECK_LAUNCH("seedRankKernel");
    seedScatterKernel<<<blocks, 256>>>(dA.get(), n, dBucket.get(), dOffset.get(), dRank.get(), dOut.get());
    CUDA_CHECK_LAUNCH("seedScatterKernel");
    get(dRank, r.rank, n), get(dOffset, r.offset, base), get(dOut, r.scattered, n);
    seedBucketSortKernel<<<1, base>>>(dOut.get(), dOffset.get(), dCount.get(), base);
    CUDA_CHECK_LAUNCH("seedBucketSortKernel");
    get(dOut, r.sorted, n);
    return r;
}

// Largest bucket over the mean: 1 is perfect balance, counts.size() is one bucket holding all.
double imbalance(const std::vector<unsigned>& counts) {
    const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
    return total > 0 ? *std::max_element(counts.begin(), counts.end()) / (total / counts.size()) : 0;
}

// Part A: the seed's example, each printed line compared with the seed's, then the trap; false if either fails.
bool runPartA() {
    std::printf("\nPart A: the seed's pipeline as kernels, on its example\n");
    const std::vector<uint32_t> a = {19, 3, 42, 7, 55, 12, 38, 25}, splitters = {15, 30};
    const SeedRun r = seedPipeline(a, splitters, true);
    bool ok = true;
    auto line = [&ok](const char* label, const std::string& got, const char* want) {
        const bool same = got == want;
        ok = ok && same;
        std::printf("  %-22s %s%s%s\n", label, got.c_str(), same ? "" : "   MISMATCH, the seed has ", same ? "" : want);
    };
    std::printf("  input                  %s, splitters 15 30 (buckets [-inf,15) [15,30) [30,inf))\n", spacedKeys(a).c_str());
    line("bucket of each key", spacedKeys(r.bucket), "1 0 2 0 2 0 2 1");
    line("rank within bucket", spacedKeys(r.rank), "0 0 0 1 1 2 2 1");
    line("count per bucket", spacedKeys(r.count), "3 2 3");
    line("offset per bucket", spacedKeys(r.offset), "0 3 5");
    line("scattered", spacedKeys(r.scattered), "3 7 12 19 25 42 55 38");
    line("each bucket sorted", spacedKeys(r.sorted), "3 7 12 19 25 38 42 55");
    // The trap: the same fixed splitters on data they know nothing about.
    std::vector<uint32_t> skewed(100000);
    SplitMix64 rng(143);
    for (auto& key : skewed) key = 1000 + static_cast<uint32_t>(rng.below(1000));
    const SeedRun fixed = seedPipeline(skewed, splitters, false);
    std::vector<uint32_t> sample(48);  // 16 per bucket: the sample's job is to see the data
    for (auto& s : sample) s = skewed[rng.below(skewed.size())];
    std::sort(sample.begin(), sample.end());
    const std::vector<uint32_t> sampled = {sample[16], sample[32]};
    const SeedRun fromSample = seedPipeline(skewed, sampled, false);
    std::printf("  the trap: 100000 keys in [1000, 2000), 3 buckets\n");
    std::printf("    splitters 15 30 (fixed):           counts %-20s largest/mean %.2f (3.00: one bucket has all)\n",
                spacedKeys(fixed.count).c_str(), imbalance(fixed.count));
    std::printf("    splitters %u %u (sample of 48):  counts %-20s largest/mean %.2f\n", sampled[0], sampled[1],
                spacedKeys(fromSample.count).c_str(), imbalance(fromSample.count));
    ok = ok && fixed.count[2] == skewed.size() && imbalance(fromSample.count) < 1.5;
    std::printf("  Part A: %s\n", ok ? "every line matches the seed" : "MISMATCH");
    return ok;
}

// ===================================================== Part B: production
// Part B sorts 32-bit ordered keys (common's RankMap maps uint32, int32 and float to unsigned words in the same
// order, flipped for --descending, at run time: each kernel compiles once, the histogram and the scatter twice,
// kPlain), mapped back on the last write. It keeps the tie rule's order where values travel; equal keys alone it may
// move in any order, which no output can show.
// --------------------------------------------------------------------- tuning

struct Tuning {
    // The histogram (and sample_sort_gpus's destination kernels): nt threads, vt keys each per chunk.
    static constexpr int nt = 256, vt = 8, nv = nt * vt, warps = nt / 32;
    // A tile, the keys one histogram or scatter block owns: 2^tileBits (chunksPerTile histogram chunks) in a large
    // sort; in a small one 2^tileBitsFor(n, pairs), down to 4096 keys, at most smallTiles(pairs) tiles, so it fills
    // the card. Keys alone take fewer: 4096-key tiles (half a scatter chunk) up to 2^21 keys, 8192 up to 2^22.
    static constexpr int chunksPerTile = 8, tileBits = 14, minTileBits = 12;
    static constexpr size_t tileKeys = size_t{nv} * chunksPerTile;
    static constexpr size_t smallTiles(bool pairs) { return pairs ? 1024 : 512; }
    static int tileBitsFor(size_t n, bool pairs) {
        int bits = minTileBits;
        while (bits < tileBits && (smallTiles(pairs) << bits) < n) ++bits;
        return bits;
    }
    static size_t mostTiles(size_t n) {  // the most tiles a sort of at most n keys cuts its first level into
        return std::min(ceilDiv(n, size_t{1} << minTileBits), std::max(smallTiles(true), ceilDiv(n, tileKeys)));
    }
    static constexpr int maxDepth = 8;                         // depth: k = 2^depth buckets by splitters
    static constexpr int maxSlots = 2 << maxDepth;             // 2k - 1 buckets (equality ones included) + 1 pad
    static constexpr int oversample = 16, maxSample = (1 << maxDepth) * oversample;  // a bucket's, a segment's sample
    __host__ __device__ static constexpr int sampleNt(int depth) { return (oversample << depth) / 4; }  // 4 keys each
    static constexpr int sampledLevels = 2;                    // later levels split the key range evenly
    static constexpr int classifyNt = 256;
};

static_assert(Tuning::maxDepth <= 8, "a key's leaf fits the byte the histogram keeps for the scatter");
static_assert(Tuning::tileKeys == size_t{1} << Tuning::tileBits, "the largest tile is 2^tileBits keys");

// A one-block bucket sort: kNt threads, kVt keys each, sorted in shared memory by digits, least significant first:
// keys alone first take up to kWideDigit bits in one any-order pass (bucketSortKernel says why), then stable passes
// of up to stableBits (9 with values: half the last level's buckets at 2^28 keys span 17 bits, 8 + 9, not 8 + 8 + 1).
constexpr unsigned kWideDigit = 10;
__host__ __device__ constexpr int stableBits(bool pairs) { return pairs ? 9 : 8; }
// Keys alone, a bucket wider than kWideDigit + stableBits bits (three radix passes or more) first tries one counting
// pass over its top bits (countSortBucket), as many as the tier's counters hold, at most kCountBits.
constexpr unsigned kCountBits = 12, kLongestRun = 16;  // a run past kLongestRun keys: the radix passes instead
// The bits x needs: a task's key range, and (minus one) the log2 of a tier's counter count.
__host__ __device__ constexpr unsigned bitWidth(uint32_t x) {
    unsigned bits = 0;
    while (bits < 32 && x >> bits) ++bits;
    return bits;
}
template <int kNt, int kVt, int kKeyBlocks, int kPairBlocks = 0>
struct LocalTier {
    static constexpr int nt = kNt, vt = kVt, nv = kNt * kVt, warps = kNt / 32;
    // counters: a row of 2^stableBits a warp (stable passes), or one row of 2^kWideDigit + 1 (pads' slot
    // last) for the block, held a warp's width longer
    __host__ __device__ static constexpr int countWords(bool pairs) {
        const int rows = warps << stableBits(pairs), wideRow = (1 << kWideDigit) + 32;
        return rows > wideRow ? rows : wideRow;
    }
    // The counting pass's bits: 2^countBits counters and their end fit those words (no more shared memory), and
    // no more counters than keys.
    static constexpr int countSlots = countWords(false) - 1 < nv ? countWords(false) - 1 : nv;
    static constexpr int countBits = bitWidth(countSlots) - 1 < kCountBits ? bitWidth(countSlots) - 1 : kCountBits;
    static constexpr size_t sharedBytes(bool pairs) {
        const size_t counters = countWords(pairs) + 2 * (1 << stableBits(pairs)) + 32;
        return size_t{nv} * (pairs ? 8 : 4) + sizeof(unsigned) * counters;
    }
    // The keys-alone sort's blocks an SM (0: no bound), at most what an SM holds (blocksThatFit): without the
    // register cap, the any-order pass takes the 256- to 512-thread tiers past kKeyBlocks blocks' registers.
    static constexpr int keyBlocks() { return blocksThatFit(kNt, kKeyBlocks, sharedBytes(false)); }
    static constexpr int pairBlocks() { return blocksThatFit(kNt, kPairBlocks, sharedBytes(true)); }
};
// The tiers, smallest first: the one table that classify's choice, the task lists, the launches and largestTier read.
using Tiers = std::tuple<LocalTier<128, 8, 0>,   // up to 1024 keys
                         LocalTier<128, 16, 8, 5>,  // up to 2048: a 2^26 sort's fuller last buckets, no idle warps
                         LocalTier<256, 16, 4, 3>,  // up to 4096
                         LocalTier<320, 16, 3, 2>,  // up to 5120: most of a large sort's last buckets past 4096
                         LocalTier<384, 16, 3, 2>,  // up to 6144 (three blocks an SM beat two, spills and all: NOTES.md)
                         LocalTier<512, 16, 2, 1>,  // up to 8192: a T4 block holds it for keys alone
                         LocalTier<1024, 16, 1>>; // up to 16384: 32 warps an SM (512 x 32 held 16); no T4 block holds it
constexpr int kTierCount = static_cast<int>(std::tuple_size<Tiers>::value);
template <int kT> using TierAt = std::tuple_element_t<kT, Tiers>;
// The tier that sorts a bucket of len keys (at most the largest tier's): the smallest that holds it.
template <int kT = 0> __host__ __device__ constexpr int tierOf(size_t len) {
    if constexpr (kT + 1 == kTierCount) return kT;
    else return len <= TierAt<kT>::nv ? kT : tierOf<kT + 1>(len);
}
// f(std::integral_constant<int, t>) for every tier t, smallest first.
template <class F, int... kT> void forEachTier(F f, std::integer_sequence<int, kT...>) { (f(std::integral_constant<int, kT>{}), ...); }
template <class F> void forEachTier(F f) { forEachTier(f, std::make_integer_sequence<int, kTierCount>{}); }

// A scatter chunk and its shared memory. Keys alone, 8192 keys a chunk (512 threads x 16): at 256 buckets, runs of
// about 32 keys a bucket to write, 128 bytes, a line's worth. With values 4096 (256 x 16), as a stable rank takes a
// row of counters a warp; the values go out after the keys, staged in the same array, so a T4 block (64 KiB) holds it.
template <bool kPairs>
struct ScatterShared {
    static constexpr int nt = kPairs ? 256 : 512, vt = 16, nv = nt * vt, warps = nt / 32;
    static constexpr int rows = kPairs ? warps : 1;
    uint32_t splitters[1 << Tuning::maxDepth];   // the k-1 sorted splitters
    unsigned counts[rows * Tuning::maxSlots];    // a row per warp with values, one for the block without
    unsigned totals[kPairs ? Tuning::maxSlots : 1], starts[Tuning::maxSlots], scratch[32];
    size_t place[Tuning::maxSlots];              // staged key i of slot b (slotOf) goes to global byte address
                                                 // place[b] + 4 i, bit 0 cleared (set: the sort's output, kDoneTag)
    uint32_t stage[nv];                          // the chunk's keys by slot, then its values
    uint16_t stageSlot[nv];                      // each staged key's slot
};
static_assert(sizeof(ScatterShared<true>) <= 64 * 1024 && sizeof(ScatterShared<false>) <= 64 * 1024,
              "the scatter's shared memory fits a T4 block");
// A ranked key in one register: rank << kBucketBits | slot (the scatter: slotOf), rank << kDigitBits | digit (bucket sort).
constexpr int kBucketBits = 16, kDigitBits = 11;
constexpr unsigned kBucketMask = (1u << kBucketBits) - 1, kDigitMask = (1u << kDigitBits) - 1;
static_assert(Tuning::maxSlots <= (1 << kBucketBits) && ScatterShared<true>::nv <= (1 << (32 - kBucketBits)) &&
              ScatterShared<false>::nv <= (1 << (32 - kBucketBits)), "a scatter chunk's rank and bucket fit a word");
static_assert((1u << kWideDigit) + 1 <= (1u << kDigitBits) && (1 << stableBits(true)) <= (1 << kDigitBits) &&
              TierAt<kTierCount - 1>::nv <= (1 << (32 - kDigitBits)), "a bucket sort's rank and digit (pads' too) fit a word");
static_assert(TierAt<kTierCount - 1>::nv <= (1 << (32 - kCountBits)), "a counted key's place in its run and its top bits fit a word");

// A piece of the array one level distributes: its keys lie in [lo, hi].
struct Segment { size_t start, len, firstTile; uint32_t lo, hi; };
// A bucket for one block: sort [start, start + len) (keys - lo have `bits` bits).
struct Task { size_t start; uint32_t len, lo, bits; };
constexpr int kLists = kTierCount;  // task lists: list t holds tier t's buckets
// A later level may run 2^kNarrowDepth buckets a segment, not 2^depth (runsNarrow, in the launchers, says when).
constexpr int kNarrowDepth = 4;
// What classify hands the host: the next level's size, the lists' lengths, the balance (keysEqual: finalBucket's keys;
// keysPastNarrow: the next level's keys in segments of more than cap << kNarrowDepth, too many for its narrow form).
struct Plan {
    // The next level's segments in the low kSegmentBits, its tiles above: one atomic hands out both.
    static constexpr int kSegmentBits = 24;
    static constexpr unsigned long long kSegmentMask = (1ull << kSegmentBits) - 1;
    unsigned long long nextSegsTiles, largest, nonEmpty, keysToBlocks, keysEqual, keysPastNarrow;
    unsigned lists[kLists], overflow;
    unsigned nextSegments() const { return static_cast<unsigned>(nextSegsTiles & kSegmentMask); }
    size_t nextTiles() const { return static_cast<size_t>(nextSegsTiles >> kSegmentBits); }
};
static_assert((uint64_t{1} << 33) / (512 + 1) + 1 <= Plan::kSegmentMask,  // more than an H200 holds; SortScratch::reserve checks n
              "the segments of 2^33 keys at the smallest cap (the 16-way row's 512) fit the plan's count");

// --------------------------------------------------------------------- pieces

// The bucket of a key from its leaf b, the number of splitters <= key (the course's bucketOf): a key equal to
// splitter b-1 goes to equality bucket 2b-1 (no sort needed), the others to 2b (sorted[b-1] < key < sorted[b]).
__host__ __device__ inline unsigned bucketOfLeaf(const uint32_t* sorted, unsigned leaf, uint32_t key) {
    return 2 * leaf - (leaf > 0 && sorted[leaf - 1] == key);
}

// Splitter j (0 <= j < k-1) of a segment: from the sorted sample, evenly spaced; or, past the sampled
// levels, evenly spaced over [lo, hi], which shrinks every bucket's range k-fold a level whatever the data.
__host__ __device__ inline uint32_t sampleSplitter(const uint32_t* sortedSample, int sampleSize, int j, int k) {
    return sortedSample[static_cast<size_t>(j + 1) * sampleSize / k];
}
__host__ __device__ inline uint32_t rangeSplitter(uint32_t lo, uint32_t hi, int j, int k) {
    const uint64_t width = uint64_t{hi} - lo + 1;
    return lo + static_cast<uint32_t>(width * static_cast<uint64_t>(j + 1) / k);
}

// The histogram and the scatter keep their shared counters by slot, not by bucket: the range buckets (even ids) first,
// then the equality buckets (odd ids), so that the buckets most keys fill, the even ones, span all 32 banks, not 16
// (fewer bank conflicts in the ranks: NOTES.md). The pad bucket (2k - 1) keeps its slot. A chunk's keys are staged
// in slot order: each goes out to its bucket's base plus its rank, whatever the staging order.
__host__ __device__ constexpr unsigned slotOf(unsigned bucket, int depth) { return bucket >> 1 | (bucket & 1) << depth; }
__host__ __device__ constexpr unsigned bucketOfSlot(unsigned slot, int depth) { return (slot << 1 | slot >> depth) & ((2u << depth) - 1); }
// slotOf(bucketOfLeaf(...)) with no instruction more than the bucket takes (the histogram is bound by issue): a key
// equal to splitter leaf - 1 goes to equality bucket 2 leaf - 1, slot leaf - 1 + k; the others to range slot leaf.
__host__ __device__ inline unsigned slotOfLeaf(const uint32_t* sorted, int depth, unsigned leaf, uint32_t key) {
    return leaf + (leaf > 0 && sorted[leaf - 1] == key ? (1u << depth) - 1 : 0u);
}

// A key's leaf by cells: the segment's keys [lo, hi] fall into at most 8k cells of 2^cellShift keys (k = 2^depth
// buckets by splitters), and cellFirst[c] counts the splitters below cell c. A key's leaf (the splitters <= key) then
// lies in [cellFirst[c], cellFirst[c + 1]]: one value unless a splitter shares its cell (about one key in eight),
// where a binary search over that cell's few splitters finds it. A byte load and a compare or so a key, where a
// binary search over all k - 1 splitters takes depth steps. splittersKernel lays each segment's k - 1 sorted
// splitters (and a word of padding), then its table (8k + 1 bytes): splitterWords words a segment.
__host__ __device__ constexpr int cellBits(int depth) { return depth + 3; }
__host__ __device__ constexpr int splitterWords(int depth) { return (1 << depth) + ((1 << cellBits(depth)) + 4) / 4; }
static_assert(4 * (splitterWords(Tuning::maxDepth) - (1 << Tuning::maxDepth)) >= (1 << cellBits(Tuning::maxDepth)) + 1 &&
              4 * (splitterWords(kNarrowDepth) - (1 << kNarrowDepth)) >= (1 << cellBits(kNarrowDepth)) + 1,
              "a segment's cell table fits after its splitters");
__host__ __device__ inline int cellShift(uint32_t lo, uint32_t hi, int depth) {
    const int bits = static_cast<int>(bitWidth(hi - lo));
    return bits > cellBits(depth) ? bits - cellBits(depth) : 0;
}
__host__ __device__ inline unsigned cellCount(uint32_t lo, uint32_t hi, int depth) {
    return ((hi - lo) >> cellShift(lo, hi, depth)) + 1;
}
// Cell c's entry (0 <= c <= cellCount: the last, past the range, counts them all): the splitters below its first key.
__host__ __device__ inline uint8_t cellFirstOf(const uint32_t* sorted, uint32_t lo, uint32_t hi, int depth, unsigned c) {
    const uint64_t first = uint64_t{lo} + (uint64_t{c} << cellShift(lo, hi, depth));
    unsigned below = 0;  // a binary search over the 2^depth - 1 sorted splitters
    for (unsigned step = 1u << (depth - 1); step; step >>= 1)
        if (sorted[below + step - 1] < first) below += step;
    return static_cast<uint8_t>(below);
}
__host__ __device__ inline unsigned cellLeaf(const uint32_t* sorted, const uint8_t* cellFirst, uint32_t lo, int shift,
                                             uint32_t key) {
    const unsigned c = (key - lo) >> shift, last = cellFirst[c + 1];
    unsigned leaf = cellFirst[c];
    int n = static_cast<int>(last) - static_cast<int>(leaf);  // the leaf lies in [leaf, leaf + n] (signed: a bad table ends)
    // At or past the cell's last splitter: every splitter of the cell is <= key. This one compare (the only one where
    // the cell holds one splitter) also ends the search for a key equal to a splitter that many share, as equal keys
    // make them (all-equal input: 255 in one cell, every key), which would otherwise halve up to 8 times.
    if (n > 0 && sorted[last - 1] <= key) return last;
    --n;  // the leaf lies in [leaf, last - 1]
    while (n > 0) {
        const int half = (n + 1) >> 1;
        if (sorted[leaf + half - 1] <= key) leaf += half, n -= half;
        else n = half - 1;
    }
    return leaf;
}

// The keys bucket `id` can hold, given its segment's [lo, hi]; asked only where it has keys (if empty, hi may be < lo).
__host__ __device__ inline void bucketRange(unsigned id, const uint32_t* sorted, int k, uint32_t lo, uint32_t hi,
                                            uint32_t& bucketLo, uint32_t& bucketHi) {
    if (id & 1) {
        bucketLo = bucketHi = sorted[(id + 1) / 2 - 1];
        return;
    }
    const int b = static_cast<int>(id / 2);
    bucketLo = b == 0 ? lo : sorted[b - 1] + 1;
    bucketHi = b == k - 1 ? hi : sorted[b] - 1;
}
// A bucket no sort needs: its keys take one value (an equality bucket, or a range of one) or it holds one key.
// The scatter writes its keys to the sort's output, in input order: they are done.
__host__ __device__ inline bool finalBucket(size_t len, uint32_t lo, uint32_t hi) { return len == 1 || (len && lo == hi); }

__host__ __device__ inline size_t smaller(size_t x, size_t y) { return x < y ? x : y; }

// This lane's rank among the lanes of its warp holding the same bucket (peers, from matchPeers): lower lanes first.
__host__ __device__ inline unsigned peerRank(unsigned peers, unsigned lane) {
#ifdef EXERCISE_UNSTABLE_RANK
    const unsigned before = lane == 31 ? 0 : peers >> (lane + 1);  // the exercise: higher lanes first
#else
    const unsigned before = peers & ((1u << lane) - 1u);
#endif
#ifdef __CUDA_ARCH__
    return __popc(before);
#else
    return static_cast<unsigned>(__builtin_popcount(before));
#endif
}

// Where tile `tile`'s count of bucket b lives: per segment, bucket-major (bucket b of every tile, then b + 1), so
// one exclusive scan of all counts gives each (tile, bucket) its place: earlier buckets first, then earlier tiles.
__host__ __device__ inline size_t tilesOf(size_t len, int tileBits) { return (len + (size_t{1} << tileBits) - 1) >> tileBits; }
__host__ __device__ inline size_t countsIndex(const Segment& s, int slots, unsigned b, size_t tile, int tileBits) {
    return s.firstTile * slots + b * tilesOf(s.len, tileBits) + tile;
}
// Bucket id (not the pad slot) of segment s once its counts are scanned: its place in the level's output, its
// length and the keys it can hold (sorted: the segment's k - 1 splitters). The scatter and classify both read it.
struct BucketSpan { size_t start, len; uint32_t lo, hi; };
__host__ __device__ inline BucketSpan bucketSpan(const Segment& s, int slots, unsigned id, const uint64_t* offsets,
                                                 int tileBits, const uint32_t* sorted) {
    const uint64_t segmentBase = offsets[countsIndex(s, slots, 0, 0, tileBits)];
    BucketSpan b{s.start + offsets[countsIndex(s, slots, id, 0, tileBits)] - segmentBase, 0, 0, 0};
    b.len = s.start + offsets[countsIndex(s, slots, id + 1, 0, tileBits)] - segmentBase - b.start;
    if (b.len) bucketRange(id, sorted, slots / 2, s.lo, s.hi, b.lo, b.hi);
    return b;
}
// What becomes of a bucket: nothing where it is empty or the scatter finished it (finalBucket), one block's
// sort in the tier tierOf names where it holds at most cap keys, else a segment of the next level.
constexpr int kNoSort = -2, kNextLevel = -1;
__host__ __device__ inline int bucketFate(const BucketSpan& b, size_t cap) {
    if (!b.len || finalBucket(b.len, b.lo, b.hi)) return kNoSort;
    return b.len <= cap ? tierOf(b.len) : kNextLevel;
}

// The segment a tile belongs to: first tiles ascend with the segment index.
__host__ __device__ inline unsigned segmentOfTile(const Segment* segs, unsigned count, size_t tile) {
    unsigned lo = 0, hi = count;
    while (lo < hi) {
        const unsigned mid = (lo + hi) / 2;
        if (segs[mid].firstTile <= tile) lo = mid + 1;
        else hi = mid;
    }
    return lo - 1;
}

// Sample position i of a segment: a hash, so that periodic or sorted input cannot line up with the sample.
__host__ __device__ inline size_t samplePosition(const Segment& s, int level, int i) {
    const uint64_t z = (s.start * 0x9E3779B97F4A7C15ull) ^ (static_cast<uint64_t>(level) << 56) ^ static_cast<uint64_t>(i);
    return s.start + mix64(z) % s.len;
}

// Where a level's keys come from, as ordered keys: the caller's keys through the sort's RankMap (the first
// level), or the ordered keys the level before wrote (the identity map, which the histogram and the scatter run
// as PlainMap).
struct WordSource {
    const uint32_t* words;
    RankMap map;
    __device__ uint32_t operator()(size_t i) const { return map.rank(words[i]); }
};
// The map of uint32 keys ascending and of every level past the first (their words are ranks already): the words as
// they are. The histogram and the scatter are built apart for it (kPlain, chosen at launch by isPlain), where the
// run-time map costs a few XORs a key.
struct PlainMap {
    __host__ __device__ uint32_t rank(uint32_t word) const { return word; }
};
__host__ __device__ inline bool isPlain(const RankMap& map) { return (map.sign | map.low | map.flip) == 0; }
template <bool kPlain>
__host__ __device__ inline auto mapFor(const RankMap& map) {
    if constexpr (kPlain) return PlainMap{};
    else return map;
}

// ---------------------------------------------------------- block-level helpers

// Item j of this lane in a chunk: warps own consecutive stretches, lanes interleave within them, so loads
// coalesce and the order is the input's.
template <int kVt>
__device__ inline unsigned stripedPosition(int j) {
    return (threadIdx.x >> 5) * 32 * kVt + j * 32 + (threadIdx.x & 31);
}
// Whether this warp's stretch of a chunk of len items starts inside it: a warp past it holds only pads.
template <int kVt>
__device__ inline bool warpBusy(unsigned len) { return (threadIdx.x >> 5) * 32u * kVt < len; }
// Whether this warp's whole stretch lies inside a chunk of len items: none of its positions needs a test.
template <int kVt>
__device__ inline bool warpWhole(size_t len) { return ((threadIdx.x >> 5) + 1) * 32u * kVt <= len; }
// A chunk of len items, striped: x[j] = load(p) at this lane's positions p below len, pad past it. kWhole: a warp
// whose stretch lies inside the chunk (every warp of a full one) loads with no test, at 64-bit positions 32 apart, so
// the compiler folds item j's offset into its load; for the loops that load a chunk at a time (the histogram, the
// scatter), where the tests cost more instructions a key than the loads.
template <bool kWhole = false, int kVt, class T, class Len, class Load>
__device__ __forceinline__ void loadStriped(Len len, T (&x)[kVt], T pad, Load load) {
    if constexpr (kWhole) {
        if (warpWhole<kVt>(len)) {
            const size_t first = stripedPosition<kVt>(0);
            DEVICE_UNROLL
            for (int j = 0; j < kVt; ++j) x[j] = load(first + 32 * j);
            return;
        }
    }
    DEVICE_UNROLL
    for (int j = 0; j < kVt; ++j) {
        const unsigned p = stripedPosition<kVt>(j);
        x[j] = p < len ? load(p) : pad;
    }
}

// The lanes of this warp whose value equals this lane's, for values below 2^kBits: one ballot a bit, kept
// where the bit agrees (cheaper on the chip than __match_any_sync, which compares all 32 bits). The bit moved to the
// sign (one shift) is both the ballot's test and, shifted back arithmetically, a mask of this lane's bit: about one
// instruction a bit fewer than the select (kSelect). The key-value scatter keeps the select, which ran faster there
// (NOTES.md); the sorts rank by warpRankByMasks, and by the mask only where its words do not fit.
template <int kBits, bool kSelect = false>
__device__ inline unsigned matchPeers(unsigned v) {
    unsigned peers = 0xFFFFFFFFu;
    DEVICE_UNROLL
    for (int bit = 0; bit < kBits; ++bit) {
        if constexpr (kSelect) {
            const bool set = (v >> bit) & 1u;
            const unsigned ones = __ballot_sync(0xFFFFFFFFu, set);
            peers &= set ? ones : ~ones;
        } else {
            const int top = static_cast<int>(v << (31 - bit));  // this lane's bit as the sign
            const unsigned ones = __ballot_sync(0xFFFFFFFFu, top < 0), mine = static_cast<unsigned>(top >> 31);
            peers &= ~(ones ^ mine);  // the lanes whose bit equals this lane's
        }
    }
    return peers;
}

// Ranks kVt items a lane in the warp's order (item j of every lane before item j + 1; lower lanes first) among the
// warp's earlier items of the same bucket (below 2^kBits). In place, one register an item (ranks in an array of
// their own spilled: NOTES.md): x[j], item j's bucket, becomes rank << kPack | bucket; counts (its row) ends as counts.
template <int kBits, int kPack, bool kSelect = false, int kVt>
__device__ inline void warpRank(unsigned (&x)[kVt], unsigned* counts) {
    const unsigned lane = threadIdx.x & 31;
    DEVICE_UNROLL
    for (int j = 0; j < kVt; ++j) {
        const unsigned bucket = x[j], peers = matchPeers<kBits, kSelect>(bucket);
        const unsigned base = counts[bucket];  // peers read one word: a broadcast
        x[j] = (base + peerRank(peers, lane)) << kPack | bucket;
        __syncwarp();
        if (lane == static_cast<unsigned>(__ffs(peers) - 1)) counts[bucket] = base + __popc(peers);
        __syncwarp();
    }
}
// warpRank with the peers found by one shared word a bucket, not a ballot a bit: each lane ORs its bit into its
// bucket's word, the warp reads the words back, and the lowest peer clears its word with the new count. The words
// (this warp's, zero on entry and on return) are at masks + maskIndex(bucket). A warp of one bucket (sorted runs,
// equal keys) takes no atomic: 32 on one word would queue. The one-block sorts run faster this way than by ballots;
// the key-value scatter did not, and keeps warpRank (NOTES.md).
template <int kPack, int kVt, class MaskIndex>
__device__ inline void warpRankByMasks(unsigned (&x)[kVt], unsigned* counts, unsigned* masks, MaskIndex maskIndex) {
    const unsigned lane = threadIdx.x & 31;
    const uint32_t maskBase = static_cast<uint32_t>(__cvta_generic_to_shared(masks));
    DEVICE_UNROLL
    for (int j = 0; j < kVt; ++j) {
        const unsigned bucket = x[j], mask = maskBase + 4 * maskIndex(bucket);
        const bool oneBucket = __all_sync(0xFFFFFFFFu, bucket == __shfl_sync(0xFFFFFFFFu, bucket, 0));
        unsigned peers = 0xFFFFFFFFu;
        if (!oneBucket) {
            asm volatile("red.shared.or.b32 [%0], %1;" ::"r"(mask), "r"(1u << lane) : "memory");
            __syncwarp();
            asm volatile("ld.shared.u32 %0, [%1];" : "=r"(peers) : "r"(mask) : "memory");
        }
        const unsigned base = counts[bucket];
        x[j] = (base + peerRank(peers, lane)) << kPack | bucket;
        __syncwarp();
        if (lane == static_cast<unsigned>(__ffs(peers) - 1)) {
            counts[bucket] = base + __popc(peers);
            if (!oneBucket) asm volatile("st.shared.u32 [%0], %1;" ::"r"(mask), "r"(0u) : "memory");
        }
        __syncwarp();
    }
}

// Distinct ranks in any order, for what needs no stable order: the scatter of keys alone and the bucket sort's first
// pass of keys alone (equal keys are equal bits, and every bucket is sorted or all-equal afterwards). One
// shared-memory atomic a key into counts; when the whole warp holds one bucket (sorted, all-equal, runs), one lane
// adds 32 for all: one atomic, not 32 on one word. In place, as warpRank. counts is in shared memory (every caller's
// is): its shared address is taken once, as atomicAdd through a generic pointer rebuilt it for every key.
template <int kPack, int kVt>
__device__ inline void warpRankAnyOrder(unsigned (&x)[kVt], unsigned* counts) {
    const unsigned lane = threadIdx.x & 31;
    const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(counts));
    const auto add = [base](unsigned slot, unsigned v) {
        unsigned old;
        asm volatile("atom.shared.add.u32 %0, [%1], %2;" : "=r"(old) : "r"(base + 4 * slot), "r"(v) : "memory");
        return old;
    };
    DEVICE_UNROLL
    for (int j = 0; j < kVt; ++j) {
        const unsigned bucket = x[j], first = __shfl_sync(0xFFFFFFFFu, bucket, 0);
        if (__all_sync(0xFFFFFFFFu, bucket == first)) {
            const unsigned start = lane == 0 ? add(first, 32u) : 0;
            x[j] = (__shfl_sync(0xFFFFFFFFu, start, 0) + lane) << kPack | bucket;
        } else {
            x[j] = add(bucket, 1u) << kPack | bucket;
        }
    }
}

// Counts alone (the histogram keeps no rank): each of this lane's kVt buckets adds one to its counter, with no
// value back to wait for. A warp whose kVt x 32 buckets are all one (sorted runs, equal keys) adds them in one
// atomic, as 32 x kVt on one word would queue; that test is made once for the kVt items, not for each.
template <int kVt>
__device__ inline void warpCount(const unsigned (&bucket)[kVt], unsigned* counts) {
    const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(counts));
    const auto add = [base](unsigned slot, unsigned v) {  // no value back: red, not atom
        asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(base + 4 * slot), "r"(v) : "memory");
    };
    const unsigned first = __shfl_sync(0xFFFFFFFFu, bucket[0], 0);
    bool one = true;
    DEVICE_UNROLL
    for (int j = 0; j < kVt; ++j) one &= bucket[j] == first;
    if (__all_sync(0xFFFFFFFFu, one)) {
        if ((threadIdx.x & 31) == 0) add(first, 32u * kVt);
        return;
    }
    DEVICE_UNROLL
    for (int j = 0; j < kVt; ++j) add(bucket[j], 1u);
}

// The sum of x over the block's threads below this one; total gets the whole block's.
template <int kNt, class T>
__device__ inline T blockExclusiveSum(T x, T* scratch, T& total) {
    const unsigned lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    T inclusive = x;
    for (int d = 1; d < 32; d <<= 1) {
        const T y = __shfl_up_sync(0xFFFFFFFFu, inclusive, d);
        if (lane >= static_cast<unsigned>(d)) inclusive += y;
    }
    if (lane == 31) scratch[warp] = inclusive;
    __syncthreads();
    T below = 0, sum = 0;
    for (unsigned w = 0; w < kNt / 32; ++w) {
        below += w < warp ? scratch[w] : 0;
        sum += scratch[w];
    }
    total = sum;
    __syncthreads();
    return below + inclusive - x;
}

// starts = the exclusive scan of counts[0, slots) (starts may be counts), by the block, each thread a stretch.
template <int kNt>
__device__ inline void slotsExclusiveScan(const unsigned* counts, unsigned* starts, int slots, unsigned* scratch) {
    const int per = (slots + kNt - 1) / kNt, first = threadIdx.x * per;
    const int last = first + per < slots ? first + per : slots;
    unsigned mine = 0, total;
    for (int b = first; b < last; ++b) mine += counts[b];
    unsigned start = blockExclusiveSum<kNt>(mine, scratch, total);
    for (int b = first; b < last; ++b) {
        const unsigned c = counts[b];
        starts[b] = start;
        start += c;
    }
    __syncthreads();
}

// After warpRank in every warp: each warp's count row becomes the bucket counts of the earlier warps, totals
// the chunk's, and starts their exclusive scan (each thread sums the slots it then scans: no barrier between).
template <int kNt>
__device__ inline void chunkOffsets(unsigned* warpCounts, int slots, unsigned* totals, unsigned* starts, unsigned* scratch) {
    const int per = (slots + kNt - 1) / kNt, first = threadIdx.x * per;
    for (int b = first; b < first + per && b < slots; ++b) {
        unsigned sum = 0;
        for (int w = 0; w < kNt / 32; ++w) {
            const unsigned c = warpCounts[w * slots + b];
            warpCounts[w * slots + b] = sum;
            sum += c;
        }
        totals[b] = sum;
    }
    slotsExclusiveScan<kNt>(totals, starts, slots, scratch);
}

// A tile's keys [begin, end) counted into this warp's row: load(i) reads key i, bucketAt(key, i) finds its
// counter (the histogram's slot, sample_sort_gpus's bucket); lanes past the end count in padSlot. A chunk's loads
// all go out before its first search, so they are in flight together (loading the next chunk during this one's
// searches was slower: NOTES.md).
template <class Load, class BucketAt>
__device__ inline void countTile(size_t begin, size_t end, unsigned* warpRow, unsigned padSlot, Load load,
                                 BucketAt bucketAt) {
    constexpr int vt = Tuning::vt, nv = Tuning::nv;
    using Word = decltype(load(begin));
    for (size_t chunk = begin; chunk < end; chunk += nv) {
        Word key[vt];  // loadStriped gets a size_t length: an unsigned one changes this kernel's registers
        loadStriped<true>(smaller(end - chunk, nv), key, Word{}, [&](size_t p) { return load(chunk + p); });
        const unsigned len = static_cast<unsigned>(smaller(end - chunk, nv));
        unsigned bucket[vt];
        if (len == nv) {  // a full chunk (all but a tile's last): no lane tests a position, no search waits on a branch
            const size_t first = chunk + stripedPosition<vt>(0);  // 64-bit: each key's index one add from it
            DEVICE_UNROLL
            for (int j = 0; j < vt; ++j) bucket[j] = bucketAt(key[j], first + 32 * j);
        } else {
            DEVICE_UNROLL
            for (int j = 0; j < vt; ++j) {
                const unsigned p = stripedPosition<vt>(j);
                bucket[j] = p < len ? bucketAt(key[j], chunk + p) : padSlot;
            }
        }
        warpCount(bucket, warpRow);
    }
}

// -------------------------------------------------------------------- kernels

// The sample, sorted by ch. 12's bitonic network in registers (in shared memory, a barrier each step, it was
// slower: NOTES.md): thread t holds keys 4t .. 4t+3, so a compare-exchange partner j away sits in the same thread
// (j < 4), in lane ^ j/4 of the warp (j < 128: a shuffle), or in another warp (through shared memory between
// barriers). Both partners compute the pair and each keeps its side.
template <int kSize>
__device__ inline void sortSample(uint32_t (&x)[4], uint4* exchange) {
    static_assert(kSize >= 128, "whole warps hold keys");
    DEVICE_UNROLL
    for (unsigned width = 2; width <= kSize; width <<= 1)
        DEVICE_UNROLL
        for (unsigned j = width / 2; j > 0; j >>= 1) {
            uint32_t y[4];
            if (j >= 128) {
                exchange[threadIdx.x] = make_uint4(x[0], x[1], x[2], x[3]);
                __syncthreads();
                const uint4 v = exchange[threadIdx.x ^ (j / 4)];
                y[0] = v.x, y[1] = v.y, y[2] = v.z, y[3] = v.w;
                __syncthreads();
            } else {
                DEVICE_UNROLL
                for (int q = 0; q < 4; ++q) y[q] = j < 4 ? x[q ^ j] : __shfl_xor_sync(0xFFFFFFFFu, x[q], j / 4);
            }
            DEVICE_UNROLL
            for (int q = 0; q < 4; ++q) {  // ascending where bit `width` of the position is 0
                const unsigned i = 4 * threadIdx.x + q;
                const bool keepSmaller = ((i & j) == 0) == ((i & width) == 0);
                x[q] = keepSmaller ? min(x[q], y[q]) : max(x[q], y[q]);
            }
        }
}

// One block per segment, a thread per 4 sample keys: the splitters (sorted sample or key range), then their cell table.
template <int kDepth>
__global__ void __launch_bounds__(Tuning::sampleNt(kDepth)) splittersKernel(WordSource src, const Segment* segs,
    uint32_t* splitters, int level, bool fromSample) {
    constexpr int k = 1 << kDepth, size = k * Tuning::oversample, nt = Tuning::sampleNt(kDepth);
    __shared__ uint4 sample[nt];
    __shared__ uint32_t sorted[k];
    const Segment s = segs[blockIdx.x];
    if (fromSample) {
        uint32_t x[4];
        DEVICE_UNROLL
        for (int q = 0; q < 4; ++q) x[q] = src(samplePosition(s, level, 4 * threadIdx.x + q));
        sortSample<size>(x, sample);
        sample[threadIdx.x] = make_uint4(x[0], x[1], x[2], x[3]);
        __syncthreads();
    }
    for (int j = threadIdx.x; j < k - 1; j += nt)
        sorted[j] = fromSample ? sampleSplitter(reinterpret_cast<const uint32_t*>(sample), size, j, k)
                               : rangeSplitter(s.lo, s.hi, j, k);
    __syncthreads();
    uint32_t* out = splitters + static_cast<size_t>(blockIdx.x) * splitterWords(kDepth);
    for (int j = threadIdx.x; j < k - 1; j += nt) out[j] = sorted[j];
    uint8_t* cellFirst = reinterpret_cast<uint8_t*>(out + k);
    for (unsigned c = threadIdx.x; c <= cellCount(s.lo, s.hi, kDepth); c += nt) cellFirst[c] = cellFirstOf(sorted, s.lo, s.hi, kDepth, c);
}

// Loads a segment's splitters (its first kWords words: the histogram's take the cell table too; kNt threads) and finds
// the tile's stretch of keys.
template <int kDepth, int kNt, int kWords = (1 << kDepth)>
__device__ inline void openTile(const Segment* segs, unsigned numSegs, int tileBits, const uint32_t* splitters,
                                uint32_t* shared, Segment& s, size_t& tile, size_t& begin, size_t& end) {
    const unsigned seg = segmentOfTile(segs, numSegs, blockIdx.x);
    s = segs[seg];
    tile = blockIdx.x - s.firstTile;
    begin = s.start + (tile << tileBits);
    end = smaller(begin + (size_t{1} << tileBits), s.start + s.len);
    for (int i = threadIdx.x; i < kWords; i += kNt) shared[i] = splitters[static_cast<size_t>(seg) * splitterWords(kDepth) + i];
}

// One block per tile: its count of keys per bucket, into the segment's rows (kPlain: src's map is plain).
template <int kDepth, bool kPlain>
__global__ void __launch_bounds__(Tuning::nt) histogramKernel(WordSource src, const Segment* segs, unsigned numSegs,
    int tileBits, const uint32_t* splitters, unsigned* counts, uint8_t* leaves) {
    constexpr int slots = 2 << kDepth, k = 1 << kDepth;
    __shared__ uint32_t sorted[splitterWords(kDepth)];  // the splitters, then the cell table
    __shared__ unsigned warpCounts[Tuning::warps * slots];
    Segment s;
    size_t tile, begin, end;
    openTile<kDepth, Tuning::nt, splitterWords(kDepth)>(segs, numSegs, tileBits, splitters, sorted, s, tile, begin, end);
    for (int i = threadIdx.x; i < Tuning::warps * slots; i += Tuning::nt) warpCounts[i] = 0;
    const uint8_t* cellFirst = reinterpret_cast<const uint8_t*>(sorted + k);
    const int shift = cellShift(s.lo, s.hi, kDepth);
    __syncthreads();
    const auto map = mapFor<kPlain>(src.map);
    countTile(begin, end, warpCounts + (threadIdx.x >> 5) * slots, slots - 1,
              [&](size_t i) { return src.words[i]; },
              [&](uint32_t word, size_t i) {
                  const uint32_t key = map.rank(word);
                  const unsigned leaf = cellLeaf(sorted, cellFirst, s.lo, shift, key);
                  leaves[i] = static_cast<uint8_t>(leaf);  // the scatter searches nothing
                  return slotOfLeaf(sorted, kDepth, leaf, key);
              });
    __syncthreads();  // the pad slot's count stays 0: its offset then ends the segment's last bucket (bucketSpan)
    for (int b = threadIdx.x; b < slots; b += Tuning::nt) {
        unsigned sum = 0;
        for (int w = 0; w < Tuning::warps; ++w) sum += warpCounts[w * slots + slotOf(b, kDepth)];
        counts[countsIndex(s, slots, b, tile, tileBits)] = b == slots - 1 ? 0 : sum;
    }
}

// The key-value scatter's memory hints (kHint): its reads pass through L2 once, so they go first (evict first); its
// writes land as runs of a bucket that the next chunk's runs complete, so they stay (evict last). The key-value
// scatters gain from the two together, little from either alone; keys alone lost by them (NOTES.md, runs X and Z).
template <bool kHint, class T>
__device__ __forceinline__ T loadOnce(const T* p) {
    if constexpr (kHint) return __ldcs(p);
    else return *p;
}
// The scatter writes through global addresses: as st.global, which the compiler lets the shared loads around it pass
// (a generic store might be to shared memory). No "memory" clobber: a level's outputs never alias its inputs, and
// nothing in the kernel reads what it stores.
__device__ inline size_t globalAddress(const void* p) { return __cvta_generic_to_global(p); }
template <bool kHint>
__device__ __forceinline__ void storeGlobal(size_t at, uint32_t v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800  // the cache-hinted store is sm_80's; a T4 stores plainly
    if constexpr (kHint) {
        uint64_t policy;
        asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
        asm volatile("st.global.L2::cache_hint.b32 [%0], %1, %2;" ::"l"(at), "r"(v), "l"(policy));
        return;
    }
#endif
    asm volatile("st.global.b32 [%0], %1;" ::"l"(at), "r"(v));
}
// A slot's place (ScatterShared::place) tags a finished bucket's (finalBucket: its keys go to the sort's output) in
// bit 0, which a word's address leaves free: one shared word a key says both where and which output.
constexpr size_t kDoneTag = 1;

// The scatter's steps, for one chunk of a tile (ScatterShared: its shared memory).
// Keys alone: the chunk at `chunk` (none at or past end), its words and leaves, on their way into L2 while the block
// works on another, a 128-byte line a thread an array; no register waits for it (a chunk loaded into registers ahead of
// its turn left too few for the chunk in hand). It pays for keys alone, not with values (NOTES.md).
__device__ __forceinline__ void prefetchChunk(const WordSource& src, const uint8_t* leaves, size_t chunk, size_t end) {
    constexpr int nt = ScatterShared<false>::nt;
    if (chunk >= end) return;
    const size_t len = smaller(end - chunk, ScatterShared<false>::nv), bytes[2] = {4 * len, len};
    const size_t first[2] = {globalAddress(src.words + chunk), globalAddress(leaves + chunk)};
    for (int a = 0; a < 2; ++a)
        for (size_t line = (first[a] & ~size_t{127}) + 128 * threadIdx.x; line < first[a] + bytes[a]; line += 128 * nt)
            asm volatile("prefetch.global.L2 [%0];" ::"l"(line));
}
// A chunk's len words and each key's leaf from the histogram, striped (the values load later: scatterKernel).
template <bool kPairs, int kVt>
__device__ __forceinline__ void loadChunk(const WordSource& src, const uint8_t* leaves, size_t chunk, size_t len,
                                          uint32_t (&key)[kVt], unsigned (&leaf)[kVt]) {
    loadStriped<true>(len, key, 0u, [&](size_t p) { return loadOnce<kPairs>(src.words + chunk + p); });
    loadStriped<true>(len, leaf, 0u, [&](size_t p) { return unsigned{loadOnce<kPairs>(leaves + chunk + p)}; });
}

// Each word to its ordered key (in place) and its bucket's slot (slotOf), from its leaf; pads go to the last slot.
template <int kDepth, class Map, int kVt>
__device__ __forceinline__ void bucketChunk(Map map, const uint32_t* sorted, unsigned chunkLen, uint32_t (&key)[kVt],
                                            const unsigned (&leaf)[kVt], unsigned (&bucket)[kVt]) {
    DEVICE_UNROLL
    for (int j = 0; j < kVt; ++j) {
        const unsigned p = stripedPosition<kVt>(j);
        key[j] = map.rank(key[j]);
        if (p >= chunkLen) bucket[j] = (2 << kDepth) - 1;
        else bucket[j] = slotOfLeaf(sorted, kDepth, leaf[j], key[j]);
    }
}

// The chunk's bucket starts; then this thread's slots get their place (staged position 0's address) and next base.
template <bool kPairs, int kSlots, int kPer>
__device__ __forceinline__ void chunkPlaces(ScatterShared<kPairs>& sh, int firstSlot, size_t (&base)[kPer]) {
    constexpr int nt = ScatterShared<kPairs>::nt;
    if constexpr (kPairs) chunkOffsets<nt>(sh.counts, kSlots, sh.totals, sh.starts, sh.scratch);
    else slotsExclusiveScan<nt>(sh.counts, sh.starts, kSlots, sh.scratch);
    DEVICE_UNROLL
    for (int q = 0; q < kPer; ++q) {
        const int b = firstSlot + q;
        if (b >= kSlots) continue;
        sh.place[b] = base[q] - size_t{4} * sh.starts[b];  // the tag stays: a multiple of 4 apart
        base[q] += size_t{4} * (kPairs ? sh.totals[b] : sh.counts[b]);
        if (!kPairs) sh.counts[b] = 0;  // ready for the next chunk: no one reads it before
    }
}

// Where the tile's keys of each of this thread's kPer slots go first, as indices into the level's output.
template <int kDepth, int kPer>
__device__ __forceinline__ void tileStarts(const Segment& s, size_t tile, int tileBits, const uint64_t* offsets, int firstSlot,
                                           size_t (&base)[kPer]) {
    constexpr int slots = 2 << kDepth;
    const uint64_t segmentBase = offsets[countsIndex(s, slots, 0, 0, tileBits)];
    DEVICE_UNROLL
    for (int q = 0; q < kPer; ++q) {
        const unsigned b = bucketOfSlot(firstSlot + q, kDepth);
        base[q] = firstSlot + q < slots ? s.start + offsets[countsIndex(s, slots, b, tile, tileBits)] - segmentBase : 0;
    }
}
// Those starts as addresses (kept in registers): in out, or in done, tagged, where the scatter finishes the bucket
// (finalBucket, from the segment's splitters in sh.splitters).
template <int kDepth, int kPer, bool kPairs>
__device__ __forceinline__ void tagPlaces(const ScatterShared<kPairs>& sh, const Segment& s, int tileBits, const uint64_t* offsets,
                                          int firstSlot, const uint32_t* out, const uint32_t* done, size_t (&base)[kPer]) {
    constexpr int slots = 2 << kDepth;
    DEVICE_UNROLL
    for (int q = 0; q < kPer; ++q) {
        const int slot = firstSlot + q;
        const unsigned b = bucketOfSlot(slot, kDepth);
        const BucketSpan span = slot < slots && b < slots - 1 ? bucketSpan(s, slots, b, offsets, tileBits, sh.splitters) : BucketSpan{};
        const bool finished = slot < slots && finalBucket(span.len, span.lo, span.hi);
        base[q] = finished ? globalAddress(done + base[q]) | kDoneTag : globalAddress(out + base[q]);
    }
}

// A busy warp's items staged by slot in shared memory (the keys with their slots).
template <bool kPairs, int kVt>
__device__ __forceinline__ void stageChunk(ScatterShared<kPairs>& sh, const unsigned* mine, const unsigned (&rank)[kVt],
                                           const uint32_t (&item)[kVt], bool areKeys) {
    DEVICE_UNROLL
    for (int j = 0; j < kVt; ++j) {
        const unsigned b = rank[j] & kBucketMask;
        const unsigned p = sh.starts[b] + (kPairs ? mine[b] : 0) + (rank[j] >> kBucketBits);
        sh.stage[p] = item[j];
        if (areKeys) sh.stageSlot[p] = static_cast<uint16_t>(b);
    }
}
// The staged items written out: a bucket's land consecutively at its slot's place, the level's output or, tagged,
// the sort's (keys back to the caller's words by map). Values lie toOut (toDone) bytes from their keys' place.
template <bool kPairs, bool kKeys, int kVt>
__device__ __forceinline__ void writeChunk(const ScatterShared<kPairs>& sh, unsigned chunkLen, RankMap map, size_t toOut = 0,
                                           size_t toDone = 0) {
    DEVICE_UNROLL
    for (int j = 0; j < kVt; ++j) {
        const unsigned i = j * ScatterShared<kPairs>::nt + threadIdx.x;
        if (i >= chunkLen) break;
        const size_t place = sh.place[sh.stageSlot[i]] + size_t{4} * i;
        const bool done = place & kDoneTag;
        const uint32_t item = kKeys && done ? map.word(sh.stage[i]) : sh.stage[i];
        const size_t at = (place & ~kDoneTag) + (kKeys ? 0 : done ? toDone : toOut);
        if (kPairs && !done) storeGlobal<true>(at, item);
        else storeGlobal<false>(at, item);
    }
}

// One block per tile: every key (and value) to its bucket's place, chunk by chunk: load, bucket, rank (input
// order within a bucket when values travel, warpRank; any order for keys alone, warpRankAnyOrder says why), the
// chunk's places, then stage and write. A warp whose stretch starts past the chunk (a segment's last chunk, or a
// 4096-key tile in a keys-alone chunk) holds only pads, which land past the chunk and are never written: it ranks and
// stages nothing, and its count row stays 0 (idle warps are the last ones, so no busy warp's place moves). The bound
// keeps two blocks an SM: unbounded, keys alone get one block an SM; bounded to three, values spill. At 16 keys a
// thread no registers are left to load the next chunk during this one (NOTES.md); keys alone prefetch it into
// L2 instead (prefetchChunk). kPlain: src's map is plain (PlainMap).
template <int kDepth, bool kPairs, bool kPlain>
__global__ void __launch_bounds__(ScatterShared<kPairs>::nt, 2) scatterKernel(WordSource src,
    const uint32_t* valuesIn, const uint8_t* leaves, const Segment* segs, unsigned numSegs, int tileBits,
    const uint32_t* splitters, const uint64_t* offsets, uint32_t* keysOut, uint32_t* valuesOut, uint32_t* keysDone,
    uint32_t* valuesDone, RankMap map) {
    using Shared = ScatterShared<kPairs>;
    constexpr int slots = 2 << kDepth, vt = Shared::vt, nv = Shared::nv, per = ceilDiv(slots, Shared::nt);
    extern __shared__ unsigned char scatterShared[];
    Shared& sh = *reinterpret_cast<Shared*>(scatterShared);
    Segment s;
    size_t tile, begin, end;
    openTile<kDepth, Shared::nt>(segs, numSegs, tileBits, splitters, sh.splitters, s, tile, begin, end);
    if constexpr (!kPairs) prefetchChunk(src, leaves, begin, end);  // on its way while the tile's places are read
    for (int i = threadIdx.x; i < Shared::rows * slots; i += Shared::nt) sh.counts[i] = 0;
    const int firstSlot = threadIdx.x * per;  // this thread's slots, the same ones in every chunk's scan
    size_t base[per];
    tileStarts<kDepth>(s, tile, tileBits, offsets, firstSlot, base);
    unsigned* mine = sh.counts + (kPairs ? (threadIdx.x >> 5) * slots : 0);
    __syncthreads();  // the splitters and the cleared counters
    tagPlaces<kDepth, per>(sh, s, tileBits, offsets, firstSlot, keysOut, keysDone, base);
    for (size_t chunk = begin; chunk < end; chunk += nv) {
        const unsigned chunkLen = static_cast<unsigned>(smaller(end - chunk, nv));
        const bool busy = warpBusy<vt>(chunkLen);
        if constexpr (!kPairs) prefetchChunk(src, leaves, chunk + nv, end);  // the next chunk's, a chunk ahead
        uint32_t key[vt], value[vt];
        unsigned leaf[vt], rank[vt];  // rank: each key's slot, then rank << kBucketBits | slot
        if (kPairs) {  // this warp's row: its last reader was this warp's staging
            for (int i = threadIdx.x & 31; i < slots; i += 32) mine[i] = 0;
            __syncwarp();
        }
        if (busy) {  // loadChunk's length a size_t, as countTile's (an unsigned one changes the registers)
            loadChunk<kPairs>(src, leaves, chunk, smaller(end - chunk, nv), key, leaf);
            bucketChunk<kDepth>(mapFor<kPlain>(src.map), sh.splitters, chunkLen, key, leaf, rank);
            if constexpr (kPairs) warpRank<kDepth + 1, kBucketBits, /*kSelect=*/true>(rank, mine);
            else warpRankAnyOrder<kBucketBits>(rank, mine);
        }
        __syncthreads();
        chunkPlaces<kPairs, slots>(sh, firstSlot, base);
        __syncthreads();
        if (busy) stageChunk(sh, mine, rank, key, true);
        // The values load only now, while the keys go out: loaded with the keys, the scatters ran slower (NOTES.md).
        if (kPairs && busy) loadStriped<true>(chunkLen, value, 0u, [&](size_t p) { return loadOnce<true>(valuesIn + chunk + p); });
        __syncthreads();
        writeChunk<kPairs, true, vt>(sh, chunkLen, map);
        if constexpr (kPairs) {
            __syncthreads();  // every key read before the values take its place
            if (busy) stageChunk(sh, mine, rank, value, false);
            __syncthreads();
            writeChunk<kPairs, false, vt>(sh, chunkLen, map, globalAddress(valuesOut) - globalAddress(keysOut),
                                          globalAddress(valuesDone) - globalAddress(keysDone));
        }
    }
}

// The classify kernel's steps, one (segment, bucket) a thread: a bucket of len keys at start, keys in [lo, hi].
// The plan's balance figures: summed over the warp first (every lane gets here), one atomic a warp, not one a bucket.
__device__ __forceinline__ void addToPlan(size_t len, bool finished, bool small, bool pastNarrow, unsigned lane, Plan* plan) {
    unsigned long long nonEmpty = len != 0, largest = len, keysEqual = finished ? len : 0, keysToBlocks = small ? len : 0,
                       keysPastNarrow = pastNarrow ? len : 0;
    for (int d = 16; d > 0; d >>= 1) {
        nonEmpty += __shfl_xor_sync(0xFFFFFFFFu, nonEmpty, d);
        const unsigned long long other = __shfl_xor_sync(0xFFFFFFFFu, largest, d);
        largest = other > largest ? other : largest;
        keysEqual += __shfl_xor_sync(0xFFFFFFFFu, keysEqual, d);
        keysToBlocks += __shfl_xor_sync(0xFFFFFFFFu, keysToBlocks, d);
        keysPastNarrow += __shfl_xor_sync(0xFFFFFFFFu, keysPastNarrow, d);
    }
    if (lane == 0 && nonEmpty) {
        atomicAdd(&plan->nonEmpty, nonEmpty);
        atomicMax(&plan->largest, largest);
        if (keysEqual) atomicAdd(&plan->keysEqual, keysEqual);
        if (keysToBlocks) atomicAdd(&plan->keysToBlocks, keysToBlocks);
        if (keysPastNarrow) atomicAdd(&plan->keysPastNarrow, keysPastNarrow);
    }
}

// A small bucket to its tier's task list: one atomic a warp hands out consecutive places.
__device__ __forceinline__ void listTask(size_t start, size_t len, uint32_t lo, uint32_t hi, int tier, unsigned lane,
                                        Plan* plan, Task* lists, const size_t* listBase, const size_t* listCap) {
    for (int t = 0; t < kTierCount; ++t) {
        const unsigned mask = __ballot_sync(0xFFFFFFFFu, tier == t);
        if (!mask) continue;
        const unsigned leader = __ffs(mask) - 1;
        const unsigned first = lane == leader ? atomicAdd(&plan->lists[t], static_cast<unsigned>(__popc(mask))) : 0;
        const unsigned at = __shfl_sync(0xFFFFFFFFu, first, leader) + __popc(mask & ((1u << lane) - 1u));
        if (tier != t) continue;
        if (at < listCap[t]) lists[listBase[t] + at] = {start, static_cast<uint32_t>(len), lo, bitWidth(hi - lo)};
        else plan->overflow = 1;
    }
}

// One thread per (segment, bucket): the bucket's place from the scanned rows, then its fate (bucketFate).
template <int kDepth>
__global__ void __launch_bounds__(Tuning::classifyNt) classifyKernel(const Segment* segs, unsigned numSegs, int tileBits,
    const uint32_t* splitters, const uint64_t* offsets, size_t cap, Plan* plan, Segment* next, Task* lists, const size_t* listBase,
    const size_t* listCap) {
    constexpr int slots = 2 << kDepth;
    const size_t x = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x, seg = x / slots;
    const unsigned id = static_cast<unsigned>(x % slots), lane = threadIdx.x & 31;
    BucketSpan b{};  // no bucket (past the last segment, or the pad slot): len 0
    if (seg < numSegs && id != slots - 1) b = bucketSpan(segs[seg], slots, id, offsets, tileBits, splitters + seg * splitterWords(kDepth));
    const int fate = bucketFate(b, cap);
    addToPlan(b.len, b.len && fate == kNoSort, fate >= 0, fate == kNextLevel && b.len > (cap << kNarrowDepth), lane, plan);
    listTask(b.start, b.len, b.lo, b.hi, fate, lane, plan, lists, listBase, listCap);
    if (fate == kNextLevel) {
        const unsigned long long tiles = tilesOf(b.len, tileBits);
        const unsigned long long packed = atomicAdd(&plan->nextSegsTiles, (tiles << Plan::kSegmentBits) | 1ull);
        next[packed & Plan::kSegmentMask] = {b.start, b.len, static_cast<size_t>(packed >> Plan::kSegmentBits), b.lo, b.hi};
    }
}

// The bucket sort's steps. Its shared memory: the keys, the values, then the counters (LocalTier says how many).
struct LocalShared { uint32_t *keys, *values; unsigned *warpCounts, *totals, *starts, *scratch; };
template <class Tier, bool kPairs>
__device__ __forceinline__ LocalShared localShared(unsigned char* bytes) {
    constexpr int passSlots = 1 << stableBits(kPairs);
    uint32_t* keys = reinterpret_cast<uint32_t*>(bytes);
    unsigned* warpCounts = keys + Tier::nv * (kPairs ? 2 : 1);
    unsigned* totals = warpCounts + Tier::countWords(kPairs);
    return {keys, keys + Tier::nv, warpCounts, totals, totals + passSlots, totals + 2 * passSlots};
}

// Each key's digit, (key >> shift) & mask (pads: padDigit, where it is not 0), for warpRank or warpRankAnyOrder.
template <int kVt>
__device__ __forceinline__ void digitsOf(const uint32_t (&key)[kVt], unsigned len, unsigned shift, unsigned mask,
                                         unsigned padDigit, unsigned (&digit)[kVt]) {
    DEVICE_UNROLL
    for (int j = 0; j < kVt; ++j)
        digit[j] = padDigit && stripedPosition<kVt>(j) >= len ? padDigit : (key[j] >> shift) & mask;
}

// Every key (and value) of a busy warp to its place, starts[digit] + before[digit] + rank; then every lane reads
// its striped positions below len back (a busy warp's pads land past the bucket: each lane keeps its pad).
template <int kVt, bool kPairs>
__device__ __forceinline__ void moveByRank(bool busy, unsigned len, const unsigned (&rank)[kVt], const unsigned* starts,
                                           const unsigned* before, const LocalShared& sh, uint32_t (&key)[kVt],
                                           uint32_t (&value)[kVt]) {
    if (busy) {
        DEVICE_UNROLL
        for (int j = 0; j < kVt; ++j) {
            const unsigned d = rank[j] & kDigitMask, p = starts[d] + (before ? before[d] : 0) + (rank[j] >> kDigitBits);
            sh.keys[p] = key[j];
            if (kPairs) sh.values[p] = value[j];
        }
    }
    __syncthreads();
    DEVICE_UNROLL
    for (int j = 0; j < kVt; ++j) {
        const unsigned p = stripedPosition<kVt>(j);
        if (p >= len) continue;
        key[j] = sh.keys[p];
        if (kPairs) value[j] = sh.values[p];
    }
    __syncthreads();
}

// Where a key goes within its run [begin, end) of staged keys (equal top bits): after the run's smaller keys and
// its equal keys staged before it (me: the key's own staged place).
__host__ __device__ inline unsigned placeInRun(const uint32_t* staged, unsigned begin, unsigned end, uint32_t key, unsigned me) {
    unsigned before = 0;
    for (unsigned u = begin; u < end; ++u) before += staged[u] < key || (staged[u] == key && u < me);
    return begin + before;
}

// Keys alone: the bucket sorted by one counting pass over its top bits (up to countBits): each key's shared atomic
// gives its place in its run of equal top bits (any order: equal keys are equal bits), the scan the runs' starts;
// staged by run, each key counts the keys of its run that go before it (placeInRun) and moves once; then the bucket
// is written out. False, keys untouched, where a run holds more than kLongestRun keys: the radix passes take it.
template <class Tier>
__device__ __forceinline__ bool countSortBucket(const Task& t, const uint32_t* keysIn, const LocalShared& sh, uint32_t* keysOut,
                                                RankMap map) {
    constexpr int vt = Tier::vt, nt = Tier::nt;
    constexpr unsigned topMask = (1u << kCountBits) - 1;
    const unsigned shift = t.bits - Tier::countBits, slots = 1u << Tier::countBits;
    const bool busy = warpBusy<vt>(t.len);
    uint32_t key[vt];  // its own keys, not the radix passes': their registers stay as they were
    unsigned at[vt];   // place in its run << kCountBits | top bits, then its place in the bucket
    loadStriped(t.len, key, 0u, [&](unsigned p) { return keysIn[t.start + p] - t.lo; });
    unsigned* counts = sh.warpCounts;  // counts[slots]: 0, then the scan's end
    for (unsigned i = threadIdx.x; i <= slots; i += nt) counts[i] = 0;
    __syncthreads();
    if (busy) {  // implied by each key's test, but it lets a warp past the bucket skip the loop (the form measured)
        DEVICE_UNROLL
        for (int j = 0; j < vt; ++j)
            if (stripedPosition<vt>(j) < t.len) at[j] = atomicAdd(&counts[key[j] >> shift], 1u) << kCountBits | key[j] >> shift;
    }
    __syncthreads();
    slotsExclusiveScan<nt>(counts, counts, static_cast<int>(slots + 1), sh.scratch);  // counts[top + 1] ends run top
    bool longRun = false;
    if (busy) {
        DEVICE_UNROLL
        for (int j = 0; j < vt; ++j)
            if (stripedPosition<vt>(j) < t.len) longRun = longRun || counts[(at[j] & topMask) + 1] - counts[at[j] & topMask] > kLongestRun;
    }
    if (__syncthreads_or(longRun)) return false;  // the block's choice, and a barrier before the radix passes reuse counts
    if (busy) {  // staged by run
        DEVICE_UNROLL
        for (int j = 0; j < vt; ++j)
            if (stripedPosition<vt>(j) < t.len) sh.keys[counts[at[j] & topMask] + (at[j] >> kCountBits)] = key[j];
    }
    __syncthreads();
    if (busy) {
        DEVICE_UNROLL
        for (int j = 0; j < vt; ++j) {
            if (stripedPosition<vt>(j) >= t.len) continue;
            const unsigned begin = counts[at[j] & topMask], end = counts[(at[j] & topMask) + 1];
            at[j] = placeInRun(sh.keys, begin, end, key[j], begin + (at[j] >> kCountBits));
        }
    }
    __syncthreads();
    if (busy) {
        DEVICE_UNROLL
        for (int j = 0; j < vt; ++j)
            if (stripedPosition<vt>(j) < t.len) sh.keys[at[j]] = key[j];
    }
    __syncthreads();
    DEVICE_UNROLL
    for (int j = 0; j < vt; ++j) {
        const unsigned p = stripedPosition<vt>(j);
        if (p < t.len) keysOut[t.start + p] = map.word(sh.keys[p] + t.lo);
    }
    return true;
}

// The stable passes over bits [shift, bits): pass(shift, std::integral_constant<int, passBits>) for each, 8 bits
// a pass until what is left fits one pass: 4, 6, 7 or 8 bits, or with values 9 (stableBits says why).
#pragma nv_exec_check_disable  // pass is the kernel's device lambda, or the selftest's host one
template <bool kPairs, class Pass>
__host__ __device__ inline void forEachStablePass(unsigned shift, unsigned bits, Pass pass) {
    constexpr int widest = stableBits(kPairs);
    for (; shift < bits; shift += 8) {
        const unsigned left = bits - shift;
        if (left <= 4) pass(shift, std::integral_constant<int, 4>{});
        else if (left <= 6) pass(shift, std::integral_constant<int, 6>{});
        else if (left == 7) pass(shift, std::integral_constant<int, 7>{});
        else if (left == widest) { pass(shift, std::integral_constant<int, widest>{}); break; }
        else pass(shift, std::integral_constant<int, 8>{});
    }
}

// One block per task: the bucket sorted by digits, least significant first, each a rank and a move through shared
// memory; then written out as keys. A warp whose stretch starts past the bucket holds only pads: they would rank
// last and land past the bucket anyway, so it ranks and moves nothing (its count row stays 0) and waits at the
// barriers. Keys alone first take their lowest digit, up to kWideDigit bits, in one pass in any order: equal keys
// are equal bits, and the stable passes above keep the order it leaves, so it ranks by warpRankAnyOrder on one
// row of counters for the block, pads in its last slot. Pads are all ones: the largest digit of every stable pass.
// A keys-alone bucket that would take three passes or more first tries one counting pass (countSortBucket).
template <class Tier, bool kPairs>
__global__ void __launch_bounds__(Tier::nt, kPairs ? Tier::pairBlocks() : Tier::keyBlocks()) bucketSortKernel(const Task* tasks,
    const unsigned* count, const uint32_t* keysIn, const uint32_t* valuesIn, uint32_t* keysOut, uint32_t* valuesOut, RankMap map) {
    constexpr int vt = Tier::vt;
    if (count && blockIdx.x >= *count) return;  // count: null where the grid is exact, else the plan's (runLevel)
    extern __shared__ unsigned char localBytes[];
    const LocalShared sh = localShared<Tier, kPairs>(localBytes);
    const Task t = tasks[blockIdx.x];
    if constexpr (!kPairs)  // three radix passes or more: one counting pass, where the runs are short
        if (t.bits > kWideDigit + stableBits(false) && countSortBucket<Tier>(t, keysIn, sh, keysOut, map)) return;
    uint32_t key[vt], value[vt];  // the bucket's keys minus its lo, striped; pads all ones, which stay last
    unsigned rank[vt];
    loadStriped(t.len, key, 0xFFFFFFFFu, [&](unsigned p) { return keysIn[t.start + p] - t.lo; });
    if (kPairs) loadStriped(t.len, value, 0u, [&](unsigned p) { return valuesIn[t.start + p]; });
    const bool busy = warpBusy<vt>(t.len);
    unsigned shift = 0;
    if (!kPairs) {  // the stable passes take the rest, 8 bits or fewer the last
        shift = t.bits < kWideDigit ? t.bits : kWideDigit;
        const unsigned slots = (1u << shift) + 1;
        for (unsigned i = threadIdx.x; i < slots; i += Tier::nt) sh.warpCounts[i] = 0;
        __syncthreads();
        if (busy) {
            digitsOf(key, t.len, 0, (1u << shift) - 1, slots - 1, rank);
            warpRankAnyOrder<kDigitBits>(rank, sh.warpCounts);
        }
        __syncthreads();
        slotsExclusiveScan<Tier::nt>(sh.warpCounts, sh.warpCounts, slots, sh.scratch);
        moveByRank<vt, kPairs>(busy, t.len, rank, sh.warpCounts, nullptr, sh, key, value);
    }
    forEachStablePass<kPairs>(shift, t.bits, [&](unsigned at, auto bitsTag) {
        constexpr int kBits = decltype(bitsTag)::value, slots = 1 << kBits;
        unsigned* row = sh.warpCounts + (threadIdx.x >> 5) * slots;
        // The digits' words for warpRankByMasks: this warp's stretch of the keys' array, which only it reads back
        // (moveByRank), free until the next move; a lane clears the words it read. Too small for 9 bits at 8 keys a lane.
        constexpr bool kMasks = slots <= 32 * vt;
        unsigned* masks = sh.keys + (threadIdx.x & ~31u) * vt;
        for (int i = threadIdx.x & 31; i < slots; i += 32) {
            row[i] = 0;
            if (kMasks) masks[i] = 0;
        }
        __syncwarp();
        if (busy) {
            digitsOf(key, t.len, at, slots - 1, 0, rank);
            if constexpr (kMasks) warpRankByMasks<kDigitBits>(rank, row, masks, [](unsigned d) { return d; });
            else warpRank<kBits, kDigitBits>(rank, row);
        }
        __syncthreads();
        chunkOffsets<Tier::nt>(sh.warpCounts, slots, sh.totals, sh.starts, sh.scratch);
        moveByRank<vt, kPairs>(busy, t.len, rank, sh.starts, row, sh, key, value);
    });
    DEVICE_UNROLL
    for (int j = 0; j < vt; ++j) {
        const unsigned p = stripedPosition<vt>(j);
        if (p >= t.len) continue;
        keysOut[t.start + p] = map.word(key[j] + t.lo);
        if (kPairs) valuesOut[t.start + p] = value[j];
    }
}

__global__ void __launch_bounds__(1) firstSegmentKernel(Segment* segs, size_t n) { segs[0] = {0, n, 0, 0u, 0xFFFFFFFFu}; }

// ------------------------------------------------------------------ launchers

// One row of the variant table: 2^depth buckets a level (depth: Tuning::maxDepth or kNarrowDepth, the two runLevel
// is compiled for) and cap, the largest bucket one block sorts (at most largestTier's).
struct SortConfig { int depth; size_t cap; };

// What one sort did, level by level, for the balance report.
struct LevelReport { unsigned segments; size_t keys; int k; Plan plan; };  // k: buckets a segment by splitters
struct Balance {
    size_t n = 0;
    bool pairs = false;
    std::vector<LevelReport> levels;
    double passes() const {  // bytes moved over one pass's (read n, write n): a level's, then the one-block sorts'
        double keysMoved = 0, keysSorted = 0;
        for (const auto& l : levels) keysMoved += l.keys, keysSorted += l.plan.keysToBlocks;
        const double keyShare = pairs ? 0.5 : 1.0;  // the histogram reads keys only
        return n ? (keysMoved * (0.5 * keyShare + 1.0) + keysSorted) / n : 0;
    }
};

// The most tasks each list can get from `buckets` buckets of `keys` keys: a tier's bucket holds more than the tier
// below (tier 0's at least 2), and a tier past cap gets none (nor a launch: a T4 block cannot hold the largest tiers).
inline void mostTasks(size_t buckets, size_t keys, size_t cap, size_t (&most)[kLists]) {
    size_t below = 1;
    forEachTier([&](auto t) {
        most[t] = below < cap ? std::min(buckets, keys / (below + 1) + 1) : 0;
        below = TierAt<t>::nv;
    });
}

// Scratch sizes for a config: a segment holds more than cap keys, so a level past the first has at most n / (cap + 1).
struct ScratchSizes {
    size_t segs = 0, counts = 0, splitters = 0;
    size_t lists[kLists] = {};
    ScratchSizes() = default;
    ScratchSizes(size_t n, const SortConfig& c) {
        const size_t slots = size_t{2} << c.depth;
        segs = 1 + n / (c.cap + 1);  // SortScratch::reserve refuses more than the plan counts
        counts = (Tuning::mostTiles(n) + segs) * slots + 1;
        splitters = segs * splitterWords(c.depth);
        mostTasks(segs * (slots - 1), n, c.cap, lists);
    }
    void grow(const ScratchSizes& o) {
        segs = std::max(segs, o.segs), counts = std::max(counts, o.counts), splitters = std::max(splitters, o.splitters);
        for (int l = 0; l < kLists; ++l) lists[l] = std::max(lists[l], o.lists[l]);
    }
    size_t bytes(size_t n, bool pairs) const {
        const size_t listTotal = std::accumulate(std::begin(lists), std::end(lists), size_t{0});
        // n: the leaves, a byte a key; counts / 4: CUB's scan, 16 B a tile of 64+
        return 2 * n * (pairs ? 8 : 4) + n + 2 * segs * sizeof(Segment) + 2 * listTotal * sizeof(Task) +
               splitters * 4 + counts * (sizeof(unsigned) + sizeof(uint64_t)) + counts / 4 + 4096;
    }
};

// The largest bucket one block sorts on this card: the largest tier whose shared memory a block may have
// (a T4 stops at 8192 keys alone, 4096 key-value; an H200 takes the largest tier).
inline size_t largestTier(const DeviceInfo& device, bool pairs) {
    size_t keys = TierAt<0>::nv;
    forEachTier([&](auto t) { if (TierAt<t>::sharedBytes(pairs) <= device.sharedPerBlock) keys = TierAt<t>::nv; });
    return keys;
}

// A level's offsets, the exclusive scan of its `count` histogram counts: CUB's single-pass scan (each count read
// once; temp == nullptr asks the bytes it needs). 32-bit counts, 64-bit sums: Sum64's type makes CUB add in 64 bits.
struct Sum64 { __host__ __device__ uint64_t operator()(uint64_t a, uint64_t b) const { return a + b; } };
inline cudaError_t scanCounts(void* temp, size_t& bytes, const unsigned* counts, uint64_t* offsets, size_t count) {
    return cub::DeviceScan::ExclusiveScan(temp, bytes, counts, offsets, Sum64{}, uint64_t{0}, count);
}

// What one sort reads and writes, as 32-bit words: n keys (map: the caller's keys to ordered keys and back).
struct SortWords {
    const uint32_t *in, *valuesIn;
    uint32_t *out, *valuesOut;
    size_t n;
    RankMap map;
    bool pairs() const { return valuesIn != nullptr; }
};
template <class Key>
SortWords sortWordsOf(SortBuffers<Key>& d, size_t n, bool descending) {
    static_assert(sizeof(Key) == sizeof(uint32_t), "sample_sort moves keys as 32-bit words");
    return {reinterpret_cast<const uint32_t*>(d.in.get()), d.pairs ? d.vin.get() : nullptr,
            reinterpret_cast<uint32_t*>(d.out.get()), d.vout.get(), n, rankMapOf<Key>(descending ? ~0u : 0u)};
}

// The sort's scratch, typed by no Key, sized once (reserve) for its largest sort; sample_sort_gpus.cu keeps one a rank.
struct SortScratch {
    DeviceBuffer<uint32_t> keysA, keysB, valuesA, valuesB, splitters, counts;
    DeviceBuffer<uint64_t> offsets;
    DeviceBuffer<unsigned char> scanTemp;  // CUB's, for scanCounts
    DeviceBuffer<uint8_t> leaves;  // each key's leaf, from the histogram to the scatter
    DeviceBuffer<Segment> segs[2];
    // The task lists and the plan, two of each (by level parity): a level's sorts still read theirs while the
    // next level's classify fills the others.
    DeviceBuffer<Task> lists;
    DeviceBuffer<size_t> listMeta;  // bases, then capacities
    DeviceBuffer<Plan> plan;
    // A stream a task list, so a level's tiers' sorts run side by side (in one stream each launch, often under a wave,
    // would wait for the one before). Non-blocking, so the next level's steps go on beside a level's sorts (whose last
    // wave of big buckets leaves most SMs idle): the sorts wait for classify (the event); the default stream waits for
    // them (sorted) only where what they read is written again (two levels on) and at the end.
    cudaStream_t listStreams[kLists] = {};
    cudaEvent_t sorted[2][kLists] = {};  // after a level's sorts, each list's, by level parity
    cudaStream_t planStream = nullptr;  // the plan's copy when the sorts went out before it: waits only for classify
    cudaEvent_t classified = nullptr;
    size_t listBase[kLists] = {}, listTotal = 0;
    Balance balance;  // of the last sort
    Task* levelLists(int level) const { return lists.get() + (level & 1) * listTotal; }
    Plan* levelPlan(int level) const { return plan.get() + (level & 1); }
    // The device address of the plan's count of list l, which a launch sized before the plan was read tests
    // (byte arithmetic: the host never dereferences a device pointer, not even to name a member).
    const unsigned* listCount(int level, int l) const {
        return reinterpret_cast<const unsigned*>(reinterpret_cast<const char*>(levelPlan(level)) + offsetof(Plan, lists)) + l;
    }
    // The default stream waits for the sorts of the last level of this parity (each list's event, launches or none).
    void waitForSorts(int level) const { for (auto e : sorted[level & 1]) CUDA_CHECK(cudaStreamWaitEvent(0, e, 0)); }

    void reserve(size_t n, bool pairs, const ScratchSizes& s) {  // after the caller's device-memory check, which speaks first
        if (s.segs > Plan::kSegmentMask || s.counts > INT_MAX) {  // (CUDA 12.0-12.4's CUB scans an int count)
            std::fprintf(stderr, "sample_sort: %zu keys make more segments or counts a level than one sort holds\n", n);
            std::exit(kExitBadArgument);
        }
        keysA.allocate(n), keysB.allocate(n);
        leaves.allocate(n);
        if (pairs) valuesA.allocate(n), valuesB.allocate(n);
        splitters.allocate(s.splitters);
        counts.allocate(s.counts), offsets.allocate(s.counts);
        size_t scanBytes = 0;
        CUDA_CHECK(scanCounts(nullptr, scanBytes, counts.get(), offsets.get(), s.counts));
        scanTemp.allocate(std::max<size_t>(scanBytes, 1));  // never none: a null temp would only ask the size
        segs[0].allocate(s.segs), segs[1].allocate(s.segs);
        size_t meta[2 * kLists];
        listTotal = 0;
        for (int l = 0; l < kLists; ++l) listBase[l] = meta[l] = listTotal, meta[kLists + l] = s.lists[l], listTotal += s.lists[l];
        lists.allocate(2 * listTotal);
        listMeta.allocate(2 * kLists);
        listMeta.upload(meta, 2 * kLists);
        plan.allocate(2);
        if (!planStream) {  // on the current device, once; the events recorded once, so a first wait has one
            for (int l = 0; l < kLists; ++l) {
                CUDA_CHECK(cudaStreamCreateWithFlags(&listStreams[l], cudaStreamNonBlocking));
                for (auto& parity : sorted) {
                    CUDA_CHECK(cudaEventCreateWithFlags(&parity[l], cudaEventDisableTiming));
                    CUDA_CHECK(cudaEventRecord(parity[l], listStreams[l]));
                }
            }
            CUDA_CHECK(cudaStreamCreateWithFlags(&planStream, cudaStreamNonBlocking));
            CUDA_CHECK(cudaEventCreateWithFlags(&classified, cudaEventDisableTiming));
        }
    }
    ~SortScratch() {  // no checks: a destructor must not exit
        for (int l = 0; l < kLists; ++l) {
            if (listStreams[l]) cudaStreamDestroy(listStreams[l]);
            for (auto& parity : sorted)
                if (parity[l]) cudaEventDestroy(parity[l]);
        }
        if (planStream) cudaStreamDestroy(planStream);
        if (classified) cudaEventDestroy(classified);
    }
};

// One sort of the lesson: the caller's key-typed buffers and the scratch.
template <class Key>
struct Problem {
    SortBuffers<Key> d;
    bool descending = false;
    SortScratch scratch;
    Problem(const std::vector<Key>& input, bool pairs, bool desc) : d(uploadSort(input, pairs)), descending(desc) {}
    void poison() { d.poison(); }
    void reserve(const ScratchSizes& s) { scratch.reserve(d.n, d.pairs, s); }
};

// One list's sorts, on its stream after classify: `blocks` tasks, or with `early` an upper bound (blocks past the
// plan's count leave at once; else the kernels read no count). Then `sorted` marks the stream, launches or none.
template <class Tier, bool kPairs>
void launchBucketSorts(SortScratch& p, const SortWords& io, int level, int list, size_t blocks, bool early,
                       const uint32_t* keysIn, const uint32_t* valuesIn) {
    const cudaStream_t stream = p.listStreams[list];
    if (blocks) {
        const size_t shared = Tier::sharedBytes(kPairs);
        // The opt-in past 48 KiB belongs to the current device: granted at every launch (a host call), so a process
        // driving several GPUs (sample_sort_gpus.cu, a thread each) has it on each of them.
        requireShared(bucketSortKernel<Tier, kPairs>, shared, "bucketSortKernel");
        CUDA_CHECK(cudaStreamWaitEvent(stream, p.classified, 0));
        bucketSortKernel<Tier, kPairs><<<static_cast<unsigned>(blocks), Tier::nt, shared, stream>>>(p.levelLists(level) +
            p.listBase[list], early ? p.listCount(level, list) : nullptr, keysIn, valuesIn, io.out, io.valuesOut, io.map);
        CUDA_CHECK_LAUNCH("bucketSortKernel");
    }
    CUDA_CHECK(cudaEventRecord(p.sorted[level & 1][list], stream));
}

// One level of `keys` keys: splitters, histogram, scan, scatter (it writes the finished buckets: finalBucket),
// classify; then the host reads the plan (a few bytes: the one wait a level), sorts this level's small buckets and
// sizes the next level's grids (a level of few buckets launches its sorts before the plan comes back: kEarlyBlocks).
// With marks, a mark after each step's launches (classify's after the plan is read: its round trip is its time).
// A bound on the blocks the lists can get: a 256-way first level stays under it at every n (7 tiers of at most 511
// buckets; from 2^26 keys nearly every block leaves at once).
constexpr size_t kEarlyBlocks = 4096;
template <int kDepth, bool kPairs>
Plan runLevel(SortScratch& p, const SortWords& io, size_t cap, int level, WordSource src, const uint32_t* valuesIn,
              unsigned numSegs, size_t numTiles, int tileBits, size_t keys, StepMarks* marks) {
    constexpr int slots = 2 << kDepth;
    constexpr double keyBytes = kPairs ? 8 : 4;  // a key and its value, read or written
    const size_t numCounts = numTiles * slots;  // the histogram's: written as 4 bytes each, read as 8 (offsets)
    auto mark = [&](const char* step, size_t count, const char* what, double bytes) {
        if (marks)
            marks->step("level " + std::to_string(level + 1) + " " + step,
                        std::to_string(count) + " " + what + (count == 1 ? "" : "s"), bytes);
    };
    const Segment* segs = p.segs[level & 1].get();
    uint32_t* keysOut = level & 1 ? p.keysB.get() : p.keysA.get();
    uint32_t* valuesOut = level & 1 ? p.valuesB.get() : p.valuesA.get();
    splittersKernel<kDepth><<<numSegs, Tuning::sampleNt(kDepth)>>>(src, segs, p.splitters.get(), level, level < Tuning::sampledLevels);
    CUDA_CHECK_LAUNCH("splittersKernel");
    mark("splitters", numSegs, "segment", 0);
    const unsigned tiles = gridFor(numTiles, 1, "histogramKernel");
    const bool plain = isPlain(src.map);  // the histogram and the scatter built apart for the plain map
    const auto histogram = plain ? histogramKernel<kDepth, true> : histogramKernel<kDepth, false>;
    histogram<<<tiles, Tuning::nt>>>(src, segs, numSegs, tileBits, p.splitters.get(), p.counts.get(), p.leaves.get());
    CUDA_CHECK_LAUNCH("histogramKernel");
    mark("histogram", keys, "key", keys * 5.0 + 4.0 * numCounts);  // and a leaf a key
    size_t scanBytes = p.scanTemp.size();
    CUDA_CHECK(scanCounts(p.scanTemp.get(), scanBytes, p.counts.get(), p.offsets.get(), numCounts));
    mark("scan", numCounts, "count", 12.0 * numCounts);
    constexpr size_t scatterBytes = sizeof(ScatterShared<kPairs>);  // past 48 KiB: opt in, as the sorts do
    const auto scatter = plain ? scatterKernel<kDepth, kPairs, true> : scatterKernel<kDepth, kPairs, false>;
    requireShared(scatter, scatterBytes, "scatterKernel");
    if (level >= 2) p.waitForSorts(level);  // level - 2's sorts read keysOut, and its lists and plan are refilled below
    scatter<<<tiles, ScatterShared<kPairs>::nt, scatterBytes>>>(src, valuesIn, p.leaves.get(),
        segs, numSegs, tileBits, p.splitters.get(), p.offsets.get(), keysOut, valuesOut, io.out, io.valuesOut, io.map);
    CUDA_CHECK_LAUNCH("scatterKernel");
    mark("scatter", keys, "key", keys * (2 * keyBytes + 1) + 8.0 * numCounts);
    CUDA_CHECK(cudaMemsetAsync(p.levelPlan(level), 0, sizeof(Plan)));
    classifyKernel<kDepth><<<gridFor(size_t{numSegs} * slots, Tuning::classifyNt, "classifyKernel"), Tuning::classifyNt>>>(
        segs, numSegs, tileBits, p.splitters.get(), p.offsets.get(), cap, p.levelPlan(level), p.segs[(level + 1) & 1].get(),
        p.levelLists(level), p.listMeta.get(), p.listMeta.get() + kLists);
    CUDA_CHECK_LAUNCH("classifyKernel");
    CUDA_CHECK(cudaEventRecord(p.classified));  // what the sorts and the plan's copy wait for
    // Without marks, where the lists' most tasks add up to kEarlyBlocks or fewer (typically a first level), the sorts
    // go out at once, each list's grid sized to its most tasks, and the plan comes back on its own stream beside them.
    size_t most[kLists];
    mostTasks(size_t{numSegs} * (slots - 1), keys, cap, most);
    const bool early = !marks && std::accumulate(std::begin(most), std::end(most), size_t{0}) <= kEarlyBlocks;
    Plan plan;
    if (early) {
        forEachTier([&](auto t) { launchBucketSorts<TierAt<t>, kPairs>(p, io, level, t, most[t], true, keysOut, valuesOut); });
        CUDA_CHECK(cudaStreamWaitEvent(p.planStream, p.classified, 0));
        CUDA_CHECK(cudaMemcpyAsync(&plan, p.levelPlan(level), sizeof plan, cudaMemcpyDeviceToHost, p.planStream));
        CUDA_CHECK(cudaStreamSynchronize(p.planStream));  // (into pageable memory the copy has already waited)
    } else {
        CUDA_CHECK(cudaMemcpy(&plan, p.levelPlan(level), sizeof plan, cudaMemcpyDeviceToHost));
    }
    bool fits = !plan.overflow;
    for (int l = 0; l < kLists; ++l) fits = fits && plan.lists[l] <= most[l];
    if (!fits) {
        std::fprintf(stderr, "sample_sort: a task list outgrew its scratch or grid (%s:%d)\n", __FILE__, __LINE__);
        std::exit(kExitCudaError);
    }
    if (early) return plan;
    mark("classify, plan", size_t{numSegs} * slots, "slot", 0);
    unsigned blocks = 0;
    forEachTier([&](auto t) {
        launchBucketSorts<TierAt<t>, kPairs>(p, io, level, t, plan.lists[t], false, keysOut, valuesOut);
        blocks += plan.lists[t];
    });
    if (marks) p.waitForSorts(level);  // each step timed on its own: the mark after the sorts waits for them
    if (blocks) mark("one-block sorts", blocks, "bucket", plan.keysToBlocks * 2 * keyBytes);
    return plan;
}

// A later level takes 2^kNarrowDepth buckets a segment, not 2^depth, where at most an eighth of its keys lie in segments
// of more than 2^kNarrowDepth x cap keys: most buckets then fill a block, where 256 a segment would hold tens or hundreds
// of keys each, whose one-block sorts cost more than the keys; the few too big take one more narrow level. (Asking that
// every segment fit, one segment a little too big cost a T4's tiers the narrow level at 2^24 keys: NOTES.md.)
__host__ __device__ constexpr bool runsNarrow(int level, int depth, unsigned long long keysPastNarrow, size_t keys) {
    return level > 0 && depth > kNarrowDepth && 8 * keysPastNarrow <= keys;
}

// The level loop, until no bucket is too big.
template <bool kPairs>
void sampleSortAs(SortScratch& p, const SortWords& io, const SortConfig& c, StepMarks* marks) {
    const size_t n = io.n;
    p.balance = {n, kPairs, {}};
    if (n == 0) return;
    firstSegmentKernel<<<1, 1>>>(p.segs[0].get(), n);
    CUDA_CHECK_LAUNCH("firstSegmentKernel");
    unsigned numSegs = 1;
    const int tileBits = Tuning::tileBitsFor(n, kPairs);  // the same at every level
    size_t numTiles = tilesOf(n, tileBits), keys = n;
    unsigned long long keysPastNarrow = n;  // the previous level's plan's (level 0 runs 2^c.depth in any case)
    const int maxLevel = Tuning::sampledLevels + ceilDiv(32, kNarrowDepth) + 1;  // range levels end every bucket
    for (int level = 0; numSegs > 0; ++level) {
        if (level >= maxLevel) {
            std::fprintf(stderr, "sample_sort: buckets still too big after %d levels\n", level);
            std::exit(kExitCheckFailed);
        }
        const bool narrow = runsNarrow(level, c.depth, keysPastNarrow, keys);
        const WordSource src = level == 0 ? WordSource{io.in, io.map} : WordSource{level & 1 ? p.keysA.get() : p.keysB.get(), RankMap{}};
        const uint32_t* valuesIn = level == 0 ? io.valuesIn : level & 1 ? p.valuesA.get() : p.valuesB.get();
        const Plan plan = narrow || c.depth == kNarrowDepth
            ? runLevel<kNarrowDepth, kPairs>(p, io, c.cap, level, src, valuesIn, numSegs, numTiles, tileBits, keys, marks)
            : runLevel<Tuning::maxDepth, kPairs>(p, io, c.cap, level, src, valuesIn, numSegs, numTiles, tileBits, keys, marks);
        p.balance.levels.push_back({numSegs, keys, 1 << (narrow ? kNarrowDepth : c.depth), plan});
        keys -= plan.keysToBlocks + plan.keysEqual;
        keysPastNarrow = plan.keysPastNarrow;
        numSegs = plan.nextSegments();
        numTiles = plan.nextTiles();
    }
    p.waitForSorts(0), p.waitForSorts(1);  // the sort ends on the default stream when every level's sorts have
}

// marks: each step timed on its own (the lesson's per-step table); nullptr in every other sort.
inline void sampleSort(SortScratch& p, const SortWords& io, const SortConfig& c, StepMarks* marks = nullptr) {
    io.pairs() ? sampleSortAs<true>(p, io, c, marks) : sampleSortAs<false>(p, io, c, marks);
}
template <class Key>
void sampleSort(Problem<Key>& p, const SortConfig& c) { sampleSort(p.scratch, sortWordsOf(p.d, p.d.n, p.descending), c); }

// ======================================================== the variant table
// (The inputs and the host reference are common's: makeSortInput, referenceSort.)

template <class Key> using Row = Variant<Problem<Key>>;

// The rows' configurations, in one list: variants() makes the rows of it, scratchFor() sizes their scratch.
inline std::vector<std::pair<std::string, SortConfig>> sortConfigs(const DeviceInfo& device, bool pairs) {
    return {{"sampleSort 256-way", {Tuning::maxDepth, largestTier(device, pairs)}}, {"sampleSort 16-way", {kNarrowDepth, 512}}};
}
template <class Key>
std::vector<Row<Key>> variants(const DeviceInfo& device, bool pairs) {
    std::vector<Row<Key>> rows;
    for (const auto& [name, c] : sortConfigs(device, pairs)) {
        rows.push_back({name, {std::to_string(1 << c.depth), std::to_string(c.cap), std::to_string(Tuning::oversample)},
                        [c = c](Problem<Key>& p) { sampleSort(p, c); }});  // (C++17 captures no binding by name)
    }
    return rows;
}
// The row the sort runs at n, and why (the size sweep prints both beside the fastest row measured). Within it
// the sort chooses again at every level: a later level with small segments runs 16-way (kNarrowDepth).
inline std::string chosenRow(size_t) { return "sampleSort 256-way"; }
constexpr const char* kChosenWhy = "256 buckets a level at every n: the 16-way row's blocks hold 512 keys, so it takes 2 to 4 "
                                   "more levels (its balance line counts them)";
// The scratch of the rows --only keeps: the largest of their needs.
inline ScratchSizes scratchFor(size_t n, const Run& run, bool pairs) {
    ScratchSizes s;
    for (const auto& [name, c] : sortConfigs(run.device, pairs))
        if (run.wants(name)) s.grow(ScratchSizes(n, c));
    return s;
}

// ================================================================= selftest

// A segment's cell table [lo, hi] on the host, entry by entry as splittersKernel lays it.
std::vector<uint8_t> cellTable(const uint32_t* sorted, uint32_t lo, uint32_t hi, int depth) {
    std::vector<uint8_t> cellFirst(cellCount(lo, hi, depth) + 1);
    for (unsigned c = 0; c < cellFirst.size(); ++c) cellFirst[c] = cellFirstOf(sorted, lo, hi, depth, c);
    return cellFirst;
}

// The histogram's cell table of a segment [lo, hi], against std::upper_bound (the splitters <= key) for every probe.
bool cellsFind(const std::vector<uint32_t>& sorted, int depth, uint32_t lo, uint32_t hi, const std::vector<uint32_t>& probes) {
    const std::vector<uint8_t> cellFirst = cellTable(sorted.data(), lo, hi, depth);
    for (uint32_t key : probes) {
        const unsigned want = static_cast<unsigned>(std::upper_bound(sorted.begin(), sorted.end(), key) - sorted.begin());
        const unsigned got = cellLeaf(sorted.data(), cellFirst.data(), lo, cellShift(lo, hi, depth), key);
        if (got != want) {
            std::printf("key %u in [%u, %u], %zu splitters: cellLeaf %u (expected %u), %zu cells\n", key, lo, hi,
                        sorted.size(), got, want, cellFirst.size() - 1);
            return false;
        }
    }
    return true;
}

// The bucket of the cell search's leaf (bucketOfLeaf) against bucketOf and std::upper_bound (splitters <= key;
// equality buckets odd); bucketRange holds the key; slotOfLeaf gives its slot.
bool bucketsMatchSearch(const std::vector<uint32_t>& sorted, int depth, const std::vector<uint32_t>& probes) {
    const int k = 1 << depth;
    const std::vector<uint8_t> cellFirst = cellTable(sorted.data(), 0, 0xFFFFFFFFu, depth);
    for (uint32_t key : probes) {
        const unsigned b = static_cast<unsigned>(std::upper_bound(sorted.begin(), sorted.end(), key) - sorted.begin());
        const unsigned leaf = cellLeaf(sorted.data(), cellFirst.data(), 0, cellShift(0, 0xFFFFFFFFu, depth), key);
        const unsigned want = 2 * b - (b > 0 && sorted[b - 1] == key), got = bucketOfLeaf(sorted.data(), leaf, key);
        uint32_t lo, hi;
        bucketRange(got, sorted.data(), k, 0, 0xFFFFFFFFu, lo, hi);
        const unsigned slot = slotOfLeaf(sorted.data(), depth, leaf, key);
        if (got != want || static_cast<unsigned>(bucketOf(key, sorted.data(), k - 1)) != b || key < lo || key > hi ||
            slot != slotOf(want, depth)) {
            std::printf("key %u, %d splitters: bucket %u (expected %u), its range [%u, %u], slot %u\n", key, k - 1, got,
                        want, lo, hi, slot);
            return false;
        }
    }
    return cellsFind(sorted, depth, 0, 0xFFFFFFFFu, probes);
}

// The seed's pipeline on the host, thread by thread through its kernels' bodies, against std::stable_sort.
bool seedPiecesSort(const std::vector<uint32_t>& a, const std::vector<uint32_t>& splitters, SeedRun* out = nullptr) {
    const size_t n = a.size();
    const int base = static_cast<int>(splitters.size()) + 1;
    SeedRun r{std::vector<int>(n), std::vector<unsigned>(n), std::vector<unsigned>(base), std::vector<unsigned>(base),
              std::vector<uint32_t>(n, 0xFFFFFFFFu), {}};
    for (size_t i = 0; i < n; ++i) r.bucket[i] = bucketOf(a[i], splitters.data(), base - 1), ++r.count[r.bucket[i]];
    std::vector<unsigned> src = r.count, dst(base);
    for (int d = 1; d < base; d *= 2, src.swap(dst))
        for (int tid = 0; tid < base; ++tid) dst[tid] = scanStep(src.data(), tid, d);
    for (int b = 0; b < base; ++b) r.offset[b] = src[b] - r.count[b];
    for (size_t i = 0; i < n; ++i) r.rank[i] = rankInBucket(r.bucket.data(), i);
    for (size_t i = 0; i < n; ++i) r.scattered[r.offset[r.bucket[i]] + r.rank[i]] = a[i];
    r.sorted = r.scattered;
    for (int b = 0; b < base; ++b) insertionSort(r.sorted.data() + r.offset[b], r.count[b]);
    std::vector<uint32_t> want = a;
    std::stable_sort(want.begin(), want.end());
    if (out) *out = r;
    return r.sorted == want;
}

// A segment's splitters as splittersKernel takes them from its sample, on the host (std::sort for its network).
std::vector<uint32_t> sampleSplitters(const std::vector<uint32_t>& keys, const Segment& s, int depth, int level) {
    const int k = 1 << depth;
    std::vector<uint32_t> sample(k * Tuning::oversample), sorted(k - 1);
    for (size_t i = 0; i < sample.size(); ++i) sample[i] = keys[samplePosition(s, level, static_cast<int>(i))];
    std::sort(sample.begin(), sample.end());
    for (int j = 0; j < k - 1; ++j) sorted[j] = sampleSplitter(sample.data(), static_cast<int>(sample.size()), j, k);
    return sorted;
}

// One distribution level of Part B on the host, through the kernels' pieces: sample positions, splitters, cell
// search, histogram rows in countsIndex's layout, their scan, each key's stable place (per warp: its peerRank among
// equal buckets, after earlier warps and chunks). Checks: buckets contiguous, ascending, input order inside.
bool levelPiecesDistribute(const std::vector<uint32_t>& keys, int depth, int tileBits) {
    const size_t tileKeys = size_t{1} << tileBits;
    const int slots = 2 << depth;
    const auto [lo, hi] = std::minmax_element(keys.begin(), keys.end());
    const Segment s{0, keys.size(), 0, *lo, *hi};
    const std::vector<uint32_t> sorted = sampleSplitters(keys, s, depth, 0);
    const std::vector<uint8_t> cellFirst = cellTable(sorted.data(), s.lo, s.hi, depth);  // the histogram's leaf
    const size_t tiles = tilesOf(keys.size(), tileBits);
    std::vector<unsigned> counts(tiles * slots + 1, 0), bucket(keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
        const unsigned leaf = cellLeaf(sorted.data(), cellFirst.data(), s.lo, cellShift(s.lo, s.hi, depth), keys[i]);
        bucket[i] = bucketOfLeaf(sorted.data(), leaf, keys[i]);
        ++counts[countsIndex(s, slots, bucket[i], i / tileKeys, tileBits)];
    }
    std::vector<uint64_t> offsets(counts.size()), next(slots);
    std::exclusive_scan(counts.begin(), counts.end(), offsets.begin(), uint64_t{0});
    std::vector<size_t> seen(keys.size(), SIZE_MAX);  // seen[place]: the input there
    for (size_t t = 0; t < tiles; ++t) {  // chunk by chunk, warp by warp, item by item, lane by lane
        for (int b = 0; b < slots; ++b) next[b] = offsets[countsIndex(s, slots, b, t, tileBits)];
        const size_t end = std::min(keys.size(), (t + 1) * tileKeys);
        for (size_t chunk = t * tileKeys; chunk < end; chunk += 32) {
            const unsigned lanes = static_cast<unsigned>(std::min<size_t>(32, end - chunk));
            for (unsigned lane = 0; lane < lanes; ++lane) {
                unsigned peers = 0;
                for (unsigned other = 0; other < lanes; ++other) peers |= static_cast<unsigned>(bucket[chunk + other] == bucket[chunk + lane]) << other;
                const size_t place = next[bucket[chunk + lane]] + peerRank(peers, lane);
                if (place >= keys.size() || seen[place] != SIZE_MAX) return false;
                seen[place] = chunk + lane;
            }
            for (unsigned lane = 0; lane < lanes; ++lane) ++next[bucket[chunk + lane]];
        }
    }
    std::vector<BucketSpan> spans(slots - 1);  // as the scatter and classify read them
    std::vector<size_t> held(slots, 0);
    for (int b = 0; b < slots - 1; ++b) spans[b] = bucketSpan(s, slots, b, offsets.data(), tileBits, sorted.data());
    for (size_t p = 0; p < keys.size(); ++p) {
        const unsigned b = bucket[seen[p]];
        ++held[b];
        if (b >= spans.size() || p < spans[b].start || p - spans[b].start >= spans[b].len || keys[seen[p]] < spans[b].lo ||
            keys[seen[p]] > spans[b].hi) {
            std::printf("level on the host: output %zu (bucket %u) outside its bucketSpan\n", p, b);
            return false;
        }
    }
    for (int b = 0; b < slots - 1; ++b)
        if (held[b] != spans[b].len) {
            std::printf("level on the host: bucket %d holds %zu keys, its bucketSpan %zu\n", b, held[b], spans[b].len);
            return false;
        }
    for (size_t p = 1; p < keys.size(); ++p) {
        const unsigned b0 = bucket[seen[p - 1]], b1 = bucket[seen[p]];
        if (b0 > b1 || (b0 == b1 && seen[p - 1] > seen[p])) {
            std::printf("level on the host: output %zu holds input %zu (bucket %u) after input %zu (bucket %u)\n", p,
                        seen[p], b1, seen[p - 1], b0);
            return false;
        }
    }
    return true;
}

int runSelftest() {
    // The seed's example, every intermediate line; then random inputs: ties, splitters equal to keys, empty buckets.
    SeedRun r;
    expect(seedPiecesSort({19, 3, 42, 7, 55, 12, 38, 25}, {15, 30}, &r) && spacedKeys(r.bucket) == "1 0 2 0 2 0 2 1" &&
               spacedKeys(r.rank) == "0 0 0 1 1 2 2 1" && spacedKeys(r.count) == "3 2 3" &&
               spacedKeys(r.offset) == "0 3 5" && spacedKeys(r.scattered) == "3 7 12 19 25 42 55 38",
           "seed example: buckets, ranks, counts, offsets, scatter and sort are the seed's");
    SplitMix64 rng(2024);
    bool ok = true;
    for (int trial = 0; trial < 300 && ok; ++trial) {
        std::vector<uint32_t> a(rng.below(70)), splitters(1 + rng.below(6));
        const uint32_t range = trial % 3 == 0 ? 4 : 100;
        for (auto& x : a) x = static_cast<uint32_t>(rng.below(range));
        for (auto& x : splitters) x = static_cast<uint32_t>(rng.below(range + 2));
        std::sort(splitters.begin(), splitters.end());
        ok = seedPiecesSort(a, splitters);
        if (!ok) std::printf("seed pieces fail on %s with splitters %s\n", formatKeys(a).c_str(), formatKeys(splitters).c_str());
    }
    expect(ok, "the seed's pieces sort 300 random inputs");
    // Bucket search: small splitter sets probed exhaustively (duplicates, extremes), then random sets of 255.
    ok = true;
    for (int depth = 1; depth <= 3 && ok; ++depth)
        for (int trial = 0; trial < 200 && ok; ++trial) {
            std::vector<uint32_t> sorted((1 << depth) - 1), probes = {0, 0xFFFFFFFFu, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
            for (auto& x : sorted) x = static_cast<uint32_t>(rng.below(8));
            std::sort(sorted.begin(), sorted.end());
            ok = bucketsMatchSearch(sorted, depth, probes);
        }
    for (int trial = 0; trial < 50 && ok; ++trial) {
        std::vector<uint32_t> sorted(255), probes(2000);
        for (auto& x : sorted) x = static_cast<uint32_t>(trial % 2 ? rng.below(40) : rng.next());
        if (trial % 5 == 0) sorted.front() = 0;
        if (trial % 7 == 0) sorted.back() = 0xFFFFFFFFu;
        std::sort(sorted.begin(), sorted.end());
        for (size_t i = 0; i < probes.size(); ++i) probes[i] = i % 2 ? sorted[rng.below(255)] : static_cast<uint32_t>(rng.next());
        ok = bucketsMatchSearch(sorted, 8, probes);
    }
    expect(ok, "bucketOfLeaf(cellLeaf) = splitters <= key (equality buckets odd), bucketRange holds the key, slotOfLeaf its slot");
    ok = true;  // segments of later levels: [lo, hi] of any width, splitters sampled (ties) or spread over the range
    for (int trial = 0; trial < 480 && ok; ++trial) {  // every width with both depths and every kind of splitters
        const int depth = trial / 12 % 2 ? Tuning::maxDepth : kNarrowDepth, k = 1 << depth;
        const uint32_t widths[] = {0, 1, 7, 100, 2047, 2048, 2049, 5000, 1u << 20, 0x7FFFFFFFu, 0xFFFFFFFEu, 0xFFFFFFFFu};
        const uint32_t width = widths[trial % 12], lo = static_cast<uint32_t>(rng.below(uint64_t{0xFFFFFFFFu} - width + 1));
        const uint32_t hi = lo + width;
        std::vector<uint32_t> sorted(k - 1), probes = {lo, hi};
        const int kind = trial / 24 % 4;  // spread over the range, a few values, all one value, range splitters
        const uint64_t spread = kind == 1 ? std::min<uint64_t>(3, uint64_t{width} + 1) : kind == 2 ? 1 : uint64_t{width} + 1;
        const uint32_t at = lo + static_cast<uint32_t>(rng.below(uint64_t{width} + 1)) * (kind == 2);
        for (int j = 0; j < k - 1; ++j)
            sorted[j] = kind == 3 ? rangeSplitter(lo, hi, j, k) : at + static_cast<uint32_t>(rng.below(spread));
        std::sort(sorted.begin(), sorted.end());
        for (uint32_t x : sorted) probes.insert(probes.end(), {x, x == lo ? x : x - 1, x == hi ? x : x + 1});
        for (int i = 0; i < 300; ++i) probes.push_back(lo + static_cast<uint32_t>(rng.below(uint64_t{width} + 1)));
        ok = cellsFind(sorted, depth, lo, hi, probes);
    }
    expect(ok, "cellLeaf = splitters <= key for segments of every width, depth and kind of splitters");
    ok = true;
    for (int depth = 1; depth <= Tuning::maxDepth; ++depth)
        for (unsigned b = 0; b < (2u << depth); ++b)
            ok = ok && slotOf(b, depth) < (2u << depth) && bucketOfSlot(slotOf(b, depth), depth) == b &&
                 (b & 1 || slotOf(b, depth) == b / 2) && slotOf((2u << depth) - 1, depth) == (2u << depth) - 1;
    expect(ok, "slotOf and bucketOfSlot invert each other; the range buckets take slots 0..k-1, the pad its own");
    expect(runsNarrow(1, Tuning::maxDepth, 132601, 16776961) && !runsNarrow(1, Tuning::maxDepth, 16776961 / 8 + 1, 16776961) &&
               runsNarrow(2, Tuning::maxDepth, 0, 1) && !runsNarrow(0, Tuning::maxDepth, 0, 1) && !runsNarrow(1, kNarrowDepth, 0, 1),
           "a later level runs narrow while at most an eighth of its keys lie in segments too big for it (2^24 keys, T4 tiers)");
    ok = true;
    for (int trial = 0; trial < 2000 && ok; ++trial) {
        const int k = trial % 2 ? 256 : 16;
        uint32_t lo = static_cast<uint32_t>(rng.next()), hi = static_cast<uint32_t>(rng.next());
        if (trial % 3 == 0) hi = lo + static_cast<uint32_t>(rng.below(600));
        if (trial == 0) lo = 0, hi = 0xFFFFFFFFu;
        if (lo > hi) std::swap(lo, hi);
        std::vector<uint32_t> sorted(k - 1);
        for (int j = 0; j < k - 1; ++j) sorted[j] = rangeSplitter(lo, hi, j, k);
        const uint64_t most = ceilDiv<uint64_t>(uint64_t{hi} - lo + 1, k);
        ok = std::is_sorted(sorted.begin(), sorted.end()) && sorted.front() >= lo && sorted.back() <= hi;
        for (int b = 0; b < k && ok; ++b) {  // bucket 2b: sorted[b-1] < key < sorted[b], inside [lo, hi]
            const int64_t first = b == 0 ? lo : int64_t{sorted[b - 1]} + 1, last = b == k - 1 ? hi : int64_t{sorted[b]} - 1;
            uint32_t blo, bhi;
            bucketRange(2 * b, sorted.data(), k, lo, hi, blo, bhi);
            ok = first > last || (blo == first && bhi == last && uint64_t(last - first + 1) <= most);  // or empty
        }
    }
    expect(ok, "range splitters cut [lo, hi] into buckets of at most ceil(width / k) keys' range");
    expect(peerRank(0xFFFFFFFFu, 0) == 0 && peerRank(0xFFFFFFFFu, 31) == 31 && peerRank(0x80000001u, 31) == 1 &&
               peerRank(0x0000F0F0u, 12) == 4, "peerRank counts the peers on lower lanes");
    // bucketSortKernel's pass loop (keys alone start after their any-order pass of up to kWideDigit bits, as the
    // kernel computes it): each bit of a bucket's range in one pass, none wider than its counters, 8 bits a pass
    // before the last, and no more passes than that needs (17 bits with values: 8 + 9, two).
    ok = true;
    auto schedule = [&](auto pairsTag) {
        constexpr bool pairs = decltype(pairsTag)::value;
        for (unsigned bits = 0; bits <= 32; ++bits) {
            const unsigned first = pairs ? 0 : std::min(bits, kWideDigit), left = bits - first, widest = stableBits(pairs);
            unsigned covered = first, passes = 0;
            forEachStablePass<pairs>(first, bits, [&](unsigned at, auto passTag) {
                constexpr int passBits = decltype(passTag)::value;
                ok = ok && unsigned(passBits) <= widest && (unsigned(passBits) >= bits - at || passBits == 8) && covered == at;
                covered = at + std::min<unsigned>(passBits, bits - at), ++passes;
            });
            ok = ok && covered == bits && passes == (left == 0 ? 0 : left <= widest ? 1 : 1 + ceilDiv(left - widest, 8u));
        }
    };
    schedule(std::false_type{}), schedule(std::true_type{});
    expect(ok, "the bucket sort's passes take every bit once: 8 a pass, the last 4, 6, 7, 8 or (with values) 9");
    ok = true;
    for (size_t n : {size_t{1}, size_t{31}, size_t{33}, size_t{2049}, size_t{4097}, Tuning::tileKeys - 1, Tuning::tileKeys + 1,
                     size_t{40000}})
        for (SortShape dist : {SortShape::Uniform, SortShape::AllEqual, SortShape::FewDistinct, SortShape::Sorted, SortShape::Zipf, SortShape::Staggered})
            for (int depth : {4, 8})
                for (int bits : {Tuning::minTileBits, Tuning::tileBits})
                    ok = ok && levelPiecesDistribute(makeSortInput<uint32_t>(dist, n, n + depth), depth, bits);
    expect(ok, "one level on the host, both tile sizes: buckets contiguous, ascending, input order inside, where "
               "bucketSpan puts them");
    // Tiles hold whole histogram chunks, and with values whole scatter chunks (a keys-alone tile may fill half of
    // one, as a segment's last chunk does); the scratch for n keys (mostTiles) holds any smaller sort's tiles.
    ok = true;
    for (bool pairs : {false, true})
        for (int e = 0; e <= 34 && ok; ++e)
            for (size_t m : {(size_t{1} << e) - 1, size_t{1} << e, (size_t{1} << e) + 1, (size_t{3} << e) / 2}) {
                const size_t t = size_t{1} << Tuning::tileBitsFor(m, pairs);
                ok = ok && t % Tuning::nv == 0 && (!pairs || t % ScatterShared<true>::nv == 0) &&
                     ceilDiv(m, t) <= Tuning::mostTiles(m) && Tuning::mostTiles(m) <= Tuning::mostTiles(m + 1);
            }
    expect(ok, "tileBitsFor: whole histogram chunks a tile (whole scatter chunks with values); mostTiles bounds the "
               "tiles of every smaller sort");
    // mostTasks bounds every task list a level fills (the early launches' grids and the lists' scratch), by
    // classifyKernel's rule (bucketFate), at the caps a row or a card's shared memory gives (512, and each tier from
    // 4096 up). A tier's smallest buckets fill its list most.
    expect(finalBucket(1, 3, 9) && finalBucket(70000, 5, 5) && !finalBucket(0, 5, 5) && !finalBucket(2, 3, 4),
           "finalBucket: one key, or keys that take one value");
    size_t tierKeys[kTierCount];
    forEachTier([&](auto t) { tierKeys[t] = TierAt<t>::nv; });
    ok = true;
    for (int trial = 0; trial < 3000 && ok; ++trial) {
        const size_t cap = trial % 4 ? tierKeys[1 + trial / 4 % (kTierCount - 1)] : 512, buckets = 1 + rng.below(600);
        const int fullest = trial / 3 % kTierCount;
        size_t keys = 0, count[kLists] = {}, most[kLists];
        for (size_t b = 0; b < buckets; ++b) {
            size_t len = trial % 3 ? rng.below(3 * cap) : fullest == 0 ? 2 : tierKeys[fullest - 1] + 1;
            if (trial % 7 == 0 && b % 5 == 0) len = rng.below(size_t{3} << 16);  // large buckets, some all-equal
            const bool equal = len && trial % 3 && rng.below(4) == 0;  // its keys take one value
            const int fate = bucketFate({0, len, 0, equal ? 0u : 1u}, cap);
            if (fate >= 0) ++count[fate];
            keys += len;
        }
        mostTasks(buckets, keys, cap, most);
        for (int l = 0; l < kLists; ++l) ok = ok && count[l] <= most[l];
    }
    expect(ok, "mostTasks bounds every task list a level can fill");
    const Segment segs[] = {{0, 5, 0, 0, 0}, {5, 40000, 1, 0, 0}, {40005, 3, 4, 0, 0}};
    expect(segmentOfTile(segs, 3, 0) == 0 && segmentOfTile(segs, 3, 1) == 1 && segmentOfTile(segs, 3, 3) == 1 &&
               segmentOfTile(segs, 3, 4) == 2, "segmentOfTile: a tile finds the segment that holds it");
    // countSortBucket on the host, a key at a time in a shuffled order (any order, as the atomics give it): the
    // counts of the top bits, their scan, the staging by run, placeInRun; every place once, the keys sorted.
    ok = true;
    for (int trial = 0; trial < 600 && ok; ++trial) {
        const size_t len = 1 + rng.below(trial % 3 ? 16384 : 64);
        const unsigned bits = 19 + static_cast<unsigned>(rng.below(14)), top = 10 + trial % 3, shift = bits - top;
        std::vector<uint32_t> key(len), staged(len), out(len, 0);
        for (auto& k : key)  // few values (ties), or spread over the bits
            k = static_cast<uint32_t>(trial % 4 == 3 ? rng.below(5) : rng.next()) & (0xFFFFFFFFu >> (32 - bits));
        std::vector<unsigned> counts((size_t{1} << top) + 1, 0), order(len), at(len), place(len);
        std::iota(order.begin(), order.end(), 0u);
        for (size_t i = len - 1; i > 0; --i) std::swap(order[i], order[rng.below(i + 1)]);
        for (unsigned p : order) at[p] = counts[key[p] >> shift]++;
        std::exclusive_scan(counts.begin(), counts.end(), counts.begin(), 0u);
        for (unsigned p = 0; p < len; ++p) staged[counts[key[p] >> shift] + at[p]] = key[p];
        std::vector<bool> taken(len, false);
        for (unsigned p = 0; p < len && ok; ++p) {
            const unsigned run = key[p] >> shift, begin = counts[run];
            place[p] = placeInRun(staged.data(), begin, counts[run + 1], key[p], begin + at[p]);
            ok = place[p] < len && !taken[place[p]];
            if (ok) taken[place[p]] = true, out[place[p]] = key[p];
        }
        std::sort(key.begin(), key.end());
        ok = ok && out == key;
    }
    expect(ok, "the counting pass: runs by top bits, placeInRun within them, every place once, the keys sorted");
    ok = true;
    forEachTier([&](auto t) { ok = ok && (1 << TierAt<t>::countBits) + 1 <= TierAt<t>::countWords(false) && TierAt<t>::countBits >= 10; });
    expect(ok, "every tier's counting pass: its counters and their end fit the stable passes' counters, 10 bits or more");
    // (The order and the host reference are common's, tested by common_key_order_test.)
    return selftestVerdict();
}

// =============================================================== the lesson

// One sort's balance: a line for the sort, then one a level.
void printBalance(const std::string& name, const Balance& b) {
    size_t blocks = 0, keysToBlocks = 0, equal = 0;
    for (const auto& l : b.levels) {
        for (int t = 0; t < kTierCount; ++t) blocks += l.plan.lists[t];
        keysToBlocks += l.plan.keysToBlocks, equal += l.plan.keysEqual;
    }
    std::printf("balance of %s: %zu level%s, %zu buckets sorted in one block (mean %.0f keys), %zu keys in equality "
                "buckets, %.2f passes over memory\n", name.c_str(), b.levels.size(), b.levels.size() == 1 ? "" : "s",
                blocks, blocks ? static_cast<double>(keysToBlocks) / blocks : 0.0, equal, b.passes());
    for (size_t l = 0; l < b.levels.size(); ++l) {
        const auto& lv = b.levels[l];
        const double mean = lv.plan.nonEmpty ? static_cast<double>(lv.keys) / lv.plan.nonEmpty : 0;
        std::printf("  level %zu (%s splitters): %u segment%s, %zu keys -> %llu of %zu buckets hold keys, largest %llu = "
                    "%.2f x the mean; %llu keys to one-block sorts, %llu to equality buckets, next level %u segments\n",
                    l + 1, static_cast<int>(l) < Tuning::sampledLevels ? "sampled" : "range", lv.segments,
                    lv.segments == 1 ? "" : "s", lv.keys, lv.plan.nonEmpty, size_t{lv.segments} * (2 * lv.k - 1),
                    lv.plan.largest, mean > 0 ? lv.plan.largest / mean : 0.0, lv.plan.keysToBlocks, lv.plan.keysEqual,
                    lv.plan.nextSegments());
    }
}

template <class Key>
int runVerifyAs(const Run& run) {
    int failed = 0, cases = 0;
    const size_t sizes[] = {0, 1, 2, 3, 5, 17, 31, 33, 1000, 1023, 1025, 2047, 2049, 4097, 16383, 16385, 65537, 393241, 1000003, (1u << 22) + 3};
    for (const auto& [dist, name] : sortShapeNames())
        for (size_t n : sizes)
            for (int mode = 0; mode < 4; ++mode) {  // pairs ascending; keys descending; pairs descending (smaller); keys ascending
                const bool pairs = mode == 0 || mode == 2, descending = mode == 1 || mode == 2;
                if (mode == 2 && n > 65537) continue;
                const auto input = makeSortInput<Key>(dist, n, 7 * n + mode);
                Problem<Key> p(input, pairs, descending);
                p.reserve(scratchFor(n, run, pairs));
                const bool ok = checkSortRows(selectRows(variants<Key>(run.device, pairs), run), p, p.d, input,
                                              referenceSort(input, descending), SortCheck::Stable, name);
                ++cases, failed += !ok;
                if (!ok || (n == sizes[std::size(sizes) - 1] && mode == 0))
                    std::printf("%-5s %-6s %-12s n=%-8zu %s%s\n", ok ? "ok" : "FAIL", keyName<Key>(), name, n,
                                pairs ? "pairs" : "keys", descending ? " descending" : "");
            }
    std::printf("verify %s: %d cases (every distribution and size, keys and pairs, both orders), %d failed\n",
                keyName<Key>(), cases, failed);
    return failed;
}

// splittersKernel's splitters and cell tables for two segments against the host's (sampleSplitters or range
// splitters, cellFirstOf): a sample sorted wrongly would only unbalance the buckets, which no sorted output shows.
template <int kDepth>
bool splittersMatchHost(const std::vector<uint32_t>& keys, int level) {
    const bool fromSample = level < Tuning::sampledLevels;
    const size_t n = keys.size(), k = 1 << kDepth, words = splitterWords(kDepth);
    std::vector<Segment> segs = {{0, n / 3, 0, 0, 0}, {n / 3, n - n / 3, 0, 0, 0}};
    for (Segment& s : segs) {  // the segment's key range, as a level's classify hands it on
        const auto [lo, hi] = std::minmax_element(keys.begin() + s.start, keys.begin() + s.start + s.len);
        s.lo = *lo, s.hi = *hi;
    }
    DeviceBuffer<uint32_t> dKeys(n), dSplitters(segs.size() * words);
    DeviceBuffer<Segment> dSegs(segs.size());
    dKeys.upload(keys.data(), n);
    dSegs.upload(segs.data(), segs.size());
    splittersKernel<kDepth><<<static_cast<unsigned>(segs.size()), Tuning::sampleNt(kDepth)>>>(
        WordSource{dKeys.get(), RankMap{}}, dSegs.get(), dSplitters.get(), level, fromSample);
    CUDA_CHECK_LAUNCH("splittersKernel");
    std::vector<uint32_t> got(segs.size() * words);
    dSplitters.download(got.data(), got.size());
    for (size_t g = 0; g < segs.size(); ++g) {  // words 0 .. k-2: the sorted splitters; from word k: the cell table
        std::vector<uint32_t> want = fromSample ? sampleSplitters(keys, segs[g], kDepth, level) : std::vector<uint32_t>(k - 1);
        for (size_t j = 0; !fromSample && j < k - 1; ++j) want[j] = rangeSplitter(segs[g].lo, segs[g].hi, static_cast<int>(j), static_cast<int>(k));
        bool same = std::equal(want.begin(), want.end(), got.begin() + g * words);
        const std::vector<uint8_t> table = cellTable(want.data(), segs[g].lo, segs[g].hi, kDepth);
        same = same && std::equal(table.begin(), table.end(), reinterpret_cast<const uint8_t*>(got.data() + g * words + k));
        if (!same) {
            std::printf("FAIL splittersKernel<%d>, level %d, segment %zu: its splitters or cell table differ from the host's\n",
                        kDepth, level, g);
            return false;
        }
    }
    return true;
}

int runVerify(const Run& run) {
    const bool partA = runPartA();
    bool splitters = true;
    for (const auto& [dist, name] : sortShapeNames())
        for (int level = 0; level <= Tuning::sampledLevels; ++level) {  // the last: range splitters
            const auto keys = makeSortInput<uint32_t>(dist, 100003, level);
            splitters = splittersMatchHost<Tuning::maxDepth>(keys, level) && splittersMatchHost<kNarrowDepth>(keys, level) && splitters;
        }
    std::printf("splitters: every distribution's splitters and cell tables (both depths, sampled and range) %s\n",
                splitters ? "match the host's" : "DIFFER from the host's");
    const int failed = runVerifyAs<uint32_t>(run) + runVerifyAs<int32_t>(run) + runVerifyAs<float>(run);
    return partA && splitters && failed == 0 ? kExitPass : kExitCheckFailed;
}

// One table: n keys of one distribution, every row and CUB's two sorts checked, then timed. echo false: the
// checks and the times, nothing printed (a point of the size sweep).
template <class Key>
int runDistribution(const SortOptions& o, const Run& run, SortShape dist, size_t n, bool echo, CsvFile* csv,
                    std::vector<DistributionPoint>& out) {
    const char* name = sortShapeName(dist);
    const auto input = makeSortInput<Key>(dist, n);
    const auto want = referenceSort(input, o.descending);
    Problem<Key> p(input, o.pairs, o.descending);
    auto rows = selectRows(variants<Key>(run.device, o.pairs), run);
    p.reserve(scratchFor(n, run, o.pairs));
    LibraryRows<Key, Problem<Key>> cub(p.d, o.descending);
    std::vector<Balance> balances;
    for (auto& row : rows) {
        if (!checkSortRows({row}, p, p.d, input, want, SortCheck::Stable, name)) return kExitCheckFailed;
        row.passes = p.scratch.balance.passes();
        balances.push_back(p.scratch.balance);
    }
    if (!cub.check(p, p.d, input, want, name)) return kExitCheckFailed;
    if (echo) std::printf("\n%s, %zu %s %s%s: %zu rows and both CUB sorts match the host reference (sample sort: stable, by provenance)\n",
                name, n, keyName<Key>(), o.pairs ? "key-value pairs" : "keys", o.descending ? ", descending" : "", rows.size());
    for (size_t r = 0; r < rows.size() && echo; ++r) printBalance(rows[r].name, balances[r]);
    if (!run.timing || n == 0) return kExitPass;
    const std::string label = std::string(name) + ", " + std::to_string(n) + " " + keyName<Key>() + (o.pairs ? " pairs" : " keys");
    TimedTable<Problem<Key>> table = cub.table("sample sort, " + label, {{"buckets", 7}, {"block cap", 9}, {"sample/k", 8}}, p.d);
    table.versus = "vs merge";
    table.echo = echo;
    const TimedRows t = timeRows(table, rows, p, run, csv);
    if (echo && csv && out.empty() && run.wants(chosenRow(n))) {  // the first table: each step of the chosen row
        const auto configs = sortConfigs(run.device, o.pairs);
        const SortConfig c = std::find_if(configs.begin(), configs.end(), [&](const auto& r) { return r.first == chosenRow(n); })->second;
        const SortWords io = sortWordsOf(p.d, n, o.descending);
        const auto steps = StepMarks::time([&](StepMarks& marks) { sampleSort(p.scratch, io, c, &marks); }, run.plan);
        stepTable("each step of " + chosenRow(n) + " (" + label + ")", {"step", "work"}, steps, p.d.bytesPerPass(), t.copyMs, *csv);
    }
    if (!rows.empty()) {
        const auto& first = balances[0].levels[0];
        const double largest = first.plan.nonEmpty ? first.plan.largest / (static_cast<double>(n) / first.plan.nonEmpty) : 0.0;
        out.push_back({name, sweepPoint(t, rowNames(rows), chosenRow(n), kChosenWhy), {fixed(rows[0].passes, 2), fixed(largest, 2)}});
    }
    return kExitPass;
}

template <class Key>
int runLessonAs(const SortOptions& o, const Run& run) {
    return runSortLesson<Key>(o, run, {"sample_sort", "sample_sort (buffers, scratch and CUB's)", "sample sort",
        "summary: sampleSort 256-way by distribution", {{"passes", 6}, {"largest/mean", 12}},
        [&](size_t n) {
            const size_t scratch = scratchFor(n, run, o.pairs).bytes(n, o.pairs);
            return sortBytesNeeded<Key>(n, o.pairs, scratch + 2 * n * 4 + libraryWordBytes<Key>(n, o.descending));
        },
        [] {
            std::printf("sample: %d keys per level's segment = %d per bucket (oversampling: bucket sizes then vary by "
                        "about 1/sqrt(%d) = %.0f %%)\n", Tuning::maxSample, Tuning::oversample, Tuning::oversample,
                        100.0 / std::sqrt(static_cast<double>(Tuning::oversample)));
            return true;
        },
        [&](auto&&... table) { return runDistribution<Key>(o, run, table...); }});  // &&: summary by reference
}

int runLesson(const SortOptions& o, const Run& run) {
    if (!runPartA()) return kExitCheckFailed;
    return onKeyType(o.key, [&](auto key) { return runLessonAs<decltype(key)>(o, run); });
}

// ===================================================================== main
// (sample_sort_gpus.cu includes this file for its pieces and its sort, and has a main of its own.)
#ifndef SAMPLE_SORT_NO_MAIN
int main(int argc, char** argv) {
    SortOptions o;
    return lessonEntry(argc, argv, {"sample_sort", "Chapter 14.3: sample sort -- splitters, buckets, every bucket sorted on its own.",
        sortOptions("keys to sort (default 2^28; --quick 2^22)",
                    "sort uint32 values (each key's original index) with the keys; checked as stable",
                    "every distribution of the table, then a summary", true),
        {"sampleSort"}, [&](const Args& args, const Run& run) { readSortOptions(args, run, o, size_t{1} << 28, size_t{1} << 22); },
        runSelftest, runVerify, [&](const Run& run) { return runLesson(o, run); }});
}
#endif

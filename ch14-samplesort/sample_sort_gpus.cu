// Chapter 14.3 across GPUs: the data needs several GPUs to hold it, and
// sample sort needs only one exchange. The keys are split over ranks (one a
// GPU, or several sharing one); every rank samples its keys, the samples are
// gathered and give ranks - 1 splitters, every rank buckets its keys by
// destination rank by counting the splitters below it, one all-to-all moves each
// bucket to its rank, and each rank sorts what it received with
// sample_sort.cu's sort. Rank r's keys then all precede rank r + 1's. Stable.
//
// Build (one file; sample_sort.cu beside it):
//   nvcc -std=c++17 -O3 -arch=sm_90 -o sample_sort_gpus sample_sort_gpus.cu -lnccl
// Run (one process drives every rank; CUDA_VISIBLE_DEVICES picks the GPUs):
//   ./sample_sort_gpus                 2^28 uint32 keys a rank, a rank a GPU: the phase table
//   ./sample_sort_gpus --ranks 4 --n 2^26 --pairs --input zipf   (ranks past the GPUs share them)
//   ./sample_sort_gpus --verify --ranks 8   every distribution, key type, order and layout, small sizes
//   ./sample_sort_gpus --selftest      splitters, ties, the exchange plan on the host (no GPU)
// Reading map: "splitters across ranks" (Sample, chooseSplitters,
// destinationOf, ExchangePlan), "kernels" (sample, histogram, scatter),
// "the pipeline" (Ranks and their transport, sortAcross: the five phases),
// "checks", "selftest", "the lesson", "main".
// Change: --ranks, --n (keys a rank), --key, --pairs, --descending,
// --input/--dist; kSamplesPerRank. NVLink multicast stays off
// (NCCL_NVLS_ENABLE=0 unless the environment sets it): on a shared host it
// can take the GPUs out of service.

#define SAMPLE_SORT_NO_MAIN
#include "sample_sort.cu"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/version.cuh>
#include <nccl.h>
#if CUB_VERSION >= 200100
#include <cuda/std/tuple>
#endif

#include <array>
#include <chrono>
#include <memory>
#include <numeric>
#include <string>
#include <thread>

#define NCCL_CHECK(call)                                                                                 \
    do {                                                                                                 \
        const ncclResult_t nccl_check_result_ = (call);                                                  \
        if (nccl_check_result_ != ncclSuccess) {                                                         \
            std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                    \
                         ncclGetErrorString(nccl_check_result_));                                        \
            std::exit(kExitCudaError);                                                                   \
        }                                                                                                \
    } while (0)

// Everything below is this program's; sample_sort.cu's names stay as they are.
namespace across {

// ================================================= splitters across ranks
constexpr int kMaxRanks = 8;
constexpr int kSlotBits = 4, kSlots = 1 << kSlotBits;  // destinations 0..7, then the pad slot 15
constexpr int kSamplesPerRank = 4096;    // a rank's share of the splitters: sizes vary by about 1/sqrt(4096)
constexpr size_t kExactKeysLimit = size_t{1} << 27;  // keys alone: exact against the host sort up to here

// A key as the splitters see it: its rank in common's order and its global
// index (rank g's key i is base(g) + i). No two keys are then equal, so keys
// equal to a splitter go to ranks by (key, global index), and an all-equal
// input is split evenly too.
struct Sample {
    uint32_t rank, unused;
    uint64_t index;
};
struct SampleLess {
    __host__ __device__ bool operator()(const Sample& x, const Sample& y) const {
        return x.rank < y.rank || (x.rank == y.rank && x.index < y.index);
    }
};
constexpr Sample kPastEveryKey{0xFFFFFFFFu, 0, ~uint64_t{0}};

// The gathered samples sorted by (rank, index), from `samples` into `sorted` (temp == nullptr: the bytes
// it needs): CUB's radix sort, told the two fields by a decomposer (CUB 2.1 on). Not CUB's merge sort:
// since it launches its kernels early on sm_90 (programmatic dependent launch; CCCL 3.0.1 in CUDA 13.0
// here), its merge kernel can load its partitions before the kernel writing them has finished
// (NVIDIA/cccl#5297, mended upstream by PR 5456), and ranks sharing an H100 faulted in about a quarter of
// loaded runs (NOTES.md, 2026-12-05). CUB 2.0 (CUDA 12.0, 12.1) has no decomposer and keeps the merge
// sort, which there launches no kernel early.
#if CUB_VERSION >= 200100
struct SampleFields {
    __host__ __device__ cuda::std::tuple<uint32_t&, uint64_t&> operator()(Sample& s) const { return {s.rank, s.index}; }
};
#endif
inline cudaError_t sortSamples(void* temp, size_t& bytes, const Sample* samples, Sample* sorted, int count,
                               cudaStream_t stream = 0) {
#if CUB_VERSION >= 200100
    return cub::DeviceRadixSort::SortKeys(temp, bytes, samples, sorted, count, SampleFields(), stream);
#else
    return cub::DeviceMergeSort::SortKeysCopy(temp, bytes, samples, sorted, count, SampleLess(), stream);
#endif
}

// The ranks - 1 splitters, sorted, padded to kMaxRanks - 1 with kPastEveryKey.
struct Splitters {
    uint32_t rank[kMaxRanks - 1];   // each splitter's key rank
    uint64_t index[kMaxRanks - 1];  // and its global index
};

// Rank g's sample i: a hashed position of its part (sample_sort's samplePosition). An empty part's
// samples are kPastEveryKey: they sort last, and the ranks they would choose receive nothing.
template <class Key>
__host__ __device__ inline Sample sampleOf(const Key* keys, size_t n, uint64_t base, uint32_t flip, int i) {
    if (n == 0) return kPastEveryKey;
    const size_t at = samplePosition(Segment{base, n, 0, 0, 0}, 0, i);
    return {rankOf(keys[at - base], flip), 0, at};
}

// From every rank's samples, sorted: splitter j at the (j + 1) / ranks quantile.
__host__ __device__ inline void chooseSplitters(const Sample* sorted, size_t count, int ranks, Splitters& s) {
    for (int j = 0; j < kMaxRanks - 1; ++j) {
        const Sample x = j < ranks - 1 && count > 0 ? sorted[(j + 1) * count / ranks] : kPastEveryKey;
        s.rank[j] = x.rank;
        s.index[j] = x.index;
    }
}

// The rank a key goes to: the count of splitters (rank, index) <= its own, the seed's bucketOf with the global index
// breaking ties. All 7 are compared, with no branch: so few splitters need no search.
__host__ __device__ inline unsigned destinationOf(const Splitters& s, uint32_t rank, uint64_t index) {
    unsigned d = 0;
    for (int j = 0; j < kMaxRanks - 1; ++j) d += s.rank[j] < rank || (s.rank[j] == rank && s.index[j] <= index);
    return d;
}

// The exchange, planned on the host from the send counts (rank g sends
// send[g][d] keys to rank d). Rank g's send buffer holds them destination by
// destination, from from[g][d]; rank d puts them at to[d][g], after what
// lower ranks send it, so what it receives is in global-index order:
// received[d] keys, whose sorted run starts at global position first[d].
// Both transports run this plan.
struct ExchangePlan {
    size_t send[kMaxRanks][kMaxRanks] = {}, from[kMaxRanks][kMaxRanks] = {}, to[kMaxRanks][kMaxRanks] = {};
    size_t received[kMaxRanks] = {}, first[kMaxRanks] = {};
};
inline ExchangePlan planExchange(const size_t (&send)[kMaxRanks][kMaxRanks], int ranks) {
    ExchangePlan x;
    for (int g = 0; g < ranks; ++g) {
        size_t at = 0;
        for (int d = 0; d < ranks; ++d) x.send[g][d] = send[g][d], x.from[g][d] = at, at += send[g][d];
    }
    size_t position = 0;
    for (int d = 0; d < ranks; ++d) {
        x.first[d] = position;
        for (int g = 0; g < ranks; ++g) x.to[d][g] = x.received[d], x.received[d] += send[g][d];
        position += x.received[d];
    }
    return x;
}

// ================================================================= kernels

template <class Key>
__global__ void sampleKernel(const Key* keys, size_t n, uint64_t base, uint32_t flip, Sample* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < kSamplesPerRank) out[i] = sampleOf(keys, n, base, flip, i);
}

__global__ void splittersKernel(const Sample* sorted, size_t count, int ranks, Splitters* s) {
    chooseSplitters(sorted, count, ranks, *s);
}

__device__ inline void loadSplitters(const Splitters* from, Splitters& to) {
    static_assert(sizeof(Splitters) % 4 == 0, "copied as words");
    for (unsigned w = threadIdx.x; w < sizeof(Splitters) / 4; w += blockDim.x)
        reinterpret_cast<uint32_t*>(&to)[w] = reinterpret_cast<const uint32_t*>(from)[w];
    __syncthreads();
}

// The bucket phase is sample_sort's histogram, scan and scatter with a rank
// for a bucket: tiles of Tuning::tileKeys keys, counts destination-major
// (destination d of every tile, then d + 1), so one exclusive scan gives
// each (tile, destination) its place in the send buffer, in input order.
template <class Key>
__global__ void __launch_bounds__(Tuning::nt) destinationHistogramKernel(const Key* keys, size_t n, uint64_t base,
    uint32_t flip, const Splitters* splitters, int ranks, uint64_t* counts) {
    __shared__ Splitters s;
    __shared__ unsigned warpCounts[Tuning::warps * kSlots];
    for (int i = threadIdx.x; i < Tuning::warps * kSlots; i += Tuning::nt) warpCounts[i] = 0;
    loadSplitters(splitters, s);
    const size_t begin = static_cast<size_t>(blockIdx.x) * Tuning::tileKeys, end = smaller(begin + Tuning::tileKeys, n);
    countTile(begin, end, warpCounts + (threadIdx.x >> 5) * kSlots, kSlots - 1,
              [&](size_t i) { return keys[i]; },
              [&](Key key, size_t i) { return destinationOf(s, rankOf(key, flip), base + i); });
    __syncthreads();
    for (int d = threadIdx.x; d < ranks; d += Tuning::nt) {
        unsigned sum = 0;
        for (int w = 0; w < Tuning::warps; ++w) sum += warpCounts[w * kSlots + d];
        counts[static_cast<size_t>(d) * gridDim.x + blockIdx.x] = sum;
    }
}

template <class Key, bool kPairs>
__global__ void __launch_bounds__(Tuning::nt) destinationScatterKernel(const Key* keys, const uint32_t* values,
    size_t n, uint64_t base, uint32_t flip, const Splitters* splitters, int ranks, const uint64_t* offsets,
    Key* sendKeys, uint32_t* sendValues) {
    __shared__ Splitters s;
    __shared__ unsigned warpCounts[Tuning::warps * kSlots], totals[kSlots], starts[kSlots], scratch[32];
    __shared__ uint64_t place[kSlots];
    __shared__ Key stageKeys[Tuning::nv];
    __shared__ uint32_t stageValues[kPairs ? Tuning::nv : 1];
    __shared__ uint8_t stageDest[Tuning::nv];
    for (int d = threadIdx.x; d < kSlots; d += Tuning::nt)
        place[d] = d < ranks ? offsets[static_cast<size_t>(d) * gridDim.x + blockIdx.x] : 0;
    loadSplitters(splitters, s);
    const size_t begin = static_cast<size_t>(blockIdx.x) * Tuning::tileKeys, end = smaller(begin + Tuning::tileKeys, n);
    unsigned* mine = warpCounts + (threadIdx.x >> 5) * kSlots;
    for (size_t chunk = begin; chunk < end; chunk += Tuning::nv) {
        const unsigned len = static_cast<unsigned>(smaller(end - chunk, Tuning::nv));
        for (int i = threadIdx.x & 31; i < kSlots; i += 32) mine[i] = 0;
        __syncthreads();  // the last chunk's writes are done
        Key key[Tuning::vt];
        uint32_t value[Tuning::vt];
        unsigned rank[Tuning::vt];  // each key's destination, then rank << kSlotBits | destination
        DEVICE_UNROLL
        for (int j = 0; j < Tuning::vt; ++j) {
            const unsigned p = stripedPosition<Tuning::vt>(j);
            key[j] = p < len ? keys[chunk + p] : Key{};
            if (kPairs) value[j] = p < len ? values[chunk + p] : 0;
            rank[j] = p < len ? destinationOf(s, rankOf(key[j], flip), base + chunk + p) : kSlots - 1;  // pads last
        }
        // Input order within a destination (keys alone too): the sort stays stable. The select, as sample_sort's key-value
        // scatter: that scatter ran slower by the sign mask (sample_sort.cu's matchPeers).
        warpRank<kSlotBits, kSlotBits, /*kSelect=*/true>(rank, mine);
        __syncthreads();
        chunkOffsets<Tuning::nt>(warpCounts, kSlots, totals, starts, scratch);
        DEVICE_UNROLL
        for (int j = 0; j < Tuning::vt; ++j) {
            const unsigned d = rank[j] & (kSlots - 1), p = starts[d] + mine[d] + (rank[j] >> kSlotBits);
            stageKeys[p] = key[j];
            if (kPairs) stageValues[p] = value[j];
            stageDest[p] = static_cast<uint8_t>(d);
        }
        __syncthreads();
        for (unsigned i = threadIdx.x; i < len; i += Tuning::nt) {
            const unsigned d = stageDest[i];
            const size_t to = place[d] + (i - starts[d]);
            sendKeys[to] = stageKeys[i];
            if (kPairs) sendValues[to] = stageValues[i];
        }
        __syncthreads();
        for (int d = threadIdx.x; d < kSlots; d += Tuning::nt) place[d] += totals[d];
    }
}

// ============================================================ the pipeline

// The ranks: rank r runs on visible GPU r % GPUs, with a stream of its own
// and an event that marks where its stream has got to. The transport of the
// two collectives (the samples' all-gather, the keys' all-to-all): NCCL
// where every rank has a GPU of its own; device copies (cudaMemcpyPeerAsync
// on the receiving rank's stream, after the senders' events) where ranks
// share a GPU, which NCCL before 2.30 refuses. The plan is the same for both.
struct Ranks {
    int count = 0;
    bool nccl = false;
    std::vector<int> device;
    std::vector<ncclComm_t> comms;
    std::vector<cudaStream_t> streams;
    std::vector<cudaEvent_t> marks;
    Ranks(const Ranks&) = delete;  // one owner: the destructor frees the communicators
    Ranks& operator=(const Ranks&) = delete;
    Ranks(int ranks, int gpus) : count(ranks), nccl(ranks <= gpus), device(ranks), streams(ranks), marks(ranks) {
        for (int r = 0; r < ranks; ++r) device[r] = r % gpus;
        if (nccl) {
            comms.resize(ranks);
            NCCL_CHECK(ncclCommInitAll(comms.data(), ranks, device.data()));
        }
        for (int r = 0; r < ranks; ++r) {
            CUDA_CHECK(cudaSetDevice(device[r]));
            CUDA_CHECK(cudaStreamCreate(&streams[r]));
            CUDA_CHECK(cudaEventCreateWithFlags(&marks[r], cudaEventDisableTiming));
        }
    }
    ~Ranks() {
        for (int r = 0; r < count; ++r) {
            cudaSetDevice(device[r]), cudaEventDestroy(marks[r]), cudaStreamDestroy(streams[r]);
            if (nccl) ncclCommDestroy(comms[r]);
        }
    }
    int sharing(int r) const {  // the ranks on rank r's GPU
        return static_cast<int>(std::count(device.begin(), device.end(), device[r]));
    }
    const char* transport() const { return nccl ? "NCCL" : "device copies (ranks share a GPU)"; }
};

// One rank's share: its n keys (values: their global indices) from global
// index base on, what it sends, what it receives (sorted there by
// sample_sort, with its scratch).
template <class Key>
struct Part {
    int device = 0;
    ncclComm_t comm = nullptr;    // the process's, from Ranks (none with device copies)
    cudaStream_t stream = nullptr;
    cudaEvent_t mark = nullptr;
    size_t n = 0, tiles = 0;      // keys, and histogram tiles of Tuning::tileKeys
    uint64_t base = 0;            // its first key's global index
    DeviceBuffer<Key> keys, sendKeys;
    DeviceBuffer<uint32_t> values, sendValues;
    DeviceBuffer<Sample> samples, sorted;  // every rank's, after the all-gather; and sorted
    DeviceBuffer<Splitters> splitters;
    DeviceBuffer<uint64_t> counts, offsets;
    DeviceBuffer<unsigned char> temp;  // CUB's scan and the samples' sort
    SortBuffers<Key> recv;  // what arrives (in, vin) and, sorted, the rank's share of the output (out, vout)
    SortScratch scratch;    // sample_sort's
    size_t capacity = 0;    // of recv and scratch
    explicit Part(bool pairs) { recv.pairs = pairs; }
};

enum Phase { kSample, kSplitters, kBucket, kExchange, kLocalSort, kPhases };
const char* const kPhaseNames[kPhases] = {"sample", "splitters", "bucket", "exchange", "local sort"};

// One sort's ranks: each one's part of the keys and its buffers, and the exchange's plan.
template <class Key>
struct Cluster {
    int ranks = 0;
    bool pairs = false, nccl = false;
    uint32_t flip = 0;
    SortConfig config{Tuning::maxDepth, 0};
    std::vector<std::unique_ptr<Part<Key>>> parts;
    ExchangePlan plan;

    template <class F>
    void onEachRank(F f) {
        for (int g = 0; g < ranks; ++g) {
            CUDA_CHECK(cudaSetDevice(parts[g]->device));
            f(g, *parts[g]);
        }
    }
    void synchronize(const char* after) {  // a fault caught here names the step it followed
        onEachRank([after](int g, Part<Key>&) {
            const cudaError_t err = cudaDeviceSynchronize();
            if (err != cudaSuccess)
                failCuda(err, ("cudaDeviceSynchronize() after " + std::string(after) + ", rank " + std::to_string(g)).c_str(),
                         __FILE__, __LINE__);
        });
    }
    void markAll() {  // each rank's event after the work its stream holds
        onEachRank([](int, Part<Key>& p) { CUDA_CHECK(cudaEventRecord(p.mark, p.stream)); });
    }
    ~Cluster() {  // each rank's buffers freed on its GPU
        for (auto& p : parts) cudaSetDevice(p->device), p.reset();
    }
};

inline size_t cubTempBytes(size_t tiles, int ranks) {
    size_t scan = 0, sort = 0;
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan, static_cast<uint64_t*>(nullptr), static_cast<uint64_t*>(nullptr),
                                             tiles * ranks));
    CUDA_CHECK(sortSamples(nullptr, sort, nullptr, nullptr, kSamplesPerRank * ranks));
    return std::max(scan, sort);
}

// Every rank of `ranks`, counts[r] keys each: rank r holds the input's next counts[r] keys.
template <class Key>
void setUp(Cluster<Key>& c, const Ranks& ranks, const std::vector<size_t>& counts, bool pairs, bool descending,
           const std::vector<Key>& input) {
    c.ranks = ranks.count, c.pairs = pairs, c.nccl = ranks.nccl, c.flip = descending ? ~0u : 0u;
    uint64_t base = 0;
    for (int g = 0; g < c.ranks; ++g) {
        c.parts.push_back(std::make_unique<Part<Key>>(pairs));
        Part<Key>& p = *c.parts[g];
        p.device = ranks.device[g], p.comm = ranks.nccl ? ranks.comms[g] : nullptr, p.stream = ranks.streams[g];
        p.mark = ranks.marks[g], p.n = counts[g], p.tiles = ceilDiv(p.n, Tuning::tileKeys), p.base = base;
        base += p.n;
    }
    CUDA_CHECK(cudaSetDevice(0));
    c.config.cap = largestTier(queryDevice(), pairs);  // one host's GPUs: device 0 speaks for all
    c.onEachRank([&](int, Part<Key>& p) {
        p.keys.allocate(p.n), p.sendKeys.allocate(p.n);
        p.keys.upload(input.data() + p.base, p.n);
        if (pairs) {
            p.values.allocate(p.n), p.sendValues.allocate(p.n);
            std::vector<uint32_t> global(p.n);
            for (size_t i = 0; i < p.n; ++i) global[i] = static_cast<uint32_t>(p.base + i);
            p.values.upload(global.data(), p.n);
        }
        p.samples.allocate(size_t{kSamplesPerRank} * c.ranks), p.sorted.allocate(size_t{kSamplesPerRank} * c.ranks);
        p.splitters.allocate(1);
        p.counts.allocate(p.tiles * c.ranks + 1), p.offsets.allocate(p.tiles * c.ranks + 1);
        p.temp.allocate(std::max<size_t>(cubTempBytes(p.tiles, c.ranks), 1));  // a null pointer would mean "size query"
    });
    c.synchronize("the set-up");
}

// Before a checked sort: every buffer the sort writes (the bucketed keys,
// what arrives, the output) holds the poison, so a write left out shows.
template <class Key>
void poisonAll(Cluster<Key>& c) {
    c.onEachRank([](int, Part<Key>& p) {
        p.sendKeys.poison(), p.sendValues.poison(), p.recv.in.poison(), p.recv.vin.poison();
        p.recv.poison();
    });
}

// Grows rank g's receive side (and sample_sort's scratch) to hold m keys.
template <class Key>
void reserveReceive(Cluster<Key>& c, Part<Key>& p, size_t m) {
    if (m <= p.capacity && p.capacity) return;
    p.recv.in.allocate(m), p.recv.out.allocate(m);
    if (c.pairs) p.recv.vin.allocate(m), p.recv.vout.allocate(m);
    p.scratch.reserve(m, c.pairs, ScratchSizes(m, c.config));  // sized for m: enough for any count up to m
    p.capacity = m;
}

// The device-copy transport: every receiving rank's stream waits on every
// rank's mark (set after the work its stream holds), then enqueues
// copy(d, receiver, g, sender) for each sender g.
template <class Key, class Copy>
void copyFromEveryRank(Cluster<Key>& c, Copy copy) {
    c.markAll();
    c.onEachRank([&](int d, Part<Key>& p) {
        for (int g = 0; g < c.ranks; ++g) {
            CUDA_CHECK(cudaStreamWaitEvent(p.stream, c.parts[g]->mark, 0));
            copy(d, p, g, *c.parts[g]);
        }
    });
}

// The samples' all-gather: rank g's kSamplesPerRank at g * kSamplesPerRank in every rank's buffer.
template <class Key>
void gatherSamples(Cluster<Key>& c) {
    const size_t per = kSamplesPerRank;
    if (c.nccl) {
        NCCL_CHECK(ncclGroupStart());  // one thread drives every rank: their calls go in one group
        c.onEachRank([&](int g, Part<Key>& p) {
            NCCL_CHECK(ncclAllGather(p.samples.get() + per * g, p.samples.get(), per * sizeof(Sample), ncclUint8, p.comm,
                                     p.stream));
        });
        NCCL_CHECK(ncclGroupEnd());
        return;
    }
    copyFromEveryRank(c, [&](int d, Part<Key>& p, int g, const Part<Key>& from) {
        if (g != d)
            CUDA_CHECK(cudaMemcpyPeerAsync(p.samples.get() + per * g, p.device, from.samples.get() + per * g, from.device,
                                           per * sizeof(Sample), p.stream));
    });
}

// The exchange: what plan x says, from the send buffers into the receive buffers (keys, then values).
template <class Key>
void exchange(Cluster<Key>& c, const ExchangePlan& x) {
    static_assert(sizeof(Key) == 4, "keys travel as 32-bit words");
    auto sendOf = [&](const Part<Key>& p, bool values) {
        return values ? p.sendValues.get() : reinterpret_cast<uint32_t*>(p.sendKeys.get());
    };
    auto recvOf = [&](const Part<Key>& p, bool values) {
        return values ? p.recv.vin.get() : reinterpret_cast<uint32_t*>(p.recv.in.get());
    };
    if (c.nccl) {
        NCCL_CHECK(ncclGroupStart());
        c.onEachRank([&](int g, Part<Key>& p) {
            for (int values = 0; values <= int{c.pairs}; ++values)
                for (int q = 0; q < c.ranks; ++q) {
                    NCCL_CHECK(ncclSend(sendOf(p, values) + x.from[g][q], x.send[g][q], ncclUint32, q, p.comm, p.stream));
                    NCCL_CHECK(ncclRecv(recvOf(p, values) + x.to[g][q], x.send[q][g], ncclUint32, q, p.comm, p.stream));
                }
        });
        NCCL_CHECK(ncclGroupEnd());
        return;
    }
    copyFromEveryRank(c, [&](int d, Part<Key>& p, int g, const Part<Key>& from) {
        for (int values = 0; values <= int{c.pairs} && x.send[g][d]; ++values)
            CUDA_CHECK(cudaMemcpyPeerAsync(recvOf(p, values) + x.to[d][g], p.device, sendOf(from, values) + x.from[g][d],
                                           from.device, x.send[g][d] * sizeof(uint32_t), p.stream));
    });
}

using Clock = std::chrono::steady_clock;
inline double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// One sort across every rank; each phase ends when every rank has finished
// it (host clock), so the times add up to the sort's.
template <class Key>
std::array<double, kPhases> sortAcross(Cluster<Key>& c) {
    std::array<double, kPhases> ms{};
    const int ranks = c.ranks;
    const size_t sampleCount = size_t{kSamplesPerRank} * ranks;
    auto t0 = Clock::now();
    c.onEachRank([&](int g, Part<Key>& p) {
        sampleKernel<<<ceilDiv(kSamplesPerRank, 256), 256, 0, p.stream>>>(p.keys.get(), p.n, p.base, c.flip,
                                                                          p.samples.get() + size_t{kSamplesPerRank} * g);
        CUDA_CHECK_LAUNCH("sampleKernel");
    });
    c.synchronize("the sample phase");
    ms[kSample] = msSince(t0), t0 = Clock::now();

    gatherSamples(c);
    c.onEachRank([&](int, Part<Key>& p) {  // every rank sorts the same samples: the same splitters everywhere
        size_t bytes = p.temp.size();
        CUDA_CHECK(sortSamples(p.temp.get(), bytes, p.samples.get(), p.sorted.get(), static_cast<int>(sampleCount), p.stream));
        splittersKernel<<<1, 1, 0, p.stream>>>(p.sorted.get(), sampleCount, ranks, p.splitters.get());
        CUDA_CHECK_LAUNCH("splittersKernel");
    });
    c.synchronize("the splitters phase");
    ms[kSplitters] = msSince(t0), t0 = Clock::now();

    c.onEachRank([&](int, Part<Key>& p) {
        if (p.n == 0) return;
        const unsigned grid = gridFor(p.n, Tuning::tileKeys, "destinationHistogramKernel");
        destinationHistogramKernel<<<grid, Tuning::nt, 0, p.stream>>>(p.keys.get(), p.n, p.base, c.flip, p.splitters.get(),
                                                                      ranks, p.counts.get());
        CUDA_CHECK_LAUNCH("destinationHistogramKernel");
        size_t bytes = p.temp.size();
        CUDA_CHECK(cub::DeviceScan::ExclusiveSum(p.temp.get(), bytes, p.counts.get(), p.offsets.get(), p.tiles * ranks, p.stream));
        if (c.pairs)
            destinationScatterKernel<Key, true><<<grid, Tuning::nt, 0, p.stream>>>(
                p.keys.get(), p.values.get(), p.n, p.base, c.flip, p.splitters.get(), ranks, p.offsets.get(),
                p.sendKeys.get(), p.sendValues.get());
        else
            destinationScatterKernel<Key, false><<<grid, Tuning::nt, 0, p.stream>>>(
                p.keys.get(), nullptr, p.n, p.base, c.flip, p.splitters.get(), ranks, p.offsets.get(), p.sendKeys.get(),
                nullptr);
        CUDA_CHECK_LAUNCH("destinationScatterKernel");
    });
    size_t send[kMaxRanks][kMaxRanks] = {};
    c.onEachRank([&](int g, Part<Key>& p) {  // each destination's first place: one row of the scanned counts
        uint64_t starts[kMaxRanks] = {};
        if (p.n) CUDA_CHECK(cudaMemcpy2DAsync(starts, sizeof(uint64_t), p.offsets.get(), p.tiles * sizeof(uint64_t),
                                              sizeof(uint64_t), ranks, cudaMemcpyDeviceToHost, p.stream));
        CUDA_CHECK(cudaStreamSynchronize(p.stream));
        for (int d = 0; d < ranks; ++d) send[g][d] = (d + 1 < ranks ? starts[d + 1] : p.n) - starts[d];
    });
    c.plan = planExchange(send, ranks);
    c.onEachRank([&](int g, Part<Key>& p) { reserveReceive(c, p, c.plan.received[g]); });  // allocates on the first sort only
    ms[kBucket] = msSince(t0), t0 = Clock::now();

    exchange(c, c.plan);
    c.synchronize("the exchange");
    ms[kExchange] = msSince(t0), t0 = Clock::now();

    // sample_sort waits on the host once a level: a thread a rank, so they overlap.
    std::vector<std::thread> threads;
    for (int g = 0; g < ranks; ++g)
        threads.emplace_back([&c, g] {
            Part<Key>& p = *c.parts[g];
            CUDA_CHECK(cudaSetDevice(p.device));
            sampleSort(p.scratch, sortWordsOf(p.recv, c.plan.received[g], c.flip != 0), c.config);
            CUDA_CHECK(cudaDeviceSynchronize());
        });
    for (auto& t : threads) t.join();
    ms[kLocalSort] = msSince(t0);
    return ms;
}

// The collective all-to-all on the same buffers and bytes, in equal parts:
// the exchange's yardstick (NCCL's, or the device copies where ranks share a
// GPU). Returns the median time (ms).
template <class Key>
double allToAllMs(Cluster<Key>& c, const TimingPlan& timing) {
    size_t total = 0;
    for (const auto& p : c.parts) total += p->n;
    const size_t per = total / c.ranks / c.ranks;
    size_t send[kMaxRanks][kMaxRanks] = {};
    for (int g = 0; g < c.ranks; ++g)
        for (int d = 0; d < c.ranks; ++d) send[g][d] = std::min(per, c.parts[g]->n / c.ranks);
    const ExchangePlan equal = planExchange(send, c.ranks);
    c.onEachRank([&](int g, Part<Key>& p) { reserveReceive(c, p, equal.received[g]); });  // a rank may have received less
    std::vector<double> times;
    for (int r = -timing.warmups; r < timing.repeats; ++r) {
        const auto t0 = Clock::now();
        exchange(c, equal);
        c.synchronize("the all-to-all yardstick");
        if (r >= 0) times.push_back(msSince(t0));
    }
    std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
    return times[times.size() / 2];
}

// ================================================================== checks

// Two 64-bit sums of mixed ranks: the same for any order of the same keys;
// a key lost or doubled changes them (but for a chance near 2^-64 each).
struct Fingerprint {
    uint64_t a = 0, b = 0;
    void add(uint32_t rank) {
        const uint64_t z = mix64(rank * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull);
        a += z;
        b += mix64(z);
    }
    bool operator==(const Fingerprint& o) const { return a == o.a && b == o.b; }
};

// The parts, in rank order, against the input. Sorted across them (rank g's
// last key <= rank g + 1's first). With values: each is its key's global
// index, each index once, ascending among equal keys -- which leaves only
// the stable order. Keys alone: exact against the host's stable sort up to
// kExactKeysLimit keys, past it the same multiset by Fingerprint.
// (quiet: the selftest's planted errors, caught without a line each.)
template <class Key>
bool partsMatch(const std::string& what, const std::vector<Key>& input, const std::vector<std::vector<Key>>& keys,
                const std::vector<std::vector<uint32_t>>& values, bool pairs, bool descending, bool quiet = false) {
    const uint32_t flip = descending ? ~0u : 0u;
    auto say = [&](const char* format, auto... args) {
        if (!quiet) std::printf(format, args...);
    };
    size_t total = 0;
    for (const auto& k : keys) total += k.size();
    for (size_t g = 0; pairs && g < keys.size(); ++g)
        if (values[g].size() != keys[g].size()) {
            say("%s: rank %zu holds %zu keys but %zu values\n", what.c_str(), g, keys[g].size(), values[g].size());
            return false;
        }
    if (total != input.size()) {
        say("%s: the ranks hold %zu keys, the input has %zu\n", what.c_str(), total, input.size());
        return false;
    }
    std::vector<uint8_t> seen(pairs ? total : 0);
    Fingerprint in, out;
    bool havePrevious = false;
    uint32_t previous = 0, previousValue = 0;
    for (size_t g = 0; g < keys.size(); ++g)
        for (size_t i = 0; i < keys[g].size(); ++i) {
            const uint32_t r = rankOf(keys[g][i], flip);
            auto where = [&] { return what + ": rank " + std::to_string(g) + " position " + std::to_string(i); };  // on a failure only
            if (havePrevious && r < previous) {
                say("%s: key %s after a larger one (%s)\n", where().c_str(), formatKey(keys[g][i]).c_str(),
                            i == 0 ? "the ranks are out of order" : "not sorted");
                return false;
            }
            if (pairs) {
                const uint32_t v = values[g][i];
                if (v >= total || seen[v] || !sameBits(input[v], keys[g][i]) || (havePrevious && r == previous && v < previousValue)) {
                    say("%s: value %u with key %s: %s\n", where().c_str(), v, formatKey(keys[g][i]).c_str(),
                                v >= total ? "no such input index" : seen[v] ? "an input index twice"
                                : !sameBits(input[v], keys[g][i]) ? "not that index's key" : "equal keys out of input order (unstable)");
                    return false;
                }
                seen[v] = 1;
                previousValue = v;
            }
            out.add(r);
            previous = r, havePrevious = true;
        }
    if (pairs) return true;
    if (total <= kExactKeysLimit) {
        const SortReference<Key> want = referenceSort(input, descending);
        for (size_t g = 0, at = 0; g < keys.size(); ++g)
            for (size_t i = 0; i < keys[g].size(); ++i, ++at)
                if (!sameBits(keys[g][i], want.keys[at])) {
                    say("%s: rank %zu position %zu: key %s, the host's sort has %s\n", what.c_str(), g, i,
                        formatKey(keys[g][i]).c_str(), formatKey(want.keys[at]).c_str());
                    return false;
                }
        return true;
    }
    for (const Key& k : input) in.add(rankOf(k, flip));
    if (!(in == out)) say("%s: sorted, but not the input's keys (their fingerprints differ)\n", what.c_str());
    return in == out;
}

template <class Key>
bool clusterMatches(const std::string& what, Cluster<Key>& c, const std::vector<Key>& input, bool descending) {
    std::vector<std::vector<Key>> keys(c.ranks);
    std::vector<std::vector<uint32_t>> values(c.ranks);
    c.onEachRank([&](int g, Part<Key>& p) {
        const size_t m = c.plan.received[g];
        keys[g].resize(m);
        p.recv.out.download(keys[g].data(), m);
        if (c.pairs) values[g].resize(m), p.recv.vout.download(values[g].data(), m);
    });
    return partsMatch(what, input, keys, values, c.pairs, descending);
}

// =================================================================== selftest

// The send counts (rank g to rank d) the bucket kernels must find, from the
// same sampleOf, chooseSplitters and destinationOf, and each key's
// destination; rank g holds the input's next counts[g] keys.
template <class Key>
void hostPlan(const std::vector<Key>& input, const std::vector<size_t>& counts, bool descending,
              size_t (&send)[kMaxRanks][kMaxRanks], std::vector<unsigned>& dest) {
    const int ranks = static_cast<int>(counts.size());
    const uint32_t flip = descending ? ~0u : 0u;
    std::vector<Sample> samples;
    size_t base = 0;
    for (int g = 0; g < ranks; base += counts[g], ++g)
        for (int i = 0; i < kSamplesPerRank; ++i) samples.push_back(sampleOf(input.data() + base, counts[g], base, flip, i));
    std::sort(samples.begin(), samples.end(), SampleLess());
    Splitters s;
    chooseSplitters(samples.data(), samples.size(), ranks, s);
    dest.assign(input.size(), 0);
    for (auto& row : send) for (auto& x : row) x = 0;
    for (size_t i = 0, g = 0, end = counts[0]; i < input.size(); ++i) {
        while (i >= end) end += counts[++g];
        ++send[g][dest[i] = destinationOf(s, rankOf(input[i], flip), i)];
    }
}

// Keys a rank, total keys split over ranks: evenly (the first total % ranks
// one more), or all on the last rank, the others empty.
inline std::vector<size_t> splitKeys(size_t total, int ranks, bool allOnLast) {
    std::vector<size_t> counts(ranks, 0);
    for (int g = 0; g < ranks; ++g)
        counts[g] = allOnLast ? (g == ranks - 1 ? total : 0) : total / ranks + (static_cast<size_t>(g) < total % ranks);
    return counts;
}

// The plan against its definition, by intervals (counts past 2^32 cannot be
// laid out for real): every sender's ranges tile its send buffer in
// destination order, every receiver's tile what it receives in sender order,
// and the receivers' runs tile the output in rank order.
inline bool planHolds(const size_t (&send)[kMaxRanks][kMaxRanks], int ranks) {
    const ExchangePlan x = planExchange(send, ranks);
    size_t position = 0, sent = 0;
    bool ok = true;
    for (int g = 0; g < ranks; ++g) {
        size_t at = 0;
        for (int d = 0; d < ranks; ++d) ok = ok && x.send[g][d] == send[g][d] && x.from[g][d] == at, at += send[g][d], sent += send[g][d];
    }
    for (int d = 0; d < ranks; ++d) {
        size_t at = 0;
        for (int g = 0; g < ranks; ++g) ok = ok && x.to[d][g] == at, at += send[g][d];
        ok = ok && x.received[d] == at && x.first[d] == position;
        position += at;
    }
    return ok && position == sent;
}

int runSelftest() {
    SplitMix64 rng(13);
    // destinationOf against a plain count of the splitters <= (rank, index), with ties everywhere.
    for (int ranks = 1; ranks <= kMaxRanks; ++ranks) {
        std::vector<Sample> sample(64);
        for (auto& x : sample) x = {0xFFFFFFFCu + static_cast<uint32_t>(rng.next() % 4), 0, rng.next() % 100};  // pads' rank too
        std::sort(sample.begin(), sample.end(), SampleLess());
        Splitters s;
        chooseSplitters(sample.data(), sample.size(), ranks, s);
        bool ok = true;
        for (uint32_t r = 0xFFFFFFFBu; r != 0; ++r)  // 0xFFFFFFFB..0xFFFFFFFF
            for (uint64_t index = 0; index < 101; ++index) {
                unsigned want = 0;
                for (int j = 0; j < ranks - 1; ++j)
                    want += !SampleLess()({r, 0, index}, sample[(j + 1) * sample.size() / ranks]);
                ok = ok && destinationOf(s, r, index) == want;
            }
        expect(ok, "destinationOf counts the splitters <= (rank, index), " + std::to_string(ranks) + " ranks");
    }
    // Balance, ties included: every distribution, 8 ranks; and the exchange plan.
    for (const SortShape shape : {SortShape::Uniform, SortShape::AllEqual, SortShape::FewDistinct, SortShape::Sorted,
                                  SortShape::Zipf}) {
        const int ranks = 8;
        const size_t n = 20000;
        const auto input = makeSortInput<uint32_t>(shape, ranks * n);
        size_t send[kMaxRanks][kMaxRanks];
        std::vector<unsigned> dest;
        hostPlan(input, splitKeys(input.size(), ranks, false), false, send, dest);
        const ExchangePlan x = planExchange(send, ranks);
        size_t largest = 0, sum = 0;
        for (int d = 0; d < ranks; ++d) largest = std::max(largest, x.received[d]), sum += x.received[d];
        const std::string name = sortShapeName(shape);
        expect(sum == input.size(), name + ": every key received once");
        expect(largest <= n + n / 10, name + ": largest rank within 10 % of the mean, got " + std::to_string(largest));
        bool ordered = true;  // every key of rank d before every key of rank d + 1, by (key, index)
        uint32_t maxBelow[kMaxRanks + 1] = {}, minHere[kMaxRanks] = {};
        for (int d = 0; d < ranks; ++d) minHere[d] = 0xFFFFFFFFu;
        for (size_t i = 0; i < input.size(); ++i)
            maxBelow[dest[i] + 1] = std::max(maxBelow[dest[i] + 1], input[i]), minHere[dest[i]] = std::min(minHere[dest[i]], input[i]);
        for (int d = 1; d < ranks; ++d) ordered = ordered && (x.received[d] == 0 || maxBelow[d] <= minHere[d]);
        expect(ordered, name + ": rank d's keys precede rank d + 1's");
        expect(planHolds(send, ranks), name + ": the exchange plan tiles every buffer");
    }
    // Empty ranks: every key on the last rank, and fewer keys than ranks. Each
    // key still goes where the splitters say, and the plan still holds.
    for (int ranks = 1; ranks <= kMaxRanks; ++ranks)
        for (size_t total : {size_t{0}, size_t{3}, size_t{5000}})
            for (bool allOnLast : {false, true}) {
                const auto input = makeSortInput<uint32_t>(SortShape::FewDistinct, total, total + ranks);
                size_t send[kMaxRanks][kMaxRanks];
                std::vector<unsigned> dest;
                const auto counts = splitKeys(total, ranks, allOnLast);
                if (total) hostPlan(input, counts, false, send, dest);
                else for (auto& row : send) for (auto& v : row) v = 0;
                size_t sent = 0;
                for (int g = 0; g < ranks; ++g)
                    for (int d = 0; d < ranks; ++d) sent += send[g][d];
                expect(sent == total && planHolds(send, ranks), std::to_string(ranks) + " ranks, " + std::to_string(total) +
                       (allOnLast ? " keys all on the last rank" : " keys split evenly") + ": every key sent once, the plan holds");
            }
    // Counts past 2^32: the plan's offsets and global positions in 64 bits,
    // 1 to 8 ranks, with ranks that send or receive nothing.
    {
        bool ok = true, past = false;
        for (int trial = 0; trial < 400 && ok; ++trial) {
            const int ranks = 1 + trial % kMaxRanks;
            size_t send[kMaxRanks][kMaxRanks] = {};
            for (int g = 0; g < ranks; ++g)
                for (int d = 0; d < ranks; ++d)
                    send[g][d] = rng.below(4) == 0 ? 0 : (size_t{1} << 31) + rng.below(size_t{1} << 32);
            if (ranks > 1) for (int g = 0; g < ranks; ++g) send[g][trial % ranks] = 0;  // a rank that receives nothing
            if (ranks > 1) for (int d = 0; d < ranks; ++d) send[(trial + 1) % ranks][d] = 0;  // one that sends nothing
            ok = planHolds(send, ranks);
            const ExchangePlan x = planExchange(send, ranks);  // (planHolds checks first[] against received[])
            past = past || x.first[ranks - 1] > (size_t{1} << 32);
        }
        expect(ok && past, "the exchange plan past 2^32 keys: offsets and global positions in 64 bits");
    }
    // The check itself: it takes the stable order and refuses each kind of
    // wrong answer (2 ranks x 2 keys; input 5 1 5 3, stable order 1 3 5 5
    // from indices 1 3 0 2).
    {
        const std::vector<uint32_t> in = {5, 1, 5, 3};
        using Keys = std::vector<std::vector<uint32_t>>;
        auto check = [&](const Keys& k, const Keys& v, bool pairs) { return partsMatch("", in, k, v, pairs, false, true); };
        expect(check({{1, 3}, {5, 5}}, {{1, 3}, {0, 2}}, true), "the check takes the stable order");
        expect(!check({{1, 3}, {5, 5}}, {{1, 3}, {2, 0}}, true), "the check refuses equal keys out of input order");
        expect(!check({{5, 5}, {1, 3}}, {{0, 2}, {1, 3}}, true), "the check refuses ranks out of order");
        expect(!check({{1, 3}, {5, 5}}, {{1, 3}, {0, 0}}, true), "the check refuses an index twice");
        expect(!check({{1, 3}, {5}}, {{1, 3}, {0}}, true), "the check refuses a lost key");
        expect(check({{1, 3}, {5, 5}}, {{}, {}}, false), "the check takes keys alone, sorted");
        expect(!check({{1, 3}, {3, 5}}, {{}, {}}, false), "the check refuses keys alone, sorted but not the input's");
        // Past kExactKeysLimit keys alone are held to the input by fingerprint.
        Fingerprint x, y, z;
        for (uint32_t r : {5u, 1u, 5u, 9u}) x.add(r);
        for (uint32_t r : {9u, 5u, 5u, 1u}) y.add(r);
        for (uint32_t r : {9u, 5u, 1u, 1u}) z.add(r);
        expect(x == y && !(x == z), "the fingerprint: the same keys in any order match, another multiset does not");
    }
    // All-equal keys split by position: rank d gets one stretch of global indices.
    {
        const auto input = makeSortInput<float>(SortShape::AllEqual, 4 * 1000);
        size_t send[kMaxRanks][kMaxRanks];
        std::vector<unsigned> dest;
        hostPlan(input, splitKeys(input.size(), 4, false), true, send, dest);
        expect(std::is_sorted(dest.begin(), dest.end()), "all-equal keys: destinations ascend with the index");
    }
    return selftestVerdict();
}

// =============================================================== the lesson

struct Options : SortOptions {  // the sort lessons', n being keys a rank, and the ranks
    int ranks = 0;
};

// The model beside a run of ranks that share a GPU: the same ranks on GPUs of
// their own. Sample and splitters as measured; bucket and local sort, which
// each rank runs on its own keys, at the measured time over the ranks that
// shared a GPU; the exchange at the link's peak, kLinkGbs a direction (NVLink
// 4 on an H100 or H200 SXM), for the (ranks - 1) / ranks of its bytes that
// leave a GPU. A prediction that a run on that many GPUs would have to show.
constexpr double kLinkGbs = 450;

// The median over runs of one phase (kPhases: the whole sort).
inline double medianPhase(const std::vector<std::array<double, kPhases>>& runs, int phase) {
    std::vector<double> v;
    for (const auto& t : runs) v.push_back(phase < kPhases ? t[phase] : std::accumulate(t.begin(), t.end(), 0.0));
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
}

template <class Key>
int runShape(const Options& o, const Run& run, const Ranks& ranks, SortShape shape, CsvFile& csv) {
    const int r = o.ranks, sharing = ranks.sharing(0);
    const size_t n = o.n, total = n * r;
    const auto input = makeSortInput<Key>(shape, total);
    const std::string label = sortCaseLabel<Key>(sortShapeName(shape), total, o.descending, o.pairs);
    double oneGpuMs = 0;
    if (run.timing && n) {  // one GPU's sample sort on a rank's n keys, checked, then timed like the phases
        CUDA_CHECK(cudaSetDevice(0));
        const std::vector<Key> slice(input.begin(), input.begin() + n);
        Problem<Key> one(slice, o.pairs, o.descending);
        const SortConfig config{Tuning::maxDepth, largestTier(run.device, o.pairs)};
        one.reserve(ScratchSizes(n, config));
        one.poison();
        sampleSort(one, config);
        CUDA_CHECK(cudaDeviceSynchronize());
        std::vector<std::vector<Key>> keys(1, std::vector<Key>(n));
        std::vector<std::vector<uint32_t>> values(1, std::vector<uint32_t>(o.pairs ? n : 0));
        one.d.out.download(keys[0].data(), n);
        if (o.pairs) one.d.vout.download(values[0].data(), n);
        if (!partsMatch("one GPU's sample sort, " + label, slice, keys, values, o.pairs, o.descending)) return kExitCheckFailed;
        std::vector<double> times;
        for (int rep = -run.plan.warmups; rep < run.plan.repeats; ++rep) {
            const auto t0 = Clock::now();
            sampleSort(one, config);
            CUDA_CHECK(cudaDeviceSynchronize());
            if (rep >= 0) times.push_back(msSince(t0));
        }
        std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
        oneGpuMs = times[times.size() / 2];
    }
    Cluster<Key> c;
    setUp(c, ranks, splitKeys(total, r, false), o.pairs, o.descending, input);
    sortAcross(c);  // sizes the receive side; then a poisoned, checked sort
    poisonAll(c);
    sortAcross(c);
    if (!clusterMatches(label, c, input, o.descending)) return kExitCheckFailed;
    size_t largest = 0;
    std::string perRank;
    for (int g = 0; g < r; ++g) largest = std::max(largest, c.plan.received[g]), perRank += " " + std::to_string(c.plan.received[g]);
    std::printf("\n%s on %d rank%s: sorted across the ranks, %s\n", label.c_str(), r, r > 1 ? "s" : "",
                o.pairs ? "stable, every value its key's global index (exact)"
                        : total <= kExactKeysLimit ? "exactly the host's sort" : "the input's keys by fingerprint");
    std::printf("balance: keys per rank%s; largest/mean %.4f\n", perRank.c_str(), total ? largest / (double(total) / r) : 0.0);
    if (!run.timing || n == 0) return kExitPass;

    std::vector<std::array<double, kPhases>> runs;
    for (int rep = -run.plan.warmups; rep < run.plan.repeats; ++rep) {
        const auto t = sortAcross(c);
        if (rep >= 0) runs.push_back(t);
    }
    const double keyBytes = sizeof(Key) + (o.pairs ? 4.0 : 0.0), exchangeBytes = double(total) * keyBytes;
    // bucket: the histogram reads the keys, the scatter reads keys (+ values) and writes them; local sort: one pass
    const double phaseBytes[kPhases] = {0, 0, double(total) * (sizeof(Key) + 2 * keyBytes), exchangeBytes,
                                        double(total) * keyBytes * 2};
    const bool shared = sharing > 1;
    std::vector<Column> columns = {{"phase", 12, true}, {"time (ms)", 9}, {"GB/s", 7}, {"share", 6}};
    if (shared) columns.push_back({"model: own GPUs (ms)", 20});
    Table table("sample sort on " + std::to_string(r) + " rank" + (r > 1 ? "s" : "") + ", " + label +
                    (shared ? ", " + std::to_string(sharing) + " ranks sharing a GPU (a check of the pipeline, not a scaling claim)"
                            : " (host clock: a phase ends when every rank has finished it)"),
                columns, &csv);
    const double totalMs = medianPhase(runs, kPhases);
    double modelMs = 0;
    for (int ph = 0; ph < kPhases; ++ph) {
        const double ms = medianPhase(runs, ph);
        std::vector<std::string> cells = {kPhaseNames[ph], fixed(ms, 3), phaseBytes[ph] ? fixed(gbPerSecond(phaseBytes[ph], ms), 0) : "-",
                                          fixed(100 * ms / totalMs, 1) + " %"};
        if (shared) {
            const double model = ph == kBucket || ph == kLocalSort ? ms / sharing
                                 : ph == kExchange ? exchangeBytes / r * (r - 1) / r / (kLinkGbs * 1e6) : ms;
            cells.push_back(fixed(model, 3));
            modelMs += model;
        }
        table.row(cells);
    }
    table.row(shared ? std::vector<std::string>{"total", fixed(totalMs, 3), "-", "100 %", fixed(modelMs, 3)}
                     : std::vector<std::string>{"total", fixed(totalMs, 3), "-", "100 %"});
    const double allToAll = allToAllMs(c, run.plan);
    const double gkeys = total / (totalMs * 1e6);
    std::printf("total: %.3f ms = %.2f Gkeys/s for %zu keys (%zu a rank), exchange by %s\n", totalMs, gkeys, total, n,
                ranks.transport());
    if (shared)
        std::printf("model, %d ranks on GPUs of their own (exchange at %.0f GB/s a direction): %.3f ms = %.2f Gkeys/s; "
                    "a prediction, not a measurement\n", r, kLinkGbs, modelMs, total / (modelMs * 1e6));
    else
        std::printf("one GPU's sample sort on %zu keys: %.3f ms = %.2f Gkeys/s; scaling efficiency %.2f (%d x its rate: %.2f Gkeys/s)\n",
                    n, oneGpuMs, n / (oneGpuMs * 1e6), gkeys / (r * n / (oneGpuMs * 1e6)), r, r * n / (oneGpuMs * 1e6));
    std::printf("exchange: %.0f GB/s; the all-to-all of the same bytes in equal parts (%s): %.3f ms = %.0f GB/s; the exchange at %.2f of it\n",
                gbPerSecond(exchangeBytes, medianPhase(runs, kExchange)), ranks.nccl ? "NCCL" : "device copies", allToAll,
                gbPerSecond(exchangeBytes, allToAll), allToAll / medianPhase(runs, kExchange));
    return kExitPass;
}

inline int visibleGpus() {
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    return count;
}

template <class Key>
int runLessonAs(const Options& o, const Run& run) {
    CsvFile csv;
    csv.open(run.csvPath, "sample_sort_gpus");
    const Ranks ranks(o.ranks, visibleGpus());
    for (const SortShape shape : o.shapes()) {
        const int rc = runShape<Key>(o, run, ranks, shape, csv);
        if (rc != kExitPass) return rc;
    }
    return kExitPass;
}

constexpr size_t kVerifyLargest = 1000003;  // keys in all

// Every distribution (the adversarial ones too), key type and order, keys
// and pairs, at sizes in all from 0 up, each checked on poisoned outputs:
// the output exact (values, stability by provenance) and each rank's send
// counts the host's plan from the same splitters. Half the cases split the
// keys evenly, half put them all on the last rank (the others hold none);
// with fewer keys than ranks, ranks receive nothing.
template <class Key>
int runVerifyAs(const Ranks& ranks, int& failed) {
    int cases = 0;
    for (const auto& shape : sortShapeNames())
        for (size_t total : {size_t{0}, size_t{1}, size_t{3}, size_t{1000}, size_t{65537}, kVerifyLargest})
            for (int mode = 0; mode < 4; ++mode) {
                const bool pairs = mode & 1, descending = mode & 2, allOnLast = ranks.count > 1 && (mode == 1 || mode == 2);
                const auto input = makeSortInput<Key>(shape.shape, total);
                const auto counts = splitKeys(total, ranks.count, allOnLast);
                const std::string label = sortCaseLabel<Key>(shape.name, total, descending, pairs) + (allOnLast ? " all on the last rank" : "");
                Cluster<Key> c;
                setUp(c, ranks, counts, pairs, descending, input);
                sortAcross(c);
                poisonAll(c);
                sortAcross(c);
                bool ok = clusterMatches(label, c, input, descending);
                if (ok && total) {
                    size_t send[kMaxRanks][kMaxRanks];
                    std::vector<unsigned> dest;
                    hostPlan(input, counts, descending, send, dest);
                    for (int g = 0; g < ranks.count; ++g)
                        for (int d = 0; d < ranks.count; ++d) ok = ok && c.plan.send[g][d] == send[g][d];
                    if (!ok) std::printf("%s: the send counts differ from the host's plan\n", label.c_str());
                }
                failed += !ok, ++cases;
            }
    std::printf("verify %s on %d rank%s (%s): %d cases, %d failed so far\n", keyName<Key>(), ranks.count,
                ranks.count > 1 ? "s" : "", ranks.transport(), cases, failed);
    return cases;
}

int runVerify(const Options& o) {
    const Ranks ranks(o.ranks, visibleGpus());
    int failed = 0;
    runVerifyAs<uint32_t>(ranks, failed);
    runVerifyAs<int32_t>(ranks, failed);
    runVerifyAs<float>(ranks, failed);
    return failed ? kExitCheckFailed : kExitPass;
}

// How many ranks: --ranks, else one a visible GPU (at most kMaxRanks). Each
// GPU must hold its ranks: n keys a rank (all of the input on one rank in
// --verify's layouts, keysOnOneRank) and what each receives, with values
// where pairs.
inline void chooseRanks(Options& o, bool given, size_t keysOnOneRank, bool pairs) {
    const int gpus = visibleGpus();
    if (!given) o.ranks = std::min(gpus, kMaxRanks);
    int version = 0;
    NCCL_CHECK(ncclGetVersion(&version));
    const int perGpu = ceilDiv(o.ranks, gpus);
    std::printf("%d rank%s on %d GPU%s in one process (%s), NCCL %d.%d.%d\n", o.ranks, o.ranks > 1 ? "s" : "",
                std::min(o.ranks, gpus), std::min(o.ranks, gpus) > 1 ? "s" : "",
                o.ranks <= gpus ? "a GPU a rank, exchange by NCCL" : "ranks share GPUs, exchange by device copies",
                version / 10000, version / 100 % 100, version % 100);
    // A rank's keys (+ values) and their bucketed copy, then what it receives
    // (room for 1/8 over the mean) with sample_sort's buffers and scratch.
    const size_t n = keysOnOneRank, m = n + n / 8, perKey = 2 * (sizeof(uint32_t) + (pairs ? 4 : 0));
    const size_t need = n * perKey + sortBytesNeeded<uint32_t>(m, pairs, ScratchSizes(m, {Tuning::maxDepth, 512}).bytes(m, pairs));
    for (int g = 0; g < std::min(o.ranks, gpus); ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        requireDeviceMemory(need > SIZE_MAX / perGpu ? SIZE_MAX : need * perGpu,
                            "sample_sort_gpus (its ranks' keys, their buckets, what they receive, sample_sort's scratch)");
    }
}

}  // namespace across

// ===================================================================== main

int main(int argc, char** argv) {
    using namespace across;
    setenv("NCCL_NVLS_ENABLE", "0", 0);  // NVLink multicast off unless the environment says otherwise
    across::Options o;
    bool ranksGiven = false;
    std::vector<OptionSpec> options = sortOptions("keys a rank (default 2^28; --quick 2^22)",
                                                  "sort uint32 values (each key's global index) with the keys; checked as stable",
                                                  "every distribution of the table");
    options.insert(options.begin(), {"--ranks", "N", "ranks, 1 to 8, placed on the visible GPUs round-robin (default: one a GPU)"});
    return lessonEntry(argc, argv, {"sample_sort_gpus", "Chapter 14.3 across GPUs: a sample sort over ranks, one exchange.",
        options, {"sampleSortGpus"},
        [&](const Args& args, const Run& run) {
            ranksGiven = args.has("--ranks");
            const size_t ranks = args.count("--ranks", 1, 1);
            if (ranks > kMaxRanks) args.fail("--ranks must be at most 8");
            o.ranks = static_cast<int>(ranks);
            readSortOptions(args, run, o, size_t{1} << 28, size_t{1} << 22, 34);
            // Checked again once the GPUs are counted (without --ranks, one a visible GPU).
            if (o.pairs && !sortValuesFit(o.n * o.ranks)) args.fail("--pairs needs --n x --ranks below 2^32 - 1 (the values are 32-bit global indices)");
        },
        across::runSelftest,
        [&](const Run&) {
            chooseRanks(o, ranksGiven, kVerifyLargest, true);  // --verify sorts key-value too
            return across::runVerify(o);
        },
        [&](const Run& run) {
            chooseRanks(o, ranksGiven, o.n, o.pairs);
            if (o.pairs && !sortValuesFit(o.n * o.ranks)) {
                std::fprintf(stderr, "sample_sort_gpus: --pairs needs --n x ranks below 2^32 - 1 (the values are 32-bit global indices)\n");
                return kExitBadArgument;
            }
            return onKeyType(o.key, [&](auto key) { return across::runLessonAs<decltype(key)>(o, run); });
        }});
}

// Chapter 14.3 across GPUs: the data needs several GPUs to hold it, and
// sample sort needs only one exchange. Every GPU samples its keys, the
// samples are gathered (NCCL all-gather) and give GPU-count - 1 splitters,
// every GPU buckets its keys by destination GPU with the lesson's tree
// search, one all-to-all (ncclSend/ncclRecv in a group) moves each bucket
// to its GPU, and each GPU sorts what it received with sample_sort.cu's
// sort. GPU g's keys then all precede GPU g + 1's. It is stable.
//
// Build (one file; sample_sort.cu beside it):
//   nvcc -std=c++17 -O3 -arch=sm_90 -o sample_sort_gpus sample_sort_gpus.cu -lnccl
// Run (one process drives every GPU it sees; CUDA_VISIBLE_DEVICES picks them):
//   ./sample_sort_gpus                 2^28 uint32 keys per GPU: the phase table, one GPU's sort beside it
//   ./sample_sort_gpus --gpus 2 --n 2^30 --pairs --input zipf
//   ./sample_sort_gpus --verify        every distribution, key type and order, small sizes
//   ./sample_sort_gpus --selftest      splitters, ties, send and receive counts on the host (no GPU)
// Reading map: "splitters across GPUs" (Sample, chooseSplitters,
// destinationOf, receivePlan), "kernels" (sample, histogram, scatter),
// "the pipeline" (sortAcross: the five phases), "checks", "selftest",
// "the lesson", "main".
// Change: --gpus, --n (keys per GPU), --key, --pairs, --descending,
// --input/--dist; kSamplesPerGpu. NVLink multicast stays off
// (NCCL_NVLS_ENABLE=0 unless the environment sets it): on a shared host it
// can take the GPUs out of service.

#define SAMPLE_SORT_NO_MAIN
#include "sample_sort.cu"

#include <cub/device/device_scan.cuh>
#include <nccl.h>

#include <array>
#include <chrono>
#include <memory>
#include <numeric>
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

// ================================================== splitters across GPUs
constexpr int kMaxGpus = 8;              // one host's GPUs: the tree below has 8 buckets
constexpr int kTreeLevels = 3;
constexpr int kSlots = 16;               // destinations 0..7, then the pad slot 15 (4 bits for warpRank)
constexpr int kSamplesPerGpu = 4096;     // a GPU's share of the splitters: sizes vary by about 1/sqrt(4096)
constexpr size_t kExactKeysLimit = size_t{1} << 27;  // keys alone: exact against the host sort up to here

// A key as the splitters see it: its rank (common's order) and its global
// index (GPU g's key i is g * n + i). No two keys are then equal, so keys
// equal to a splitter go to GPUs by (key, GPU, position), and an all-equal
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

// The GPU-count - 1 splitters, padded to the tree's 7 with kPastEveryKey.
struct Splitters {
    uint32_t tree[2 << kTreeLevels];   // sample_sort's implicit tree: nodes 1..7, then the 7 sorted ranks
    uint64_t index[1 << kTreeLevels];  // each sorted splitter's global index
};

// GPU g's sample i: a hashed position of its part (sample_sort's samplePosition).
template <class Key>
__host__ __device__ inline Sample sampleOf(const Key* keys, size_t n, uint64_t base, uint32_t flip, int i) {
    if (n == 0) return kPastEveryKey;
    const size_t at = samplePosition(Segment{base, n, 0, 0, 0}, 0, i);
    return {rankOf(keys[at - base], flip), 0, at};
}

// From every GPU's samples, sorted: splitter j at the (j + 1) / gpus quantile.
__host__ __device__ inline void chooseSplitters(const Sample* sorted, size_t count, int gpus, Splitters& s) {
    constexpr int k = 1 << kTreeLevels;
    for (int j = 0; j < k - 1; ++j) {
        const Sample x = j < gpus - 1 && count > 0 ? sorted[(j + 1) * count / gpus] : kPastEveryKey;
        s.tree[k + j] = x.rank;
        s.index[j] = x.index;
    }
    for (int i = 1; i < k; ++i) s.tree[i] = s.tree[k + treeNode(i, kTreeLevels)];
}

// The GPU a key goes to: the count of splitters (rank, index) <= its own.
// sample_sort's tree walk counts those whose rank is <= the key's; any of
// equal rank but a larger index comes after the key and is taken back.
__host__ __device__ inline unsigned destinationOf(const Splitters& s, uint32_t rank, uint64_t index) {
    const uint32_t* sorted = s.tree + (1 << kTreeLevels);
    unsigned d = (treeBucket(s.tree, kTreeLevels, rank) + 1) / 2;
    while (d > 0 && sorted[d - 1] == rank && s.index[d - 1] > index) --d;
    return d;
}

// Where GPU d's receive buffer puts what GPU g sends it: after what the
// lower GPUs send, so the received keys are in global-index order.
inline void receivePlan(const size_t (&send)[kMaxGpus][kMaxGpus], int gpus, size_t (&start)[kMaxGpus][kMaxGpus],
                        size_t (&total)[kMaxGpus]) {
    for (int d = 0; d < gpus; ++d) {
        total[d] = 0;
        for (int g = 0; g < gpus; ++g) start[d][g] = total[d], total[d] += send[g][d];
    }
}

// ================================================================= kernels

template <class Key>
__global__ void sampleKernel(const Key* keys, size_t n, uint64_t base, uint32_t flip, Sample* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < kSamplesPerGpu) out[i] = sampleOf(keys, n, base, flip, i);
}

__global__ void splittersKernel(const Sample* sorted, size_t count, int gpus, Splitters* s) {
    chooseSplitters(sorted, count, gpus, *s);
}

__device__ inline void loadSplitters(const Splitters* from, Splitters& to) {
    static_assert(sizeof(Splitters) % 4 == 0, "copied as words");
    for (unsigned w = threadIdx.x; w < sizeof(Splitters) / 4; w += blockDim.x)
        reinterpret_cast<uint32_t*>(&to)[w] = reinterpret_cast<const uint32_t*>(from)[w];
    __syncthreads();
}

// The bucket phase is sample_sort's histogram, scan and scatter with a GPU
// for a bucket: tiles of Tuning::tileKeys keys, counts destination-major
// (destination d of every tile, then d + 1), so one exclusive scan gives
// each (tile, destination) its place in the send buffer, in input order.
template <class Key>
__global__ void __launch_bounds__(Tuning::nt) destinationHistogramKernel(const Key* keys, size_t n, uint64_t base,
    uint32_t flip, const Splitters* splitters, int gpus, uint64_t* counts) {
    __shared__ Splitters s;
    __shared__ unsigned warpCounts[Tuning::warps * kSlots];
    for (int i = threadIdx.x; i < Tuning::warps * kSlots; i += Tuning::nt) warpCounts[i] = 0;
    loadSplitters(splitters, s);
    const size_t begin = static_cast<size_t>(blockIdx.x) * Tuning::tileKeys, end = smaller(begin + Tuning::tileKeys, n);
    countTile(begin, end, warpCounts + (threadIdx.x >> 5) * kSlots, kSlots - 1,
              [&](size_t i) { return keys[i]; },
              [&](Key key, size_t i) { return destinationOf(s, rankOf(key, flip), base + i); });
    __syncthreads();
    for (int d = threadIdx.x; d < gpus; d += Tuning::nt) {
        unsigned sum = 0;
        for (int w = 0; w < Tuning::warps; ++w) sum += warpCounts[w * kSlots + d];
        counts[static_cast<size_t>(d) * gridDim.x + blockIdx.x] = sum;
    }
}

template <class Key, bool kPairs>
__global__ void __launch_bounds__(Tuning::nt) destinationScatterKernel(const Key* keys, const uint32_t* values,
    size_t n, uint64_t base, uint32_t flip, const Splitters* splitters, int gpus, const uint64_t* offsets,
    Key* sendKeys, uint32_t* sendValues) {
    __shared__ Splitters s;
    __shared__ unsigned warpCounts[Tuning::warps * kSlots], totals[kSlots], starts[kSlots], scratch[32];
    __shared__ uint64_t place[kSlots];
    __shared__ Key stageKeys[Tuning::nv];
    __shared__ uint32_t stageValues[kPairs ? Tuning::nv : 1];
    __shared__ uint8_t stageDest[Tuning::nv];
    for (int d = threadIdx.x; d < kSlots; d += Tuning::nt)
        place[d] = d < gpus ? offsets[static_cast<size_t>(d) * gridDim.x + blockIdx.x] : 0;
    loadSplitters(splitters, s);
    const size_t begin = static_cast<size_t>(blockIdx.x) * Tuning::tileKeys, end = smaller(begin + Tuning::tileKeys, n);
    unsigned* mine = warpCounts + (threadIdx.x >> 5) * kSlots;
    for (size_t chunk = begin; chunk < end; chunk += Tuning::nv) {
        const unsigned len = static_cast<unsigned>(smaller(end - chunk, Tuning::nv));
        for (int i = threadIdx.x & 31; i < kSlots; i += 32) mine[i] = 0;
        __syncthreads();  // the last chunk's writes are done
        Key key[Tuning::vt];
        uint32_t value[Tuning::vt];
        unsigned dest[Tuning::vt], rank[Tuning::vt];
        DEVICE_UNROLL
        for (int j = 0; j < Tuning::vt; ++j) {
            const unsigned p = stripedPosition<Tuning::vt>(j);
            key[j] = p < len ? keys[chunk + p] : Key{};
            if (kPairs) value[j] = p < len ? values[chunk + p] : 0;
            dest[j] = p < len ? destinationOf(s, rankOf(key[j], flip), base + chunk + p) : kSlots - 1;  // pads last
        }
        warpRank<4>(dest, rank, mine);  // input order within a destination (keys alone too): the sort stays stable
        __syncthreads();
        chunkOffsets<Tuning::nt>(warpCounts, kSlots, totals, starts, scratch);
        DEVICE_UNROLL
        for (int j = 0; j < Tuning::vt; ++j) {
            const unsigned p = starts[dest[j]] + mine[dest[j]] + rank[j];
            stageKeys[p] = key[j];
            if (kPairs) stageValues[p] = value[j];
            stageDest[p] = static_cast<uint8_t>(dest[j]);
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

// One GPU's share: its n keys (values: their global indices), what it
// sends, what it receives (sorted there by sample_sort, with its scratch).
template <class Key>
struct Part {
    int device = 0;
    ncclComm_t comm = nullptr;    // the process's, from Gpus
    cudaStream_t stream = nullptr;
    size_t n = 0;
    uint64_t base = 0;  // its first key's global index
    DeviceBuffer<Key> keys, sendKeys;
    DeviceBuffer<uint32_t> values, sendValues;
    DeviceBuffer<Sample> samples;  // every GPU's, after the all-gather
    DeviceBuffer<Splitters> splitters;
    DeviceBuffer<uint64_t> counts, offsets;
    DeviceBuffer<unsigned char> temp;  // CUB's scan and the samples' sort
    SortBuffers<Key> recv;  // what arrives (in, vin) and, sorted, the GPU's share of the output (out, vout)
    SortScratch scratch;    // sample_sort's
    size_t capacity = 0;    // of recv and scratch
    size_t sendStart[kMaxGpus] = {};
    explicit Part(bool pairs) { recv.pairs = pairs; }
};

enum Phase { kSample, kSplitters, kBucket, kExchange, kLocalSort, kPhases };
const char* const kPhaseNames[kPhases] = {"sample", "splitters", "bucket", "exchange", "local sort"};

// The GPUs and their NCCL communicators, made once for the whole run.
struct Gpus {
    int count = 0;
    std::vector<ncclComm_t> comms;
    std::vector<cudaStream_t> streams;
    Gpus(const Gpus&) = delete;  // one owner: the destructor frees the communicators
    Gpus& operator=(const Gpus&) = delete;
    explicit Gpus(int gpus) : count(gpus), comms(gpus), streams(gpus) {
        std::vector<int> devices(gpus);
        for (int g = 0; g < gpus; ++g) devices[g] = g;
        NCCL_CHECK(ncclCommInitAll(comms.data(), gpus, devices.data()));
        for (int g = 0; g < gpus; ++g) {
            CUDA_CHECK(cudaSetDevice(g));
            CUDA_CHECK(cudaStreamCreate(&streams[g]));
        }
    }
    ~Gpus() {
        for (int g = 0; g < count; ++g) cudaSetDevice(g), cudaStreamDestroy(streams[g]), ncclCommDestroy(comms[g]);
    }
};

// One sort's GPUs: each one's part of the keys and its buffers.
template <class Key>
struct Cluster {
    int gpus = 0;
    bool pairs = false;
    uint32_t flip = 0;
    SortConfig config{8, 0};
    std::vector<std::unique_ptr<Part<Key>>> parts;
    size_t send[kMaxGpus][kMaxGpus] = {}, recvStart[kMaxGpus][kMaxGpus] = {}, received[kMaxGpus] = {};

    template <class F>
    void onEachGpu(F f) {
        for (int g = 0; g < gpus; ++g) {
            CUDA_CHECK(cudaSetDevice(parts[g]->device));
            f(g, *parts[g]);
        }
    }
    void synchronize() {
        onEachGpu([](int, Part<Key>&) { CUDA_CHECK(cudaDeviceSynchronize()); });
    }
    ~Cluster() {  // each GPU's buffers freed on that GPU
        for (auto& p : parts) cudaSetDevice(p->device), p.reset();
    }
};

inline size_t cubTempBytes(size_t tiles, int gpus) {
    size_t scan = 0, sort = 0;
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan, static_cast<uint64_t*>(nullptr), static_cast<uint64_t*>(nullptr),
                                             tiles * gpus));
    CUDA_CHECK(cub::DeviceMergeSort::SortKeys(nullptr, sort, static_cast<Sample*>(nullptr),
                                              static_cast<int64_t>(kSamplesPerGpu) * gpus, SampleLess()));
    return std::max(scan, sort);
}

// Every GPU of gpus, n keys each (GPU g holds input[g * n, (g + 1) * n)).
template <class Key>
void setUp(Cluster<Key>& c, const Gpus& gpus, size_t n, bool pairs, bool descending, const std::vector<Key>& input) {
    c.gpus = gpus.count, c.pairs = pairs, c.flip = descending ? ~0u : 0u;
    for (int g = 0; g < c.gpus; ++g) {
        c.parts.push_back(std::make_unique<Part<Key>>(pairs));
        c.parts[g]->device = g, c.parts[g]->comm = gpus.comms[g], c.parts[g]->stream = gpus.streams[g];
    }
    CUDA_CHECK(cudaSetDevice(0));
    c.config.cap = largestTier(queryDevice(), pairs);  // one host's GPUs: device 0 speaks for all
    const size_t tiles = ceilDiv(n, Tuning::tileKeys);
    c.onEachGpu([&](int g, Part<Key>& p) {
        p.n = n, p.base = static_cast<uint64_t>(g) * n;
        p.keys.allocate(n), p.sendKeys.allocate(n);
        p.keys.upload(input.data() + p.base, n);
        if (pairs) {
            p.values.allocate(n), p.sendValues.allocate(n);
            std::vector<uint32_t> global(n);
            for (size_t i = 0; i < n; ++i) global[i] = static_cast<uint32_t>(p.base + i);
            p.values.upload(global.data(), n);
        }
        p.samples.allocate(size_t{kSamplesPerGpu} * c.gpus);
        p.splitters.allocate(1);
        p.counts.allocate(tiles * c.gpus + 1), p.offsets.allocate(tiles * c.gpus + 1);
        p.temp.allocate(std::max<size_t>(cubTempBytes(tiles, c.gpus), 1));  // a null pointer would mean "size query"
    });
    c.synchronize();
}

// Before a checked sort: every buffer the sort writes (the bucketed keys,
// what arrives, the output) holds the poison, so a write left out shows.
template <class Key>
void poisonAll(Cluster<Key>& c) {
    c.onEachGpu([](int, Part<Key>& p) {
        p.sendKeys.poison(), p.sendValues.poison(), p.recv.in.poison(), p.recv.vin.poison();
        p.recv.poison();
    });
}

// Grows GPU g's receive side (and sample_sort's scratch) to hold m keys.
template <class Key>
void reserveReceive(Cluster<Key>& c, Part<Key>& p, size_t m) {
    if (m <= p.capacity && p.capacity) return;
    p.recv.in.allocate(m), p.recv.out.allocate(m);
    if (c.pairs) p.recv.vin.allocate(m), p.recv.vout.allocate(m);
    p.scratch.reserve(m, c.pairs, ScratchSizes(m, c.config));  // sized for m: enough for any count up to m
    p.capacity = m;
}

using Clock = std::chrono::steady_clock;
inline double msSince(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// One sort across every GPU; each phase ends when every GPU has finished it
// (host clock), so the times add up to the sort's.
template <class Key>
std::array<double, kPhases> sortAcross(Cluster<Key>& c) {
    std::array<double, kPhases> ms{};
    const int gpus = c.gpus;
    const size_t tiles = ceilDiv(c.parts[0]->n, Tuning::tileKeys), sampleCount = size_t{kSamplesPerGpu} * gpus;
    auto t0 = Clock::now();
    c.onEachGpu([&](int g, Part<Key>& p) {
        sampleKernel<<<ceilDiv(kSamplesPerGpu, 256), 256, 0, p.stream>>>(p.keys.get(), p.n, p.base, c.flip,
                                                                         p.samples.get() + size_t{kSamplesPerGpu} * g);
        CUDA_CHECK_LAUNCH("sampleKernel");
    });
    c.synchronize();
    ms[kSample] = msSince(t0), t0 = Clock::now();

    NCCL_CHECK(ncclGroupStart());  // one thread drives every GPU: their calls go in one group
    c.onEachGpu([&](int g, Part<Key>& p) {
        NCCL_CHECK(ncclAllGather(p.samples.get() + size_t{kSamplesPerGpu} * g, p.samples.get(),
                                 kSamplesPerGpu * sizeof(Sample), ncclUint8, p.comm, p.stream));
    });
    NCCL_CHECK(ncclGroupEnd());
    c.onEachGpu([&](int, Part<Key>& p) {  // every GPU sorts the same samples: the same splitters everywhere
        size_t bytes = p.temp.size();
        CUDA_CHECK(cub::DeviceMergeSort::SortKeys(p.temp.get(), bytes, p.samples.get(), static_cast<int64_t>(sampleCount),
                                                  SampleLess(), p.stream));
        splittersKernel<<<1, 1, 0, p.stream>>>(p.samples.get(), sampleCount, gpus, p.splitters.get());
        CUDA_CHECK_LAUNCH("splittersKernel");
    });
    c.synchronize();
    ms[kSplitters] = msSince(t0), t0 = Clock::now();

    c.onEachGpu([&](int, Part<Key>& p) {
        if (p.n == 0) return;
        const unsigned grid = gridFor(p.n, Tuning::tileKeys, "destinationHistogramKernel");
        destinationHistogramKernel<<<grid, Tuning::nt, 0, p.stream>>>(p.keys.get(), p.n, p.base, c.flip, p.splitters.get(),
                                                                      gpus, p.counts.get());
        CUDA_CHECK_LAUNCH("destinationHistogramKernel");
        size_t bytes = p.temp.size();
        CUDA_CHECK(cub::DeviceScan::ExclusiveSum(p.temp.get(), bytes, p.counts.get(), p.offsets.get(), tiles * gpus, p.stream));
        if (c.pairs)
            destinationScatterKernel<Key, true><<<grid, Tuning::nt, 0, p.stream>>>(
                p.keys.get(), p.values.get(), p.n, p.base, c.flip, p.splitters.get(), gpus, p.offsets.get(),
                p.sendKeys.get(), p.sendValues.get());
        else
            destinationScatterKernel<Key, false><<<grid, Tuning::nt, 0, p.stream>>>(
                p.keys.get(), nullptr, p.n, p.base, c.flip, p.splitters.get(), gpus, p.offsets.get(), p.sendKeys.get(),
                nullptr);
        CUDA_CHECK_LAUNCH("destinationScatterKernel");
    });
    c.onEachGpu([&](int g, Part<Key>& p) {  // each destination's first place: one row of the scanned counts
        uint64_t starts[kMaxGpus] = {};
        if (p.n) CUDA_CHECK(cudaMemcpy2D(starts, sizeof(uint64_t), p.offsets.get(), tiles * sizeof(uint64_t), sizeof(uint64_t),
                                         gpus, cudaMemcpyDeviceToHost));
        for (int d = 0; d < gpus; ++d) {
            p.sendStart[d] = starts[d];
            c.send[g][d] = (d + 1 < gpus ? starts[d + 1] : p.n) - starts[d];
        }
    });
    receivePlan(c.send, gpus, c.recvStart, c.received);
    c.onEachGpu([&](int g, Part<Key>& p) { reserveReceive(c, p, c.received[g]); });  // allocates on the first sort only
    ms[kBucket] = msSince(t0), t0 = Clock::now();

    static_assert(sizeof(Key) == 4, "keys travel as 32-bit words");
    NCCL_CHECK(ncclGroupStart());
    c.onEachGpu([&](int g, Part<Key>& p) {
        for (int q = 0; q < gpus; ++q) {
            NCCL_CHECK(ncclSend(p.sendKeys.get() + p.sendStart[q], c.send[g][q], ncclUint32, q, p.comm, p.stream));
            NCCL_CHECK(ncclRecv(p.recv.in.get() + c.recvStart[g][q], c.send[q][g], ncclUint32, q, p.comm, p.stream));
            if (!c.pairs) continue;
            NCCL_CHECK(ncclSend(p.sendValues.get() + p.sendStart[q], c.send[g][q], ncclUint32, q, p.comm, p.stream));
            NCCL_CHECK(ncclRecv(p.recv.vin.get() + c.recvStart[g][q], c.send[q][g], ncclUint32, q, p.comm, p.stream));
        }
    });
    NCCL_CHECK(ncclGroupEnd());
    c.synchronize();
    ms[kExchange] = msSince(t0), t0 = Clock::now();

    // sample_sort waits on the host once a level: a thread a GPU, so they overlap.
    std::vector<std::thread> threads;
    for (int g = 0; g < gpus; ++g)
        threads.emplace_back([&c, g] {
            Part<Key>& p = *c.parts[g];
            CUDA_CHECK(cudaSetDevice(p.device));
            sampleSort(p.scratch, sortWordsOf(p.recv, c.received[g], c.flip != 0), c.config);
            CUDA_CHECK(cudaDeviceSynchronize());
        });
    for (auto& t : threads) t.join();
    ms[kLocalSort] = msSince(t0);
    return ms;
}

// NCCL's own all-to-all on the same buffers and bytes, in equal parts: the
// exchange's yardstick. Returns the median time (ms).
template <class Key>
double allToAllMs(Cluster<Key>& c, const TimingPlan& plan) {
    const size_t per = c.parts[0]->n / c.gpus;
    c.onEachGpu([&](int, Part<Key>& p) { reserveReceive(c, p, per * c.gpus); });  // a GPU may have received less
    std::vector<double> times;
    for (int r = -plan.warmups; r < plan.repeats; ++r) {
        const auto t0 = Clock::now();
        NCCL_CHECK(ncclGroupStart());
        c.onEachGpu([&](int, Part<Key>& p) {
            for (int q = 0; q < c.gpus; ++q) {
                NCCL_CHECK(ncclSend(p.sendKeys.get() + q * per, per, ncclUint32, q, p.comm, p.stream));
                NCCL_CHECK(ncclRecv(p.recv.in.get() + q * per, per, ncclUint32, q, p.comm, p.stream));
                if (!c.pairs) continue;
                NCCL_CHECK(ncclSend(p.sendValues.get() + q * per, per, ncclUint32, q, p.comm, p.stream));
                NCCL_CHECK(ncclRecv(p.recv.vin.get() + q * per, per, ncclUint32, q, p.comm, p.stream));
            }
        });
        NCCL_CHECK(ncclGroupEnd());
        c.synchronize();
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

// The parts, in GPU order, against the input. Sorted across them (GPU g's
// last key <= GPU g + 1's first). With values: each is its key's global
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
            say("%s: GPU %zu holds %zu keys but %zu values\n", what.c_str(), g, keys[g].size(), values[g].size());
            return false;
        }
    if (total != input.size()) {
        say("%s: the GPUs hold %zu keys, the input has %zu\n", what.c_str(), total, input.size());
        return false;
    }
    std::vector<uint8_t> seen(pairs ? total : 0);
    Fingerprint in, out;
    bool havePrevious = false;
    uint32_t previous = 0, previousValue = 0;
    for (size_t g = 0; g < keys.size(); ++g)
        for (size_t i = 0; i < keys[g].size(); ++i) {
            const uint32_t r = rankOf(keys[g][i], flip);
            auto where = [&] { return what + ": GPU " + std::to_string(g) + " position " + std::to_string(i); };  // on a failure only
            if (havePrevious && r < previous) {
                say("%s: key %s after a larger one (%s)\n", where().c_str(), formatKey(keys[g][i]).c_str(),
                            i == 0 ? "the GPUs are out of order" : "not sorted");
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
                    say("%s: GPU %zu position %zu: key %s, the host's sort has %s\n", what.c_str(), g, i,
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
    std::vector<std::vector<Key>> keys(c.gpus);
    std::vector<std::vector<uint32_t>> values(c.gpus);
    c.onEachGpu([&](int g, Part<Key>& p) {
        keys[g].resize(c.received[g]);
        p.recv.out.download(keys[g].data(), c.received[g]);
        if (c.pairs) values[g].resize(c.received[g]), p.recv.vout.download(values[g].data(), c.received[g]);
    });
    return partsMatch(what, input, keys, values, c.pairs, descending);
}

// =================================================================== selftest

// The send counts (GPU g to GPU d) the bucket kernels must find, from the
// same sampleOf, chooseSplitters and destinationOf, and each key's destination.
template <class Key>
void hostPlan(const std::vector<Key>& input, int gpus, bool descending, size_t (&send)[kMaxGpus][kMaxGpus],
              std::vector<unsigned>& dest) {
    const size_t n = input.size() / gpus;
    const uint32_t flip = descending ? ~0u : 0u;
    std::vector<Sample> samples;
    for (int g = 0; g < gpus; ++g)
        for (int i = 0; i < kSamplesPerGpu; ++i) samples.push_back(sampleOf(input.data() + g * n, n, g * n, flip, i));
    std::sort(samples.begin(), samples.end(), SampleLess());
    Splitters s;
    chooseSplitters(samples.data(), samples.size(), gpus, s);
    dest.assign(input.size(), 0);
    for (auto& row : send) for (auto& x : row) x = 0;
    for (size_t i = 0; i < input.size(); ++i) ++send[i / n][dest[i] = destinationOf(s, rankOf(input[i], flip), i)];
}

int runSelftest() {
    SplitMix64 rng(13);
    // destinationOf against a plain count of the splitters <= (rank, index), with ties everywhere.
    for (int gpus = 1; gpus <= kMaxGpus; ++gpus) {
        std::vector<Sample> sample(64);
        for (auto& x : sample) x = {0xFFFFFFFCu + static_cast<uint32_t>(rng.next() % 4), 0, rng.next() % 100};  // pads' rank too
        std::sort(sample.begin(), sample.end(), SampleLess());
        Splitters s;
        chooseSplitters(sample.data(), sample.size(), gpus, s);
        bool ok = true;
        for (uint32_t r = 0xFFFFFFFBu; r != 0; ++r)  // 0xFFFFFFFB..0xFFFFFFFF
            for (uint64_t index = 0; index < 101; ++index) {
                unsigned want = 0;
                for (int j = 0; j < gpus - 1; ++j)
                    want += !SampleLess()({r, 0, index}, sample[(j + 1) * sample.size() / gpus]);
                ok = ok && destinationOf(s, r, index) == want;
            }
        expect(ok, "destinationOf counts the splitters <= (rank, index), " + std::to_string(gpus) + " GPUs");
    }
    // Balance, ties included: every distribution, 8 GPUs; and the receive plan.
    for (const SortShape shape : {SortShape::Uniform, SortShape::AllEqual, SortShape::FewDistinct, SortShape::Sorted,
                                  SortShape::Zipf}) {
        const int gpus = 8;
        const size_t n = 20000;
        const auto input = makeSortInput<uint32_t>(shape, gpus * n);
        size_t send[kMaxGpus][kMaxGpus], start[kMaxGpus][kMaxGpus], total[kMaxGpus];
        std::vector<unsigned> dest;
        hostPlan(input, gpus, false, send, dest);
        receivePlan(send, gpus, start, total);
        size_t largest = 0, sum = 0;
        for (int d = 0; d < gpus; ++d) largest = std::max(largest, total[d]), sum += total[d];
        const std::string name = sortShapeName(shape);
        expect(sum == input.size(), name + ": every key received once");
        expect(largest <= n + n / 10, name + ": largest GPU within 10 % of the mean, got " + std::to_string(largest));
        bool ordered = true;  // every key of GPU d before every key of GPU d + 1, by (key, index)
        uint32_t maxBelow[kMaxGpus + 1] = {}, minHere[kMaxGpus] = {};
        for (int d = 0; d < gpus; ++d) minHere[d] = 0xFFFFFFFFu;
        for (size_t i = 0; i < input.size(); ++i)
            maxBelow[dest[i] + 1] = std::max(maxBelow[dest[i] + 1], input[i]), minHere[dest[i]] = std::min(minHere[dest[i]], input[i]);
        for (int d = 1; d < gpus; ++d) ordered = ordered && (total[d] == 0 || maxBelow[d] <= minHere[d]);
        expect(ordered, name + ": GPU d's keys precede GPU d + 1's");
        bool plan = true;
        for (int d = 0; d < gpus; ++d)
            for (int g = 1; g < gpus; ++g) plan = plan && start[d][g] == start[d][g - 1] + send[g - 1][d];
        expect(plan, name + ": GPU g's keys land after GPU g - 1's");
    }
    // The check itself: it takes the stable order and refuses each kind of
    // wrong answer (2 GPUs x 2 keys; input 5 1 5 3, stable order 1 3 5 5
    // from indices 1 3 0 2).
    {
        const std::vector<uint32_t> in = {5, 1, 5, 3};
        using Keys = std::vector<std::vector<uint32_t>>;
        auto check = [&](const Keys& k, const Keys& v, bool pairs) { return partsMatch("", in, k, v, pairs, false, true); };
        expect(check({{1, 3}, {5, 5}}, {{1, 3}, {0, 2}}, true), "the check takes the stable order");
        expect(!check({{1, 3}, {5, 5}}, {{1, 3}, {2, 0}}, true), "the check refuses equal keys out of input order");
        expect(!check({{5, 5}, {1, 3}}, {{0, 2}, {1, 3}}, true), "the check refuses GPUs out of order");
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
    // All-equal keys split by position: GPU d gets one stretch of global indices.
    {
        const auto input = makeSortInput<float>(SortShape::AllEqual, 4 * 1000);
        size_t send[kMaxGpus][kMaxGpus];
        std::vector<unsigned> dest;
        hostPlan(input, 4, true, send, dest);
        expect(std::is_sorted(dest.begin(), dest.end()), "all-equal keys: destinations ascend with the index");
    }
    return selftestVerdict();
}

// =============================================================== the lesson

struct Options : SortOptions {  // the sort lessons', n being keys per GPU, and the GPUs
    int gpus = 0;
};

template <class Key>
int runShape(const Options& o, const Run& run, const Gpus& gpus, SortShape shape, CsvFile& csv) {
    const size_t n = o.n, total = n * o.gpus;
    const auto input = makeSortInput<Key>(shape, total);
    const std::string label = sortCaseLabel<Key>(sortShapeName(shape), total, o.descending, o.pairs);
    double oneGpuMs = 0;
    if (run.timing && n) {  // one GPU's sample sort on n keys, checked, then timed like the phases
        CUDA_CHECK(cudaSetDevice(0));
        const std::vector<Key> slice(input.begin(), input.begin() + n);
        Problem<Key> one(slice, o.pairs, o.descending);
        const SortConfig config{8, largestTier(run.device, o.pairs)};
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
        for (int r = -run.plan.warmups; r < run.plan.repeats; ++r) {
            const auto t0 = Clock::now();
            sampleSort(one, config);
            CUDA_CHECK(cudaDeviceSynchronize());
            if (r >= 0) times.push_back(msSince(t0));
        }
        std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
        oneGpuMs = times[times.size() / 2];
    }
    Cluster<Key> c;
    setUp(c, gpus, n, o.pairs, o.descending, input);
    sortAcross(c);  // sizes the receive side; then a poisoned, checked sort
    poisonAll(c);
    sortAcross(c);
    if (!clusterMatches(label, c, input, o.descending)) return kExitCheckFailed;
    size_t largest = 0;
    std::string perGpu;
    for (int g = 0; g < o.gpus; ++g) largest = std::max(largest, c.received[g]), perGpu += " " + std::to_string(c.received[g]);
    std::printf("\n%s on %d GPU%s: sorted across the GPUs, %s\n", label.c_str(), o.gpus, o.gpus > 1 ? "s" : "",
                o.pairs ? "stable, every value its key's global index (exact)"
                        : total <= kExactKeysLimit ? "exactly the host's sort" : "the input's keys by fingerprint");
    std::printf("balance: keys per GPU%s; largest/mean %.4f\n", perGpu.c_str(), total ? largest / (double(total) / o.gpus) : 0.0);
    if (!run.timing || n == 0) return kExitPass;

    std::vector<std::array<double, kPhases>> runs;
    for (int r = -run.plan.warmups; r < run.plan.repeats; ++r) {
        const auto t = sortAcross(c);
        if (r >= 0) runs.push_back(t);
    }
    auto median = [&](int phase) {  // phase kPhases: the sum
        std::vector<double> v;
        for (const auto& t : runs) v.push_back(phase < kPhases ? t[phase] : std::accumulate(t.begin(), t.end(), 0.0));
        std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
        return v[v.size() / 2];
    };
    const double keyBytes = sizeof(Key) + (o.pairs ? 4.0 : 0.0), exchangeBytes = double(total) * keyBytes;
    // bucket: the histogram reads the keys, the scatter reads keys (+ values) and writes them; local sort: one pass
    const double phaseBytes[kPhases] = {0, 0, double(total) * (sizeof(Key) + 2 * keyBytes), exchangeBytes,
                                        double(total) * keyBytes * 2};
    Table table("sample sort across " + std::to_string(o.gpus) + " GPU" + (o.gpus > 1 ? "s" : "") + ", " + label +
                    " (host clock: a phase ends when every GPU has finished it)",
                {{"phase", 12, true}, {"time (ms)", 9}, {"GB/s", 7}, {"share", 6}}, &csv);
    const double totalMs = median(kPhases);
    for (int ph = 0; ph < kPhases; ++ph)
        table.row({kPhaseNames[ph], fixed(median(ph), 3), phaseBytes[ph] ? fixed(gbPerSecond(phaseBytes[ph], median(ph)), 0) : "-",
                   fixed(100 * median(ph) / totalMs, 1) + " %"});
    table.row({"total", fixed(totalMs, 3), "-", "100 %"});
    const double ncclMs = allToAllMs(c, run.plan);
    const double gkeys = total / (totalMs * 1e6);
    std::printf("total: %.3f ms = %.2f Gkeys/s for %zu keys (%zu per GPU)\n", totalMs, gkeys, total, n);
    std::printf("one GPU's sample sort on %zu keys: %.3f ms = %.2f Gkeys/s; scaling efficiency %.2f (%d x its rate: %.2f Gkeys/s)\n",
                n, oneGpuMs, n / (oneGpuMs * 1e6), gkeys / (o.gpus * n / (oneGpuMs * 1e6)), o.gpus, o.gpus * n / (oneGpuMs * 1e6));
    std::printf("exchange: %.0f GB/s; NCCL all-to-all of the same bytes in equal parts: %.3f ms = %.0f GB/s; the exchange at %.2f of it\n",
                gbPerSecond(exchangeBytes, median(kExchange)), ncclMs, gbPerSecond(exchangeBytes, ncclMs), ncclMs / median(kExchange));
    return kExitPass;
}

template <class Key>
int runLessonAs(const Options& o, const Run& run) {
    CsvFile csv;
    csv.open(run.csvPath, "sample_sort_gpus");
    const Gpus gpus(o.gpus);
    for (const SortShape shape : o.all ? sortTableShapes() : std::vector<SortShape>{sortShapeFromName(o.input)}) {
        const int rc = runShape<Key>(o, run, gpus, shape, csv);
        if (rc != kExitPass) return rc;
    }
    return kExitPass;
}

constexpr size_t kVerifyLargest = 1000003;  // keys per GPU

// Every distribution (the adversarial ones too), key type and order, keys
// and pairs, at sizes per GPU from 0 up, each checked on poisoned outputs.
template <class Key>
int runVerifyAs(const Gpus& gpus, int& failed) {
    int cases = 0;
    for (const auto& shape : sortShapeNames())
        for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{1000}, size_t{65537}, kVerifyLargest})
            for (int mode = 0; mode < 4; ++mode) {
                const bool pairs = mode & 1, descending = mode & 2;
                const auto input = makeSortInput<Key>(shape.shape, n * gpus.count);
                Cluster<Key> c;
                setUp(c, gpus, n, pairs, descending, input);
                sortAcross(c);
                poisonAll(c);
                sortAcross(c);
                const bool ok = clusterMatches(sortCaseLabel<Key>(shape.name, n * gpus.count, descending, pairs), c, input, descending);
                failed += !ok, ++cases;
            }
    std::printf("verify %s on %d GPU%s: %d cases, %d failed so far\n", keyName<Key>(), gpus.count, gpus.count > 1 ? "s" : "", cases, failed);
    return cases;
}

int runVerify(const Options& o) {
    const Gpus gpus(o.gpus);
    int failed = 0;
    runVerifyAs<uint32_t>(gpus, failed);
    runVerifyAs<int32_t>(gpus, failed);
    runVerifyAs<float>(gpus, failed);
    return failed ? kExitCheckFailed : kExitPass;
}

// How many GPUs: --gpus, else every visible one (at most kMaxGpus).
inline void chooseGpus(Options& o, bool given, size_t n) {
    int count = 0;
    CUDA_CHECK(cudaGetDeviceCount(&count));
    if (!given) o.gpus = std::min(count, kMaxGpus);
    if (o.gpus > count) {
        std::fprintf(stderr, "sample_sort_gpus: --gpus %d, but only %d GPU%s visible\n", o.gpus, count, count > 1 ? "s are" : " is");
        std::exit(kExitBadArgument);
    }
    int version = 0;
    NCCL_CHECK(ncclGetVersion(&version));
    std::printf("%d GPU%s in one process, NCCL %d.%d.%d\n", o.gpus, o.gpus > 1 ? "s" : "", version / 10000, version / 100 % 100,
                version % 100);
    // A GPU's keys (+ values) and their bucketed copy, then what it receives
    // (room for 1/8 over the mean) with sample_sort's buffers and scratch.
    const size_t m = n + n / 8, perKey = 2 * (sizeof(uint32_t) + (o.pairs ? 4 : 0));
    const size_t need = n * perKey + sortBytesNeeded<uint32_t>(m, o.pairs, ScratchSizes(m, {8, 512}).bytes(m, o.pairs));
    for (int g = 0; g < o.gpus; ++g) {
        CUDA_CHECK(cudaSetDevice(g));
        requireDeviceMemory(need, "sample_sort_gpus (a GPU's keys, their buckets, what it receives, sample_sort's scratch)");
    }
}

}  // namespace across

// ===================================================================== main

int main(int argc, char** argv) {
    using namespace across;
    setenv("NCCL_NVLS_ENABLE", "0", 0);  // NVLink multicast off unless the environment says otherwise
    across::Options o;
    bool gpusGiven = false;
    std::vector<OptionSpec> options = sortOptions("keys per GPU (default 2^28; --quick 2^22)",
                                                  "sort uint32 values (each key's global index) with the keys; checked as stable",
                                                  "every distribution of the table");
    options.insert(options.begin(), {"--gpus", "N", "GPUs to use (default: every visible one, at most 8)"});
    return lessonEntry(argc, argv, {"sample_sort_gpus", "Chapter 14.3 across GPUs: a sample sort over NCCL, one exchange.",
        options, {"sampleSortGpus"},
        [&](const Args& args, const Run& run) {
            gpusGiven = args.has("--gpus");
            o.gpus = static_cast<int>(args.count("--gpus", 1, 1));
            if (o.gpus > kMaxGpus) args.fail("--gpus must be at most 8 (one host's GPUs)");
            readSortOptions(args, run, o, size_t{1} << 28, size_t{1} << 22, 34);
            // Checked again once the GPUs are counted (without --gpus, every visible one).
            if (o.pairs && !sortValuesFit(o.n * o.gpus)) args.fail("--pairs needs --n x --gpus below 2^32 - 1 (the values are 32-bit global indices)");
        },
        across::runSelftest,
        [&](const Run&) { chooseGpus(o, gpusGiven, kVerifyLargest); return across::runVerify(o); },
        [&](const Run& run) {
            chooseGpus(o, gpusGiven, o.n);
            if (o.pairs && !sortValuesFit(o.n * o.gpus)) {
                std::fprintf(stderr, "sample_sort_gpus: --pairs needs --n x GPUs below 2^32 - 1 (the values are 32-bit global indices)\n");
                return kExitBadArgument;
            }
            return onKeyType(o.key, [&](auto key) { return across::runLessonAs<decltype(key)>(o, run); });
        }});
}

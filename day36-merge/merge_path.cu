// Day 36: merge path. Two sorted arrays merged in parallel: each thread finds
// where its slice of the output starts with one binary search on a diagonal
// of the merge matrix (co-rank), then walks its slice with the sequential
// merge. No shared memory and no barrier: no thread reads what another wrote.
// The lesson prices the one knob, the slice size (output elements per thread),
// against one thread doing the whole merge on the same card.
//
// Build (one file):  nvcc -std=c++17 -O3 -arch=sm_75 -o merge_path merge_path.cu
//                    (use your card's -arch, e.g. sm_90 on an H100/H200)
// Run:
//   ./merge_path                 device report, checks, Part 1 and Part 2 tables
//   ./merge_path --quick         a tenth of the sizes, meant for a short Colab cell on a T4
//   ./merge_path --verify        every kernel on the adversarial inputs, exact checks
//   ./merge_path --selftest      host tests of coRank and the slice walk (no GPU)
//   ./merge_path --input seed-ties --per-thread 3    the exercise's input
//   ./merge_path --help          every option
// Exercise (README.md): build with -DEXERCISE_TIE_BUG to turn >= into > in
// coRank's second test; the value check still passes, the provenance check
// does not.

#include "../common/args.hpp"
#include "../common/check.hpp"
#include "../common/cuda_check.cuh"
#include "../common/device_report.cuh"
#include "../common/inputs.hpp"
#include "../common/library_merge.cuh"
#include "../common/selftest.hpp"
#include "../common/table.hpp"
#include "../common/timer.cuh"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

// ------------------------------------------------ building blocks (host + device)
//
// The tie rule, kept by every piece below: equal keys come from a first, so
// the merge is stable. In the merge matrix the split for output index k is
// the pair (i, j), i + j = k, with
//     i > 0 and j < n  =>  a[i - 1] <= b[j]   (nothing taken from a beats what b still holds)
//     j > 0 and i < m  =>  b[j - 1] <  a[i]   (strict: an a equal to a taken b must come first)
// Exactly one i satisfies both; coRank finds it by bisection.

// The co-rank of output index k: how many of the first k outputs come from a.
// `steps`, when given, counts the loop's iterations (the selftest checks the
// bound the lesson prints).
__host__ __device__ inline size_t coRank(size_t k, const float* __restrict__ a, size_t m,
                                         const float* __restrict__ b, size_t n,
                                         unsigned* steps = nullptr) {
    size_t i = (k < m) ? k : m;  // start with as much of a as the diagonal allows
    size_t j = k - i;
    size_t iLow = (k > n) ? (k - n) : 0;  // the answer's i is never below iLow...
    size_t jLow = (k > m) ? (k - m) : 0;  // ...nor its j below jLow
    while (true) {
        if (steps) ++*steps;
        if (i > 0 && j < n && a[i - 1] > b[j]) {
            // Took too much of a. The answer lies in [iLow, i - 1], so step
            // by half the gap rounded UP: with floor, a gap of 1 gives a step
            // of 0 and the loop never ends (a = 7, 8; b = 1, 2; k = 2).
            const size_t delta = (i - iLow + 1) >> 1;
            jLow = j;
            i -= delta;
            j += delta;
#ifdef EXERCISE_TIE_BUG
        } else if (j > 0 && i < m && b[j - 1] > a[i]) {  // the exercise: ties no longer go to a
#else
        } else if (j > 0 && i < m && b[j - 1] >= a[i]) {
#endif
            // Took too much of b (or took a b that ties an untaken a).
            const size_t delta = (j - jLow + 1) >> 1;
            iLow = i;
            j -= delta;
            i += delta;
        } else {
            return i;
        }
    }
}

// The most iterations coRank needs for inputs of lengths m and n: the search
// window never exceeds min(m, n) and halves (rounded up) on every move, so
// bit_width(min(m, n)) moves, plus the iteration that returns.
__host__ __device__ inline unsigned coRankMaxSteps(size_t m, size_t n) {
    size_t window = m < n ? m : n;
    unsigned bits = 0;
    while (window) {
        ++bits;
        window >>= 1;
    }
    return bits + 1;
}

// The sequential merge, resumed at split (i, j): writes `count` outputs
// starting at out[i + j]. With kTrackSource it also writes, per output,
// where it came from: position s in a||b (s < m: a[s]; else b[s - m]).
template <bool kTrackSource>
__host__ __device__ inline void mergeWalk(const float* __restrict__ a, size_t m,
                                          const float* __restrict__ b, size_t n, size_t i,
                                          size_t j, size_t count, float* __restrict__ out,
                                          size_t* __restrict__ source) {
    size_t k = i + j;
    for (const size_t end = k + count; k < end; ++k) {
        const bool takeA = j >= n || (i < m && a[i] <= b[j]);  // ties: a first
        if (kTrackSource) source[k] = takeA ? i : m + j;
        out[k] = takeA ? a[i++] : b[j++];
    }
}

// ------------------------------------------------------------------ kernels

// The baseline: the sequential merge, one thread of one block, <<<1, 1>>>.
// A bad kernel on purpose; it prices the loop on this card, not on the host.
template <bool kTrackSource>
__global__ void mergeOneThread(const float* a, size_t m, const float* b, size_t n, float* out,
                               size_t* source) {
    mergeWalk<kTrackSource>(a, m, b, n, 0, 0, m + n, out, source);
}

// Merge path: thread t owns outputs [t * perThread, (t + 1) * perThread).
// One co-rank search finds where its slice starts; the walk then takes
// exactly perThread steps, so the slice's end needs no second search.
template <bool kTrackSource>
__global__ void mergeCoRank(const float* a, size_t m, const float* b, size_t n, float* out,
                            size_t* source, size_t perThread) {
    const size_t total = m + n;
    const size_t thread = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t first = thread * perThread;
    if (first >= total) return;  // the last block's spare threads
    const size_t i = coRank(first, a, m, b, n);
    const size_t count = (total - first < perThread) ? total - first : perThread;
    mergeWalk<kTrackSource>(a, m, b, n, i, first - i, count, out, source);
}

// ----------------------------------------------------------------- launchers

constexpr unsigned kThreadsPerBlock = 256;       // the seed's block size
constexpr size_t kOneThreadLimit = size_t{1} << 24;  // past this, one thread takes too long to time
const std::vector<size_t> kSweep = {1, 4, 16, 64, 256};  // the seed's slice sizes

// The inputs and outputs of one merge on the device.
// a and b live back to back in one buffer, so that the copy reference row is
// a single cudaMemcpy of exactly the bytes the merge reads and writes.
struct DeviceMerge {
    size_t m = 0, n = 0;
    DeviceBuffer<float> inputs, out;  // inputs = a || b
    DeviceBuffer<size_t> source;      // provenance, written only by the checked runs
    const float* a() const { return inputs.get(); }
    const float* b() const { return inputs.get() + m; }
    size_t total() const { return m + n; }
    double bytesMoved() const { return 2.0 * total() * sizeof(float); }  // read m + n, write m + n
};

// A row of the lesson: perThread == 0 is the one-thread baseline.
struct Variant {
    size_t perThread;
    std::string label() const {
        return perThread == 0 ? std::string("mergeOneThread, <<<1, 1>>>")
                              : "mergeCoRank, " + std::to_string(perThread) + " per thread";
    }
};

size_t threadsFor(const Variant& v, size_t total) {
    return v.perThread == 0 ? 1 : (total + v.perThread - 1) / v.perThread;  // ceiling: the tail needs a thread
}

template <bool kTrackSource>
void launch(const Variant& v, DeviceMerge& d) {
    size_t* source = kTrackSource ? d.source.get() : nullptr;
    if (d.total() == 0) return;  // nothing to merge, and a grid of 0 blocks is an error
    if (v.perThread == 0) {
        mergeOneThread<kTrackSource><<<1, 1>>>(d.a(), d.m, d.b(), d.n, d.out.get(), source);
        CUDA_CHECK_LAUNCH("mergeOneThread");
        return;
    }
    const size_t blocks = (threadsFor(v, d.total()) + kThreadsPerBlock - 1) / kThreadsPerBlock;
    if (blocks > 0x7FFFFFFFu) {
        std::fprintf(stderr, "merge_path: %zu blocks exceed the grid limit; use more per thread\n", blocks);
        std::exit(kExitBadArgument);
    }
    mergeCoRank<kTrackSource><<<static_cast<unsigned>(blocks), kThreadsPerBlock>>>(
        d.a(), d.m, d.b(), d.n, d.out.get(), source, v.perThread);
    CUDA_CHECK_LAUNCH("mergeCoRank");
}

// ---------------------------------------------------------------- checking

// Checks the device's out (and, if asked, source) against the host merge.
bool matchesReference(const char* what, const MergeReference<float>& reference, const DeviceMerge& d,
                      bool withSource) {
    auto fetchKeys = [&d](size_t start, size_t count, float* keys) { d.out.download(keys, count, start); };
    FetchSources fetchSources;
    if (withSource)
        fetchSources = [&d](size_t start, size_t count, size_t* sources) { d.source.download(sources, count, start); };
    return reference.matches(what, fetchKeys, fetchSources);
}

// The gate every row passes before it is timed: the timed kernel's values,
// then the same kernel with provenance; the output is poisoned before each.
bool checkVariant(const Variant& v, const MergeReference<float>& reference, DeviceMerge& d) {
    const std::string what = v.label();
    d.out.poison();
    launch<false>(v, d);
    CUDA_CHECK(cudaDeviceSynchronize());
    if (!matchesReference(what.c_str(), reference, d, false)) return false;
    d.out.poison();
    d.source.poison();
    launch<true>(v, d);
    CUDA_CHECK(cudaDeviceSynchronize());
    return matchesReference(what.c_str(), reference, d, true);
}

// Device memory for a merge of `total` elements: a || b, out and source.
// Saturates instead of wrapping, so an absurd size asks for "too much".
void requireMergeMemory(size_t total) {
    constexpr size_t perElement = 2 * sizeof(float) + sizeof(size_t);
    const size_t bytes = total > SIZE_MAX / perElement ? SIZE_MAX : total * perElement;
    requireDeviceMemory(bytes, "merge_path (a, b, out and source)");
}

DeviceMerge uploadMerge(const std::vector<float>& a, const std::vector<float>& b) {
    DeviceMerge d;
    d.m = a.size();
    d.n = b.size();
    const size_t total = d.total();
    requireMergeMemory(total);
    d.inputs.allocate(total);
    d.out.allocate(total);
    d.source.allocate(total);
    d.inputs.upload(a.data(), d.m);
    d.inputs.upload(b.data(), d.n, d.m);  // b right after a
    return d;
}

// ---------------------------------------------------------------- selftest

// Runs the slices of a perThread-sized merge path on the host, with the same
// coRank and mergeWalk the kernel calls, each slice writing its own outputs,
// and checks that together they match the reference exactly, values and
// provenance. Returns false after printing the first problem.
bool slicesMatchReference(const std::string& what, const std::vector<float>& a,
                          const std::vector<float>& b, size_t perThread) {
    const size_t m = a.size(), n = b.size(), total = m + n;
    std::vector<float> out(total, -1.0f), wantKeys(total);
    std::vector<size_t> source(total, SIZE_MAX), wantSource(total);
    ReferenceMerge<float>(a.data(), m, b.data(), n).next(total, wantKeys.data(), wantSource.data());
    for (size_t first = 0; first < total; first += perThread) {
        const size_t i = coRank(first, a.data(), m, b.data(), n);
        mergeWalk<true>(a.data(), m, b.data(), n, i, first - i, std::min(perThread, total - first), out.data(),
                        source.data());
    }
    auto describe = [m](size_t s) { return describeMergeSource(s, m); };
    return compareExact(what.c_str(), out.data(), wantKeys.data(), total) &&
           compareProvenance(what.c_str(), source.data(), wantSource.data(), total, describe);
}

// The split coRank returns for k must satisfy both conditions, be the split
// the stable reference merge takes (the number of a's among its first k
// outputs), and be reached within coRankMaxSteps iterations.
bool coRankIsRight(const std::vector<float>& a, const std::vector<float>& b, size_t k,
                   const std::vector<size_t>& referenceSource) {
    const size_t m = a.size(), n = b.size();
    unsigned steps = 0;
    const size_t i = coRank(k, a.data(), m, b.data(), n, &steps);
    const size_t j = k - i;
    size_t fromA = 0;
    for (size_t p = 0; p < k; ++p) fromA += referenceSource[p] < m;
    const bool inRange = i <= m && j <= n;
    const bool firstTest = !(inRange && i > 0 && j < n) || a[i - 1] <= b[j];
    const bool secondTest = !(inRange && j > 0 && i < m) || b[j - 1] < a[i];
    if (inRange && firstTest && secondTest && i == fromA && steps <= coRankMaxSteps(m, n)) return true;
    const std::string inputs = m + n <= 64 ? "a=" + formatKeys(a) + ", b=" + formatKeys(b)
                                           : "m=" + std::to_string(m) + ", n=" + std::to_string(n);
    std::printf("coRank(k=%zu, %s) = %zu after %u steps; stable split is i=%zu, bound %u steps\n", k,
                inputs.c_str(), i, steps, fromA, coRankMaxSteps(m, n));
    return false;
}

int runSelftest() {
    // The seed's worked example: a = 1, 4, 6, 9 and b = 2, 3, 5, 7. Diagonal 3
    // meets the path at i = 1; k = 0, 2, 4, 6, 8 cross at i = 0, 1, 2, 3, 4.
    {
        const std::vector<float> a = {1, 4, 6, 9}, b = {2, 3, 5, 7};
        expect(coRank(3, a.data(), 4, b.data(), 4) == 1, "seed example: co-rank of 3 is 1");
        for (size_t k = 0; k <= 8; k += 2)
            expect(coRank(k, a.data(), 4, b.data(), 4) == k / 2, "seed example: crossing at k=" + std::to_string(k));
    }
    // The floor-instead-of-ceiling trace: a = 7, 8; b = 1, 2; k = 2. The floor
    // version stops moving at width 1 and never returns; the ceiling one ends.
    {
        const std::vector<float> a = {7, 8}, b = {1, 2};
        unsigned steps = 0;
        const size_t i = coRank(2, a.data(), 2, b.data(), 2, &steps);
        expect(i == 0 && steps <= coRankMaxSteps(2, 2),
               "floor trace: co-rank of 2 is 0 within " + std::to_string(coRankMaxSteps(2, 2)) + " steps");
    }
    // The exercise's input: ties across the inputs, 3 outputs per thread.
    expect(slicesMatchReference("seed ties example, 3 per thread", {1, 5, 9}, {5, 5, 5}, 3),
           "seed ties example: slices match the stable merge");
    // The check itself: the kept and the streamed reference accept a right
    // output and catch a planted tie swap (values equal, sources not) in the
    // second of the check's 2^24-element chunks, at the position planted.
    {
        std::vector<float> a, b;
        makeMergeInput(MergeShape::ManyTies, 9000001, 8000003, a, b);
        const size_t total = a.size() + b.size();
        std::vector<float> keys(total);
        std::vector<size_t> sources(total);
        ReferenceMerge<float>(a.data(), a.size(), b.data(), b.size()).next(total, keys.data(), sources.data());
        size_t swapAt = (size_t{1} << 24) + 5;  // the next place where an a and a b of equal value meet
        while (swapAt + 1 < total && !(sources[swapAt] < a.size() && sources[swapAt + 1] >= a.size() &&
                                       keys[swapAt] == keys[swapAt + 1]))
            ++swapAt;
        expect(swapAt + 1 < total, "the many-ties input has an a and a b of equal value side by side past 2^24");
        if (swapAt + 1 >= total) return selftestVerdict();
        std::vector<size_t> swapped = sources;
        std::swap(swapped[swapAt], swapped[swapAt + 1]);
        auto fetchKeys = [&keys](size_t start, size_t count, float* out) {
            std::copy(keys.begin() + start, keys.begin() + start + count, out);
        };
        auto fetchFrom = [](const std::vector<size_t>& from) {
            return FetchSources([&from](size_t start, size_t count, size_t* out) {
                std::copy(from.begin() + start, from.begin() + start + count, out);
            });
        };
        using Keep = MergeReference<float>::Keep;
        for (Keep keep : {Keep::IfItFits, Keep::Never}) {
            const MergeReference<float> reference(a, b, keep);
            const std::string mode = reference.kept() ? "kept" : "streamed";
            expect(reference.matches("right output (" + mode + ")", fetchKeys, fetchFrom(sources)),
                   "the " + mode + " reference accepts the stable merge");
            std::printf("planted tie swap at output position %zu, %s reference: ", swapAt, mode.c_str());
            expect(!reference.matches("tie swap", fetchKeys, fetchFrom(swapped)),
                   "the " + mode + " reference catches a tie swap");
        }
    }
    // Exhaustive: every pair of sorted arrays of length 0..6 over 3 keys (ties
    // everywhere), every k, every slice size 1..7.
    {
        const auto arrays = allSortedArrays<float>(6, 3);
        size_t pairs = 0, splits = 0, sliced = 0;
        bool splitOk = true, sliceOk = true;
        for (const auto& a : arrays) {
            for (const auto& b : arrays) {
                ++pairs;
                const size_t total = a.size() + b.size();
                std::vector<float> keys(total);
                std::vector<size_t> source(total);
                ReferenceMerge<float>(a.data(), a.size(), b.data(), b.size()).next(total, keys.data(), source.data());
                for (size_t k = 0; k <= total && splitOk; ++k, ++splits) splitOk = coRankIsRight(a, b, k, source);
                for (size_t perThread = 1; perThread <= 7 && sliceOk; ++perThread, ++sliced)
                    sliceOk = slicesMatchReference("slices of " + formatKeys(a) + " and " + formatKeys(b) + ", " +
                                                       std::to_string(perThread) + " per thread",
                                                   a, b, perThread);
                if (!splitOk || !sliceOk) break;
            }
            if (!splitOk || !sliceOk) break;
        }
        expect(splitOk, "exhaustive: co-rank splits");
        expect(sliceOk, "exhaustive: slices match the stable merge");
        std::printf("exhaustive: %zu pairs of sorted arrays, %zu co-ranks, %zu slicings\n", pairs, splits, sliced);
    }
    // Long inputs with ties, to hold the step bound where it is large.
    {
        bool ok = true;
        for (MergeShape shape : {MergeShape::Random, MergeShape::FewDistinct, MergeShape::ABelowB,
                                 MergeShape::BBelowA, MergeShape::AllEqual}) {
            for (auto [m, n] : {std::pair<size_t, size_t>{1u << 20, 1u << 20}, {(1u << 21) + 5, 3}, {7, 1u << 20}}) {
                std::vector<float> a, b;
                makeMergeInput(shape, m, n, a, b);
                std::vector<float> keys(m + n);
                std::vector<size_t> source(m + n);
                ReferenceMerge<float>(a.data(), m, b.data(), n).next(m + n, keys.data(), source.data());
                SplitMix64 rng(m ^ n);
                for (int trial = 0; trial < 200 && ok; ++trial) ok = coRankIsRight(a, b, rng.below(m + n + 1), source);
                if (!ok) std::printf("(input shape %s)\n", mergeShapeName(shape));
            }
        }
        expect(ok, "long inputs: co-rank is the stable split within the step bound");
    }
    return selftestVerdict();
}

// ------------------------------------------------------------------ verify

int runVerify() {
    std::vector<Variant> variants = {{0}};
    for (size_t perThread : {size_t{1}, size_t{3}, size_t{4}, size_t{16}, size_t{64}, size_t{256}})
        variants.push_back({perThread});
    int failed = 0;
    const auto cases = adversarialMergeCases(kThreadsPerBlock * 4);
    for (const MergeCase& c : cases) {
        std::vector<float> a, b;
        makeMergeInput(c.shape, c.m, c.n, a, b);
        DeviceMerge d = uploadMerge(a, b);
        const MergeReference<float> reference(a, b);
        bool ok = true;
        for (const Variant& v : variants) ok = ok && checkVariant(v, reference, d);
        std::printf("%-5s %-13s m=%-8zu n=%-8zu %zu kernels\n", ok ? "ok" : "FAIL", mergeShapeName(c.shape),
                    a.size(), b.size(), variants.size());
        failed += !ok;
    }
    std::printf("verify: %zu inputs, %d failed\n", cases.size(), failed);
    return failed ? kExitCheckFailed : kExitPass;
}

// -------------------------------------------------------------------- main

// Everything the command line chooses, read (and refused, exit 2) before
// any CUDA call, so a bad argument never looks like a missing GPU.
struct LessonOptions {
    MergeShape shape;
    size_t m, n;
    std::vector<size_t> sweep;
    bool timing;
    TimingPlan plan;
    std::string csvPath;
};

LessonOptions readOptions(const Args& args) {
    const bool quick = args.has("--quick");
    LessonOptions o;
    o.shape = mergeShapeFromName(args.choice("--input", "evens-odds", mergeShapeWords()));
    o.m = args.count("--m", quick ? 209776 : 2097763);  // the seed's sizes, or a tenth
    o.n = args.count("--n", quick ? 209715 : 2097152);
    o.sweep = args.countList("--per-thread", kSweep, 1);
    o.timing = !args.has("--no-timing");
    o.plan.repeats = static_cast<int>(args.count("--repeats", 15, 1));
    o.csvPath = args.text("--csv", "");
    return o;
}

int runLesson(const LessonOptions& o) {
    CsvFile csv;
    csv.open(o.csvPath, "merge_path");

    const DeviceInfo device = printDeviceReport();
    // Refuse sizes the card cannot hold before spending host memory on them.
    if (o.shape != MergeShape::SeedTies) requireMergeMemory(o.m > SIZE_MAX - o.n ? SIZE_MAX : o.m + o.n);
    std::vector<float> a, b;
    makeMergeInput(o.shape, o.m, o.n, a, b);
    DeviceMerge d = uploadMerge(a, b);
    const MergeReference<float> reference(a, b);  // the host merge every row is checked against
    const double mib = d.bytesMoved() / 1048576.0;
    std::printf("input %s; a: %zu elements, b: %zu, merged: %zu, %.1f MiB moved%s\n", mergeShapeName(o.shape),
                d.m, d.n, d.total(), mib,
                d.bytesMoved() < device.l2Bytes ? " (fits in L2)" : "");
    std::printf("co-rank bisects at most %zu, so at most %u steps per call\n", std::min(d.m, d.n),
                coRankMaxSteps(d.m, d.n));

    // Checked before timed: every row, values and provenance, whole output.
    const bool runOneThread = d.total() <= kOneThreadLimit;
    std::vector<Variant> rows;
    if (runOneThread) rows.push_back({0});
    for (size_t perThread : o.sweep) rows.push_back({perThread});
    for (const Variant& v : rows)
        if (!checkVariant(v, reference, d)) return kExitCheckFailed;
    LibraryMerge<float> library(d.a(), d.m, d.b(), d.n, d.out.get());  // on the same buffers
    d.out.poison();
    library();
    CUDA_CHECK(cudaDeviceSynchronize());
    if (!matchesReference(LibraryMerge<float>::name(), reference, d, false)) return kExitCheckFailed;
    std::printf("checks: %zu kernels and %s match the host merge exactly (values%s)\n", rows.size(),
                LibraryMerge<float>::name(), ", and every element's source for the kernels");
    if (!o.timing) return kExitPass;
    if (d.total() == 0) {
        std::printf("both inputs are empty: nothing to time\n");
        return kExitPass;
    }

    // The references first, so that every row can be read against them.
    const double copyMs = medianMs([&] {
        if (d.total())
            CUDA_CHECK(cudaMemcpyAsync(d.out.get(), d.inputs.get(), d.inputs.bytes(), cudaMemcpyDeviceToDevice));
    }, o.plan);
    const double libraryMs = medianMs(library, o.plan);
    const double copyGbs = gbPerSecond(d.bytesMoved(), copyMs);
    auto percentOfCopy = [&](double ms) { return fixed(100.0 * gbPerSecond(d.bytesMoved(), ms) / copyGbs, 1); };

    double oneThreadMs = 0;
    if (runOneThread) {
        Table part1("Part 1: the sequential merge, one thread on the device",
                    {{"kernel", 28, true}, {"time (ms)", 10}, {"GB/s", 10}, {"vs 1 thread", 11}}, &csv);
        TimingPlan slow = {1, std::min(o.plan.repeats, 5)};  // each launch takes long already
        oneThreadMs = medianMs([&] { launch<false>(Variant{0}, d); }, slow);
        part1.row({Variant{0}.label(), fixed(oneThreadMs, 3), fixed(gbPerSecond(d.bytesMoved(), oneThreadMs), 2), "1.00"});
    } else {
        std::printf("\nPart 1 skipped: one thread would take minutes for %zu elements (limit %zu)\n", d.total(),
                    kOneThreadLimit);
    }

    Table part2("Part 2: mergeCoRank, " + std::to_string(kThreadsPerBlock) + " threads per block",
                {{"per thread", 10}, {"threads", 12}, {"waves", 6}, {"time (ms)", 10}, {"GB/s", 10},
                 {"vs 1 thread", 11}, {"% of copy", 9}, {"vs library", 10}},
                &csv);
    size_t bestPerThread = 0;
    double bestMs = 0;
    for (size_t perThread : o.sweep) {
        const Variant v{perThread};
        const double ms = medianMs([&] { launch<false>(v, d); }, o.plan);
        const size_t threads = threadsFor(v, d.total());
        part2.row({std::to_string(perThread), std::to_string(threads),
                   fixed(static_cast<double>(threads) / device.threadSlots, 1), fixed(ms, 3),
                   fixed(gbPerSecond(d.bytesMoved(), ms), 2), runOneThread ? fixed(oneThreadMs / ms, 2) : "-",
                   percentOfCopy(ms), fixed(libraryMs / ms, 2)});
        if (bestPerThread == 0 || ms < bestMs) {
            bestPerThread = perThread;
            bestMs = ms;
        }
    }

    Table references("Reference rows, the same bytes in the same run",
                     {{"operation", 36, true}, {"time (ms)", 10}, {"GB/s", 10}, {"% of copy", 9}}, &csv);
    references.row({"cudaMemcpy device to device", fixed(copyMs, 4), fixed(copyGbs, 1), "100.0"});
    references.row({LibraryMerge<float>::name(), fixed(libraryMs, 4), fixed(gbPerSecond(d.bytesMoved(), libraryMs), 1),
                    percentOfCopy(libraryMs)});

    std::printf("\nEvery row above wrote the same %zu elements, and the host compared all of them\n"
                "(values and sources) against its own merge before the row was timed. GB/s counts\n"
                "only the %.1f MiB the merge must move; the co-rank searches read on top of it.\n",
                d.total(), mib);
    std::printf("best: %zu per thread, %.4f ms%s\n", bestPerThread, bestMs,
                runOneThread ? (", " + fixed(oneThreadMs / bestMs, 0) + " x one thread").c_str() : "");
    return kExitPass;
}

// The command line: one mode per run (see the first comment).
int runCommandLine(int argc, char** argv) {
    const Args args("merge_path",
                    "Day 36: merge path -- two sorted float arrays merged with one co-rank search per thread.",
                    {{"--quick", "", "a tenth of the default sizes (meant for a short Colab cell on a T4)"},
                     {"--m", "N", "length of a (default 2097763, the seed's)"},
                     {"--n", "N", "length of b (default 2097152)"},
                     {"--input", "SHAPE", "evens-odds (default: no ties), random, all-equal, few-distinct, "
                                          "many-ties, a-below-b, b-below-a, seed-ties (a=1,5,9 b=5,5,5)"},
                     {"--per-thread", "LIST", "slice sizes to sweep, comma-separated (default 1,4,16,64,256)"},
                     {"--repeats", "N", "timed runs per row; the median is reported (default 15)"},
                     {"--no-timing", "", "run the checks only"},
                     {"--csv", "FILE", "also write the tables as CSV"},
                     {"--verify", "", "every kernel on the adversarial inputs, exact checks, no timing"},
                     {"--selftest", "", "host-only tests of coRank and the slice walk (no GPU needed)"}},
                    argc, argv);
    if (args.has("--selftest")) return runSelftest();
    const LessonOptions options = readOptions(args);
    requireCudaDevice("merge_path");
    if (args.has("--verify")) return runVerify();
    return runLesson(options);
}

int main(int argc, char** argv) {
    return lessonMain("merge_path", [&] { return runCommandLine(argc, argv); });
}

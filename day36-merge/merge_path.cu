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
// Reading map: "building blocks" (coRank, mergeWalk, the tie rule), "kernels",
// "launchers", "the variant table", "selftest", "the lesson" (checks, then
// the timed tables), "main". This lesson has no production part: the seed's
// kernel is the lesson (ch12-merge-tiled takes it further).
// Change: --per-thread (the sweep), --m, --n, --input. Exercise (README.md):
// build with -DEXERCISE_TIE_BUG to turn >= into > in coRank's second test;
// the value check still passes, the provenance check does not.

#include "../common/inputs.hpp"
#include "../common/merge_buffers.cuh"
#include "../common/selftest.hpp"
#include "../common/variants.hpp"

// ======================================================= Part A: the seed
// ---------------------------------------------- building blocks (host + device)
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
__host__ __device__ inline size_t coRank(size_t k, const float* __restrict__ a, size_t m, const float* __restrict__ b,
                                         size_t n, unsigned* steps = nullptr) {
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
__host__ __device__ inline void mergeWalk(const float* __restrict__ a, size_t m, const float* __restrict__ b, size_t n,
                                          size_t i, size_t j, size_t count, float* __restrict__ out,
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
__global__ void mergeOneThread(const float* a, size_t m, const float* b, size_t n, float* out, size_t* source) {
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

constexpr unsigned kThreadsPerBlock = 256;           // the seed's block size
constexpr size_t kOneThreadLimit = size_t{1} << 24;  // past this, one thread takes too long to time

// One merge on the device: a||b, out, and each output's source (written by
// the kernels themselves, in the checked runs that ask for it).
struct Merge : MergeBuffers<float, size_t> {
    bool trackSource = false;
    Merge(const std::vector<float>& a, const std::vector<float>& b)
        : MergeBuffers(uploadMerge<float, size_t>(a, b, false, 0, "merge_path (a, b, out and source)")) {}
};

// perThread == 0 is the one-thread baseline.
template <bool kTrackSource>
void launchAs(size_t perThread, Merge& d) {
    if (d.total() == 0) return;  // nothing to merge, and a grid of 0 blocks is an error
    if (perThread == 0) {
        mergeOneThread<kTrackSource><<<1, 1>>>(d.a(), d.m, d.b(), d.n, d.keysOut.get(), d.valuesOut.get());
        CUDA_CHECK_LAUNCH("mergeOneThread");
        return;
    }
    const unsigned blocks = gridFor(ceilDiv(d.total(), perThread), kThreadsPerBlock, "merge_path");  // the tail needs a thread
    mergeCoRank<kTrackSource><<<blocks, kThreadsPerBlock>>>(d.a(), d.m, d.b(), d.n, d.keysOut.get(), d.valuesOut.get(), perThread);
    CUDA_CHECK_LAUNCH("mergeCoRank");
}
void launch(size_t perThread, Merge& d) { d.trackSource ? launchAs<true>(perThread, d) : launchAs<false>(perThread, d); }

// ========================================================= the variant table

std::vector<Variant<Merge>> variants(const std::vector<size_t>& sweep, bool withOneThread, const DeviceInfo& device,
                                     size_t total) {
    std::vector<Variant<Merge>> rows;
    if (withOneThread) rows.push_back({"mergeOneThread <<<1, 1>>>", {"all", "1", "0.0"}, [](Merge& d) { launch(0, d); }});
    for (size_t perThread : sweep) {
        const size_t threads = ceilDiv(total, perThread);
        rows.push_back({"mergeCoRank " + std::to_string(perThread) + " per thread",
                        {std::to_string(perThread), std::to_string(threads),
                         fixed(static_cast<double>(threads) / std::max<long long>(device.threadSlots, 1), 1)},
                        [perThread](Merge& d) { launch(perThread, d); }});
    }
    return rows;
}

// The gate every row passes before it is timed: the timed kernel's values,
// then the same kernel with provenance; the outputs are poisoned before each.
bool checkAll(const std::vector<Variant<Merge>>& rows, Merge& d, const MergeReference<float>& reference) {
    bool ok = true;
    for (bool track : {false, true}) {
        d.trackSource = track;
        ok = ok && checkRows(rows, d, [&](const std::string& what) { return mergeMatches(what, reference, d, track); });
    }
    d.trackSource = false;
    return ok;
}

// ================================================================= selftest

// Runs the slices of a perThread-sized merge path on the host, with the same
// coRank and mergeWalk the kernel calls, each slice writing its own outputs,
// and checks them against the reference, values and provenance.
bool slicesMatchReference(const std::string& what, const std::vector<float>& a, const std::vector<float>& b,
                          size_t perThread) {
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
    const std::string inputs = m + n <= 64 ? "a=" + formatKeys(a) + ", b=" + formatKeys(b) : "a long input";
    std::printf("coRank(k=%zu, %s, m=%zu, n=%zu) = %zu after %u steps; stable split is i=%zu, bound %u steps\n", k,
                inputs.c_str(), m, n, i, steps, fromA, coRankMaxSteps(m, n));
    return false;
}

int runSelftest() {
    // The seed's worked example: a = 1, 4, 6, 9 and b = 2, 3, 5, 7. Diagonal 3
    // meets the path at i = 1; k = 0, 2, 4, 6, 8 cross at i = 0, 1, 2, 3, 4.
    const std::vector<float> a = {1, 4, 6, 9}, b = {2, 3, 5, 7};
    expect(coRank(3, a.data(), 4, b.data(), 4) == 1, "seed example: co-rank of 3 is 1");
    for (size_t k = 0; k <= 8; k += 2)
        expect(coRank(k, a.data(), 4, b.data(), 4) == k / 2, "seed example: crossing at k=" + std::to_string(k));
    // The floor-instead-of-ceiling trace: a = 7, 8; b = 1, 2; k = 2. The floor
    // version stops moving at width 1 and never returns; the ceiling one ends.
    unsigned steps = 0;
    expect(coRank(2, std::vector<float>{7, 8}.data(), 2, std::vector<float>{1, 2}.data(), 2, &steps) == 0 &&
               steps <= coRankMaxSteps(2, 2), "floor trace: co-rank of 2 is 0 within the step bound");
    // The exercise's input: ties across the inputs, 3 outputs per thread.
    expect(slicesMatchReference("seed ties example, 3 per thread", {1, 5, 9}, {5, 5, 5}, 3),
           "seed ties example: slices match the stable merge");
    // Exhaustive (every pair of sorted arrays of length 0..6 over 3 keys, ties
    // everywhere: every k, every slice size 1..7), then long inputs with ties
    // at 200 random k each, where the step bound is large. The first failure ends each.
    const auto arrays = allSortedArrays<float>(6, 3);
    std::vector<std::pair<std::vector<float>, std::vector<float>>> inputs;
    for (const auto& p : arrays)
        for (const auto& q : arrays) inputs.push_back({p, q});
    const size_t exhaustive = inputs.size();
    for (MergeShape shape : {MergeShape::Random, MergeShape::FewDistinct, MergeShape::ABelowB, MergeShape::BBelowA,
                             MergeShape::AllEqual})
        for (auto [m, n] : {std::pair<size_t, size_t>{1u << 20, 1u << 20}, {(1u << 21) + 5, 3}, {7, 1u << 20}}) {
            inputs.emplace_back();
            makeMergeInput(shape, m, n, inputs.back().first, inputs.back().second);
        }
    bool ok = true;
    for (size_t x = 0; x < inputs.size() && ok; ++x) {
        const auto& [p, q] = inputs[x];
        std::vector<float> keys(p.size() + q.size());
        std::vector<size_t> source(keys.size());
        ReferenceMerge<float>(p.data(), p.size(), q.data(), q.size()).next(keys.size(), keys.data(), source.data());
        SplitMix64 rng(x);
        for (size_t t = 0; t <= (x < exhaustive ? keys.size() : 199) && ok; ++t)
            ok = coRankIsRight(p, q, x < exhaustive ? t : rng.below(keys.size() + 1), source);
        for (size_t perThread = 1; perThread <= 7 && ok && x < exhaustive; ++perThread)
            ok = slicesMatchReference("slices of " + formatKeys(p) + " and " + formatKeys(q) + ", " +
                                          std::to_string(perThread) + " per thread", p, q, perThread);
    }
    expect(ok, "co-rank is the stable split within the step bound, and the slices match the stable merge");
    std::printf("exhaustive: %zu pairs of sorted arrays, every k and slice size 1..7; %zu long inputs\n", exhaustive,
                inputs.size() - exhaustive);
    return selftestVerdict();
}

// =============================================================== the lesson

struct Options { MergeShape shape; size_t m, n; std::vector<size_t> sweep; };

int runVerify(const Run& run) {
    int failed = 0;
    const auto cases = adversarialMergeCases(kThreadsPerBlock * 4);
    for (const MergeCase& c : cases) {
        std::vector<float> a, b;
        makeMergeInput(c.shape, c.m, c.n, a, b);
        Merge d(a, b);
        const auto rows = selectRows(variants({1, 3, 4, 16, 64, 256}, true, run.device, d.total()), run);
        const bool ok = checkAll(rows, d, MergeReference<float>(a, b));
        std::printf("%-5s %-13s m=%-8zu n=%-8zu %zu kernels\n", ok ? "ok" : "FAIL", mergeShapeName(c.shape), a.size(),
                    b.size(), rows.size());
        failed += !ok;
    }
    std::printf("verify: %zu inputs, %d failed\n", cases.size(), failed);
    return failed ? kExitCheckFailed : kExitPass;
}

int runLesson(const Options& o, const Run& run) {
    CsvFile csv;  // opened first: an unwritable path is a bad argument, before any work
    csv.open(run.csvPath, "merge_path");
    // Refuse sizes the card cannot hold before spending host memory on them.
    const size_t total = o.shape == MergeShape::SeedTies ? 0 : o.m > SIZE_MAX - o.n ? SIZE_MAX : o.m + o.n;
    requireDeviceMemory(mergeBytesNeeded<float, size_t>(total, false), "merge_path (a, b, out and source)");
    std::vector<float> a, b;
    makeMergeInput(o.shape, o.m, o.n, a, b);
    Merge d(a, b);
    const MergeReference<float> reference(a, b);  // the host merge every row is checked against
    const double bytes = 2.0 * d.total() * sizeof(float);  // read m + n, write m + n
    std::printf("input %s; a: %zu elements, b: %zu, merged: %zu, %.1f MiB moved%s\n", mergeShapeName(o.shape), d.m,
                d.n, d.total(), bytes / 1048576.0, bytes < run.device.l2Bytes ? " (fits in L2)" : "");
    std::printf("co-rank bisects at most %zu, so at most %u steps per call\n", std::min(d.m, d.n),
                coRankMaxSteps(d.m, d.n));

    // Checked before timed: every row, values and provenance, whole output.
    const auto rows = selectRows(variants(o.sweep, d.total() <= kOneThreadLimit, run.device, d.total()), run);
    LibraryMerge<float> library(d.a(), d.m, d.b(), d.n, d.keysOut.get());  // on the same buffers
    const Variant<Merge> libraryRow{LibraryMerge<float>::name(), {}, [&](Merge&) { library(); }};
    if (!checkAll(rows, d, reference) ||
        !checkRows({libraryRow}, d, [&](const std::string& what) { return mergeMatches(what, reference, d, false); }))
        return kExitCheckFailed;
    std::printf("checks: %zu kernels (values and sources) and %s (values) match the host merge\n", rows.size(),
                libraryRow.name.c_str());
    if (!run.timing || d.total() == 0) return kExitPass;

    TimedTable<Merge> table{"mergeOneThread, then mergeCoRank with " + std::to_string(kThreadsPerBlock) +
                                " threads per block", {{"per thread", 10}, {"threads", 10}, {"waves", 6}}, bytes, 0,
                            [&] { d.copy(); }, libraryRow};
    if (!rows.empty() && rows.front().name.rfind("mergeOneThread", 0) == 0) table.baseline = "1 thread";
    if (d.total() > kOneThreadLimit) std::printf("one thread skipped: it would take minutes (limit %zu)\n", kOneThreadLimit);
    timeRows(table, rows, d, run, &csv);
    std::printf("\nEvery row was compared, values and sources, with the host merge before it was timed. GB/s counts\n"
                "only the bytes the merge must move (the co-rank searches read on top); waves: threads / thread slots.\n");
    return kExitPass;
}

// ===================================================================== main

int main(int argc, char** argv) {
    Options o;
    return lessonEntry(argc, argv, {"merge_path", "Day 36: merge path -- two sorted float arrays merged with one co-rank search per thread.",
        {{"--m", "N", "length of a (default 2097763, the seed's)"},
         {"--n", "N", "length of b (default 2097152)"},
         {"--input", "SHAPE", "evens-odds (default: no ties), random, all-equal, few-distinct, many-ties, a-below-b, "
                              "b-below-a, seed-ties (a=1,5,9 b=5,5,5)"},
         {"--per-thread", "LIST", "slice sizes to sweep, comma-separated (default 1,4,16,64,256)"}},
        {"mergeOneThread", "mergeCoRank"},
        [&](const Args& args, const Run& run) {
            o.shape = mergeShapeFromName(args.choice("--input", "evens-odds", mergeShapeWords()));
            o.m = args.count("--m", run.quick ? 209776 : 2097763);  // the seed's sizes, or a tenth
            o.n = args.count("--n", run.quick ? 209715 : 2097152);
            o.sweep = args.countList("--per-thread", {1, 4, 16, 64, 256}, 1);  // the seed's slice sizes
        },
        runSelftest, runVerify, [&](const Run& run) { return runLesson(o, run); }});
}

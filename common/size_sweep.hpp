// The size sweep of the chapter-14 sorts (--sizes): at each n, the lesson's
// best row beside CUB's merge and radix sorts and a device copy of the same
// bytes, one table row a size, so the size where a sort overtakes CUB shows
// (scripts/plot_sweep.py draws Gkeys/s against n on a log2 axis). Each size
// is checked before it is timed, as in the lesson's own table. No algorithm
// lives here.
#pragma once

#include "args.hpp"
#include "cuda_check.cuh"
#include "lesson.hpp"
#include "table.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

inline OptionSpec sizeSweepOption() {
    return {"--sizes", "LIST", "the size sweep's n, comma-separated (timed runs; default without --n or --dist all: "
                               "2^16,2^18,...,2^28, --quick up to 2^24)"};
}

// The sweep's sizes: --sizes LIST; else, in the lesson's default run (no --n,
// no --dist all), 2^16, 2^18, ... up to 2^28 (2^24 with --quick); else none.
inline std::vector<size_t> readSweepSizes(const Args& args, const Run& run, bool defaultRun) {
    std::vector<size_t> sizes;
    if (defaultRun)
        for (int log2 = 16; log2 <= (run.quick ? 24 : 28); log2 += 2) sizes.push_back(size_t{1} << log2);
    return args.countList("--sizes", sizes, 1);
}

// One size's figures: the fastest row and its time, CUB's two sorts, the copy (ms); no name where no row runs at it.
struct SweepPoint {
    std::string best;
    double ms = 0, mergeMs = 0, radixMs = 0, copyMs = 0;
};

// The sweep: point(n, out) checks and times one size and returns false if a
// check failed (the sweep then stops, exit 1, saying at which n); bytesFor(n)
// is what the size needs on the card. A size that needs more than is free,
// or at which no row runs (--only), is left out with a line under the table.
template <class Point, class Bytes>
int runSizeSweep(const std::string& title, const std::vector<size_t>& sizes, Bytes bytesFor, Point point, CsvFile& csv) {
    if (sizes.empty()) return kExitPass;
    Table table(title, {{"n", 10}, {"log2 n", 6}, {"fastest row", 38, true}, {"time (ms)", 9}, {"Gkeys/s", 7}, {"vs merge", 8},
                        {"vs radix", 8}, {"CUB merge Gkeys/s", 17}, {"CUB radix Gkeys/s", 17}, {"copy Gkeys/s", 12}}, &csv);
    std::vector<std::string> leftOut;
    bool failed = false;
    for (size_t n : sizes) {
        size_t freeBytes = 0, totalBytes = 0;
        CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
        if (bytesFor(n) > freeBytes) {
            leftOut.push_back("n = " + std::to_string(n) + " needs " + std::to_string(bytesFor(n)) + " bytes of device memory, " +
                              std::to_string(freeBytes) + " are free: left out");
            continue;
        }
        SweepPoint p;
        failed = !point(n, p);
        if (failed || p.best.empty()) {
            leftOut.push_back("n = " + std::to_string(n) + (failed ? ": a check failed, the sweep stops" : ": no row runs at this size, left out"));
            if (failed) break;
            continue;
        }
        const double keys = static_cast<double>(n) / 1e6;  // over a time in ms: Gkeys/s
        table.row({std::to_string(n), fixed(std::log2(static_cast<double>(n)), 1), p.best, fixed(p.ms, p.ms < 1 ? 4 : 3),
                   fixed(keys / p.ms, 2), fixed(p.mergeMs / p.ms, 2), fixed(p.radixMs / p.ms, 2), fixed(keys / p.mergeMs, 2),
                   fixed(keys / p.radixMs, 2), fixed(keys / p.copyMs, 2)});
    }
    for (const auto& line : leftOut) std::printf("  %s\n", line.c_str());
    return failed ? kExitCheckFailed : kExitPass;
}

// The size sweep of the chapter-14 sorts (--sizes): at each n, the row the
// lesson's sort chooses (and why) beside the fastest row measured, CUB's
// merge and radix sorts and a device copy of the same bytes, one table row a
// size, so the size where a sort overtakes CUB shows (scripts/plot_sweep.py
// draws Gkeys/s against n on a log2 axis). Each size is checked before it is
// timed, as in the lesson's own table. Also the --dist all summary, a row a
// distribution. No algorithm lives here.
#pragma once

#include "args.hpp"
#include "cuda_check.cuh"
#include "lesson.hpp"
#include "table.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <utility>
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

// One size's figures: the row the sort chooses at n (why: its reason) and its time, the fastest row measured and
// its time, CUB's two sorts, the copy (ms); no chosen name where no row runs at n.
struct SweepPoint {
    std::string chosen, why, best;
    double chosenMs = 0, ms = 0, mergeMs = 0, radixMs = 0, copyMs = 0;
};

// A size's point from its timed rows (names: the rows' names in order): the chosen row's time, or where it did not
// run (--only), the fastest row's, the why saying so.
template <class TimedRows>
SweepPoint sweepPoint(const TimedRows& t, const std::vector<std::string>& names, const std::string& chosen, const std::string& why) {
    SweepPoint p{chosen, why, names[t.best], 0, t.ms[t.best], t.libraryMs, t.othersMs.at(0), t.copyMs};
    const size_t c = static_cast<size_t>(std::find(names.begin(), names.end(), chosen) - names.begin());
    if (c == names.size()) p.chosen = p.best, p.why = "the row the sort chooses (" + chosen + ") did not run: the fastest stands in";
    p.chosenMs = c == names.size() ? p.ms : t.ms[c];
    return p;
}

// A --dist all run's summary, a row a distribution: the chosen row's time beside CUB's two sorts (their Gkeys/s
// columns for scripts/plot_sweep.py's bars); extra: the lesson's own columns, a cell each a row.
struct DistributionPoint {
    std::string dist;
    SweepPoint point;
    std::vector<std::string> extra;
};
inline void distributionSummary(const std::string& title, size_t n, const std::vector<DistributionPoint>& rows,
                                const std::vector<Column>& extraColumns, CsvFile& csv) {
    if (rows.size() < 2) return;
    std::vector<Column> columns = {{"distribution", 12, true}, {"time (ms)", 9}, {"Gkeys/s", 7}, {"vs merge", 8}, {"vs radix", 8}};
    columns.insert(columns.end(), extraColumns.begin(), extraColumns.end());
    columns.insert(columns.end(), {{"CUB merge Gkeys/s", 17}, {"CUB radix Gkeys/s", 17}});
    Table table(title, columns, &csv);
    const double keys = static_cast<double>(n) / 1e6;  // over a time in ms: Gkeys/s
    for (const auto& r : rows) {
        const SweepPoint& p = r.point;
        std::vector<std::string> cells = {r.dist, fixed(p.chosenMs, 3), fixed(keys / p.chosenMs, 2), fixed(p.mergeMs / p.chosenMs, 2),
                                          fixed(p.radixMs / p.chosenMs, 2)};
        cells.insert(cells.end(), r.extra.begin(), r.extra.end());
        cells.insert(cells.end(), {fixed(keys / p.mergeMs, 2), fixed(keys / p.radixMs, 2)});
        table.row(cells);
    }
}

// The sweep: point(n, out) checks and times one size and returns false if a
// check failed (the sweep then stops, exit 1, saying at which n); bytesFor(n)
// is what the size needs on the card. A size that needs more than is free,
// or at which no row runs (--only), is left out with a line under the table.
// Under the table, why each row was chosen, a line for each stretch of sizes.
template <class Point, class Bytes>
int runSizeSweep(const std::string& title, const std::vector<size_t>& sizes, Bytes bytesFor, Point point, CsvFile& csv) {
    if (sizes.empty()) return kExitPass;
    Table table(title, {{"n", 10}, {"log2 n", 6}, {"chosen row", 38, true}, {"time (ms)", 9}, {"Gkeys/s", 7}, {"vs merge", 8},
                        {"vs radix", 8}, {"fastest row measured", 48, true}, {"CUB merge Gkeys/s", 17}, {"CUB radix Gkeys/s", 17},
                        {"copy Gkeys/s", 12}}, &csv);
    std::vector<std::string> leftOut;
    std::vector<std::pair<std::string, std::string>> whys;  // (the first n of a stretch, its row and why)
    bool failed = false;
    for (size_t n : sizes) {
        size_t freeBytes = 0, totalBytes = 0;
        CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
        if (const size_t need = bytesFor(n); need > freeBytes) {
            leftOut.push_back("n = " + std::to_string(n) + " needs " + std::to_string(need) + " bytes of device memory, " +
                              std::to_string(freeBytes) + " are free: left out");
            continue;
        }
        SweepPoint p;
        failed = !point(n, p);
        if (failed || p.chosen.empty()) {
            leftOut.push_back("n = " + std::to_string(n) + (failed ? ": a check failed, the sweep stops" : ": no row runs at this size, left out"));
            if (failed) break;
            continue;
        }
        const double keys = static_cast<double>(n) / 1e6;  // over a time in ms: Gkeys/s
        const std::string log2n = fixed(std::log2(static_cast<double>(n)), 1);
        table.row({std::to_string(n), log2n, p.chosen, fixed(p.chosenMs, p.chosenMs < 1 ? 4 : 3), fixed(keys / p.chosenMs, 2),
                   fixed(p.mergeMs / p.chosenMs, 2), fixed(p.radixMs / p.chosenMs, 2),
                   p.best == p.chosen ? "the chosen row" : p.best + " (" + fixed(p.chosenMs / p.ms, 2) + " x faster)",
                   fixed(keys / p.mergeMs, 2), fixed(keys / p.radixMs, 2), fixed(keys / p.copyMs, 2)});
        const std::string reason = p.chosen + ": " + p.why;
        if (whys.empty() || whys.back().second != reason)
            whys.push_back({(n & (n - 1)) == 0 ? "2^" + std::to_string(static_cast<int>(std::log2(static_cast<double>(n)))) : std::to_string(n), reason});
    }
    for (const auto& [from, reason] : whys) std::printf("  from n = %s, %s\n", from.c_str(), reason.c_str());
    for (const auto& line : leftOut) std::printf("  %s\n", line.c_str());
    return failed ? kExitCheckFailed : kExitPass;
}

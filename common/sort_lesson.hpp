// The run the chapter-14 sorts share (merge_sort, sample_sort): the memory
// check, the CSV, the lesson's opening lines, a checked and timed table per
// distribution, the --dist all summary, then the size sweep. The lesson
// passes its names, its estimate of device memory, its opening and its
// table. No algorithm lives here.
#pragma once

#include "cuda_check.cuh"
#include "size_sweep.hpp"
#include "sort_options.hpp"

#include <functional>
#include <string>
#include <vector>

struct SortLesson {
    const char* program;                  // "merge_sort": the CSV's run line
    const char* memoryNeed;               // what the memory check names as needing bytesFor(n)
    std::string sortName;                 // "merge sort": in the size sweep's title
    std::string summaryTitle;             // the --dist all summary's
    std::vector<Column> summaryColumns;   // the lesson's own columns in it
    std::function<size_t(size_t)> bytesFor;  // device bytes a run at n needs
    std::function<bool()> opening;        // lines before the first table; false: a check failed (exit 1)
    // One table: n keys of one distribution checked, then timed, its point added to summary; echo false:
    // nothing printed (a point of the size sweep). Returns the exit code.
    std::function<int(SortShape, size_t n, bool echo, CsvFile*, std::vector<DistributionPoint>& summary)> table;
};

template <class Key>
int runSortLesson(const SortOptions& o, const Run& run, const SortLesson& lesson) {
    requireDeviceMemory(lesson.bytesFor(o.n), lesson.memoryNeed);
    CsvFile csv;
    csv.open(run.csvPath, lesson.program);
    if (!lesson.opening()) return kExitCheckFailed;
    std::vector<DistributionPoint> summary;
    for (SortShape shape : o.shapes())
        if (const int rc = lesson.table(shape, o.n, true, &csv, summary); rc != kExitPass) return rc;
    distributionSummary(lesson.summaryTitle, o.n, summary, lesson.summaryColumns, csv);
    if (!run.timing) return kExitPass;
    auto point = [&](size_t n, SweepPoint& p) {  // a size's uniform table, checked and timed, nothing printed
        std::vector<DistributionPoint> one;  // stays empty where no row runs at n (--only, a row's own size limit)
        const bool ok = lesson.table(SortShape::Uniform, n, false, nullptr, one) == kExitPass;
        if (ok && !one.empty()) p = one.front().point;
        return ok;
    };
    std::string keys = std::string(keyName<Key>()) + (o.pairs ? " pairs" : " keys");
    if (o.descending) keys += ", descending";
    return runSizeSweep("size sweep: " + lesson.sortName + ", uniform " + keys, o.sizes, lesson.bytesFor, point, csv);
}

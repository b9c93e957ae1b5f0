// The variant table every lesson keeps once: a row is a name, the knob cells
// it prints and a launcher. One list drives --only, --verify and every
// printed table; checkRows is the gate every row passes before timeRows times
// it, with the copy and the library row measured in the same run.
#pragma once

#include "lesson.hpp"
#include "table.hpp"
#include "timer.cuh"

#include <functional>
#include <string>
#include <vector>

template <class Problem>
struct Variant {
    std::string name;                      // "merge_path 256x32"; --only matches its beginning
    std::vector<std::string> knobs;        // cells under the table's knob columns
    std::function<void(Problem&)> launch;  // only enqueues work (no allocation, no copy), checks each launch
    double passes = 1;                     // passes over memory: a sort's GB/s counts each one
};

template <class Problem>
std::vector<Variant<Problem>> selectRows(const std::vector<Variant<Problem>>& rows, const Run& run) {
    std::vector<Variant<Problem>> chosen;
    for (const auto& row : rows)
        if (run.wants(row.name)) chosen.push_back(row);
    return chosen;
}

// A pipeline's steps, timed (StepMarks): a row a step with its time and, where it names the bytes it must
// move, its GB/s and its speed as a share of a copy's (copyBytes in copyMs); then the sum.
inline void stepTable(const std::string& title, const std::vector<std::string>& columns, const std::vector<StepTime>& steps,
                      double copyBytes, double copyMs, CsvFile& csv) {
    int nameWidth = 12, knobWidth = 10;
    for (const StepTime& step : steps)
        nameWidth = std::max(nameWidth, static_cast<int>(step.name.size())), knobWidth = std::max(knobWidth, static_cast<int>(step.knob.size()));
    Table table(title, {{columns.at(0), nameWidth, true}, {columns.at(1), knobWidth}, {"time (ms)", 9}, {"GB/s", 7}, {"% of copy", 9}}, &csv);
    const double copyRate = gbPerSecond(copyBytes, copyMs);
    auto shareOfCopy = [&](double bytes, double ms) { return bytes > 0 && copyRate > 0 ? fixed(100.0 * gbPerSecond(bytes, ms) / copyRate, 1) : ""; };
    double ms = 0, bytes = 0;
    for (const StepTime& step : steps) {
        table.row({step.name, step.knob, fixed(step.ms, 4), step.bytes > 0 ? fixed(gbPerSecond(step.bytes, step.ms), 0) : "",
                   shareOfCopy(step.bytes, step.ms)});
        ms += step.ms, bytes += step.bytes;
    }
    table.row({"sum", "", fixed(ms, 3), "", shareOfCopy(bytes, ms)});  // the steps' bytes over all their time
}

// A plan's steps (a sort's passes), each moving bytesPerStep, run in order and timed as above.
struct TimedStep { std::string name, knob; std::function<void()> launch; };
inline void stepTable(const std::string& title, const std::vector<std::string>& columns, const std::vector<TimedStep>& steps,
                      double bytesPerStep, double copyMs, const Run& run, CsvFile& csv) {
    const std::vector<StepTime> times = StepMarks::time([&](StepMarks& marks) {
        for (const TimedStep& step : steps) {
            step.launch();
            marks.step(step.name, step.knob, bytesPerStep);
        }
    }, run.plan);
    stepTable(title, columns, times, bytesPerStep, copyMs, csv);
}

template <class Problem>
std::vector<std::string> rowNames(const std::vector<Variant<Problem>>& rows) {
    std::vector<std::string> names;
    for (const auto& row : rows) names.push_back(row.name);
    return names;
}

// The gate: for each row, poison the outputs, launch, wait (a fault inside
// the kernel surfaces here, exit 3), and compare. check(what) prints the
// first difference with both answers and returns false; the first failing
// row ends the gate. announce: one "exact" line per row, for transcripts.
template <class Problem, class Check>
bool checkRows(const std::vector<Variant<Problem>>& rows, Problem& problem, Check check,
               const std::string& label = "", bool announce = false) {
    for (const auto& row : rows) {
        problem.poison();
        row.launch(problem);
        CUDA_CHECK(cudaDeviceSynchronize());
        if (!check(label.empty() ? row.name : row.name + " [" + label + "]")) return false;
        if (announce) std::printf("  %-44s exact\n", row.name.c_str());
    }
    return true;
}

// What a timed table needs beside its rows.
template <class Problem>
struct TimedTable {
    std::string title;
    std::vector<Column> knobColumns;   // their cells come from each row's knobs
    double bytesPerPass;               // what one pass must move: read once, write once
    double keys = 0;                   // when set, a Gkeys/s column (sorts)
    std::function<void()> copy;        // a device-to-device copy of the same bytes
    Variant<Problem> library;          // the CUB (or Thrust) routine, checked with the rows
    std::string versus = "vs CUB";
    std::string baseline;              // when set, the first row is the baseline: a "vs <baseline>" column
    std::vector<Variant<Problem>> others;  // more library rows (CUB's radix sort): timed, printed, never "best"
    bool echo = true;                  // false: timed, nothing printed (a size sweep's points)
};

struct TimedRows {
    double copyMs = 0, libraryMs = 0;
    std::vector<double> ms;  // one per row, in the rows' order
    std::vector<double> othersMs;
    size_t best = 0;         // the fastest row
};

// Times the copy, the library and every row (median of run.plan; a row
// whose first run takes over 100 ms gets 5 runs), prints one table with the
// copy and library rows last, and a line naming the fastest row.
template <class Problem>
TimedRows timeRows(const TimedTable<Problem>& spec, const std::vector<Variant<Problem>>& rows, Problem& problem,
                   const Run& run, CsvFile* csv) {
    TimedRows t;
    auto timed = [&](const std::function<void()>& launch) {
        const double first = medianMs(launch, {0, 1});
        return first > 100.0 ? medianMs(launch, {0, std::min(run.plan.repeats, 5)}) : medianMs(launch, run.plan);
    };
    t.copyMs = timed(spec.copy);
    t.libraryMs = timed([&] { spec.library.launch(problem); });
    const double copyGbs = gbPerSecond(spec.bytesPerPass, t.copyMs);

    std::vector<Column> columns = {{"kernel", 34, true}};
    for (const auto& c : spec.knobColumns) columns.push_back(c);
    for (const Column& c : std::vector<Column>{{"time (ms)", 9}, {"GB/s", 7}}) columns.push_back(c);
    if (spec.keys > 0) columns.push_back({"Gkeys/s", 7});
    columns.push_back({"% of copy", 9});
    if (!spec.baseline.empty()) columns.push_back({"vs " + spec.baseline, 11});
    columns.push_back({spec.versus, 8});
    Table table(spec.title, columns, csv, spec.echo);
    auto printRow = [&](const std::string& name, std::vector<std::string> knobs, double ms, double passes) {
        knobs.resize(spec.knobColumns.size());
        std::vector<std::string> cells = {name};
        cells.insert(cells.end(), knobs.begin(), knobs.end());
        const double gbs = gbPerSecond(spec.bytesPerPass * passes, ms);
        cells.push_back(fixed(ms, ms < 1 ? 4 : 3));
        cells.push_back(passes > 0 ? fixed(gbs, 0) : "-");
        if (spec.keys > 0) cells.push_back(fixed(spec.keys / (ms * 1e6), 2));
        cells.push_back(passes > 0 ? fixed(100.0 * gbs / copyGbs, 1) : "-");
        if (!spec.baseline.empty()) cells.push_back(t.ms.empty() ? "-" : fixed(t.ms.front() / ms, 1));
        cells.push_back(fixed(t.libraryMs / ms, 2));
        table.row(cells);
    };
    for (size_t r = 0; r < rows.size(); ++r) {
        t.ms.push_back(timed([&] { rows[r].launch(problem); }));
        printRow(rows[r].name, rows[r].knobs, t.ms.back(), rows[r].passes);
        if (t.ms[r] < t.ms[t.best]) t.best = r;
    }
    printRow("cudaMemcpy device to device", {}, t.copyMs, 1);
    printRow(spec.library.name, {}, t.libraryMs, spec.library.passes);  // a sort's library row says 0: its passes are its own
    for (const auto& other : spec.others) {
        t.othersMs.push_back(timed([&] { other.launch(problem); }));
        printRow(other.name, {}, t.othersMs.back(), other.passes);
    }
    if (!rows.empty() && spec.echo)
        std::printf("best: %s, %.4f ms = %.2f x the copy's speed, %.2f x %s\n", rows[t.best].name.c_str(),
                    t.ms[t.best], t.copyMs * rows[t.best].passes / t.ms[t.best], t.libraryMs / t.ms[t.best],
                    spec.library.name.c_str());
    return t;
}

// The lesson entry every lesson's main calls: the standard options every
// lesson binary keeps (README.md, "Every lesson binary"), read with the
// lesson's own before any CUDA call, and the mode dispatch. A lesson passes
// its name, its summary, its own options and three entry points; it never
// spells --selftest or --verify itself.
//
//   int main(int argc, char** argv) {
//       Options o;  // the lesson's own
//       return lessonEntry(argc, argv, {"merge_path", "Day 36: ...", {{"--m", "N", "length of a"}},
//                                       {"mergeOneThread", "mergeCoRank"},
//                                       [&](const Args& args) { o.m = args.count("--m", 2097763); },
//                                       runSelftest, [&](const Run& run) { return runVerify(o, run); },
//                                       [&](const Run& run) { return runLesson(o, run); }});
//   }
#pragma once

#include "args.hpp"
#include "cuda_check.cuh"
#include "device_report.cuh"
#include "table.hpp"
#include "timer.cuh"

#include <ctime>
#include <functional>
#include <new>
#include <string>
#include <vector>

// What the standard options chose, handed to the lesson's verify and run.
struct Run {
    bool quick = false;             // --quick: smaller sizes, for a short notebook cell
    bool timing = true;             // --no-timing turns it off: checks only
    TimingPlan plan;                // --repeats N (median of N); --quick: 1 warm-up, 5 runs
    std::string csvPath;            // --csv FILE
    std::vector<std::string> only;  // --only NAMES; empty: every row
    DeviceInfo device;              // filled once a device was found (verify and run)

    // True when --only named nothing or a word that begins this row's name.
    bool wants(const std::string& rowName) const {
        if (only.empty()) return true;
        for (const auto& word : only)
            if (rowName.rfind(word, 0) == 0) return true;
        return false;
    }
};

struct Lesson {
    const char* program;                 // "merge_path"
    const char* summary;                 // the first line of --help
    std::vector<OptionSpec> options;     // the lesson's own, beside the standard ones
    std::vector<std::string> rowFamilies;  // what --only may name: the first word of the table's rows
    std::function<void(const Args&, const Run&)> read;  // reads (and refuses) the lesson's own options
    std::function<int()> selftest;       // host only: needs no GPU
    std::function<int(const Run&)> verify, run;
};

inline std::vector<std::string> splitWords(const std::string& list) {
    std::vector<std::string> words;
    size_t start = 0;
    while (start <= list.size()) {
        size_t comma = list.find(',', start);
        if (comma == std::string::npos) comma = list.size();
        if (comma > start) words.push_back(list.substr(start, comma - start));
        start = comma + 1;
    }
    return words;
}

inline int lessonEntryBody(int argc, char** argv, const Lesson& lesson) {
    std::vector<OptionSpec> options = lesson.options;
    std::string families;
    for (const auto& family : lesson.rowFamilies) families += (families.empty() ? "" : ", ") + family;
    for (OptionSpec standard : std::vector<OptionSpec>{
             {"--quick", "", "smaller sizes, meant for a short notebook cell on a T4"},
             {"--only", "NAMES", "only the rows whose name begins with one of NAMES (comma-separated: " + families + ")"},
             {"--repeats", "N", "timed runs per row; the median is reported (default 15)"},
             {"--no-timing", "", "run the checks only"},
             {"--csv", "FILE", "also write the tables as CSV (for scripts/plot_sweep.py)"},
             {"--shared-per-block", "BYTES", "use at most BYTES of shared memory a block, as a smaller card would (65536: a T4)"},
             {"--verify", "", "every kernel on the adversarial inputs, exact checks, no timing"},
             {"--selftest", "", "host-only tests of the building blocks (no GPU needed)"}})
        options.push_back(standard);
    const Args args(lesson.program, lesson.summary, options, argc, argv);
    if (args.has("--selftest") && args.has("--verify")) args.fail("--selftest and --verify are separate runs: choose one");

    Run run;
    run.quick = args.has("--quick");
    run.timing = !args.has("--no-timing");
    run.plan = run.quick ? TimingPlan{1, 5} : TimingPlan{3, 15};
    run.plan.repeats = static_cast<int>(args.count("--repeats", static_cast<size_t>(run.plan.repeats), 1));
    if (run.plan.repeats > 1000) args.fail("--repeats must be at most 1000");
    run.csvPath = args.text("--csv", "");
    run.only = splitWords(args.text("--only", ""));
    if (args.has("--only") && run.only.empty()) args.fail("--only needs at least one name: " + families);
    for (const auto& word : run.only) {
        bool known = false;
        for (const auto& family : lesson.rowFamilies) known = known || family.rfind(word, 0) == 0 || word.rfind(family, 0) == 0;
        if (!known) args.fail("--only: no row begins with '" + word + "'; rows begin with " + families);
    }
    // at least 64 KiB: what the least card the lessons build for (sm_75, a T4) allows a block, and what
    // every kernel needs somewhere (sample_sort's key-value scatter takes 51328 bytes on any card)
    if (args.has("--shared-per-block")) sharedPerBlockCap() = args.count("--shared-per-block", 0, 65536);
    if (lesson.read) lesson.read(args, run);  // the lesson's own options, still before any CUDA call

    if (args.has("--selftest")) return lesson.selftest();
    requireCudaDevice(lesson.program);
    run.device = printDeviceReport();
    char date[16];
    const std::time_t now = std::time(nullptr);
    std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&now));
    csvRun() = {run.device.name, date};  // the first line of every CSV this run writes
    return args.has("--verify") ? lesson.verify(run) : lesson.run(run);
}

// stdout is flushed by line (a long run's log shows how far it got), and
// running out of host memory is one line and exit 3 instead of an abort.
inline int lessonEntry(int argc, char** argv, const Lesson& lesson) {
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    try {
        return lessonEntryBody(argc, argv, lesson);
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "%s: not enough host memory for these sizes\n", lesson.program);
        return kExitCudaError;
    }
}

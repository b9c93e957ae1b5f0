// The options the sort lessons share beside lesson.hpp's standard ones
// (bitonic_sort, merge_sort, sample_sort, sample_sort_gpus): their help
// lines, their reading with its refusals, and the call on the chosen key
// type. No algorithm lives here.
#pragma once

#include "args.hpp"
#include "inputs.hpp"
#include "lesson.hpp"
#include "size_sweep.hpp"
#include "sort_buffers.cuh"

#include <cstdint>
#include <string>
#include <vector>

struct SortOptions {
    size_t n = 0;
    std::string key = "uint32", input = "uniform";
    bool all = false;  // --dist all: a table per distribution
    bool pairs = false, descending = false;
    bool nGiven = false;  // --n was given: --verify checks that one size
    std::vector<size_t> sizes;  // the size sweep's (size_sweep.hpp), where the lesson has one

    // The distributions the run's tables sort: --dist all's, else --input's.
    std::vector<SortShape> shapes() const {
        return all ? sortTableShapes() : std::vector<SortShape>{sortShapeFromName(input)};
    }
};

// The help lines. nHelp and pairsHelp: what --n (with its defaults) and
// --pairs say; distAll: what --dist all does, or null for a lesson without
// distributions (it then takes neither --input nor --dist); sizeSweep: the
// lesson has a size sweep (--sizes).
inline std::vector<OptionSpec> sortOptions(const std::string& nHelp, const std::string& pairsHelp,
                                           const char* distAll, bool sizeSweep = false) {
    std::vector<OptionSpec> options = {{"--n", "N", nHelp}, {"--key", "TYPE", "uint32 (default), int32, float"},
                                       {"--pairs", "", pairsHelp}, {"--descending", "", "sort largest first"}};
    if (!distAll) return options;
    std::string dists;
    for (const auto& d : sortShapeWords()) dists += (dists.empty() ? "" : ", ") + d;
    options.push_back({"--input", "DIST", "one distribution (default uniform): " + dists});
    options.push_back({"--dist", "all", distAll});
    if (sizeSweep) options.push_back(sizeSweepOption());
    return options;
}

// Reads them before any CUDA call. n defaults to `full` (`quick` with
// --quick) and is at most 2^mostLog2 (the memory estimates stay far from
// wrapping). The values are 32-bit indices, so --pairs needs n below 2^32 - 1.
inline void readSortOptions(const Args& args, const Run& run, SortOptions& o, size_t full, size_t quick,
                            int mostLog2 = 40) {
    o.nGiven = args.has("--n");
    o.n = args.count("--n", run.quick ? quick : full);
    o.key = args.choice("--key", "uint32", {"uint32", "int32", "float"});
    o.input = args.choice("--input", "uniform", sortShapeWords());  // "uniform" where the lesson has no --input
    o.all = args.choice("--dist", "one", {"one", "all"}) == "all";
    o.pairs = args.has("--pairs");
    o.descending = args.has("--descending");
    o.sizes = readSweepSizes(args, run, !o.nGiven && !o.all);
    if (o.n > (size_t{1} << mostLog2)) args.fail("--n must be at most 2^" + std::to_string(mostLog2));
    if (o.pairs && !sortValuesFit(o.n)) args.fail("--pairs needs --n below 2^32 - 1 (the values are 32-bit indices)");
    for (size_t n : o.sizes) {  // the size sweep's n, held to the same limits
        if (n > (size_t{1} << mostLog2)) args.fail("--sizes values must be at most 2^" + std::to_string(mostLog2));
        if (o.pairs && !sortValuesFit(n)) args.fail("--pairs needs --sizes values below 2^32 - 1 (the values are 32-bit indices)");
    }
}

// f called with a value of the chosen key type: f(uint32_t{}), f(int32_t{})
// or f(float{}); a lesson writes [&](auto key) { return run<decltype(key)>(...); }.
template <class F> auto onKeyType(const std::string& key, F&& f) {
    if (key == "int32") return f(int32_t{});
    if (key == "float") return f(float{});
    return f(uint32_t{});
}

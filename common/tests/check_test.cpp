// CTest target common_check_test (host only): the merge reference check
// that every merge lesson relies on, in both its modes. The kept and the
// streamed reference must accept a right output and catch a planted tie swap
// (values equal, sources not) in the second of the check's 2^24-element
// chunks, at the position planted.
#include "../check.hpp"
#include "../inputs.hpp"
#include "../selftest.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

int main() {
    std::vector<float> a, b;
    makeMergeInput(MergeShape::ManyTies, 9000001, 8000003, a, b);
    const size_t total = a.size() + b.size();
    std::vector<float> keys(total);
    std::vector<size_t> sources(total);
    ReferenceMerge<float>(a.data(), a.size(), b.data(), b.size()).next(total, keys.data(), sources.data());
    size_t swapAt = (size_t{1} << 24) + 5;  // the next place where an a and a b of equal value meet
    while (swapAt + 1 < total &&
           !(sources[swapAt] < a.size() && sources[swapAt + 1] >= a.size() && keys[swapAt] == keys[swapAt + 1]))
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
    return selftestVerdict();
}

// Exact checks and independent host references. A merge or a sort only
// permutes, so outputs are compared bit for bit (no tolerance), and every
// element's provenance (where it came from) is compared too: that is what
// catches the tie bugs a value check cannot see.
#pragma once

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <type_traits>
#include <unistd.h>
#include <vector>

inline std::string formatKey(float v) {
    char text[48];
    std::snprintf(text, sizeof text, "%.9g", v);
    return text;
}
inline std::string formatKey(double v) {
    char text[48];
    std::snprintf(text, sizeof text, "%.17g", v);
    return text;
}
inline std::string formatKey(uint32_t v) { return std::to_string(v); }
inline std::string formatKey(int32_t v) { return std::to_string(v); }
inline std::string formatKey(uint64_t v) { return std::to_string(v); }

// A short array as text for messages: {1,5,9}.
template <class Key>
std::string formatKeys(const std::vector<Key>& keys) {
    std::string text = "{";
    for (size_t i = 0; i < keys.size(); ++i) text += (i ? "," : "") + formatKey(keys[i]);
    return text + "}";
}

// Keys as the seeds print them: "5 2 8 1".
template <class T>
std::string spacedKeys(const std::vector<T>& values) {
    std::string text;
    for (const auto& v : values) text += (text.empty() ? "" : " ") + std::to_string(v);
    return text;
}

// Bit-for-bit equality: -0.0 and +0.0 differ, and a NaN left by the 0xFF
// poison never equals a real key.
template <class T>
bool sameBits(const T& x, const T& y) {
    static_assert(std::is_trivially_copyable<T>::value, "keys are plain values");
    return std::memcmp(&x, &y, sizeof(T)) == 0;
}

// Compares got[0, count) with want[0, count) exactly. On the first
// difference prints one line with the position (offset + p) and both values.
template <class T>
bool compareExact(const char* what, const T* got, const T* want, size_t count, size_t offset = 0) {
    for (size_t p = 0; p < count; ++p) {
        if (!sameBits(got[p], want[p])) {
            std::printf("%s: value mismatch at output position %zu: got %s, expected %s "
                        "(host reference)\n",
                        what, offset + p, formatKey(got[p]).c_str(), formatKey(want[p]).c_str());
            return false;
        }
    }
    return true;
}

// Where a merged element came from: a source position s in the
// concatenation a||b, so s < m means a[s] and s >= m means b[s - m].
inline std::string describeMergeSource(size_t source, size_t m) {
    if (source == SIZE_MAX) return "nothing (never written)";
    return source < m ? "a[" + std::to_string(source) + "]" : "b[" + std::to_string(source - m) + "]";
}

// Compares the kernel's provenance with the reference's; describe(s) names a
// source for the message ("a[2]", "input[17]").
template <class Describe>
bool compareProvenance(const char* what, const size_t* got, const size_t* want, size_t count,
                       Describe describe, size_t offset = 0) {
    for (size_t p = 0; p < count; ++p) {
        if (got[p] != want[p]) {
            std::printf("%s: provenance mismatch at output position %zu: got %s, expected %s "
                        "(host reference)\n",
                        what, offset + p, describe(got[p]).c_str(), describe(want[p]).c_str());
            return false;
        }
    }
    return true;
}

// The stable merge reference: the seed's plain two-pointer loop, ties taken
// from a. It shares nothing with the kernels (no co-rank, no slices), and it
// streams, so an output larger than host memory can be checked in chunks:
// each next() call continues where the last one stopped.
template <class Key>
class ReferenceMerge {
public:
    ReferenceMerge(const Key* a, size_t m, const Key* b, size_t n) : a_(a), m_(m), b_(b), n_(n) {}

    // Writes the next `count` merged keys and their sources (position in a||b).
    void next(size_t count, Key* keys, size_t* sources) {
        for (size_t p = 0; p < count; ++p) {
            const bool takeA = j_ >= n_ || (i_ < m_ && !(b_[j_] < a_[i_]));
            keys[p] = takeA ? a_[i_] : b_[j_];
            sources[p] = takeA ? i_++ : m_ + j_++;
        }
    }

private:
    const Key* a_;
    size_t m_;
    const Key* b_;
    size_t n_;
    size_t i_ = 0, j_ = 0;
};

// Where a checked merge's output comes from: fetchKeys(start, count, keys)
// copies output positions [start, start + count) from the device;
// fetchSources, when given, copies each position's provenance (its source
// position in a||b, SIZE_MAX for "never written").
using FetchSources = std::function<void(size_t start, size_t count, size_t* sources)>;

// Host memory, for deciding whether a reference can be kept (POSIX).
inline size_t hostMemoryBytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && pageSize > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(pageSize) : 0;
}

// The stable merge of a and b that every merge kernel is checked against.
// Computed once and kept when it fits in a quarter of host memory, so that
// checking many kernels on one input costs one host merge; otherwise merged
// again, streamed a chunk at a time, for every check, so that an output
// larger than host memory can still be checked. a and b must outlive it.
template <class Key>
class MergeReference {
public:
    enum class Keep { IfItFits, Never };  // Never: always stream (tests use it to reach that path)

    MergeReference(const std::vector<Key>& a, const std::vector<Key>& b, Keep keep = Keep::IfItFits)
        : a_(a), b_(b) {
        const size_t total = a.size() + b.size();
        if (keep == Keep::IfItFits && total * (sizeof(Key) + sizeof(size_t)) <= hostMemoryBytes() / 4) {
            keys_.resize(total);
            sources_.resize(total);
            ReferenceMerge<Key>(a.data(), a.size(), b.data(), b.size()).next(total, keys_.data(), sources_.data());
            kept_ = true;
        }
    }

    // Compares the output exactly (and its provenance, if fetchSources is
    // given) with the reference; prints the first disagreement and returns false.
    template <class FetchKeys>
    bool matches(const std::string& what, FetchKeys fetchKeys, const FetchSources& fetchSources = {}) const {
        const size_t total = a_.size() + b_.size();
        ReferenceMerge<Key> streamed(a_.data(), a_.size(), b_.data(), b_.size());
        const size_t chunk = std::min<size_t>(total, size_t{1} << 24);
        std::vector<Key> gotKeys(chunk), streamedKeys(kept_ ? 0 : chunk);
        std::vector<size_t> gotSources(fetchSources ? chunk : 0), streamedSources(kept_ ? 0 : chunk);
        auto describe = [this](size_t s) { return describeMergeSource(s, a_.size()); };
        for (size_t start = 0; start < total; start += chunk) {
            const size_t count = std::min(chunk, total - start);
            const Key* wantKeys = kept_ ? keys_.data() + start : streamedKeys.data();
            const size_t* wantSources = kept_ ? sources_.data() + start : streamedSources.data();
            if (!kept_) streamed.next(count, streamedKeys.data(), streamedSources.data());
            fetchKeys(start, count, gotKeys.data());
            if (!compareExact(what.c_str(), gotKeys.data(), wantKeys, count, start)) return false;
            if (!fetchSources) continue;
            fetchSources(start, count, gotSources.data());
            if (!compareProvenance(what.c_str(), gotSources.data(), wantSources, count, describe, start))
                return false;
        }
        return true;
    }

    bool kept() const { return kept_; }

private:
    const std::vector<Key>& a_;
    const std::vector<Key>& b_;
    std::vector<Key> keys_;
    std::vector<size_t> sources_;
    bool kept_ = false;
};

// The stable sort reference: the original index of each output element,
// from std::stable_sort with the caller's strict weak order.
template <class Key, class Less>
std::vector<size_t> referenceStableSortIndices(const std::vector<Key>& keys, Less less) {
    std::vector<size_t> order(keys.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return less(keys[x], keys[y]); });
    return order;
}

// For sorts that are not stable: every input index appears exactly once in
// sources, and each output key is, bit for bit, the input key it names.
template <class Key>
bool checkPermutation(const char* what, const Key* keysOut, const size_t* sources,
                      const Key* keysIn, size_t count) {
    std::vector<bool> seen(count, false);
    for (size_t p = 0; p < count; ++p) {
        const size_t s = sources[p];
        if (s >= count || seen[s]) {
            std::printf("%s: not a permutation: output position %zu names input %s%s\n", what, p,
                        s == SIZE_MAX ? "nothing (never written)" : std::to_string(s).c_str(),
                        s < count ? ", which an earlier position already took" : "");
            return false;
        }
        seen[s] = true;
        if (!sameBits(keysOut[p], keysIn[s])) {
            std::printf("%s: output position %zu holds %s but names input[%zu], which is %s\n",
                        what, p, formatKey(keysOut[p]).c_str(), s, formatKey(keysIn[s]).c_str());
            return false;
        }
    }
    return true;
}

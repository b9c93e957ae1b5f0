// One sort on the device, shared by the sort lessons: the key order, the
// buffers, the host reference, the exact check (stable: every value is the
// original index the stable order puts there; unstable: a permutation), the
// gate of a sort's rows, and the CUB rows (merge sort with the same order,
// radix sort) checked and timed beside them.
//
// The order is common/key_order.hpp's (IEEE totalOrder for floats).
#pragma once

#include "check.hpp"
#include "cuda_check.cuh"
#include "device_utils.cuh"
#include "key_order.hpp"
#include "variants.hpp"

#include <cub/device/device_merge_sort.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cuda/std/functional>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

// The order as a comparator, for std::stable_sort and cub::DeviceMergeSort.
template <class Key>
struct RankLess {
    uint32_t flip;
    __host__ __device__ bool operator()(const Key& x, const Key& y) const { return rankOf(x, flip) < rankOf(y, flip); }
};

template <class Key>
const char* keyName() {
    if (std::is_same<Key, float>::value) return "float";
    if (std::is_same<Key, int32_t>::value) return "int32";
    return "uint32";
}

// "uint32 few-distinct n=1000 descending pairs": one sort case, for messages
// and table titles (no shape: "uint32 n=1000").
template <class Key>
std::string sortCaseLabel(const std::string& shape, size_t n, bool descending, bool pairs) {
    return std::string(keyName<Key>()) + (shape.empty() ? "" : " " + shape) + " n=" + std::to_string(n) +
           (descending ? " descending" : "") + (pairs ? " pairs" : "");
}

// The stable sort on the host: for every output position, the original
// index the stable order puts there, and the key. An LSD radix sort of
// (rank, index) with 11-bit digits: stable by construction, so ties keep
// their input order, and quick enough at 2^28 keys, where std::stable_sort
// takes a minute. It shares only the rank map with the kernels, and
// common_key_order_test holds that map to the order stated plainly.
template <class Key>
struct SortReference {
    std::vector<Key> keys;
    std::vector<size_t> indices;
};
template <class Key>
SortReference<Key> referenceSort(const std::vector<Key>& input, bool descending) {
    const size_t n = input.size();
    const uint32_t flip = descending ? ~0u : 0u;
    std::vector<uint32_t> ranks(n), ranks2(n);
    std::vector<size_t> index(n), index2(n);
    for (size_t i = 0; i < n; ++i) ranks[i] = rankOf(input[i], flip), index[i] = i;
    for (int shift = 0; shift < 32; shift += 11) {
        std::vector<size_t> place(2049, 0);
        for (size_t i = 0; i < n; ++i) ++place[((ranks[i] >> shift) & 2047) + 1];
        for (int d = 0; d < 2048; ++d) place[d + 1] += place[d];
        for (size_t i = 0; i < n; ++i) {
            const size_t to = place[(ranks[i] >> shift) & 2047]++;
            ranks2[to] = ranks[i];
            index2[to] = index[i];
        }
        ranks.swap(ranks2);
        index.swap(index2);
    }
    SortReference<Key> r;
    r.keys.resize(n);
    for (size_t p = 0; p < n; ++p) r.keys[p] = input[index[p]];
    r.indices = std::move(index);
    return r;
}

// Keys in and out; in key-value mode uint32 values, the original index (so
// the output's values are its provenance: 0xFFFFFFFF, the poison, is "never
// written"). n must then stay below 2^32 - 1 (sortValuesFit).
template <class Key>
struct SortBuffers {
    size_t n = 0;
    bool pairs = false;
    DeviceBuffer<Key> in, out;
    DeviceBuffer<uint32_t> vin, vout;
    double bytesPerPass() const {  // read n, write n
        return 2.0 * static_cast<double>(n) * (sizeof(Key) + (pairs ? sizeof(uint32_t) : 0));
    }
    void poison() {
        out.poison();
        vout.poison();
    }
    void copy() {  // the copy row: one pass's bytes
        if (!n) return;
        CUDA_CHECK(cudaMemcpyAsync(out.get(), in.get(), in.bytes(), cudaMemcpyDeviceToDevice));
        if (pairs) CUDA_CHECK(cudaMemcpyAsync(vout.get(), vin.get(), vin.bytes(), cudaMemcpyDeviceToDevice));
    }
};

inline bool sortValuesFit(size_t n) { return n < 0xFFFFFFFFull; }

// Device bytes for the buffers of an n-key sort plus `extra` (scratch),
// saturating, so an absurd n asks for "too much" (exit 3).
template <class Key>
size_t sortBytesNeeded(size_t n, bool pairs, size_t extra) {
    const size_t perKey = 2 * (sizeof(Key) + (pairs ? sizeof(uint32_t) : 0));
    return n > (SIZE_MAX - extra) / perKey ? SIZE_MAX : n * perKey + extra;
}

template <class Key>
SortBuffers<Key> uploadSort(const std::vector<Key>& input, bool pairs) {
    SortBuffers<Key> d;
    d.n = input.size();
    d.pairs = pairs;
    d.in.allocate(d.n);
    d.out.allocate(d.n);
    d.in.upload(input.data(), d.n);
    if (pairs) {
        d.vin.allocate(d.n);
        d.vout.allocate(d.n);
        fillPositionsOnDevice(d.vin.get(), d.n);
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    return d;
}

inline std::string describeInput(size_t s) {
    return s == SIZE_MAX ? "nothing (never written)" : "input[" + std::to_string(s) + "]";
}

// How strictly a row's output is held to the reference.
enum class SortCheck {
    Stable,       // keys exact; values exactly the stable order's indices
    Permutation,  // keys exact; values name every input once, each with its key
    RadixZeros,   // as Permutation, but -0.0 and +0.0 may swap: CUB's radix sort holds them equal
};

// Compares the device's output with the reference; prints the first
// difference with both answers.
template <class Key>
bool sortMatches(const std::string& what, const SortBuffers<Key>& d, const std::vector<Key>& input,
                 const SortReference<Key>& want, SortCheck rule) {
    std::vector<Key> got(d.n);
    d.out.download(got.data(), d.n);
    for (size_t p = 0; p < d.n; ++p) {
        if (sameBits(got[p], want.keys[p])) continue;
        if constexpr (std::is_floating_point<Key>::value)
            if (rule == SortCheck::RadixZeros && got[p] == 0 && want.keys[p] == 0) continue;
        return compareExact(what.c_str(), got.data() + p, want.keys.data() + p, 1, p);
    }
    if (!d.pairs) return true;
    std::vector<uint32_t> values(d.n);
    d.vout.download(values.data(), d.n);
    std::vector<size_t> sources(d.n);
    for (size_t p = 0; p < d.n; ++p) sources[p] = values[p] == 0xFFFFFFFFu ? SIZE_MAX : values[p];
    if (rule == SortCheck::Stable)
        return compareProvenance(what.c_str(), sources.data(), want.indices.data(), d.n, describeInput);
    return checkPermutation(what.c_str(), got.data(), sources.data(), input.data(), d.n);
}

// The sorts a learner would otherwise call, on the same buffers:
// cub::DeviceMergeSort with the lesson's order (its Copy forms run the same
// dispatch as StableSortPairs, out of place, and the check holds them to the
// stable order), and cub::DeviceRadixSort. For integer keys the rank order
// is the natural one, so CUB gets its fastest form, cuda::std::less or
// greater; floats need the rank comparator (totalOrder: -0.0 before
// +0.0, NaNs at the ends). The scratch is allocated once, here, so a timed
// call allocates nothing.
template <class Key>
class LibrarySort {
public:
    enum class Kind { Merge, Radix };
    LibrarySort(Kind kind, SortBuffers<Key>& d, bool descending) : kind_(kind), d_(d), descending_(descending) {
        call(nullptr, tempBytes_);
        temp_.allocate(std::max<size_t>(tempBytes_, 1));  // a null pointer would mean "size query"
    }
    std::string name() const {
        if (kind_ == Kind::Merge) return d_.pairs ? "cub::DeviceMergeSort::SortPairsCopy" : "cub::DeviceMergeSort::SortKeysCopy";
        return std::string("cub::DeviceRadixSort::Sort") + (d_.pairs ? "Pairs" : "Keys") + (descending_ ? "Descending" : "");
    }
    SortCheck rule() const { return kind_ == Kind::Merge ? SortCheck::Stable : SortCheck::RadixZeros; }
    void operator()() {
        if (d_.n == 0) return;
        size_t bytes = tempBytes_;
        call(temp_.get(), bytes);
    }

private:
    template <class Less>
    void mergeSort(void* temp, size_t& bytes, Less less) {
        const int64_t n = static_cast<int64_t>(d_.n);
        if (d_.pairs)
            CUDA_CHECK(cub::DeviceMergeSort::SortPairsCopy(temp, bytes, d_.in.get(), d_.vin.get(), d_.out.get(),
                                                           d_.vout.get(), n, less));
        else
            CUDA_CHECK(cub::DeviceMergeSort::SortKeysCopy(temp, bytes, d_.in.get(), d_.out.get(), n, less));
    }
    void call(void* temp, size_t& bytes) {
        const int64_t n = static_cast<int64_t>(d_.n);
        Key *in = d_.in.get(), *out = d_.out.get();
        uint32_t *vin = d_.vin.get(), *vout = d_.vout.get();
        if (kind_ == Kind::Merge) {
            // if constexpr: each key type compiles CUB's merge sort only for the comparators it uses
            if constexpr (!std::is_integral<Key>::value) mergeSort(temp, bytes, RankLess<Key>{descending_ ? ~0u : 0u});
            else if (descending_) mergeSort(temp, bytes, cuda::std::greater<Key>());
            else mergeSort(temp, bytes, cuda::std::less<Key>());
        } else if (d_.pairs && descending_)
            CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(temp, bytes, in, out, vin, vout, n));
        else if (d_.pairs)
            CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, bytes, in, out, vin, vout, n));
        else if (descending_)
            CUDA_CHECK(cub::DeviceRadixSort::SortKeysDescending(temp, bytes, in, out, n));
        else
            CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, bytes, in, out, n));
    }
    Kind kind_;
    SortBuffers<Key>& d_;
    bool descending_;
    size_t tempBytes_ = 0;
    DeviceBuffer<unsigned char> temp_;
};

// The stable reference for a sort of d's input: the host's (referenceSort)
// up to hostLimit keys, past it (where the host's needs tens of GB) CUB's
// stable merge sort on the GPU, which a lesson's --verify holds to the
// host's at every smaller size; that path leaves d's output poisoned.
template <class Key>
SortReference<Key> stableReference(const std::vector<Key>& input, SortBuffers<Key>& d, bool descending, size_t hostLimit) {
    if (input.size() <= hostLimit) return referenceSort(input, descending);
    LibrarySort<Key> cub(LibrarySort<Key>::Kind::Merge, d, descending);
    d.poison();
    cub();
    CUDA_CHECK(cudaDeviceSynchronize());
    SortReference<Key> r;
    r.keys.resize(d.n);
    d.out.download(r.keys.data(), d.n);
    if (d.pairs) {
        std::vector<uint32_t> values(d.n);
        d.vout.download(values.data(), d.n);
        r.indices.assign(values.begin(), values.end());
    }
    d.poison();
    std::printf("reference: %s on the GPU (past %zu keys; --verify holds it to the host's stable sort)\n", cub.name().c_str(), hostLimit);
    return r;
}

// The gate of a sort lesson (common's checkRows): each row on poisoned
// outputs, its output held to want by rule; the first difference printed.
template <class Problem, class Key>
bool checkSortRows(const std::vector<Variant<Problem>>& rows, Problem& p, const SortBuffers<Key>& d,
                   const std::vector<Key>& input, const SortReference<Key>& want, SortCheck rule,
                   const std::string& label, bool announce = false) {
    return checkRows(rows, p, [&](const std::string& what) { return sortMatches(what, d, input, want, rule); }, label,
                     announce);
}

// CUB's two sorts as rows of a lesson's table, on the lesson's buffers:
// merge sort is the table's library row, radix sort is timed beside it.
// Their launchers call this object: keep it where it was made.
template <class Key, class Problem>
struct LibraryRows {
    LibrarySort<Key> merge, radix;
    Variant<Problem> mergeRow{merge.name(), {}, [this](Problem&) { merge(); }, 0};  // 0 passes: CUB's own
    Variant<Problem> radixRow{radix.name(), {}, [this](Problem&) { radix(); }, 0};
    LibraryRows(SortBuffers<Key>& d, bool descending)
        : merge(LibrarySort<Key>::Kind::Merge, d, descending), radix(LibrarySort<Key>::Kind::Radix, d, descending) {}
    LibraryRows(const LibraryRows&) = delete;
    LibraryRows& operator=(const LibraryRows&) = delete;
    // Both on poisoned outputs, each by its rule (merge sort skipped where it made want: withMerge false).
    bool check(Problem& p, const SortBuffers<Key>& d, const std::vector<Key>& input, const SortReference<Key>& want,
               const std::string& label, bool announce = false, bool withMerge = true) {
        return (!withMerge || checkSortRows({mergeRow}, p, d, input, want, merge.rule(), label, announce)) &&
               checkSortRows({radixRow}, p, d, input, want, radix.rule(), label, announce);
    }
    // The table's frame: d's bytes a pass, its n for Gkeys/s, its copy, both CUB sorts.
    TimedTable<Problem> table(const std::string& title, std::vector<Column> knobs, SortBuffers<Key>& d) const {
        TimedTable<Problem> t{title, std::move(knobs), d.bytesPerPass(), static_cast<double>(d.n), [&d] { d.copy(); }, mergeRow};
        t.others = {radixRow};
        return t;
    }
};

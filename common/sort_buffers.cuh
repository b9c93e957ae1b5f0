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

// The order as a comparator, for std::stable_sort and the lessons' host models.
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

// The sorts a learner would otherwise call, on the same buffers: CUB's
// merge sort (its Copy form runs the same dispatch as StableSortPairs, out of
// place) and its radix sort, both stable, on the keys' ordered words (the
// RankMap of common/key_order.hpp), as the lessons' own kernels sort them. So
// CUB is compiled once, for uint32 words ascending, not for every key type
// and order: that was a third to two fifths of each sort lesson's build.
// CUB's fastest forms run on them, cuda::std::less and the plain radix sort.
// uint32 keys ascending are their own words: CUB sorts d.in as is. Any other input is
// turned into words once (LibraryWords, before anything is timed) and CUB's
// sorted words back into keys after each checked run; neither is timed, as
// CUB's radix sort does the same map within its own passes.
static __global__ void mapKeyWords(const uint32_t* in, uint32_t* out, size_t count, RankMap map, bool toWords) {
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += static_cast<size_t>(gridDim.x) * blockDim.x)
        out[i] = toWords ? map.rank(in[i]) : map.word(in[i]);
}
template <class Key>
bool keysAreWords(bool descending) {
    return std::is_same<Key, uint32_t>::value && !descending;
}
// The device bytes LibraryWords takes for n keys.
template <class Key>
size_t libraryWordBytes(size_t n, bool descending) {
    return keysAreWords<Key>(descending) ? 0 : n * sizeof(uint32_t);
}
template <class Key>
class LibraryWords {
public:
    LibraryWords(SortBuffers<Key>& d, bool descending)
        : d_(d), map_(rankMapOf<Key>(descending ? ~0u : 0u)), asIs_(keysAreWords<Key>(descending)) {
        if (asIs_ || !d.n) return;
        words_.allocate(d.n);
        run(reinterpret_cast<const uint32_t*>(d.in.get()), words_.get(), true);
    }
    const uint32_t* in() const { return asIs_ ? reinterpret_cast<const uint32_t*>(d_.in.get()) : words_.get(); }
    uint32_t* out() const { return reinterpret_cast<uint32_t*>(d_.out.get()); }  // sorted words, then keys (toKeys)
    void toKeys() const {
        if (!asIs_) run(out(), out(), false);
    }

private:
    void run(const uint32_t* from, uint32_t* to, bool toWords) const {
        if (!d_.n) return;
        mapKeyWords<<<gridFor(d_.n, 256, "mapKeyWords", 4096), 256>>>(from, to, d_.n, map_, toWords);
        CUDA_CHECK_LAUNCH("mapKeyWords");
    }
    SortBuffers<Key>& d_;
    RankMap map_;
    bool asIs_;
    DeviceBuffer<uint32_t> words_;
};

// One of CUB's two sorts on LibraryWords' words; values, where there are any,
// are d's as they are. The scratch is allocated once, here, so a timed call
// allocates nothing.
template <class Key>
class LibrarySort {
public:
    enum class Kind { Merge, Radix };
    LibrarySort(Kind kind, SortBuffers<Key>& d, const LibraryWords<Key>& words) : kind_(kind), d_(d), words_(words) {
        call(nullptr, tempBytes_);
        temp_.allocate(std::max<size_t>(tempBytes_, 1));  // a null pointer would mean "size query"
    }
    std::string name() const {
        if (kind_ == Kind::Merge) return d_.pairs ? "cub::DeviceMergeSort::SortPairsCopy" : "cub::DeviceMergeSort::SortKeysCopy";
        return std::string("cub::DeviceRadixSort::Sort") + (d_.pairs ? "Pairs" : "Keys");
    }
    void operator()() {  // the timed call: d.out holds sorted words (keys where they are their own words)
        if (d_.n == 0) return;
        size_t bytes = tempBytes_;
        call(temp_.get(), bytes);
    }
    void sortToKeys() {  // the checked call: d.out holds the sorted keys
        (*this)();
        words_.toKeys();
    }

private:
    void call(void* temp, size_t& bytes) {
        const int64_t n = static_cast<int64_t>(d_.n);
        const uint32_t* in = words_.in();
        uint32_t* out = words_.out();
        const uint32_t* vin = d_.vin.get();
        uint32_t* vout = d_.vout.get();
        if (kind_ == Kind::Merge && d_.pairs)
            CUDA_CHECK(cub::DeviceMergeSort::SortPairsCopy(temp, bytes, in, vin, out, vout, n, cuda::std::less<uint32_t>()));
        else if (kind_ == Kind::Merge)
            CUDA_CHECK(cub::DeviceMergeSort::SortKeysCopy(temp, bytes, in, out, n, cuda::std::less<uint32_t>()));
        else if (d_.pairs)
            CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, bytes, in, out, vin, vout, n));
        else
            CUDA_CHECK(cub::DeviceRadixSort::SortKeys(temp, bytes, in, out, n));
    }
    Kind kind_;
    SortBuffers<Key>& d_;
    const LibraryWords<Key>& words_;
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
    const LibraryWords<Key> words(d, descending);
    LibrarySort<Key> cub(LibrarySort<Key>::Kind::Merge, d, words);
    d.poison();
    cub.sortToKeys();
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
// merge sort is the table's library row, radix sort is timed beside it. A
// check runs each to keys (sortToKeys), a timed run only the sort. Their
// launchers call this object: keep it where it was made.
template <class Key, class Problem>
struct LibraryRows {
    LibraryWords<Key> words;
    LibrarySort<Key> merge, radix;
    // A sort as a row (0 passes: CUB's own): timed, it only sorts; checked, its words go back to keys.
    static Variant<Problem> rowOf(LibrarySort<Key>& sort, bool toKeys) {
        return {sort.name(), {}, [&sort, toKeys](Problem&) { toKeys ? sort.sortToKeys() : sort(); }, 0};
    }
    Variant<Problem> mergeRow = rowOf(merge, false), radixRow = rowOf(radix, false);
    LibraryRows(SortBuffers<Key>& d, bool descending)
        : words(d, descending), merge(LibrarySort<Key>::Kind::Merge, d, words), radix(LibrarySort<Key>::Kind::Radix, d, words) {}
    LibraryRows(const LibraryRows&) = delete;
    LibraryRows& operator=(const LibraryRows&) = delete;
    // Both on poisoned outputs, stable (merge sort skipped where it made want: withMerge false).
    bool check(Problem& p, const SortBuffers<Key>& d, const std::vector<Key>& input, const SortReference<Key>& want,
               const std::string& label, bool announce = false, bool withMerge = true) {
        return (!withMerge || checkSortRows({rowOf(merge, true)}, p, d, input, want, SortCheck::Stable, label, announce)) &&
               checkSortRows({rowOf(radix, true)}, p, d, input, want, SortCheck::Stable, label, announce);
    }
    // The table's frame: d's bytes a pass, its n for Gkeys/s, its copy, both CUB sorts.
    TimedTable<Problem> table(const std::string& title, std::vector<Column> knobs, SortBuffers<Key>& d) const {
        TimedTable<Problem> t{title, std::move(knobs), d.bytesPerPass(), static_cast<double>(d.n), [&d] { d.copy(); }, mergeRow};
        t.others = {radixRow};
        return t;
    }
};

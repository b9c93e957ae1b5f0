// One merge on the device, shared by the merge lessons: a and b back to back
// in one allocation (so the copy row moves exactly the merge's bytes), the
// output, and in key-value mode the values, which carry each element's
// position in a||b, so the output's values are its provenance. The check
// compares both with the stable host merge (common/check.hpp).
#pragma once

#include "check.hpp"
#include "cuda_check.cuh"
#include "device_utils.cuh"
#include "library_merge.cuh"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

template <class Key, class Value = NoValues>
struct MergeBuffers {
    size_t m = 0, n = 0;
    DeviceBuffer<Key> keys, keysOut;        // keys = a || b
    DeviceBuffer<Value> values, valuesOut;  // key-value mode: values[s] = s; valuesOut = provenance
    size_t total() const { return m + n; }
    const Key* a() const { return keys.get(); }
    const Key* b() const { return keys.get() + m; }
    const Value* va() const { return kPairs<Value> ? values.get() : nullptr; }
    const Value* vb() const { return kPairs<Value> ? values.get() + m : nullptr; }
    double bytesMoved() const {  // read m + n, write m + n (values too, when they are carried)
        return 2.0 * static_cast<double>(total()) * (sizeof(Key) + (values.size() ? sizeof(Value) : 0));
    }
    // Before every checked run: 0xFF bytes, so an unwritten element is a NaN
    // key or the all-ones value, which names no source.
    void poison() {
        keysOut.poison();
        valuesOut.poison();
    }
    // The copy row: the same bytes the merge reads and writes.
    void copy() {
        if (!total()) return;
        CUDA_CHECK(cudaMemcpyAsync(keysOut.get(), keys.get(), keys.bytes(), cudaMemcpyDeviceToDevice));
        if (values.size())
            CUDA_CHECK(cudaMemcpyAsync(valuesOut.get(), values.get(), values.bytes(), cudaMemcpyDeviceToDevice));
    }
};

// Device bytes for a merge of `total` elements plus `extra`, saturating
// instead of wrapping, so an absurd size asks for "too much" (exit 3).
template <class Key, class Value>
size_t mergeBytesNeeded(size_t total, bool fillValues, size_t extra = 0) {
    const size_t perElement = 2 * sizeof(Key) + (kPairs<Value> ? (fillValues ? 2 : 1) * sizeof(Value) : 0);
    if (total > (SIZE_MAX - extra) / perElement) return SIZE_MAX;
    return total * perElement + extra;
}

// Uploads a and b. fillValues: the input values are the positions in a||b
// (key-value mode); without it only valuesOut exists, for kernels that write
// each output's source themselves.
template <class Key, class Value = NoValues>
MergeBuffers<Key, Value> uploadMerge(const std::vector<Key>& a, const std::vector<Key>& b, bool fillValues,
                                     size_t extraBytes, const char* what) {
    static_assert(!kPairs<Value> || std::is_unsigned<Value>::value, "values are positions in a||b");
    MergeBuffers<Key, Value> d;
    d.m = a.size();
    d.n = b.size();
    const size_t total = d.total();
    if constexpr (kPairs<Value>) {
        if (total >= std::numeric_limits<Value>::max()) {  // all-ones is the poison
            std::fprintf(stderr, "%s: %zu elements do not fit the value type's positions\n", what, total);
            std::exit(kExitBadArgument);
        }
    }
    requireDeviceMemory(mergeBytesNeeded<Key, Value>(total, fillValues, extraBytes), what);
    d.keys.allocate(total);
    d.keysOut.allocate(total);
    d.keys.upload(a.data(), d.m);
    d.keys.upload(b.data(), d.n, d.m);  // b right after a
    if constexpr (kPairs<Value>) {
        d.valuesOut.allocate(total);
        if (fillValues) {
            d.values.allocate(total);
            fillPositionsOnDevice(d.values.get(), total);
        }
    }
    CUDA_CHECK(cudaDeviceSynchronize());
    return d;
}

// Compares the output with the stable host merge, streamed in chunks (an
// output past host memory can be checked): keys bit for bit, and, unless
// withSources is false, every element's source. Prints the first difference.
template <class Key, class Value>
bool mergeMatches(const std::string& what, const MergeReference<Key>& reference, const MergeBuffers<Key, Value>& d,
                  bool withSources = kPairs<Value>) {
    auto fetchKeys = [&d](size_t start, size_t count, Key* keys) { d.keysOut.download(keys, count, start); };
    FetchSources fetchSources;
    if constexpr (kPairs<Value>) {
        if (withSources)
            fetchSources = [&d](size_t start, size_t count, size_t* sources) {
                std::vector<Value> values(count);
                d.valuesOut.download(values.data(), count, start);
                for (size_t q = 0; q < count; ++q)
                    sources[q] = values[q] == std::numeric_limits<Value>::max() ? SIZE_MAX : static_cast<size_t>(values[q]);
            };
    }
    return reference.matches(what, fetchKeys, fetchSources);
}

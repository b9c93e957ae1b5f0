// The merge a learner would otherwise call, for the reference rows and the
// checks beside a lesson's own kernels: cub::DeviceMerge where the toolkit
// ships <cub/device/device_merge.cuh>, Thrust's merge on older toolkits,
// labelled as such. Keys only, or key-value pairs.
#pragma once

#include "cuda_check.cuh"

#if __has_include(<cub/device/device_merge.cuh>)
#include <cub/device/device_merge.cuh>
#define HAVE_CUB_DEVICE_MERGE 1
#else  // older toolkits (CCCL before 2.8) have no cub::DeviceMerge
#include <thrust/execution_policy.h>
#include <thrust/merge.h>
#define HAVE_CUB_DEVICE_MERGE 0
#endif

#include <algorithm>
#include <cstdint>
#include <type_traits>

// The Value of a keys-only merge: the value code compiles away.
struct NoValues {};
template <class Value>
constexpr bool kPairs = !std::is_same<Value, NoValues>::value;

// Merges a[0, m) and b[0, n) into out (and, for key-value, va and vb into
// vout) each time it is called. With CUB the temporary storage is allocated
// once, here, so a timed call allocates nothing; thrust::merge allocates
// its own scratch in every call, so there the library row's time includes
// that. The buffers must outlive it.
template <class Key, class Value = NoValues>
class LibraryMerge {
public:
    LibraryMerge(const Key* a, size_t m, const Key* b, size_t n, Key* out, const Value* va = nullptr,
                 const Value* vb = nullptr, Value* vout = nullptr)
        : a_(a), b_(b), va_(va), vb_(vb), out_(out), vout_(vout), m_(m), n_(n) {
#if HAVE_CUB_DEVICE_MERGE
        call(nullptr, tempBytes_);
        temp_.allocate(std::max<size_t>(tempBytes_, 1));  // a null pointer would mean "size query"
#endif
    }

    static const char* name() {
        if (kPairs<Value>)
            return HAVE_CUB_DEVICE_MERGE ? "cub::DeviceMerge::MergePairs" : "thrust::merge_by_key (no cub::DeviceMerge)";
        return HAVE_CUB_DEVICE_MERGE ? "cub::DeviceMerge::MergeKeys" : "thrust::merge (no cub::DeviceMerge)";
    }

    void operator()() {
#if HAVE_CUB_DEVICE_MERGE
        size_t bytes = tempBytes_;
        call(temp_.get(), bytes);
#else
        if constexpr (kPairs<Value>)
            thrust::merge_by_key(thrust::device, a_, a_ + m_, b_, b_ + n_, va_, vb_, out_, vout_);
        else
            thrust::merge(thrust::device, a_, a_ + m_, b_, b_ + n_, out_);
        CUDA_CHECK(cudaGetLastError());
#endif
    }

private:
#if HAVE_CUB_DEVICE_MERGE
    void call(void* temp, size_t& bytes) {
        const auto m = static_cast<int64_t>(m_), n = static_cast<int64_t>(n_);
        if constexpr (kPairs<Value>)
            CUDA_CHECK(cub::DeviceMerge::MergePairs(temp, bytes, a_, va_, m, b_, vb_, n, out_, vout_));
        else
            CUDA_CHECK(cub::DeviceMerge::MergeKeys(temp, bytes, a_, m, b_, n, out_));
    }
    size_t tempBytes_ = 0;
    DeviceBuffer<unsigned char> temp_;
#endif
    const Key *a_, *b_;
    const Value *va_, *vb_;
    Key* out_;
    Value* vout_;
    size_t m_, n_;
};

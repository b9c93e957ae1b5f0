// Error handling shared by every lesson: checked CUDA calls and launches,
// the exit codes of the lesson contract, the no-GPU exit, and device
// buffers that say how many bytes they needed when the card runs out.
#pragma once

#include "exit_codes.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <utility>


inline void failCuda(cudaError_t err, const char* call, const char* file, int line) {
    std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", file, line, call,
                 cudaGetErrorString(err), cudaGetErrorName(err));
    std::exit(kExitCudaError);
}

// Wrap every runtime call: CUDA_CHECK(cudaMemcpy(...));
#define CUDA_CHECK(call)                                                   \
    do {                                                                   \
        cudaError_t cuda_check_err_ = (call);                              \
        if (cuda_check_err_ != cudaSuccess)                                \
            failCuda(cuda_check_err_, #call, __FILE__, __LINE__);          \
    } while (0)

// After every <<<...>>>: a bad configuration shows up here at once, a fault
// inside the kernel at the next synchronizing call (also checked).
// CUDA_CHECK_LAUNCH("mergeCoRank");
#define CUDA_CHECK_LAUNCH(kernelName)                                      \
    do {                                                                   \
        cudaError_t cuda_check_err_ = cudaGetLastError();                  \
        if (cuda_check_err_ != cudaSuccess)                                \
            failCuda(cuda_check_err_, "launch of " kernelName, __FILE__, __LINE__); \
    } while (0)

// The no-GPU exit: one line, the Colab hint, code 77. The runtime's own
// reason is left out: with no GPU it says "driver version is insufficient",
// which sends a learner after the wrong fix.
inline void requireCudaDevice(const char* program) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();  // clear it
        std::fprintf(stderr,
                     "%s: no CUDA device available; in Colab: Runtime > Change runtime type > GPU\n",
                     program);
        std::exit(kExitNoDevice);
    }
}

// Too little memory is an exit-3 error that names the bytes needed and free.
inline void requireDeviceMemory(size_t bytesNeeded, const char* what) {
    size_t freeBytes = 0, totalBytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&freeBytes, &totalBytes));
    if (bytesNeeded > freeBytes) {
        std::fprintf(stderr,
                     "%s needs %zu bytes of device memory, but only %zu of %zu are free\n",
                     what, bytesNeeded, freeBytes, totalBytes);
        std::exit(kExitCudaError);
    }
}

// Owns count elements of device memory; move-only. Allocation failure
// reports the bytes asked for and the bytes free, then exits 3.
template <class T>
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(size_t count) { allocate(count); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
    DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
        swap(other);
        return *this;
    }
    ~DeviceBuffer() {
        if (ptr_) cudaFree(ptr_);  // no check: a destructor must not exit
    }

    void allocate(size_t count) {
        if (ptr_) CUDA_CHECK(cudaFree(ptr_));
        ptr_ = nullptr;
        count_ = count;
        if (count == 0) return;
        const size_t bytes = count * sizeof(T);
        cudaError_t err = cudaMalloc(&ptr_, bytes);
        if (err != cudaSuccess) {
            size_t freeBytes = 0, totalBytes = 0;
            cudaGetLastError();  // clear the allocation error before asking
            cudaMemGetInfo(&freeBytes, &totalBytes);
            std::fprintf(stderr, "%s:%d: cudaMalloc(%zu bytes) failed: %s (%zu of %zu bytes free)\n",
                         __FILE__, __LINE__, bytes, cudaGetErrorString(err), freeBytes, totalBytes);
            std::exit(kExitCudaError);
        }
    }

    void upload(const T* host, size_t count, size_t offset = 0) {
        if (count)
            CUDA_CHECK(cudaMemcpy(ptr_ + offset, host, count * sizeof(T), cudaMemcpyHostToDevice));
    }
    void download(T* host, size_t count, size_t offset = 0) const {
        if (count)
            CUDA_CHECK(cudaMemcpy(host, ptr_ + offset, count * sizeof(T), cudaMemcpyDeviceToHost));
    }
    // Fill every byte with 0xFF before a checked run, so that an element the
    // kernel never wrote cannot look right (a NaN for floats, the largest
    // value for unsigned integers, an impossible source index).
    void poison() {
        if (count_) CUDA_CHECK(cudaMemset(ptr_, 0xFF, count_ * sizeof(T)));
    }

    T* get() const { return ptr_; }
    size_t size() const { return count_; }
    size_t bytes() const { return count_ * sizeof(T); }

private:
    void swap(DeviceBuffer& other) noexcept {
        std::swap(ptr_, other.ptr_);
        std::swap(count_, other.count_);
    }
    T* ptr_ = nullptr;
    size_t count_ = 0;
};

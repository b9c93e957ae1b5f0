// The device report every lesson prints first: which card, and how many
// threads it can hold at once, so that a sweep's "waves" can be read off it.
#pragma once

#include "cuda_check.cuh"

#include <cstdint>
#include <cstdio>
#include <string>

// The most dynamic shared memory a lesson lets a block have: the card's opt-in, or less where
// --shared-per-block asks for less (65536, a T4's, makes a larger card take the T4's tiles and tiers, so
// the T4's path runs and is checked there). The lesson entry sets it before the first CUDA call.
inline size_t& sharedPerBlockCap() {
    static size_t cap = SIZE_MAX;
    return cap;
}

// That limit on the current device.
inline size_t sharedPerBlockLimit() {
    int device = 0, optIn = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&optIn, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    return static_cast<size_t>(optIn) < sharedPerBlockCap() ? static_cast<size_t>(optIn) : sharedPerBlockCap();
}

// Grants a kernel `bytes` of dynamic shared memory a block (past 48 KiB a block needs the opt-in, which
// belongs to the current device: grant before each launch where one process drives several GPUs); false
// where the limit is lower (the caller then leaves the row out).
template <class Kernel>
bool grantShared(Kernel kernel, size_t bytes) {
    if (bytes > sharedPerBlockLimit()) return false;
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    return true;
}

// The same for a launch already chosen by the limit (DeviceInfo::sharedPerBlock): more is a bug in
// that choice, one line and exit 3, not a launch that fails or runs where a T4 could not.
template <class Kernel>
void requireShared(Kernel kernel, size_t bytes, const char* name) {
    if (grantShared(kernel, bytes)) return;
    std::fprintf(stderr, "%s needs %zu bytes of shared memory a block; this card%s allows %zu\n", name, bytes,
                 sharedPerBlockCap() == SIZE_MAX ? "" : " under --shared-per-block", sharedPerBlockLimit());
    std::exit(kExitCudaError);
}

struct DeviceInfo {
    std::string name;
    int major = 0, minor = 0;
    int smCount = 0;
    int residentThreadsPerSm = 0;
    long long threadSlots = 0;  // smCount * residentThreadsPerSm
    size_t globalBytes = 0;
    size_t freeBytes = 0;
    int l2Bytes = 0;
    size_t sharedPerBlock = 0;  // dynamic shared memory a block may have: sharedPerBlockLimit()
};

inline DeviceInfo queryDevice() {
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    DeviceInfo info;
    info.name = prop.name;
    info.major = prop.major;
    info.minor = prop.minor;
    info.smCount = prop.multiProcessorCount;
    info.residentThreadsPerSm = prop.maxThreadsPerMultiProcessor;
    info.threadSlots = static_cast<long long>(info.smCount) * info.residentThreadsPerSm;
    info.globalBytes = prop.totalGlobalMem;
    info.l2Bytes = prop.l2CacheSize;
    info.sharedPerBlock = sharedPerBlockLimit();
    size_t total = 0;
    CUDA_CHECK(cudaMemGetInfo(&info.freeBytes, &total));
    return info;
}

// Three lines (a fourth under --shared-per-block), the first two in the Day 36 transcript's words:
//   GPU: Tesla T4 (compute capability 7.5)
//   40 SMs, 1024 resident threads per SM, 40960 thread slots
//   15.6 GiB memory (15.4 free), 4.0 MiB L2
inline DeviceInfo printDeviceReport() {
    DeviceInfo info = queryDevice();
    std::printf("GPU: %s (compute capability %d.%d)\n", info.name.c_str(), info.major, info.minor);
    std::printf("%d SMs, %d resident threads per SM, %lld thread slots\n", info.smCount,
                info.residentThreadsPerSm, info.threadSlots);
    std::printf("%.1f GiB memory (%.1f free), %.1f MiB L2\n", info.globalBytes / 1073741824.0,
                info.freeBytes / 1073741824.0, info.l2Bytes / 1048576.0);
    if (sharedPerBlockCap() != SIZE_MAX)
        std::printf("shared memory a block: at most %zu bytes (--shared-per-block)\n", info.sharedPerBlock);
    return info;
}

// The device report every lesson prints first: which card, and how many
// threads it can hold at once, so that a sweep's "waves" can be read off it.
#pragma once

#include "cuda_check.cuh"

#include <cstdio>
#include <string>

struct DeviceInfo {
    std::string name;
    int major = 0, minor = 0;
    int smCount = 0;
    int residentThreadsPerSm = 0;
    long long threadSlots = 0;  // smCount * residentThreadsPerSm
    size_t globalBytes = 0;
    size_t freeBytes = 0;
    int l2Bytes = 0;
    size_t sharedPerBlockOptin = 0;
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
    info.sharedPerBlockOptin = prop.sharedMemPerBlockOptin;
    size_t total = 0;
    CUDA_CHECK(cudaMemGetInfo(&info.freeBytes, &total));
    return info;
}

// Three lines, the first two in the Day 36 transcript's words:
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
    return info;
}

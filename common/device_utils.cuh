// Small device utilities the lessons share: ceiling division, the
// device-only unroll, 16-byte loads and stores, grid sizing, and a device
// fill of provenance values. No algorithm lives here.
#pragma once

#include "cuda_check.cuh"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>

// Ceiling division: the count of size-y pieces that cover x (a tail needs one).
template <class T>
__host__ __device__ constexpr T ceilDiv(T x, T y) {
    return x / y + (x % y != 0);
}

// Loops over a compile-time vt unroll on the device, so the per-thread
// arrays they index stay in registers; the host compiler (which runs the
// same bodies in --selftest) does as it likes.
#ifdef __CUDA_ARCH__
#define DEVICE_UNROLL _Pragma("unroll")
#else
#define DEVICE_UNROLL
#endif

// Resident blocks an SM a kernel is compiled for (__launch_bounds__' second
// argument: registers capped to fit them; 0, no cap): `blocks` from sm_80 on,
// no cap below, where an SM (a T4's) holds 1024 threads.
constexpr int blocksFromSm80([[maybe_unused]] int blocks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
    return 0;
#else
    return blocks;
#endif
}

// What an SM holds, for the block counts a bound asks (__launch_bounds__' second argument caps the registers
// so that many blocks fit): threads, 1024 on a T4 (sm_75) and at least 1536 from sm_80 (sm_86/89; sm_80/90
// hold 2048); and from sm_80 shared memory, of which each block takes 1 KiB more than it asks: 164 KiB on
// sm_80/87, 228 from sm_90 up to sm_110, 100 on sm_86/89/120 and any card not named here. Below sm_80 (a T4;
// sm_70 is no target) the bounds count threads only (kSharedPerSM 0): an sm_75 build's PTX is what newer cards
// compile at load, and the bounds it carries are the ones its sweeps through PTX were measured with. On a T4
// itself they cap the registers tighter than its 64 KiB let blocks reside (a lever not yet measured).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
constexpr int kThreadsPerSM = 1024;
#else
constexpr int kThreadsPerSM = 1536;
#endif
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ < 800
constexpr size_t kSharedPerSM = 0;
#elif __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 870
constexpr size_t kSharedPerSM = size_t{164} << 10;
#elif __CUDA_ARCH__ >= 900 && __CUDA_ARCH__ < 1200
constexpr size_t kSharedPerSM = size_t{228} << 10;
#else
constexpr size_t kSharedPerSM = size_t{100} << 10;
#endif
// Up to `blocks` resident blocks of nt threads and sharedBytes each: as many as an SM holds.
constexpr int blocksThatFit(int nt, int blocks, size_t sharedBytes = 0) {
    int most = kThreadsPerSM / nt;
    if (kSharedPerSM && sharedBytes) {
        const int byShared = static_cast<int>(kSharedPerSM / (sharedBytes + 1024));
        most = byShared < most ? byShared : most;
    }
    return blocks < most ? blocks : most;
}

// Four 4-byte words as one 16-byte access (ld.global.v4 / st.global.v4 on
// the device); p must be 16-byte aligned. On the host, a memcpy.
__host__ __device__ inline uint4 load16(const void* p) {
#ifdef __CUDA_ARCH__
    return *static_cast<const uint4*>(p);
#else
    uint4 v;
    memcpy(&v, p, sizeof v);
    return v;
#endif
}
__host__ __device__ inline void store16(void* p, uint4 v) {
#ifdef __CUDA_ARCH__
    *static_cast<uint4*>(p) = v;
#else
    memcpy(p, &v, sizeof v);
#endif
}

// Blocks for `work` items at `perBlock` items a block, refused with one line
// (exit 2) past the grid's x limit instead of launching a wrong grid. A
// grid-stride kernel passes maxBlocks: its blocks loop over the rest.
inline unsigned gridFor(size_t work, size_t perBlock, const char* kernel, size_t maxBlocks = 0x7FFFFFFFu) {
    const size_t blocks = std::min(ceilDiv(work, perBlock), maxBlocks);
    if (blocks > 0x7FFFFFFFu) {
        std::fprintf(stderr, "%s: %zu blocks exceed the grid limit (2^31 - 1); use larger tiles\n", kernel, blocks);
        std::exit(kExitBadArgument);
    }
    return static_cast<unsigned>(blocks > 0 ? blocks : 1);
}

// values[i] = i: each element's own position, carried as its value so that
// the output names where every element came from (provenance). A grid-stride
// loop, so any count fits one launch.
template <class Value>
__global__ void fillPositions(Value* values, size_t count) {
    for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += static_cast<size_t>(gridDim.x) * blockDim.x)
        values[i] = static_cast<Value>(i);
}
template <class Value>
void fillPositionsOnDevice(Value* values, size_t count) {
    if (count == 0) return;
    fillPositions<<<1024, 256>>>(values, count);
    CUDA_CHECK_LAUNCH("fillPositions");
}

// Event timing: warm-up launches first (module load, first-touch and clock
// ramp stay out of the numbers), then repeated timed runs, median reported.
#pragma once

#include "cuda_check.cuh"

#include <algorithm>
#include <vector>

struct TimingPlan {
    int warmups = 3;
    int repeats = 15;
};

// Times launch() with CUDA events around each repeat and returns the median
// in milliseconds. launch() must only enqueue work (no allocation, no copy
// to the host) and check its own launches.
template <class Launch>
double medianMs(Launch&& launch, TimingPlan plan = {}) {
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    for (int w = 0; w < plan.warmups; ++w) launch();
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<float> samples;
    for (int r = 0; r < std::max(plan.repeats, 1); ++r) {
        CUDA_CHECK(cudaEventRecord(start));
        launch();
        CUDA_CHECK(cudaEventRecord(stop));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0.0f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        samples.push_back(ms);
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
    return samples[samples.size() / 2];
}

// Bandwidth in GB/s (1e9 bytes per second) of moving `bytes` in `ms`.
inline double gbPerSecond(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0.0; }

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

// Times each step of a pipeline that runs in order (each step reads what
// the one before wrote): events between the steps of whole runs, warm-up
// runs first, the median of each step in milliseconds.
template <class Step>
std::vector<double> stepMediansMs(const std::vector<Step>& steps, TimingPlan plan = {}) {
    std::vector<cudaEvent_t> events(steps.size() + 1);
    for (auto& e : events) CUDA_CHECK(cudaEventCreate(&e));
    std::vector<std::vector<float>> samples(steps.size());
    for (int r = 0; r < plan.warmups + std::max(plan.repeats, 1); ++r) {
        CUDA_CHECK(cudaEventRecord(events[0]));
        for (size_t p = 0; p < steps.size(); ++p) {
            steps[p]();
            CUDA_CHECK(cudaEventRecord(events[p + 1]));
        }
        CUDA_CHECK(cudaEventSynchronize(events.back()));
        for (size_t p = 0; p < steps.size() && r >= plan.warmups; ++p) {
            float ms = 0.0f;
            CUDA_CHECK(cudaEventElapsedTime(&ms, events[p], events[p + 1]));
            samples[p].push_back(ms);
        }
    }
    for (auto& e : events) CUDA_CHECK(cudaEventDestroy(e));
    std::vector<double> medians;
    for (auto& s : samples) {
        std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
        medians.push_back(s[s.size() / 2]);
    }
    return medians;
}

// Bandwidth in GB/s (1e9 bytes per second) of moving `bytes` in `ms`.
inline double gbPerSecond(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0.0; }

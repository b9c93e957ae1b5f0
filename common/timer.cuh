// Event timing: warm-up launches first (module load, first-touch and clock
// ramp stay out of the numbers), then repeated timed runs, median reported.
#pragma once

#include "cuda_check.cuh"

#include <algorithm>
#include <string>
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

// A step of a pipeline, timed: its name, what it worked on (a table's knob cell), the bytes it must move
// (0: none worth counting) and its median time.
struct StepTime {
    std::string name, knob;
    double bytes = 0, ms = 0;
};

// Times each step of a pipeline that runs in order (each step reads what the one before wrote): events
// between the steps of whole runs, warm-up runs first, each step's median. The pipeline names its steps as
// it runs, marks.step() after each step's launches, so one that learns its next launches on the way (a
// sample sort reads its plan level by level) is timed as it runs. Its steps may differ from run to run (a
// sample sort's later splitters come from keys scattered in any order): a step is its name and which
// occurrence of the name in the run it is; one missing from some runs says in how many it ran.
class StepMarks {
public:
    // pipeline(marks), plan.warmups + plan.repeats times: each step with its median.
    template <class Pipeline>
    static std::vector<StepTime> time(Pipeline&& pipeline, TimingPlan plan = {}) {
        StepMarks marks;
        const int timed = std::max(plan.repeats, 1);
        for (int r = 0; r < plan.warmups + timed; ++r) {
            marks.run_.clear();
            CUDA_CHECK(cudaEventRecord(marks.events_[0]));
            pipeline(marks);
            CUDA_CHECK(cudaEventSynchronize(marks.events_[marks.run_.size()]));
            if (r >= plan.warmups) marks.collect();
        }
        for (size_t p = 0; p < marks.steps_.size(); ++p) {
            auto& s = marks.samples_[p];
            std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
            marks.steps_[p].ms = s[s.size() / 2];
            if (s.size() < static_cast<size_t>(timed))
                marks.steps_[p].knob += " (" + std::to_string(s.size()) + " of " + std::to_string(timed) + " runs)";
        }
        return marks.steps_;
    }

    // After a step's launches: its event first (so the bookkeeping is not timed), then its name, what it
    // worked on and the bytes it must move.
    void step(const std::string& name, const std::string& knob = "", double bytes = 0) {
        if (run_.size() + 1 == events_.size()) events_.push_back(newEvent());  // more steps than any run before
        CUDA_CHECK(cudaEventRecord(events_[run_.size() + 1]));
        run_.push_back({name, knob, bytes, 0});
    }

    StepMarks(const StepMarks&) = delete;
    StepMarks& operator=(const StepMarks&) = delete;
    ~StepMarks() {
        for (cudaEvent_t e : events_) cudaEventDestroy(e);  // no check: a destructor must not exit
    }

private:
    StepMarks() { events_.push_back(newEvent()); }  // only time() makes one: a run's start event
    static cudaEvent_t newEvent() {
        cudaEvent_t e;
        CUDA_CHECK(cudaEventCreate(&e));
        return e;
    }
    // The run's steps' times, each to its step's samples; a step not seen before goes after the one before it.
    void collect() {
        size_t next = 0;
        for (size_t p = 0; p < run_.size(); ++p) {
            float ms = 0.0f;
            CUDA_CHECK(cudaEventElapsedTime(&ms, events_[p], events_[p + 1]));
            int occurrence = 0;  // of this name earlier in the run
            for (size_t q = 0; q < p; ++q) occurrence += run_[q].name == run_[p].name;
            size_t at = 0;
            while (at < steps_.size() && !(steps_[at].name == run_[p].name && occurrences_[at] == occurrence)) ++at;
            if (at == steps_.size()) {
                at = next;
                steps_.insert(steps_.begin() + at, run_[p]);
                occurrences_.insert(occurrences_.begin() + at, occurrence);
                samples_.insert(samples_.begin() + at, std::vector<float>{});
            }
            samples_[at].push_back(ms);
            next = at + 1;
        }
    }
    std::vector<StepTime> steps_, run_;  // every step seen, in order; this run's
    std::vector<int> occurrences_;       // steps_[p] is occurrence occurrences_[p] of its name in a run
    std::vector<std::vector<float>> samples_;
    std::vector<cudaEvent_t> events_;  // events_[0]: a run's start; events_[p + 1]: after the run's step p
};

// Bandwidth in GB/s (1e9 bytes per second) of moving `bytes` in `ms`.
inline double gbPerSecond(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0.0; }

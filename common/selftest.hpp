// The --selftest harness: host-only checks of a lesson's __host__ __device__
// building blocks. Each failed expectation prints one line; the run goes on,
// so that one call reports every broken piece, and the exit code says.
#pragma once

#include "exit_codes.hpp"

#include <cstdio>
#include <string>

inline int& selftestFailures() {
    static int failures = 0;
    return failures;
}

inline void expect(bool ok, const std::string& what) {
    if (!ok) {
        std::printf("FAIL %s\n", what.c_str());
        ++selftestFailures();
    }
}

// Prints the verdict and returns the exit code for main.
inline int selftestVerdict() {
    std::printf("selftest: %s\n", selftestFailures() ? "FAILED" : "all passed");
    return selftestFailures() ? kExitCheckFailed : kExitPass;
}

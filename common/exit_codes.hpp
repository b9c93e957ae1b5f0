// The exit codes every lesson binary keeps (README.md, "Every lesson binary").
#pragma once

constexpr int kExitPass = 0;
constexpr int kExitCheckFailed = 1;
constexpr int kExitBadArgument = 2;
constexpr int kExitCudaError = 3;     // also: too little device or host memory
constexpr int kExitNoDevice = 77;     // CTest reads 77 as "skipped"

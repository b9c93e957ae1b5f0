# Chooses CMAKE_CUDA_ARCHITECTURES before project() enables CUDA:
#   a GPU answers nvidia-smi  -> that card only (e.g. 90 on an H200)
#   no GPU                    -> sm_75 machine code (the T4) and its PTX, which
#                                every newer card compiles at load: one
#                                compile a file, so a build without a GPU (CI)
#                                stays short; the "portable" preset builds
#                                75, 80 and 90 machine code for shipping
execute_process(
  COMMAND nvidia-smi --query-gpu=compute_cap --format=csv,noheader
  OUTPUT_VARIABLE detected_caps
  RESULT_VARIABLE nvidia_smi_result
  ERROR_QUIET OUTPUT_STRIP_TRAILING_WHITESPACE)
set(detected_arch "")
if(nvidia_smi_result EQUAL 0 AND detected_caps MATCHES "^([0-9]+)\\.([0-9]+)")
  set(detected_arch "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
endif()
if(detected_arch)
  set(CMAKE_CUDA_ARCHITECTURES "${detected_arch}" CACHE STRING "CUDA architectures (this machine's GPU)")
  message(STATUS "GPU found: building for sm_${detected_arch}")
else()
  set(CMAKE_CUDA_ARCHITECTURES "75" CACHE STRING "CUDA architectures (no GPU: sm_75 and its PTX)")
  message(STATUS "No GPU found: building sm_75 machine code and PTX (the portable preset builds 75, 80 and 90)")
endif()

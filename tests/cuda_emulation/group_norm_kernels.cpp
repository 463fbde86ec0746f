// src/cuda/kernels/group_norm.cu compiled as C++ and run on host threads (src/cuda/kernels/emulation.h).
#define LG_CUDA_EMULATION 1
#include "cuda/kernels/group_norm.cu"

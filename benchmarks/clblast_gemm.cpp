//===- clblast_gemm.cpp - CLBlast SGEMM reference timings -----------------===//
//
//   clblast_gemm M N K FORM [ITERATIONS] [DEVICE_INDEX]
//
// Times CLBlast's row-major SGEMM (C = A·B with A and/or B transposed as
// FORM = nn | nt | tn says) on an OpenCL device, on buffers, and prints the
// median milliseconds and TFLOP/s: the reference fbl's image GEMM kernels
// are measured against in the same run.
//
//===----------------------------------------------------------------------===//

#include "ProfilingQueue.h"

#include <clblast.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  if (argc < 5) {
    std::fprintf(stderr, "usage: clblast_gemm M N K nn|nt|tn [ITER] [DEV]\n");
    return 2;
  }
  size_t m = std::stoul(argv[1]), n = std::stoul(argv[2]),
         k = std::stoul(argv[3]);
  std::string form = argv[4];
  int iterations = argc > 5 ? std::atoi(argv[5]) : 20;
  size_t devIndex = argc > 6 ? std::stoul(argv[6]) : 0;
  ProfilingQueue pq = openProfilingQueue("clblast_gemm", devIndex);
  cl_context ctx = pq.context;
  cl_command_queue queue = pq.queue;
  const char *name = pq.name.c_str();
  cl_int err;
  std::vector<float> ha(m * k, 0.5f), hb(k * n, 0.25f), hc(m * n, 0.0f);
  cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                            ha.size() * 4, ha.data(), &err);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                            hb.size() * 4, hb.data(), &err);
  cl_mem c = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                            hc.size() * 4, hc.data(), &err);
  auto ta = form[0] == 't' ? clblast::Transpose::kYes : clblast::Transpose::kNo;
  auto tb = form[1] == 't' ? clblast::Transpose::kYes : clblast::Transpose::kNo;
  size_t lda = ta == clblast::Transpose::kYes ? m : k;
  size_t ldb = tb == clblast::Transpose::kYes ? k : n;
  cl_event event = nullptr;
  auto launch = [&]() {
    auto s = clblast::Gemm(clblast::Layout::kRowMajor, ta, tb, m, n, k, 1.0f, a,
                           0, lda, b, 0, ldb, 0.0f, c, 0, n, &queue, &event);
    if (s != clblast::StatusCode::kSuccess) {
      std::fprintf(stderr, "clblast_gemm: Gemm failed (%d)\n",
                   static_cast<int>(s));
      std::exit(1);
    }
  };
  launch();
  clFinish(queue);
  clReleaseEvent(event);
  // Wall time of a call (host, to clFinish), as fbl-run reports a step, and
  // device time of the event CLBlast returns: its last kernel, the GEMM only
  // where it runs one (its indirect path pads and transposes around the
  // GEMM and returns the last copy's event: 0.01 ms at 2048^3 on the H200),
  // so no rate is derived from it.
  std::vector<double> ms, kernelMs;
  for (int i = 0; i < iterations; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    launch();
    clFinish(queue);
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - t0)
                     .count());
    cl_ulong s0 = 0, s1 = 0;
    clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof(s0), &s0,
                            nullptr);
    clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof(s1), &s1,
                            nullptr);
    kernelMs.push_back((s1 - s0) / 1e6);
    clReleaseEvent(event);
  }
  std::sort(ms.begin(), ms.end());
  std::sort(kernelMs.begin(), kernelMs.end());
  double med = ms[ms.size() / 2], kmed = kernelMs[kernelMs.size() / 2];
  double flop = 2.0 * m * n * k;
  std::printf("clblast %s %zux%zux%zu on %s: median %.4f ms, %.2f TFLOP/s; "
              "last kernel %.4f ms\n",
              form.c_str(), m, n, k, name, med, flop / med / 1e9, kmed);
  return 0;
}

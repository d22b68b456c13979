//===- launch_overhead.cpp - What launching an empty kernel costs ---------===//
//
//   launch_overhead [LAUNCHES] [DEVICE_INDEX]
//
// The floor under every fbl kernel: an empty kernel over one work-group,
// launched on an in-order queue (as libfbl_runtime does) three ways, each
// the median of 15 rounds of LAUNCHES launches:
//   sync      enqueue then clFinish, one at a time (a round trip per kernel);
//   queued    LAUNCHES enqueues, one clFinish at the end (a training step:
//             kernels back to back), per launch;
//   plain     queued, on a queue without profiling (as libfbl_runtime's
//             unprofiled runs), and of that the host's enqueue calls alone
//             (before the clFinish);
//   device    profiled: each kernel's start-to-end, and the gap from one
//             kernel's end to the next one's start, on the device's clock.
// A training step of K kernels costs at least K x queued.
//
//===----------------------------------------------------------------------===//

#include "ProfilingQueue.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

static void check(cl_int e, const char *what) {
  checkCL("launch_overhead", e, what);
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char **argv) {
  int launches = argc > 1 ? std::atoi(argv[1]) : 200;
  size_t devIndex = argc > 2 ? std::stoul(argv[2]) : 0;
  if (launches < 2) {
    std::fprintf(stderr, "usage: launch_overhead [LAUNCHES >= 2] [DEV]\n");
    return 2;
  }
  ProfilingQueue pq = openProfilingQueue("launch_overhead", devIndex);
  cl_context context = pq.context;
  cl_command_queue queue = pq.queue;
  const char *name = pq.name.c_str();
  cl_int err;
  // An argument, as every fbl kernel has: the launch sets and checks it.
  const char *source = "__kernel void empty(__global float *out) {}";
  cl_program program =
      clCreateProgramWithSource(context, 1, &source, nullptr, &err);
  check(err, "clCreateProgramWithSource");
  check(clBuildProgram(program, 1, &pq.device, "", nullptr, nullptr),
        "clBuildProgram");
  cl_kernel kernel = clCreateKernel(program, "empty", &err);
  check(err, "clCreateKernel");
  cl_mem out = clCreateBuffer(context, CL_MEM_READ_WRITE, 64 * sizeof(float),
                              nullptr, &err);
  check(err, "clCreateBuffer");
  check(clSetKernelArg(kernel, 0, sizeof(cl_mem), &out), "clSetKernelArg");
  size_t global = 64, local = 64;
  cl_command_queue plainQueue =
      clCreateCommandQueue(context, pq.device, 0, &err);
  check(err, "clCreateCommandQueue");
  auto launchOn = [&](cl_command_queue on, cl_event *event) {
    check(clEnqueueNDRangeKernel(on, kernel, 1, nullptr, &global, &local, 0,
                                 nullptr, event),
          "clEnqueueNDRangeKernel");
  };
  auto launch = [&](cl_event *event) { launchOn(queue, event); };
  using clock = std::chrono::steady_clock;
  auto us = [](clock::duration d) {
    return std::chrono::duration<double, std::micro>(d).count();
  };
  // Warm-up: the first launches compile and allocate.
  for (int i = 0; i < 20; ++i) {
    launch(nullptr);
    launchOn(plainQueue, nullptr);
  }
  check(clFinish(queue), "clFinish");
  check(clFinish(plainQueue), "clFinish");

  std::vector<double> sync, queued, plain, enqueued, busy, gap;
  for (int round = 0; round < 15; ++round) {
    auto t0 = clock::now();
    for (int i = 0; i < launches; ++i) {
      launch(nullptr);
      clFinish(queue);
    }
    sync.push_back(us(clock::now() - t0) / launches);

    t0 = clock::now();
    for (int i = 0; i < launches; ++i)
      launch(nullptr);
    check(clFinish(queue), "clFinish");
    queued.push_back(us(clock::now() - t0) / launches);

    t0 = clock::now();
    for (int i = 0; i < launches; ++i)
      launchOn(plainQueue, nullptr);
    enqueued.push_back(us(clock::now() - t0) / launches);
    check(clFinish(plainQueue), "clFinish");
    plain.push_back(us(clock::now() - t0) / launches);

    std::vector<cl_event> events(static_cast<size_t>(launches));
    for (cl_event &e : events)
      launch(&e);
    check(clFinish(queue), "clFinish");
    cl_ulong lastEnd = 0;
    for (size_t i = 0; i < events.size(); ++i) {
      cl_ulong start = 0, end = 0;
      clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_START,
                              sizeof(start), &start, nullptr);
      clGetEventProfilingInfo(events[i], CL_PROFILING_COMMAND_END, sizeof(end),
                              &end, nullptr);
      busy.push_back(static_cast<double>(end - start) / 1000.0);
      if (i > 0 && start >= lastEnd)
        gap.push_back(static_cast<double>(start - lastEnd) / 1000.0);
      lastEnd = end;
      clReleaseEvent(events[i]);
    }
  }
  std::printf("device: %s\n", name);
  std::printf("launches per round: %d, rounds: 15 (medians)\n", launches);
  std::printf("sync (enqueue + clFinish each): %.2f us per launch\n",
              median(sync));
  std::printf("queued (one clFinish per round): %.2f us per launch\n",
              median(queued));
  std::printf("plain (queued, no profiling queue): %.2f us per launch, "
              "%.2f us of it enqueueing\n",
              median(plain), median(enqueued));
  std::printf("device start-to-end: %.2f us\n", median(busy));
  if (!gap.empty())
    std::printf("device gap between kernels: %.2f us\n", median(gap));
  clReleaseMemObject(out);
  clReleaseKernel(kernel);
  clReleaseProgram(program);
  clReleaseCommandQueue(plainQueue);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}

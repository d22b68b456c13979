//===- image_residency.cpp - How many images one step may touch -----------===//
//
//   image_residency [IMAGES] [WIDTH] [BALLAST_MB] [DEVICE_INDEX]
//
// SD-1.5's full training step faults NVIDIA's queue at launch 2140 of 2144
// (an AdamW update of small biases, 40 read and 30 write images of 80 x 1
// texels), while that launch and the ones after it run alone. The step
// allocates 3550 images (7.55 GB) and its launches touch them for the first
// time as they go: 3459 by launch 2139, 3502 by 2140. This program asks the
// driver whether touching that many images faults by itself, without fbl:
// it allocates IMAGES images of WIDTH x 1 RGBA f32 texels (and BALLAST_MB of
// large images, written once, for the step's other memory), then launches a
// kernel of 40 read and 30 write images again and again, each launch writing
// 30 images no launch wrote before and reading the 40 written last, waiting
// for each launch. It prints the images touched every 512 and, where a
// launch fails, the launch and the images touched before it; else "no
// fault" with the total.
//
//===----------------------------------------------------------------------===//

#include "ProfilingQueue.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {
constexpr int kReads = 40, kWrites = 30;

void check(cl_int e, const char *what) { checkCL("image_residency", e, what); }

/// The kernel: every write image gets the sum of the read images' texels
/// plus its own index, texel by texel.
std::string kernelSource() {
  std::string s = "__kernel void touch(";
  for (int i = 0; i < kReads; ++i)
    s += "__read_only image2d_t a" + std::to_string(i) + ", ";
  for (int i = 0; i < kWrites; ++i)
    s += "__write_only image2d_t o" + std::to_string(i) +
         (i + 1 < kWrites ? ", " : ") {\n");
  s += "  int x = get_global_id(0);\n"
       "  if (x >= get_image_width(o0)) return;\n"
       "  const sampler_t s = CLK_NORMALIZED_COORDS_FALSE | "
       "CLK_ADDRESS_NONE | CLK_FILTER_NEAREST;\n"
       "  float4 t = (float4)(0.0f);\n";
  for (int i = 0; i < kReads; ++i)
    s += "  t += read_imagef(a" + std::to_string(i) + ", s, (int2)(x, 0));\n";
  for (int i = 0; i < kWrites; ++i)
    s += "  write_imagef(o" + std::to_string(i) + ", (int2)(x, 0), t + " +
         std::to_string(i) + ".0f);\n";
  return s + "}\n";
}
} // namespace

int main(int argc, char **argv) {
  int images = argc > 1 ? std::atoi(argv[1]) : 4096;
  size_t width = argc > 2 ? std::stoul(argv[2]) : 80;
  size_t ballastMb = argc > 3 ? std::stoul(argv[3]) : 0;
  size_t devIndex = argc > 4 ? std::stoul(argv[4]) : 0;
  if (images < kReads + kWrites || width < 1) {
    std::fprintf(stderr,
                 "usage: image_residency [IMAGES >= %d] [WIDTH] "
                 "[BALLAST_MB] [DEV]\n",
                 kReads + kWrites);
    return 2;
  }
  ProfilingQueue pq = openProfilingQueue("image_residency", devIndex);
  cl_int err;
  std::string source = kernelSource();
  const char *text = source.c_str();
  cl_program program =
      clCreateProgramWithSource(pq.context, 1, &text, nullptr, &err);
  check(err, "clCreateProgramWithSource");
  check(clBuildProgram(program, 1, &pq.device, "", nullptr, nullptr),
        "clBuildProgram");
  cl_kernel kernel = clCreateKernel(program, "touch", &err);
  check(err, "clCreateKernel");

  cl_image_format format = {CL_RGBA, CL_FLOAT};
  auto image = [&](size_t w, size_t h) {
    cl_image_desc desc = {};
    desc.image_type = CL_MEM_OBJECT_IMAGE2D;
    desc.image_width = w;
    desc.image_height = h;
    cl_mem m = clCreateImage(pq.context, CL_MEM_READ_WRITE, &format, &desc,
                             nullptr, &err);
    check(err, "clCreateImage");
    return m;
  };
  // The step's large memory: 4096 x 4096 texels (256 MB) each, zero-filled
  // so that the driver commits it.
  std::vector<cl_mem> ballast;
  for (size_t mb = 0; mb < ballastMb; mb += 256) {
    ballast.push_back(image(4096, 4096));
    const float zero[4] = {0, 0, 0, 0};
    size_t origin[3] = {0, 0, 0}, region[3] = {4096, 4096, 1};
    check(clEnqueueFillImage(pq.queue, ballast.back(), zero, origin, region, 0,
                             nullptr, nullptr),
          "clEnqueueFillImage");
  }
  check(clFinish(pq.queue), "clFinish (ballast)");

  std::vector<cl_mem> small(static_cast<size_t>(images));
  for (cl_mem &m : small)
    m = image(width, 1);
  // The first reads: images written by the fill, as a step's inputs are.
  const float one[4] = {1, 1, 1, 1};
  size_t origin[3] = {0, 0, 0}, region[3] = {width, 1, 1};
  for (int i = 0; i < kReads; ++i)
    check(clEnqueueFillImage(pq.queue, small[i], one, origin, region, 0,
                             nullptr, nullptr),
          "clEnqueueFillImage");
  check(clFinish(pq.queue), "clFinish (inputs)");

  std::printf("device: %s\n", pq.name.c_str());
  std::printf("%d images of %zu x 1 texels, %zu MB of ballast; launches of "
              "%d read and %d write images, each waited for\n",
              images, width, ballast.size() * 256, kReads, kWrites);
  int touched = kReads, next = 512;
  size_t global = (width + 63) / 64 * 64, local = 64;
  for (int launch = 0; touched + kWrites <= images; ++launch) {
    for (int i = 0; i < kReads; ++i)
      check(clSetKernelArg(kernel, i, sizeof(cl_mem),
                           &small[touched - kReads + i]),
            "clSetKernelArg");
    for (int i = 0; i < kWrites; ++i)
      check(clSetKernelArg(kernel, kReads + i, sizeof(cl_mem),
                           &small[touched + i]),
            "clSetKernelArg");
    cl_int e = clEnqueueNDRangeKernel(pq.queue, kernel, 1, nullptr, &global,
                                      &local, 0, nullptr, nullptr);
    if (e == CL_SUCCESS)
      e = clFinish(pq.queue);
    if (e != CL_SUCCESS) {
      std::printf("launch %d failed (%d) after %d images touched (%d with "
                  "its writes)\n",
                  launch, e, touched, touched + kWrites);
      return 1;
    }
    touched += kWrites;
    if (touched >= next) {
      std::printf("%d images touched\n", touched);
      std::fflush(stdout);
      next += 512;
    }
  }
  std::printf("no fault: %d images touched\n", touched);
  return 0;
}

//===- fbl-fuzz-manifest.cpp - Fuzz the runtime's manifest loader ---------===//
//
// libFuzzer target: the input is a manifest.json. It goes through what
// fbl_session_open does before it needs a device (Bundle::parse), then
// through what fbl-run does with the session that needs none: tensor info
// over the C API, input range checks, and packing host arrays into image
// texels and back for every image tensor small enough to try.
//
// An error from the runtime (Error, or a JSON exception, which the C API
// reports as a malformed manifest) is a fine outcome. Bugs are: a crash or
// sanitizer report, any other exception, and a pack/unpack round trip that
// does not give the host array back (a manifest the loader accepted whose
// layout does not fit its memory).
//
//===----------------------------------------------------------------------===//

#include "Error.h"
#include "Session.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace fbl::runtime;

/// Bounds on the arrays tried, to keep each run fast.
static constexpr size_t kMaxHostBytes = size_t(1) << 20;
static constexpr int64_t kMaxTexelFloats = int64_t(1) << 22;

[[noreturn]] static void bug(const std::string &what) {
  std::fprintf(stderr, "fbl-fuzz-manifest: %s\n", what.c_str());
  std::abort();
}

/// Host data for `t` (`bytes` of it): distinct finite values, so a range
/// check meets values on both sides and a round trip shows any mix-up.
static std::vector<uint8_t> hostData(const Tensor &t, size_t bytes) {
  std::vector<uint8_t> data(bytes);
  size_t itemSize = t.elements() ? bytes / t.elements() : 0;
  for (int64_t e = 0; e < t.elements(); ++e) {
    if (itemSize == 8) {
      int64_t v = e - 2;
      std::memcpy(data.data() + 8 * e, &v, 8);
    } else if (itemSize == 4 && t.dtype != "f32") {
      int32_t v = static_cast<int32_t>(e) - 2;
      std::memcpy(data.data() + 4 * e, &v, 4);
    } else if (itemSize == 4) {
      float v = static_cast<float>(e) + 0.5f;
      std::memcpy(data.data() + 4 * e, &v, 4);
    }
  }
  return data;
}

/// Packs `data` into the texels of `t`'s memory and back.
static void checkRoundTrip(const fbl_session &s, const Tensor &t,
                           const std::vector<uint8_t> &data) {
  const Memory &m = s.memories[t.memory];
  if (m.storage == fbl::layout::StorageKind::Buffer || t.dtype != "f32" ||
      m.width * m.height * m.layers * 4 > kMaxTexelFloats)
    return;
  const float *host = reinterpret_cast<const float *>(data.data());
  std::vector<float> texels = s.packTexels(t, host);
  std::vector<float> back(t.elements());
  s.unpackTexels(t, texels, back.data());
  if (std::memcmp(back.data(), host, data.size()) != 0)
    bug("pack then unpack changed a tensor of layout " + t.layout.str());
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fbl_session s;
  try {
    static_cast<Bundle &>(s) =
        Bundle::parse(std::string(reinterpret_cast<const char *>(data), size));
  } catch (const Error &) {
    return 0;
  } catch (const nlohmann::json::exception &) {
    return 0;
  }

  for (int output = 0; output < 2; ++output) {
    const std::vector<int64_t> &list =
        output ? s.outputTensors : s.inputTensors;
    for (size_t i = 0; i < list.size(); ++i) {
      int64_t shape[8];
      size_t rank = 0;
      const char *dtype = nullptr;
      int isParam = 0;
      if (fbl_session_tensor_info(&s, output, i, shape, &rank, &dtype,
                                  &isParam) != FBL_OK)
        continue;
      if (output)
        (void)fbl_session_output_updates(&s, i);
      else
        (void)fbl_session_input_is_step_count(&s, i);
      const Tensor &t = s.tensors[list[i]];
      size_t bytes;
      try {
        bytes = t.hostBytes();
      } catch (const Error &) {
        continue;
      }
      if (bytes > kMaxHostBytes)
        continue;
      std::vector<uint8_t> host = hostData(t, bytes);
      if (!output) {
        try {
          s.checkRange(i, host.data());
        } catch (const Error &) {
        }
      }
      checkRoundTrip(s, t, host);
    }
  }
  (void)fbl_session_device_bytes(&s);
  return 0;
}

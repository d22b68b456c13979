//===- fbl-run.cpp - Run a compiled fbl bundle ----------------------------===//
//
//   fbl-run DIR [--input NAME=FILE.npy]... [--weights FILE.safetensors]
//               [--random-inputs SEED] [--output-dir OUT] [--iterations N]
//               [--profile] [--train STEPS] [--device SEL]
//               [--save-weights FILE [--save-filter TEXT] [--save-dtype T]]
//       fbl-run DIR --compare DIR2 [--compare DIR3]... [--rounds R]
//               [--iterations N] [input and device options]
//       fbl-run --print-target|--print-preset [--device SEL]
//       fbl-run --list-devices
//
// Feeds the entry function's arguments, runs the schedule, prints the median
// step time (and a per-kernel table with --profile), and writes result J as
// OUT/resultJ.npy. An input comes from --input (by its name or as argI),
// else from --weights (a safetensors tensor of its name), else from its
// initializer (seeded by --random-inputs, else 0), else random with
// --random-inputs (integer inputs within their valid range). With --train, a
// training-step bundle runs STEPS steps, each step's updated parameters and
// optimizer state feeding the next, and prints the loss and step time as it
// goes; --save-weights then writes the named parameters. With --compare, the
// bundles run side by side in one process on the same inputs, R rounds of N
// iterations each, and fbl-run prints each one's median step time and its
// paired ratio to the first. Errors are one line on stderr and a non-zero
// exit.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include "fbl_runtime/fbl_runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: fbl-run DIR [--input NAME=FILE.npy]... "
               "[--weights FILE.safetensors] [--random-inputs SEED]\n"
               "               [--output-dir OUT] [--iterations N] "
               "[--profile] [--train STEPS] [--device SEL]\n"
               "               [--save-weights FILE [--save-filter TEXT] "
               "[--save-dtype F32|F16|BF16]]\n"
               "       fbl-run DIR --compare DIR2 [--compare DIR3]... "
               "[--rounds R] [--iterations N] [inputs]\n"
               "       fbl-run --print-target|--print-preset [--device SEL]\n"
               "       fbl-run --list-devices\n");
  return 2;
}

[[noreturn]] void die(const std::string &message) {
  std::fprintf(stderr, "fbl-run: error: %s\n", message.c_str());
  std::exit(1);
}

void check(fbl_status s) {
  if (s != FBL_OK)
    die(fbl_last_error());
}

/// `text` as a positive integer (all of it), else dies with `message`.
int positiveInt(const std::string &text, const std::string &message) {
  size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(text, &used);
  } catch (const std::exception &) {
    die(message);
  }
  if (used != text.size() || v < 1)
    die(message);
  return v;
}

/// How messages name input `i`, as the runtime's do.
std::string inputLabel(fbl_session *session, size_t i) {
  std::string name = fbl_session_input_name(session, i);
  return name.empty() ? "input arg" + std::to_string(i)
                      : "input '" + name + "' (arg " + std::to_string(i) + ")";
}

/// The input `key` (a name, else argI) names.
size_t resolveInput(fbl_session *session, const std::string &key) {
  size_t index;
  if (fbl_session_find_input(session, key.c_str(), &index) == FBL_OK)
    return index;
  size_t numInputs = fbl_session_num_inputs(session);
  if (key.size() > 3 && key.rfind("arg", 0) == 0 &&
      key.find_first_not_of("0123456789", 3) == std::string::npos) {
    unsigned long i = 0;
    try {
      i = std::stoul(key.substr(3));
    } catch (const std::exception &) {
      i = numInputs;
    }
    if (i >= numInputs)
      die("--input " + key + ": the bundle has " + std::to_string(numInputs) +
          " inputs");
    return i;
  }
  die("--input " + key + ": the bundle has no input of that name");
}

/// Where a bundle's inputs come from (the options of the same names).
struct InputOptions {
  std::vector<std::pair<std::string, std::string>> keys;
  std::string weights;
  long seed = -1;
};

/// Sets every input of `session` as the options say. The random generator
/// starts from the seed for each session, so bundles of the same function
/// get the same inputs.
void setInputs(fbl_session *session, const InputOptions &options) {
  const auto &inputKeys = options.keys;
  const std::string &weights = options.weights;
  long seed = options.seed;
  size_t numInputs = fbl_session_num_inputs(session);
  std::map<size_t, std::string> inputs;
  for (const auto &[key, path] : inputKeys) {
    size_t i = resolveInput(session, key);
    if (!inputs.emplace(i, path).second)
      die("--input " + key + ": " + inputLabel(session, i) + " is given twice");
  }
  if (!weights.empty()) {
    std::vector<char> report(1 << 22);
    check(fbl_session_load_weights(session, weights.c_str(), 0, report.data(),
                                   report.size()));
    // One line: how many loaded, and the first few tensors no input took.
    int loaded = 0, unused = 0;
    std::string unusedNames;
    for (const char *line = report.data(); *line;) {
      const char *end = std::strchr(line, '\n');
      std::string l(line, end ? end : line + std::strlen(line));
      loaded += l.rfind("loaded ", 0) == 0;
      if (l.rfind("unused ", 0) == 0 && ++unused <= 4)
        unusedNames += (unusedNames.empty() ? "'" : ", '") + l.substr(7) + "'";
      line = end ? end + 1 : line + l.size();
    }
    if (unused > 4)
      unusedNames += " and " + std::to_string(unused - 4) + " more";
    std::printf("weights: loaded %d tensor%s from %s%s\n", loaded,
                loaded == 1 ? "" : "s", weights.c_str(),
                unused ? ("; no input for " + unusedNames).c_str() : "");
  }
  std::mt19937_64 rng(seed < 0 ? 0 : seed);
  // Optimizer state (inputs a step updates that are not parameters) starts
  // at zero, as optimizers define it.
  std::vector<bool> isState(numInputs, false);
  for (size_t j = 0; j < fbl_session_num_outputs(session); ++j) {
    int64_t t = fbl_session_output_updates(session, j);
    if (t >= 0)
      isState[t] = true;
  }
  for (size_t i = 0; i < numInputs; ++i) {
    int64_t shape[8];
    size_t rank;
    const char *dtype;
    int isParam;
    check(
        fbl_session_tensor_info(session, 0, i, shape, &rank, &dtype, &isParam));
    std::vector<int64_t> want(shape, shape + rank);
    int64_t n = 1;
    for (int64_t d : want)
      n *= d;
    fbl::npy::Array array;
    if (auto it = inputs.find(i); it != inputs.end()) {
      try {
        array = fbl::npy::read(it->second);
      } catch (const std::exception &e) {
        die(e.what());
      }
      if (array.shape != want || array.dtype != dtype) {
        std::string s;
        for (int64_t d : want)
          s += std::to_string(d) + "x";
        die(inputLabel(session, i) + " needs a " + s + dtype + " array; " +
            it->second + " holds another shape or type");
      }
    } else if (fbl_session_input_is_set(session, i)) {
      continue; // From --weights.
    } else if (*fbl_session_input_init(session, i)) {
      check(fbl_session_init_input(session, i, seed < 0 ? 0 : seed));
      continue;
    } else if (fbl_session_input_is_step_count(session, i)) {
      // The first step; --train sets it per step.
      float one = 1.0f;
      check(fbl_session_set_input(session, i, &one, sizeof(one)));
      continue;
    } else if (seed >= 0) {
      array.shape = want;
      array.dtype = dtype;
      if (std::string(dtype) == "f32" && (isParam || !isState[i])) {
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        std::vector<float> v(n);
        for (float &x : v)
          x = dist(rng);
        array.data.resize(n * 4);
        std::memcpy(array.data.data(), v.data(), n * 4);
      } else if (int64_t lo, hi;
                 fbl_session_input_range(session, i, &lo, &hi)) {
        // Integer inputs with a valid range (token ids, labels) are drawn
        // from it, whatever its lower bound.
        bool i64 = std::string(dtype) == "i64";
        if (!i64) {
          lo = std::max<int64_t>(lo, std::numeric_limits<int32_t>::min());
          hi = std::min<int64_t>(hi, std::numeric_limits<int32_t>::max());
        }
        std::uniform_int_distribution<int64_t> dist(lo, hi);
        array.data.resize(n * (i64 ? 8 : 4));
        for (int64_t e = 0; e < n; ++e) {
          int64_t v = dist(rng);
          int32_t v32 = static_cast<int32_t>(v);
          std::memcpy(array.data.data() + e * (i64 ? 8 : 4),
                      i64 ? static_cast<void *>(&v) : &v32, i64 ? 8 : 4);
        }
      } else {
        // Optimizer state (of bundles without initializers) and integer
        // inputs without a range are zeros.
        array.data.assign(n * (std::string(dtype) == "i64" ? 8 : 4), 0);
      }
    } else {
      std::string name = fbl_session_input_name(session, i);
      die(inputLabel(session, i) + " is not given: pass --input " +
          (name.empty() ? "arg" + std::to_string(i) : name) + "=FILE.npy" +
          (name.empty() ? "" : ", --weights FILE.safetensors") +
          " or --random-inputs SEED");
    }
    check(fbl_session_set_input(session, i, array.data.data(),
                                array.data.size()));
  }
}

/// The 0-based order statistics [lo, hi] of n samples that bound a
/// distribution-free confidence interval for their median, and its coverage:
/// the widest-coverage-first interval of at least 95%, else min..max.
struct MedianInterval {
  size_t lo, hi;
  double coverage;
};
MedianInterval medianInterval(size_t n) {
  // P(X <= k) for X ~ Binomial(n, 1/2), accumulated while it stays <= 2.5%.
  double pk = std::pow(0.5, double(n)), cdf = 0;
  size_t lo = 0;
  double tail = pk;
  for (size_t k = 0; k + 1 < n; ++k) {
    cdf += pk;
    if (cdf > 0.025)
      break;
    lo = k;
    tail = cdf;
    pk = pk * double(n - k) / double(k + 1);
  }
  return {lo, n - 1 - lo, 1 - 2 * tail};
}

/// Times `first` and the `others` side by side in one process: each round
/// runs every bundle `iterations` times, starting with the next bundle each
/// round, so that drift of the device and the host falls on all alike.
/// Prints each bundle's median over rounds of its round medians and, for the
/// others, the median over rounds of their time over the first bundle's in
/// the same round, with a confidence interval.
int compareBundles(const std::vector<std::string> &dirs,
                   const std::string &device, const InputOptions &inputs,
                   int iterations, int rounds) {
  std::vector<fbl_session *> sessions;
  for (const std::string &dir : dirs) {
    fbl_session *session = nullptr;
    check(fbl_session_open(dir.c_str(), device.c_str(), &session));
    if (sessions.empty())
      std::printf("device: %s\n", fbl_session_device_name(session));
    setInputs(session, inputs);
    check(fbl_session_run(session, 1, 0)); // Warm-up.
    sessions.push_back(session);
  }
  size_t n = sessions.size();
  std::vector<std::vector<double>> times(n);
  for (int r = 0; r < rounds; ++r)
    for (size_t j = 0; j < n; ++j) {
      size_t b = (r + j) % n;
      check(fbl_session_run(sessions[b], iterations, 0));
      times[b].push_back(fbl_session_median_ms(sessions[b]));
    }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
  };
  MedianInterval ci = medianInterval(rounds);
  std::printf("compared %zu bundles: %d rounds of %d iteration%s, each round "
              "starting with the next bundle\n",
              n, rounds, iterations, iterations == 1 ? "" : "s");
  for (size_t b = 0; b < n; ++b) {
    std::printf("%s: median step time %.3f ms", dirs[b].c_str(),
                median(times[b]));
    if (b > 0) {
      std::vector<double> ratio;
      for (int r = 0; r < rounds; ++r)
        ratio.push_back(times[b][r] / times[0][r]);
      double mid = median(ratio);
      std::sort(ratio.begin(), ratio.end());
      std::printf(", over %s: %.4f (%.1f%% interval %.4f-%.4f)",
                  dirs[0].c_str(), mid, 100 * ci.coverage, ratio[ci.lo],
                  ratio[ci.hi]);
    }
    std::printf("\n  rounds (ms):");
    for (double t : times[b])
      std::printf(" %.4f", t);
    std::printf("\n");
  }
  for (fbl_session *session : sessions)
    fbl_session_close(session);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  std::string bundle, outputDir, device, saveWeights, saveFilter,
      saveDType = "F32";
  InputOptions inputOptions;
  std::vector<std::string> compared;
  int iterations = 1, trainSteps = 0, rounds = 1;
  bool profile = false, printTarget = false, printPreset = false,
       listDevices = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        die("option " + a + " needs a value");
      return argv[++i];
    };
    if (a == "--input") {
      std::string v = value();
      size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size())
        die("--input takes NAME=FILE.npy or argI=FILE.npy, got '" + v + "'");
      inputOptions.keys.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (a == "--weights") {
      inputOptions.weights = value();
    } else if (a == "--compare") {
      compared.push_back(value());
    } else if (a == "--rounds") {
      rounds = positiveInt(value(), "--rounds takes a positive integer");
    } else if (a == "--save-weights") {
      saveWeights = value();
    } else if (a == "--save-filter") {
      saveFilter = value();
    } else if (a == "--save-dtype") {
      saveDType = value();
    } else if (a == "--random-inputs") {
      try {
        inputOptions.seed = std::stol(value());
      } catch (const std::exception &) {
        die("--random-inputs takes an integer seed");
      }
    } else if (a == "--output-dir") {
      outputDir = value();
    } else if (a == "--iterations") {
      iterations =
          positiveInt(value(), "--iterations takes a positive integer");
    } else if (a == "--train") {
      trainSteps =
          positiveInt(value(), "--train takes a positive number of steps");
    } else if (a == "--profile") {
      profile = true;
    } else if (a == "--device") {
      device = value();
    } else if (a == "--print-target") {
      printTarget = true;
    } else if (a == "--print-preset") {
      printPreset = true;
    } else if (a == "--list-devices") {
      listDevices = true;
    } else if (a == "-h" || a == "--help") {
      return usage();
    } else if (!a.empty() && a[0] == '-') {
      die("unknown option " + a);
    } else if (bundle.empty()) {
      bundle = a;
    } else {
      return usage();
    }
  }
  if (listDevices) {
    char buf[8192];
    check(fbl_list_devices(buf, sizeof(buf)));
    std::fputs(buf, stdout);
    return 0;
  }
  if (printTarget || printPreset) {
    char buf[2048];
    check(printTarget ? fbl_describe_device(device.c_str(), buf, sizeof(buf))
                      : fbl_target_preset(device.c_str(), buf, sizeof(buf)));
    std::printf("%s\n", buf);
    return 0;
  }
  if (bundle.empty())
    return usage();
  if ((!saveFilter.empty() || saveDType != "F32") && saveWeights.empty())
    die("--save-filter and --save-dtype go with --save-weights FILE");

  if (rounds > 1 && compared.empty())
    die("--rounds goes with --compare DIR");
  if (!compared.empty()) {
    if (trainSteps > 0 || profile || !outputDir.empty() || !saveWeights.empty())
      die("--compare times bundles side by side; it does not take --train, "
          "--profile, --output-dir or --save-weights");
    compared.insert(compared.begin(), bundle);
    return compareBundles(compared, device, inputOptions, iterations, rounds);
  }

  fbl_session *session = nullptr;
  check(fbl_session_open(bundle.c_str(), device.c_str(), &session));
  std::printf("device: %s\n", fbl_session_device_name(session));
  setInputs(session, inputOptions);
  if (trainSteps > 0) {
    // fbl_session_train_step refuses bundles that are not training steps.
    double first = 0, last = 0;
    std::vector<double> times;
    int every = std::max(1, trainSteps / 10);
    for (int step = 1; step <= trainSteps; ++step) {
      check(fbl_session_train_step(session, step, profile));
      times.push_back(fbl_session_median_ms(session));
      float loss;
      check(fbl_session_get_output(session, 0, &loss, sizeof(loss)));
      if (step == 1)
        first = loss;
      last = loss;
      if (step % every == 0 || step == 1 || step == trainSteps)
        std::printf("step %4d/%d  loss %.6f  step time %.3f ms\n", step,
                    trainSteps, loss, times.back());
    }
    std::sort(times.begin(), times.end());
    std::printf("trained %d steps: loss %.6f -> %.6f (%s), median step time "
                "%.3f ms\n",
                trainSteps, first, last,
                last < first ? "decreased" : "did not decrease",
                times[times.size() / 2]);
  } else {
    check(fbl_session_run(session, iterations, profile));
  }
  if (trainSteps == 0)
    std::printf("median step time: %.3f ms over %d iteration%s\n",
                fbl_session_median_ms(session), iterations,
                iterations == 1 ? "" : "s");
  std::printf("device memory: %.1f KiB\n",
              fbl_session_device_bytes(session) / 1024.0);
  if (!saveWeights.empty()) {
    check(fbl_session_save_weights(session, saveWeights.c_str(),
                                   saveFilter.c_str(), 0, saveDType.c_str()));
    std::printf("saved weights to %s\n", saveWeights.c_str());
  }
  if (profile) {
    std::printf("%-28s %12s\n", "kernel", "ms");
    for (size_t k = 0; k < fbl_session_num_kernels(session); ++k)
      std::printf("%-28s %12.4f\n", fbl_session_kernel_name(session, k),
                  fbl_session_kernel_ms(session, k));
    // Below the table, which scripts read as two columns.
    for (size_t k = 0; k < fbl_session_num_kernels(session); ++k)
      if (*fbl_session_kernel_variant(session, k))
        std::printf("%s runs variant %s\n", fbl_session_kernel_name(session, k),
                    fbl_session_kernel_variant(session, k));
  }
  if (!outputDir.empty()) {
    namespace fs = std::filesystem;
    std::error_code ec;
    fs::create_directories(outputDir, ec);
    if (ec)
      die("cannot create " + outputDir + ": " + ec.message());
    // Results go to temporary names first and are renamed only once all are
    // written: a failure (a full disk) leaves no partial or empty results.
    std::vector<std::pair<std::string, std::string>> written;
    auto removeTemps = [&] {
      for (const auto &[tmp, dest] : written)
        fs::remove(tmp, ec);
    };
    for (size_t j = 0; j < fbl_session_num_outputs(session); ++j) {
      int64_t shape[8];
      size_t rank;
      const char *dtype;
      check(fbl_session_tensor_info(session, 1, j, shape, &rank, &dtype,
                                    nullptr));
      fbl::npy::Array out;
      out.shape.assign(shape, shape + rank);
      out.dtype = dtype;
      int64_t n = 1;
      for (size_t d = 0; d < rank; ++d)
        n *= shape[d];
      out.data.resize(n * (out.dtype == "i64" ? 8 : 4));
      if (fbl_session_get_output(session, j, out.data.data(),
                                 out.data.size()) != FBL_OK) {
        removeTemps();
        die(fbl_last_error());
      }
      std::string dest = outputDir + "/result" + std::to_string(j) + ".npy";
      std::string tmp = outputDir + "/.result" + std::to_string(j) + ".npy.tmp";
      written.emplace_back(tmp, dest);
      try {
        fbl::npy::write(tmp, out);
      } catch (const std::exception &e) {
        removeTemps();
        die(e.what());
      }
    }
    for (const auto &[tmp, dest] : written) {
      fs::rename(tmp, dest, ec);
      if (ec) {
        std::string message =
            "cannot rename " + tmp + " to " + dest + ": " + ec.message();
        removeTemps();
        die(message);
      }
    }
    std::printf("wrote %zu results to %s\n", fbl_session_num_outputs(session),
                outputDir.c_str());
  }
  fbl_session_close(session);
  return 0;
}
